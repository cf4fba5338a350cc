#include "workers/billing/run_history.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <utility>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "workers/billing/store.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;

namespace {

bool IsPostgres(const std::string& database) {
    return database.rfind("postgresql://", 0) == 0 || database.rfind("postgres://", 0) == 0;
}

// A batch is one transaction; more queued than this waits for the next round.
constexpr std::size_t MAX_BATCH = 256;
// A pruning round deletes at most this many batches, so one round never holds the store for long.
constexpr int PRUNE_BATCHES_PER_ROUND = 20;
// After a failed open or write, the writer waits this long before trying the store again.
constexpr std::int64_t RETRY_MS = 1000;
// A worker that stops writes what it holds first; a store that still refuses after this many more
// batches (each bounded by the store's busy timeout) loses the rest (counted and logged).
constexpr int STOP_ATTEMPTS = 3;

}  // namespace

Result<std::unique_ptr<HistoryStore>> OpenHistoryStore(const std::string& database) {
    if (database.empty()) return MakeError(ErrorKind::Unavailable, "history_unavailable", "no run history database configured");
    return IsPostgres(database) ? OpenPostgresHistory(database) : OpenSqliteHistory(database);
}

std::string IdleBucketCondition(const std::string& now) {
    const std::string elapsed = "(CASE WHEN " + now + " - b.at_ms > 100000000000 THEN 100000000000 ELSE " + now + " - b.at_ms END)";
    return "g.key IS NULL"
           " OR (b.bucket LIKE 'key:%' AND (g.rate_milli <= 0 OR " + elapsed + " * g.rate_milli >= g.burst * 1000000 - b.tokens))"
           " OR (b.bucket LIKE 'addr:%' AND (g.address_rate_milli <= 0 OR " + elapsed +
           " * g.address_rate_milli >= g.address_burst * 1000000 - b.tokens))";
}

Result<HistorySettings> HistorySettings::FromConfig(const common::Config& config) {
    HistorySettings s;
    s.enabled = config.GetBool("history", "enabled");
    s.database = config.GetString("history", "database");
    s.guard_database = config.GetString("billing", "database");
    if (s.database.empty()) s.database = s.guard_database;
    const std::int64_t keep_seconds = config.GetInt("history", "keep_seconds");
    s.keep_ms = keep_seconds > 0 ? keep_seconds * 1000 : config.GetInt("history", "keep_days") * 24 * 3600 * 1000;
    s.prune_interval_ms = config.GetInt("history", "prune_interval_ms");
    s.queue_records = static_cast<std::size_t>(config.GetInt("history", "queue_records"));
    s.log_bytes = static_cast<std::size_t>(config.GetInt("history", "log_bytes"));
    s.flush_interval_ms = config.GetInt("history", "flush_interval_ms");
    return s;
}

std::unique_ptr<RunHistory> RunHistory::Start(HistorySettings settings) {
    std::unique_ptr<RunHistory> history(new RunHistory(std::move(settings)));
    if (history->enabled()) {
        // The writer takes no signal: it starts before the worker blocks SIGQUIT (its graceful stop,
        // read from a signalfd between requests), and a process-directed SIGQUIT delivered to a thread
        // that has it unblocked runs its default action, ending the worker at once with its queue
        // (the benchmark's silent losses: workers the pool retired died "killed by signal 3"). With
        // every signal blocked here, they go to the main thread, which handles them as it should.
        sigset_t all;
        sigset_t before;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &before);
        history->m_thread = std::thread([p = history.get()] { p->Loop(); });
        pthread_sigmask(SIG_SETMASK, &before, nullptr);
    }
    return history;
}

RunHistory::~RunHistory() {
    Stop();
    if (m_prune_lock_fd >= 0) ::close(m_prune_lock_fd);
}

