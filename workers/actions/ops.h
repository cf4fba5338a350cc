// The worker's side of one run: the ops a sandbox child asks for (PKP keys bound to the caller's
// account, the action's own key, fetch), each checked on its own and bounded by the run's time.
//
// Trust: every op argument is untrusted. A PKP is used only if canExecute(caller's key, the running
// CID, that PKP) holds and its registered address is the one derived for (account, path), so an
// action can use exactly the keys its caller could have run it with.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "common/bytes.h"
#include "keyd/client/keyd_client.h"
#include "common/result.h"
#include "workers/actions/sandbox_host.h"
#include "workers/actions/settings.h"
#include "workers/chain/caller.h"
#include "workers/chain/service.h"

namespace sigil::workers {

// The PKP operations (signEcdsa, signMessage, signTypedData, getPublicKey, getPrivateKey, encrypt,
// decrypt) on keys the caller has already authorized: the one implementation the service's runs and
// `sigil-worker --run-local` (local_run.h, throw-away keys) share. Errors: InvalidInput "invalid_op".
common::Result<std::string> PkpKeyOp(std::string_view name, const rapidjson::Document& args, const keyd::PkpKeys& keys);

// One fetch op within `settings` (address policy, timeout, size) and the run's `left` time; the
// caller counts fetches against max_fetch_count. Errors: "invalid_op" and those of workers::Fetch.
common::Result<std::string> FetchOp(const rapidjson::Document& args, const ActionSettings& settings,
                                    std::chrono::milliseconds left);

class RunOps : public OpHandler {
public:
    // Below this much of the run's time left, a chain call cannot be told apart from a node that
    // is failing (an answer takes a round trip and a read of the contract): its timeout is the
    // run's time limit, never the chain's failure, and never counts in the pool's circuit
    // (RpcOptions::starved_below is the same floor on the client's side).
    static constexpr std::chrono::milliseconds MIN_CHAIN_BUDGET{250};

    // `authorized_pkp`: the PKP the execution flow already authorized for this run (not asked again).
    RunOps(Service& service, const Caller& caller, const ActionSettings& settings, std::string cid,
           std::optional<common::Address20> authorized_pkp);

    // Errors are the op's answer to the script: InvalidInput "invalid_op", Forbidden "not_authorized"
    // / "pkp_key_mismatch", a code ending in "_limit" (ends the run), the chain's and keyd's errors.
    common::Result<std::string> OnOp(std::string_view name, std::string_view args_json) override;
    common::Status OnLog(std::string_view text) override;
    void OnStart(const RunLimits& limits) override;
    // The run's console lines, each ended by a newline.
    std::string TakeLogs();
    // A key op's error of kind Unavailable, Timeout, Suspended or Internal (keyd or the chain failed)
    // ends the run, and the request answers with it. A fetch's errors stay the script's: the server
    // it reaches is the action's business. A chain call the run's own deadline starved (it began
    // with less than MIN_CHAIN_BUDGET left, or timed out once the run's time was up) is not the
    // service's failure: the op answers "time_limit", which ends the run at its time limit.
    bool OpFailedOnOurSide() const override { return m_service_failure.has_value(); }
    std::optional<common::Error> TakeServiceFailure() { return std::move(m_service_failure); }

private:
    common::Result<std::string> Dispatch(std::string_view name, std::string_view args_json);
    common::Result<std::string> ActionPrivateKey();
    common::Result<std::string> ActionPublic(const rapidjson::Document& args, bool address);
    common::Result<const keyd::PkpKeys*> KeysFor(const rapidjson::Document& args, common::Address20* pkp_out);
    common::Result<std::string> PkpOp(std::string_view name, const rapidjson::Document& args);
    common::Result<std::string> Fetch(const rapidjson::Document& args, std::chrono::milliseconds left);
    std::chrono::milliseconds RunTimeLeft() const;

    Service& m_service;
    const Caller& m_caller;
    const ActionSettings& m_settings;
    std::string m_cid;
    common::Hash32 m_cid_hash;
    std::map<common::Address20, bool> m_authorized;
    std::map<common::Address20, keyd::PkpKeys> m_keys;  // wiped when the run ends
    std::chrono::steady_clock::time_point m_run_deadline;
    std::uint32_t m_key_requests = 0;
    std::uint32_t m_fetches = 0;
    std::string m_logs;
    std::optional<common::Error> m_service_failure;
};

}  // namespace sigil::workers
