// Billing in the API (DESIGN.md section 9): the /core/v1/billing/* endpoints and the charge each route
// declares (Route::charge) for relayed writes, runs and new accounts; Idempotency-Key lives in
// idempotency.h. The ledger and the processors live in workers/billing; this file decides who pays for
// what, and when.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "common/scoreboard.h"
#include "workers/billing/billing.h"
#include "workers/billing/run_history.h"
#include "workers/chain/caller.h"
#include "workers/chain/service.h"
#include "workers/http/router.h"

namespace sigil::workers {

// What the billing layers need besides the Service. `billing` null or disabled: nothing is charged
// and the billing endpoints answer 503 billing_disabled. `scoreboard` null: no pool-wide run cap.
struct BillingContext {
    billing::Billing* billing = nullptr;
    common::Scoreboard* scoreboard = nullptr;
    std::uint32_t slot = 0;
    billing::RunHistory* history = nullptr;  // null: runs are not recorded, list_runs answers 503
};

//   GET  /core/v1/billing/payments_config  (none)  {processor, ...the processor's members}
//   GET  /core/v1/billing/balance          (account auth)  {balance_cents, balance_display}
//   POST /core/v1/billing/create_payment_intent {amount_cents}  (account auth)
//        {payment_intent_id, client_secret, amount_cents, pay?}; 400 invalid_amount below the minimum
//   POST /core/v1/billing/confirm_payment {payment_intent_id}  (account auth)
//        {success, credited_cents, balance_cents}: credits an intent exactly once; 404 unknown_payment_intent
//        (also another account's), 402 payment_not_completed when the processor holds no completed payment.
// Account auth: any API key of the account, its master key or a usage key (X-Api-Key / Bearer; paying
// only adds credit, so no scope is needed, and a multisig-owned account buys credit through a usage key),
// or X-Wallet-Auth (BillingAuth, signed by the account's admin wallet) for ChainSecured accounts.
void AddBillingRoutes(Router& router, Service& service, BillingContext context);

// The account whose admin wallet signed the request's X-Wallet-Auth (BillingAuth, DESIGN.md section 4):
// how a ChainSecured account's admin authenticates to the server. Errors: Unauthenticated
// "missing_wallet_auth", InvalidInput "ambiguous_auth" (an API key sent too) or "invalid_wallet_auth",
// the signature checks' errors, NotFound "unknown_account" (the signer administers none).
common::Result<common::Uint256> WalletAuthAccount(Service& service, const HttpRequest& request);

// Wraps the routes registered so far, by what each declares:
//  * Charge::Write and WriteMovingBalance (every relayed write) hold [billing] write_price_cents from the
//    caller's account before it runs (402 insufficient_credit, or 402 spend_cap_reached when a usage key's
//    on-chain balance, its spend cap, would be passed; nothing done) and keep it only if the write
//    succeeded (2xx); WriteMovingBalance then moves the balance to the account's new admin wallet;
//  * Charge::StarterCredit (new_account) grants [billing] starter_credit_cents to the customer its
//    handler names, once, within the day's starter_credit_budget_cents (shared through the ledger);
//  * every authenticated POST accepts Idempotency-Key (idempotency.h).
void ApplyWriteLayers(Router& router, Service& service, BillingContext context);

// A run's charge (DESIGN.md section 9). Begin holds what the run may cost up to its time limit:
// the price of its full time limit, or less when the account's balance or the usage key's
// remaining spend cap covers less (whole seconds, at least one, else 402), and takes a run slot
// for the key (the pool-wide concurrent-runs cap). The run is then given a time limit of the held
// seconds (held_ms), so it never costs more than was held. Once the run's time counts for the
// caller (Start: its code reached the sandbox, or the gateways were waited on for its CID), the
// charge keeps the started seconds measured since Begin, whatever the run's ending; a charge
// destroyed unstarted refunds the hold (the run was refused or the service failed before it).
class RunCharge {
public:
    // Errors: PaymentRequired "insufficient_credit" or "spend_cap_reached" (a usage key's on-chain
    // balance caps what it spends), Overloaded "too_many_runs" (the key's concurrent-runs cap), the
    // chain's and the ledger's Unavailable errors. Nothing is held when it fails.
    // With a ledger database configured ([billing] database, billing on or off) the run is admitted by
    // the ledger (Ledger::AdmitRun): the key's guardrails (rates, runs in flight, rolling spend cap;
    // guardrails.h) and the hold in one transaction, so the limits hold across every instance sharing
    // it; Overloaded "rate_limited" (with Retry-After) joins the errors above, and with billing off a
    // ledger that cannot be reached refuses the run with Suspended "guardrails_unavailable" (503).
    // Without a database, only max_concurrent_runs_per_key binds, per instance (the scoreboard).
    static common::Result<RunCharge> Begin(BillingContext context, Service& service, const Caller& caller,
                                           const std::string& request_id, std::uint64_t time_limit_ms,
                                           const std::string& client_address = {},
                                           billing::RunRefusal* refusal = nullptr);
    RunCharge(RunCharge&& other) noexcept;
    RunCharge& operator=(RunCharge&&) = delete;
    // Settles a started run on its measured time (never above the hold), refunds an unstarted one.
    ~RunCharge();

    // The time limit the hold covers (at most the one Begin was given), and why it is shorter
    // ("" when it is not): for the run's time_limit error.
    std::uint64_t held_ms() const { return m_held_ms; }
    const std::string& limited_by() const { return m_limited_by; }

    // The run's time counts for the caller from here on: it is charged however it ends.
    void Start() { m_started = true; }

    // Where the settlement writes what the run was finally charged (the run history's cost).
    void ReportChargedTo(std::int64_t* charged_cents) { m_charged_out = charged_cents; }

private:
    RunCharge(BillingContext context) : m_context(context) {}
    std::optional<billing::Cents> Settle();  // what the run was charged (nullopt: not written)

    BillingContext m_context;
    std::optional<std::int64_t> m_hold;  // the ledger entry of the hold, while unsettled
    std::int64_t m_held_seconds = 0;
    std::uint64_t m_held_ms = 0;
    std::string m_limited_by;
    std::int64_t m_begun_ms = 0;  // common::MonotonicMs() when the hold was taken
    bool m_started = false;
    bool m_slot_taken = false;
    std::int64_t* m_charged_out = nullptr;
    std::optional<billing::RunPass> m_pass;  // a run admitted by the ledger, until it ends
};

}  // namespace sigil::workers
