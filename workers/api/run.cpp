// Running actions: POST /core/v1/sigil_action (the spec's execution flow, DESIGN.md sections 4-5)
// and the limits every run is held to.
#include <memory>
#include <optional>

#include "workers/actions/fetch_policy.h"
#include "workers/actions/runner.h"
#include "workers/api/api.h"
#include "workers/api/billing.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

common::Result<HttpResponse> RunAction(Service& service, ActionRunner* runner, BillingContext billing,
                                       RequestContext& ctx) {
    // Loop protection: every fetch a worker makes carries the marker, so an action that reaches this
    // service (by any name or address) cannot start another run, nor a chain of them.
    if (ctx.request.Header("x-sigil-run")) {
        return MakeError(ErrorKind::Forbidden, "run_from_action_refused",
                         std::string("this request carries ") + RUN_MARKER_HEADER +
                             ", so it comes from an action's fetch; actions may not run actions");
    }
    if (runner == nullptr) {
        return MakeError(ErrorKind::Unavailable, "sandbox_unavailable", "this worker has no action sandbox");
    }
    SIGIL_TRY(request, runner->ParseRequest(ctx.json));
    // Once the run is authorized, what it may cost up to its time limit is held (402 when not even
    // one second is covered) and the run's time limit becomes the held seconds. A run whose time
    // started counting (its code reached the sandbox, or the gateways were waited on for its CID)
    // is charged its measured seconds however it ends, when `charge` goes; one that never started
    // is refunded (DESIGN.md section 9).
    std::optional<RunCharge> charge;
    RunAdmission admission;
    admission.admit = [&](RunLimits& limits) -> common::Status {  // a refused run costs nothing
        SIGIL_TRY(held, RunCharge::Begin(billing, service, CallerOf(ctx), ctx.request.request_id, limits.time_ms));
        charge.emplace(std::move(held).value());
        if (charge->held_ms() < limits.time_ms) {
            limits.time_ms = charge->held_ms();
            limits.time_limited_by = charge->limited_by();
        }
        return common::Success();
    };
    admission.started = [&]() {
        if (charge) charge->Start();
    };
    SIGIL_TRY(result, runner->Run(service, CallerOf(ctx), *request, admission));
    return JsonResponse(200, result->ResponseJson());
}

}  // namespace

void AddRunRoutes(Router& router, Service& service, ActionRunner* runner, BillingContext billing) {
    router.Add({"POST", "/core/v1/sigil_action", AuthRequirement::ApiKey, BodyKind::Json,
                [&service, runner, billing](RequestContext& ctx) { return RunAction(service, runner, billing, ctx); },
                "Run an action (inline code or by CID) with a usage or account key; allowed only if a group the "
                "key may execute on lists the action's CID and the PKP",
                "actions", ApiSchema("run.json#/RunRequest"), ApiSchema("run.json#/RunResponse"),
                /*may_answer_pending=*/false, Charge::RunTime});
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
                "Limits every action run is held to", "configuration", "", ApiSchema("run.json#/ActionConfig")});
}

}  // namespace sigil::workers
