// The run history's PostgreSQL store: its own libpq connection (blocking, with connect and
// statement timeouts: it is used by the writer thread and by list_runs / get_run, never by a run),
// parameterized statements only, a batch in one multi-row INSERT.
#include <libpq-fe.h>

#include <string>
#include <vector>

#include "common/handles.h"
#include "workers/billing/history_store.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;

namespace {

using Connection = common::CHandle<PGconn, PQfinish>;
using PgResult = common::CHandle<PGresult, PQclear>;

constexpr const char* SCHEMA =
    "SELECT pg_advisory_xact_lock(1397311814, 26);"
    "CREATE TABLE IF NOT EXISTS runs ("
    " id bigserial PRIMARY KEY, request_id text NOT NULL, started_ms bigint NOT NULL, key_hash text NOT NULL,"
    " account_hash text NOT NULL, cid text NOT NULL, pkps text NOT NULL, duration_ms bigint NOT NULL,"
    " status text NOT NULL, error_code text NOT NULL, cost_cents bigint NOT NULL, request_bytes bigint NOT NULL,"
    " response_bytes bigint NOT NULL, response_sha256 text NOT NULL, logs text, logs_truncated boolean NOT NULL DEFAULT false);"
    "CREATE INDEX IF NOT EXISTS runs_account_started ON runs (account_hash, started_ms, id);"
    "CREATE INDEX IF NOT EXISTS runs_request ON runs (request_id);"
    "CREATE INDEX IF NOT EXISTS runs_started ON runs (started_ms);"
    "CREATE TABLE IF NOT EXISTS run_history_settings (account_hash text PRIMARY KEY, record_logs boolean NOT NULL);";

constexpr const char* COLUMNS =
    "id, request_id, started_ms, key_hash, account_hash, cid, pkps, duration_ms, status, error_code, cost_cents, "
    "request_bytes, response_bytes, response_sha256, logs, logs_truncated";

class PostgresHistory final : public HistoryStore {
public:
    explicit PostgresHistory(Connection conn) : m_conn(std::move(conn)) {}

    Status Setup() {
        SIGIL_TRY_STATUS(Run("BEGIN", {}));
        if (auto s = Run(SCHEMA, {}); !s.ok()) {
            (void)Run("ROLLBACK", {});
            return s;
        }
        return Run("COMMIT", {});
    }

    Status Insert(const std::vector<RunRecord>& batch) override {
        if (batch.empty()) return common::Success();
        std::string sql = "INSERT INTO runs (request_id, started_ms, key_hash, account_hash, cid, pkps, duration_ms, status, "
                          "error_code, cost_cents, request_bytes, response_bytes, response_sha256, logs, logs_truncated) VALUES ";
        std::vector<std::optional<std::string>> params;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            const RunRecord& r = batch[i];
            sql += i == 0 ? "(" : ",(";
            for (int c = 1; c <= 15; ++c) sql += (c == 1 ? "$" : ",$") + std::to_string(i * 15 + static_cast<std::size_t>(c));
            sql += ")";
            for (const std::optional<std::string>& p :
                 {std::optional<std::string>(r.request_id), std::optional<std::string>(std::to_string(r.started_ms)),
                  std::optional<std::string>(r.key_hash), std::optional<std::string>(r.account_hash),
                  std::optional<std::string>(r.cid), std::optional<std::string>(r.pkps),
                  std::optional<std::string>(std::to_string(r.duration_ms)), std::optional<std::string>(r.status),
                  std::optional<std::string>(r.error_code), std::optional<std::string>(std::to_string(r.cost_cents)),
                  std::optional<std::string>(std::to_string(r.request_bytes)),
                  std::optional<std::string>(std::to_string(r.response_bytes)),
                  std::optional<std::string>(r.response_sha256),
                  r.has_logs ? std::optional<std::string>(r.logs) : std::nullopt,
                  std::optional<std::string>(r.logs_truncated ? "true" : "false")}) {
                params.push_back(p);
            }
        }
        // synchronous_commit off for this transaction alone: a history row lost with the server's
        // power favours nobody, and the insert then costs no flush.
        SIGIL_TRY_STATUS(Run("BEGIN", {}));
        if (auto s = Run("SET LOCAL synchronous_commit = off", {}); !s.ok()) return Abort(s);
        if (auto s = Run(sql, params); !s.ok()) return Abort(s);
        return Run("COMMIT", {});
    }

