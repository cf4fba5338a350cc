// Running actions: POST /core/v1/sigil_action (the spec's execution flow, DESIGN.md sections 4-5)
// and the limits every run is held to.
#include <memory>

#include "workers/actions/runner.h"
#include "workers/api/api.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

constexpr const char* kRunRequestSchema =
    R"J({"type":"object","properties":{)J"
    R"J("code":{"type":"string","description":"the action's JavaScript source (give this or ipfs_id)"},)J"
    R"J("ipfs_id":{"type":"string","pattern":"^Qm[1-9A-HJ-NP-Za-km-z]{44}$","description":"CIDv0 of the code, fetched from the configured gateways and verified"},)J"
    R"J("pkp_id":{"type":"string","pattern":"^0x[0-9a-fA-F]{40}$","description":"the PKP the run may use; checked with the CID before the run"},)J"
    R"J("js_params":{"description":"passed to main(); any JSON value, usually an object"}}})J";

constexpr const char* kRunResponseSchema =
    R"J({"type":"object","required":["response","logs","has_error"],"properties":{)J"
    R"J("response":{"description":"main()'s return value, else the last setResponse; strings stay strings, other values are JSON"},)J"
    R"J("logs":{"type":"string","description":"console output, one line per call"},)J"
    R"J("has_error":{"type":"boolean"},)J"
    R"J("error":{"type":"object","required":["code","message"],"properties":{)J"
    R"J("code":{"type":"string","description":"script_error, syntax_error, time_limit, memory_limit, response_limit, log_limit, fetch_limit, key_request_limit, op_limit, sandbox_violation, sandbox_crashed"},)J"
    R"J("name":{"type":"string","description":"the JavaScript error's name (script errors)"},)J"
    R"J("message":{"type":"string"},"stack":{"type":"string"}}}}})J";

constexpr const char* kActionConfigSchema =
    R"J({"type":"object","required":["timeout_ms","memory_limit_bytes","max_code_bytes","max_js_params_bytes",)J"
    R"J("max_response_bytes","max_console_log_bytes","max_fetch_count","max_key_requests"],"properties":{)J"
    R"J("timeout_ms":{"type":"integer","description":"wall-clock limit of one run"},)J"
    R"J("memory_limit_bytes":{"type":"integer","description":"sandbox heap limit"},)J"
    R"J("max_code_bytes":{"type":"integer","description":"largest action source"},)J"
    R"J("max_js_params_bytes":{"type":"integer","description":"largest serialized js_params"},)J"
    R"J("max_response_bytes":{"type":"integer","description":"largest serialized response"},)J"
    R"J("max_console_log_bytes":{"type":"integer","description":"console output kept per run"},)J"
    R"J("max_fetch_count":{"type":"integer","description":"fetch calls per run"},)J"
    R"J("max_key_requests":{"type":"integer","description":"key operations (sign, encrypt...) per run"},)J"
    R"J("fetch_timeout_ms":{"type":"integer","description":"time budget of one fetch"},)J"
    R"J("fetch_max_response_bytes":{"type":"integer","description":"largest fetch response body"}}})J";

common::Result<HttpResponse> RunAction(Service& service, ActionRunner* runner, RequestContext& ctx) {
    if (runner == nullptr) {
        return MakeError(ErrorKind::Unavailable, "sandbox_unavailable", "this worker has no action sandbox");
    }
    SIGIL_TRY(request, runner->ParseRequest(ctx.json));
    SIGIL_TRY(result, runner->Run(service, CallerOf(ctx), *request));
    return JsonResponse(200, result->ResponseJson());
}

}  // namespace

void AddRunRoutes(Router& router, Service& service, ActionRunner* runner) {
    router.Add({"POST", "/core/v1/sigil_action", AuthRequirement::ApiKey, BodyKind::Json,
                [&service, runner](RequestContext& ctx) { return RunAction(service, runner, ctx); },
                "Run an action (inline code or by CID) with a usage or account key; allowed only if a group the "
                "key may execute on lists the action's CID and the PKP",
                "actions", kRunRequestSchema, kRunResponseSchema});
    auto settings = std::make_shared<ActionSettings>();
    if (runner != nullptr) {
        *settings = runner->settings();
    } else if (auto defaults = ActionSettings::FromConfig(common::Config::Defaults()); defaults.ok()) {
        *settings = std::move(defaults).value();
    }
    router.Add({"GET", "/core/v1/get_action_client_config", AuthRequirement::None, BodyKind::None,
                [settings](RequestContext&) -> common::Result<HttpResponse> {
                    return JsonResponse(200, settings->ClientConfigJson());
                },
                "Limits every action run is held to", "configuration", "", kActionConfigSchema});
}

}  // namespace sigil::workers
