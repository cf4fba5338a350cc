// The run history's endpoints (issue 26): GET /core/v1/list_runs, GET /core/v1/get_run and the
// account's history settings. Who sees what: the account's owner (its master key, or X-Wallet-Auth
// for a ChainSecured admin) every run of the account; a usage key only its own runs. Another
// account's run is answered as unknown (404), so request ids say nothing about other accounts.
#include <cctype>
#include <charconv>
#include <set>
#include <string>

#include "common/cid.h"
#include "common/json.h"
#include "workers/api/api.h"
#include "workers/api/auth.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;
using common::Result;

constexpr std::size_t DEFAULT_LIMIT = 20;
constexpr std::size_t MAX_LIMIT = 100;

const std::set<std::string>& Statuses() {
    static const std::set<std::string> all = {"ok", "script_error", "time_limit", "memory_limit", "response_limit",
                                              "log_limit", "op_limit", "stopped", "crashed", "refused", "failed"};
    return all;
}

// Who asks: the account, and the one key whose runs it may see (none: the owner sees every key's).
struct Viewer {
    std::string account_hash;
    std::optional<std::string> only_key;
    bool owner = false;
};

Result<Viewer> ViewerOf(Service& service, const HttpRequest& request) {
    if (request.Header("x-wallet-auth")) {
        SIGIL_TRY(account, WalletAuthAccount(service, request));
        return Viewer{WordHex(*account), std::nullopt, true};
    }
    SIGIL_TRY(caller, Authenticate(service, request, AuthRequirement::ApiKey));
    Viewer v{WordHex(caller->account_hash), std::nullopt, caller->is_owner};
    if (!caller->is_owner) v.only_key = WordHex(caller->key_hash);
    return v;
}

Result<billing::RunHistory*> History(BillingContext context) {
    if (context.history == nullptr || !context.history->enabled()) {
        return MakeError(ErrorKind::Suspended, "history_unavailable",
                         "run history is not kept on this instance ([history] enabled, and a database)");
    }
    return context.history;
}

std::optional<std::int64_t> Decimal(std::string_view s) {
    std::int64_t v = 0;
    if (s.empty() || s.size() > 18) return std::nullopt;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
    return v;
}

common::Error Invalid(const std::string& param, const std::string& rule) {
    return MakeError(ErrorKind::InvalidInput, "invalid_query", param + " " + rule);
}