    Result<std::vector<RunRecord>> List(const RunQuery& q) override {
        std::string sql = std::string("SELECT ") + COLUMNS + " FROM runs WHERE account_hash = $1";
        std::vector<std::optional<std::string>> params{q.account_hash};
        auto add = [&](const std::string& clause, const std::string& value) {
            params.push_back(value);
            std::string c = clause;
            const std::string n = "$" + std::to_string(params.size());
            for (std::size_t at; (at = c.find('?')) != std::string::npos;) c.replace(at, 1, n);
            sql += c;
        };
        if (q.key_hash) add(" AND key_hash = ?", *q.key_hash);
        if (q.cid) add(" AND cid = ?", *q.cid);
        if (q.status) add(" AND status = ?", *q.status);
        if (q.since_ms) add(" AND started_ms >= ?", std::to_string(*q.since_ms));
        if (q.until_ms) add(" AND started_ms < ?", std::to_string(*q.until_ms));
        if (q.before) {
            add(" AND (started_ms < ?", std::to_string(q.before->first));
            add(" OR (started_ms = ?", std::to_string(q.before->first));
            add(" AND id < ?))", std::to_string(q.before->second));
        }
        add(" ORDER BY started_ms DESC, id DESC LIMIT ?", std::to_string(q.limit));
        SIGIL_TRY(res, Query(sql, params));
        std::vector<RunRecord> out;
        for (int i = 0; i < PQntuples(res->get()); ++i) out.push_back(RowOf(res->get(), i));
        return out;
    }

    Result<std::optional<RunRecord>> Get(const std::string& account_hash, const std::string& request_id) override {
        SIGIL_TRY(res, Query(std::string("SELECT ") + COLUMNS +
                                 " FROM runs WHERE request_id = $1 AND account_hash = $2 ORDER BY id DESC LIMIT 1",
                             {request_id, account_hash}));
        if (PQntuples(res->get()) == 0) return std::optional<RunRecord>();
        return std::optional<RunRecord>(RowOf(res->get(), 0));
    }

    Result<std::int64_t> Prune(std::int64_t cutoff_ms, std::int64_t max_rows) override {
        SIGIL_TRY(res, Query("DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE started_ms < $1 LIMIT $2)",
                             {std::to_string(cutoff_ms), std::to_string(max_rows)}));
        return static_cast<std::int64_t>(std::stoll(PQcmdTuples(res->get())));
    }

    Result<std::int64_t> PruneBuckets(std::int64_t now_ms, std::int64_t max_rows) override {
        SIGIL_TRY(exists, Query("SELECT to_regclass('guard_buckets') IS NOT NULL", {}));
        if (std::string(PQgetvalue(exists->get(), 0, 0)) != "t") return std::int64_t{0};
        // The key hash is 66 characters after "key:" or "addr:". FOR UPDATE re-checks the condition on
        // a row an admission changed meanwhile (a take since the scan keeps its row), and SKIP LOCKED
        // leaves the rows admissions in flight hold to the next round.
        SIGIL_TRY(res, Query("DELETE FROM guard_buckets WHERE bucket IN (SELECT b.bucket FROM guard_buckets b "
                             "LEFT JOIN guardrails g ON g.key = substr(b.bucket, CASE WHEN b.bucket LIKE 'key:%' THEN 5 ELSE 6 END, 66) "
                             "WHERE " + IdleBucketCondition("$1::bigint") + " LIMIT $2 FOR UPDATE OF b SKIP LOCKED)",
                             {std::to_string(now_ms), std::to_string(max_rows)}));
        return static_cast<std::int64_t>(std::stoll(PQcmdTuples(res->get())));
    }

