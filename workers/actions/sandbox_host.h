// The worker's side of the action sandbox: starts the sigil-sandbox zygote (fork + exec), asks
// it for one child per run, feeds the run over a socketpair, serves its ops, and tells how it
// ended.
//
// Process model (Chromium's zygote, DESIGN.md section 1): under the supervisor a worker connects
// to the few zygotes the supervisor started (shared by the whole pool, $SIGIL_ZYGOTE_SOCKET);
// started without one (tests, a worker by hand) it starts its own before it touches any request
// data. The zygote is its own executable, so it and its children carry no libcurl, libfcgi, chain
// code or worker heap. Per run the worker makes a socketpair, passes one end to the zygote
// (workers/sandbox/protocol/control.h), and the zygote forks a child on it. The zygote reaps the child and
// reports its wait status, which is how "limit hit" is decided: from how the child ended, never
// from what it said.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/handles.h"
#include "common/result.h"
#include "workers/sandbox/protocol/protocol.h"

namespace sigil::workers {

struct ZygoteOptions {
    // The sandbox executable; "" = sigil-sandbox in the folder of the running program
    // (/proc/self/exe), where the build and `make install` put it beside sigil-worker.
    std::string executable;
    // Extra arguments, e.g. "--no-transpiler" (sigil-sandbox's usage is in workers/sandbox/zygote.h).
    std::vector<std::string> args;
};

// sigil-sandbox beside the running program: dirname(/proc/self/exe) + "/sigil-sandbox".
std::string DefaultSandboxExecutable();

// The environment variable in which sigil-supervisor gives its workers the shared zygotes'
// address ("@name": an abstract unix socket address; else a path).
constexpr const char* ZYGOTE_SOCKET_ENV = "SIGIL_ZYGOTE_SOCKET";

// How long a worker waits for a shared zygote's SPAWNED (it may be waiting for the supervisor to
// restart a killed zygote) before the run fails with Timeout "zygote_timeout".
constexpr int SHARED_SPAWN_TIMEOUT_MS = 5000;

// A worker replaces its connection to the shared zygotes after this many runs: the least busy
// zygote accepts a new connection first (workers/sandbox/zygote.cpp), so connections that piled up
// on one zygote (it was ready first, or another was restarted) spread out again under load.
constexpr std::uint64_t ZYGOTE_REBALANCE_RUNS = 64;

class Zygote {
public:
    // Forks and execs the zygote with its control socket as descriptor 3 and 0 on /dev/null;
    // every other descriptor of the worker is closed, the environment is empty (but for
    // sanitizer options), and it dies with this process (PR_SET_PDEATHSIG).
    // Errors: Internal "zygote_start_failed" (socketpair, fork or exec failed; the message names
    // the executable and the reason).
    static common::Result<Zygote> Start(const ZygoteOptions& options = {});
    // Connects to the shared zygotes listening at `address` (see ZYGOTE_SOCKET_ENV); the kernel
    // hands the connection to one of them. Errors: Unavailable "zygote_gone" (nothing listens).
    static common::Result<Zygote> Connect(const std::string& address);

    Zygote(Zygote&&) noexcept = default;
    Zygote& operator=(Zygote&&) noexcept = default;
    // Closes the control socket (the zygote then kills its children and exits) and reaps it.
    ~Zygote();

    pid_t pid() const { return m_pid; }  // -1 for a connection to shared zygotes

    // Whether this is a connection to shared zygotes (which Reconnect can replace).
    bool shared() const { return !m_address.empty(); }
    // Shared only: a new connection in place of this one (the old one's children are killed by its
    // zygote). Errors: as Connect's; Internal "not_shared" for a zygote of our own.
    common::Status Reconnect();
    // Shared only (a no-op otherwise): reconnects when the zygote hung up since the last call (it
    // was killed or restarted) or a timeout dropped the connection. Errors: as Connect's.
    common::Status EnsureConnected();
    // Shared only (a no-op otherwise): counts a finished run and, every ZYGOTE_REBALANCE_RUNS,
    // connects anew (connect returns at once; a zygote accepts before the next run needs it).
    void RunEnded();

