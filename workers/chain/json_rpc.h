// Ethereum JSON-RPC 2.0 codec (sans-IO): request bodies out, parsed results and errors in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::workers {

// A JSON-RPC call: `params_json` is the already-serialized JSON array of parameters.
std::string BuildRpcRequest(std::string_view method, std::string_view params_json, std::uint64_t id);

// The outcome of one JSON-RPC response.
struct RpcReply {
    std::string result_json;        // the "result" member re-serialized as JSON (e.g. "\"0x1\"" or "null")
    bool is_error = false;          // the node answered with an "error" member
    std::int64_t error_code = 0;    // JSON-RPC error code (3 = execution reverted on geth/anvil)
    std::string error_message;      // the node's text
    std::optional<common::Bytes> revert_data;  // "error.data" when it is 0x-hex (revert payload)
};

// Parses a response body. Refuses bodies that are not JSON objects, lack both result and error,
// or whose id differs from `expected_id` (code "rpc_bad_response", kind Unavailable: the node, not
// the client, misbehaved).
common::Result<RpcReply> ParseRpcResponse(std::string_view body, std::uint64_t expected_id);

// JSON helpers for the quantities and data Ethereum nodes exchange.
// "0x..." quantity without leading zeros -> uint64 (refuses > 64 bits, empty, bad hex).
common::Result<std::uint64_t> ParseQuantity(std::string_view hex);
// uint64 -> "0x..." quantity (0 -> "0x0").
std::string FormatQuantity(std::uint64_t v);
// Unwraps a JSON string result such as "\"0xabc\"" into its text; refuses non-strings.
common::Result<std::string> ResultString(std::string_view result_json);

}  // namespace sigil::workers
