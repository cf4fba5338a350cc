#include "workers/api/billing.h"

#include <algorithm>
#include <ctime>
#include <optional>
#include <utility>

#include <rapidjson/document.h>

#include "common/base64.h"
#include "common/clock.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/log.h"
#include "common/metrics.h"
#include "workers/api/api.h"
#include "workers/api/auth.h"
#include "workers/api/idempotency.h"
#include "workers/api/schemas.h"
#include "workers/api/typed_data_auth.h"

namespace sigil::workers {
namespace {

using billing::Cents;
using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Uint256;

constexpr std::size_t MAX_WALLET_AUTH_BYTES = 8192;  // base64 of {typed_data (<= 4 KiB), signature}

common::Error Disabled() {
    return MakeError(ErrorKind::Suspended, "billing_disabled", "billing is not enabled on this instance");
}

// The account a billing request is for: X-Wallet-Auth (a BillingAuth envelope signed by the account's
// admin wallet), or any API key of the account, its master key or a usage key. Reading the balance and
// buying credit only ever add to what the account has, so no scope guards them; a usage key is how an
// account owned by a contract wallet (a multisig, which signs no BillingAuth) sees and tops up its credit.
Result<Uint256> BillingAccount(Service& service, const HttpRequest& request) {
    if (!request.Header("x-wallet-auth")) {
        SIGIL_TRY(caller, Authenticate(service, request, AuthRequirement::ApiKey));
        return caller->account_hash;
    }
    return WalletAuthAccount(service, request);
}

struct BillingRequest {
    billing::Ledger* ledger = nullptr;
    std::string customer;
};

Result<BillingRequest> Open(billing::Billing* b, Service& service, const HttpRequest& request) {
    if (b == nullptr || !b->enabled()) return Disabled();
    SIGIL_TRY(account, BillingAccount(service, request));
    SIGIL_TRY(customer, b->CustomerOf(*account));
    SIGIL_TRY(ledger, b->Store());
    return BillingRequest{*ledger, *customer};
}

std::string BalanceMembers(Cents cents) {
    return "\"balance_cents\":" + std::to_string(cents) + ",\"balance_display\":" +
           common::JsonQuote(billing::Billing::Display(cents));
}

Result<HttpResponse> PaymentsConfig(billing::Billing* b) {
    if (b == nullptr || !b->enabled()) return Disabled();
    const std::string members = b->processor().ConfigMembers();
    return JsonResponse(200, "{\"processor\":" + common::JsonQuote(b->processor().Name()) +
                                 ",\"min_payment_cents\":" + std::to_string(b->settings().min_payment_cents) +
                                 // What a call costs, so a client can show it before it spends (issue 25).
                                 ",\"prices\":{\"write_cents\":" + std::to_string(b->settings().write_price_cents) +
                                 ",\"run_second_cents\":" + std::to_string(b->settings().run_second_price_cents) + "}" +
                                 (members.empty() ? "" : "," + members) + "}");
}

// The deployed implementation's billing check (its SDK's getStripeConfig, which its dashboard takes
// as "billing is on" when it answers 2xx and then hands publishable_key to Stripe.js): the key when
// payments go through Stripe; otherwise an error saying Stripe is off and where to look instead.
Result<HttpResponse> StripeConfig(billing::Billing* b) {
    if (b == nullptr || !b->enabled()) {
        return MakeError(ErrorKind::NotFound, "stripe_not_configured", "billing is not enabled on this instance");
    }
    const std::string key = b->processor().StripePublishableKey();
    if (key.empty()) {
        return MakeError(ErrorKind::NotFound, "stripe_not_configured",
                         "this instance takes payments through its " + b->processor().Name() +
                             " processor, not Stripe; GET /core/v1/billing/payments_config says how to pay");
    }
    return JsonResponse(200, "{\"publishable_key\":" + common::JsonQuote(key) + "}");
}

Result<HttpResponse> Balance(billing::Billing* b, Service& service, RequestContext& ctx) {
    SIGIL_TRY(req, Open(b, service, ctx.request));
    SIGIL_TRY(balance, req->ledger->Balance(req->customer));
    return JsonResponse(200, "{" + BalanceMembers(*balance) + "}");
}

Result<HttpResponse> CreatePaymentIntent(billing::Billing* b, Service& service, RequestContext& ctx) {
    const auto* body = ctx.json;
    const auto& s = b != nullptr ? b->settings() : billing::BillingSettings{};
    if (body == nullptr || !body->IsObject() || !body->HasMember("amount_cents") || !(*body)["amount_cents"].IsInt64() ||
        (*body)["amount_cents"].GetInt64() < s.min_payment_cents || (*body)["amount_cents"].GetInt64() > s.max_payment_cents) {
        return MakeError(ErrorKind::InvalidInput, "invalid_amount",
                         "amount_cents must be an integer from " + std::to_string(s.min_payment_cents) + " to " +
                             std::to_string(s.max_payment_cents));
    }
    const Cents cents = (*body)["amount_cents"].GetInt64();
    SIGIL_TRY(req, Open(b, service, ctx.request));
    SIGIL_TRY(intent, b->processor().Create(req->customer, cents));
    SIGIL_TRY_STATUS(req->ledger->PutIntent(*intent));
    const std::string extra = b->processor().AnswerMembers(*intent);
    return JsonResponse(200, "{\"payment_intent_id\":" + common::JsonQuote(intent->id) + ",\"client_secret\":" +
                                 common::JsonQuote(intent->client_secret) + ",\"amount_cents\":" + std::to_string(cents) +
                                 (extra.empty() ? "" : "," + extra) + "}");
}

Result<HttpResponse> ConfirmPayment(billing::Billing* b, Service& service, RequestContext& ctx) {
    const auto* body = ctx.json;
    if (body == nullptr || !body->IsObject() || !body->HasMember("payment_intent_id") ||
        !(*body)["payment_intent_id"].IsString() || (*body)["payment_intent_id"].GetStringLength() == 0 ||
        (*body)["payment_intent_id"].GetStringLength() > 255) {
        return MakeError(ErrorKind::InvalidInput, "invalid_payment_intent_id", "payment_intent_id must be a non-empty string");
    }
    const std::string id = (*body)["payment_intent_id"].GetString();
    SIGIL_TRY(req, Open(b, service, ctx.request));
    SIGIL_TRY(found, req->ledger->FindIntent(id));
    // Another account's intent is answered like an unknown one: ids say nothing about other accounts.
    if (!*found || (*found)->customer != req->customer) {
        return MakeError(ErrorKind::NotFound, "unknown_payment_intent", "no payment intent " + id + " for this account");
    }
    const billing::PaymentIntent& intent = **found;
    if (intent.credited) {
        return MakeError(ErrorKind::Conflict, "payment_already_credited", "payment intent " + id + " was already credited");
    }
    SIGIL_TRY(paid, b->processor().IsPaid(intent));
    if (!*paid) {
        return MakeError(ErrorKind::PaymentRequired, "payment_not_completed",
                         "the payment processor holds no completed payment of " + std::to_string(intent.amount_cents) +
                             " cents for " + id + " yet");
    }
    SIGIL_TRY(credited, req->ledger->CreditOnce(req->customer, intent.id, intent.amount_cents, "payment:" + intent.id,
                                                ctx.request.request_id));
    if (!*credited) {
        return MakeError(ErrorKind::Conflict, "payment_already_credited", "payment intent " + id + " was already credited");
    }
    common::CountPaymentConfirmed(intent.amount_cents);
    SIGIL_TRY(balance, req->ledger->Balance(req->customer));
    return JsonResponse(200, "{\"success\":true,\"credited_cents\":" + std::to_string(intent.amount_cents) + "," +
                                 BalanceMembers(*balance) + "}");
}

// Who spends for a charge: a usage key (its hash, and its on-chain balance as the cap: 0 = none), or
// the account's master key (no cap).
struct Spender {
    std::string id;
    Cents limit = 0;
};

// Caps above this are no cap (the ledger's amounts stay far from overflow).
constexpr Cents MAX_SPEND_CAP_CENTS = 1'000'000'000'000;

Result<Spender> SpenderOf(Service& service, const Caller& caller) {
    if (caller.is_owner) return Spender{};
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(key, (*reader)->GetUsageKey(caller.account_hash, caller.key_hash));
    const auto cap = key->balance.ToUint64();
    Spender s{WordHex(caller.key_hash), 0};
    if (cap && *cap <= static_cast<std::uint64_t>(MAX_SPEND_CAP_CENTS)) s.limit = static_cast<Cents>(*cap);
    return s;
}

// The starter credit's budget for today (UTC): one row in the ledger that every instance adds to.
std::string StarterBudgetId() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char day[16];
    std::strftime(day, sizeof day, "%Y-%m-%d", &utc);
    return std::string("starter:") + day;
}

// Starter credit for the customer a new account's handler names (RequestContext::new_customer),
// once per customer (the credit id names it) and within the day's budget.
Handler WithStarterCredit(billing::Billing* b, Handler inner) {
    return [b, inner](RequestContext& ctx) -> Result<HttpResponse> {
        auto result = inner(ctx);
        const Cents starter = b->settings().starter_credit_cents;
        // A 202 (broadcast, unconfirmed) gets it too: the account exists once mined, and a wallet
        // minted for an account that never comes to be holds credit nobody can spend.
        if (!result.ok() || (result->status != 200 && result->status != 202) || starter <= 0) return result;
        const std::string& customer = ctx.new_customer;
        if (customer.empty()) return result;
        auto ledger = b->Store();
        auto granted = ledger.ok() ? (*ledger)->CreditFromBudget(customer, "starter:" + customer, starter, "starter",
                                                                  ctx.request.request_id, StarterBudgetId(),
                                                                  b->settings().starter_credit_budget_cents)
                                   : Result<billing::BudgetedCredit>(ledger.error());
        // The account exists on chain either way; a ledger that is down costs only the starter credit.
        if (!granted.ok()) {
            common::LogWarn("starter credit for " + customer + " not granted: " + granted.error().message,
                            ctx.request.request_id);
        } else if (*granted == billing::BudgetedCredit::BudgetExhausted) {
            common::LogWarn("starter credit for " + customer + " not granted: today's starter_credit_budget_cents is spent",
                            ctx.request.request_id);
        }
        return result;
    };
}

// Holds the write price before the write and keeps it only if the write succeeded. A route declared
// Charge::WriteMovingBalance (conversion) also moves the balance from the old admin's customer to the new one.
Handler Charged(Service& service, billing::Billing* b, const Route& route, Handler inner) {
    const bool conversion = route.charge == Charge::WriteMovingBalance;
    const std::string path = route.path.substr(route.path.rfind('/') + 1);
    return [&service, b, inner, conversion, path](RequestContext& ctx) -> Result<HttpResponse> {
        const Caller& caller = CallerOf(ctx);
        SIGIL_TRY(customer, b->CustomerOf(caller.account_hash));
        SIGIL_TRY(spender, SpenderOf(service, caller));
        SIGIL_TRY(ledger, b->Store());
        SIGIL_TRY(hold, (*ledger)->Charge(*customer, b->settings().write_price_cents, "write:" + path, ctx.request.request_id,
                                          spender->id, spender->limit));
        auto result = inner(ctx);
        const bool ok = result.ok() && result->status >= 200 && result->status < 300;
        if (!ok) {
            if (auto st = (*ledger)->Settle(*hold, 0, "refund:" + path); !st.ok()) {
                common::LogError("refund of a failed " + path + " not written: " + st.error().message, ctx.request.request_id);
            }
            return result;
        }
        if (conversion) {
            // The account's customer is its admin wallet, which the conversion just replaced.
            auto now = b->CustomerOf(caller.account_hash);
            if (now.ok() && *now != *customer) {
                if (auto moved = (*ledger)->MoveBalance(*customer, *now, ctx.request.request_id); !moved.ok()) {
                    common::LogError("balance not moved to " + *now + " after conversion: " + moved.error().message,
                                     ctx.request.request_id);
                }
            }
        }
        return result;
    };
}

// How long past a run's time limit its in-flight row still counts when its worker never ends it.
constexpr std::int64_t RUN_LEASE_MARGIN_MS = 30'000;

std::uint64_t KeyTag(const Uint256& key_hash) {
    std::uint64_t tag = 0;
    for (int i = 0; i < 8; ++i) tag = (tag << 8) | key_hash.Word()[static_cast<std::size_t>(i)];
    return tag | 1;  // never 0 (0 = no run)
}

}  // namespace

