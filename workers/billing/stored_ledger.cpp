// The ledger's rules, written once over the primitives of a store (store.h): input checks, credits
// exactly once, charges that never overdraw, settlement of holds, balance moves, idempotency rows.
#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <memory>
#include <utility>

#include "common/activity.h"
#include "common/metrics.h"
#include "common/utf8.h"
#include "workers/billing/store.h"
#include "workers/billing/stored_guardrails.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;

std::int64_t WallClockMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

const char* EntryKindName(EntryKind kind) {
    switch (kind) {
        case EntryKind::Credit: return "credit";
        case EntryKind::Charge: return "charge";
        case EntryKind::Settle: return "settle";
        case EntryKind::Move: return "move";
    }
    return "charge";
}

std::optional<EntryKind> ParseEntryKind(const std::string& name) {
    for (EntryKind k : {EntryKind::Credit, EntryKind::Charge, EntryKind::Settle, EntryKind::Move}) {
        if (name == EntryKindName(k)) return k;
    }
    return std::nullopt;
}

namespace {

// The store itself failed (database down, I/O), as opposed to a rule saying no (no credit): what the
// ledger's failure series counts.
bool IsStoreFailure(const common::Error& error) {
    return error.kind == ErrorKind::Unavailable || error.kind == ErrorKind::Internal;
}

// One operation moves at most this much: 10^12 cents is ten billion dollars, far above any payment,
// and keeps every sum of a few amounts far from int64 overflow.
constexpr Cents MAX_CENTS = 1'000'000'000'000;
constexpr std::int64_t ANSWER_TTL_MS = 24LL * 3600 * 1000;
constexpr std::size_t MAX_ENTRIES = 10'000;      // one Entries call
constexpr std::size_t MAX_BODY_BYTES = 1 << 20;  // a stored answer

common::Error Invalid(const std::string& field, const std::string& why) {
    return MakeError(ErrorKind::InvalidInput, "invalid_" + field, field + " " + why);
}

// Printable ASCII (with spaces) of min..max bytes: ids, reasons, scopes, hashes.
Status CheckText(const std::string& field, const std::string& value, std::size_t min, std::size_t max) {
    if (value.size() < min || value.size() > max) {
        return Invalid(field, "must be " + std::to_string(min) + " to " + std::to_string(max) + " bytes");
    }
    for (unsigned char c : value) {
        if (c < 0x20 || c > 0x7e) return Invalid(field, "must be printable ASCII");
    }
    return common::Success();
}

// A customer is an admin wallet as the header fixes it: 0x + 40 lower-case hex. Refusing any other
// spelling keeps one wallet from splitting into two balances ("0xAB.." and "0xab..").
Status CheckCustomer(const std::string& customer, const std::string& field = "customer") {
    bool ok = customer.size() == 42 && customer[0] == '0' && customer[1] == 'x';
    for (std::size_t i = 2; ok && i < customer.size(); ++i) {
        const char c = customer[i];
        ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    }
    return ok ? common::Success() : Invalid(field, "must be 0x and 40 lower-case hex digits");
}

Status CheckCents(const std::string& field, Cents cents, Cents min) {
    if (cents < min || cents > MAX_CENTS) {
        return Invalid(field, "must be " + std::to_string(min) + " to " + std::to_string(MAX_CENTS) + " cents");
    }
    return common::Success();
}

Status CheckEntryText(const std::string& reason, const std::string& request_id) {
    SIGIL_TRY_STATUS(CheckText("reason", reason, 1, 200));
    return CheckText("request_id", request_id, 0, 128);
}

// balance + cents, refused rather than wrapped (unreachable with MAX_CENTS unless a balance is
// already absurd).
Result<Cents> AddToBalance(Cents balance, Cents cents) {
    if (cents > std::numeric_limits<Cents>::max() - balance) {
        return MakeError(ErrorKind::Conflict, "balance_overflow", "the balance would overflow");
    }
    return balance + cents;
}

class StoredLedger final : public Ledger {
public:
    StoredLedger(std::unique_ptr<LedgerStore> store, NowMsFn now_ms)
        : m_store(std::move(store)), m_now(now_ms ? std::move(now_ms) : NowMsFn(WallClockMs)) {}

