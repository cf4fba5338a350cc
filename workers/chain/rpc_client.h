// JSON-RPC client for the Ethereum node: libcurl transport with keep-alive, a time budget per
// request, retries within it, and the pool-wide circuit breaker.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "workers/chain/circuit.h"
#include "workers/chain/json_rpc.h"

namespace sigil::workers {

struct RpcOptions {
    std::string url;                                        // e.g. http://127.0.0.1:8545
    std::chrono::milliseconds connect_timeout{2000};        // TCP connect
    std::chrono::milliseconds total_timeout{10000};         // one attempt, so a stuck node never hangs us
    int read_retries = 3;                                   // extra attempts for idempotent calls
    std::chrono::milliseconds retry_backoff{100};           // doubled after each failed attempt
    // An attempt the budget left less than this (a run's op near its deadline) that times out says
    // nothing about the node: it is not counted in the circuit (RunOps::MIN_CHAIN_BUDGET).
    std::chrono::milliseconds starved_below{250};
};

// Moves request bodies to the node and response bodies back. Implementations: libcurl here; a
// test may substitute its own to inject faults.
class RpcTransport {
public:
    virtual ~RpcTransport() = default;
    // POSTs `body`, giving up after `timeout`; returns the response body of an HTTP 200.
    // Errors: Suspended "chain_unavailable" (connect refused, reset, non-200), Timeout "chain_timeout".
    virtual common::Result<std::string> Post(std::string_view body, std::chrono::milliseconds timeout) = 0;
};

// One libcurl easy handle reused across calls, so the TCP connection is kept alive.
std::unique_ptr<RpcTransport> MakeCurlTransport(const RpcOptions& options);

class RpcClient {
public:
    using Clock = std::chrono::steady_clock;

    // `circuit` (may be null: no breaker) must outlive the client.
    RpcClient(std::unique_ptr<RpcTransport> transport, RpcOptions options, ChainCircuit* circuit = nullptr);

    // Every call from now until the next StartBudget shares one deadline, now + `budget`: an HTTP
    // request (or one op of a run) never waits on the node for longer, however many calls and
    // retries it makes. Without a budget, only each attempt's total_timeout bounds a call.
    void StartBudget(std::chrono::milliseconds budget) { m_deadline = Clock::now() + budget; }
    void ClearBudget() { m_deadline.reset(); }

    // Pushes the deadline out to at least `deadline` while it lives (a relayed write waiting for
    // its receipt has its own, longer timeout), then restores the previous one.
    class ExtendedDeadline {
    public:
        ExtendedDeadline(RpcClient& rpc, Clock::time_point deadline);
        ~ExtendedDeadline() { m_rpc.m_deadline = m_saved; }
        ExtendedDeadline(const ExtendedDeadline&) = delete;
        ExtendedDeadline& operator=(const ExtendedDeadline&) = delete;

    private:
        RpcClient& m_rpc;
        std::optional<Clock::time_point> m_saved;
    };

    // Calls `method` with `params_json` (a JSON array). Idempotent calls (reads) are retried with
    // backoff on transport failures while the budget lasts; non-idempotent ones are tried once. A
    // JSON-RPC error is not a transport failure: it comes back as RpcReply::is_error for the caller
    // to interpret. Errors: Suspended "chain_unavailable" (the node failed, or
    // the circuit is open: then at once, without touching the network), Timeout
    // "chain_timeout" (no answer within the attempt's timeout or the budget).
    common::Result<RpcReply> Call(std::string_view method, std::string_view params_json, bool idempotent = true);

    // Call that must succeed with a non-error reply; a JSON-RPC error becomes Unavailable "rpc_error".
    common::Result<std::string> CallForResult(std::string_view method, std::string_view params_json,
                                              bool idempotent = true);

private:
    // Call's attempts and circuit; Call adds the metrics around it (common/metrics.h).
    common::Result<RpcReply> CallUncounted(std::string_view method, std::string_view params_json, bool idempotent);

    std::unique_ptr<RpcTransport> m_transport;
    RpcOptions m_options;
    ChainCircuit* m_circuit;
    std::optional<Clock::time_point> m_deadline;
    std::uint64_t m_next_id = 1;
};

}  // namespace sigil::workers
