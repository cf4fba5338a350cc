#include "keyd/options.h"

#include <charconv>
#include <limits>

#include "keyd/protocol.h"
#include "common/secp256k1.h"

namespace sigil::keyd {
namespace {

common::Error Bad(std::string message) {
    return common::MakeError(common::ErrorKind::InvalidInput, "invalid_arguments", std::move(message));
}

// A decimal integer in [min, max], nothing else.
template <typename T>
bool ParseNumber(std::string_view text, std::uint64_t min, std::uint64_t max, T* out) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || v < min || v > max) return false;
    *out = static_cast<T>(v);
    return true;
}

}  // namespace

std::string_view KeydUsage() {
    return "usage: sigil-keyd --socket PATH (--root-key-file PATH | --tee-key-service SOCKET)\n"
           "                  --allowed-uid UID [--allowed-uid UID ...] --chain-id N --contract 0xADDR\n"
           "                  [--payers N] [--socket-group GID] [--max-connections N]\n"
           "                  [--max-fee-per-gas WEI] [--max-priority-fee-per-gas WEI] [--max-gas-limit GAS]\n"
           "       sigil-keyd --print-payers (--root-key-file PATH | --tee-key-service SOCKET) [--payers N]\n"
           "                  prints {\"api_payers\": [...], \"admin_payer\": ...} for deploying the contract\n";
}

common::Result<KeydOptions> ParseKeydOptions(std::span<const std::string_view> args) {
    KeydOptions o;
    bool have_chain = false, have_contract = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view flag = args[i];
        if (flag == "--help" || flag == "-h") {
            o.help = true;
            continue;
        }
        if (flag == "--print-payers") {
            o.print_payers = true;
            continue;
        }
        if (i + 1 >= args.size()) return Bad("missing value for " + std::string(flag));
        const std::string_view value = args[++i];
        constexpr std::uint64_t U32_MAX = std::numeric_limits<std::uint32_t>::max();
        if (flag == "--socket") {
            o.socket_path = value;
        } else if (flag == "--root-key-file") {
            o.root_key_file = value;
        } else if (flag == "--tee-key-service") {
            o.tee_key_service = value;
        } else if (flag == "--allowed-uid") {
            uid_t uid = 0;
            if (!ParseNumber(value, 0, U32_MAX - 1, &uid)) return Bad("bad --allowed-uid " + std::string(value));
            o.allowed_uids.push_back(uid);
        } else if (flag == "--socket-group") {
            gid_t gid = 0;
            if (!ParseNumber(value, 0, U32_MAX - 1, &gid)) return Bad("bad --socket-group " + std::string(value));
            o.socket_group = gid;
        } else if (flag == "--chain-id") {
            if (!ParseNumber(value, 1, std::numeric_limits<std::uint64_t>::max(), &o.chain_id)) {
                return Bad("bad --chain-id " + std::string(value));
            }
            have_chain = true;
        } else if (flag == "--contract") {
            auto address = common::ParseAddress(value);
            if (!address.ok()) return Bad("bad --contract " + std::string(value) + ": " + address.error().message);
            o.contract = *address;
            have_contract = true;
        } else if (flag == "--payers") {
            if (!ParseNumber(value, 0, keyd::IPC_MAX_PAYERS, &o.payers)) return Bad("bad --payers " + std::string(value));
        } else if (flag == "--max-connections") {
            if (!ParseNumber(value, 1, 4096, &o.max_connections)) {
                return Bad("bad --max-connections " + std::string(value));
            }
        } else if (flag == "--max-fee-per-gas" || flag == "--max-priority-fee-per-gas" || flag == "--max-gas-limit") {
            std::uint64_t* cap = flag == "--max-fee-per-gas"            ? &o.max_fee_per_gas
                                 : flag == "--max-priority-fee-per-gas" ? &o.max_priority_fee_per_gas
                                                                        : &o.max_gas_limit;
            if (!ParseNumber(value, 1, std::numeric_limits<std::uint64_t>::max(), cap)) {
                return Bad("bad " + std::string(flag) + " " + std::string(value));
            }
        } else {
            return Bad("unknown option " + std::string(flag));
        }
    }
    if (o.help) return o;
    if (o.root_key_file.empty() == o.tee_key_service.empty()) {
        return Bad("exactly one of --root-key-file and --tee-key-service is required");
    }
    if (o.print_payers) return o;  // needs only the key source
    if (o.socket_path.empty()) return Bad("--socket is required");
    if (o.allowed_uids.empty()) return Bad("at least one --allowed-uid is required");
    if (!have_chain) return Bad("--chain-id is required");
    if (!have_contract) return Bad("--contract is required");
    return o;
}

}  // namespace sigil::keyd
