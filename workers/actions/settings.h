// The [actions] section of the configuration: every limit a run is held to and where its code
// comes from, as GET /core/v1/get_action_client_config reports it (DESIGN.md section 5 defaults).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "workers/actions/sandbox_host.h"

namespace sigil::workers {

struct ActionSettings {
    RunLimits run;                      // time, memory, response, log; max_ops = fetches + keys
    std::size_t max_code_bytes = 16u << 20;
    std::size_t max_js_params_bytes = 64u << 10;
    std::uint32_t max_fetch_count = 50;
    std::uint32_t max_key_requests = 10;
    int fetch_timeout_ms = 10000;
    std::size_t fetch_max_response_bytes = 1u << 20;
    std::vector<std::string> fetch_allowed_addresses;
    std::vector<std::string> public_hosts;   // [worker] public_hosts: fetch refuses them (loop protection)
    std::vector<std::string> ipfs_gateways;  // URL prefixes; the CID is appended
    int ipfs_timeout_ms = 15000;
    std::size_t code_cache_entries = 256;
    std::string code_cache_dir;  // "" = no shared cache
    std::string sandbox_path;    // the sigil-sandbox executable; "" = beside the running program
    std::string lowerer_socket;  // sigil-lowerer's socket (lowerer_client.h); "" = the child lowers

    // Errors: InvalidInput "invalid_config" naming the key (a gateway that is not http(s), an allowed
    // fetch address that is not an IP address, a public host that is not a name).
    static common::Result<ActionSettings> FromConfig(const common::Config& config);
    // The JSON object of GET /core/v1/get_action_client_config.
    std::string ClientConfigJson() const;
};

}  // namespace sigil::workers