    // Forks a child on channel_fd (the zygote receives a copy; the caller keeps its own).
    // Returns the child's pid. Errors: Unavailable "zygote_gone", Internal "spawn_failed".
    common::Result<pid_t> Spawn(int channel_fd);
    // Spawn in two halves, so the caller can work while the zygote forks: RequestSpawn sends the
    // request (channel_fd may be closed once it returns), AwaitSpawned waits for the child's pid.
    // Every successful RequestSpawn must be followed by one AwaitSpawned. Errors: as Spawn's, and
    // for shared zygotes Timeout "zygote_timeout" after SHARED_SPAWN_TIMEOUT_MS (the connection is
    // then dropped, so a late SPAWNED is never taken for a later run's).
    common::Status RequestSpawn(int channel_fd);
    common::Result<pid_t> AwaitSpawned();
    // Asks the zygote to SIGKILL `child` if it is still one of its unreaped children (so a
    // recycled pid is never hit). Errors: Unavailable "zygote_gone".
    common::Status Kill(pid_t child);
    // Waits up to timeout_ms for the zygote's exit report of `child`; returns its wait status.
    // Reports for other pids (from abandoned runs) are dropped.
    // Errors: Timeout "zygote_timeout", Unavailable "zygote_gone".
    common::Result<int> WaitExit(pid_t child, int timeout_ms);

    int control_fd() const { return m_control.get(); }

private:
    Zygote(common::UniqueFd control, pid_t pid, std::string address = {})
        : m_control(std::move(control)), m_pid(pid), m_address(std::move(address)) {}

