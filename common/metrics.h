// The pool's Prometheus counters: one shared mapping of fixed arrays of atomics that every process
// of an instance adds to, so one scrape of /metrics sees the whole instance (issue 29).
//
// The supervisor creates it (memfd) next to the scoreboard and passes it to its workers as a
// descriptor ($SIGIL_METRICS_FD); a process binds it once (BindMetrics) and from then on the Count*
// and Observe* functions below are a few relaxed atomic adds on shared memory: no lock, no system
// call, no allocation, so they never show on the request path. Unbound (metrics off, a worker
// started by hand, a unit test) they do nothing. Labels are small fixed enumerations (route index,
// status class, ending, kind): nothing here can hold an account, a key or a CID.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/handles.h"
#include "common/result.h"

namespace sigil::common {

// Upper bounds (seconds) of every histogram's buckets; +Inf is implied after the last.
constexpr std::uint32_t HISTOGRAM_BOUNDS = 14;
extern const double HISTOGRAM_BOUNDS_S[HISTOGRAM_BOUNDS];

// A fixed-bucket histogram: counts per bucket (not cumulative; the renderer sums them), the sum of
// observations in microseconds and their number.
struct SharedHistogram {
    std::atomic<std::uint64_t> buckets[HISTOGRAM_BOUNDS + 1];
    std::atomic<std::uint64_t> sum_us;
    std::atomic<std::uint64_t> count;

    void Observe(std::int64_t micros);
};

// Routes by their index in the worker's route table (every worker registers the same table);
// index 0 is "no route matched".
constexpr std::uint32_t METRICS_ROUTES = 160;
// 1xx..5xx.
constexpr std::uint32_t STATUS_CLASSES = 5;

// How a run ended (workers/actions RunEnd, plus the runs refused or failed before their code ran).
enum class RunEnding : std::uint32_t {
    Ok, ScriptError, TimeLimit, MemoryLimit, ResponseLimit, LogLimit, OpLimit, Stopped, Crashed,
    Refused,  // admission (credit, runs per key) said no: none of the action's code ran
    Failed,   // the service failed before the run started (zygote, keyd, gateway, chain)
    Count_
};
constexpr std::uint32_t RUN_ENDINGS = static_cast<std::uint32_t>(RunEnding::Count_);
const char* RunEndingName(RunEnding ending);

// What an action asked its worker for (key: a public or private key or address; the chain reads
// each op's authorization needs are in the chain series).
enum class OpKind : std::uint32_t { Sign, Encrypt, Decrypt, Fetch, Key, Other, Count_ };
constexpr std::uint32_t OP_KINDS = static_cast<std::uint32_t>(OpKind::Count_);
const char* OpKindName(OpKind kind);

// JSON-RPC methods the chain client calls (anything else counts as "other").
constexpr std::uint32_t CHAIN_METHODS = 12;
std::uint32_t ChainMethodIndex(std::string_view method);
const char* ChainMethodName(std::uint32_t index);

// Dependencies whose calls are timed and whose failures are counted.
enum class Dependency : std::uint32_t { Chain, Keyd, Ledger, Gateway, Fetch, Lowerer, Agent, Count_ };
constexpr std::uint32_t DEPENDENCIES = static_cast<std::uint32_t>(Dependency::Count_);
const char* DependencyName(Dependency dependency);

// Why a worker ended (the supervisor's view).
enum class WorkerExit : std::uint32_t { Recycled, Stopped, Crashed, HardTimeout, Count_ };
constexpr std::uint32_t WORKER_EXITS = static_cast<std::uint32_t>(WorkerExit::Count_);
const char* WorkerExitName(WorkerExit exit);

// The whole mapping. Plain atomics only: a process killed mid-update leaves at worst one count
// short, never a lock held.
struct SharedMetrics {
    std::uint64_t magic;
    std::uint32_t version;
    std::uint32_t size;
    std::atomic<std::uint64_t> requests[METRICS_ROUTES][STATUS_CLASSES];
    SharedHistogram request_seconds[METRICS_ROUTES];
    std::atomic<std::uint64_t> runs[RUN_ENDINGS];
    SharedHistogram run_seconds[RUN_ENDINGS];
    // The sandbox child's user + system CPU per run, counted when its worker reads the child's exit
    // report: at once for a run that waited for it, at the worker's next run for one that answered first.
    SharedHistogram run_cpu_seconds;
    std::atomic<std::uint64_t> run_ops[OP_KINDS];
    std::atomic<std::uint64_t> chain_calls[CHAIN_METHODS];
    std::atomic<std::uint64_t> chain_failures[CHAIN_METHODS];
    SharedHistogram chain_seconds[CHAIN_METHODS];
    std::atomic<std::uint64_t> dependency_failures[DEPENDENCIES];
    SharedHistogram dependency_seconds[DEPENDENCIES];
    std::atomic<std::uint64_t> credits_charged_cents;
    std::atomic<std::uint64_t> credits_refunded_cents;
    std::atomic<std::uint64_t> payments_confirmed;
    std::atomic<std::uint64_t> payments_confirmed_cents;
    std::atomic<std::uint64_t> overload_refusals;  // 503 overloaded / 429 too_many_runs by a worker
    SharedHistogram zygote_spawn_seconds;          // asking a zygote for a child until it has forked
    std::atomic<std::uint64_t> lowerer_queued;     // lowerings waiting on or in the lowerer right now
    std::atomic<std::uint64_t> history_dropped;    // run history records a worker dropped (its queue was full)
    // Supervisor.
    std::atomic<std::uint64_t> worker_starts;
    std::atomic<std::uint64_t> worker_exits[WORKER_EXITS];
    std::atomic<std::uint64_t> zygote_starts;
    std::atomic<std::uint64_t> reloads;
};

class Metrics {
public:
    static constexpr const char* FD_ENV = "SIGIL_METRICS_FD";

