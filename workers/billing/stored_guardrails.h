// The guardrails' rules over a store's statements (store.h), written once for SQLite and PostgreSQL:
// the ledger (stored_ledger.cpp) runs them inside its own transactions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "common/result.h"
#include "workers/billing/guardrails.h"
#include "workers/billing/ledger.h"
#include "workers/billing/store.h"

namespace sigil::workers::billing {

// Checks a gate's fields before any transaction. Errors: InvalidInput.
common::Status CheckRunGate(const RunGate& gate);

// Takes the hold a run's billing wants, given what the key's rolling window still allows
// (nullopt: no window cap). Runs inside the same transaction.
using HoldFn = std::function<common::Result<Ledger::Hold>(std::optional<Cents> window_left)>;

// The key's guardrails checked and its counters taken, in the caller's transaction: the key's and the
// address's token, a run row under the in-flight cap, then the hold (when gate.customer is set) with
// its window row. Errors as Ledger::AdmitRun; the caller rolls back on any.
common::Result<RunPass> GateRun(StoreSession& db, const RunGate& gate, std::int64_t now_ms, const HoldFn& hold,
                                RunRefusal* refusal);

// A usage key's relayed write (Ledger::AdmitRequest): a token from the key's bucket and one from its
// address's, when those rates are set, in the caller's transaction. Errors: Overloaded "rate_limited".
common::Status GateRequest(StoreSession& db, const std::string& key, const std::string& client_address,
                           std::int64_t now_ms, RunRefusal* refusal);

// Gives an admitted run's counters back (Ledger::EndRun), in the caller's transaction.
common::Status UngateRun(StoreSession& db, const RunPass& pass, std::optional<Cents> charged);

}  // namespace sigil::workers::billing
