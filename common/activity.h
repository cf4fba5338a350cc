// What this process's current request is blocked on, published in its scoreboard slot: /health's
// requests in flight by kind, and the chain reserve (chain-bound calls never take the workers kept
// for chain-free requests).
#pragma once

#include <cstdint>

#include "common/scoreboard.h"

namespace sigil::common {

// Binds this process to its slot (once, at worker start; the scoreboard must outlive every scope).
// `chain_bound_limit`: how many slots may wait on the chain node at once ([supervisor] max_workers
// - reserve_workers); 0 = no limit. Without a call, scopes are no-ops and every chain call is admitted.
void BindActivitySlot(Scoreboard* scoreboard, std::uint32_t slot, std::uint32_t chain_bound_limit);

// Sets this process's slot activity for its lifetime and restores the previous one after (scopes
// nest: a receipt wait polls through chain calls). A Chain scope that starts outside a Chain or
// Receipt one is admitted only while the pool's chain-bound slots (Chain or Receipt), this one
// included, stay within the limit; an unadmitted scope still restores on destruction, and the
// caller refuses its call. (A Receipt scope is always admitted: its write is already broadcast.)
class ActivityScope {
public:
    explicit ActivityScope(Activity activity);
    ~ActivityScope();
    ActivityScope(const ActivityScope&) = delete;
    ActivityScope& operator=(const ActivityScope&) = delete;

    // False when the chain reserve refused this scope (see above); always true for other kinds.
    bool admitted() const { return m_admitted; }

private:
    std::uint32_t m_previous = 0;
    bool m_admitted = true;
};

}  // namespace sigil::common
