// The credit ledger (DESIGN.md section 9): append-only entries (customer, delta, reason, request id,
// time), the balance derived from them, one transaction per charge. Credits are cents. A customer is
// an account's admin wallet (0x + 40 lower-case hex). Behind one interface, two stores: SQLite (WAL,
// the embedded default; several worker processes share the file) and PostgreSQL (several instances).
//
// Concurrency: every operation that reads a balance and writes an entry does both in one
// transaction that holds the customer's lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction-
// scoped advisory lock on the customer), so concurrent charges never overdraw.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "workers/billing/guardrails.h"

namespace sigil::workers::billing {

using Cents = std::int64_t;

struct LedgerEntry {
    std::int64_t id = 0;
    std::string customer;
    Cents delta = 0;          // + credit, - charge
    Cents balance_after = 0;  // the customer's balance once this entry applied
    std::string reason;       // "payment:<intent id>", "starter", "write:<endpoint>", "run:hold", "run:settle", "move:<to|from>"
    std::string request_id;   // the request that caused it ("" for none)
    std::int64_t at_ms = 0;   // unix time, milliseconds
};

// A payment intent as the ledger keeps it (the processor has its own record too).
struct PaymentIntent {
    std::string id;             // the processor's id (chain: "pi_" + 32 hex)
    std::string customer;
    Cents amount_cents = 0;
    std::string processor;      // "chain" | "stripe"
    std::string reference;      // chain: 0x + 64 hex, the pay() reference; stripe: ""
    std::string client_secret;  // what create_payment_intent answered (stripe's, or the chain's reference)
    bool credited = false;
    std::int64_t created_ms = 0;
    // chain: the head block when the intent was made; confirm_payment searches Paid events from here
    // (a payment made before the intent cannot be for it, and a search from genesis is slow). 0 for stripe.
    std::uint64_t from_block = 0;
};

// Whose an idempotency scope is and how long its claim lasts (Ledger::Claim).
struct ClaimPolicy {
    std::string owner;              // the account the scope's key belongs to; "" = none (no bound)
    std::int64_t max_per_owner = 0; // rows one owner may hold at once (pending or final); 0 = no bound
    // A pending claim older than this is taken over by the next Claim with the same request hash:
    // its worker died (the supervisor kills one past its hard timeout), so nobody will finish it. 0 = never.
    std::int64_t lease_ms = 0;
};

// What CreditFromBudget did.
enum class BudgetedCredit { Credited, AlreadyCredited, BudgetExhausted };

// The first answer to a write sent with an Idempotency-Key, kept for 24 h.
struct StoredAnswer {
    std::string request_hash;  // SHA-256 hex of method, path and body: the same key with another body is refused
    int status = 0;            // 0 = still running (claimed, no answer yet)
    std::string body;
    std::int64_t created_ms = 0;
};

class Ledger {
public:
    virtual ~Ledger() = default;

    // Opens (and creates the schema of) the store `database` names: "postgresql://..." or
    // "postgres://..." for PostgreSQL, anything else is a SQLite file path (its folder must exist).
    // Errors: Unavailable "ledger_unavailable" (cannot open or connect; the message says why).
    static common::Result<std::unique_ptr<Ledger>> Open(const std::string& database);

    // The customer's balance (0 for one never seen).
    virtual common::Result<Cents> Balance(const std::string& customer) = 0;

    // Credits `cents` (> 0) once per `credit_id` (a payment intent id, "starter:<customer>"): a second
    // call with the same id credits nothing and answers false. Both in one transaction.
    virtual common::Result<bool> CreditOnce(const std::string& customer, const std::string& credit_id, Cents cents,
                                            const std::string& reason, const std::string& request_id) = 0;

    // CreditOnce, paid from a budget shared by every instance on this store (the starter credit's,
    // per day): credits only while the budget's total plus `cents` stays within `budget_cents`, in the
    // same transaction. BudgetExhausted and AlreadyCredited write nothing.
    virtual common::Result<BudgetedCredit> CreditFromBudget(const std::string& customer, const std::string& credit_id,
                                                            Cents cents, const std::string& reason,
                                                            const std::string& request_id, const std::string& budget_id,
                                                            Cents budget_cents) = 0;

    // Debits `cents` (>= 0) if the balance covers it, in one transaction; answers the entry's id.
    // `spender` (a usage key's hash, "" for none) is recorded with the charge and its settlement; with
    // `spender_limit` > 0 the charge is refused when the spender's charges would pass it (a usage
    // key's on-chain balance is its spend cap), checked in the same transaction.
    // Errors: PaymentRequired "insufficient_credit" (the balance is below `cents`) or
    // "spend_cap_reached"; nothing written.
    virtual common::Result<std::int64_t> Charge(const std::string& customer, Cents cents, const std::string& reason,
                                                const std::string& request_id, const std::string& spender = {},
                                                Cents spender_limit = 0) = 0;

