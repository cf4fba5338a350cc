// The run history's SQLite store: its own connection to the ledger's file (WAL), its own tables, a
// short busy timeout (the writer thread retries the next round; a reader gets 503), relaxed commits.
#include <sqlite3.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "common/handles.h"
#include "workers/billing/history_store.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;

namespace {

using Database = common::CHandle<sqlite3, sqlite3_close_v2>;
using Statement = common::CHandle<sqlite3_stmt, sqlite3_finalize>;

constexpr const char* SCHEMA = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  request_id TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  key_hash TEXT NOT NULL,
  account_hash TEXT NOT NULL,
  cid TEXT NOT NULL,
  pkps TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  status TEXT NOT NULL,
  error_code TEXT NOT NULL,
  cost_cents INTEGER NOT NULL,
  request_bytes INTEGER NOT NULL,
  response_bytes INTEGER NOT NULL,
  response_sha256 TEXT NOT NULL,
  logs TEXT,
  logs_truncated INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_account_started ON runs (account_hash, started_ms, id);
CREATE INDEX IF NOT EXISTS runs_request ON runs (request_id);
CREATE INDEX IF NOT EXISTS runs_started ON runs (started_ms);
CREATE TABLE IF NOT EXISTS run_history_settings (
  account_hash TEXT PRIMARY KEY,
  record_logs INTEGER NOT NULL
);
)sql";

constexpr const char* COLUMNS =
    "id, request_id, started_ms, key_hash, account_hash, cid, pkps, duration_ms, status, error_code, cost_cents, "
    "request_bytes, response_bytes, response_sha256, logs, logs_truncated";

common::Error Fail(sqlite3* db, const std::string& what) {
    return MakeError(ErrorKind::Unavailable, "history_unavailable",
                     "run history " + what + ": " + (db != nullptr ? sqlite3_errmsg(db) : "no database"));
}

class Stmt {
public:
    Stmt(sqlite3* db, const std::string& sql) {
        sqlite3_stmt* raw = nullptr;
        m_rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr);
        m_stmt.reset(raw);
    }
    bool ok() const { return m_rc == SQLITE_OK; }
    void Bind(int i, const std::string& s) { sqlite3_bind_text(m_stmt.get(), i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT); }
    void Bind(int i, std::int64_t v) { sqlite3_bind_int64(m_stmt.get(), i, v); }
    void BindNull(int i) { sqlite3_bind_null(m_stmt.get(), i); }
    int Step() { return sqlite3_step(m_stmt.get()); }
    void Reset() {
        sqlite3_reset(m_stmt.get());
        sqlite3_clear_bindings(m_stmt.get());
    }
    std::int64_t Int(int c) { return sqlite3_column_int64(m_stmt.get(), c); }
    bool IsNull(int c) { return sqlite3_column_type(m_stmt.get(), c) == SQLITE_NULL; }
    std::string Text(int c) {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt.get(), c));
        return p == nullptr ? std::string() : std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt.get(), c)));
    }

private:
    Statement m_stmt;
    int m_rc = SQLITE_ERROR;
};

RunRecord RowOf(Stmt& q) {
    RunRecord r;
    r.id = q.Int(0);
    r.request_id = q.Text(1);
    r.started_ms = q.Int(2);
    r.key_hash = q.Text(3);
    r.account_hash = q.Text(4);
    r.cid = q.Text(5);
    r.pkps = q.Text(6);
    r.duration_ms = q.Int(7);
    r.status = q.Text(8);
    r.error_code = q.Text(9);
    r.cost_cents = q.Int(10);
    r.request_bytes = q.Int(11);
    r.response_bytes = q.Int(12);
    r.response_sha256 = q.Text(13);
    r.has_logs = !q.IsNull(14);
    r.logs = q.Text(14);
    r.logs_truncated = q.Int(15) != 0;
    return r;
}

class SqliteHistory final : public HistoryStore {
public:
    explicit SqliteHistory(Database db) : m_db(std::move(db)) {}

