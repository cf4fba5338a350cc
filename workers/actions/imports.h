// Modules an action imports by CID (`import x from "ipfs://<CID>"`, DESIGN section 5): the worker
// resolves the whole import graph before the run, and the run carries every module it may import
// (RunRequest::modules), so the action's CID fixes everything it runs.
//
// A module is fetched as code is (the worker's memory, the shared folder, the gateways; accepted only
// when its bytes hash to its CID: code_source.h) and lowered as a module: sigil-lowerer when it
// answers, else the sandbox child, which reports the lowered text before the run's code runs. Its
// lowered text is cached under "<cid>.module" (memory and <cid>.module.lowered in the folder, with
// the folder's MAC), apart from what an action of the same CID lowers to, which drops its exports.
// A unit's imports are read from its lowered text's header (workers/sandbox/protocol/import_header.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "workers/actions/code_source.h"
#include "workers/actions/sandbox_host.h"
#include "workers/actions/settings.h"
#include "workers/sandbox/protocol/protocol.h"

namespace sigil::workers {

// The modules `code` imports, transitively: each the lowered text the worker has for it, or its
// source (lower = true) when nothing has lowered it yet; a module sent as source may import modules
// not in the list, which the child reports (child.h) and the next round resolves. `lowered` says
// whether `code` itself is lowered text (source says nothing of its imports). Every gateway wait
// is within `budget_ms`. At most SANDBOX_MAX_MODULES modules of SANDBOX_MAX_MODULE_BYTES in all.
// `before_gateway`, when set, is asked before a module is fetched from a gateway or sent to
// sigil-lowerer (the run's admission, which must hold before such work; it is asked again each time
// and answers at once once admitted); its error is returned.
// Errors: those of LoadCode for a module no gateway has or whose bytes do not match, with the
// message naming the import ("ipfs_unavailable", "ipfs_cid_mismatch"; `miss` says whose it was);
// TooLarge "imports_too_large" past the count or size bound.
common::Result<std::vector<SandboxModule>> ResolveModules(const ActionSettings& settings, CodeCache& modules,
                                                          common::ByteView lowered_key, const std::string& cid,
                                                          std::string_view code, bool lowered, std::uint64_t budget_ms,
                                                          GatewayMiss* miss = nullptr,
                                                          const std::function<common::Status()>& before_gateway = {});

// Keeps what a run's child lowered of its modules (memory and the shared folder).
void KeepLoweredModule(const ActionSettings& settings, CodeCache& modules, common::ByteView lowered_key,
                       const std::string& cid, std::string lowered);

// Whether the lowered text of the action or of a module a child just lowered (outcome) imports a
// module the run was not sent (`sent`): then that child stopped before any of the action's code ran
// (child.h, "sigil_imports_unresolved"), and the caller resolves the graph the lowered text now
// names and runs it again. Read from the lowered text itself, never from the child's word (an error
// a script may throw).
bool ImportsUnsent(const RunOutcome& outcome, const std::vector<SandboxModule>& sent);

}  // namespace sigil::workers
