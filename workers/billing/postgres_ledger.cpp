// The PostgreSQL ledger store over libpq: parameterized statements only, each sent asynchronously
// and awaited with a deadline, every read-then-write in a transaction holding the customer's
// advisory lock, one reconnection when an idle connection turns out to be broken. Statements whose
// answer nothing reads (BEGIN, the lock, a running total's upsert) wait and go to the server with the
// next statement in one round trip (libpq's pipeline mode): a run's hold is 3 round trips, not 6.
#include "workers/billing/postgres_ledger.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "common/handles.h"
#include "workers/billing/backoff.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;

namespace {

using Connection = common::CHandle<PGconn, PQfinish>;
using PgResult = common::CHandle<PGresult, PQclear>;
using Param = std::optional<std::string>;  // nullopt: SQL NULL

// The schema, created under a lock so that workers starting together do not race on the catalog.
// Entries are append-only: a statement trigger refuses UPDATE, DELETE and TRUNCATE.
constexpr const char* SCHEMA[] = {
    "SELECT pg_advisory_xact_lock(1397311814, 1)",
    "CREATE TABLE IF NOT EXISTS entries ("
    " id bigserial PRIMARY KEY, customer text NOT NULL, kind text NOT NULL, delta bigint NOT NULL,"
    " balance_after bigint NOT NULL CHECK (balance_after >= 0), reason text NOT NULL,"
    " request_id text NOT NULL, at_ms bigint NOT NULL)",
    "CREATE INDEX IF NOT EXISTS entries_customer_id ON entries (customer, id)",
    // Ledgers made before entries had a spender gain the column (its default is every old row's).
    // Only when missing: ALTER TABLE and CREATE INDEX lock the table against every charge in flight
    // (and a waiting exclusive lock queues the charges behind it), so an Open beside running workers
    // must not ask for them when there is nothing to do.
    R"sql(DO $do$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = 'entries' AND column_name = 'spender') THEN
    ALTER TABLE entries ADD COLUMN spender text NOT NULL DEFAULT '';
  END IF;
  -- No statement reads this index since the spend cap reads `spent`, and keeping it up to date was
  -- part of every charge; a ledger that has it loses it once (a brief exclusive lock, then never again).
  IF to_regclass('entries_customer_spender') IS NOT NULL THEN
    DROP INDEX entries_customer_spender;
  END IF;
END $do$)sql",
    R"sql(DO $do$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'entries_append_only' AND tgrelid = 'entries'::regclass) THEN
    CREATE OR REPLACE FUNCTION sigil_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS
      $fn$ BEGIN RAISE EXCEPTION 'ledger entries are append-only'; END $fn$;
    CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON entries
      FOR EACH STATEMENT EXECUTE FUNCTION sigil_ledger_append_only();
  END IF;
END $do$)sql",
    "CREATE TABLE IF NOT EXISTS credits ("
    " credit_id text PRIMARY KEY, entry_id bigint NOT NULL REFERENCES entries (id))",
    "CREATE TABLE IF NOT EXISTS settlements ("
    " charge_id bigint PRIMARY KEY REFERENCES entries (id), actual bigint NOT NULL, charged bigint NOT NULL,"
    " entry_id bigint REFERENCES entries (id))",
    "CREATE TABLE IF NOT EXISTS intents ("
    " id text PRIMARY KEY, customer text NOT NULL, amount_cents bigint NOT NULL, processor text NOT NULL,"
    " reference text NOT NULL, client_secret text NOT NULL, credited boolean NOT NULL DEFAULT false,"
    " created_ms bigint NOT NULL)",
    "CREATE TABLE IF NOT EXISTS idempotency ("
    " scope text PRIMARY KEY, request_hash text NOT NULL, status integer NOT NULL, body text NOT NULL,"
    " created_ms bigint NOT NULL)",
    "CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_ms)",
    // Columns newer than the tables, added when missing (only then: ALTER TABLE locks the table).
    // Idempotency rows from before `owner` were scoped by account and kept their answers in clear:
    // they are dropped, not migrated.
    R"sql(DO $do$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = 'idempotency' AND column_name = 'owner') THEN
    DELETE FROM idempotency;
    ALTER TABLE idempotency ADD COLUMN owner text NOT NULL DEFAULT '';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = 'intents' AND column_name = 'from_block') THEN
    ALTER TABLE intents ADD COLUMN from_block bigint NOT NULL DEFAULT 0;
  END IF;