    Result<bool> RecordLogs(const std::string& account_hash) override {
        SIGIL_TRY(res, Query("SELECT record_logs FROM run_history_settings WHERE account_hash = $1", {account_hash}));
        return PQntuples(res->get()) > 0 && std::string(PQgetvalue(res->get(), 0, 0)) == "t";
    }

    Status SetRecordLogs(const std::string& account_hash, bool on) override {
        return Run("INSERT INTO run_history_settings (account_hash, record_logs) VALUES ($1, $2) "
                   "ON CONFLICT (account_hash) DO UPDATE SET record_logs = excluded.record_logs",
                   {account_hash, std::string(on ? "true" : "false")});
    }

private:
    static RunRecord RowOf(PGresult* r, int i) {
        auto text = [&](int c) { return std::string(PQgetvalue(r, i, c), static_cast<std::size_t>(PQgetlength(r, i, c))); };
        auto num = [&](int c) { return static_cast<std::int64_t>(std::stoll(text(c))); };
        RunRecord out;
        out.id = num(0);
        out.request_id = text(1);
        out.started_ms = num(2);
        out.key_hash = text(3);
        out.account_hash = text(4);
        out.cid = text(5);
        out.pkps = text(6);
        out.duration_ms = num(7);
        out.status = text(8);
        out.error_code = text(9);
        out.cost_cents = num(10);
        out.request_bytes = num(11);
        out.response_bytes = num(12);
        out.response_sha256 = text(13);
        out.has_logs = PQgetisnull(r, i, 14) == 0;
        out.logs = text(14);
        out.logs_truncated = text(15) == "t";
        return out;
    }

    Result<PgResult> Query(const std::string& sql, const std::vector<std::optional<std::string>>& params) {
        std::vector<const char*> values;
        for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
        PgResult res(PQexecParams(m_conn.get(), sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                  nullptr, nullptr, 0));
        const auto status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
            std::string message = PQerrorMessage(m_conn.get());
            while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
            return MakeError(ErrorKind::Unavailable, "history_unavailable", "run history (postgresql): " + message);
        }
        return res;
    }

    Status Run(const std::string& sql, const std::vector<std::optional<std::string>>& params) {
        if (params.empty()) {
            PgResult res(PQexec(m_conn.get(), sql.c_str()));
            const auto status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
            if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
                return MakeError(ErrorKind::Unavailable, "history_unavailable",
                                 std::string("run history (postgresql): ") + PQerrorMessage(m_conn.get()));
            }
            return common::Success();
        }
        SIGIL_TRY(res, Query(sql, params));
        return common::Success();
    }

    Status Abort(Status failed) {
        (void)Run("ROLLBACK", {});
        return failed;
    }

    Connection m_conn;
};

}  // namespace

Result<std::unique_ptr<HistoryStore>> OpenPostgresHistory(const std::string& conninfo) {
    const char* keys[] = {"connect_timeout", "options", "application_name", "dbname", nullptr};
    const char* values[] = {"2", "-c statement_timeout=2000", "sigil-history", conninfo.c_str(), nullptr};
    Connection conn(PQconnectdbParams(keys, values, 1));
    if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
        return MakeError(ErrorKind::Unavailable, "history_unavailable",
                         std::string("cannot connect to the run history database: ") +
                             (conn ? PQerrorMessage(conn.get()) : "out of memory"));
    }
    auto store = std::make_unique<PostgresHistory>(std::move(conn));
    SIGIL_TRY_STATUS(store->Setup());
    return std::unique_ptr<HistoryStore>(std::move(store));
}

}  // namespace sigil::workers::billing
