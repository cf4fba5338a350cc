// The sandbox child: what a process forked for one run executes, from lockdown to DONE.
#pragma once

#include <duktape.h>

#include "workers/sandbox/protocol/protocol.h"

namespace sigil::workers {

// Adds native functions to each fresh heap before the built-ins are frozen. Only test binaries
// set one (e.g. __sigil_test_syscall); production passes nullptr. Runs inside a protected call.
using SandboxNativeInstaller = void (*)(duk_context* ctx);

struct SandboxChildOptions {
    SandboxNativeInstaller install_test_natives = nullptr;
    // Load the transpiler into the zygote (about 70-170 ms once) so children can lower modern
    // JavaScript; without it, RUN's `lower` flag is ignored and code runs as given.
    bool preload_transpiler = true;
};

class Transpiler;

// The sandbox's counting allocator and the udata its timeout hook recognises. A heap created
// with these (duk_create_heap(h.alloc, h.realloc, h.free, h.udata, ...)) shares the run's
// memory cap and deadline: e.g. the transpiler heap preloaded in the zygote before fork. Until
// RunSandboxChild reads RUN there is no cap and no deadline; after, bytes such a heap already
// holds count against the run's cap.
struct SandboxHeapHooks {
    void* udata;
    duk_alloc_function alloc;
    duk_realloc_function realloc;
    duk_free_function free;
};
SandboxHeapHooks SandboxHeap();

// Prepares the calling process (the zygote, before any fork) for children: initialises the
// crypto libraries' lazily built state (secp256k1 context with its random seed, OpenSSL's
// digests) that would otherwise need system calls the seccomp filter forbids, and sets TZ=UTC and
// reads the zone once (tzset), so no child pays for that file read.
void WarmUpSandboxParent();

// Builds, in the zygote before any fork, the heap every child then runs in (copy-on-write):
// natives, shims.js, prelude.js, ethers v5 (build/ethers_lower.mjs), frozen built-ins. No request data has touched it,
// and Math.random is reseeded per child. False when it cannot be built (children then build
// their own heap per run, slower but the same).
bool PrepareSandboxHeap(const SandboxChildOptions& options);

// Runs one action in the calling (freshly forked, single-threaded) process and never returns.
// Steps: move channel_fd to descriptor 0 and close every other descriptor; read RUN; set
// rlimits (RLIMIT_AS = the zygote's size once it was ready (the child's own when
// PrepareSandboxHeap never ran) + memory cap + slack, RLIMIT_CPU = time rounded up to whole
// seconds with the hard limit one second later, RLIMIT_FSIZE 0, RLIMIT_CORE 0, RLIMIT_NOFILE 1);
// install the seccomp filter; create a Duktape heap whose allocator counts against memory_bytes
// and whose timeout hook fires at time_ms; remove Duktape, Proxy and CBOR; register
// __sigil_op(name, argsJson) -> result JSON string (throws Error(message) when the worker
// refuses), __sigil_log(text), __sigil_crypto and __sigil_keccak256; evaluate shims.js,
// prelude.js and ethers v5;
// freeze the built-ins; when RUN asks for it and `transpiler` (preloaded in the zygote, its heap
// on SandboxHeap()) is given, lower the code and send LOWERED (a syntax error ends the run as
// a SyntaxError); eval the code; call __sigil_run_main(params_json); send DONE; _exit.
// Exit codes are the SANDBOX_EXIT_* values of protocol.h.
[[noreturn]] void RunSandboxChild(int channel_fd, const SandboxChildOptions& options, Transpiler* transpiler);

}  // namespace sigil::workers