Result<Uint256> WalletAuthAccount(Service& service, const HttpRequest& request) {
    const auto wallet_auth = request.Header("x-wallet-auth");
    if (!wallet_auth) {
        return MakeError(ErrorKind::Unauthenticated, "missing_wallet_auth", "send the X-Wallet-Auth header");
    }
    if (request.Header("x-api-key") || request.Header("authorization")) {
        return MakeError(ErrorKind::InvalidInput, "ambiguous_auth", "send X-Wallet-Auth or an API key, not both");
    }
    if (wallet_auth->size() > MAX_WALLET_AUTH_BYTES) {
        return MakeError(ErrorKind::InvalidInput, "invalid_wallet_auth", "X-Wallet-Auth is too long");
    }
    auto decoded = common::Base64Decode(*wallet_auth);
    rapidjson::Document doc;
    if (decoded.ok()) doc.Parse(reinterpret_cast<const char*>(decoded->data()), decoded->size());
    if (!decoded.ok() || doc.HasParseError() || !doc.IsObject() || !doc.HasMember("typed_data") ||
        !doc.HasMember("signature") || !doc["signature"].IsString() ||
        !(doc["typed_data"].IsObject() || doc["typed_data"].IsString())) {
        return MakeError(ErrorKind::InvalidInput, "invalid_wallet_auth",
                         "X-Wallet-Auth must be base64 of the JSON {typed_data, signature}");
    }
    const auto& td = doc["typed_data"];
    const std::string typed = td.IsString() ? std::string(td.GetString(), td.GetStringLength()) : common::JsonSerialize(td);
    TypedDataPolicy policy;
    policy.flow = SignatureFlow::BillingAuth;
    policy.chain_id = service.ChainId();
    policy.now = static_cast<std::int64_t>(std::time(nullptr));
    SIGIL_TRY(verified, VerifyTypedDataSignature(typed, doc["signature"].GetString(), policy));
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(account, (*reader)->AccountOfAdmin(verified->signer));
    if (account->IsZero()) {
        return MakeError(ErrorKind::NotFound, "unknown_account",
                         "the signer " + AddressHex(verified->signer) + " administers no account");
    }
    return *account;
}