    Status Setup() {
        // SQLite's own busy handler backs off to 100 ms sleeps, and beside the ledger's steady
        // commits (which wait with short jittered sleeps, sqlite_ledger.cpp) this writer would keep
        // missing the free moments of the write lock and starve until its timeout: wait the same way.
        sqlite3_busy_handler(m_db.get(), &SqliteHistory::BusyWait, this);
        SIGIL_TRY_STATUS(Exec("PRAGMA journal_mode = WAL"));
        SIGIL_TRY_STATUS(Exec("PRAGMA synchronous = NORMAL"));
        return Exec(SCHEMA);
    }

    Status Insert(const std::vector<RunRecord>& batch) override {
        SIGIL_TRY_STATUS(Exec("BEGIN IMMEDIATE"));
        Stmt q(m_db.get(),
               "INSERT INTO runs (request_id, started_ms, key_hash, account_hash, cid, pkps, duration_ms, status, "
               "error_code, cost_cents, request_bytes, response_bytes, response_sha256, logs, logs_truncated) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
        if (!q.ok()) return Abort("insert");
        for (const RunRecord& r : batch) {
            q.Bind(1, r.request_id);
            q.Bind(2, r.started_ms);
            q.Bind(3, r.key_hash);
            q.Bind(4, r.account_hash);
            q.Bind(5, r.cid);
            q.Bind(6, r.pkps);
            q.Bind(7, r.duration_ms);
            q.Bind(8, r.status);
            q.Bind(9, r.error_code);
            q.Bind(10, r.cost_cents);
            q.Bind(11, r.request_bytes);
            q.Bind(12, r.response_bytes);
            q.Bind(13, r.response_sha256);
            if (r.has_logs) q.Bind(14, r.logs); else q.BindNull(14);
            q.Bind(15, std::int64_t{r.logs_truncated ? 1 : 0});
            if (q.Step() != SQLITE_DONE) return Abort("insert");
            q.Reset();
        }
        return Exec("COMMIT");
    }

    Result<std::vector<RunRecord>> List(const RunQuery& query) override {
        std::string sql = std::string("SELECT ") + COLUMNS + " FROM runs WHERE account_hash = ?1";
        if (query.key_hash) sql += " AND key_hash = ?2";
        if (query.cid) sql += " AND cid = ?3";
        if (query.status) sql += " AND status = ?4";
        if (query.since_ms) sql += " AND started_ms >= ?5";
        if (query.until_ms) sql += " AND started_ms < ?6";
        if (query.before) sql += " AND (started_ms < ?7 OR (started_ms = ?7 AND id < ?8))";
        sql += " ORDER BY started_ms DESC, id DESC LIMIT ?9";
        Stmt q(m_db.get(), sql);
        if (!q.ok()) return Fail(m_db.get(), "list");
        q.Bind(1, query.account_hash);
        if (query.key_hash) q.Bind(2, *query.key_hash);
        if (query.cid) q.Bind(3, *query.cid);
        if (query.status) q.Bind(4, *query.status);
        if (query.since_ms) q.Bind(5, *query.since_ms);
        if (query.until_ms) q.Bind(6, *query.until_ms);
        if (query.before) {
            q.Bind(7, query.before->first);
            q.Bind(8, query.before->second);
        }
        q.Bind(9, static_cast<std::int64_t>(query.limit));
        std::vector<RunRecord> out;
        for (;;) {
            const int rc = q.Step();
            if (rc == SQLITE_DONE) break;
            if (rc != SQLITE_ROW) return Fail(m_db.get(), "list");
            out.push_back(RowOf(q));
        }
        return out;
    }

    Result<std::optional<RunRecord>> Get(const std::string& account_hash, const std::string& request_id) override {
        Stmt q(m_db.get(), std::string("SELECT ") + COLUMNS +
                               " FROM runs WHERE request_id = ?1 AND account_hash = ?2 ORDER BY id DESC LIMIT 1");
        if (!q.ok()) return Fail(m_db.get(), "get");
        q.Bind(1, request_id);
        q.Bind(2, account_hash);
        const int rc = q.Step();
        if (rc == SQLITE_DONE) return std::optional<RunRecord>();
        if (rc != SQLITE_ROW) return Fail(m_db.get(), "get");
        return std::optional<RunRecord>(RowOf(q));
    }

    Result<std::int64_t> Prune(std::int64_t cutoff_ms, std::int64_t max_rows) override {
        Stmt q(m_db.get(), "DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE started_ms < ?1 LIMIT ?2)");
        if (!q.ok()) return Fail(m_db.get(), "prune");
        q.Bind(1, cutoff_ms);
        q.Bind(2, max_rows);
        if (q.Step() != SQLITE_DONE) return Fail(m_db.get(), "prune");
        return static_cast<std::int64_t>(sqlite3_changes(m_db.get()));
    }

    Result<std::int64_t> PruneBuckets(std::int64_t now_ms, std::int64_t max_rows) override {
        Stmt exists(m_db.get(), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'guard_buckets'");
        if (!exists.ok()) return Fail(m_db.get(), "prune buckets");
        const int found = exists.Step();
        if (found == SQLITE_DONE) return std::int64_t{0};
        if (found != SQLITE_ROW) return Fail(m_db.get(), "prune buckets");
        // The key hash is 66 characters after "key:" or "addr:".
        Stmt q(m_db.get(), "DELETE FROM guard_buckets WHERE bucket IN (SELECT b.bucket FROM guard_buckets b "
                           "LEFT JOIN guardrails g ON g.key = substr(b.bucket, CASE WHEN b.bucket LIKE 'key:%' THEN 5 ELSE 6 END, 66) "
                           "WHERE " + IdleBucketCondition("?1") + " LIMIT ?2)");
        if (!q.ok()) return Fail(m_db.get(), "prune buckets");
        q.Bind(1, now_ms);
        q.Bind(2, max_rows);
        if (q.Step() != SQLITE_DONE) return Fail(m_db.get(), "prune buckets");
        return static_cast<std::int64_t>(sqlite3_changes(m_db.get()));
    }

    Result<bool> RecordLogs(const std::string& account_hash) override {
        Stmt q(m_db.get(), "SELECT record_logs FROM run_history_settings WHERE account_hash = ?1");
        if (!q.ok()) return Fail(m_db.get(), "settings");
        q.Bind(1, account_hash);
        const int rc = q.Step();
        if (rc == SQLITE_DONE) return false;
        if (rc != SQLITE_ROW) return Fail(m_db.get(), "settings");
        return q.Int(0) != 0;
    }

    Status SetRecordLogs(const std::string& account_hash, bool on) override {
        Stmt q(m_db.get(),
               "INSERT INTO run_history_settings (account_hash, record_logs) VALUES (?1, ?2) "
               "ON CONFLICT (account_hash) DO UPDATE SET record_logs = excluded.record_logs");
        if (!q.ok()) return Fail(m_db.get(), "settings");
        q.Bind(1, account_hash);
        q.Bind(2, std::int64_t{on ? 1 : 0});
        if (q.Step() != SQLITE_DONE) return Fail(m_db.get(), "settings");
        return common::Success();
    }

private:
    static int BusyWait(void* self_ptr, int attempts) {
        auto* self = static_cast<SqliteHistory*>(self_ptr);
        const auto now = std::chrono::steady_clock::now();
        if (attempts == 0) self->m_busy_since = now;
        if (now - self->m_busy_since >= BUSY_TIMEOUT) return 0;
        std::this_thread::sleep_for(std::chrono::microseconds(50 + self->m_jitter() % 450));
        return 1;
    }
    static constexpr std::chrono::milliseconds BUSY_TIMEOUT{1000};

    Status Exec(const char* sql) {
        if (sqlite3_exec(m_db.get(), sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Fail(m_db.get(), sql);
        return common::Success();
    }
    Status Abort(const std::string& what) {
        Status failed = Fail(m_db.get(), what);
        if (sqlite3_get_autocommit(m_db.get()) == 0) sqlite3_exec(m_db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        return failed;
    }

    Database m_db;
    std::chrono::steady_clock::time_point m_busy_since;
    std::minstd_rand m_jitter{std::random_device{}()};
};

}  // namespace

Result<std::unique_ptr<HistoryStore>> OpenSqliteHistory(const std::string& path) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    Database db(raw);
    if (rc != SQLITE_OK) {
        return MakeError(ErrorKind::Unavailable, "history_unavailable",
                         "cannot open the run history " + path + ": " + (db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(rc)));
    }
    auto store = std::make_unique<SqliteHistory>(std::move(db));
    SIGIL_TRY_STATUS(store->Setup());
    return std::unique_ptr<HistoryStore>(std::move(store));
}

}  // namespace sigil::workers::billing
