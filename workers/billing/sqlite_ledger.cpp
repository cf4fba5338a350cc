// The SQLite ledger store: WAL, a busy timeout, BEGIN IMMEDIATE around every read-then-write,
// every statement prepared once per connection, and the log checkpointed off the commit path.
#include "workers/billing/sqlite_ledger.h"

#include <sqlite3.h>

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <utility>

#include "common/handles.h"
#include "common/log.h"
#include "workers/billing/wal_checkpointer.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;

namespace {

using Database = common::CHandle<sqlite3, sqlite3_close_v2>;
using Statement = common::CHandle<sqlite3_stmt, sqlite3_finalize>;

// Created idempotently by every Open. Entries are append-only (the triggers refuse UPDATE and
// DELETE); the balance is the balance_after of the customer's newest entry.
constexpr const char* SCHEMA = R"sql(
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  customer TEXT NOT NULL,
  kind TEXT NOT NULL,
  delta INTEGER NOT NULL,
  balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
  reason TEXT NOT NULL,
  request_id TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  spender TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS entries_customer_id ON entries (customer, id);
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
  BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
  BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
CREATE TABLE IF NOT EXISTS credits (
  credit_id TEXT PRIMARY KEY,
  entry_id INTEGER NOT NULL REFERENCES entries (id)
);
CREATE TABLE IF NOT EXISTS settlements (
  charge_id INTEGER PRIMARY KEY REFERENCES entries (id),
  actual INTEGER NOT NULL,
  charged INTEGER NOT NULL,
  entry_id INTEGER REFERENCES entries (id)
);
CREATE TABLE IF NOT EXISTS intents (
  id TEXT PRIMARY KEY,
  customer TEXT NOT NULL,
  amount_cents INTEGER NOT NULL,
  processor TEXT NOT NULL,
  reference TEXT NOT NULL,
  client_secret TEXT NOT NULL,
  credited INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL,
  from_block INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS idempotency (
  scope TEXT PRIMARY KEY,
  request_hash TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  owner TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_ms);
CREATE TABLE IF NOT EXISTS budgets (
  id TEXT PRIMARY KEY,
  used INTEGER NOT NULL
);
)sql";

// Ledgers made before these columns gain them when missing (see Setup). Idempotency rows of that
// time were scoped by account and kept their answers in clear: they are dropped, not migrated.
constexpr const char* OWNER_SCHEMA = R"sql(
DELETE FROM idempotency;
ALTER TABLE idempotency ADD COLUMN owner TEXT NOT NULL DEFAULT '';
)sql";
constexpr const char* FROM_BLOCK_SCHEMA = "ALTER TABLE intents ADD COLUMN from_block INTEGER NOT NULL DEFAULT 0";
// Created after the owner column exists (an old table gains it first).
constexpr const char* OWNER_INDEX = "CREATE INDEX IF NOT EXISTS idempotency_owner ON idempotency (owner)";

// Run once, when the table is missing (a new ledger, or one made before it existed).
constexpr const char* SPENT_SCHEMA = R"sql(
CREATE TABLE spent (
  customer TEXT NOT NULL,
  spender TEXT NOT NULL,
  cents INTEGER NOT NULL,
  PRIMARY KEY (customer, spender)
);
INSERT INTO spent (customer, spender, cents)
  SELECT customer, spender, -SUM(delta) FROM entries
  WHERE spender <> '' AND kind IN ('charge', 'settle') GROUP BY customer, spender;
)sql";

enum Sql {
    BEGIN, COMMIT, ROLLBACK, BALANCE, APPEND, ENTRIES, FIND_ENTRY, HAS_CREDIT, INSERT_CREDIT, FIND_SETTLEMENT,
    INSERT_SETTLEMENT, FIND_INTENT, INSERT_INTENT, MARK_CREDITED, EXPIRE_ANSWERS, FIND_ANSWER, INSERT_ANSWER,
    FINISH_ANSWER, RELEASE_ANSWER, SPENT_BY, ADD_SPENT, COUNT_ANSWERS, TAKE_OVER_ANSWER, BUDGET_USED, ADD_BUDGET_USED,
    SQL_COUNT
};