void AddBillingRoutes(Router& router, Service& service, BillingContext context) {
    billing::Billing* b = context.billing;
    router.Add({"GET", "/core/v1/billing/payments_config", AuthRequirement::None, BodyKind::None,
                [b](RequestContext&) { return PaymentsConfig(b); },
                "The payment processor and what a client needs to pay it", "billing", "",
                ApiSchema("billing.json#/PaymentsConfig")});
    router.Add({"GET", "/core/v1/billing/stripe_config", AuthRequirement::None, BodyKind::None,
                [b](RequestContext&) { return StripeConfig(b); },
                "Compatibility: Stripe's publishable key as the deployed implementation answers it; 404 "
                "stripe_not_configured when billing is off or payments do not go through Stripe (see payments_config)",
                "billing", "", ApiSchema("billing.json#/StripeConfig")});
    router.Add({"GET", "/core/v1/billing/balance", AuthRequirement::None, BodyKind::None,
                [b, &service](RequestContext& ctx) { return Balance(b, service, ctx); },
                "The account's credit balance (any key of the account, or X-Wallet-Auth for a ChainSecured admin)", "billing",
                ApiSchema("billing.json#/AccountAuthHeaders"), ApiSchema("billing.json#/Balance")});
    router.Add({"POST", "/core/v1/billing/create_payment_intent", AuthRequirement::None, BodyKind::Json,
                [b, &service](RequestContext& ctx) { return CreatePaymentIntent(b, service, ctx); },
                "Starts a payment of amount_cents (at least 500) to buy credits", "billing",
                ApiSchema("billing.json#/CreatePaymentIntentRequest"), ApiSchema("billing.json#/PaymentIntent")});
    router.Add({"POST", "/core/v1/billing/confirm_payment", AuthRequirement::None, BodyKind::Json,
                [b, &service](RequestContext& ctx) { return ConfirmPayment(b, service, ctx); },
                "Credits a completed payment intent to the account, exactly once", "billing",
                ApiSchema("billing.json#/ConfirmPaymentRequest"), ApiSchema("billing.json#/ConfirmPaymentResponse")});
}

