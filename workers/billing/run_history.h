// Run history (issue 26): one row per run in the ledger's database, written off the request path by
// a bounded per-worker queue and a writer thread, read by list_runs / get_run, pruned in the background.
//
// Why a queue and not the settlement's transaction: a run with billing off has no settlement, and a
// slow or dead database must never hold up a run that billing lets through. Record() only takes a
// mutex over an in-memory vector; a full queue drops the record (counted and logged), never waits.
// The writer thread inserts a batch per transaction (one round trip for many runs), under relaxed
// durability: a history row lost with the machine's power favours nobody.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "workers/billing/history_store.h"

namespace sigil::workers::billing {

// The [history] section.
struct HistorySettings {
    bool enabled = true;
    std::string database;            // "" = the ledger's ([billing] database)
    // The ledger's database ([billing] database), whose key guardrail buckets the same pruner prunes.
    std::string guard_database;
    std::int64_t keep_ms = 7LL * 24 * 3600 * 1000;   // keep_days, or keep_seconds when set
    std::int64_t prune_interval_ms = 60000;
    std::int64_t prune_batch_rows = 500;             // rows per DELETE; a round deletes at most 20 batches
    std::size_t queue_records = 1024;                // per worker; more are dropped (counted)
    std::size_t log_bytes = 16 * 1024;               // logs kept per run, when the account turned them on
    std::int64_t flush_interval_ms = 200;

    // Errors: InvalidInput "invalid_config".
    static common::Result<HistorySettings> FromConfig(const common::Config& config);
};

class RunHistory {
public:
    // `database`: the resolved store ("" = history has nowhere to go: Record drops nothing and keeps
    // nothing, the endpoints answer 503 history_unavailable). Starts the writer thread.
    static std::unique_ptr<RunHistory> Start(HistorySettings settings);
    ~RunHistory();
    RunHistory(const RunHistory&) = delete;
    RunHistory& operator=(const RunHistory&) = delete;

    bool enabled() const { return m_settings.enabled && !m_settings.database.empty(); }
    const HistorySettings& settings() const { return m_settings; }

    // Never blocks on the store: queues the record, or drops it (counted) when the queue is full.
    void Record(RunRecord record);

    // Where this worker publishes how many records it holds neither written nor counted dropped (its
    // scoreboard slot's history_pending): if it dies holding some, the supervisor counts them dropped.
    // Set before the first Record; `counter` must outlive this object.
    void PublishPendingTo(std::atomic<std::uint64_t>* counter);

    // Reads for the endpoints, on the caller's thread (the store's mutex, never the queue's).
    // Errors: Unavailable "history_unavailable".
    common::Result<std::vector<RunRecord>> List(const RunQuery& query);
    common::Result<std::optional<RunRecord>> Get(const std::string& account_hash, const std::string& request_id);
    common::Result<bool> RecordLogs(const std::string& account_hash);
    common::Status SetRecordLogs(const std::string& account_hash, bool on);

    // Writes what is queued now (tests, shutdown). Errors: the store's.
    common::Status Flush();

    // Stops the writer thread once it has written what is queued, or, when the store still refuses
    // after a few more tries, counted it dropped (and logged). Records after this are counted dropped.
    // The destructor calls it.
    void Stop();

    std::uint64_t dropped() const;

private:
    explicit RunHistory(HistorySettings settings) : m_settings(std::move(settings)) {}
    void Loop();
    common::Result<HistoryStore*> Store();  // under m_store_mutex
    common::Status WriteBatch(std::vector<RunRecord>& batch);
    void PruneRound();
    void PruneBuckets();
    void PublishPending();  // under m_queue_mutex
    // Under m_queue_mutex: counts `n` records dropped; the caller logs.
    void CountDropped(std::size_t n);

    HistorySettings m_settings;

    mutable std::mutex m_queue_mutex;
    std::condition_variable m_wake;
    std::vector<RunRecord> m_queue;
    std::uint64_t m_dropped = 0;
    std::size_t m_in_flight = 0;        // records taken from the queue by a write not yet done
    std::atomic<std::uint64_t>* m_pending_counter = nullptr;
    bool m_stop = false;
    bool m_closed = false;              // the stopping writer gave up: nothing more is queued

    std::mutex m_store_mutex;
    std::unique_ptr<HistoryStore> m_store;
    std::unique_ptr<HistoryStore> m_guard_store;  // the ledger's database, when the history is elsewhere
    std::int64_t m_next_open_ms = 0;    // backoff after a failed open
    int m_prune_lock_fd = -1;           // SQLite: the instance's pruner holds an flock on <database>.prune
    std::int64_t m_next_prune_ms = 0;

    std::thread m_thread;  // last: started once everything above exists
};

}  // namespace sigil::workers::billing