    // A zeroed mapping in a close-on-exec memfd named `name`.
    // Errors: Internal "metrics_create" (memfd, ftruncate or mmap failed; the message has errno text).
    static Result<Metrics> Create(const std::string& name);
    // Maps an existing one (takes ownership of `fd`). Errors: InvalidInput "metrics_invalid" (size,
    // magic or version are not this build's).
    static Result<Metrics> Attach(int fd);

    Metrics(Metrics&& o) noexcept;
    Metrics& operator=(Metrics&& o) noexcept;
    Metrics(const Metrics&) = delete;
    Metrics& operator=(const Metrics&) = delete;
    ~Metrics();

    int fd() const { return m_fd.get(); }
    SharedMetrics& shared() { return *m_map; }
    const SharedMetrics& shared() const { return *m_map; }

private:
    Metrics(UniqueFd fd, SharedMetrics* map) : m_fd(std::move(fd)), m_map(map) {}
    UniqueFd m_fd;
    SharedMetrics* m_map = nullptr;
};

// Binds this process's counters (once, at start; `metrics` must outlive every count; nullptr unbinds).
void BindMetrics(Metrics* metrics);
// The bound mapping, or nullptr.
SharedMetrics* BoundMetrics();

// The request path's calls: each is a no-op when unbound.
void CountRequest(std::uint32_t route_index, int status, std::int64_t micros);
void CountRun(RunEnding ending, std::int64_t micros);
void CountRunCpu(std::int64_t micros);
void CountOp(OpKind kind);
void CountChainCall(std::string_view method, bool ok, std::int64_t micros);
void CountDependency(Dependency dependency, bool ok, std::int64_t micros);
void CountCredits(std::int64_t charged_cents, std::int64_t refunded_cents);
void CountPaymentConfirmed(std::int64_t cents);
void CountOverloadRefusal();
void CountHistoryDropped(std::uint64_t records);
void ObserveZygoteSpawn(std::int64_t micros);
void AddLowererQueued(std::int64_t delta);
// Supervisor side.
void CountWorkerStart();
void CountWorkerExit(WorkerExit exit);
void CountZygoteStart();
void CountReload();

// Microseconds on the monotonic clock (vDSO: no system call), for the durations above.
std::int64_t MetricsNowUs();

// Times a dependency call for its scope: MarkOk() before it ends when the call succeeded.
class DependencyTimer {
public:
    explicit DependencyTimer(Dependency dependency) : m_dependency(dependency), m_start(MetricsNowUs()) {}
    ~DependencyTimer() { CountDependency(m_dependency, m_ok, MetricsNowUs() - m_start); }
    DependencyTimer(const DependencyTimer&) = delete;
    DependencyTimer& operator=(const DependencyTimer&) = delete;
    void MarkOk() { m_ok = true; }

private:
    Dependency m_dependency;
    std::int64_t m_start;
    bool m_ok = false;
};

}  // namespace sigil::common
