// Checkpoints a SQLite ledger's write-ahead log on a thread of its own, so that no charge on a run's
// path waits for a checkpoint's copying and fsyncs.
//
// Why: SQLite's automatic checkpoint runs inside the commit that grows the log past 1000 frames. Under
// steady load the log rarely restarts (it can only restart when a writer begins with every frame
// already copied, and other processes keep committing), so past that size nearly every commit ran a
// checkpoint and its two fdatasyncs: on a busy disk that was most of a run's billing cost.
//
// Durability is unchanged: a commit is durable in the log (as its synchronous setting says) whether
// or not a checkpoint has copied it yet; a process killed in the middle of a checkpoint leaves the log
// whole, and the next checkpoint (or the next open) carries on.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/handles.h"
#include "common/result.h"

namespace sigil::workers::billing {

struct WalCheckpointOptions {
    // A passive checkpoint (copies what it can, never waits) each time the log has grown this many
    // frames (pages) since the last one: SQLite's own threshold.
    int checkpoint_frames = 1000;
    // When a passive checkpoint leaves at least this many frames in the log, a restart checkpoint
    // follows: it holds the write lock until the log is copied and no reader uses it, so the next
    // commit starts the log from its beginning again (the file stays about this size).
    int restart_frames = 4000;
    // The longest a restart checkpoint waits for a reader or writer (commits wait behind it); on
    // timeout it gives up until the next wake-up.
    int restart_wait_ms = 50;
};

class WalCheckpointer {
public:
    // Opens a connection of its own to `path` (a database already in WAL mode) and starts the thread.
    // Errors: Unavailable "ledger_unavailable" (the file cannot be opened, or no thread).
    static common::Result<std::unique_ptr<WalCheckpointer>> Start(const std::string& path,
                                                                  const WalCheckpointOptions& options = {});
    // Stops the thread (a checkpoint under way finishes first). Close every connection Attach()ed
    // before this runs.
    ~WalCheckpointer();
    WalCheckpointer(const WalCheckpointer&) = delete;
    WalCheckpointer& operator=(const WalCheckpointer&) = delete;

    // Takes over `db`'s checkpoints: its commits only count the log's frames and wake the thread
    // (this replaces SQLite's automatic checkpoint on `db`). Calls on `db` must be serialized, as
    // they are for any connection.
    void Attach(sqlite3* db);

    // Checkpoints run so far, passive and restart (for tests and logs).
    std::uint64_t checkpoints() const { return m_checkpoints.load(std::memory_order_relaxed); }

private:
    using Database = common::CHandle<sqlite3, sqlite3_close_v2>;
    WalCheckpointer(Database db, const WalCheckpointOptions& options);

    static int OnCommit(void* self, sqlite3* db, const char* schema, int frames);
    static int BusyWait(void* self, int attempts);
    void Loop();
    void Checkpoint();

    Database m_db;  // the thread's connection
    WalCheckpointOptions m_options;
    // The commit hook's state (its calls are serialized by the attached connection's owner).
    int m_wake_at;
    int m_last_frames = 0;
    // Shared with the thread.
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_due = false;
    bool m_stop = false;
    std::atomic<std::uint64_t> m_checkpoints{0};
    std::thread m_thread;  // last: started once everything above exists
};

}  // namespace sigil::workers::billing
