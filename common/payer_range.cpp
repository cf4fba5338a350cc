#include "common/payer_range.h"

#include <string>

namespace sigil::common {

Result<PayerRange> SplitPayers(std::uint32_t payers, std::uint32_t index, std::uint32_t instances) {
    if (instances == 0 || index >= instances) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config",
                         "[chain] instance_index (" + std::to_string(index) + ") must be below instance_count (" +
                             std::to_string(instances) + ")");
    }
    if (payers < instances) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config",
                         "[chain] payers (" + std::to_string(payers) + ") must be at least instance_count (" +
                             std::to_string(instances) + "): each instance needs a payer wallet of its own");
    }
    // 64-bit products: payers and instances are at most 1024 each, but the rule should not depend on it.
    const auto edge = [&](std::uint64_t i) { return static_cast<std::uint32_t>(i * payers / instances); };
    PayerRange r;
    r.first = edge(index);
    r.count = edge(std::uint64_t{index} + 1) - r.first;
    return r;
}

Result<PayerRange> PayerRangeFromConfig(const Config& config) {
    return SplitPayers(static_cast<std::uint32_t>(config.GetInt("chain", "payers")),
                       static_cast<std::uint32_t>(config.GetInt("chain", "instance_index")),
                       static_cast<std::uint32_t>(config.GetInt("chain", "instance_count")));
}

}  // namespace sigil::common
