#include "workers/sandbox/child.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/secp256k1.h"
#include "common/sha256.h"
#include "workers/sandbox/embedded_scripts.h"
#include "workers/sandbox/natives/bigint_native.h"
#include "workers/sandbox/natives/crypto.h"
#include "workers/sandbox/protocol/import_header.h"
#include "workers/sandbox/protocol/protocol.h"
#include "workers/sandbox/seccomp.h"
#include "workers/sandbox/transpiler.h"
#include "workers/sandbox/natives/web_crypto.h"
#include "workers/sandbox/natives/web_globals.h"

namespace sigil::workers {
namespace {

// Room above the script's memory cap for the engine's own structures and glibc's arenas.
constexpr std::size_t ADDRESS_SPACE_SLACK = 256u * 1024 * 1024;
// Bytes in front of each allocation that remember its size (16 keeps malloc's alignment).
constexpr std::size_t ALLOC_HEADER = 16;
constexpr int CHANNEL_FD = 0;

// Everything the natives, the allocator and the timeout hook share. Lives for the whole process;
// Duktape longjmps, so natives keep C++ temporaries here rather than on their own frames.
struct ChildState {
    std::size_t mem_used = 0;
    std::size_t mem_cap = SIZE_MAX;  // unlimited until a run sets its cap
    bool mem_refused = false;      // an allocation refused for good: the run ends memory_limit
    bool refusal_pending = false;  // refused, and Duktape may still get it on a retry after a GC
    std::size_t refused_size = 0;
    int refusals = 0;
    bool has_deadline = false;
    timespec deadline{};
    bool timed_out = false;
    SandboxFrameReader reader;
    std::string scratch;  // an op's result or error text, pushed by the native
    bool scratch_ok = false;
    SandboxDone done;
    // The run's modules as the functions they are compiled into (LinkModules), kept here because
    // Duktape longjmps.
    std::vector<std::string> module_functions;
    std::vector<bool> module_esm;
};

// One per process: the run's heap and any heap preloaded on SandboxHeap() (in the zygote,
// before fork) share its cap and deadline.
ChildState g_child_state;
ChildState* const g_state = &g_child_state;

[[noreturn]] void Die(int code) { ::_exit(code); }

bool WriteAll(const common::Bytes& frame) {
    std::size_t off = 0;
    while (off < frame.size()) {
        const ssize_t n = ::write(CHANNEL_FD, frame.data() + off, frame.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        off += static_cast<std::size_t>(n);
    }
    return true;
}

// Blocks for the next message from the worker; dies if the channel fails.
SandboxMessage ReadMessage(ChildState& st) {
    std::uint8_t buf[64 * 1024];
    for (;;) {
        auto next = st.reader.Next();
        if (!next.ok()) Die(SANDBOX_EXIT_CHANNEL_LOST);
        if (next->has_value()) return std::move(**next);
        const ssize_t n = ::read(CHANNEL_FD, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) Die(SANDBOX_EXIT_CHANNEL_LOST);
        if (!st.reader.Feed(common::ByteView(buf, static_cast<std::size_t>(n))).ok()) Die(SANDBOX_EXIT_CHANNEL_LOST);
    }
}

// Sends a message whose size the script chose (a console line, an op's argument): false, with
// nothing sent, when it is larger than a child frame may carry, so the native can throw a
// RangeError the script may catch. Exiting instead would let a script pick its own ending.
bool TrySend(const SandboxMessage& message) {
    auto frame = EncodeSandboxMessage(message, SANDBOX_MAX_CHILD_PAYLOAD);
    if (!frame.ok()) return false;
    if (!WriteAll(*frame)) Die(SANDBOX_EXIT_CHANNEL_LOST);
    return true;
}

// What one console line or op argument may hold: a child frame less its framing.
constexpr std::size_t MAX_SCRIPT_MESSAGE_BYTES = SANDBOX_MAX_CHILD_PAYLOAD - 64;

// Throws a RangeError for an oversized console line or op argument. Called with no C++ object
// alive on the native's frame (duk_error longjmps); no C source position goes into the error.
duk_ret_t ThrowTooLarge(duk_context* ctx, const char* what, std::size_t bytes) {
    duk_error_raw(ctx, DUK_ERR_RANGE_ERROR, nullptr, 0, "%s of %lu bytes exceeds the %lu bytes one may carry", what,
                  static_cast<unsigned long>(bytes), static_cast<unsigned long>(MAX_SCRIPT_MESSAGE_BYTES));
    return 0;  // not reached: duk_error_raw longjmps
}

// Lockdown ------------------------------------------------------------------------------------

void CloseAllBut(int channel_fd) {
    if (channel_fd != CHANNEL_FD) {
        if (::dup2(channel_fd, CHANNEL_FD) < 0) Die(SANDBOX_EXIT_SETUP_FAILED);
    }
    if (::close_range(CHANNEL_FD + 1, ~0u, 0) != 0) {
        // Kernels before 5.9: walk the whole descriptor table.
        const long max_fd = ::sysconf(_SC_OPEN_MAX);
        for (long fd = CHANNEL_FD + 1; fd < (max_fd > 0 ? max_fd : 65536); ++fd) ::close(static_cast<int>(fd));
    }
    const int flags = ::fcntl(CHANNEL_FD, F_GETFD);
    if (flags >= 0) ::fcntl(CHANNEL_FD, F_SETFD, flags & ~FD_CLOEXEC);
}

std::size_t CurrentAddressSpace() {
    char buf[128] = {};
    const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
    ::close(fd);
    if (n <= 0) return 0;
    return std::strtoull(buf, nullptr, 10) * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

bool SetLimit(int resource, rlim_t soft, rlim_t hard) {
    const rlimit lim{soft, hard};
    return ::setrlimit(resource, &lim) == 0;
}

// Date's local-time functions call glibc's tzset, which re-stats /etc/localtime on every call
// while TZ is unset (a kill under seccomp). With TZ set it reads the zone once and returns early
// afterwards. UTC also keeps the host's zone out of the script's view.
bool g_utc_set = false;
void SetUtc() {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    g_utc_set = true;
}

// The zygote's address space once it is ready (WarmUpSandboxParent/PrepareSandboxHeap), 0 until
// then: a child starts from its copy and need not read /proc per run (ADDRESS_SPACE_SLACK covers
// what the zygote maps later, a few pages at most).
std::size_t g_zygote_address_space = 0;

void LockDown(const SandboxRun& run) {
    // Done once in the zygote (WarmUpSandboxParent): the zone file read (an open, a stat, a read
    // and a few allocations) is then no child's to pay for. Repeated here only when it was not.
    if (!g_utc_set) SetUtc();
    const rlim_t cpu_seconds = static_cast<rlim_t>((run.time_ms + 999) / 1000);
    const std::size_t base = g_zygote_address_space != 0 ? g_zygote_address_space : CurrentAddressSpace();
    const std::size_t as = base + run.memory_bytes + ADDRESS_SPACE_SLACK;
    const bool ok = SetLimit(RLIMIT_CORE, 0, 0) && SetLimit(RLIMIT_FSIZE, 0, 0) &&
                    SetLimit(RLIMIT_CPU, cpu_seconds, cpu_seconds + 1) && SetLimit(RLIMIT_AS, as, as) &&
                    SetLimit(RLIMIT_NOFILE, CHANNEL_FD + 1, CHANNEL_FD + 1);
    if (!ok || ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) Die(SANDBOX_EXIT_SETUP_FAILED);
    if (!InstallSandboxSeccomp().ok()) Die(SANDBOX_EXIT_SETUP_FAILED);
}

// Heap memory: every byte the engine holds counts against the cap ----------------------------
//
// Duktape answers a refused allocation with a mark-and-sweep and asks again for the same size, ten
// times (DUK_HEAP_ALLOC_FAIL_MARKANDSWEEP_LIMIT in duktape.c), before it gives up. Garbage in
// reference cycles (every function with its prototype object) is freed only by mark-and-sweep, so
// code that makes many closures meets the cap with little live data: a refusal that a retry then gets
// is no memory limit. A refusal is final when all the retries are refused too (the script then sees
// a RangeError it may catch, and the run still ends memory_limit) or when the run ends with it
// pending. Allocations of other sizes meanwhile are the collector's own, and do not count.
constexpr int DUKTAPE_ALLOC_RETRIES = 10;

bool MemoryRefused(const ChildState& st) { return st.mem_refused || st.refusal_pending; }

void* NoteRefusal(ChildState* st, std::size_t size) {
    if (!st->refusal_pending) {
        st->refusal_pending = true;
        st->refused_size = size;
        st->refusals = 1;
    } else if (size == st->refused_size && ++st->refusals > DUKTAPE_ALLOC_RETRIES) {
        st->mem_refused = true;
        st->refusal_pending = false;
    }
    return nullptr;
}

void NoteGranted(ChildState* st, std::size_t size) {
    if (st->refusal_pending && size == st->refused_size) st->refusal_pending = false;
}

void* CountingAlloc(void* udata, duk_size_t size) {
    auto* st = static_cast<ChildState*>(udata);
    if (size > st->mem_cap - st->mem_used) return NoteRefusal(st, size);
    auto* base = static_cast<unsigned char*>(std::malloc(size + ALLOC_HEADER));
    if (base == nullptr) return NoteRefusal(st, size);
    std::memcpy(base, &size, sizeof(size));
    st->mem_used += size;
    NoteGranted(st, size);
    return base + ALLOC_HEADER;
}

void CountingFree(void* udata, void* ptr) {
    if (ptr == nullptr) return;
    auto* st = static_cast<ChildState*>(udata);
    auto* base = static_cast<unsigned char*>(ptr) - ALLOC_HEADER;
    std::size_t size = 0;
    std::memcpy(&size, base, sizeof(size));
    st->mem_used -= size;
    std::free(base);
}

void* CountingRealloc(void* udata, void* ptr, duk_size_t size) {
    if (ptr == nullptr) return CountingAlloc(udata, size);
    auto* st = static_cast<ChildState*>(udata);
    auto* base = static_cast<unsigned char*>(ptr) - ALLOC_HEADER;
    std::size_t old = 0;
    std::memcpy(&old, base, sizeof(old));
    if (size > old && size - old > st->mem_cap - st->mem_used) return NoteRefusal(st, size);
    auto* grown = static_cast<unsigned char*>(std::realloc(base, size + ALLOC_HEADER));
    if (grown == nullptr) return NoteRefusal(st, size);
    std::memcpy(grown, &size, sizeof(size));
    st->mem_used = st->mem_used - old + size;
    NoteGranted(st, size);
    return grown + ALLOC_HEADER;
}

[[noreturn]] void FatalHandler(void* udata, const char*) {
    const auto* st = static_cast<ChildState*>(udata);
    Die(st != nullptr && MemoryRefused(*st) ? SANDBOX_EXIT_MEMORY_LIMIT : SANDBOX_EXIT_ENGINE_FATAL);
}

// Natives ---------------------------------------------------------------------------------------

// Sends OP and waits for OP_RESULT, leaving the answer in st.scratch; false when the op is too
// large to send. C++ objects here end before the native touches Duktape again.
bool ExchangeOp(ChildState& st, const char* name, std::size_t name_len, const char* args, std::size_t args_len) {
    if (name_len + args_len > MAX_SCRIPT_MESSAGE_BYTES ||
        !TrySend(SandboxOp{std::string(name, name_len), std::string(args, args_len)})) {
        return false;
    }
    SandboxMessage reply = ReadMessage(st);
    auto* result = std::get_if<SandboxOpResult>(&reply);
    if (result == nullptr) Die(SANDBOX_EXIT_CHANNEL_LOST);
    st.scratch_ok = result->ok;
    st.scratch = std::move(result->value);
    return true;
}

duk_ret_t NativeOp(duk_context* ctx) {
    duk_size_t name_len = 0, args_len = 0;
    const char* name = duk_require_lstring(ctx, 0, &name_len);
    const char* args = duk_require_lstring(ctx, 1, &args_len);
    if (!ExchangeOp(*g_state, name, name_len, args, args_len)) return ThrowTooLarge(ctx, "an operation's argument", args_len);
    if (!g_state->scratch_ok) {
        duk_push_error_object_raw(ctx, DUK_ERR_ERROR, nullptr, 0, "%s", g_state->scratch.c_str());
        return duk_throw(ctx);
    }
    duk_push_lstring(ctx, g_state->scratch.data(), g_state->scratch.size());
    return 1;
}

// False when the line is too large to send (well-formed UTF-8 may be longer than the text).
bool SendLog(const char* text, std::size_t len) {
    return len <= MAX_SCRIPT_MESSAGE_BYTES && TrySend(SandboxLog{WellFormedUtf8(text, len)});
}

duk_ret_t NativeLog(duk_context* ctx) {
    duk_size_t len = 0;
    const char* text = duk_safe_to_lstring(ctx, 0, &len);
    if (!SendLog(text, len)) return ThrowTooLarge(ctx, "a console line", len);
    return 0;
}

// Math.random: xorshift128+ seeded per child from getrandom before lockdown. Duktape's own
// generator lives in the heap, which every child of a zygote shares copy-on-write, so all runs
// would draw the same numbers.
std::uint64_t g_random[2] = {0x9E3779B97F4A7C15ull, 0xBF58476D1CE4E5B9ull};

void SeedRandom() {
    std::uint64_t seed[2] = {0, 0};
    if (::getrandom(seed, sizeof(seed), 0) == static_cast<ssize_t>(sizeof(seed)) && (seed[0] | seed[1]) != 0) {
        g_random[0] = seed[0];
        g_random[1] = seed[1];
    }
}

duk_ret_t NativeRandom(duk_context* ctx) {
    std::uint64_t s1 = g_random[0];
    const std::uint64_t s0 = g_random[1];
    g_random[0] = s0;
    s1 ^= s1 << 23;
    g_random[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
    duk_push_number(ctx, static_cast<double>((g_random[1] + s0) >> 11) * (1.0 / 9007199254740992.0));
    return 1;
}

// The transpiler the zygote preloaded, for code a run builds at run time (__sigil_lower_source).
Transpiler* g_transpiler = nullptr;

// __sigil_lower_source(text) -> ES5 text: lowers source a run makes at run time (new Function with
// modern syntax in its body, prelude.js) as its own code was; throws a SyntaxError with the
// lowering's message. Runs in the transpiler's heap, under the run's deadline and memory cap.
duk_ret_t NativeLowerSource(duk_context* ctx) {
    duk_size_t length = 0;
    const char* text = duk_require_lstring(ctx, 0, &length);
    if (g_transpiler == nullptr) return duk_error(ctx, DUK_ERR_SYNTAX_ERROR, "this runtime cannot lower code at run time");
    auto lowered = g_transpiler->Lower(std::string_view(text, length));
    if (!lowered.ok()) return duk_error(ctx, DUK_ERR_SYNTAX_ERROR, "%s", lowered.error().message.c_str());
    duk_push_lstring(ctx, lowered->data(), lowered->size());
    return 1;
}

void EvalRuntime(duk_context* ctx, std::string_view source, const char* name) {
    duk_push_string(ctx, name);
    duk_compile_lstring_filename(ctx, 0, source.data(), source.size());
    duk_call(ctx, 0);
    duk_pop(ctx);
}

duk_ret_t SetUpGlobals(duk_context* ctx, void* udata) {
    const auto* options = static_cast<const SandboxChildOptions*>(udata);
    duk_push_c_function(ctx, NativeOp, 2);
    duk_put_global_string(ctx, "__sigil_op");
    duk_push_c_function(ctx, NativeLog, 1);
    duk_put_global_string(ctx, "__sigil_log");
    duk_push_c_function(ctx, NativeRandom, 0);
    duk_put_global_string(ctx, "__sigil_random");
    duk_push_c_function(ctx, NativeLowerSource, 1);
    duk_put_global_string(ctx, "__sigil_lower_source");
    InstallCryptoNatives(ctx);
    InstallWebGlobalsNatives(ctx);
    InstallWebCryptoNatives(ctx);
    InstallBigIntNatives(ctx);
    if (options->install_test_natives != nullptr) options->install_test_natives(ctx);
    EvalRuntime(ctx, ShimsSource(), "shims.js");
    EvalRuntime(ctx, LowerRuntimeSource(), "lower_runtime.js");
    EvalRuntime(ctx, WebGlobalsSource(), "globals.js");
    EvalRuntime(ctx, WebPackagesSource(), "web_packages.js");
    EvalRuntime(ctx, PreludeSource(), "prelude.js");
    EvalRuntime(ctx, EthersSource(), "ethers5.js");
    // Last, so it sees every global above: hides what a script must not reach and freezes every
    // built-in it can reach (js/lockdown.js says why and how). Eval code with no file name.
    duk_eval_lstring_noresult(ctx, reinterpret_cast<const char*>(embedded::LOCKDOWN_JS), embedded::LOCKDOWN_JS_SIZE);
    return 0;
}

// [params_json] -> [response_json]: __sigil_run_main (prelude.js) calls main, settles a
// returned promise, runs pending jobs and applies setResponse; "" when there is no response.
duk_ret_t CallMain(duk_context* ctx, void*) {
    duk_get_global_string(ctx, "__sigil_run_main");
    duk_dup(ctx, 0);
    duk_call(ctx, 1);
    if (!duk_is_string(ctx, -1)) duk_push_string(ctx, "");
    return 1;
}

// [error] -> [name, message, stack], each a string.
duk_ret_t DescribeError(duk_context* ctx, void*) {
    if (duk_is_object(ctx, 0)) {
        duk_get_prop_string(ctx, 0, "name");
        duk_get_prop_string(ctx, 0, "message");
        duk_get_prop_string(ctx, 0, "stack");
        for (duk_idx_t i = 1; i <= 3; ++i) {
            if (duk_is_undefined(ctx, i)) duk_push_string(ctx, "");
            else duk_dup(ctx, i);
            duk_to_string(ctx, -1);
        }
    } else {
        duk_push_string(ctx, "Error");
        duk_dup(ctx, 0);
        duk_to_string(ctx, -1);
        duk_push_string(ctx, "");
    }
    return 3;
}

// The thrown value on top of the stack becomes st.done's error.
void CaptureError(duk_context* ctx, ChildState& st) {
    st.done.ok = false;
    st.done.response_json.clear();
    if (duk_safe_call(ctx, DescribeError, nullptr, 1, 3) != DUK_EXEC_SUCCESS) {
        st.done.error = ScriptError{"Error", "uncaught value that cannot be described", ""};
        duk_pop_3(ctx);
        return;
    }
    auto take = [ctx](duk_idx_t idx) {
        duk_size_t len = 0;
        const char* s = duk_get_lstring(ctx, idx, &len);
        return s != nullptr ? WellFormedUtf8(s, len) : std::string();
    };
    st.done.error.code = take(-3);
    st.done.error.message = take(-2);
    st.done.error.stack = take(-1);
    if (st.done.error.code.empty()) st.done.error.code = "Error";
    duk_pop_3(ctx);
}

// Lowers the run's code in place with the preloaded transpiler and reports the result to the
// worker (for its cache) before any of the action's own code runs. False when the code does
// not parse: st.done then holds the SyntaxError.
bool LowerCode(ChildState& st, Transpiler& transpiler, SandboxRun& run) {
    auto lowered = transpiler.Lower(run.code);
    if (!lowered.ok()) {
        st.done.ok = false;
        st.done.error = lowered.error().code == "syntax_error"
                            ? ScriptError{"SyntaxError", lowered.error().message, ""}
                            : ScriptError{"Error", lowered.error().message, ""};
        return false;
    }
    run.code = std::move(lowered).value();
    // Code too large for a child frame is simply not cached.
    if (auto frame = EncodeSandboxMessage(SandboxLowered{run.code}, SANDBOX_MAX_CHILD_PAYLOAD); frame.ok()) {
        if (!WriteAll(*frame)) Die(SANDBOX_EXIT_CHANNEL_LOST);
    }
    return true;
}

// Lowers each module RUN sent as source, as a module, and reports it to the worker (for its cache)
// before any of the run's own code runs. False when one does not parse: st.done then holds the
// SyntaxError, which names the module after the lowering's "line L, column C: " (so an
// import_not_allowed inside a module reads as one).
bool LowerModules(ChildState& st, Transpiler* transpiler, SandboxRun& run) {
    for (auto& module : run.modules) {
        if (!module.lower || transpiler == nullptr) continue;
        auto lowered = transpiler->Lower(std::string(MODULE_LOWERING_PRAGMA) + module.code);
        if (!lowered.ok()) {
            st.done.ok = false;
            st.done.error = ScriptError{lowered.error().code == "syntax_error" ? "SyntaxError" : "Error",
                                        lowered.error().message + " (in the module ipfs://" + module.cid + ")", ""};
            return false;
        }
        module.code = std::move(lowered).value();
        module.lower = false;
        if (auto frame = EncodeSandboxMessage(SandboxModuleLowered{module.cid, module.code}, SANDBOX_MAX_CHILD_PAYLOAD);
            frame.ok()) {
            if (!WriteAll(*frame)) Die(SANDBOX_EXIT_CHANNEL_LOST);
        }
    }
    return true;
}

// Whether RUN carries every module the run's code imports (the action's header and each module's).
// The worker resolves the graph from lowered text; what it sent as source was lowered just now, and
// may import modules the worker could not know of: then the run ends, before any of its code ran,
// with the error "sigil_imports_unresolved", and the worker (which now has the lowered text) runs it
// again with them (workers/actions/runner.cpp).
bool ImportsResolved(ChildState& st, const SandboxRun& run) {
    std::vector<std::string> missing;
    auto check = [&](std::string_view code) {
        for (auto& cid : ParseImportHeader(code).cids) {
            bool sent = false;
            for (const auto& module : run.modules) sent = sent || module.cid == cid;
            if (!sent) missing.push_back(std::move(cid));
        }
    };
    check(run.code);
    for (const auto& module : run.modules) check(module.code);
    if (missing.empty()) return true;
    std::string list;
    for (const auto& cid : missing) list += (list.empty() ? "ipfs://" : ", ipfs://") + cid;
    st.done.ok = false;
    st.done.error = ScriptError{"sigil_imports_unresolved", "the run imports modules it was not given: " + list, ""};
    return false;
}

// [] -> []: compiles each module into its function (module, exports, require, __sigil_exports),
// named by its CID for stack traces, and hands them to __sigil_define_modules (prelude.js), which
// the script cannot call after this. Nothing of a module runs until it is imported.
duk_ret_t LinkModules(duk_context* ctx, void* udata) {
    const auto* run = static_cast<const SandboxRun*>(udata);
    ChildState& st = *g_state;
    duk_get_global_string(ctx, "__sigil_define_modules");
    duk_push_array(ctx);
    for (std::size_t i = 0; i < run->modules.size(); ++i) {
        const auto& cid = run->modules[i].cid;
        duk_push_object(ctx);
        duk_push_lstring(ctx, cid.data(), cid.size());
        duk_put_prop_string(ctx, -2, "cid");
        duk_push_boolean(ctx, st.module_esm[i]);
        duk_put_prop_string(ctx, -2, "esm");
        duk_push_string(ctx, "ipfs://");
        duk_push_lstring(ctx, cid.data(), cid.size());
        duk_concat(ctx, 2);
        const auto& text = st.module_functions[i];
        duk_compile_lstring_filename(ctx, DUK_COMPILE_FUNCTION, text.data(), text.size());
        duk_put_prop_string(ctx, -2, "factory");
        duk_put_prop_index(ctx, -2, static_cast<duk_uarridx_t>(i));
    }
    duk_call(ctx, 1);
    return 0;
}

// [params_json, cid, caller_json] -> []: js_params become globals, the CID goes into Lit.Auth and
// the caller into Sigil.Actions.caller() before the code runs (prelude.js).
duk_ret_t SetParams(duk_context* ctx, void*) {
    duk_get_global_string(ctx, "__sigil_set_params");
    duk_dup(ctx, 0);
    duk_dup(ctx, 1);
    duk_dup(ctx, 2);
    duk_call(ctx, 3);
    return 0;
}

// Runs the script and main; fills st.done. Every Duktape call here is protected.
void Execute(duk_context* ctx, ChildState& st, const SandboxRun& run) {
    // The line breaks stay the module's own, so its line numbers are the lowered text's.
    for (const auto& module : run.modules) {
        st.module_functions.push_back("function (module, exports, require, __sigil_exports) {" + module.code + "\n}");
        st.module_esm.push_back(ParseImportHeader(module.code).esm);
    }
    if (duk_safe_call(ctx, LinkModules, const_cast<SandboxRun*>(&run), 0, 1) != DUK_EXEC_SUCCESS) {
        CaptureError(ctx, st);
        return;
    }
    duk_pop(ctx);
    duk_push_lstring(ctx, run.params_json.data(), run.params_json.size());
    duk_push_lstring(ctx, run.cid.data(), run.cid.size());
    duk_push_lstring(ctx, run.caller_json.data(), run.caller_json.size());
    if (duk_safe_call(ctx, SetParams, nullptr, 3, 1) != DUK_EXEC_SUCCESS) {
        CaptureError(ctx, st);
        return;
    }
    duk_pop(ctx);
    duk_push_string(ctx, "action.js");
    if (duk_pcompile_lstring_filename(ctx, 0, run.code.data(), run.code.size()) != 0 ||
        duk_pcall(ctx, 0) != DUK_EXEC_SUCCESS) {
        CaptureError(ctx, st);
        return;
    }
    duk_pop(ctx);
    duk_push_lstring(ctx, run.params_json.data(), run.params_json.size());
    if (duk_safe_call(ctx, CallMain, nullptr, 1, 1) != DUK_EXEC_SUCCESS) {
        CaptureError(ctx, st);
        return;
    }
    duk_size_t len = 0;
    const char* json = duk_get_lstring(ctx, -1, &len);
    st.done.ok = true;
    st.done.response_json = WellFormedUtf8(json != nullptr ? json : "", json != nullptr ? len : 0);
    duk_pop(ctx);
}

// What the child tells its parent, decided after the engine is done with the run.
[[noreturn]] void Finish(ChildState& st) {
    if (st.timed_out) Die(SANDBOX_EXIT_TIME_LIMIT);
    if (MemoryRefused(st)) Die(SANDBOX_EXIT_MEMORY_LIMIT);
    auto frame = EncodeSandboxMessage(st.done, SANDBOX_MAX_CHILD_PAYLOAD);
    if (!frame.ok()) {
        frame = EncodeSandboxMessage(
            SandboxDone{false, "", ScriptError{"response_too_large", "the response exceeds the channel's frame cap", ""}},
            SANDBOX_MAX_CHILD_PAYLOAD);
    }
    if (!frame.ok() || !WriteAll(*frame)) Die(SANDBOX_EXIT_CHANNEL_LOST);
    // EOF right after DONE: the worker answers without waiting for this process's teardown (which
    // releases its copy of the zygote's mappings before the descriptors would close).
    ::close(CHANNEL_FD);
    Die(SANDBOX_EXIT_OK);
}

// The run heap the zygote builds before any fork (PrepareSandboxHeap); each child runs in its
// own copy-on-write copy of it, so no run pays for evaluating the runtime.
duk_context* g_prepared_heap = nullptr;

duk_context* CreateRunHeap(ChildState& st, const SandboxChildOptions& options) {
    duk_context* ctx = duk_create_heap(CountingAlloc, CountingRealloc, CountingFree, &st, FatalHandler);
    if (ctx == nullptr) return nullptr;
    if (duk_safe_call(ctx, SetUpGlobals, const_cast<SandboxChildOptions*>(&options), 0, 1) != DUK_EXEC_SUCCESS) {
        duk_pop(ctx);
        duk_destroy_heap(ctx);
        return nullptr;
    }
    duk_pop(ctx);
    return ctx;
}

}  // namespace

bool PrepareSandboxHeap(const SandboxChildOptions& options) {
    if (g_prepared_heap == nullptr) g_prepared_heap = CreateRunHeap(g_child_state, options);
    g_zygote_address_space = CurrentAddressSpace();
    return g_prepared_heap != nullptr;
}

SandboxHeapHooks SandboxHeap() {
    return SandboxHeapHooks{g_state, CountingAlloc, CountingRealloc, CountingFree};
}

void WarmUpSandboxParent() {
    // The first use of each builds its state: secp256k1's context draws its blinding seed
    // from getrandom, and OpenSSL may read its configuration.
    static const std::uint8_t one[32] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    auto key = common::PrivateKey::FromBytes(common::ByteView(one, sizeof(one)));
    if (key.ok()) (void)common::SignDigest(*key, common::Hash32{});
    common::Sha256 sha;
    sha.Update(common::ByteView(one, sizeof(one)));
    (void)sha.Final();
    SetUtc();
}

[[noreturn]] void RunSandboxChild(int channel_fd, const SandboxChildOptions& options, Transpiler* transpiler) {
    // The zygote blocks SIGCHLD for its signalfd and may have handlers: start from defaults.
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    for (int sig : {SIGCHLD, SIGPIPE, SIGXCPU, SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    CloseAllBut(channel_fd);

    ChildState& st = g_child_state;  // outlives every longjmp and is reachable from the hooks
    SeedRandom();
    SandboxMessage first = ReadMessage(st);
    auto* run = std::get_if<SandboxRun>(&first);
    if (run == nullptr) Die(SANDBOX_EXIT_CHANNEL_LOST);
    // Heaps preloaded in the zygote (the transpiler) are not the run's to pay for.
    st.mem_cap = st.mem_used + static_cast<std::size_t>(run->memory_bytes);
    st.has_deadline = true;
    ::clock_gettime(CLOCK_MONOTONIC, &st.deadline);
    st.deadline.tv_sec += static_cast<time_t>(run->time_ms / 1000);
    st.deadline.tv_nsec += static_cast<long>(run->time_ms % 1000) * 1000000L;
    if (st.deadline.tv_nsec >= 1000000000L) {
        st.deadline.tv_sec += 1;
        st.deadline.tv_nsec -= 1000000000L;
    }

    LockDown(*run);
    g_transpiler = transpiler;
    if ((run->lower && transpiler != nullptr && !LowerCode(st, *transpiler, *run)) || !LowerModules(st, transpiler, *run) ||
        !ImportsResolved(st, *run)) {
        if (st.timed_out) Die(SANDBOX_EXIT_TIME_LIMIT);
        if (MemoryRefused(st)) Die(SANDBOX_EXIT_MEMORY_LIMIT);
        Finish(st);
    }

    duk_context* ctx = g_prepared_heap != nullptr ? g_prepared_heap : CreateRunHeap(st, options);
    if (ctx == nullptr) Die(MemoryRefused(st) ? SANDBOX_EXIT_MEMORY_LIMIT : SANDBOX_EXIT_SETUP_FAILED);
    Execute(ctx, st, *run);
    // The heap is never destroyed: _exit returns every page at once and faster.
    Finish(st);
}

}  // namespace sigil::workers

// Duktape's execution-timeout hook (workers/duktape/duk_config.h). Only the sandbox heap has a
// deadline; any other heap in the process passes a different udata and never times out.
extern "C" duk_bool_t sigil_duk_exec_timeout_check(void* udata) {
    using sigil::workers::g_state;
    if (udata != g_state || !g_state->has_deadline) return 0;
    if (g_state->timed_out) return 1;
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > g_state->deadline.tv_sec ||
        (now.tv_sec == g_state->deadline.tv_sec && now.tv_nsec >= g_state->deadline.tv_nsec)) {
        g_state->timed_out = true;
        return 1;
    }
    return 0;
}