END $do$)sql",
    "CREATE INDEX IF NOT EXISTS idempotency_owner ON idempotency (owner)",
    "CREATE TABLE IF NOT EXISTS budgets (id text PRIMARY KEY, used bigint NOT NULL)",
    // What each usage key has spent, kept as it goes (the spend cap reads one row, not a sum over
    // every charge the key made); a ledger made before the table gains it from its entries.
    R"sql(DO $do$ BEGIN
  IF to_regclass('spent') IS NULL THEN
    CREATE TABLE spent (customer text NOT NULL, spender text NOT NULL, cents bigint NOT NULL,
                        PRIMARY KEY (customer, spender));
    INSERT INTO spent (customer, spender, cents)
      SELECT customer, spender, -SUM(delta) FROM entries
      WHERE spender <> '' AND kind IN ('charge', 'settle') GROUP BY customer, spender;
  END IF;
END $do$)sql",
};

// Key guardrails (guardrails.h): their settings, token buckets, runs in flight and rolling-window
// spend; created with the schema, under its lock.
constexpr const char* GUARD_SCHEMA[] = {
    // Only when missing: CREATE INDEX takes a lock that conflicts with admissions in flight, and an
    // Open beside running workers would otherwise deadlock with them.
    R"sql(DO $do$ BEGIN
  IF to_regclass('guardrails') IS NULL THEN
    CREATE TABLE guardrails (
      key text PRIMARY KEY, account text NOT NULL, rate_milli bigint NOT NULL, burst bigint NOT NULL,
      address_rate_milli bigint NOT NULL, address_burst bigint NOT NULL, max_runs_in_flight bigint NOT NULL,
      window_cap_cents bigint NOT NULL, window_seconds bigint NOT NULL, allowed_origins text NOT NULL,
      updated_ms bigint NOT NULL);
    CREATE TABLE guard_buckets (bucket text PRIMARY KEY, tokens bigint NOT NULL, at_ms bigint NOT NULL,
                                granted boolean NOT NULL);
    CREATE TABLE guard_runs (run_id text PRIMARY KEY, key text NOT NULL, expires_ms bigint NOT NULL);
    CREATE INDEX guard_runs_key ON guard_runs (key, expires_ms);
    CREATE TABLE guard_spend (charge_id bigint PRIMARY KEY, key text NOT NULL, at_ms bigint NOT NULL,
                              cents bigint NOT NULL);
    CREATE INDEX guard_spend_key ON guard_spend (key, at_ms);
  END IF;
END $do$)sql",
};

std::string Trimmed(const char* message) {
    std::string s = message != nullptr ? message : "";
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    for (char& c : s) {
        if (c == '\n') c = ' ';
    }
    return s;
}

std::string Str(std::int64_t v) { return std::to_string(v); }

std::int64_t Int(const PGresult* r, int row, int column) {
    return std::strtoll(PQgetvalue(r, row, column), nullptr, 10);
}
std::string Text(const PGresult* r, int row, int column) {
    return std::string(PQgetvalue(r, row, column), static_cast<std::size_t>(PQgetlength(r, row, column)));
}
bool Changed(const PGresult* r) { return std::strcmp(PQcmdTuples(const_cast<PGresult*>(r)), "0") != 0; }

void IgnoreNotice(void*, const char*) {}

class PostgresStore;

// The statements of one call on one connection. Remembers whether the connection broke (so the
// store drops it), whether the failure was a timeout (no retry: the server hangs) and whether
// COMMIT was sent (no retry: it may have committed).
class PgSession final : public StoreSession {
public:
    PgSession(PGconn* conn, int query_timeout_ms) : m_conn(conn), m_timeout_ms(query_timeout_ms) {}
    ~PgSession() override {
        const bool begun = !NothingSent();
        m_queued.clear();
        if (m_in_transaction && begun && !m_broken) (void)Exec("ROLLBACK", {});
    }
    PgSession(const PgSession&) = delete;
    PgSession& operator=(const PgSession&) = delete;

    bool Broken() const { return m_broken; }
    bool Retryable() const { return m_broken && !m_timed_out && !m_commit_sent; }

