#include "workers/api/guardrails.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <string>

#include "common/json.h"
#include "common/secret.h"
#include "workers/api/api.h"
#include "workers/api/schemas.h"
#include "workers/billing/guardrails.h"

namespace sigil::workers {
namespace {

using billing::KeyGuardrails;
using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Uint256;

constexpr std::int64_t DEFAULT_WINDOW_SECONDS = 24 * 3600;
// What a browser may send besides the CORS-safelisted headers, and what it may read of an answer.
constexpr const char* CORS_REQUEST_HEADERS = "Content-Type, X-Api-Key, Authorization, Idempotency-Key, X-Correlation-Id";
constexpr const char* CORS_EXPOSED_HEADERS = "X-Request-Id, X-Correlation-Id, Retry-After";
constexpr const char* FIELDS[] = {"usage_api_key", "requests_per_second", "burst", "requests_per_second_per_address",
                                  "burst_per_address", "max_runs_in_flight", "spend_cap_cents", "spend_window_seconds",
                                  "allowed_origins"};

common::Error Unavailable(const std::string& why) {
    return MakeError(ErrorKind::Suspended, "guardrails_unavailable", "key guardrails cannot be kept or read: " + why);
}

// The ledger that keeps guardrails: the billing ledger's database, configured whether billing is on or off.
Result<billing::Ledger*> GuardStore(BillingContext context) {
    billing::Billing* b = context.billing;
    if (b == nullptr || b->settings().database.empty()) {
        return Unavailable("this instance has no ledger database ([billing] database)");
    }
    auto ledger = b->Store();
    if (!ledger.ok()) return Unavailable(ledger.error().message);
    return *ledger;
}

// A guardrails store failure (the database, not a rule) is 503: the caller retries shortly.
common::Error StoreError(const common::Error& e) {
    if (e.kind == ErrorKind::Unavailable || e.kind == ErrorKind::Internal) return Unavailable(e.message);
    return e;
}

// The account whose admin makes this request: X-Wallet-Auth (ChainSecured), else the master key.
Result<Uint256> AdminAccount(Service& service, const HttpRequest& request) {
    if (request.Header("x-wallet-auth")) return WalletAuthAccount(service, request);
    SIGIL_TRY(caller, Authenticate(service, request, AuthRequirement::AccountOwner));
    return caller->account_hash;
}

bool IsHashForm(const std::string& text) {
    if (text.size() != 66 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return false;
    for (std::size_t i = 2; i < text.size(); ++i) {
        if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
    }
    return true;
}

// The usage key named by value or by hash, checked to be one of `account`'s keys on chain (another
// account's key, or none, is 404 as the contract answers it).
Result<Uint256> UsageKeyOf(Service& service, const Uint256& account, std::string text) {
    if (text.empty() || text.size() > MAX_API_KEY_LENGTH) {
        return MakeError(ErrorKind::InvalidInput, "invalid_usage_api_key", "usage_api_key must be a key or its hash");
    }
    Uint256 hash;
    if (IsHashForm(text)) {
        SIGIL_TRY(parsed, Uint256::FromHex(text));
        hash = *parsed;
    } else {
        hash = ApiKeyHash(text);
    }
    common::Wipe(text.data(), text.size());
    if (hash == account) {
        return MakeError(ErrorKind::InvalidInput, "master_key_not_usage_key",
                         "usage_api_key is the account's master key; guardrails are set on usage keys");
    }
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(key, (*reader)->GetUsageKey(account, hash));
    (void)key;
    return hash;
}

common::Error Invalid(const char* field, const std::string& why) {
    return MakeError(ErrorKind::InvalidInput, std::string("invalid_") + field, std::string(field) + " " + why);
}

// A requests-per-second field: a number from 0.001 to 10000, kept in thousandths.
Result<std::int64_t> RateField(const rapidjson::Value& body, const char* field) {
    if (!body.HasMember(field) || body[field].IsNull()) return std::int64_t{0};
    const auto& v = body[field];
    const double rate = v.IsNumber() ? v.GetDouble() : -1;
    const auto milli = std::isfinite(rate) ? std::llround(rate * 1000) : 0;
    if (!v.IsNumber() || milli < billing::MIN_RATE_MILLI || milli > billing::MAX_RATE_MILLI) {
        return Invalid(field, "must be a number from 0.001 to 10000");
    }
    return static_cast<std::int64_t>(milli);
}

// An integer field from `min` to `max`; absent or null answers `fallback`.
Result<std::int64_t> IntField(const rapidjson::Value& body, const char* field, std::int64_t min, std::int64_t max,
                              std::int64_t fallback) {
    if (!body.HasMember(field) || body[field].IsNull()) return fallback;
    const auto& v = body[field];
    if (!v.IsInt64() || v.GetInt64() < min || v.GetInt64() > max) {
        return Invalid(field, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    }
    return v.GetInt64();
}

// A bucket's size: as given, else the rate's one second of requests (at least one).
Result<std::int64_t> BurstField(const rapidjson::Value& body, const char* field, std::int64_t rate_milli) {
    const std::int64_t fallback = rate_milli > 0 ? std::max<std::int64_t>(1, (rate_milli + 999) / 1000) : 0;
    SIGIL_TRY(burst, IntField(body, field, 1, billing::MAX_BURST, fallback));
    if (*burst > 0 && rate_milli == 0) return Invalid(field, "needs its requests_per_second");
    return *burst;
}

Result<KeyGuardrails> ReadGuardrails(const rapidjson::Value& body) {
    for (auto it = body.MemberBegin(); it != body.MemberEnd(); ++it) {
        const std::string name(it->name.GetString(), it->name.GetStringLength());
        if (std::find(std::begin(FIELDS), std::end(FIELDS), name) == std::end(FIELDS)) {
            return MakeError(ErrorKind::InvalidInput, "unknown_field", "unknown field '" + name.substr(0, 64) + "'");
        }
    }
    KeyGuardrails g;
    SIGIL_TRY(rate, RateField(body, "requests_per_second"));
    SIGIL_TRY(burst, BurstField(body, "burst", *rate));
    SIGIL_TRY(address_rate, RateField(body, "requests_per_second_per_address"));
    SIGIL_TRY(address_burst, BurstField(body, "burst_per_address", *address_rate));
    SIGIL_TRY(in_flight, IntField(body, "max_runs_in_flight", 0, billing::MAX_RUNS_IN_FLIGHT, -1));
    SIGIL_TRY(cap, IntField(body, "spend_cap_cents", 1, 1'000'000'000'000, 0));
    SIGIL_TRY(window, IntField(body, "spend_window_seconds", 1, billing::MAX_WINDOW_SECONDS, *cap > 0 ? DEFAULT_WINDOW_SECONDS : 0));
    if (*window > 0 && *cap == 0) return Invalid("spend_window_seconds", "needs its spend_cap_cents");
    g.rate_milli = *rate;
    g.burst = *burst;
    g.address_rate_milli = *address_rate;
    g.address_burst = *address_burst;
    g.max_runs_in_flight = *in_flight;
    g.window_cap_cents = *cap;
    g.window_seconds = *window;
    if (body.HasMember("allowed_origins") && !body["allowed_origins"].IsNull()) {
        const auto& list = body["allowed_origins"];
        if (!list.IsArray() || list.Size() > billing::MAX_ORIGINS) {
            return Invalid("allowed_origins", "must be an array of at most 32 origins");
        }
        for (const auto& o : list.GetArray()) {
            if (!o.IsString()) return Invalid("allowed_origins", "must hold strings (https://host[:port])");
            auto canonical = billing::CanonicalOrigin(std::string(o.GetString(), o.GetStringLength()));
            if (!canonical.ok()) return canonical.error();
            if (std::find(g.allowed_origins.begin(), g.allowed_origins.end(), *canonical) == g.allowed_origins.end()) {
                g.allowed_origins.push_back(*canonical);
            }
        }
    }
    return g;
}

std::string Rate(std::int64_t milli) {
    std::string s = std::to_string(milli / 1000);
    if (milli % 1000 != 0) {
        char frac[8];
        std::snprintf(frac, sizeof frac, ".%03lld", static_cast<long long>(milli % 1000));
        std::string f = frac;
        while (f.back() == '0') f.pop_back();
        s += f;
    }
    return s;
}

std::string OrNull(bool set, const std::string& value) { return set ? value : "null"; }

std::string GuardrailsJson(const std::string& key, const std::optional<KeyGuardrails>& found, std::int64_t default_in_flight) {
    const KeyGuardrails g = found.value_or(KeyGuardrails{});
    std::string origins = "[";
    for (const auto& o : g.allowed_origins) origins += (origins.size() > 1 ? "," : "") + common::JsonQuote(o);
    origins += "]";
    return "{\"api_key_hash\":" + common::JsonQuote(key) + ",\"set\":" + (found ? "true" : "false") +
           ",\"requests_per_second\":" + OrNull(g.rate_milli > 0, Rate(g.rate_milli)) +
           ",\"burst\":" + OrNull(g.rate_milli > 0, std::to_string(g.burst)) +
           ",\"requests_per_second_per_address\":" + OrNull(g.address_rate_milli > 0, Rate(g.address_rate_milli)) +
           ",\"burst_per_address\":" + OrNull(g.address_rate_milli > 0, std::to_string(g.address_burst)) +
           ",\"max_runs_in_flight\":" + OrNull(g.max_runs_in_flight >= 0, std::to_string(g.max_runs_in_flight)) +
           ",\"default_max_runs_in_flight\":" + std::to_string(default_in_flight) +
           ",\"spend_cap_cents\":" + OrNull(g.window_cap_cents > 0, std::to_string(g.window_cap_cents)) +
           ",\"spend_window_seconds\":" + OrNull(g.window_cap_cents > 0, std::to_string(g.window_seconds)) +
           ",\"allowed_origins\":" + origins +
           ",\"updated_at_ms\":" + OrNull(found.has_value(), std::to_string(g.updated_ms)) + "}";
}

std::int64_t DefaultInFlight(BillingContext context) {
    return context.billing != nullptr ? context.billing->settings().max_concurrent_runs_per_key : 0;
}

Result<HttpResponse> SetGuardrails(Service& service, BillingContext context, RequestContext& ctx) {
    SIGIL_TRY(account, AdminAccount(service, ctx.request));
    if (ctx.json == nullptr || !ctx.json->IsObject()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_body", "the body must be a JSON object");
    }
    const auto& body = *ctx.json;
    if (!body.HasMember("usage_api_key") || !body["usage_api_key"].IsString()) {
        return MakeError(ErrorKind::InvalidInput, "missing_usage_api_key", "usage_api_key is required");
    }
    SIGIL_TRY(g, ReadGuardrails(body));
    SIGIL_TRY(store, GuardStore(context));
    SIGIL_TRY(key, UsageKeyOf(service, *account, body["usage_api_key"].GetString()));
    g->key = WordHex(*key);
    g->account = WordHex(*account);
    if (auto st = (*store)->SetGuardrails(*g); !st.ok()) return StoreError(st.error());
    SIGIL_TRY(stored, (*store)->GetGuardrails(g->key));
    return JsonResponse(200, "{\"success\":true,\"guardrails\":" + GuardrailsJson(g->key, *stored, DefaultInFlight(context)) + "}");
}

Result<HttpResponse> GetGuardrails(Service& service, BillingContext context, RequestContext& ctx) {
    SIGIL_TRY(account, AdminAccount(service, ctx.request));
    auto text = ctx.request.QueryParam("usage_api_key");
    if (!text) return MakeError(ErrorKind::InvalidInput, "missing_usage_api_key", "usage_api_key is required");
    SIGIL_TRY(store, GuardStore(context));
    SIGIL_TRY(key, UsageKeyOf(service, *account, *text));
    auto found = (*store)->GetGuardrails(WordHex(*key));
    if (!found.ok()) return StoreError(found.error());
    // A row written for another account (the key's hash is global on chain, so only after a key was
    // removed and its hash reused elsewhere) is not this account's to read.
    if (*found && (*found)->account != WordHex(*account)) found = std::optional<KeyGuardrails>();
    return JsonResponse(200, GuardrailsJson(WordHex(*key), *found, DefaultInFlight(context)));
}

Result<HttpResponse> ClearGuardrails(Service& service, BillingContext context, RequestContext& ctx) {
    SIGIL_TRY(account, AdminAccount(service, ctx.request));
    if (ctx.json == nullptr || !ctx.json->IsObject() || !ctx.json->HasMember("usage_api_key") ||
        !(*ctx.json)["usage_api_key"].IsString()) {
        return MakeError(ErrorKind::InvalidInput, "missing_usage_api_key", "usage_api_key is required");
    }
    SIGIL_TRY(store, GuardStore(context));
    SIGIL_TRY(key, UsageKeyOf(service, *account, (*ctx.json)["usage_api_key"].GetString()));
    auto cleared = (*store)->ClearGuardrails(WordHex(*key));
    if (!cleared.ok()) return StoreError(cleared.error());
    return JsonResponse(200, std::string("{\"success\":true,\"cleared\":") + (*cleared ? "true" : "false") + "}");
}

void AddCorsHeaders(HttpResponse& response, const std::string& origin) {
    response.SetHeader("Access-Control-Allow-Origin", origin);
    response.SetHeader("Access-Control-Expose-Headers", CORS_EXPOSED_HEADERS);
    response.SetHeader("Vary", "Origin");
}

// The Origin check of one authenticated request (ApplyOriginLayer).
Handler OriginChecked(BillingContext context, Handler inner) {
    return [context, inner](RequestContext& ctx) -> Result<HttpResponse> {
        const auto origin = ctx.request.Header("origin");
        const billing::Billing* b = context.billing;
        // Only usage keys carry guardrails, and only a ledger keeps them.
        if (!origin || CallerOf(ctx).is_owner || b == nullptr || b->settings().database.empty()) return inner(ctx);
        SIGIL_TRY(store, GuardStore(context));
        auto found = (*store)->GetGuardrails(WordHex(CallerOf(ctx).key_hash));
        if (!found.ok()) return StoreError(found.error());
        if (!*found || (*found)->allowed_origins.empty()) return inner(ctx);
        if (!billing::OriginAllowed((*found)->allowed_origins, *origin)) {
            return MakeError(ErrorKind::Forbidden, "origin_not_allowed",
                             "this key may be used only from its allowed origins, and " + origin->substr(0, 200) +
                                 " is not one of them");
        }
        auto result = inner(ctx);
        HttpResponse response = result.ok() ? std::move(result).value() : ErrorResponse(result.error());
        if (!result.ok() && ctx.retry_after_s > 0) response.SetHeader("Retry-After", std::to_string(ctx.retry_after_s));
        AddCorsHeaders(response, *origin);
        return response;
    };
}

HttpResponse Preflight(const HttpRequest& request, const std::set<std::string>& methods) {
    std::string allow;
    for (const auto& m : methods) allow += m + ", ";
    allow += "OPTIONS";
    HttpResponse response;
    response.status = 204;
    response.SetHeader("Allow", allow);
    if (const auto origin = request.Header("origin")) {
        response.SetHeader("Access-Control-Allow-Origin", *origin);
        response.SetHeader("Access-Control-Allow-Methods", allow);
        response.SetHeader("Access-Control-Allow-Headers", CORS_REQUEST_HEADERS);
        response.SetHeader("Access-Control-Max-Age", "600");
        response.SetHeader("Vary", "Origin");
    }
    return response;
}

}  // namespace

void AddGuardrailRoutes(Router& router, Service& service, BillingContext context) {
    router.Add({"POST", "/core/v1/set_usage_api_key_guardrails", AuthRequirement::None, BodyKind::Json,
                [&service, context](RequestContext& ctx) { return SetGuardrails(service, context, ctx); },
                "Sets a usage key's guardrails (owner only: the master key, or X-Wallet-Auth for ChainSecured): run rates "
                "per key and per client address, runs in flight, a spend cap per rolling window, allowed Origins; "
                "replaces every guardrail (an absent field is not set)",
                "keys", ApiSchema("guardrails.json#/SetGuardrailsRequest"), ApiSchema("guardrails.json#/SetGuardrailsResponse")});
    router.Add({"GET", "/core/v1/get_usage_api_key_guardrails", AuthRequirement::None, BodyKind::None,
                [&service, context](RequestContext& ctx) { return GetGuardrails(service, context, ctx); },
                "A usage key's guardrails (owner only: the master key, or X-Wallet-Auth for ChainSecured)", "keys",
                ApiSchema("guardrails.json#/GetGuardrailsQuery"), ApiSchema("guardrails.json#/Guardrails")});
    router.Add({"POST", "/core/v1/clear_usage_api_key_guardrails", AuthRequirement::None, BodyKind::Json,
                [&service, context](RequestContext& ctx) { return ClearGuardrails(service, context, ctx); },
                "Removes a usage key's guardrails and its counters (owner only: the master key, or X-Wallet-Auth)",
                "keys", ApiSchema("guardrails.json#/ClearGuardrailsRequest"),
                ApiSchema("guardrails.json#/ClearGuardrailsResponse")});
}

void ApplyOriginLayer(Router& router, BillingContext context) {
    router.WrapHandlers([context](const Route& route, Handler handler) -> Handler {
        if (route.auth == AuthRequirement::None) return handler;
        return OriginChecked(context, std::move(handler));
    });
    router.SetPreflight(Preflight);
}

}  // namespace sigil::workers