void RunHistory::Stop() {
    {
        std::lock_guard<std::mutex> lock(m_queue_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
    std::lock_guard<std::mutex> lock(m_queue_mutex);
    m_closed = true;
}

void RunHistory::PublishPendingTo(std::atomic<std::uint64_t>* counter) {
    std::lock_guard<std::mutex> lock(m_queue_mutex);
    m_pending_counter = counter;
    PublishPending();
}

void RunHistory::PublishPending() {
    if (m_pending_counter != nullptr) m_pending_counter->store(m_queue.size() + m_in_flight);
}

void RunHistory::CountDropped(std::size_t n) {
    if (n == 0) return;
    m_dropped += n;
    common::CountHistoryDropped(n);
}

void RunHistory::Record(RunRecord record) {
    if (!enabled()) return;
    std::uint64_t dropped = 0;
    {
        std::lock_guard<std::mutex> lock(m_queue_mutex);
        if (m_queue.size() < m_settings.queue_records && !m_closed) {
            m_queue.push_back(std::move(record));
            PublishPending();
            if (m_queue.size() >= MAX_BATCH) m_wake.notify_one();
            return;
        }
        CountDropped(1);
        dropped = m_dropped;
    }
    // One line for the first drop and then one per 1000, so a dead store does not flood the log.
    if (dropped == 1 || dropped % 1000 == 0) {
        common::LogWarn("run history: the queue is full (" + std::to_string(m_settings.queue_records) +
                            " records, the store is slow or down); " + std::to_string(dropped) + " records dropped so far",
                        record.request_id);
    }
}

std::uint64_t RunHistory::dropped() const {
    std::lock_guard<std::mutex> lock(m_queue_mutex);
    return m_dropped;
}

Result<HistoryStore*> RunHistory::Store() {
    if (m_store) return m_store.get();
    const std::int64_t now = common::MonotonicMs();
    if (now < m_next_open_ms) {
        return MakeError(ErrorKind::Unavailable, "history_unavailable", "the run history database did not open; retrying");
    }
    auto opened = OpenHistoryStore(m_settings.database);
    if (!opened.ok()) {
        m_next_open_ms = now + RETRY_MS;
        return opened.error();
    }
    m_store = std::move(opened).value();
    return m_store.get();
}

Status RunHistory::WriteBatch(std::vector<RunRecord>& batch) {
    std::lock_guard<std::mutex> lock(m_store_mutex);
    SIGIL_TRY(store, Store());
    // Logs are kept only for accounts that turned them on: asked here, off the run's path.
    std::map<std::string, bool> keeps;
    for (RunRecord& r : batch) {
        if (!r.has_logs) continue;
        auto found = keeps.find(r.account_hash);
        if (found == keeps.end()) {
            auto on = (*store)->RecordLogs(r.account_hash);
            if (!on.ok()) {
                m_store.reset();
                return on.error();
            }
            found = keeps.emplace(r.account_hash, *on).first;
        }
        if (!found->second) {
            r.has_logs = false;
            r.logs.clear();
            r.logs_truncated = false;
        }
    }
    if (auto s = (*store)->Insert(batch); !s.ok()) {
        m_store.reset();  // a fresh connection next time (PostgreSQL restarted, file replaced)
        return s;
    }
    return common::Success();
}

Status RunHistory::Flush() {
    std::vector<RunRecord> batch;
    {
        std::lock_guard<std::mutex> lock(m_queue_mutex);
        batch.swap(m_queue);
        m_in_flight += batch.size();
    }
    if (batch.empty()) return common::Success();
    auto written = WriteBatch(batch);
    std::lock_guard<std::mutex> lock(m_queue_mutex);
    m_in_flight -= batch.size();
    // Not written: back in front of the queue for the writer thread (the queue may exceed its
    // bound by this batch; it is not dropped for a caller's flush).
    if (!written.ok()) m_queue.insert(m_queue.begin(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
    PublishPending();
    return written;
}

void RunHistory::Loop() {
    std::vector<RunRecord> batch;
    std::int64_t retry_at = 0;
    bool failing = false;
    int stop_attempts = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_queue_mutex);
            const std::int64_t now = common::MonotonicMs();
            if (now < retry_at) {
                // After a failed write: sleep until the retry (a full queue must not spin this thread).
                m_wake.wait_for(lock, std::chrono::milliseconds(retry_at - now), [this] { return m_stop; });
            } else {
                m_wake.wait_for(lock, std::chrono::milliseconds(m_settings.flush_interval_ms),
                                [this] { return m_stop || m_queue.size() >= MAX_BATCH; });
            }
            if (m_stop && m_queue.empty()) return;
            if (common::MonotonicMs() < retry_at && !m_stop) continue;
            const std::size_t n = std::min(m_queue.size(), MAX_BATCH);
            batch.assign(std::make_move_iterator(m_queue.begin()), std::make_move_iterator(m_queue.begin() + static_cast<std::ptrdiff_t>(n)));
            m_queue.erase(m_queue.begin(), m_queue.begin() + static_cast<std::ptrdiff_t>(n));
            m_in_flight += n;  // still pending for the supervisor's count until written or dropped
        }
        if (!batch.empty()) {
            auto written = WriteBatch(batch);
            std::size_t lost = 0;
            bool give_up = false;
            {
                std::lock_guard<std::mutex> lock(m_queue_mutex);
                m_in_flight -= batch.size();
                if (!written.ok()) {
                    // Put the batch back in front when there is room (it is retried); else it is dropped.
                    const std::size_t room = m_settings.queue_records > m_queue.size() ? m_settings.queue_records - m_queue.size() : 0;
                    // Stopping: a few more tries before what is left (the batch and the queue) is dropped.
                    give_up = m_stop && ++stop_attempts > STOP_ATTEMPTS;
                    const std::size_t keep = give_up ? 0 : std::min(room, batch.size());
                    m_queue.insert(m_queue.begin(), std::make_move_iterator(batch.begin()),
                                   std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(keep)));
                    lost = batch.size() - keep;
                    if (give_up) {
                        lost += m_queue.size();
                        m_queue.clear();
                        m_closed = true;  // a Record from here on is counted dropped, never left queued
                    }
                    CountDropped(lost);
                }
                PublishPending();
            }
            if (!written.ok()) {
                if (!failing) common::LogWarn("run history not written (retrying; runs go on): " + written.error().message);
                if (lost > 0) {
                    common::LogWarn("run history: " + std::to_string(lost) + " records dropped" +
                                    (give_up ? " (the worker is stopping and the store still refuses)" : " (the queue is full)"));
                }
                failing = true;
                retry_at = common::MonotonicMs() + RETRY_MS;
                if (give_up) return;
            } else if (failing) {
                common::LogInfo("run history written again");
                failing = false;
            }
            batch.clear();
        }
        if (!m_stop) PruneRound();
    }
}