    Status RunTransaction(const std::function<Result<Outcome>(StoreSession&)>& work,
                          Durability durability = Durability::Full) {
        m_queued.clear();
        Queue(BEGIN, {});
        if (durability == Durability::Relaxed) Queue("SET LOCAL synchronous_commit TO off", {});
        m_in_transaction = true;
        SIGIL_TRY(outcome, work(*this));
        if (*outcome == Outcome::Rollback) {
            m_in_transaction = false;
            if (NothingSent()) {  // the server never saw the transaction: nothing to roll back
                m_queued.clear();
                return common::Success();
            }
            SIGIL_TRY_STATUS(Exec("ROLLBACK", {}));
            return common::Success();
        }
        m_commit_sent = true;
        auto commit = Exec("COMMIT", {});
        if (!commit) {
            if (!m_broken) return commit.error();
            return MakeError(ErrorKind::Unavailable, "ledger_unavailable",
                             "the PostgreSQL ledger connection broke during COMMIT, the outcome is unknown: " +
                                 commit.error().message);
        }
        m_in_transaction = false;
        // COMMIT of a transaction the server had already aborted answers ROLLBACK, not an error.
        if (std::strcmp(PQcmdStatus(commit->get()), "COMMIT") != 0) {
            return MakeError(ErrorKind::Internal, "ledger_error", "the PostgreSQL ledger rolled the transaction back");
        }
        return common::Success();
    }

    // One statement with text parameters, awaited until the deadline; the queued ones go first, in
    // the same round trip.
    Result<PgResult> Exec(const char* sql, std::initializer_list<Param> params) {
        if (m_broken) return Unavailable("the connection is gone");
        if (!m_queued.empty()) {
            m_queued.push_back({sql, std::vector<Param>(params)});
            return ExecQueued();
        }
        if (!Send(sql, params.begin(), params.size())) return Lost();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(m_timeout_ms);
        PgResult result;
        for (;;) {
            while (PQisBusy(m_conn) != 0) {
                SIGIL_TRY_STATUS(WaitReadable(deadline));
                if (PQconsumeInput(m_conn) == 0) return Lost();
            }
            PGresult* next = PQgetResult(m_conn);
            if (next == nullptr) break;
            // One statement gives one result; keep the first error if there were more.
            if (!result || PQresultStatus(result.get()) != PGRES_FATAL_ERROR) result.reset(next);
            else PQclear(next);
        }
        if (!result) return Lost();
        const ExecStatusType status = PQresultStatus(result.get());
        if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
        return Failure(result.get());
    }

    // StoreSession.
    Status Lock(const std::string& key) override {
        // hashtextextended: a 64-bit hash, so two customers rarely share a lock (and then only wait).
        // Queued: it is taken on the server before the next statement runs, which is all that matters
        // (a failure to take it fails that statement).
        Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", {key});
        return common::Success();
    }

    Result<Cents> SpentBy(const std::string& customer, const std::string& spender) override {
        SIGIL_TRY(r, Exec("SELECT cents FROM spent WHERE customer = $1 AND spender = $2", {customer, spender}));
        return PQntuples(r->get()) > 0 ? Int(r->get(), 0, 0) : Cents{0};
    }

    Result<Cents> Balance(const std::string& customer) override {
        SIGIL_TRY(r, Exec("SELECT balance_after FROM entries WHERE customer = $1 ORDER BY id DESC LIMIT 1", {customer}));
        return PQntuples(r->get()) > 0 ? Int(r->get(), 0, 0) : Cents{0};
    }

