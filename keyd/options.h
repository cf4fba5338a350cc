// sigil-keyd's command line: parsed and validated into KeydOptions (no side effects).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::keyd {

struct KeydOptions {
    std::string socket_path;                // --socket PATH (required)
    std::string root_key_file;              // --root-key-file PATH (development key source)
    std::string tee_key_service;            // --tee-key-service SOCKET (production; exclusive with the file)
    std::vector<uid_t> allowed_uids;        // --allowed-uid UID, repeatable (required)
    std::optional<gid_t> socket_group;      // --socket-group GID: directory 0750, socket 0660
    std::uint64_t chain_id = 0;             // --chain-id N (required, > 0)
    common::Address20 contract{};           // --contract 0xADDR (required: AccountConfig)
    std::uint32_t payers = 16;              // --payers N (0..1024)
    std::size_t max_connections = 1024;     // --max-connections N (1..4096): one per worker, and a pool grows to hundreds
    std::uint64_t max_fee_per_gas = 0;      // --max-fee-per-gas WEI (0 = KeyPolicy's default)
    std::uint64_t max_priority_fee_per_gas = 0;  // --max-priority-fee-per-gas WEI (0 = default)
    std::uint64_t max_gas_limit = 0;        // --max-gas-limit GAS (0 = default)
    bool help = false;                      // --help
    bool print_payers = false;              // --print-payers: print the payer addresses as JSON and exit
};

// The usage text printed for --help and after a command-line error.
std::string_view KeydUsage();

// Parses argv[1..] (program name excluded). Every option takes one value as the next argument.
// Errors: InvalidInput "invalid_arguments" naming the offending option (unknown option, missing
// value, bad number or address, a required option missing, both or neither key sources).
common::Result<KeydOptions> ParseKeydOptions(std::span<const std::string_view> args);

}  // namespace sigil::keyd
