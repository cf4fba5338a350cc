// The TEE guest agent's client: GetQuote and Info over the agent's unix socket (dstack's HTTP API,
// evidence/README.md), each bounded in time and size. Used by the worker's /attestation and /info
// and by sigil-evidence. Its answers are public data; they are checked to be JSON objects, nothing more.
#pragma once

#include <cstddef>
#include <string>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::evidence {

// The most report_data a quote can bind (TDX: 64 bytes).
constexpr std::size_t REPORT_DATA_BYTES = 64;

struct AgentOptions {
    std::string socket_path;              // e.g. /var/run/dstack.sock
    int timeout_ms = 5000;                // whole request, connect included
    std::size_t max_answer_bytes = 4u << 20;
};

class AgentClient {
public:
    explicit AgentClient(AgentOptions options) : m_options(std::move(options)) {}

    // The agent's GetQuote answer (a JSON object: quote, event_log, report_data, vm_config) for
    // `report_data` (at most REPORT_DATA_BYTES; the agent pads it with zeros).
    // Errors: InvalidInput "invalid_report_data" (too long); Unavailable "attestation_unavailable"
    // (no socket configured, cannot connect, the agent failed or answered something that is not a
    // JSON object); Timeout "attestation_timeout".
    common::Result<std::string> GetQuote(common::ByteView report_data) const;

    // The agent's Info answer (a JSON object: app_id, compose_hash, tcb_info, ...). Errors as GetQuote's.
    common::Result<std::string> Info() const;

    const AgentOptions& options() const { return m_options; }

private:
    common::Result<std::string> Post(const std::string& path, const std::string& body) const;

    AgentOptions m_options;
};

}  // namespace sigil::evidence