    Result<std::int64_t> Append(const NewEntry& e) override {
        SIGIL_TRY(r, Exec("INSERT INTO entries (customer, kind, delta, balance_after, reason, request_id, at_ms, spender) "
                          "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                          {e.customer, std::string(EntryKindName(e.kind)), Str(e.delta), Str(e.balance_after), e.reason,
                           e.request_id, Str(e.at_ms), e.spender}));
        const std::int64_t id = Int(r->get(), 0, 0);
        if (CountsAsSpent(e)) {  // queued: it goes with the next statement (at the latest COMMIT)
            Queue("INSERT INTO spent (customer, spender, cents) VALUES ($1, $2, $3) "
                  "ON CONFLICT (customer, spender) DO UPDATE SET cents = spent.cents + excluded.cents",
                  {e.customer, e.spender, Str(-e.delta)});
        }
        return id;
    }

    Result<std::vector<LedgerEntry>> Entries(const std::string& customer, std::size_t limit) override {
        SIGIL_TRY(r, Exec("SELECT id, customer, delta, balance_after, reason, request_id, at_ms FROM entries "
                          "WHERE customer = $1 ORDER BY id DESC LIMIT $2",
                          {customer, std::to_string(limit)}));
        std::vector<LedgerEntry> out;
        const PGresult* res = r->get();
        for (int i = 0; i < PQntuples(res); ++i) {
            out.push_back({Int(res, i, 0), Text(res, i, 1), Int(res, i, 2), Int(res, i, 3), Text(res, i, 4),
                           Text(res, i, 5), Int(res, i, 6)});
        }
        return out;
    }

    Result<std::optional<EntryHead>> FindEntry(std::int64_t id) override {
        SIGIL_TRY(r, Exec("SELECT customer, kind, delta, spender FROM entries WHERE id = $1", {Str(id)}));
        if (PQntuples(r->get()) == 0) return std::optional<EntryHead>();
        const auto kind = ParseEntryKind(Text(r->get(), 0, 1));
        if (!kind) return MakeError(ErrorKind::Internal, "ledger_error", "entry " + Str(id) + " has an unknown kind");
        return std::optional<EntryHead>(EntryHead{Text(r->get(), 0, 0), *kind, Int(r->get(), 0, 2), Text(r->get(), 0, 3)});
    }

    Result<bool> HasCredit(const std::string& credit_id) override {
        SIGIL_TRY(r, Exec("SELECT 1 FROM credits WHERE credit_id = $1", {credit_id}));
        return PQntuples(r->get()) > 0;
    }

    Result<bool> InsertCredit(const std::string& credit_id, std::int64_t entry_id) override {
        // A concurrent insert of the same id waits for the other transaction, then does nothing.
        SIGIL_TRY(r, Exec("INSERT INTO credits (credit_id, entry_id) VALUES ($1, $2) ON CONFLICT (credit_id) DO NOTHING",
                          {credit_id, Str(entry_id)}));
        return Changed(r->get());
    }

    Result<std::optional<Settlement>> FindSettlement(std::int64_t charge_id) override {
        SIGIL_TRY(r, Exec("SELECT actual, charged, entry_id FROM settlements WHERE charge_id = $1", {Str(charge_id)}));
        if (PQntuples(r->get()) == 0) return std::optional<Settlement>();
        Settlement s{charge_id, Int(r->get(), 0, 0), Int(r->get(), 0, 1), std::nullopt};
        if (PQgetisnull(r->get(), 0, 2) == 0) s.entry_id = Int(r->get(), 0, 2);
        return std::optional<Settlement>(s);
    }

    Status InsertSettlement(const Settlement& s) override {
        SIGIL_TRY_STATUS(Exec("INSERT INTO settlements (charge_id, actual, charged, entry_id) VALUES ($1, $2, $3, $4)",
                              {Str(s.charge_id), Str(s.actual), Str(s.charged),
                               s.entry_id ? Param(Str(*s.entry_id)) : Param()}));
        return common::Success();
    }

    Result<std::optional<PaymentIntent>> FindIntent(const std::string& id) override {
        SIGIL_TRY(r, Exec("SELECT id, customer, amount_cents, processor, reference, client_secret, credited, created_ms, "
                          "from_block FROM intents WHERE id = $1",
                          {id}));
        const PGresult* res = r->get();
        if (PQntuples(res) == 0) return std::optional<PaymentIntent>();
        return std::optional<PaymentIntent>(PaymentIntent{Text(res, 0, 0), Text(res, 0, 1), Int(res, 0, 2),
                                                          Text(res, 0, 3), Text(res, 0, 4), Text(res, 0, 5),
                                                          Text(res, 0, 6) == "t", Int(res, 0, 7),
                                                          static_cast<std::uint64_t>(Int(res, 0, 8))});
    }

    Result<bool> InsertIntent(const PaymentIntent& i) override {
        SIGIL_TRY(r, Exec("INSERT INTO intents (id, customer, amount_cents, processor, reference, client_secret, credited,"
                          " created_ms, from_block) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING",
                          {i.id, i.customer, Str(i.amount_cents), i.processor, i.reference, i.client_secret,
                           std::string(i.credited ? "true" : "false"), Str(i.created_ms),
                           Str(static_cast<std::int64_t>(i.from_block))}));
        return Changed(r->get());
    }

    Status MarkIntentCredited(const std::string& id) override {
        SIGIL_TRY_STATUS(Exec("UPDATE intents SET credited = true WHERE id = $1", {id}));
        return common::Success();
    }

    Status ExpireAnswers(std::int64_t created_before_ms) override {
        SIGIL_TRY_STATUS(Exec("DELETE FROM idempotency WHERE created_ms < $1", {Str(created_before_ms)}));
        return common::Success();
    }

    Result<std::optional<StoredAnswer>> FindAnswer(const std::string& scope) override {
        SIGIL_TRY(r, Exec("SELECT request_hash, status, body, created_ms FROM idempotency WHERE scope = $1", {scope}));
        const PGresult* res = r->get();
        if (PQntuples(res) == 0) return std::optional<StoredAnswer>();
        return std::optional<StoredAnswer>(
            StoredAnswer{Text(res, 0, 0), static_cast<int>(Int(res, 0, 1)), Text(res, 0, 2), Int(res, 0, 3)});
    }

    Result<bool> InsertPendingAnswer(const std::string& scope, const std::string& owner, const std::string& request_hash,
                                     std::int64_t created_ms) override {
        SIGIL_TRY(r, Exec("INSERT INTO idempotency (scope, owner, request_hash, status, body, created_ms) "
                          "VALUES ($1, $2, $3, 0, '', $4) ON CONFLICT (scope) DO NOTHING",
                          {scope, owner, request_hash, Str(created_ms)}));
        return Changed(r->get());
    }

    Result<std::int64_t> CountAnswers(const std::string& owner) override {
        SIGIL_TRY(r, Exec("SELECT count(*) FROM idempotency WHERE owner = $1", {owner}));
        return Int(r->get(), 0, 0);
    }

    Result<bool> TakeOverAnswer(const std::string& scope, std::int64_t claimed_ms, std::int64_t now_ms) override {
        SIGIL_TRY(r, Exec("UPDATE idempotency SET created_ms = $3 WHERE scope = $1 AND status = 0 AND created_ms = $2",
                          {scope, Str(claimed_ms), Str(now_ms)}));
        return Changed(r->get());
    }

    Result<Cents> BudgetUsed(const std::string& budget_id) override {
        SIGIL_TRY(r, Exec("SELECT used FROM budgets WHERE id = $1", {budget_id}));
        return PQntuples(r->get()) > 0 ? Int(r->get(), 0, 0) : Cents{0};
    }

    Status AddBudgetUsed(const std::string& budget_id, Cents cents) override {
        SIGIL_TRY_STATUS(Exec("INSERT INTO budgets (id, used) VALUES ($1, $2) "
                              "ON CONFLICT (id) DO UPDATE SET used = budgets.used + excluded.used",
                              {budget_id, Str(cents)}));
        return common::Success();
    }

    Result<bool> FinishAnswer(const std::string& scope, int from_status, int status, const std::string& body) override {
        SIGIL_TRY(r, Exec("UPDATE idempotency SET status = $2, body = $3 WHERE scope = $1 AND status = $4",
                          {scope, Str(status), body, Str(from_status)}));
        return Changed(r->get());
    }

    Status ReleasePendingAnswer(const std::string& scope) override {
        SIGIL_TRY_STATUS(Exec("DELETE FROM idempotency WHERE scope = $1 AND status = 0", {scope}));
        return common::Success();
    }

    // Key guardrails.
    Result<std::optional<KeyGuardrails>> FindGuardrails(const std::string& key) override {
        SIGIL_TRY(r, Exec("SELECT key, account, rate_milli, burst, address_rate_milli, address_burst, max_runs_in_flight,"
                          " window_cap_cents, window_seconds, allowed_origins, updated_ms FROM guardrails WHERE key = $1",
                          {key}));
        const PGresult* res = r->get();
        if (PQntuples(res) == 0) return std::optional<KeyGuardrails>();
        KeyGuardrails g;
        g.key = Text(res, 0, 0);
        g.account = Text(res, 0, 1);
        g.rate_milli = Int(res, 0, 2);
        g.burst = Int(res, 0, 3);
        g.address_rate_milli = Int(res, 0, 4);
        g.address_burst = Int(res, 0, 5);
        g.max_runs_in_flight = Int(res, 0, 6);
        g.window_cap_cents = Int(res, 0, 7);
        g.window_seconds = Int(res, 0, 8);
        g.allowed_origins = SplitOrigins(Text(res, 0, 9));
        g.updated_ms = Int(res, 0, 10);
        return std::optional<KeyGuardrails>(std::move(g));
    }

    Status PutGuardrails(const KeyGuardrails& g) override {
        SIGIL_TRY_STATUS(Exec("INSERT INTO guardrails (key, account, rate_milli, burst, address_rate_milli, address_burst,"
                              " max_runs_in_flight, window_cap_cents, window_seconds, allowed_origins, updated_ms)"
                              " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (key) DO UPDATE SET"
                              " account = excluded.account, rate_milli = excluded.rate_milli, burst = excluded.burst,"
                              " address_rate_milli = excluded.address_rate_milli, address_burst = excluded.address_burst,"
                              " max_runs_in_flight = excluded.max_runs_in_flight,"
                              " window_cap_cents = excluded.window_cap_cents, window_seconds = excluded.window_seconds,"
                              " allowed_origins = excluded.allowed_origins, updated_ms = excluded.updated_ms",
                              {g.key, g.account, Str(g.rate_milli), Str(g.burst), Str(g.address_rate_milli),
                               Str(g.address_burst), Str(g.max_runs_in_flight), Str(g.window_cap_cents),
                               Str(g.window_seconds), JoinOrigins(g.allowed_origins), Str(g.updated_ms)}));
        return common::Success();
    }

    Result<bool> DeleteGuardrails(const std::string& key) override {
        Queue("DELETE FROM guard_buckets WHERE bucket = 'key:' || $1 OR bucket LIKE 'addr:' || $1 || ':%'", {key});
        Queue("DELETE FROM guard_runs WHERE key = $1", {key});
        Queue("DELETE FROM guard_spend WHERE key = $1", {key});
        SIGIL_TRY(r, Exec("DELETE FROM guardrails WHERE key = $1", {key}));
        return Changed(r->get());
    }

    Result<BucketTake> TakeToken(const std::string& bucket, std::int64_t rate_milli, std::int64_t burst,
                                 std::int64_t now_ms) override {
#define SIGIL_REFILLED "LEAST($3::bigint, guard_buckets.tokens + LEAST(GREATEST($4::bigint - guard_buckets.at_ms, 0), 100000000000) * $2::bigint)"
        SIGIL_TRY(r, Exec("INSERT INTO guard_buckets (bucket, tokens, at_ms, granted) VALUES ($1, $3::bigint - 1000000, $4, true)"
                          " ON CONFLICT (bucket) DO UPDATE SET"
                          " tokens = " SIGIL_REFILLED " - CASE WHEN " SIGIL_REFILLED " >= 1000000 THEN 1000000 ELSE 0 END,"
                          " granted = " SIGIL_REFILLED " >= 1000000, at_ms = GREATEST(guard_buckets.at_ms, $4::bigint)"
                          " RETURNING tokens, granted",
                          {bucket, Str(rate_milli), Str(burst * MICRO_TOKENS), Str(now_ms)}));
#undef SIGIL_REFILLED
        if (PQntuples(r->get()) == 0) return MakeError(ErrorKind::Internal, "ledger_error", "token bucket answered no row");
        return BucketTake{Text(r->get(), 0, 1) == "t", Int(r->get(), 0, 0)};
    }

    Result<std::int64_t> CountRuns(const std::string& key, std::int64_t now_ms) override {
        SIGIL_TRY(r, Exec("SELECT count(*) FROM guard_runs WHERE key = $1 AND expires_ms > $2", {key, Str(now_ms)}));
        return Int(r->get(), 0, 0);
    }

    Status InsertRun(const std::string& run_id, const std::string& key, std::int64_t expires_ms) override {
        Queue("INSERT INTO guard_runs (run_id, key, expires_ms) VALUES ($1, $2, $3) ON CONFLICT (run_id) DO UPDATE"
              " SET key = excluded.key, expires_ms = excluded.expires_ms",
              {run_id, key, Str(expires_ms)});
        return common::Success();
    }

    Status DeleteRun(const std::string& run_id) override {
        Queue("DELETE FROM guard_runs WHERE run_id = $1", {run_id});
        return common::Success();
    }

    Status PruneRuns(const std::string& key, std::int64_t now_ms) override {
        Queue("DELETE FROM guard_runs WHERE key = $1 AND expires_ms <= $2", {key, Str(now_ms)});
        return common::Success();
    }

    Result<Cents> WindowSpent(const std::string& key, std::int64_t since_ms) override {
        SIGIL_TRY(r, Exec("SELECT COALESCE(SUM(cents), 0) FROM guard_spend WHERE key = $1 AND at_ms >= $2",
                          {key, Str(since_ms)}));
        return Int(r->get(), 0, 0);
    }

    Status InsertWindowSpend(std::int64_t charge_id, const std::string& key, std::int64_t at_ms, Cents cents) override {
        Queue("INSERT INTO guard_spend (charge_id, key, at_ms, cents) VALUES ($1, $2, $3, $4)",
              {Str(charge_id), key, Str(at_ms), Str(cents)});
        return common::Success();
    }

    Status SetWindowSpend(std::int64_t charge_id, Cents cents) override {
        Queue("UPDATE guard_spend SET cents = $2 WHERE charge_id = $1", {Str(charge_id), Str(cents)});
        return common::Success();
    }

    Status PruneWindow(const std::string& key, std::int64_t before_ms) override {
        Queue("DELETE FROM guard_spend WHERE key = $1 AND at_ms < $2", {key, Str(before_ms)});
        return common::Success();
    }