    // A hold of what something may cost at most (a run up to its time limit) that keeps small
    // balances usable: debits the largest whole number of `unit` cents (> 0), up to `max_units`,
    // that the balance and the spender's remaining limit (as Charge's) both cover, in one
    // transaction. Answers the entry's id (Settle it later) and the units held (>= 1).
    // Errors: those of Charge, when not even one unit is covered; nothing written.
    struct Hold {
        std::int64_t id = 0;
        std::int64_t units = 0;
    };
    virtual common::Result<Hold> ChargeUpTo(const std::string& customer, Cents unit, std::int64_t max_units,
                                            const std::string& reason, const std::string& request_id,
                                            const std::string& spender = {}, Cents spender_limit = 0) = 0;

    // Settles an earlier Charge or ChargeUpTo (a run's hold) at `actual` cents: refunds
    // hold - actual when less, debits the rest when more but never below a zero balance (what the
    // balance cannot pay is forgiven, so concurrent runs never overdraw). Writes nothing when equal.
    // Answers what was finally charged for the hold and the settlement together.
    virtual common::Result<Cents> Settle(std::int64_t charge_id, Cents actual, const std::string& reason) = 0;

    // Moves the whole balance of `from` to `to` in one transaction (conversion to ChainSecured
    // changes the account's admin wallet). Answers the amount moved (0 when none).
    virtual common::Result<Cents> MoveBalance(const std::string& from, const std::string& to,
                                              const std::string& request_id) = 0;

    // MoveBalance at most once per `move_id` (1..200 characters; an admin change on chain names it
    // by its transaction hash and log index), however many workers hear of it: a repeat moves
    // nothing and answers 0. The id is taken even when `from` holds nothing, so a later repeat can
    // never move credit that arrived afterwards.
    virtual common::Result<Cents> MoveBalanceOnce(const std::string& from, const std::string& to,
                                                  const std::string& move_id, const std::string& request_id) = 0;

    // The customer's entries, newest first, at most `limit`.
    virtual common::Result<std::vector<LedgerEntry>> Entries(const std::string& customer, std::size_t limit) = 0;

    // Payment intents. PutIntent inserts (Conflict "intent_exists" if the id is taken);
    // FindIntent answers nullopt for an unknown id. Crediting goes through CreditOnce(intent id),
    // which also marks the intent credited in the same transaction when the id is an intent's.
    virtual common::Status PutIntent(const PaymentIntent& intent) = 0;
    virtual common::Result<std::optional<PaymentIntent>> FindIntent(const std::string& id) = 0;

    // Idempotency keys, scoped by the caller (the API layer scopes them by the credential's key hash).
    // Claim inserts a pending row (status 0) and answers nullopt, or answers the row already there
    // (pending or final) without writing; a pending row past `policy.lease_ms` with the same request
    // hash is taken over (answers nullopt). Errors: Overloaded "idempotency_keys_exhausted" when
    // `policy.owner` already holds `policy.max_per_owner` rows (nothing written). Finish stores the
    // final answer of a claimed scope. Rows older than 24 h are forgotten (removed on the next Claim
    // of any scope).
    virtual common::Result<std::optional<StoredAnswer>> Claim(const std::string& scope, const std::string& request_hash,
                                                              const ClaimPolicy& policy = {}) = 0;
    virtual common::Status Finish(const std::string& scope, int status, const std::string& body) = 0;
    // Replaces a final answer whose status is still `from_status` (a write answered while its
    // transaction was unconfirmed, now settled): status 0 takes the scope back as running. Answers
    // false when the row has another status by now (another request replaced it first).
    virtual common::Result<bool> Replace(const std::string& scope, int from_status, int status,
                                         const std::string& body) = 0;
    // Drops a claim whose request ended without an answer worth keeping (so a retry runs again).
    virtual common::Status Release(const std::string& scope) = 0;

    // Key guardrails (guardrails.h). Set replaces the key's guardrails (ValidateGuardrails first);
    // Clear removes them with the key's counters and answers whether there were any.
    virtual common::Status SetGuardrails(const KeyGuardrails& guardrails) = 0;
    virtual common::Result<std::optional<KeyGuardrails>> GetGuardrails(const std::string& key) = 0;
    virtual common::Result<bool> ClearGuardrails(const std::string& key) = 0;
    // Admits a run in one transaction: the key's rate, its client address's rate, its runs in flight
    // (its own cap, else gate.default_in_flight) and, with billing (gate.customer set), the hold of
    // ChargeUpTo further capped by what the key's rolling window has left. Errors: Overloaded
    // "rate_limited" (then `refusal`, when given, says when to retry) or "too_many_runs", PaymentRequired
    // "insufficient_credit" or "spend_cap_reached", the store's Unavailable; nothing written.
    virtual common::Result<RunPass> AdmitRun(const RunGate& gate, RunRefusal* refusal = nullptr) = 0;
    // A usage key's relayed write takes from the same rate buckets as its runs (the key's and its
    // client address's, when set), in one transaction. Errors: InvalidInput, Overloaded "rate_limited"
    // (then `refusal` says when to retry), the store's Unavailable; nothing written when refused.
    virtual common::Status AdmitRequest(const std::string& key, const std::string& client_address,
                                        RunRefusal* refusal = nullptr) = 0;
    // Ends an admitted run: its in-flight row goes, and its window row takes `charged` (what Settle
    // answered; nullopt keeps the hold, which only ever overstates the spend).
    virtual common::Status EndRun(const RunPass& pass, std::optional<Cents> charged) = 0;
};

}  // namespace sigil::workers::billing