// A usage key's relayed write takes a token from the key's rate buckets, as its runs do (README "Key
// guardrails": a write costs the service gas and a payer wallet's turn, like a run its CPU), before it is
// charged or sent. The master key and X-Wallet-Auth are the admin's and have no guardrails.
Handler RateLimitedWrite(billing::Billing* b, Handler inner) {
    return [b, inner](RequestContext& ctx) -> Result<HttpResponse> {
        const Caller* caller = std::any_cast<Caller>(&ctx.auth);
        if (caller != nullptr && !caller->is_owner) {
            SIGIL_TRY(ledger, b->Store());
            billing::RunRefusal refusal;
            auto admitted = (*ledger)->AdmitRequest(WordHex(caller->key_hash), ctx.request.remote_addr, &refusal);
            ctx.retry_after_s = refusal.retry_after_s;
            if (!admitted.ok()) {
                if (admitted.error().kind == common::ErrorKind::Overloaded) common::CountOverloadRefusal();
                return admitted.error();
            }
        }
        return inner(ctx);
    };
}

void ApplyWriteLayers(Router& router, Service& service, BillingContext context) {
    billing::Billing* b = context.billing;
    const bool charging = b != nullptr && b->enabled();
    // The guardrails' store: the ledger's database, billing on or off.
    const bool guarded = b != nullptr && !b->settings().database.empty();
    router.WrapHandlers([&service, b, charging, guarded](const Route& route, Handler handler) -> Handler {
        if (charging) {
            switch (route.charge) {
                case Charge::None:
                case Charge::RunTime: break;  // RunCharge in the run's handler (run.cpp)
                case Charge::Write:
                case Charge::WriteMovingBalance: handler = Charged(service, b, route, std::move(handler)); break;
                case Charge::StarterCredit: handler = WithStarterCredit(b, std::move(handler)); break;
            }
        }
        if (guarded && (route.charge == Charge::Write || route.charge == Charge::WriteMovingBalance)) {
            handler = RateLimitedWrite(b, std::move(handler));
        }
        if (route.auth != AuthRequirement::None && route.method == "POST") handler = Idempotent(service, b, std::move(handler));
        return handler;
    });
}