private:
    static constexpr const char* BEGIN = "BEGIN";

    // A statement waiting to go with the next one; only its success is checked.
    struct Queued {
        const char* sql;
        std::vector<Param> params;
    };

    void Queue(const char* sql, std::initializer_list<Param> params) { m_queued.push_back({sql, std::vector<Param>(params)}); }

    // Whether the transaction's BEGIN is still waiting here (the server knows of no transaction).
    bool NothingSent() const { return !m_queued.empty() && m_queued.front().sql == BEGIN; }

    bool Send(const char* sql, const Param* params, std::size_t count) {
        std::vector<const char*> values;
        values.reserve(count);
        for (std::size_t i = 0; i < count; ++i) values.push_back(params[i] ? params[i]->c_str() : nullptr);
        return PQsendQueryParams(m_conn, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr,
                                 0) != 0;
    }

    // Sends every queued statement (the last is the caller's) in one pipeline ending in a sync and
    // reads their answers: the last statement's result, or the first error. After an error the server
    // skips the rest of the pipeline (libpq answers PGRES_PIPELINE_ABORTED for each) and the
    // transaction is aborted, which the caller's ROLLBACK ends.
    Result<PgResult> ExecQueued() {
        std::vector<Queued> batch;
        batch.swap(m_queued);
        if (PQenterPipelineMode(m_conn) == 0) return Lost();
        for (const Queued& q : batch) {
            if (!Send(q.sql, q.params.data(), q.params.size())) return Lost();
        }
        if (PQpipelineSync(m_conn) == 0) return Lost();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(m_timeout_ms);
        std::optional<common::Error> failed;
        PgResult last;
        // Each statement's results end with a null; the sync's own result ends the pipeline.
        for (std::size_t statement = 0;;) {
            while (PQisBusy(m_conn) != 0) {
                SIGIL_TRY_STATUS(WaitReadable(deadline));
                if (PQconsumeInput(m_conn) == 0) return Lost();
            }
            PGresult* next = PQgetResult(m_conn);
            if (next == nullptr) {
                if (++statement > batch.size()) return Lost();  // no sync: the connection is confused
                continue;
            }
            PgResult owned(next);
            const ExecStatusType status = PQresultStatus(next);
            if (status == PGRES_PIPELINE_SYNC) break;
            if (status == PGRES_FATAL_ERROR && !failed) failed = Failure(next);
            if (statement + 1 == batch.size() && status != PGRES_PIPELINE_ABORTED && !last) last = std::move(owned);
        }
        if (PQexitPipelineMode(m_conn) == 0) return Lost();
        if (failed) return *failed;
        if (!last) return Lost();
        const ExecStatusType status = PQresultStatus(last.get());
        if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return last;
        return Failure(last.get());
    }

    static common::Error Unavailable(const std::string& why) {
        return MakeError(ErrorKind::Unavailable, "ledger_unavailable", "PostgreSQL ledger: " + why);
    }

    common::Error Lost() {
        m_broken = true;
        return Unavailable("connection lost: " + Trimmed(PQerrorMessage(m_conn)));
    }

    Status WaitReadable(std::chrono::steady_clock::time_point deadline) {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                // The query is still outstanding: the connection cannot be reused.
                m_broken = true;
                m_timed_out = true;
                return Unavailable("no answer within " + std::to_string(m_timeout_ms) + " ms");
            }
            pollfd p{PQsocket(m_conn), POLLIN, 0};
            if (p.fd < 0) return Lost();
            const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
            if (rc > 0) return common::Success();
            if (rc < 0 && errno != EINTR) return Lost();
        }
    }

    // A failed statement: the connection's end, the server being unable to serve for now, or a bug.
    common::Error Failure(const PGresult* r) {
        const char* state_field = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        const std::string state = state_field != nullptr ? state_field : "";
        const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
        const std::string message = Trimmed(primary != nullptr ? primary : PQresultErrorMessage(r));
        if (PQstatus(m_conn) == CONNECTION_BAD || state.rfind("08", 0) == 0 || state.rfind("57P", 0) == 0) {
            m_broken = true;
            return Unavailable("connection lost: " + message);
        }
        // statement_timeout, lock and serialization trouble, resources, idle-session timeouts.
        if (state == "57014" || state.rfind("53", 0) == 0 || state.rfind("40", 0) == 0 || state == "55P03" ||
            state == "25P03") {
            return Unavailable(message + " (SQLSTATE " + state + ")");
        }
        return MakeError(ErrorKind::Internal, "ledger_error", "PostgreSQL ledger: " + message + " (SQLSTATE " + state + ")");
    }

    PGconn* m_conn;
    int m_timeout_ms;
    bool m_in_transaction = false;
    bool m_broken = false;
    bool m_timed_out = false;
    bool m_commit_sent = false;
    std::vector<Queued> m_queued;
};