constexpr std::array<const char*, SQL_COUNT> SQL_TEXT = {
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    "SELECT balance_after FROM entries WHERE customer = ?1 ORDER BY id DESC LIMIT 1",
    "INSERT INTO entries (customer, kind, delta, balance_after, reason, request_id, at_ms, spender) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    "SELECT id, customer, delta, balance_after, reason, request_id, at_ms FROM entries "
    "WHERE customer = ?1 ORDER BY id DESC LIMIT ?2",
    "SELECT customer, kind, delta, spender FROM entries WHERE id = ?1",
    "SELECT 1 FROM credits WHERE credit_id = ?1",
    "INSERT INTO credits (credit_id, entry_id) VALUES (?1, ?2) ON CONFLICT (credit_id) DO NOTHING",
    "SELECT actual, charged, entry_id FROM settlements WHERE charge_id = ?1",
    "INSERT INTO settlements (charge_id, actual, charged, entry_id) VALUES (?1, ?2, ?3, ?4)",
    "SELECT id, customer, amount_cents, processor, reference, client_secret, credited, created_ms, from_block "
    "FROM intents WHERE id = ?1",
    "INSERT INTO intents (id, customer, amount_cents, processor, reference, client_secret, credited, created_ms, from_block) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (id) DO NOTHING",
    "UPDATE intents SET credited = 1 WHERE id = ?1",
    "DELETE FROM idempotency WHERE created_ms < ?1",
    "SELECT request_hash, status, body, created_ms FROM idempotency WHERE scope = ?1",
    "INSERT INTO idempotency (scope, owner, request_hash, status, body, created_ms) VALUES (?1, ?2, ?3, 0, '', ?4) "
    "ON CONFLICT (scope) DO NOTHING",
    "UPDATE idempotency SET status = ?2, body = ?3 WHERE scope = ?1 AND status = ?4",
    "DELETE FROM idempotency WHERE scope = ?1 AND status = 0",
    "SELECT cents FROM spent WHERE customer = ?1 AND spender = ?2",
    "INSERT INTO spent (customer, spender, cents) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (customer, spender) DO UPDATE SET cents = cents + excluded.cents",
    "SELECT count(*) FROM idempotency WHERE owner = ?1",
    "UPDATE idempotency SET created_ms = ?3 WHERE scope = ?1 AND status = 0 AND created_ms = ?2",
    "SELECT used FROM budgets WHERE id = ?1",
    "INSERT INTO budgets (id, used) VALUES (?1, ?2) ON CONFLICT (id) DO UPDATE SET used = used + excluded.used",
};

