#include "workers/api/run_record.h"

#include "common/clock.h"
#include "common/hex.h"
#include "common/sha256.h"
#include "workers/api/api.h"

namespace sigil::workers {

const char* RunStatusName(RunEnd end) {
    switch (end) {
    case RunEnd::Completed: return "ok";
    case RunEnd::ScriptError: return "script_error";
    case RunEnd::TimeLimit: return "time_limit";
    case RunEnd::MemoryLimit: return "memory_limit";
    case RunEnd::ResponseLimit: return "response_limit";
    case RunEnd::LogLimit: return "log_limit";
    case RunEnd::OpLimit: return "op_limit";
    case RunEnd::Stopped: return "stopped";
    case RunEnd::Crashed: return "crashed";
    }
    return "crashed";
}

namespace {

// A run refused before it ran is the caller's (no credit, no permission, too many runs: 4xx);
// one the service failed (keyd, chain, zygote, gateway: 5xx) is "failed".
bool CallersRefusal(common::ErrorKind kind) {
    switch (kind) {
    case common::ErrorKind::InvalidInput:
    case common::ErrorKind::Unauthenticated:
    case common::ErrorKind::PaymentRequired:
    case common::ErrorKind::Forbidden:
    case common::ErrorKind::NotFound:
    case common::ErrorKind::Conflict:
    case common::ErrorKind::TooLarge:
    case common::ErrorKind::MalformedJson:
    case common::ErrorKind::Overloaded: return true;
    default: return false;
    }
}

}  // namespace

void RecordRun(billing::RunHistory& history, const RequestContext& ctx, const RunNotes& notes,
               const common::Result<HttpResponse>& answer) {
    if (!notes.parsed || !history.enabled()) return;
    const Caller& caller = CallerOf(ctx);
    billing::RunRecord r;
    r.request_id = ctx.request.request_id;
    r.started_ms = notes.started_ms;
    r.key_hash = WordHex(caller.key_hash);
    r.account_hash = WordHex(caller.account_hash);
    r.pkps = notes.pkp;
    r.duration_ms = common::MonotonicMs() - notes.begun_monotonic_ms;
    r.cost_cents = notes.cost_cents;
    r.request_bytes = static_cast<std::int64_t>(ctx.request.body.size());
    if (notes.result) {
        const ActionResult& result = *notes.result;
        r.cid = result.cid;
        r.status = RunStatusName(result.outcome.end);
        r.error_code = result.ErrorCode();
        if (result.outcome.end == RunEnd::Completed && !result.outcome.response_json.empty()) {
            r.response_sha256 = common::HexEncode(common::Sha256Hash(result.outcome.response_json), false);
        }
        const std::size_t cap = history.settings().log_bytes;
        r.logs_truncated = result.logs.size() > cap;
        r.logs = r.logs_truncated ? CapText(result.logs, cap) : result.logs;
        r.has_logs = true;  // kept only if the account turned logs on (decided by the writer thread)
    } else {
        r.cid = notes.cid;
        r.status = !answer.ok() && CallersRefusal(answer.error().kind) ? "refused" : "failed";
        r.error_code = answer.ok() ? "" : answer.error().code;
    }
    if (answer.ok()) r.response_bytes = static_cast<std::int64_t>(answer->body.size());
    history.Record(std::move(r));
}

}  // namespace sigil::workers
