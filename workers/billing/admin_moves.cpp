#include "workers/billing/admin_moves.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "common/hex.h"
#include "common/keccak.h"
#include "common/log.h"

namespace sigil::workers::billing {
namespace {

common::Address20 AddressTopic(const common::Hash32& topic) {
    common::Address20 a{};
    std::copy(topic.begin() + 12, topic.end(), a.begin());
    return a;
}

}  // namespace

std::optional<AdminChange> AdminChangeOf(const LogEntry& log) {
    static const common::Hash32 TRANSFERRED =
        common::Keccak256Hash(std::string_view("OwnershipTransferred(uint256,address,address)"));
    static const common::Hash32 CONVERTED =
        common::Keccak256Hash(std::string_view("AccountConverted(uint256,address,address)"));
    if (log.topics.size() != 4 || (log.topics[0] != TRANSFERRED && log.topics[0] != CONVERTED)) return std::nullopt;
    return AdminChange{AddressTopic(log.topics[2]), AddressTopic(log.topics[3])};
}

common::Status FollowAdminChange(Ledger& ledger, const LogEntry& log) {
    const auto change = AdminChangeOf(log);
    if (!change || change->previous == change->next) return common::Success();
    if (log.tx_hash.empty()) {
        return common::MakeError(common::ErrorKind::Internal, "log_without_id", "an admin change without its transaction hash");
    }
    const std::string from = common::HexEncode(change->previous, true);
    const std::string to = common::HexEncode(change->next, true);
    auto moved = ledger.MoveBalanceOnce(from, to, log.tx_hash + ":" + std::to_string(log.log_index), "chain:" + log.tx_hash);
    if (!moved.ok()) return moved.error();
    if (*moved != 0) {
        common::LogInfo("admin change " + log.tx_hash + ": moved " + std::to_string(*moved) + " cents from " + from + " to " + to);
    }
    return common::Success();
}

}  // namespace sigil::workers::billing
