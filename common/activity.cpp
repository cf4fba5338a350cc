#include "common/activity.h"

namespace sigil::common {
namespace {

// Process-wide: a worker serves one request at a time on one thread, so its slot's activity is
// that request's. Set once before any request.
Scoreboard* g_scoreboard = nullptr;
std::uint32_t g_slot = 0;
std::uint32_t g_chain_bound_limit = 0;

bool ChainBound(std::uint32_t activity) {
    return activity == static_cast<std::uint32_t>(Activity::Chain) ||
           activity == static_cast<std::uint32_t>(Activity::Receipt);
}

}  // namespace

void BindActivitySlot(Scoreboard* scoreboard, std::uint32_t slot, std::uint32_t chain_bound_limit) {
    g_scoreboard = scoreboard;
    g_slot = slot;
    g_chain_bound_limit = chain_bound_limit;
}

ActivityScope::ActivityScope(Activity activity) {
    if (g_scoreboard == nullptr) return;
    const auto now = static_cast<std::uint32_t>(activity);
    m_previous = g_scoreboard->Slot(g_slot).activity.exchange(now, std::memory_order_acq_rel);
    // Published first, counted after: two workers racing for the last chain-bound place both
    // count each other, so at worst both are refused, never both admitted past the limit.
    if (activity == Activity::Chain && !ChainBound(m_previous) && g_chain_bound_limit > 0) {
        m_admitted = g_scoreboard->CountChainBound() <= g_chain_bound_limit;
    }
}

ActivityScope::~ActivityScope() {
    if (g_scoreboard != nullptr) g_scoreboard->Slot(g_slot).activity.store(m_previous, std::memory_order_release);
}

}  // namespace sigil::common