Result<std::string> HashParam(const std::string& param, const std::string& value) {
    if (value.size() != 66 || (value.rfind("0x", 0) != 0 && value.rfind("0X", 0) != 0)) {
        return Invalid(param, "must be 0x + 64 hex");
    }
    std::string out = "0x";
    for (std::size_t i = 2; i < value.size(); ++i) {
        const char c = value[i];
        if (!std::isxdigit(static_cast<unsigned char>(c))) return Invalid(param, "must be 0x + 64 hex");
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string CursorOf(const billing::RunRecord& r) { return std::to_string(r.started_ms) + "." + std::to_string(r.id); }

std::string Nullable(const std::string& s) { return s.empty() ? "null" : common::JsonQuote(s); }

std::string RunJson(const billing::RunRecord& r) {
    std::string out = "{\"request_id\":" + common::JsonQuote(r.request_id) +
                      ",\"started_ms\":" + std::to_string(r.started_ms) + ",\"key_hash\":" + common::JsonQuote(r.key_hash) +
                      ",\"account_hash\":" + common::JsonQuote(r.account_hash) + ",\"cid\":" + Nullable(r.cid) +
                      ",\"pkp_id\":" + Nullable(r.pkps) + ",\"duration_ms\":" + std::to_string(r.duration_ms) +
                      ",\"status\":" + common::JsonQuote(r.status) + ",\"error_code\":" + Nullable(r.error_code) +
                      ",\"cost_cents\":" + std::to_string(r.cost_cents) +
                      ",\"request_bytes\":" + std::to_string(r.request_bytes) +
                      ",\"response_bytes\":" + std::to_string(r.response_bytes) +
                      ",\"response_sha256\":" + Nullable(r.response_sha256);
    if (r.has_logs) {
        out += ",\"logs\":" + common::JsonQuote(r.logs) + ",\"logs_truncated\":" + (r.logs_truncated ? "true" : "false");
    }
    return out + "}";
}

Result<billing::RunQuery> ParseQuery(const HttpRequest& request, const Viewer& viewer) {
    billing::RunQuery q;
    q.account_hash = viewer.account_hash;
    q.limit = DEFAULT_LIMIT;
    if (auto v = request.QueryParam("key_hash"); v && !v->empty()) {
        SIGIL_TRY(hash, HashParam("key_hash", *v));
        q.key_hash = *hash;
    }
    if (auto v = request.QueryParam("cid"); v && !v->empty()) {
        if (!common::ParseCidV0(*v).ok()) return Invalid("cid", "must be a CIDv0 (Qm + 44 base58 characters)");
        q.cid = *v;
    }
    if (auto v = request.QueryParam("status"); v && !v->empty()) {
        if (Statuses().count(*v) == 0) {
            return Invalid("status", "must be one of ok, script_error, time_limit, memory_limit, response_limit, "
                                     "log_limit, op_limit, stopped, crashed, refused, failed");
        }
        q.status = *v;
    }
    for (const char* name : {"since", "until"}) {
        if (auto v = request.QueryParam(name); v && !v->empty()) {
            auto ms = Decimal(*v);
            if (!ms) return Invalid(name, "must be unix time in milliseconds (a non-negative integer)");
            (std::string(name) == "since" ? q.since_ms : q.until_ms) = *ms;
        }
    }
    if (auto v = request.QueryParam("cursor"); v && !v->empty()) {
        const auto dot = v->find('.');
        auto ms = dot == std::string::npos ? std::nullopt : Decimal(std::string_view(*v).substr(0, dot));
        auto id = dot == std::string::npos ? std::nullopt : Decimal(std::string_view(*v).substr(dot + 1));
        if (!ms || !id) return Invalid("cursor", "must be a next_cursor list_runs answered");
        q.before = std::pair(*ms, *id);
    }
    if (auto v = request.QueryParam("limit"); v && !v->empty()) {
        auto n = Decimal(*v);
        if (!n || *n < 1 || *n > static_cast<std::int64_t>(MAX_LIMIT)) return Invalid("limit", "must be an integer from 1 to 100");
        q.limit = static_cast<std::size_t>(*n);
    }
    // A usage key sees its own runs only: another key's filter finds nothing.
    if (viewer.only_key) {
        if (q.key_hash && *q.key_hash != *viewer.only_key) q.key_hash = "-";
        else q.key_hash = viewer.only_key;
    }
    return q;
}

Result<HttpResponse> ListRuns(Service& service, BillingContext context, RequestContext& ctx) {
    SIGIL_TRY(viewer, ViewerOf(service, ctx.request));
    SIGIL_TRY(query, ParseQuery(ctx.request, *viewer));
    SIGIL_TRY(history, History(context));
    query->limit += 1;  // one more than asked tells whether a next page exists
    SIGIL_TRY(rows, (*history)->List(*query));
    const bool more = rows->size() > query->limit - 1;
    if (more) rows->pop_back();
    std::string out = "{\"runs\":[";
    for (std::size_t i = 0; i < rows->size(); ++i) out += (i ? "," : "") + RunJson((*rows)[i]);
    out += "],\"next_cursor\":" + (more ? common::JsonQuote(CursorOf(rows->back())) : std::string("null")) + "}";
    return JsonResponse(200, out);
}

Result<HttpResponse> GetRun(Service& service, BillingContext context, RequestContext& ctx) {
    SIGIL_TRY(viewer, ViewerOf(service, ctx.request));
    const auto id = ctx.request.QueryParam("request_id");
    if (!id || id->empty() || id->size() > 64) {
        return MakeError(ErrorKind::InvalidInput, "invalid_query", "request_id is required (the run's X-Request-Id)");
    }
    SIGIL_TRY(history, History(context));
    SIGIL_TRY(row, (*history)->Get(viewer->account_hash, *id));
    if (!*row || (viewer->only_key && (*row)->key_hash != *viewer->only_key)) {
        return MakeError(ErrorKind::NotFound, "run_not_found", "no run " + *id + " that this key may see");
    }
    return JsonResponse(200, RunJson(**row));
}

Result<HttpResponse> SettingsJson(billing::RunHistory& history, const std::string& account) {
    SIGIL_TRY(logs, history.RecordLogs(account));
    return JsonResponse(200, std::string("{\"record_logs\":") + (*logs ? "true" : "false") +
                                 ",\"log_bytes\":" + std::to_string(history.settings().log_bytes) +
                                 ",\"keep_seconds\":" + std::to_string(history.settings().keep_ms / 1000) + "}");
}

Result<HttpResponse> GetSettings(Service& service, BillingContext context, RequestContext& ctx) {
    SIGIL_TRY(viewer, ViewerOf(service, ctx.request));
    SIGIL_TRY(history, History(context));
    return SettingsJson(**history, viewer->account_hash);
}

Result<HttpResponse> SetSettings(Service& service, BillingContext context, RequestContext& ctx) {
    SIGIL_TRY(viewer, ViewerOf(service, ctx.request));
    if (!viewer->owner) {
        return MakeError(ErrorKind::Forbidden, "owner_only",
                         "only the account's owner (its master key, or X-Wallet-Auth) changes its run history settings");
    }
    const auto* body = ctx.json;
    if (body == nullptr || !body->IsObject() || !body->HasMember("record_logs") || !(*body)["record_logs"].IsBool()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_field", "record_logs must be true or false");
    }
    SIGIL_TRY(history, History(context));
    SIGIL_TRY_STATUS((*history)->SetRecordLogs(viewer->account_hash, (*body)["record_logs"].GetBool()));
    return SettingsJson(**history, viewer->account_hash);
}

}  // namespace

void AddRunHistoryRoutes(Router& router, Service& service, BillingContext context) {
    router.Add({"GET", "/core/v1/list_runs", AuthRequirement::None, BodyKind::None,
                [&service, context](RequestContext& ctx) { return ListRuns(service, context, ctx); },
                "The account's runs, newest first (the owner sees every key's, a usage key its own); filters key_hash, "
                "cid, status, since/until (unix ms); paged by cursor and limit",
                "history", ApiSchema("runs.json#/ListRunsQuery"), ApiSchema("runs.json#/RunList")});
    router.Add({"GET", "/core/v1/get_run", AuthRequirement::None, BodyKind::None,
                [&service, context](RequestContext& ctx) { return GetRun(service, context, ctx); },
                "One run by its request id (404 run_not_found for another account's or, for a usage key, another key's)",
                "history", ApiSchema("runs.json#/GetRunQuery"), ApiSchema("runs.json#/Run")});
    router.Add({"GET", "/core/v1/get_run_history_settings", AuthRequirement::None, BodyKind::None,
                [&service, context](RequestContext& ctx) { return GetSettings(service, context, ctx); },
                "Whether the account's runs keep their logs, and how long runs are kept", "history",
                ApiSchema("runs.json#/AccountAuthHeaders"), ApiSchema("runs.json#/HistorySettings")});
    router.Add({"POST", "/core/v1/set_run_history_settings", AuthRequirement::None, BodyKind::Json,
                [&service, context](RequestContext& ctx) { return SetSettings(service, context, ctx); },
                "Turns keeping the logs of the account's runs on or off (owner only: master key or X-Wallet-Auth)",
                "history", ApiSchema("runs.json#/SetHistorySettingsRequest"), ApiSchema("runs.json#/HistorySettings")});
}

}  // namespace sigil::workers