class PostgresStore final : public LedgerStore {
public:
    PostgresStore(std::string url, const PostgresLedgerOptions& options) : m_url(std::move(url)), m_options(options) {}

    Status Setup() {
        std::lock_guard<std::mutex> lock(m_mutex);
        SIGIL_TRY_STATUS(Connect());
        PgSession session(m_conn.get(), m_options.query_timeout_ms);
        auto created = session.RunTransaction([](StoreSession& s) -> Result<Outcome> {
            auto& pg = static_cast<PgSession&>(s);
            for (const char* sql : SCHEMA) SIGIL_TRY_STATUS(pg.Exec(sql, {}));
            for (const char* sql : GUARD_SCHEMA) SIGIL_TRY_STATUS(pg.Exec(sql, {}));
            return Outcome::Commit;
        });
        if (!created) {
            const common::Error& e = created.error();
            return MakeError(ErrorKind::Unavailable, "ledger_unavailable", "cannot create the ledger schema: " + e.message);
        }
        return common::Success();
    }

    Status Transaction(const std::function<Result<Outcome>(StoreSession&)>& work, Durability durability) override {
        return Run([&](PgSession& s) { return s.RunTransaction(work, durability); });
    }

    Status Read(const std::function<Status(StoreSession&)>& work) override {
        return Run([&](PgSession& s) { return work(s); });
    }

private:
    // Runs `call` on the connection, replacing it first when it is known bad, and once more on a
    // new connection when an old one turns out to be broken (the server restarted, say) before
    // anything could have been committed.
    template <typename Call>
    Status Run(const Call& call) {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (int attempt = 0;; ++attempt) {
            const bool fresh = !m_conn || PQstatus(m_conn.get()) != CONNECTION_OK;
            if (fresh) SIGIL_TRY_STATUS(ConnectWithBackoff());
            bool broken = false;
            bool retryable = false;
            Status result = common::Success();
            {
                PgSession session(m_conn.get(), m_options.query_timeout_ms);
                result = call(session);
                broken = session.Broken();
                retryable = session.Retryable();
            }
            if (broken) m_conn.reset();
            if (result.ok() || !broken || !retryable || fresh || attempt > 0) return result;
        }
    }

