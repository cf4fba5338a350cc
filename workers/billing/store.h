// The primitives a ledger store provides (SQLite, PostgreSQL); the ledger's rules are written once
// over them in stored_ledger.cpp, so both stores behave identically.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "workers/billing/guardrails.h"
#include "workers/billing/ledger.h"

namespace sigil::workers::billing {

// Unix time in milliseconds; injectable so tests can move the clock (idempotency expiry).
using NowMsFn = std::function<std::int64_t()>;
std::int64_t WallClockMs();

// What wrote an entry. Settle only settles a Charge; kept in the entries' `kind` column.
enum class EntryKind { Credit, Charge, Settle, Move };
const char* EntryKindName(EntryKind kind);
std::optional<EntryKind> ParseEntryKind(const std::string& name);

struct NewEntry {
    std::string customer;
    EntryKind kind = EntryKind::Charge;
    Cents delta = 0;
    Cents balance_after = 0;
    std::string reason;
    std::string request_id;
    std::int64_t at_ms = 0;
    std::string spender;  // the usage key that spent (a charge or its settlement), "" for none
};

// Whether Append adds the entry to its spender's running total (the `spent` table SpentBy reads).
inline bool CountsAsSpent(const NewEntry& e) {
    return !e.spender.empty() && (e.kind == EntryKind::Charge || e.kind == EntryKind::Settle);
}

// The part of an entry Settle needs to check its hold.
struct EntryHead {
    std::string customer;
    EntryKind kind = EntryKind::Charge;
    Cents delta = 0;
    std::string spender;
};

// A settled hold: Settle runs once per charge; a repeat with the same `actual` answers `charged`.
struct Settlement {
    std::int64_t charge_id = 0;
    Cents actual = 0;
    Cents charged = 0;
    std::optional<std::int64_t> entry_id;  // none when settling wrote nothing
};

// One connection's statements, inside a transaction (Transaction) or one by one (Read). Every
// method is one statement.
class StoreSession {
public:
    virtual ~StoreSession() = default;

    // Holds `key` until the transaction ends. SQLite: nothing to do, BEGIN IMMEDIATE already holds
    // the whole database; PostgreSQL: a transaction-scoped advisory lock on a hash of the key.
    virtual common::Status Lock(const std::string& key) = 0;

    virtual common::Result<Cents> Balance(const std::string& customer) = 0;
    // What `spender` has spent from `customer`: minus the sum of its charges and settlements.
    virtual common::Result<Cents> SpentBy(const std::string& customer, const std::string& spender) = 0;
    virtual common::Result<std::int64_t> Append(const NewEntry& entry) = 0;  // answers the entry id
    virtual common::Result<std::vector<LedgerEntry>> Entries(const std::string& customer, std::size_t limit) = 0;
    virtual common::Result<std::optional<EntryHead>> FindEntry(std::int64_t id) = 0;

    virtual common::Result<bool> HasCredit(const std::string& credit_id) = 0;
    // false when the id is already taken (nothing written).
    virtual common::Result<bool> InsertCredit(const std::string& credit_id, std::int64_t entry_id) = 0;

    virtual common::Result<std::optional<Settlement>> FindSettlement(std::int64_t charge_id) = 0;
    virtual common::Status InsertSettlement(const Settlement& settlement) = 0;

    virtual common::Result<std::optional<PaymentIntent>> FindIntent(const std::string& id) = 0;
    virtual common::Result<bool> InsertIntent(const PaymentIntent& intent) = 0;  // false: id taken
    virtual common::Status MarkIntentCredited(const std::string& id) = 0;

    // What a budget (the starter credit's, per day) has paid out so far (0 for one never used), and
    // adding to it.
    virtual common::Result<Cents> BudgetUsed(const std::string& budget_id) = 0;
    virtual common::Status AddBudgetUsed(const std::string& budget_id, Cents cents) = 0;

