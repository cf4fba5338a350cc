// The sandbox zygote: the main loop of sigil-sandbox, a small clean process that forks one
// locked-down child per run (Chromium's model).
//
// Two ways to start it, told apart by what descriptor ZYGOTE_CONTROL_FD is:
// - shared (the service): sigil-supervisor fork+execs a few zygotes (`[supervisor] zygotes`)
//   with one listening SOCK_SEQPACKET socket there; the kernel hands each worker's connection to
//   one of them, and each zygote serves many workers;
// - own: a worker (or a test) fork+execs one for itself with its end of a socketpair there.
// Per connection the protocol is workers/sandbox/protocol/control.h's. The zygote preloads Duktape, the
// shims and the transpiler once, before any request data; per SPAWN it forks a child that runs
// RunSandboxChild on the passed op channel, reaps it and reports its wait status to the
// connection that asked (how "limit hit" is decided: from how the child ended, never from what it
// said). Being its own executable, neither the zygote nor its children map libcurl, libfcgi,
// chain code or a worker's heap, and a child closes every descriptor but its op channel (other
// workers' connections and the listening socket included) before it reads its run.
#pragma once

#include "workers/sandbox/child.h"

namespace sigil::workers {

// Own: serves the control socket until the worker closes it. Shared (`control_fd` is listening):
// accepts connections (non-blocking, in the same single-threaded poll loop) from peers of this
// process's euid only (SO_PEERCRED) and serves each; when one closes, SIGKILLs the children it
// spawned; KILL reaches only the asking connection's children, EXITED only the connection that
// spawned the child; answers are sent without blocking, and a worker whose socket is full loses its
// connection (the caps are control.h's). Keeps descriptors 1 and 2 (logs), points 0 at /dev/null,
// closes every other descriptor but `control_fd`, and dies with its parent (PR_SET_PDEATHSIG).
// Before exiting it SIGKILLs and reaps every child it still has. `options` reaches every child.
[[noreturn]] void RunZygote(int control_fd, const SandboxChildOptions& options);

// main() of sigil-sandbox (and of the test build with its extra natives): parses
//   sigil-sandbox [--no-transpiler]
// checks that ZYGOTE_CONTROL_FD is a socket, and runs RunZygote on it. Returns 2 on a usage
// error (it is started by sigil-supervisor or sigil-worker, never by hand).
int SandboxMain(int argc, char** argv, SandboxNativeInstaller install_test_natives);

}  // namespace sigil::workers
