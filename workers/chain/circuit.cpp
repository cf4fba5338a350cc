#include "workers/chain/circuit.h"

namespace sigil::workers {

ChainCircuit::ChainCircuit(CircuitOptions options, common::SharedCircuit* shared)
    : m_options(options), m_state(shared != nullptr ? shared : &m_own) {}

ChainCircuit::Admission ChainCircuit::Admit(std::int64_t now_ms, std::int64_t probe_budget_ms) {
    std::int64_t open_until = m_state->open_until_ms.load(std::memory_order_acquire);
    if (open_until == 0) return Admission::Closed;
    if (now_ms < open_until) return Admission::Refused;
    // The refusal time is over: exactly one caller wins the right to probe, and the circuit stays
    // open for the others while it does.
    const std::int64_t probe_until = now_ms + (probe_budget_ms > 0 ? probe_budget_ms : 1);
    if (m_state->open_until_ms.compare_exchange_strong(open_until, probe_until, std::memory_order_acq_rel)) {
        return Admission::Probe;
    }
    return open_until == 0 ? Admission::Closed : Admission::Refused;
}

void ChainCircuit::RecordSuccess() {
    m_state->failures.store(0, std::memory_order_relaxed);
    m_state->open_until_ms.store(0, std::memory_order_release);
}

void ChainCircuit::RecordAnswer(std::int64_t started_ms, std::int64_t now_ms, Admission admission) {
    if (now_ms - started_ms > m_options.slow_call.count()) {
        RecordFailure(now_ms, admission);
    } else {
        RecordSuccess();
    }
}

void ChainCircuit::RecordFailure(std::int64_t now_ms, Admission admission) {
    const std::int64_t reopen_until = now_ms + m_options.open_for.count();
    if (admission == Admission::Probe) {
        m_state->open_until_ms.store(reopen_until, std::memory_order_release);
        return;
    }
    const std::uint32_t failures = m_state->failures.fetch_add(1, std::memory_order_relaxed) + 1;
    if (failures < m_options.failure_threshold) return;
    // Open it unless it already is (another worker's failure got there first).
    std::int64_t expected = 0;
    m_state->open_until_ms.compare_exchange_strong(expected, reopen_until, std::memory_order_acq_rel);
}

bool ChainCircuit::IsOpen(std::int64_t now_ms) const {
    const std::int64_t open_until = m_state->open_until_ms.load(std::memory_order_acquire);
    return open_until != 0 && now_ms < open_until;
}

}  // namespace sigil::workers