Result<RunCharge> RunCharge::Begin(BillingContext context, Service& service, const Caller& caller,
                                   const std::string& request_id, std::uint64_t time_limit_ms,
                                   const std::string& client_address, billing::RunRefusal* refusal) {
    RunCharge charge(context);
    charge.m_held_ms = time_limit_ms;
    charge.m_begun_ms = common::MonotonicMs();
    billing::Billing* b = context.billing;
    const std::uint32_t cap = b != nullptr ? b->settings().max_concurrent_runs_per_key : 0;
    const bool guarded = b != nullptr && !b->settings().database.empty();
    if (!guarded) {
        // No ledger to share: the pool-wide cap of this instance only (the scoreboard).
        if (context.scoreboard != nullptr && cap > 0) {
            const std::uint64_t tag = KeyTag(caller.key_hash);
            context.scoreboard->Slot(context.slot).run_key.store(tag, std::memory_order_release);
            charge.m_slot_taken = true;
            if (context.scoreboard->CountRunning(tag) > cap) {
                common::CountOverloadRefusal();
                return MakeError(ErrorKind::Overloaded, "too_many_runs",
                                 "this key already has " + std::to_string(cap) + " runs in flight; retry when one ends");
            }
        }
        if (b == nullptr || !b->enabled()) return charge;
    }
    billing::RunGate gate;
    gate.key = WordHex(caller.key_hash);
    gate.usage_key = !caller.is_owner;
    gate.client_address = client_address;
    gate.run_id = request_id;
    gate.default_in_flight = cap;
    // A crashed worker's row stops counting once its run would have ended anyway, with a margin for
    // the supervisor's kill (it checks about once a second).
    gate.lease_ms = static_cast<std::int64_t>(time_limit_ms) + RUN_LEASE_MARGIN_MS;
    const auto full_seconds = static_cast<std::int64_t>(std::max<std::uint64_t>(1, (time_limit_ms + 999) / 1000));
    const Cents price = b->enabled() ? b->settings().run_second_price_cents : 0;
    if (b->enabled()) {
        SIGIL_TRY(customer, b->CustomerOf(caller.account_hash));
        SIGIL_TRY(spender, SpenderOf(service, caller));
        gate.customer = *customer;
        gate.unit = std::max<Cents>(0, price);
        gate.max_units = full_seconds;
        gate.reason = "run:hold";
        gate.spender = spender->id;
        gate.spender_limit = spender->limit;
    }
    auto ledger = b->Store();
    auto pass = ledger.ok() ? (*ledger)->AdmitRun(gate, refusal) : Result<billing::RunPass>(ledger.error());
    if (!pass.ok()) {
        const common::Error& e = pass.error();
        if (e.code == "too_many_runs") common::CountOverloadRefusal();
        const bool store_down = e.kind == ErrorKind::Unavailable || e.kind == ErrorKind::Internal;
        if (store_down && !b->enabled()) {
            // Billing off: the ledger is only the guardrails' store, and a run it cannot check is refused.
            return MakeError(ErrorKind::Suspended, "guardrails_unavailable",
                             "the key guardrails' store cannot be reached, so no run is admitted: " + e.message);
        }
        return e;
    }
    charge.m_pass = *pass;
    charge.m_hold = pass->hold_id;
    if (!b->enabled()) return charge;
    if (price <= 0) {  // free runs: a hold of nothing, kept only so the ledger shows each run
        charge.m_held_seconds = full_seconds;
        return charge;
    }
    charge.m_held_seconds = pass->units;
    if (pass->units < full_seconds) {
        charge.m_held_ms = static_cast<std::uint64_t>(pass->units) * 1000;
        charge.m_limited_by = "what the account's credit or this key's spend cap could hold: " +
                              std::to_string(pass->units * price) + " cents at " + std::to_string(price) +
                              " cents a second";
    }
    return charge;
}