// Key guardrails (guardrails.h): their settings, token buckets, runs in flight and rolling-window
// spend, created idempotently by every Open.
constexpr const char* GUARD_SCHEMA = R"sql(
CREATE TABLE IF NOT EXISTS guardrails (
  key TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  rate_milli INTEGER NOT NULL,
  burst INTEGER NOT NULL,
  address_rate_milli INTEGER NOT NULL,
  address_burst INTEGER NOT NULL,
  max_runs_in_flight INTEGER NOT NULL,
  window_cap_cents INTEGER NOT NULL,
  window_seconds INTEGER NOT NULL,
  allowed_origins TEXT NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS guard_buckets (
  bucket TEXT PRIMARY KEY,
  tokens INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  granted INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS guard_runs (
  run_id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  expires_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS guard_runs_key ON guard_runs (key, expires_ms);
CREATE TABLE IF NOT EXISTS guard_spend (
  charge_id INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  cents INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS guard_spend_key ON guard_spend (key, at_ms);
)sql";

enum GuardSql {
    FIND_GUARDRAILS, PUT_GUARDRAILS, DELETE_GUARDRAILS, DELETE_BUCKETS, DELETE_RUNS, DELETE_SPEND, TAKE_TOKEN,
    COUNT_RUNS, INSERT_RUN, DELETE_RUN, PRUNE_RUNS, WINDOW_SPENT, INSERT_SPEND, SET_SPEND, PRUNE_SPEND, GUARD_SQL_COUNT
};

// The bucket refilled since its last use (RefilledTokens), as one expression over the old row.
#define SIGIL_REFILLED "min(?3, tokens + min(max(?4 - at_ms, 0), 100000000000) * ?2)"
constexpr std::array<const char*, GUARD_SQL_COUNT> GUARD_SQL_TEXT = {
    "SELECT key, account, rate_milli, burst, address_rate_milli, address_burst, max_runs_in_flight, window_cap_cents, "
    "window_seconds, allowed_origins, updated_ms FROM guardrails WHERE key = ?1",
    "INSERT OR REPLACE INTO guardrails (key, account, rate_milli, burst, address_rate_milli, address_burst, "
    "max_runs_in_flight, window_cap_cents, window_seconds, allowed_origins, updated_ms) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    "DELETE FROM guardrails WHERE key = ?1",
    "DELETE FROM guard_buckets WHERE bucket = 'key:' || ?1 OR bucket LIKE 'addr:' || ?1 || ':%'",
    "DELETE FROM guard_runs WHERE key = ?1",
    "DELETE FROM guard_spend WHERE key = ?1",
    // ?1 bucket, ?2 rate (micro-tokens per ms), ?3 capacity (micro-tokens), ?4 now.
    "INSERT INTO guard_buckets (bucket, tokens, at_ms, granted) VALUES (?1, ?3 - 1000000, ?4, 1) "
    "ON CONFLICT (bucket) DO UPDATE SET "
    "tokens = " SIGIL_REFILLED " - CASE WHEN " SIGIL_REFILLED " >= 1000000 THEN 1000000 ELSE 0 END, "
    "granted = CASE WHEN " SIGIL_REFILLED " >= 1000000 THEN 1 ELSE 0 END, at_ms = max(at_ms, ?4) "
    "RETURNING tokens, granted",
    "SELECT count(*) FROM guard_runs WHERE key = ?1 AND expires_ms > ?2",
    "INSERT INTO guard_runs (run_id, key, expires_ms) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (run_id) DO UPDATE SET key = excluded.key, expires_ms = excluded.expires_ms",
    "DELETE FROM guard_runs WHERE run_id = ?1",
    "DELETE FROM guard_runs WHERE key = ?1 AND expires_ms <= ?2",
    "SELECT COALESCE(SUM(cents), 0) FROM guard_spend WHERE key = ?1 AND at_ms >= ?2",
    "INSERT INTO guard_spend (charge_id, key, at_ms, cents) VALUES (?1, ?2, ?3, ?4)",
    "UPDATE guard_spend SET cents = ?2 WHERE charge_id = ?1",
    "DELETE FROM guard_spend WHERE key = ?1 AND at_ms < ?2",
};
#undef SIGIL_REFILLED

// Locking, I/O and file problems are the store being unavailable (502, retry later); anything else
// is a bug of ours.
common::Error SqliteError(sqlite3* db, int rc, const std::string& what) {
    const std::string detail = std::string(db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) + " (sqlite code " +
                               std::to_string(rc) + ")";
    switch (rc & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
        case SQLITE_IOERR:
        case SQLITE_FULL:
        case SQLITE_CANTOPEN:
        case SQLITE_READONLY:
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
        case SQLITE_PROTOCOL:
        case SQLITE_PERM:
        case SQLITE_NOMEM:
            return MakeError(ErrorKind::Unavailable, "ledger_unavailable", "sqlite ledger " + what + ": " + detail);
        default:
            return MakeError(ErrorKind::Internal, "ledger_error", "sqlite ledger " + what + ": " + detail);
    }
}

// One use of a prepared statement: bind, step, read; reset (and its bindings cleared) on scope exit
// so the statement is ready for the next use and holds no read snapshot.
class Query {
public:
    Query(sqlite3* db, sqlite3_stmt* stmt) : m_db(db), m_stmt(stmt) {}
    ~Query() {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
    }
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;

    Query& Bind(int index, const std::string& text) {
        return Check(sqlite3_bind_text(m_stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
    }
    Query& Bind(int index, std::int64_t value) { return Check(sqlite3_bind_int64(m_stmt, index, value)); }
    Query& Bind(int index, const std::optional<std::int64_t>& value) {
        return value ? Bind(index, *value) : Check(sqlite3_bind_null(m_stmt, index));
    }

    // true: a row is ready; false: done.
    Result<bool> Step() {
        if (m_bind_rc != SQLITE_OK) return SqliteError(m_db, m_bind_rc, "bind");
        const int rc = sqlite3_step(m_stmt);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        return SqliteError(m_db, rc, "statement");
    }
    // Runs a statement that answers no rows; answers the rows it changed.
    Result<int> Run() {
        SIGIL_TRY(row, Step());
        (void)row;
        return sqlite3_changes(m_db);
    }

    std::int64_t Int(int column) const { return sqlite3_column_int64(m_stmt, column); }
    bool IsNull(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }
    std::string Text(int column) const {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
        return p == nullptr ? std::string() : std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column)));
    }

private:
    Query& Check(int rc) {
        if (m_bind_rc == SQLITE_OK) m_bind_rc = rc;
        return *this;
    }

    sqlite3* m_db;
    sqlite3_stmt* m_stmt;
    int m_bind_rc = SQLITE_OK;
};

class SqliteStore final : public LedgerStore, private StoreSession {
public:
    static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path, const SqliteLedgerOptions& options) {
        sqlite3* raw = nullptr;
        const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                       nullptr);
        Database db(raw);
        if (rc != SQLITE_OK) {
            return MakeError(ErrorKind::Unavailable, "ledger_unavailable",
                             "cannot open sqlite ledger " + path + ": " + (db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(rc)));
        }
        sqlite3_extended_result_codes(db.get(), 1);
        auto store = std::unique_ptr<SqliteStore>(new SqliteStore(std::move(db), options.busy_timeout_ms));
        sqlite3_busy_handler(store->m_db.get(), &SqliteStore::BusyWait, store.get());
        if (auto s = store->Setup(path); !s) return s.error();
        // Commits hand checkpoints to a thread (wal_checkpointer.h); without one, SQLite's automatic
        // checkpoint in the commit stays: slower, never wrong.
        auto checkpointer = WalCheckpointer::Start(path, options.checkpoint);
        if (checkpointer.ok()) {
            store->m_checkpointer = std::move(checkpointer).value();
            store->m_checkpointer->Attach(store->m_db.get());
        } else {
            common::LogWarn(checkpointer.error().message + "; commits checkpoint the log themselves");
        }
        return store;
    }

    Status Transaction(const std::function<Result<Outcome>(StoreSession&)>& work, Durability durability) override {
        std::lock_guard<std::mutex> lock(m_mutex);
        // synchronous applies to the connection's next commits; switched only when it changes.
        const bool relaxed = durability == Durability::Relaxed;
        if (relaxed != m_relaxed) {
            SIGIL_TRY_STATUS(Exec(relaxed ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = FULL", "durability"));
            m_relaxed = relaxed;
        }
        SIGIL_TRY_STATUS(Use(BEGIN).Run());
        // Rolls back on every path that does not commit, including an exception from `work`.
        struct RollbackUnlessCommitted {
            SqliteStore& store;
            bool committed = false;
            ~RollbackUnlessCommitted() {
                if (!committed) store.RollbackIfOpen();
            }
        } guard{*this};
        SIGIL_TRY(outcome, work(*this));
        if (*outcome == Outcome::Rollback) return common::Success();
        SIGIL_TRY_STATUS(Use(COMMIT).Run());
        guard.committed = true;
        return common::Success();
    }

    Status Read(const std::function<Status(StoreSession&)>& work) override {
        std::lock_guard<std::mutex> lock(m_mutex);
        return work(*this);
    }

private:
    SqliteStore(Database db, int busy_timeout_ms)
        : m_db(std::move(db)),
          m_busy_timeout(std::chrono::milliseconds(busy_timeout_ms)),
          m_jitter(static_cast<std::uint32_t>(::getpid()) ^ static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(this))) {}

    // SQLite's own busy handler (sqlite3_busy_timeout) backs off to 100 ms sleeps, so under steady
    // load a waiting process keeps missing the moments the write lock is free while a neighbour
    // takes it again at once, and can starve until its timeout. Short jittered sleeps keep the
    // wait fair; the total stays bounded by busy_timeout_ms. Called by SQLite on this connection,
    // so under m_mutex.
    static int BusyWait(void* self_ptr, int attempts) {
        auto* self = static_cast<SqliteStore*>(self_ptr);
        const auto now = std::chrono::steady_clock::now();
        if (attempts == 0) self->m_busy_since = now;
        if (now - self->m_busy_since >= self->m_busy_timeout) return 0;  // give up: SQLITE_BUSY
        std::this_thread::sleep_for(std::chrono::microseconds(50 + self->m_jitter() % 450));
        return 1;
    }

    Status Setup(const std::string& path) {
        // WAL: readers never block the writer and the writer never blocks readers, across processes.
        {
            Statement pragma;
            SIGIL_TRY_STATUS(Prepare("PRAGMA journal_mode = WAL", pragma));
            Query q(m_db.get(), pragma.get());
            SIGIL_TRY(row, q.Step());
            const std::string mode = *row ? q.Text(0) : "";
            if (mode != "wal") {
                return MakeError(ErrorKind::Unavailable, "ledger_unavailable",
                                 "sqlite ledger " + path + " cannot use WAL (journal mode " + mode + ")");
            }
        }
        // FULL: a commit is on disk before the caller is told (money; the WAL sync is cheap).
        SIGIL_TRY_STATUS(Exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;", "settings of " + path));
        SIGIL_TRY_STATUS(Exec("BEGIN IMMEDIATE", "schema of " + path));
        if (auto s = Exec(SCHEMA, "schema of " + path); !s) {
            RollbackIfOpen();
            return s.error();
        }
        // Ledgers made before entries had a spender gain the column (its default is every old row's).
        if (auto has = HasColumn("entries", "spender"); !has.ok() || !*has) {
            if (auto s = Exec("ALTER TABLE entries ADD COLUMN spender TEXT NOT NULL DEFAULT ''", "schema of " + path); !s) {
                RollbackIfOpen();
                return s.error();
            }
        }
        for (const auto& [table, column, sql] : {std::tuple{"idempotency", "owner", OWNER_SCHEMA},
                                                  std::tuple{"intents", "from_block", FROM_BLOCK_SCHEMA}}) {
            if (auto has = HasColumn(table, column); !has.ok() || !*has) {
                if (auto s = Exec(sql, "schema of " + path); !s) {
                    RollbackIfOpen();
                    return s.error();
                }
            }
        }
        if (auto s = Exec(OWNER_INDEX, "schema of " + path); !s) {
            RollbackIfOpen();
            return s.error();
        }
        // What each usage key has spent, kept as it goes (the spend cap reads one row, not a sum
        // over every charge the key ever made); a ledger made before it gains it from its entries.
        if (auto has = HasTable("spent"); !has.ok() || !*has) {
            if (auto s = Exec(SPENT_SCHEMA, "schema of " + path); !s) {
                RollbackIfOpen();
                return s.error();
            }
        }
        // The index on (customer, spender) served the spend cap's sum before `spent` existed; no
        // statement reads it now, and keeping it up to date was a quarter of every charge's work
        // (bench_ledger: run holds from 4 processes 33k/s with it, 43k/s without).
        if (auto s = Exec("DROP INDEX IF EXISTS entries_customer_spender", "schema of " + path); !s) {
            RollbackIfOpen();
            return s.error();
        }
        if (auto s = Exec(GUARD_SCHEMA, "schema of " + path); !s) {
            RollbackIfOpen();
            return s.error();
        }
        if (auto s = Exec("COMMIT", "schema of " + path); !s) {
            RollbackIfOpen();
            return s.error();
        }
        for (int i = 0; i < SQL_COUNT; ++i) SIGIL_TRY_STATUS(Prepare(SQL_TEXT[i], m_sql[i]));
        for (int i = 0; i < GUARD_SQL_COUNT; ++i) SIGIL_TRY_STATUS(Prepare(GUARD_SQL_TEXT[i], m_guard_sql[i]));
        return common::Success();
    }

    Result<bool> HasTable(const char* table) {
        Statement st;
        SIGIL_TRY_STATUS(Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", st));
        Query q(m_db.get(), st.get());
        q.Bind(1, std::string(table));
        SIGIL_TRY(row, q.Step());
        return *row;
    }

    Result<bool> HasColumn(const char* table, const char* column) {
        Statement info;
        SIGIL_TRY_STATUS(Prepare((std::string("PRAGMA table_info(") + table + ")").c_str(), info));
        Query q(m_db.get(), info.get());
        for (;;) {
            SIGIL_TRY(row, q.Step());
            if (!*row) return false;
            if (q.Text(1) == column) return true;
        }
    }

    Status Exec(const char* sql, const std::string& what) {
        const int rc = sqlite3_exec(m_db.get(), sql, nullptr, nullptr, nullptr);
        if (rc != SQLITE_OK) return SqliteError(m_db.get(), rc, what);
        return common::Success();
    }

    Status Prepare(const char* sql, Statement& out) {
        sqlite3_stmt* raw = nullptr;
        const int rc = sqlite3_prepare_v3(m_db.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
        out.reset(raw);
        if (rc != SQLITE_OK) return SqliteError(m_db.get(), rc, "prepare");
        return common::Success();
    }

    Query Use(Sql which) { return Query(m_db.get(), m_sql[which].get()); }

    void RollbackIfOpen() {
        // An I/O error may already have rolled the transaction back.
        if (sqlite3_get_autocommit(m_db.get()) == 0) (void)Use(ROLLBACK).Run();
    }

    // StoreSession: BEGIN IMMEDIATE already holds the database's write lock.
    Status Lock(const std::string&) override { return common::Success(); }

    Result<Cents> SpentBy(const std::string& customer, const std::string& spender) override {
        Query q = Use(SPENT_BY);
        q.Bind(1, customer).Bind(2, spender);
        SIGIL_TRY(row, q.Step());
        return *row ? q.Int(0) : Cents{0};
    }

    Result<Cents> Balance(const std::string& customer) override {
        Query q = Use(BALANCE);
        q.Bind(1, customer);
        SIGIL_TRY(row, q.Step());
        return *row ? q.Int(0) : Cents{0};
    }

    Result<std::int64_t> Append(const NewEntry& e) override {
        Query q = Use(APPEND);
        q.Bind(1, e.customer).Bind(2, std::string(EntryKindName(e.kind))).Bind(3, e.delta).Bind(4, e.balance_after);
        q.Bind(5, e.reason).Bind(6, e.request_id).Bind(7, e.at_ms).Bind(8, e.spender);
        SIGIL_TRY_STATUS(q.Run());
        const auto id = static_cast<std::int64_t>(sqlite3_last_insert_rowid(m_db.get()));
        if (CountsAsSpent(e)) {
            Query add = Use(ADD_SPENT);
            add.Bind(1, e.customer).Bind(2, e.spender).Bind(3, -e.delta);
            SIGIL_TRY_STATUS(add.Run());
        }
        return id;
    }

    Result<std::vector<LedgerEntry>> Entries(const std::string& customer, std::size_t limit) override {
        Query q = Use(ENTRIES);
        q.Bind(1, customer).Bind(2, static_cast<std::int64_t>(limit));
        std::vector<LedgerEntry> out;
        for (;;) {
            SIGIL_TRY(row, q.Step());
            if (!*row) break;
            out.push_back({q.Int(0), q.Text(1), q.Int(2), q.Int(3), q.Text(4), q.Text(5), q.Int(6)});
        }
        return out;
    }

    Result<std::optional<EntryHead>> FindEntry(std::int64_t id) override {
        Query q = Use(FIND_ENTRY);
        q.Bind(1, id);
        SIGIL_TRY(row, q.Step());
        if (!*row) return std::optional<EntryHead>();
        const auto kind = ParseEntryKind(q.Text(1));
        if (!kind) return MakeError(ErrorKind::Internal, "ledger_error", "entry " + std::to_string(id) + " has an unknown kind");
        return std::optional<EntryHead>(EntryHead{q.Text(0), *kind, q.Int(2), q.Text(3)});
    }

    Result<bool> HasCredit(const std::string& credit_id) override {
        Query q = Use(HAS_CREDIT);
        q.Bind(1, credit_id);
        return q.Step();
    }

    Result<bool> InsertCredit(const std::string& credit_id, std::int64_t entry_id) override {
        Query q = Use(INSERT_CREDIT);
        q.Bind(1, credit_id).Bind(2, entry_id);
        SIGIL_TRY(changed, q.Run());
        return *changed == 1;
    }

    Result<std::optional<Settlement>> FindSettlement(std::int64_t charge_id) override {
        Query q = Use(FIND_SETTLEMENT);
        q.Bind(1, charge_id);
        SIGIL_TRY(row, q.Step());
        if (!*row) return std::optional<Settlement>();
        Settlement s{charge_id, q.Int(0), q.Int(1), std::nullopt};
        if (!q.IsNull(2)) s.entry_id = q.Int(2);
        return std::optional<Settlement>(s);
    }

    Status InsertSettlement(const Settlement& s) override {
        Query q = Use(INSERT_SETTLEMENT);
        q.Bind(1, s.charge_id).Bind(2, s.actual).Bind(3, s.charged).Bind(4, s.entry_id);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Result<std::optional<PaymentIntent>> FindIntent(const std::string& id) override {
        Query q = Use(FIND_INTENT);
        q.Bind(1, id);
        SIGIL_TRY(row, q.Step());
        if (!*row) return std::optional<PaymentIntent>();
        return std::optional<PaymentIntent>(
            PaymentIntent{q.Text(0), q.Text(1), q.Int(2), q.Text(3), q.Text(4), q.Text(5), q.Int(6) != 0, q.Int(7),
                          static_cast<std::uint64_t>(q.Int(8))});
    }

    Result<bool> InsertIntent(const PaymentIntent& i) override {
        Query q = Use(INSERT_INTENT);
        q.Bind(1, i.id).Bind(2, i.customer).Bind(3, i.amount_cents).Bind(4, i.processor).Bind(5, i.reference);
        q.Bind(6, i.client_secret).Bind(7, std::int64_t{i.credited ? 1 : 0}).Bind(8, i.created_ms);
        q.Bind(9, static_cast<std::int64_t>(i.from_block));
        SIGIL_TRY(changed, q.Run());
        return *changed == 1;
    }

    Status MarkIntentCredited(const std::string& id) override {
        Query q = Use(MARK_CREDITED);
        q.Bind(1, id);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Status ExpireAnswers(std::int64_t created_before_ms) override {
        Query q = Use(EXPIRE_ANSWERS);
        q.Bind(1, created_before_ms);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Result<std::optional<StoredAnswer>> FindAnswer(const std::string& scope) override {
        Query q = Use(FIND_ANSWER);
        q.Bind(1, scope);
        SIGIL_TRY(row, q.Step());
        if (!*row) return std::optional<StoredAnswer>();
        return std::optional<StoredAnswer>(StoredAnswer{q.Text(0), static_cast<int>(q.Int(1)), q.Text(2), q.Int(3)});
    }

    Result<bool> InsertPendingAnswer(const std::string& scope, const std::string& owner, const std::string& request_hash,
                                     std::int64_t created_ms) override {
        Query q = Use(INSERT_ANSWER);
        q.Bind(1, scope).Bind(2, owner).Bind(3, request_hash).Bind(4, created_ms);
        SIGIL_TRY(changed, q.Run());
        return *changed == 1;
    }

    Result<std::int64_t> CountAnswers(const std::string& owner) override {
        Query q = Use(COUNT_ANSWERS);
        q.Bind(1, owner);
        SIGIL_TRY(row, q.Step());
        return *row ? q.Int(0) : std::int64_t{0};
    }

    Result<bool> TakeOverAnswer(const std::string& scope, std::int64_t claimed_ms, std::int64_t now_ms) override {
        Query q = Use(TAKE_OVER_ANSWER);
        q.Bind(1, scope).Bind(2, claimed_ms).Bind(3, now_ms);
        SIGIL_TRY(changed, q.Run());
        return *changed == 1;
    }

    Result<Cents> BudgetUsed(const std::string& budget_id) override {
        Query q = Use(BUDGET_USED);
        q.Bind(1, budget_id);
        SIGIL_TRY(row, q.Step());
        return *row ? q.Int(0) : Cents{0};
    }

    Status AddBudgetUsed(const std::string& budget_id, Cents cents) override {
        Query q = Use(ADD_BUDGET_USED);
        q.Bind(1, budget_id).Bind(2, cents);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Result<bool> FinishAnswer(const std::string& scope, int from_status, int status, const std::string& body) override {
        Query q = Use(FINISH_ANSWER);
        q.Bind(1, scope).Bind(2, std::int64_t{status}).Bind(3, body).Bind(4, std::int64_t{from_status});
        SIGIL_TRY(changed, q.Run());
        return *changed == 1;
    }

    Status ReleasePendingAnswer(const std::string& scope) override {
        Query q = Use(RELEASE_ANSWER);
        q.Bind(1, scope);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    // Key guardrails.
    Query UseGuard(GuardSql which) { return Query(m_db.get(), m_guard_sql[which].get()); }

    Result<std::optional<KeyGuardrails>> FindGuardrails(const std::string& key) override {
        Query q = UseGuard(FIND_GUARDRAILS);
        q.Bind(1, key);
        SIGIL_TRY(row, q.Step());
        if (!*row) return std::optional<KeyGuardrails>();
        KeyGuardrails g;
        g.key = q.Text(0);
        g.account = q.Text(1);
        g.rate_milli = q.Int(2);
        g.burst = q.Int(3);
        g.address_rate_milli = q.Int(4);
        g.address_burst = q.Int(5);
        g.max_runs_in_flight = q.Int(6);
        g.window_cap_cents = q.Int(7);
        g.window_seconds = q.Int(8);
        g.allowed_origins = SplitOrigins(q.Text(9));
        g.updated_ms = q.Int(10);
        return std::optional<KeyGuardrails>(std::move(g));
    }

    Status PutGuardrails(const KeyGuardrails& g) override {
        Query q = UseGuard(PUT_GUARDRAILS);
        q.Bind(1, g.key).Bind(2, g.account).Bind(3, g.rate_milli).Bind(4, g.burst).Bind(5, g.address_rate_milli);
        q.Bind(6, g.address_burst).Bind(7, g.max_runs_in_flight).Bind(8, g.window_cap_cents).Bind(9, g.window_seconds);
        q.Bind(10, JoinOrigins(g.allowed_origins)).Bind(11, g.updated_ms);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Result<bool> DeleteGuardrails(const std::string& key) override {
        int deleted = 0;
        for (GuardSql which : {DELETE_GUARDRAILS, DELETE_BUCKETS, DELETE_RUNS, DELETE_SPEND}) {
            Query q = UseGuard(which);
            q.Bind(1, key);
            SIGIL_TRY(changed, q.Run());
            if (which == DELETE_GUARDRAILS) deleted = *changed;
        }
        return deleted > 0;
    }

    Result<BucketTake> TakeToken(const std::string& bucket, std::int64_t rate_milli, std::int64_t burst,
                                 std::int64_t now_ms) override {
        Query q = UseGuard(TAKE_TOKEN);
        q.Bind(1, bucket).Bind(2, rate_milli).Bind(3, burst * MICRO_TOKENS).Bind(4, now_ms);
        SIGIL_TRY(row, q.Step());
        if (!*row) return MakeError(ErrorKind::Internal, "ledger_error", "token bucket answered no row");
        return BucketTake{q.Int(1) != 0, q.Int(0)};
    }

    Result<std::int64_t> CountRuns(const std::string& key, std::int64_t now_ms) override {
        Query q = UseGuard(COUNT_RUNS);
        q.Bind(1, key).Bind(2, now_ms);
        SIGIL_TRY(row, q.Step());
        return *row ? q.Int(0) : std::int64_t{0};
    }

    Status InsertRun(const std::string& run_id, const std::string& key, std::int64_t expires_ms) override {
        Query q = UseGuard(INSERT_RUN);
        q.Bind(1, run_id).Bind(2, key).Bind(3, expires_ms);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Status DeleteRun(const std::string& run_id) override {
        Query q = UseGuard(DELETE_RUN);
        q.Bind(1, run_id);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Status PruneRuns(const std::string& key, std::int64_t now_ms) override {
        Query q = UseGuard(PRUNE_RUNS);
        q.Bind(1, key).Bind(2, now_ms);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Result<Cents> WindowSpent(const std::string& key, std::int64_t since_ms) override {
        Query q = UseGuard(WINDOW_SPENT);
        q.Bind(1, key).Bind(2, since_ms);
        SIGIL_TRY(row, q.Step());
        return *row ? q.Int(0) : Cents{0};
    }

    Status InsertWindowSpend(std::int64_t charge_id, const std::string& key, std::int64_t at_ms, Cents cents) override {
        Query q = UseGuard(INSERT_SPEND);
        q.Bind(1, charge_id).Bind(2, key).Bind(3, at_ms).Bind(4, cents);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Status SetWindowSpend(std::int64_t charge_id, Cents cents) override {
        Query q = UseGuard(SET_SPEND);
        q.Bind(1, charge_id).Bind(2, cents);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    Status PruneWindow(const std::string& key, std::int64_t before_ms) override {
        Query q = UseGuard(PRUNE_SPEND);
        q.Bind(1, key).Bind(2, before_ms);
        SIGIL_TRY_STATUS(q.Run());
        return common::Success();
    }

    // Declared first: destroyed last, after m_db (whose commits call it) is closed.
    std::unique_ptr<WalCheckpointer> m_checkpointer;
    Database m_db;  // closed after every statement is finalized
    std::array<Statement, SQL_COUNT> m_sql;
    std::array<Statement, GUARD_SQL_COUNT> m_guard_sql;
    std::mutex m_mutex;  // one connection: one transaction at a time
    bool m_relaxed = false;  // the connection's synchronous setting is NORMAL (else FULL)
    std::chrono::milliseconds m_busy_timeout;
    std::chrono::steady_clock::time_point m_busy_since;
    std::minstd_rand m_jitter;
};

}  // namespace

Result<std::unique_ptr<Ledger>> OpenSqliteLedger(const std::string& path, const SqliteLedgerOptions& options) {
    if (path.empty()) return MakeError(ErrorKind::Unavailable, "ledger_unavailable", "no ledger database configured");
    SIGIL_TRY(store, SqliteStore::Open(path, options));
    return MakeStoredLedger(std::move(*store), options.now_ms);
}

}  // namespace sigil::workers::billing
