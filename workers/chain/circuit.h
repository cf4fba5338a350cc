// The chain circuit breaker (DESIGN.md section 10): after repeated failed calls to the node (no
// answer, or an answer slower than slow_call: a node that stalls ties up callers as surely as one
// that fails), calls are refused at once for a short time, then one probe call tests the node while the others are
// still refused; the probe's success closes the circuit for everyone.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/scoreboard.h"

namespace sigil::workers {

struct CircuitOptions {
    std::uint32_t failure_threshold = 3;        // consecutive failed calls that open the circuit
    std::chrono::milliseconds open_for{500};    // refusal time before the next probe
    std::chrono::milliseconds slow_call{1000};  // an answer slower than this counts as a failure
};

// Sans-IO over the shared state: callers pass the clock (common::MonotonicMs in production), so
// the transitions are unit-tested without sleeping. The state may be shared by every worker (the
// scoreboard's ChainCircuit) or be this object's own.
class ChainCircuit {
public:
    enum class Admission {
        Closed,   // healthy: call
        Probe,    // open, and this caller tests the node; report its outcome
        Refused,  // open: fail at once (503 chain_unavailable)
    };

    explicit ChainCircuit(CircuitOptions options, common::SharedCircuit* shared = nullptr);

    // May a call start at now_ms? A Probe holds the circuit open for `probe_budget_ms` (its own
    // time limit), so a caller that dies mid-probe only delays the next probe.
    Admission Admit(std::int64_t now_ms, std::int64_t probe_budget_ms);
    // The node answered (any JSON-RPC reply, errors included): closes the circuit.
    void RecordSuccess();
    // The node answered a call admitted (as `admission`) at started_ms: a success if it took no
    // longer than slow_call, else a failure at now_ms.
    void RecordAnswer(std::int64_t started_ms, std::int64_t now_ms, Admission admission);
    // No usable answer (refused, reset, timeout, garbage): counts; opens at the threshold, and
    // reopens at once after a failed probe.
    void RecordFailure(std::int64_t now_ms, Admission admission);

    bool IsOpen(std::int64_t now_ms) const;

private:
    CircuitOptions m_options;
    common::SharedCircuit m_own;
    common::SharedCircuit* m_state;
};

}  // namespace sigil::workers