    // A reconnection paced like the first open (backoff.h).
    Status ConnectWithBackoff() {
        SIGIL_TRY_STATUS(m_backoff.Admit());
        Status st = Connect();
        m_backoff.Record(st.ok());
        return st;
    }

    Status Connect() {
        m_conn.reset();
        // Our settings first: the URL's own parameters, expanded from dbname, override them.
        const std::string connect_timeout = std::to_string(m_options.connect_timeout_s);
        const std::string settings = "-c statement_timeout=" + std::to_string(m_options.statement_timeout_ms) +
                                     " -c idle_in_transaction_session_timeout=" +
                                     std::to_string(m_options.query_timeout_ms + 5000) + " -c client_min_messages=warning";
        const char* keys[] = {"connect_timeout", "options", "application_name", "dbname", nullptr};
        const char* values[] = {connect_timeout.c_str(), settings.c_str(), "sigil-ledger", m_url.c_str(), nullptr};
        Connection conn(PQconnectdbParams(keys, values, 1));
        if (!conn) return MakeError(ErrorKind::Unavailable, "ledger_unavailable", "cannot allocate a PostgreSQL connection");
        if (PQstatus(conn.get()) != CONNECTION_OK) {
            return MakeError(ErrorKind::Unavailable, "ledger_unavailable",
                             "cannot connect to the PostgreSQL ledger: " + Trimmed(PQerrorMessage(conn.get())));
        }
        PQsetNoticeProcessor(conn.get(), IgnoreNotice, nullptr);
        m_conn = std::move(conn);
        return common::Success();
    }

    std::string m_url;
    PostgresLedgerOptions m_options;
    Connection m_conn;
    std::mutex m_mutex;  // one connection: one call at a time
    ConnectBackoff m_backoff;
};

}  // namespace

Result<std::unique_ptr<Ledger>> OpenPostgresLedger(const std::string& url, const PostgresLedgerOptions& options) {
    auto store = std::make_unique<PostgresStore>(url, options);
    SIGIL_TRY_STATUS(store->Setup());
    return MakeStoredLedger(std::move(store), options.now_ms);
}

}  // namespace sigil::workers::billing