RunCharge::RunCharge(RunCharge&& other) noexcept
    : m_context(other.m_context), m_hold(std::exchange(other.m_hold, std::nullopt)),
      m_held_seconds(other.m_held_seconds), m_held_ms(other.m_held_ms), m_limited_by(std::move(other.m_limited_by)),
      m_begun_ms(other.m_begun_ms), m_started(other.m_started), m_slot_taken(std::exchange(other.m_slot_taken, false)),
      m_charged_out(other.m_charged_out), m_pass(std::exchange(other.m_pass, std::nullopt)) {}

// A started run keeps its measured seconds, at least one and never more than were held (the run's
// time limit was the held seconds; what the kill takes past it is not the caller's); a run that
// never started (refused, or the service failed before its code reached the sandbox) keeps nothing.
std::optional<Cents> RunCharge::Settle() {
    Cents actual = 0;
    if (m_started) {
        const auto elapsed_ms = static_cast<std::uint64_t>(std::max<std::int64_t>(0, common::MonotonicMs() - m_begun_ms));
        const auto seconds = static_cast<std::int64_t>((elapsed_ms + 999) / 1000);
        actual = std::clamp<std::int64_t>(seconds, 1, std::max<std::int64_t>(1, m_held_seconds)) *
                 m_context.billing->settings().run_second_price_cents;
    }
    const char* reason = m_started ? "run:settle" : "run:refund";
    auto ledger = m_context.billing->Store();
    auto settled = ledger.ok() ? (*ledger)->Settle(*m_hold, actual, reason) : Result<Cents>(ledger.error());
    if (!settled.ok()) {
        common::LogError(std::string(reason) + " not written (the hold stands): " + settled.error().message);
        if (m_charged_out != nullptr) *m_charged_out = actual;
        return std::nullopt;
    }
    if (m_charged_out != nullptr) *m_charged_out = *settled;
    return *settled;
}

RunCharge::~RunCharge() {
    std::optional<Cents> charged;
    if (m_hold) charged = Settle();
    if (m_pass) {
        auto ledger = m_context.billing->Store();
        auto ended = ledger.ok() ? (*ledger)->EndRun(*m_pass, charged) : common::Status(ledger.error());
        // The run's row then stops counting when its lease ends.
        if (!ended.ok()) common::LogError("run " + m_pass->run_id + " not ended in the guardrails: " + ended.error().message);
    }
    if (m_slot_taken) m_context.scoreboard->Slot(m_context.slot).run_key.store(0, std::memory_order_release);
}

}  // namespace sigil::workers
