// The run history's rows and the primitives its stores provide (SQLite: sqlite_history.cpp,
// PostgreSQL: postgres_history.cpp); RunHistory (run_history.h) writes and reads through them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace sigil::workers::billing {

// One run as the history keeps it. Hashes are 0x + 64 lower-case hex, addresses 0x + 40.
struct RunRecord {
    std::int64_t id = 0;             // the store's row id (answers only; the cursor's tie-break)
    std::string request_id;          // X-Request-Id of the run's request
    std::int64_t started_ms = 0;     // unix ms when the run's request reached its handler
    std::string key_hash;            // the calling key (the account's own hash for its master key)
    std::string account_hash;
    std::string cid;                 // "" when the run was refused before its CID was known
    std::string pkps;                // the PKP the run was asked with, "" for none
    std::int64_t duration_ms = 0;
    // ok, script_error, time_limit, memory_limit, response_limit, log_limit, op_limit, stopped,
    // crashed, refused (admission or authorization said no: nothing ran), failed (the service
    // failed before or under the run: keyd, chain, zygote, gateway).
    std::string status;
    std::string error_code;          // the answer's error code ("" for ok)
    std::int64_t cost_cents = 0;     // what the run's settlement charged (0 with billing off)
    std::int64_t request_bytes = 0;
    std::int64_t response_bytes = 0;
    std::string response_sha256;     // hex of SHA-256 over the answer's `response` JSON text ("" for none)
    std::string logs;                // capped; kept only when the account turned logs on
    bool has_logs = false;           // logs were kept (false: the account had them off)
    bool logs_truncated = false;
};

// What list_runs asks for. Newest first: (started_ms, id) descending.
struct RunQuery {
    std::string account_hash;                 // required: a query never crosses accounts
    std::optional<std::string> key_hash;
    std::optional<std::string> cid;
    std::optional<std::string> status;
    std::optional<std::int64_t> since_ms;     // started_ms >= since
    std::optional<std::int64_t> until_ms;     // started_ms < until
    std::optional<std::pair<std::int64_t, std::int64_t>> before;  // the cursor: (started_ms, id)
    std::size_t limit = 50;
};

// The store's primitives (SQLite, PostgreSQL). One connection; calls are serialized by RunHistory.
class HistoryStore {
public:
    virtual ~HistoryStore() = default;
    // Inserts the batch in one transaction.
    virtual common::Status Insert(const std::vector<RunRecord>& batch) = 0;
    virtual common::Result<std::vector<RunRecord>> List(const RunQuery& query) = 0;
    virtual common::Result<std::optional<RunRecord>> Get(const std::string& account_hash, const std::string& request_id) = 0;
    // Deletes at most `max_rows` rows started before `cutoff_ms`; answers how many went.
    virtual common::Result<std::int64_t> Prune(std::int64_t cutoff_ms, std::int64_t max_rows) = 0;
    // Key guardrails' token buckets (guardrails.h; the ledger's table guard_buckets, when this
    // database holds it): deletes at most `max_rows` rows that are the same as no row at `now_ms`,
    // i.e. full again (idle at least the time their current rate takes to refill them to the burst),
    // or of a key with no rate set (guardrails cleared or changed); answers how many went. 0 when the
    // table does not exist (no ledger in this database).
    virtual common::Result<std::int64_t> PruneBuckets(std::int64_t now_ms, std::int64_t max_rows) = 0;
    virtual common::Result<bool> RecordLogs(const std::string& account_hash) = 0;
    virtual common::Status SetRecordLogs(const std::string& account_hash, bool on) = 0;
};

// Opens the history tables in `database` (a SQLite file path, or postgresql://...), creating them.
// Errors: Unavailable "history_unavailable" (cannot open), InvalidInput "history_unsupported".
common::Result<std::unique_ptr<HistoryStore>> OpenHistoryStore(const std::string& database);
// The stores (sqlite_history.cpp, postgres_history.cpp).
common::Result<std::unique_ptr<HistoryStore>> OpenSqliteHistory(const std::string& path);
common::Result<std::unique_ptr<HistoryStore>> OpenPostgresHistory(const std::string& conninfo);

// The bucket rows PruneBuckets deletes, as one SQL condition over guard_buckets b LEFT JOIN guardrails g
// (the same text for SQLite and PostgreSQL; $NOW is the statement's now parameter). A row refilled at
// the current rate up to the burst is what a missing row becomes on the next take (created full), so
// deleting it changes no answer. Elapsed time is capped as the take's refill caps it (no overflow).
std::string IdleBucketCondition(const std::string& now_param);

}  // namespace sigil::workers::billing