    Result<Cents> Balance(const std::string& customer) override {
        SIGIL_TRY_STATUS(CheckCustomer(customer));
        Cents balance = 0;
        const Status done = ReadOnly([&](StoreSession& db) -> Status {
            SIGIL_TRY(b, db.Balance(customer));
            balance = *b;
            return common::Success();
        });
        if (!done) return done.error();
        return balance;
    }

    Result<bool> CreditOnce(const std::string& customer, const std::string& credit_id, Cents cents,
                            const std::string& reason, const std::string& request_id) override {
        SIGIL_TRY(done, Credit(customer, credit_id, cents, reason, request_id, nullptr));
        return *done == BudgetedCredit::Credited;
    }

    Result<BudgetedCredit> CreditFromBudget(const std::string& customer, const std::string& credit_id, Cents cents,
                                            const std::string& reason, const std::string& request_id,
                                            const std::string& budget_id, Cents budget_cents) override {
        SIGIL_TRY_STATUS(CheckText("budget_id", budget_id, 1, 200));
        SIGIL_TRY_STATUS(CheckCents("budget_cents", budget_cents, 0));
        const Budget budget{budget_id, budget_cents};
        return Credit(customer, credit_id, cents, reason, request_id, &budget);
    }

    Result<std::int64_t> Charge(const std::string& customer, Cents cents, const std::string& reason,
                                const std::string& request_id, const std::string& spender,
                                Cents spender_limit) override {
        SIGIL_TRY_STATUS(CheckCustomer(customer));
        SIGIL_TRY_STATUS(CheckCents("cents", cents, 0));
        SIGIL_TRY_STATUS(CheckEntryText(reason, request_id));
        SIGIL_TRY_STATUS(CheckText("spender", spender, 0, 100));
        SIGIL_TRY_STATUS(CheckCents("spender_limit", spender_limit, 0));
        std::int64_t id = 0;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY_STATUS(db.Lock(customer));
            SIGIL_TRY(balance, db.Balance(customer));
            if (*balance < cents) {
                return MakeError(ErrorKind::PaymentRequired, "insufficient_credit",
                                 "the balance (" + std::to_string(*balance) + " cents) is below the price (" +
                                     std::to_string(cents) + " cents)");
            }
            if (!spender.empty() && spender_limit > 0) {
                SIGIL_TRY(spent, db.SpentBy(customer, spender));
                if (*spent + cents > spender_limit) {
                    return MakeError(ErrorKind::PaymentRequired, "spend_cap_reached",
                                     "this key has spent " + std::to_string(*spent) + " of its " +
                                         std::to_string(spender_limit) + " cents; the price is " + std::to_string(cents));
                }
            }
            SIGIL_TRY(entry, db.Append({customer, EntryKind::Charge, -cents, *balance - cents, reason, request_id,
                                        m_now(), spender}));
            id = *entry;
            return Outcome::Commit;
        }, Durability::Relaxed);
        if (!done) return done.error();
        common::CountCredits(cents, 0);
        return id;
    }

    Result<Hold> ChargeUpTo(const std::string& customer, Cents unit, std::int64_t max_units, const std::string& reason,
                            const std::string& request_id, const std::string& spender, Cents spender_limit) override {
        SIGIL_TRY_STATUS(CheckCustomer(customer));
        if (unit <= 0 || unit > MAX_CENTS) return Invalid("unit", "must be 1 to " + std::to_string(MAX_CENTS) + " cents");
        if (max_units <= 0) return Invalid("max_units", "must be positive");
        SIGIL_TRY_STATUS(CheckEntryText(reason, request_id));
        SIGIL_TRY_STATUS(CheckText("spender", spender, 0, 100));
        SIGIL_TRY_STATUS(CheckCents("spender_limit", spender_limit, 0));
        Hold hold;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY(held, HoldIn(db, customer, unit, max_units, reason, request_id, spender, spender_limit, std::nullopt));
            hold = *held;
            return Outcome::Commit;
        }, Durability::Relaxed);
        if (!done) return done.error();
        common::CountCredits(hold.units * unit, 0);
        return hold;
    }

    Result<Cents> Settle(std::int64_t charge_id, Cents actual, const std::string& reason) override {
        if (charge_id <= 0) return Invalid("charge_id", "must be positive");
        SIGIL_TRY_STATUS(CheckCents("actual", actual, 0));
        SIGIL_TRY_STATUS(CheckText("reason", reason, 1, 200));
        Cents charged = 0;
        Cents settle_delta = 0;  // what this call gave back (> 0) or took (< 0), for the metrics
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            settle_delta = 0;  // a retried transaction starts over
            // Entries never change, so the hold can be read before taking its customer's lock.
            SIGIL_TRY(hold_entry, db.FindEntry(charge_id));
            if (!*hold_entry) {
                return MakeError(ErrorKind::NotFound, "charge_not_found", "no entry " + std::to_string(charge_id));
            }
            const EntryHead hold = **hold_entry;
            if (hold.kind != EntryKind::Charge) {
                return MakeError(ErrorKind::InvalidInput, "not_a_charge",
                                 "entry " + std::to_string(charge_id) + " is not a charge");
            }
            SIGIL_TRY_STATUS(db.Lock(hold.customer));
            SIGIL_TRY(earlier, db.FindSettlement(charge_id));
            if (*earlier) {
                // A retried Settle answers the first result; another amount is a caller bug.
                if ((*earlier)->actual != actual) {
                    return MakeError(ErrorKind::Conflict, "already_settled",
                                     "charge " + std::to_string(charge_id) + " was settled at " +
                                         std::to_string((*earlier)->actual) + " cents");
                }
                charged = (*earlier)->charged;
                return Outcome::Rollback;
            }
            const Cents held = -hold.delta;
            SIGIL_TRY(balance, db.Balance(hold.customer));
            Settlement settled{charge_id, actual, held, std::nullopt};
            Cents delta = 0;
            if (actual < held) {
                delta = held - actual;  // refund
            } else if (actual > held) {
                delta = -std::min(actual - held, *balance);  // what the balance cannot pay is forgiven
            }
            if (delta != 0) {
                SIGIL_TRY(after, AddToBalance(*balance, delta));
                SIGIL_TRY(entry, db.Append({hold.customer, EntryKind::Settle, delta, *after, reason, "", m_now(), hold.spender}));
                settled.entry_id = *entry;
            }
            settled.charged = held - delta;
            SIGIL_TRY_STATUS(db.InsertSettlement(settled));
            charged = settled.charged;
            settle_delta = delta;
            return Outcome::Commit;
        }, Durability::Relaxed);
        if (!done) return done.error();
        common::CountCredits(-settle_delta, settle_delta);
        return charged;
    }

    Result<Cents> MoveBalance(const std::string& from, const std::string& to, const std::string& request_id) override {
        SIGIL_TRY_STATUS(CheckCustomer(from, "from"));
        SIGIL_TRY_STATUS(CheckCustomer(to, "to"));
        if (from == to) return Invalid("to", "must differ from `from`");
        SIGIL_TRY_STATUS(CheckText("request_id", request_id, 0, 128));
        Cents moved = 0;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            moved = 0;
            // Both locks in one global order, so two opposite moves cannot deadlock.
            SIGIL_TRY_STATUS(db.Lock(std::min(from, to)));
            SIGIL_TRY_STATUS(db.Lock(std::max(from, to)));
            SIGIL_TRY(amount, db.Balance(from));
            if (*amount == 0) return Outcome::Rollback;
            SIGIL_TRY(to_balance, db.Balance(to));
            SIGIL_TRY(to_after, AddToBalance(*to_balance, *amount));
            const std::int64_t now = m_now();
            SIGIL_TRY_STATUS(db.Append({from, EntryKind::Move, -*amount, 0, "move:to:" + to, request_id, now}));
            SIGIL_TRY_STATUS(db.Append({to, EntryKind::Move, *amount, *to_after, "move:from:" + from, request_id, now}));
            moved = *amount;
            return Outcome::Commit;
        });
        if (!done) return done.error();
        return moved;
    }

    Result<Cents> MoveBalanceOnce(const std::string& from, const std::string& to, const std::string& move_id,
                                  const std::string& request_id) override {
        SIGIL_TRY_STATUS(CheckCustomer(from, "from"));
        SIGIL_TRY_STATUS(CheckCustomer(to, "to"));
        if (from == to) return Invalid("to", "must differ from `from`");
        SIGIL_TRY_STATUS(CheckText("move_id", move_id, 1, 200));
        SIGIL_TRY_STATUS(CheckText("request_id", request_id, 0, 128));
        // The id lives beside the credit ids (one unique table), prefixed so no credit id collides.
        const std::string once = "move:" + move_id;
        Cents moved = 0;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            moved = 0;
            SIGIL_TRY_STATUS(db.Lock(std::min(from, to)));
            SIGIL_TRY_STATUS(db.Lock(std::max(from, to)));
            SIGIL_TRY(taken, db.HasCredit(once));
            if (*taken) return Outcome::Rollback;
            SIGIL_TRY(amount, db.Balance(from));
            SIGIL_TRY(to_balance, db.Balance(to));
            SIGIL_TRY(to_after, AddToBalance(*to_balance, *amount));
            const std::int64_t now = m_now();
            if (*amount != 0) {
                SIGIL_TRY_STATUS(db.Append({from, EntryKind::Move, -*amount, 0, "move:to:" + to, request_id, now}));
            }
            // The `to` entry is written even for 0: the id row must name an entry.
            SIGIL_TRY(entry, db.Append({to, EntryKind::Move, *amount, *to_after, "move:from:" + from, request_id, now}));
            SIGIL_TRY(inserted, db.InsertCredit(once, *entry));
            if (!*inserted) return Outcome::Rollback;  // another worker took the id meanwhile
            moved = *amount;
            return Outcome::Commit;
        });
        if (!done) return done.error();
        return moved;
    }

    Result<std::vector<LedgerEntry>> Entries(const std::string& customer, std::size_t limit) override {
        SIGIL_TRY_STATUS(CheckCustomer(customer));
        std::vector<LedgerEntry> entries;
        if (limit == 0) return entries;
        const Status done = ReadOnly([&](StoreSession& db) -> Status {
            SIGIL_TRY(found, db.Entries(customer, std::min(limit, MAX_ENTRIES)));
            entries = std::move(*found);
            return common::Success();
        });
        if (!done) return done.error();
        return entries;
    }

    Status PutIntent(const PaymentIntent& intent) override {
        SIGIL_TRY_STATUS(CheckText("intent_id", intent.id, 1, 128));
        SIGIL_TRY_STATUS(CheckCustomer(intent.customer));
        SIGIL_TRY_STATUS(CheckCents("amount_cents", intent.amount_cents, 1));
        SIGIL_TRY_STATUS(CheckText("processor", intent.processor, 1, 32));
        SIGIL_TRY_STATUS(CheckText("reference", intent.reference, 0, 256));
        SIGIL_TRY_STATUS(CheckText("client_secret", intent.client_secret, 0, 512));
        if (intent.created_ms < 0) return Invalid("created_ms", "must not be negative");
        if (intent.from_block > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            return Invalid("from_block", "must fit a signed 64-bit integer");
        }
        PaymentIntent row = intent;
        if (row.created_ms == 0) row.created_ms = m_now();
        return Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY(inserted, db.InsertIntent(row));
            if (!*inserted) return MakeError(ErrorKind::Conflict, "intent_exists", "payment intent " + row.id + " exists");
            return Outcome::Commit;
        });
    }

    Result<std::optional<PaymentIntent>> FindIntent(const std::string& id) override {
        SIGIL_TRY_STATUS(CheckText("intent_id", id, 1, 128));
        std::optional<PaymentIntent> intent;
        const Status done = ReadOnly([&](StoreSession& db) -> Status {
            SIGIL_TRY(found, db.FindIntent(id));
            intent = std::move(*found);
            return common::Success();
        });
        if (!done) return done.error();
        return intent;
    }

    Result<std::optional<StoredAnswer>> Claim(const std::string& scope, const std::string& request_hash,
                                              const ClaimPolicy& policy) override {
        SIGIL_TRY_STATUS(CheckText("scope", scope, 1, 300));
        SIGIL_TRY_STATUS(CheckText("request_hash", request_hash, 1, 128));
        SIGIL_TRY_STATUS(CheckText("owner", policy.owner, 0, 100));
        if (policy.max_per_owner < 0 || policy.lease_ms < 0) return Invalid("policy", "bounds must not be negative");
        std::optional<StoredAnswer> existing;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            const std::int64_t now = m_now();
            SIGIL_TRY_STATUS(db.ExpireAnswers(now - ANSWER_TTL_MS));
            // The owner's rows are counted and added to under its lock (PostgreSQL), so concurrent
            // claims of one account cannot pass its bound together.
            if (!policy.owner.empty()) SIGIL_TRY_STATUS(db.Lock("idempotency:" + policy.owner));
            SIGIL_TRY(found, db.FindAnswer(scope));
            existing = std::move(*found);
            if (existing) {
                // A claim nobody will finish (its worker died mid-request) is taken over after its lease,
                // by the same request only: another body stays 422, whatever the first one did.
                const bool abandoned = existing->status == 0 && policy.lease_ms > 0 &&
                                       existing->created_ms <= now - policy.lease_ms &&
                                       existing->request_hash == request_hash;
                if (abandoned) {
                    SIGIL_TRY(taken, db.TakeOverAnswer(scope, existing->created_ms, now));
                    if (*taken) existing.reset();
                }
                return Outcome::Commit;  // keeps the expiry
            }
            if (!policy.owner.empty() && policy.max_per_owner > 0) {
                SIGIL_TRY(held, db.CountAnswers(policy.owner));
                if (*held >= policy.max_per_owner) {
                    return MakeError(ErrorKind::Overloaded, "idempotency_keys_exhausted",
                                     "this account holds " + std::to_string(*held) +
                                         " Idempotency-Key answers from the last 24 h, its limit; retry without the header "
                                         "or later");
                }
            }
            SIGIL_TRY(inserted, db.InsertPendingAnswer(scope, policy.owner, request_hash, now));
            if (*inserted) return Outcome::Commit;
            // PostgreSQL: a concurrent Claim of the same scope committed first (the insert waited
            // for it); its row is the answer.
            SIGIL_TRY(theirs, db.FindAnswer(scope));
            if (!*theirs) return MakeError(ErrorKind::Unavailable, "ledger_unavailable", "idempotency row vanished; retry");
            existing = std::move(*theirs);
            return Outcome::Commit;
        });
        if (!done) return done.error();
        return existing;
    }

    Status Finish(const std::string& scope, int status, const std::string& body) override {
        SIGIL_TRY_STATUS(CheckText("scope", scope, 1, 300));
        if (status < 100 || status > 599) return Invalid("status", "must be an HTTP status (100 to 599)");
        if (body.size() > MAX_BODY_BYTES) return Invalid("body", "must be at most 1 MiB");
        if (!common::IsUtf8(body) || body.find('\0') != std::string::npos) {
            return Invalid("body", "must be UTF-8 without NUL");
        }
        return Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY(finished, db.FinishAnswer(scope, 0, status, body));
            if (*finished) return Outcome::Commit;
            SIGIL_TRY(row, db.FindAnswer(scope));
            if (!*row) return MakeError(ErrorKind::NotFound, "claim_not_found", "no claim for this idempotency scope");
            return MakeError(ErrorKind::Conflict, "claim_finished", "this idempotency scope already has its answer");
        });
    }

    Result<bool> Replace(const std::string& scope, int from_status, int status, const std::string& body) override {
        SIGIL_TRY_STATUS(CheckText("scope", scope, 1, 300));
        if (from_status < 100 || from_status > 599) return Invalid("from_status", "must be an HTTP status (100 to 599)");
        if (status != 0 && (status < 100 || status > 599)) return Invalid("status", "must be 0 or an HTTP status");
        if (body.size() > MAX_BODY_BYTES) return Invalid("body", "must be at most 1 MiB");
        if (!common::IsUtf8(body) || body.find('\0') != std::string::npos) {
            return Invalid("body", "must be UTF-8 without NUL");
        }
        bool replaced = false;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY(changed, db.FinishAnswer(scope, from_status, status, body));
            replaced = *changed;
            return Outcome::Commit;
        });
        if (!done) return done.error();
        return replaced;
    }

    // Only a pending claim is dropped; a final answer stays for its 24 h, so a late Release after
    // Finish cannot make a retry run twice.
    Status Release(const std::string& scope) override {
        SIGIL_TRY_STATUS(CheckText("scope", scope, 1, 300));
        return Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY_STATUS(db.ReleasePendingAnswer(scope));
            return Outcome::Commit;
        });
    }

    Status SetGuardrails(const KeyGuardrails& guardrails) override {
        SIGIL_TRY_STATUS(CheckText("key", guardrails.key, 1, 100));
        SIGIL_TRY_STATUS(CheckText("account", guardrails.account, 1, 100));
        SIGIL_TRY_STATUS(ValidateGuardrails(guardrails));
        KeyGuardrails row = guardrails;
        row.updated_ms = m_now();
        return Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY_STATUS(db.Lock("guard:" + row.key));
            SIGIL_TRY_STATUS(db.PutGuardrails(row));
            return Outcome::Commit;
        });
    }

    Result<std::optional<KeyGuardrails>> GetGuardrails(const std::string& key) override {
        SIGIL_TRY_STATUS(CheckText("key", key, 1, 100));
        std::optional<KeyGuardrails> found;
        const Status done = ReadOnly([&](StoreSession& db) -> Status {
            SIGIL_TRY(row, db.FindGuardrails(key));
            found = std::move(*row);
            return common::Success();
        });
        if (!done) return done.error();
        return found;
    }

    Result<bool> ClearGuardrails(const std::string& key) override {
        SIGIL_TRY_STATUS(CheckText("key", key, 1, 100));
        bool cleared = false;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY_STATUS(db.Lock("guard:" + key));
            SIGIL_TRY(deleted, db.DeleteGuardrails(key));
            cleared = *deleted;
            return Outcome::Commit;
        });
        if (!done) return done.error();
        return cleared;
    }

    Result<RunPass> AdmitRun(const RunGate& gate, RunRefusal* refusal) override {
        SIGIL_TRY_STATUS(CheckRunGate(gate));
        if (!gate.customer.empty()) {
            SIGIL_TRY_STATUS(CheckCustomer(gate.customer));
            SIGIL_TRY_STATUS(CheckCents("unit", gate.unit, 0));
            if (gate.unit > 0 && gate.max_units <= 0) return Invalid("max_units", "must be positive");
            SIGIL_TRY_STATUS(CheckEntryText(gate.reason, gate.run_id));
            SIGIL_TRY_STATUS(CheckText("spender", gate.spender, 0, 100));
            SIGIL_TRY_STATUS(CheckCents("spender_limit", gate.spender_limit, 0));
        }
        RunPass pass;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            const HoldFn hold = [&](std::optional<Cents> window_left) -> Result<Hold> {
                if (gate.unit > 0) {
                    return HoldIn(db, gate.customer, gate.unit, gate.max_units, gate.reason, gate.run_id, gate.spender,
                                  gate.spender_limit, window_left);
                }
                // Free runs: a hold of nothing, refused only past the key's lifetime cap (as Charge of 0).
                SIGIL_TRY_STATUS(db.Lock(gate.customer));
                SIGIL_TRY(balance, db.Balance(gate.customer));
                if (!gate.spender.empty() && gate.spender_limit > 0) {
                    SIGIL_TRY(spent, db.SpentBy(gate.customer, gate.spender));
                    if (*spent > gate.spender_limit) {
                        return MakeError(ErrorKind::PaymentRequired, "spend_cap_reached",
                                         "this key has spent " + std::to_string(*spent) + " of its " +
                                             std::to_string(gate.spender_limit) + " cents");
                    }
                }
                SIGIL_TRY(entry, db.Append({gate.customer, EntryKind::Charge, 0, *balance, gate.reason, gate.run_id,
                                            m_now(), gate.spender}));
                return Hold{*entry, 0};
            };
            SIGIL_TRY(admitted, GateRun(db, gate, m_now(), hold, refusal));
            pass = std::move(*admitted);
            return Outcome::Commit;
        }, Durability::Relaxed);
        if (!done) return done.error();
        if (pass.hold_id) common::CountCredits(pass.units * gate.unit, 0);
        return pass;
    }

    Status AdmitRequest(const std::string& key, const std::string& client_address, RunRefusal* refusal) override {
        RunGate gate;  // the same field checks as a run's
        gate.key = key;
        gate.client_address = client_address;
        gate.run_id = "request";
        gate.lease_ms = 1;
        SIGIL_TRY_STATUS(CheckRunGate(gate));
        return Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY_STATUS(GateRequest(db, key, client_address, m_now(), refusal));
            return Outcome::Commit;
        }, Durability::Relaxed);
    }

    Status EndRun(const RunPass& pass, std::optional<Cents> charged) override {
        if (!pass.counted && !pass.windowed) return common::Success();
        return Write([&](StoreSession& db) -> Result<Outcome> {
            SIGIL_TRY_STATUS(UngateRun(db, pass, charged));
            return Outcome::Commit;
        }, Durability::Relaxed);
    }

