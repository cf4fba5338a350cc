// The sandbox zygote: the main loop of sigil-sandbox, a small clean process that forks one
// locked-down child per run (Chromium's model).
//
// A worker fork+execs sigil-sandbox before it touches any request data, with the control socket
// as descriptor ZYGOTE_CONTROL_FD (workers/sandbox/control.h has the messages). The zygote
// preloads Duktape, the shims and the transpiler once; per SPAWN it forks a child that runs
// RunSandboxChild on the passed op channel, reaps it and reports its wait status (how "limit
// hit" is decided: from how the child ended, never from what it said). Being its own executable,
// neither the zygote nor its children map libcurl, libfcgi, chain code or a worker's heap.
#pragma once

#include "workers/sandbox/child.h"

namespace sigil::workers {

// Serves the control socket until the worker closes it, then SIGKILLs and reaps the children it
// still has and exits. Keeps descriptors 1 and 2 (logs), points 0 at /dev/null, closes every
// other descriptor but `control_fd`, and dies with its parent (PR_SET_PDEATHSIG). `options`
// reaches every child.
[[noreturn]] void RunZygote(int control_fd, const SandboxChildOptions& options);

// main() of sigil-sandbox (and of the test build with its extra natives): parses
//   sigil-sandbox [--no-transpiler]
// checks that ZYGOTE_CONTROL_FD is a socket, and runs RunZygote on it. Returns 2 on a usage
// error (it is started by sigil-worker, never by hand).
int SandboxMain(int argc, char** argv, SandboxNativeInstaller install_test_natives);

}  // namespace sigil::workers
