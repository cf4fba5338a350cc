// Which of the API payer wallets this instance sends from: the instance's own share of [chain] payers
// when several instances share one chain (DESIGN.md section 7), so no two instances ever hold the same
// payer's nonce sequence.
#pragma once

#include <cstdint>

#include "common/config.h"
#include "common/result.h"

namespace sigil::common {

// Payer indices [first, first + count) of keyd's wallets 0..payers-1.
struct PayerRange {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
};

// Instance `index` of `instances` gets the contiguous share [index * payers / instances,
// (index + 1) * payers / instances): the shares of instances 0..instances-1 are disjoint and cover
// every payer, and each instance computes its own from its three numbers alone. Errors:
// InvalidInput "invalid_config" when index >= instances or payers < instances (an instance without a
// payer could never relay a write; refused at start rather than at the first write).
Result<PayerRange> SplitPayers(std::uint32_t payers, std::uint32_t index, std::uint32_t instances);

// The same from [chain] payers, instance_index and instance_count.
Result<PayerRange> PayerRangeFromConfig(const Config& config);

}  // namespace sigil::common
