#include "workers/billing/wal_checkpointer.h"

#include <chrono>
#include <system_error>
#include <utility>

#include "common/log.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;
using common::Result;

namespace {

// One step of a restart checkpoint's wait: short, since the readers it waits for are single charges.
constexpr auto BUSY_STEP = std::chrono::microseconds(100);

}  // namespace

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const std::string& path,
                                                                 const WalCheckpointOptions& options) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    Database db(raw);
    if (rc != SQLITE_OK) {
        return MakeError(ErrorKind::Unavailable, "ledger_unavailable",
                         "sqlite ledger " + path + ": cannot open the checkpoint connection: " +
                             (db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(rc)));
    }
    // A checkpoint syncs the log before copying it and the database file before the log may restart,
    // whatever this says; FULL keeps that explicit.
    sqlite3_exec(db.get(), "PRAGMA synchronous = FULL", nullptr, nullptr, nullptr);
    std::unique_ptr<WalCheckpointer> c(new WalCheckpointer(std::move(db), options));
    sqlite3_busy_handler(c->m_db.get(), &WalCheckpointer::BusyWait, c.get());
    try {
        c->m_thread = std::thread([p = c.get()] { p->Loop(); });
    } catch (const std::system_error& e) {
        return MakeError(ErrorKind::Unavailable, "ledger_unavailable",
                         std::string("sqlite ledger: no checkpoint thread: ") + e.what());
    }
    return c;
}

WalCheckpointer::WalCheckpointer(Database db, const WalCheckpointOptions& options)
    : m_db(std::move(db)), m_options(options), m_wake_at(options.checkpoint_frames) {}

WalCheckpointer::~WalCheckpointer() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_one();
    if (m_thread.joinable()) m_thread.join();
}

void WalCheckpointer::Attach(sqlite3* db) { sqlite3_wal_hook(db, &WalCheckpointer::OnCommit, this); }

// Runs inside every commit of the attached connection, so it only counts: the log holds `frames`
// frames now (fewer than last time: it restarted).
int WalCheckpointer::OnCommit(void* self_ptr, sqlite3*, const char*, int frames) {
    auto* self = static_cast<WalCheckpointer*>(self_ptr);
    if (frames < self->m_last_frames) self->m_wake_at = self->m_options.checkpoint_frames;
    self->m_last_frames = frames;
    if (frames < self->m_wake_at) return SQLITE_OK;
    self->m_wake_at = frames + self->m_options.checkpoint_frames;
    {
        std::lock_guard<std::mutex> lock(self->m_mutex);
        self->m_due = true;
    }
    self->m_wake.notify_one();
    return SQLITE_OK;
}

// The thread's connection waits in short steps, and not long: a restart checkpoint holds the write
// lock while it waits, so every commit waits with it.
int WalCheckpointer::BusyWait(void* self_ptr, int attempts) {
    auto* self = static_cast<WalCheckpointer*>(self_ptr);
    const auto waited = BUSY_STEP * attempts;
    if (waited >= std::chrono::milliseconds(self->m_options.restart_wait_ms)) return 0;
    std::this_thread::sleep_for(BUSY_STEP);
    return 1;
}

void WalCheckpointer::Loop() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_wake.wait(lock, [this] { return m_due || m_stop; });
            if (m_stop) return;
            m_due = false;
        }
        Checkpoint();
    }
}

void WalCheckpointer::Checkpoint() {
    int log_frames = 0;
    int copied = 0;
    // Another process's checkpoint may be under way (SQLITE_BUSY): it does the same work.
    int rc = sqlite3_wal_checkpoint_v2(m_db.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &copied);
    if (rc == SQLITE_OK) {
        m_checkpoints.fetch_add(1, std::memory_order_relaxed);
        if (log_frames < m_options.restart_frames) return;
        rc = sqlite3_wal_checkpoint_v2(m_db.get(), nullptr, SQLITE_CHECKPOINT_RESTART, &log_frames, &copied);
        if (rc == SQLITE_OK) m_checkpoints.fetch_add(1, std::memory_order_relaxed);
    }
    // Busy: a reader or another checkpoint was in the way; the next wake-up tries again.
    if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) {
        common::LogWarn(std::string("sqlite ledger checkpoint failed (the log keeps every commit; retried later): ") +
                        sqlite3_errmsg(m_db.get()) + " (sqlite code " + std::to_string(rc) + ")");
    }
}

}  // namespace sigil::workers::billing
