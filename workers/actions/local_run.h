// `sigil-worker --run-local FILE`: one action run in the real sandbox (the sigil-sandbox zygote beside
// this program, the same runtime and [actions] limits as the service) on the user's machine, for
// trying an action before publishing it. No account, no chain, no keyd: the PKP and the action's own
// key are throw-away keys drawn for this run and forgotten with it.
#pragma once

#include <string>

#include "common/result.h"
#include "workers/actions/settings.h"

namespace sigil::workers {

struct LocalRunRequest {
    std::string code;
    std::string params_json = "{}";  // a JSON object; `pkpId` is added (the throw-away PKP) when absent
};

// Runs `request` once and answers the JSON the CLI prints:
//   {"cid", "response", "logs", "has_error", "error"?, "time_ms", "pkp_id", "local": true}
// (the service's answer shape, plus the run's wall time, which includes lowering the source as a
// CID's first run on the service does, and the throw-away PKP's address). An op
// naming another PKP is refused as the service refuses an unauthorized one ("not_authorized").
// Errors: InvalidInput "invalid_params" (not a JSON object), those of Zygote::Start and RunAction.
common::Result<std::string> RunLocal(const ActionSettings& settings, const LocalRunRequest& request);

// Imports by CID (`import x from "ipfs://<CID>"`) resolve as on the service (imports.h): each module
// from settings.code_cache_dir (files named by their CID) or settings.ipfs_gateways, checked against
// its CID; a module found nowhere is the error "ipfs_unavailable" (or "ipfs_cid_mismatch") naming it.
//
// main() of the mode: sigil-worker --run-local FILE [--params JSON] [--config sigil.conf] [--modules DIR]
// ([actions] of the file sets the limits, fetch's allowed addresses and the gateways; without it the
// defaults; --modules DIR: the folder of modules by CID, where what a gateway sends is kept too).
// Exit 0 with the JSON on stdout (a script error included), 2 on bad usage, 1 when it could not run.
int RunLocalMain(int argc, char** argv);

}  // namespace sigil::workers