    common::UniqueFd m_control;
    pid_t m_pid = -1;
    std::string m_address;  // shared zygotes' address; "" for our own
    std::uint64_t m_runs = 0;
};

// Worker-side limits for one run (defaults from DESIGN.md section 5).
struct RunLimits {
    std::uint64_t time_ms = 30000;
    std::uint64_t memory_bytes = 64u * 1024 * 1024;
    std::size_t max_response_bytes = 100u * 1024;
    std::size_t max_log_bytes = 100u * 1024;   // each line counted with its newline
    std::uint32_t max_ops = 60;
    // Why time_ms is shorter than the configured limit ("" when it is not): said in the
    // time_limit error, e.g. that the caller's credit or the key's spend cap held only so many seconds.
    std::string time_limited_by;
};

// What a script error may carry into the HTTP answer; longer text is cut with a marker, so a run's
// body never exceeds response + logs + these + a few hundred bytes of framing (DESIGN section 5).
constexpr std::size_t SCRIPT_ERROR_NAME_MAX_BYTES = 128;
constexpr std::size_t SCRIPT_ERROR_MESSAGE_MAX_BYTES = 4 * 1024;
constexpr std::size_t SCRIPT_ERROR_STACK_MAX_BYTES = 8 * 1024;

// `text` as UTF-8 (U+FFFD for what is not) of at most max_bytes: cut at a character boundary and
// ended with " [... N bytes cut]" when longer.
std::string CapText(std::string_view text, std::size_t max_bytes);

struct RunRequest {
    std::string code;
    std::string params_json;  // main's argument as JSON ("{}" when the caller sent none)
    RunLimits limits;
    bool lower = false;       // code is source to lower (true) or lowered text from the cache
    std::string cid;          // the action's CID, for Lit.Auth inside the run ("" for none)
    std::string caller_json;  // {apiKeyHash, accountHash, clientAddress} for Sigil.Actions.caller() ("" for none)
    // The modules the code imports by CID, transitively (workers/actions/imports.h); each lowered
    // text, or source the child lowers as a module (and reports: RunOutcome::lowered_modules).
    std::vector<SandboxModule> modules;
};

// The worker's side of the op channel. Called on the worker's thread while the child waits.
class OpHandler {
public:
    virtual ~OpHandler() = default;
    // Returns the result as JSON text; an error's message is thrown into the script as Error,
    // except an error whose code ends in "_limit" (a per-run limit the handler counts), which
    // ends the run as RunEnd::OpLimit with that code and message.
    virtual common::Result<std::string> OnOp(std::string_view name, std::string_view args_json) = 0;
    // Whether the error OnOp just returned is the service's failure (keyd or the chain down), not
    // the script's business: then the run ends (RunEnd::Stopped with that error) instead.
    virtual bool OpFailedOnOurSide() const { return false; }
    // A console line (already counted against max_log_bytes). An error stops the run
    // (RunEnd::Stopped, the error kept in RunOutcome::error).
    virtual common::Status OnLog(std::string_view text) = 0;
    // The child is about to be sent its code, under `limits` (admission may have shortened the
    // time): ops from here on are bounded by them.
    virtual void OnStart(const RunLimits& limits) { (void)limits; }
};

// How a run's admission works (billing, workers/api/run.cpp): `admit` is asked once before the
// child gets its code and may shorten limits.time_ms (saying why in limits.time_limited_by); its
// error is the request's, and then nothing of the action ran. `started` is told once the run's
// time counts for the caller: right before the child is sent its code.
struct RunAdmission {
    std::function<common::Status(RunLimits& limits)> admit;
    std::function<void()> started;
};

enum class RunEnd {
    Completed,      // main returned; response_json holds its JSON ("" for undefined)
    ScriptError,    // the script threw; error = {name, message, stack}
    TimeLimit,      // deadline, RLIMIT_CPU (SIGXCPU), the worker's SIGKILL, or an op that the
                    // run's own deadline left without time (an op error coded "time_limit")
    MemoryLimit,    // the counting allocator refused memory
    ResponseLimit,  // DONE's response exceeded max_response_bytes
    LogLimit,       // logs exceeded max_log_bytes
    OpLimit,        // more than max_ops ops
    Stopped,        // OnLog returned an error, or an op failed on the service's side (OpFailedOnOurSide)
    Crashed,        // anything else: a signal (SIGSYS = seccomp), a protocol violation, a bad exit
};

struct RunOutcome {
    RunEnd end = RunEnd::Crashed;
    std::string response_json;
    ScriptError error;    // ScriptError, Stopped and Crashed (code "sandbox_violation",
                          // "sandbox_crashed", "protocol_error")
    pid_t pid = -1;
    int wait_status = 0;  // as from waitpid
    // The child's user + system CPU time, as the zygote reaped it: only when the run waited for its
    // exit report (a limit, a crash); a run that answered returns first, and its report's CPU time
    // is counted (sigil_run_cpu_seconds) when the worker reads it, at its next run.
    std::uint64_t cpu_us = 0;
    std::uint32_t ops = 0;
    // The lowered code the child reported (RunRequest::lower runs that got past parsing): what
    // the worker caches by CID. Sent before any of the action's code ran.
    std::optional<std::string> lowered_code;
    // Likewise for modules RunRequest::modules sent as source: (CID, lowered text).
    std::vector<std::pair<std::string, std::string>> lowered_modules;
};

// Runs one action to its end. The child is SIGKILLed (through the zygote) when the wall clock
// passes time_ms + 1 s or a worker-side limit is hit. `admission.admit` (optional) runs once the
// zygote has been asked for the child and before the child is sent the code, so the fork overlaps
// it (a run's credit hold); when it fails, the child is killed without having run anything and
// its error is returned. `admission.started` and handler.OnStart are told right before the child
// is sent its code.
// With shared zygotes, a connection that broke since the last run is replaced first, and a run
// whose zygote died before it forked the child is asked once more on a new connection (nothing of
// it ran; admission is not asked again); a run whose zygote dies under it ends with "zygote_gone".
// Errors (infrastructure only; every way a script can end is a RunOutcome):
//   Unavailable "zygote_gone", Internal "spawn_failed" / "socketpair_failed",
//   TooLarge "frame_too_large" (code + params above the RUN cap), Timeout "zygote_timeout".
common::Result<RunOutcome> RunAction(Zygote& zygote, const RunRequest& request, OpHandler& handler,
                                     const RunAdmission& admission = {});

}  // namespace sigil::workers
