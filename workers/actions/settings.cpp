#include "workers/actions/settings.h"

#include "workers/actions/fetch_policy.h"
#include "workers/sandbox/protocol/runtime_level.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;

namespace {

// "a, b,,c " -> {"a", "b", "c"}: a comma-separated list with blanks trimmed and empty items dropped.
std::vector<std::string> SplitList(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string::npos) comma = text.size();
        std::string item = text.substr(pos, comma - pos);
        const auto b = item.find_first_not_of(" \t");
        const auto e = item.find_last_not_of(" \t");
        if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
        pos = comma + 1;
    }
    return out;
}

}  // namespace

Result<ActionSettings> ActionSettings::FromConfig(const common::Config& config) {
    ActionSettings s;
    auto i = [&config](const char* key) { return config.GetInt("actions", key); };
    s.run.time_ms = static_cast<std::uint64_t>(i("timeout_ms"));
    s.run.memory_bytes = static_cast<std::uint64_t>(i("memory_bytes"));
    s.run.max_response_bytes = static_cast<std::size_t>(i("max_response_bytes"));
    s.run.max_log_bytes = static_cast<std::size_t>(i("max_log_bytes"));
    s.max_code_bytes = static_cast<std::size_t>(i("max_code_bytes"));
    s.max_js_params_bytes = static_cast<std::size_t>(i("max_js_params_bytes"));
    s.max_fetch_count = static_cast<std::uint32_t>(i("max_fetch_count"));
    s.max_key_requests = static_cast<std::uint32_t>(i("max_key_requests"));
    // Ops past both limits would be refused anyway; the channel cap stops a flood of them.
    s.run.max_ops = s.max_fetch_count + s.max_key_requests + 1;
    s.fetch_timeout_ms = static_cast<int>(i("fetch_timeout_ms"));
    s.fetch_max_response_bytes = static_cast<std::size_t>(i("fetch_max_response_bytes"));
    s.fetch_allowed_addresses = SplitList(config.GetString("actions", "fetch_allowed_addresses"));
    s.public_hosts = SplitList(config.GetString("worker", "public_hosts"));
    if (auto policy = MakeFetchPolicy(s.fetch_allowed_addresses, s.public_hosts); !policy.ok()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config",
                         "[actions] fetch_allowed_addresses or [worker] public_hosts: " + policy.error().message);
    }
    s.ipfs_gateways = SplitList(config.GetString("actions", "ipfs_gateways"));
    for (const auto& g : s.ipfs_gateways) {
        if (g.rfind("http://", 0) != 0 && g.rfind("https://", 0) != 0) {
            return MakeError(ErrorKind::InvalidInput, "invalid_config",
                             "[actions] ipfs_gateways: '" + g + "' is not an http(s) URL prefix");
        }
    }
    s.ipfs_timeout_ms = static_cast<int>(i("ipfs_timeout_ms"));
    s.code_cache_entries = static_cast<std::size_t>(i("code_cache_entries"));
    s.code_cache_dir = config.GetString("actions", "code_cache_dir");
    s.sandbox_path = config.GetString("actions", "sandbox_path");
    s.lowerer_socket = config.GetString("actions", "lowerer_socket");
    return s;
}

namespace {

// The runtime's level (runtime_level.h): constants, so built once.
const std::string& RuntimeJson() {
    static const std::string json = [] {
        auto quoted = [](std::string_view s) { return "\"" + std::string(s) + "\""; };
        std::string globals;
        for (auto name : SANDBOX_WEB_GLOBALS) globals += (globals.empty() ? "" : ",") + quoted(name);
        return "{\"engine\":" + quoted(SANDBOX_ENGINE) + ",\"syntax_level\":" + quoted(SANDBOX_SYNTAX_LEVEL) +
               ",\"lowering\":" + quoted(SANDBOX_LOWERING) + ",\"ethers_version\":" + quoted(SANDBOX_ETHERS_VERSION) +
               ",\"web_globals\":[" + globals + "]}";
    }();
    return json;
}

}  // namespace

std::string ActionSettings::ClientConfigJson() const {
    return "{\"timeout_ms\":" + std::to_string(run.time_ms) + ",\"memory_limit_bytes\":" +
           std::to_string(run.memory_bytes) + ",\"max_code_bytes\":" + std::to_string(max_code_bytes) +
           ",\"max_js_params_bytes\":" + std::to_string(max_js_params_bytes) +
           ",\"max_response_bytes\":" + std::to_string(run.max_response_bytes) +
           ",\"max_console_log_bytes\":" + std::to_string(run.max_log_bytes) +
           ",\"max_fetch_count\":" + std::to_string(max_fetch_count) +
           ",\"max_key_requests\":" + std::to_string(max_key_requests) +
           ",\"fetch_timeout_ms\":" + std::to_string(fetch_timeout_ms) +
           ",\"fetch_max_response_bytes\":" + std::to_string(fetch_max_response_bytes) + ",\"runtime\":" + RuntimeJson() +
           "}";
}

}  // namespace sigil::workers
