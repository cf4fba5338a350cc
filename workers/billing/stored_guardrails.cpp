#include "workers/billing/stored_guardrails.h"

#include <string>

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;

namespace {

Status CheckPrintable(const std::string& field, const std::string& value, std::size_t min, std::size_t max) {
    bool ok = value.size() >= min && value.size() <= max;
    for (unsigned char c : value) ok = ok && c >= 0x20 && c <= 0x7e;
    if (ok) return common::Success();
    return MakeError(ErrorKind::InvalidInput, "invalid_" + field,
                     field + " must be " + std::to_string(min) + " to " + std::to_string(max) + " printable bytes");
}

common::Error RateLimited(const std::string& what, const BucketTake& take, std::int64_t rate_milli, RunRefusal* refusal) {
    const int seconds = RetryAfterSeconds(take.tokens, rate_milli);
    if (refusal != nullptr) refusal->retry_after_s = seconds;
    return MakeError(ErrorKind::Overloaded, "rate_limited", what + "; retry after " + std::to_string(seconds) + " s");
}

// The key's token, then its address's (none when that rate is not set or the address is unknown).
Status TakeRates(StoreSession& db, const std::optional<KeyGuardrails>& g, const std::string& key,
                 const std::string& client_address, std::int64_t now_ms, RunRefusal* refusal) {
    if (g && g->rate_milli > 0) {
        SIGIL_TRY(take, db.TakeToken("key:" + key, g->rate_milli, g->burst, now_ms));
        if (!take->granted) return RateLimited("this key's rate limit is reached", *take, g->rate_milli, refusal);
    }
    if (g && g->address_rate_milli > 0 && !client_address.empty()) {
        SIGIL_TRY(take, db.TakeToken("addr:" + key + ":" + client_address, g->address_rate_milli, g->address_burst, now_ms));
        if (!take->granted) {
            return RateLimited("this key's rate limit for your address is reached", *take, g->address_rate_milli, refusal);
        }
    }
    return common::Success();
}

}  // namespace

Status GateRequest(StoreSession& db, const std::string& key, const std::string& client_address, std::int64_t now_ms,
                   RunRefusal* refusal) {
    SIGIL_TRY_STATUS(db.Lock("guard:" + key));
    SIGIL_TRY(found, db.FindGuardrails(key));
    return TakeRates(db, *found, key, client_address, now_ms, refusal);
}

Status CheckRunGate(const RunGate& gate) {
    SIGIL_TRY_STATUS(CheckPrintable("key", gate.key, 1, 100));
    SIGIL_TRY_STATUS(CheckPrintable("client_address", gate.client_address, 0, 100));
    SIGIL_TRY_STATUS(CheckPrintable("run_id", gate.run_id, 1, 128));
    if (gate.default_in_flight < 0 || gate.lease_ms <= 0) {
        return MakeError(ErrorKind::InvalidInput, "invalid_gate", "default_in_flight and lease_ms must be positive");
    }
    return common::Success();
}

Result<RunPass> GateRun(StoreSession& db, const RunGate& gate, std::int64_t now_ms, const HoldFn& hold,
                        RunRefusal* refusal) {
    RunPass pass;
    pass.run_id = gate.run_id;
    // One key's admissions queue behind each other (PostgreSQL; SQLite's write lock already does), so
    // the count of its runs and the sum of its window are read and added to by one admission at a time.
    SIGIL_TRY_STATUS(db.Lock("guard:" + gate.key));
    std::optional<KeyGuardrails> g;
    if (gate.usage_key) {
        SIGIL_TRY(found, db.FindGuardrails(gate.key));
        g = std::move(*found);
    }
    SIGIL_TRY_STATUS(TakeRates(db, g, gate.key, gate.client_address, now_ms, refusal));
    const std::int64_t cap = g && g->max_runs_in_flight >= 0 ? g->max_runs_in_flight : gate.default_in_flight;
    if (cap > 0) {
        SIGIL_TRY_STATUS(db.PruneRuns(gate.key, now_ms));
        SIGIL_TRY(running, db.CountRuns(gate.key, now_ms));
        if (*running >= cap) {
            return MakeError(ErrorKind::Overloaded, "too_many_runs",
                             "this key already has " + std::to_string(cap) + " runs in flight; retry when one ends");
        }
        SIGIL_TRY_STATUS(db.InsertRun(gate.run_id, gate.key, now_ms + gate.lease_ms));
        pass.counted = true;
    }
    if (gate.customer.empty()) return pass;
    std::optional<Cents> window_left;
    if (g && g->window_cap_cents > 0) {
        const std::int64_t since = WindowStartMs(now_ms, g->window_seconds);
        SIGIL_TRY_STATUS(db.PruneWindow(gate.key, since));
        SIGIL_TRY(spent, db.WindowSpent(gate.key, since));
        window_left = g->window_cap_cents - *spent;
        if (*window_left < gate.unit || (gate.unit == 0 && *window_left <= 0)) {
            return MakeError(ErrorKind::PaymentRequired, "spend_cap_reached",
                             "this key's runs have cost " + std::to_string(*spent) + " of the " +
                                 std::to_string(g->window_cap_cents) + " cents it may spend in " +
                                 std::to_string(g->window_seconds) + " s");
        }
    }
    SIGIL_TRY(held, hold(window_left));
    pass.hold_id = held->id;
    pass.units = held->units;
    if (window_left) {
        SIGIL_TRY_STATUS(db.InsertWindowSpend(held->id, gate.key, now_ms, held->units * gate.unit));
        pass.windowed = true;
    }
    return pass;
}

Status UngateRun(StoreSession& db, const RunPass& pass, std::optional<Cents> charged) {
    if (pass.counted) SIGIL_TRY_STATUS(db.DeleteRun(pass.run_id));
    if (pass.windowed && pass.hold_id && charged) SIGIL_TRY_STATUS(db.SetWindowSpend(*pass.hold_id, *charged));
    return common::Success();
}

}  // namespace sigil::workers::billing
