// A run's row in the run history (issue 26): what the run's handler notes as it goes, turned into a
// billing::RunRecord and queued once the run's charge is settled (run.cpp). Never blocks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "workers/actions/runner.h"
#include "workers/billing/run_history.h"
#include "workers/http/router.h"

namespace sigil::workers {

struct RunNotes {
    bool parsed = false;               // the body was a valid run request (else nothing is recorded)
    std::int64_t started_ms = 0;       // wall clock, unix ms
    std::int64_t begun_monotonic_ms = 0;
    std::string cid;
    std::string pkp;                   // 0x + 40 hex, "" for none
    std::int64_t cost_cents = 0;       // what the run's settlement charged (RunCharge reports it)
    std::optional<ActionResult> result;  // the run's outcome when it ran
};

// Queues the run's record (the answer is the handler's: a run result, or the error it was refused with).
void RecordRun(billing::RunHistory& history, const RequestContext& ctx, const RunNotes& notes,
               const common::Result<HttpResponse>& answer);

// The history's status for a run's ending: ok, script_error, time_limit, ... (run_history.h).
const char* RunStatusName(RunEnd end);

}  // namespace sigil::workers
