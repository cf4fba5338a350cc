// Running actions (POST /core/v1/sigil_action): the execution-flow check, the code by CID
// (code_source), the run in a sandbox child (sandbox_host), the ops the child asks its worker for
// (ops), and the answer's shape. The [actions] limits are in settings.
//
// Trust: everything a run sends is untrusted. Each PKP operation is authorized on its own
// (canExecute of the caller's key, the running CID and that PKP), so an action can use exactly
// the keys its caller could have run it with; key material comes from keyd for the PKP's
// registered (account, path) and never leaves the worker except as the op's answer.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <rapidjson/document.h>

#include "common/result.h"
#include "workers/actions/code_source.h"
#include "workers/actions/sandbox_host.h"
#include "workers/actions/settings.h"
#include "workers/chain/caller.h"
#include "workers/chain/service.h"

namespace sigil::workers {

// What POST /core/v1/sigil_action asks for, validated.
struct ActionRequest {
    std::optional<std::string> code;     // inline source
    std::optional<std::string> ipfs_id;  // CIDv0 to fetch
    std::optional<common::Address20> pkp;
    std::string params_json = "{}";
    bool receipt = false;  // `receipt: true`: answer a signed receipt too (workers/api/receipt.h)
    std::string client_address;  // the HTTP client's address (the worker's REMOTE_ADDR), for caller()
};

// The answer: {"response", "logs", "has_error", "error"?}.
struct ActionResult {
    std::string cid;
    RunOutcome outcome;
    std::string logs;
    std::string ResponseJson() const;
    // The bytes of the answer's `response` member, exactly as ResponseJson writes them ("" when the
    // run did not complete): what a receipt's responseHash covers.
    std::string ResponseMember() const;
    // For a run that did not complete: the error as one line, "<name>: <message>" for what the
    // script threw ("Error: boom", as the action's own runtime would print it), the message else.
    std::string ErrorText() const;
    // The answer's error.code ("" for a run that completed): what the run history records.
    std::string ErrorCode() const;
};

class ActionRunner {
public:
    // Connects to the supervisor's shared zygotes when $SIGIL_ZYGOTE_SOCKET names them, else starts
    // a zygote of its own: call before the worker touches any request data (DESIGN.md section 1).
    // Errors: those of Zygote::Connect or Zygote::Start.
    static common::Result<std::unique_ptr<ActionRunner>> Create(ActionSettings settings);

    const ActionSettings& settings() const { return m_settings; }

    // Parses and validates the body. Errors (400 unless noted): "invalid_input" (neither or both
    // of code and ipfs_id), TooLarge "code_too_large" / "js_params_too_large", "invalid_ipfs_id",
    // "invalid_pkp_id", "invalid_field".
    common::Result<ActionRequest> ParseRequest(const rapidjson::Document* body) const;

    // The execution flow: CID, authorization (Forbidden "not_authorized": no group the key may
    // execute on lists the CID and the PKP; nothing is fetched or run), code, run.
    // Errors besides the flow's: the chain's and keyd's Unavailable/Timeout errors, those of
    // LoadCode, and the zygote's infrastructure errors. A script error or a limit hit is a result,
    // not an error.
    // `admission.admit`, when set, is asked once the run is authorized and before anything is
    // fetched from a gateway or any of the action's code runs (billing holds what the run may cost
    // there, and may shorten its time limit to what it held): with the code at hand (cached or
    // inline) while the zygote forks the child; its error is the request's, and then nothing of the
    // action ran. `admission.started` is told when the run's time counts for the caller: its code is
    // handed to the sandbox, or the gateways were waited on for a CID none of them had in time
    // (GatewayMiss::Missing; the wait is bounded by the run's time limit). A failure before either
    // (no gateway reachable, keyd or the zygote down) never starts the run.
    common::Result<ActionResult> Run(Service& service, const Caller& caller, const ActionRequest& request,
                                     const RunAdmission& admission = {});

    std::size_t cached_entries() const { return m_cache.size(); }

    // The pool's secret for lowered code in the shared folder (ReadLoweredCode); without one, each
    // worker lowers a CID once for itself.
    void SetLoweredCacheKey(common::ByteView key) { m_lowered_key.assign(key.begin(), key.end()); }

private:
    ActionRunner(ActionSettings settings, Zygote zygote)
        : m_settings(std::move(settings)),
          m_zygote(std::move(zygote)),
          m_cache(m_settings.code_cache_entries),
          m_modules(m_settings.code_cache_entries) {}

    ActionSettings m_settings;
    Zygote m_zygote;
    CodeCache m_cache;
    // Modules imported by CID, apart from actions: a module's lowered text keeps its exports and
    // an action's drops them (workers/actions/imports.h).
    CodeCache m_modules;
    common::Bytes m_lowered_key;
};

}  // namespace sigil::workers
