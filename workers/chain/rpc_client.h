// JSON-RPC client for the Ethereum node: libcurl transport with keep-alive, timeouts and retries.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "workers/chain/json_rpc.h"

namespace sigil::workers {

struct RpcOptions {
    std::string url;                                        // e.g. http://127.0.0.1:8545
    std::chrono::milliseconds connect_timeout{2000};        // TCP connect
    std::chrono::milliseconds total_timeout{10000};         // whole request, so a stuck node never hangs us
    int read_retries = 3;                                   // extra attempts for idempotent calls
    std::chrono::milliseconds retry_backoff{100};           // doubled after each failed attempt
};

// Moves request bodies to the node and response bodies back. Implementations: libcurl here; a
// test may substitute its own to inject faults.
class RpcTransport {
public:
    virtual ~RpcTransport() = default;
    // POSTs `body`; returns the response body of an HTTP 200. Errors: Unavailable "chain_unreachable"
    // (connect refused, reset, non-200), Timeout "chain_timeout".
    virtual common::Result<std::string> Post(std::string_view body) = 0;
};

// One libcurl easy handle reused across calls, so the TCP connection is kept alive.
std::unique_ptr<RpcTransport> MakeCurlTransport(const RpcOptions& options);

class RpcClient {
public:
    RpcClient(std::unique_ptr<RpcTransport> transport, RpcOptions options);

    // Calls `method` with `params_json` (a JSON array). Idempotent calls (reads) are retried with
    // backoff on transport failures; non-idempotent ones are tried once. A JSON-RPC error is not a
    // transport failure: it comes back as RpcReply::is_error for the caller to interpret.
    common::Result<RpcReply> Call(std::string_view method, std::string_view params_json, bool idempotent = true);

    // Call that must succeed with a non-error reply; a JSON-RPC error becomes Unavailable "rpc_error".
    common::Result<std::string> CallForResult(std::string_view method, std::string_view params_json,
                                              bool idempotent = true);

private:
    std::unique_ptr<RpcTransport> m_transport;
    RpcOptions m_options;
    std::uint64_t m_next_id = 1;
};

}  // namespace sigil::workers