    virtual common::Status ExpireAnswers(std::int64_t created_before_ms) = 0;
    virtual common::Result<std::optional<StoredAnswer>> FindAnswer(const std::string& scope) = 0;
    // The rows (pending or final) `owner` holds.
    virtual common::Result<std::int64_t> CountAnswers(const std::string& owner) = 0;
    // Inserts a pending row; false when the scope is already there (nothing written).
    virtual common::Result<bool> InsertPendingAnswer(const std::string& scope, const std::string& owner,
                                                     const std::string& request_hash, std::int64_t created_ms) = 0;
    // Moves a pending row claimed at `claimed_ms` to `now_ms` (a claim taken over after its lease);
    // false when the row is no longer that claim (nothing written): of two takers, one wins.
    virtual common::Result<bool> TakeOverAnswer(const std::string& scope, std::int64_t claimed_ms, std::int64_t now_ms) = 0;
    // Replaces the row's answer if its status is `from_status` (0: a pending row); false when the
    // scope has no row with that status (nothing written). A compare-and-set: of two writers that
    // read the same row, only one replaces it.
    virtual common::Result<bool> FinishAnswer(const std::string& scope, int from_status, int status,
                                              const std::string& body) = 0;
    virtual common::Status ReleasePendingAnswer(const std::string& scope) = 0;

    // Key guardrails (guardrails.h; stored_guardrails.cpp writes their rules over these).
    virtual common::Result<std::optional<KeyGuardrails>> FindGuardrails(const std::string& key) = 0;
    virtual common::Status PutGuardrails(const KeyGuardrails& guardrails) = 0;  // inserts or replaces
    // Also forgets the key's buckets, runs and window rows. false when the key had none.
    virtual common::Result<bool> DeleteGuardrails(const std::string& key) = 0;
    // Takes one token from `bucket` (created full), refilled at `rate_milli` micro-tokens per
    // millisecond since its last use up to `burst` tokens (RefilledTokens): one statement, so it is
    // exact however many instances take from it. A refused take changes nothing worth keeping.
    virtual common::Result<BucketTake> TakeToken(const std::string& bucket, std::int64_t rate_milli, std::int64_t burst,
                                                 std::int64_t now_ms) = 0;
    // Runs in flight: rows whose lease ends after `now_ms` count.
    virtual common::Result<std::int64_t> CountRuns(const std::string& key, std::int64_t now_ms) = 0;
    virtual common::Status InsertRun(const std::string& run_id, const std::string& key, std::int64_t expires_ms) = 0;
    virtual common::Status DeleteRun(const std::string& run_id) = 0;
    virtual common::Status PruneRuns(const std::string& key, std::int64_t now_ms) = 0;  // expired rows
    // The rolling window: one row per hold of a key with a window cap, at the hold's time and amount,
    // replaced by what the run was finally charged.
    virtual common::Result<Cents> WindowSpent(const std::string& key, std::int64_t since_ms) = 0;
    virtual common::Status InsertWindowSpend(std::int64_t charge_id, const std::string& key, std::int64_t at_ms,
                                             Cents cents) = 0;
    virtual common::Status SetWindowSpend(std::int64_t charge_id, Cents cents) = 0;
    virtual common::Status PruneWindow(const std::string& key, std::int64_t before_ms) = 0;
};

// What a transaction's work decided: keep its writes or drop them (the answer is still a success,
// e.g. CreditOnce finding the credit id taken).
enum class Outcome { Commit, Rollback };

// How hard a commit waits for the disk. Full: the commit survives a power loss (credits, moves,
// intents, idempotency answers: what a client was told it has). Relaxed: it survives the process and
// the database server dying, but the last commits may be lost with the machine's power (SQLite
// synchronous = NORMAL in WAL mode; PostgreSQL synchronous_commit = off): charges and settlements,
// whose loss only ever favours the customer, and which sit on every run's path.
enum class Durability { Full, Relaxed };

class LedgerStore {
public:
    virtual ~LedgerStore() = default;

    // Runs `work` in one transaction able to read and then write: committed when it answers
    // Commit, rolled back when it answers Rollback or an error. `work` may run twice (PostgreSQL
    // retries once on a fresh connection when the old one broke before COMMIT was sent), so it
    // must assign its outputs, not accumulate them.
    virtual common::Status Transaction(const std::function<common::Result<Outcome>(StoreSession&)>& work,
                                       Durability durability = Durability::Full) = 0;

    // Runs read-only `work`, each statement on its own (no transaction needed for one SELECT).
    virtual common::Status Read(const std::function<common::Status(StoreSession&)>& work) = 0;
};

// The Ledger over a store: validation, the balance rules, charges, settlement, idempotency.
std::unique_ptr<Ledger> MakeStoredLedger(std::unique_ptr<LedgerStore> store, NowMsFn now_ms);

}  // namespace sigil::workers::billing