// One pruner per instance: for SQLite the worker holding an flock on <database>.prune (the file
// is the instance's), for PostgreSQL every instance's holder prunes the shared table (the deletes
// are bounded and idempotent, so instances pruning together only share the work).
void RunHistory::PruneRound() {
    const std::int64_t now = common::MonotonicMs();
    if (now < m_next_prune_ms) return;
    m_next_prune_ms = now + m_settings.prune_interval_ms;
    if (m_prune_lock_fd < 0) {
        const std::string lock_path = IsPostgres(m_settings.database) ? "/tmp/sigil-history-" + std::to_string(::getuid()) + ".prune"
                                                                      : m_settings.database + ".prune";
        const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) return;
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd);
            return;  // another worker of this instance prunes
        }
        m_prune_lock_fd = fd;  // held until this worker exits; then another takes over
    }
    PruneBuckets();
    const std::int64_t cutoff = WallClockMs() - m_settings.keep_ms;
    std::int64_t total = 0;
    for (int i = 0; i < PRUNE_BATCHES_PER_ROUND; ++i) {
        std::int64_t deleted = 0;
        {
            std::lock_guard<std::mutex> lock(m_store_mutex);
            auto store = Store();
            if (!store.ok()) return;
            auto pruned = (*store)->Prune(cutoff, m_settings.prune_batch_rows);
            if (!pruned.ok()) {
                m_store.reset();
                common::LogWarn("run history not pruned (next round retries): " + pruned.error().message);
                return;
            }
            deleted = *pruned;
        }
        total += deleted;
        if (deleted < m_settings.prune_batch_rows) break;
    }
    if (total > 0) common::LogInfo("run history: pruned " + std::to_string(total) + " runs older than the keep time");
}

// Key guardrails' token bucket rows (one per key and one per client address of a key with a rate):
// without this the per-address rows would grow with every address that ever called. A row full again
// is the same as none, so deleting it changes no admission; bounded deletes like the runs'.
void RunHistory::PruneBuckets() {
    if (m_settings.guard_database.empty()) return;
    const bool same = m_settings.guard_database == m_settings.database;
    std::int64_t total = 0;
    for (int i = 0; i < PRUNE_BATCHES_PER_ROUND; ++i) {
        std::int64_t deleted = 0;
        {
            std::lock_guard<std::mutex> lock(m_store_mutex);
            HistoryStore* store = nullptr;
            if (same) {
                auto opened = Store();
                if (!opened.ok()) return;
                store = *opened;
            } else {
                if (!m_guard_store) {
                    auto opened = OpenHistoryStore(m_settings.guard_database);
                    if (!opened.ok()) return;  // the next round tries again
                    m_guard_store = std::move(opened).value();
                }
                store = m_guard_store.get();
            }
            auto pruned = store->PruneBuckets(WallClockMs(), m_settings.prune_batch_rows);
            if (!pruned.ok()) {
                (same ? m_store : m_guard_store).reset();
                common::LogWarn("guardrail buckets not pruned (next round retries): " + pruned.error().message);
                return;
            }
            deleted = *pruned;
        }
        total += deleted;
        if (deleted < m_settings.prune_batch_rows) break;
    }
    if (total > 0) common::LogInfo("key guardrails: pruned " + std::to_string(total) + " idle token bucket rows");
}

Result<std::vector<RunRecord>> RunHistory::List(const RunQuery& query) {
    std::lock_guard<std::mutex> lock(m_store_mutex);
    SIGIL_TRY(store, Store());
    auto out = (*store)->List(query);
    if (!out.ok()) m_store.reset();
    return out;
}

Result<std::optional<RunRecord>> RunHistory::Get(const std::string& account_hash, const std::string& request_id) {
    std::lock_guard<std::mutex> lock(m_store_mutex);
    SIGIL_TRY(store, Store());
    auto out = (*store)->Get(account_hash, request_id);
    if (!out.ok()) m_store.reset();
    return out;
}

Result<bool> RunHistory::RecordLogs(const std::string& account_hash) {
    std::lock_guard<std::mutex> lock(m_store_mutex);
    SIGIL_TRY(store, Store());
    auto out = (*store)->RecordLogs(account_hash);
    if (!out.ok()) m_store.reset();
    return out;
}

Status RunHistory::SetRecordLogs(const std::string& account_hash, bool on) {
    std::lock_guard<std::mutex> lock(m_store_mutex);
    SIGIL_TRY(store, Store());
    auto out = (*store)->SetRecordLogs(account_hash, on);
    if (!out.ok()) m_store.reset();
    return out;
}

}  // namespace sigil::workers::billing
