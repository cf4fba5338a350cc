// Running actions (POST /core/v1/sigil_action): the execution-flow check, the code by CID (inline
// or from IPFS gateways, verified and cached), the run in a sandbox child, and the ops the child
// asks its worker for (PKP keys bound to the caller's account, action keys, fetch).
//
// Trust: everything a run sends is untrusted. Each PKP operation is authorized on its own
// (canExecute of the caller's key, the running CID and that PKP), so an action can use exactly
// the keys its caller could have run it with; key material comes from keyd for the PKP's
// registered (account, path) and never leaves the worker except as the op's answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <rapidjson/document.h>

#include "common/config.h"
#include "common/result.h"
#include "workers/actions/sandbox_host.h"
#include "workers/chain/caller.h"
#include "workers/chain/service.h"

namespace sigil::workers {

// The [actions] section (DESIGN.md section 5 defaults), as get_action_client_config reports it.
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

    // Errors: InvalidInput "invalid_config" naming the key (a gateway that is not http(s), an allowed
    // fetch address that is not an IP address, a public host that is not a name).
    static common::Result<ActionSettings> FromConfig(const common::Config& config);
    // The JSON object of GET /core/v1/get_action_client_config.
    std::string ClientConfigJson() const;
};

// Action code by CID, least recently used first out. An entry holds either the source or, once
// a run lowered it, the lowered text (all a later run needs).
class CodeCache {
public:
    struct Entry {
        std::string code;
        bool lowered = false;
    };
    explicit CodeCache(std::size_t max_entries, std::size_t max_bytes = 128u << 20)
        : m_max_entries(max_entries), m_max_bytes(max_bytes) {}
    const Entry* Find(const std::string& cid);  // marks it recently used
    void Put(const std::string& cid, Entry entry);
    std::size_t size() const { return m_map.size(); }

private:
    using List = std::list<std::pair<std::string, Entry>>;
    std::size_t m_max_entries;
    std::size_t m_max_bytes;
    std::size_t m_bytes = 0;
    List m_lru;  // front = most recent
    std::unordered_map<std::string, List::iterator> m_map;
};

// What POST /core/v1/sigil_action asks for, validated.
struct ActionRequest {
    std::optional<std::string> code;     // inline source
    std::optional<std::string> ipfs_id;  // CIDv0 to fetch
    std::optional<common::Address20> pkp;
    std::string params_json = "{}";
};

// The answer: {"response", "logs", "has_error", "error"?}.
struct ActionResult {
    std::string cid;
    RunOutcome outcome;
    std::string logs;
    std::string ResponseJson() const;
};

class ActionRunner {
public:
    // Starts the zygote: call before the worker touches any request data (DESIGN.md section 1).
    // Errors: those of Zygote::Start.
    static common::Result<std::unique_ptr<ActionRunner>> Create(ActionSettings settings);

    const ActionSettings& settings() const { return m_settings; }

    // Parses and validates the body. Errors (400 unless noted): "invalid_input" (neither or both
    // of code and ipfs_id), TooLarge "code_too_large" / "js_params_too_large", "invalid_ipfs_id",
    // "invalid_pkp_id", "invalid_field".
    common::Result<ActionRequest> ParseRequest(const rapidjson::Document* body) const;

    // The execution flow: CID, authorization (Forbidden "not_authorized": no group the key may
    // execute on lists the CID and the PKP; nothing is fetched or run), code, run.
    // Errors besides the flow's: the chain's and keyd's Unavailable/Timeout errors, Unavailable
    // "ipfs_unavailable" / "ipfs_cid_mismatch" (every gateway failed or sent other bytes), and
    // the zygote's infrastructure errors. A script error or a limit hit is a result, not an error.
    common::Result<ActionResult> Run(Service& service, const Caller& caller, const ActionRequest& request);

    // The code of `cid` from the cache or the gateways (verified against the CID).
    common::Result<CodeCache::Entry> LoadByCid(const std::string& cid);

    std::size_t cached_entries() const { return m_cache.size(); }

private:
    ActionRunner(ActionSettings settings, Zygote zygote)
        : m_settings(std::move(settings)), m_zygote(std::move(zygote)), m_cache(m_settings.code_cache_entries) {}

    ActionSettings m_settings;
    Zygote m_zygote;
    CodeCache m_cache;
};

}  // namespace sigil::workers