private:
    // ChargeUpTo's hold inside the caller's transaction, also capped by `extra_left` (a key's rolling
    // window, guardrails.h) when set.
    Result<Hold> HoldIn(StoreSession& db, const std::string& customer, Cents unit, std::int64_t max_units,
                        const std::string& reason, const std::string& request_id, const std::string& spender,
                        Cents spender_limit, std::optional<Cents> extra_left) {
        SIGIL_TRY_STATUS(db.Lock(customer));
        SIGIL_TRY(balance, db.Balance(customer));
        Cents allowed = std::min<Cents>(*balance, MAX_CENTS);
        if (allowed < unit) {
            return MakeError(ErrorKind::PaymentRequired, "insufficient_credit",
                             "the balance (" + std::to_string(*balance) + " cents) is below the price (" +
                                 std::to_string(unit) + " cents)");
        }
        if (!spender.empty() && spender_limit > 0) {
            SIGIL_TRY(spent, db.SpentBy(customer, spender));
            const Cents left = spender_limit - *spent;
            if (left < unit) {
                return MakeError(ErrorKind::PaymentRequired, "spend_cap_reached",
                                 "this key has spent " + std::to_string(*spent) + " of its " +
                                     std::to_string(spender_limit) + " cents; the price is " + std::to_string(unit));
            }
            allowed = std::min(allowed, left);
        }
        if (extra_left) allowed = std::min(allowed, *extra_left);  // GateRun refused it below one unit
        Hold hold;
        hold.units = std::min<std::int64_t>(max_units, allowed / unit);
        const Cents cents = hold.units * unit;
        SIGIL_TRY(entry, db.Append({customer, EntryKind::Charge, -cents, *balance - cents, reason, request_id,
                                    m_now(), spender}));
        hold.id = *entry;
        return hold;
    }

    struct Budget {
        std::string id;
        Cents cents = 0;
    };

    // CreditOnce, and with `budget` only while the budget can pay it (both in one transaction).
    Result<BudgetedCredit> Credit(const std::string& customer, const std::string& credit_id, Cents cents,
                                  const std::string& reason, const std::string& request_id, const Budget* budget) {
        SIGIL_TRY_STATUS(CheckCustomer(customer));
        SIGIL_TRY_STATUS(CheckText("credit_id", credit_id, 1, 200));
        SIGIL_TRY_STATUS(CheckCents("cents", cents, 1));
        SIGIL_TRY_STATUS(CheckEntryText(reason, request_id));
        BudgetedCredit outcome = BudgetedCredit::AlreadyCredited;
        const Status done = Write([&](StoreSession& db) -> Result<Outcome> {
            outcome = BudgetedCredit::AlreadyCredited;
            SIGIL_TRY_STATUS(db.Lock(customer));
            SIGIL_TRY(taken, db.HasCredit(credit_id));
            if (*taken) return Outcome::Rollback;
            // An intent is credited only to its own customer and amount: a caller confirming
            // someone else's payment intent gets nothing.
            SIGIL_TRY(intent, db.FindIntent(credit_id));
            if (*intent && ((*intent)->customer != customer || (*intent)->amount_cents != cents)) {
                return MakeError(ErrorKind::Conflict, "intent_mismatch",
                                 "payment intent " + credit_id + " is for another customer or amount");
            }
            if (budget != nullptr) {
                // Taken after the customer's lock, always in this order: no two credits wait on each other.
                SIGIL_TRY_STATUS(db.Lock("budget:" + budget->id));
                SIGIL_TRY(used, db.BudgetUsed(budget->id));
                if (*used > budget->cents - cents) {
                    outcome = BudgetedCredit::BudgetExhausted;
                    return Outcome::Rollback;
                }
            }
            SIGIL_TRY(balance, db.Balance(customer));
            SIGIL_TRY(after, AddToBalance(*balance, cents));
            SIGIL_TRY(entry, db.Append({customer, EntryKind::Credit, cents, *after, reason, request_id, m_now()}));
            // Another customer's transaction may have taken the id meanwhile (it holds another
            // lock); the unique credit id decides, and the loser writes nothing.
            SIGIL_TRY(inserted, db.InsertCredit(credit_id, *entry));
            if (!*inserted) return Outcome::Rollback;
            if (*intent) SIGIL_TRY_STATUS(db.MarkIntentCredited(credit_id));
            if (budget != nullptr) SIGIL_TRY_STATUS(db.AddBudgetUsed(budget->id, cents));
            outcome = BudgetedCredit::Credited;
            return Outcome::Commit;
        });
        if (!done) return done.error();
        return outcome;
    }

    // The store's transaction and read, with any exception (allocation failure) turned into an
    // error: nothing escapes the Ledger interface.
    Status Write(const std::function<Result<Outcome>(StoreSession&)>& work, Durability durability = Durability::Full) {
        const common::ActivityScope activity(common::Activity::Ledger);
        common::DependencyTimer timer(common::Dependency::Ledger);
        try {
            Status done = m_store->Transaction(work, durability);
            if (done.ok() || !IsStoreFailure(done.error())) timer.MarkOk();
            return done;
        } catch (const std::exception& e) {
            return MakeError(ErrorKind::Internal, "ledger_error", std::string("ledger: ") + e.what());
        }
    }
    Status ReadOnly(const std::function<Status(StoreSession&)>& work) {
        const common::ActivityScope activity(common::Activity::Ledger);
        common::DependencyTimer timer(common::Dependency::Ledger);
        try {
            Status done = m_store->Read(work);
            if (done.ok() || !IsStoreFailure(done.error())) timer.MarkOk();
            return done;
        } catch (const std::exception& e) {
            return MakeError(ErrorKind::Internal, "ledger_error", std::string("ledger: ") + e.what());
        }
    }

    std::unique_ptr<LedgerStore> m_store;
    NowMsFn m_now;
};

}  // namespace

std::unique_ptr<Ledger> MakeStoredLedger(std::unique_ptr<LedgerStore> store, NowMsFn now_ms) {
    return std::make_unique<StoredLedger>(std::move(store), std::move(now_ms));
}

}  // namespace sigil::workers::billing
