// Running actions: POST /core/v1/sigil_action (the spec's execution flow, DESIGN.md sections 4-5)
// and the limits every run is held to.
#include <memory>
#include <optional>

#include "common/cid.h"
#include "common/clock.h"
#include "common/hex.h"
#include "common/json.h"
#include "workers/actions/fetch_policy.h"
#include "workers/actions/runner.h"
#include "workers/api/api.h"
#include "workers/api/billing.h"
#include "workers/api/receipt.h"
#include "workers/api/run_record.h"
#include "workers/billing/store.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

// How a run that did not complete (the script threw, a limit was hit) is answered.
enum class FailedRun {
    InBody,   // 200 with has_error and the error (sigil_action, DESIGN.md section 4: our SDK reads it)
    IsError,  // non-2xx (the compatibility name: the deployed implementation's SDK throws on it)
};

// The status of a failed run on the compatibility name: the action's own failure (what it threw,
// a limit it hit) is the caller's, 400, so clients do not retry it; the sandbox failing under it
// is ours, 500.
int FailedRunStatus(RunEnd end) {
    switch (end) {
    case RunEnd::Stopped:
    case RunEnd::Crashed: return 500;
    default: return 400;
    }
}

// The run's usual answer (response, logs, has_error, error) plus the top-level `message` every
// error body carries, which that SDK puts in the Error it throws.
HttpResponse FailedRunResponse(const ActionResult& result, const std::string& extra_members) {
    std::string body = result.ResponseJson();
    body.pop_back();  // the closing brace of the answer object
    return JsonResponse(FailedRunStatus(result.outcome.end),
                        body + extra_members + ",\"message\":" + common::JsonQuote(result.ErrorText()) + "}");
}

// The run's answer with members appended (the receipt's; empty when none was asked for).
std::string WithMembers(std::string answer, const std::string& members) {
    if (members.empty()) return answer;
    answer.pop_back();  // the closing brace of the answer object
    return answer + members + "}";
}

common::Result<HttpResponse> RunActionOnce(Service& service, ActionRunner* runner, BillingContext billing,
                                           FailedRun failed_run, RequestContext& ctx, RunNotes& notes) {
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
    notes.parsed = true;
    request->client_address = ctx.request.remote_addr;
    if (request->pkp) notes.pkp = common::HexEncode(*request->pkp, true);
    // A receipt that could not be signed is known before anything runs or is charged.
    if (request->receipt) SIGIL_TRY_STATUS(PrepareReceipt(service));
    // Once the run is authorized, what it may cost up to its time limit is held (402 when not even
    // one second is covered) and the run's time limit becomes the held seconds. A run whose time
    // started counting (its code reached the sandbox, or the gateways were waited on for its CID)
    // is charged its measured seconds however it ends, when `charge` goes; one that never started
    // is refunded (DESIGN.md section 9).
    std::optional<RunCharge> charge;
    RunAdmission admission;
    admission.admit = [&](RunLimits& limits) -> common::Status {  // a refused run costs nothing
        billing::RunRefusal refusal;
        auto held = RunCharge::Begin(billing, service, CallerOf(ctx), ctx.request.request_id, limits.time_ms,
                                     ctx.request.remote_addr, &refusal);
        ctx.retry_after_s = refusal.retry_after_s;  // a key's rate limit: when its bucket has a token again
        if (!held.ok()) return held.error();
        charge.emplace(std::move(held).value());
        charge->ReportChargedTo(&notes.cost_cents);
        if (charge->held_ms() < limits.time_ms) {
            limits.time_ms = charge->held_ms();
            limits.time_limited_by = charge->limited_by();
        }
        return common::Success();
    };
    admission.started = [&]() {
        if (charge) charge->Start();
    };
    auto result = runner->Run(service, CallerOf(ctx), *request, admission);
    if (!result.ok()) {
        notes.cid = request->code ? common::ComputeCidV0(*request->code) : *request->ipfs_id;
        return result.error();
    }
    const std::string receipt =
        request->receipt ? ReceiptMembers(service, CallerOf(ctx), ctx.request.request_id, *request, *result) : "";
    HttpResponse answer = failed_run == FailedRun::IsError && result->outcome.end != RunEnd::Completed
                              ? FailedRunResponse(*result, receipt)
                              : JsonResponse(200, WithMembers(result->ResponseJson(), receipt));
    notes.result = std::move(result).value();
    return answer;
}

// The run, then its history record: queued once the run's charge is settled (RunActionOnce's
// locals are gone), so the record holds what was charged. Queuing never waits on the store.
common::Result<HttpResponse> RunAction(Service& service, ActionRunner* runner, BillingContext billing,
                                       FailedRun failed_run, RequestContext& ctx) {
    RunNotes notes;
    notes.started_ms = sigil::workers::billing::WallClockMs();
    notes.begun_monotonic_ms = common::MonotonicMs();
    auto answer = RunActionOnce(service, runner, billing, failed_run, ctx, notes);
    if (billing.history != nullptr) RecordRun(*billing.history, ctx, notes, answer);
    return answer;
}

}  // namespace

void AddRunRoutes(Router& router, Service& service, ActionRunner* runner, BillingContext billing) {
    router.Add({"POST", "/core/v1/sigil_action", AuthRequirement::ApiKey, BodyKind::Json,
                [&service, runner, billing](RequestContext& ctx) {
                    return RunAction(service, runner, billing, FailedRun::InBody, ctx);
                },
                "Run an action (inline code or by CID) with a usage or account key; allowed only if a group the "
                "key may execute on lists the action's CID and the PKP",
                "actions", ApiSchema("run.json#/RunRequest"), ApiSchema("run.json#/RunResponse"),
                /*may_answer_pending=*/false, Charge::RunTime});
    // The deployed implementation's name for the same run, so its clients work unchanged; there a run
    // that did not complete answers non-2xx, since its SDK reads only the status (DESIGN.md section 4).
    router.Add({"POST", "/core/v1/lit_action", AuthRequirement::ApiKey, BodyKind::Json,
                [&service, runner, billing](RequestContext& ctx) {
                    return RunAction(service, runner, billing, FailedRun::IsError, ctx);
                },
                "Compatibility alias of sigil_action under the deployed implementation's name: the same run, "
                "except that a run that did not complete (the script threw, a limit was hit) answers 400 (500 "
                "when the sandbox failed) with the run's answer and a top-level message, instead of 200 with has_error",
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
