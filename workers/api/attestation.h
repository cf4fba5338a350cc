// GET /attestation and GET /info: the TEE guest agent's GetQuote and Info relayed (DESIGN.md
// section 6). The nonce-less quote and the info are cached per worker, since a quote costs tens of
// ms and the agent serves one at a time; a quote bound to a caller's nonce is always fresh (nginx
// rate-limits every /attestation request with a query per client address) and domain-separated, so
// no caller can obtain a quote over the evidence set's report_data.
#pragma once

#include <string>

#include "workers/http/router.h"

namespace sigil::workers {

struct AttestationSettings {
    std::string agent_socket;  // [worker] dstack_socket; empty = both routes answer 503
    int timeout_ms = 5000;     // [worker] attestation_timeout_ms
    int cache_ms = 60000;      // [worker] attestation_cache_ms; 0 = ask the agent every time
};

//   GET /attestation          200 the agent's GetQuote answer for report_data all zeros
//                             ({quote, event_log, report_data, vm_config}, "simulated" when simulated)
//   GET /attestation?nonce=H  the same for report_data = SHA-512("sigil/attestation-nonce/v1" || H)
//                             (H: hex, 0x optional, 1..64 bytes; evidence/agent/report_data.h), never
//                             cached; 400 invalid_nonce otherwise
//   Any other query (another parameter, a percent-encoded name, nonce twice): 400 invalid_query.
//   GET /info                 200 the agent's Info answer with tcb_info as an object (the agent sends a string)
//   Either: 503 attestation_unavailable (Retry-After: 5) when no agent is configured, it cannot be
//   reached, it fails, answers something that is not a JSON object, or does not answer in time.
void AddAttestationRoutes(Router& router, const AttestationSettings& settings);

}  // namespace sigil::workers
