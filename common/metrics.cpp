#include "common/metrics.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

namespace sigil::common {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

const double HISTOGRAM_BOUNDS_S[HISTOGRAM_BOUNDS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,    1,     2.5,  5,     10,   30};

namespace {

constexpr std::uint64_t kMagic = 0x5349474d45545243ULL;  // "SIGMETRC"
constexpr std::uint32_t kVersion = 2;
// The mapping's size, page-rounded so Attach can check it exactly.
constexpr std::size_t kSize = (sizeof(SharedMetrics) + 4095) / 4096 * 4096;

constexpr std::int64_t kBoundsUs[HISTOGRAM_BOUNDS] = {1000,   2500,   5000,    10000,   25000,    50000,    100000,
                                                      250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000};

// Process-wide, set once before any request (like common/activity.cpp's slot).
SharedMetrics* g_metrics = nullptr;

constexpr const char* kChainMethods[CHAIN_METHODS] = {
    "eth_call",           "eth_sendRawTransaction", "eth_getTransactionReceipt", "eth_getTransactionCount",
    "eth_blockNumber",    "eth_getLogs",            "eth_chainId",               "eth_estimateGas",
    "eth_feeHistory",     "eth_gasPrice",           "eth_getBalance",            "other"};

void Add(std::atomic<std::uint64_t>& a, std::uint64_t n) { a.fetch_add(n, std::memory_order_relaxed); }

}  // namespace

void SharedHistogram::Observe(std::int64_t micros) {
    if (micros < 0) micros = 0;
    std::uint32_t i = 0;
    while (i < HISTOGRAM_BOUNDS && micros > kBoundsUs[i]) ++i;
    Add(buckets[i], 1);
    Add(sum_us, static_cast<std::uint64_t>(micros));
    Add(count, 1);
}

const char* RunEndingName(RunEnding ending) {
    switch (ending) {
        case RunEnding::Ok: return "ok";
        case RunEnding::ScriptError: return "script_error";
        case RunEnding::TimeLimit: return "time_limit";
        case RunEnding::MemoryLimit: return "memory_limit";
        case RunEnding::ResponseLimit: return "response_limit";
        case RunEnding::LogLimit: return "log_limit";
        case RunEnding::OpLimit: return "op_limit";
        case RunEnding::Stopped: return "stopped";
        case RunEnding::Crashed: return "crashed";
        case RunEnding::Refused: return "refused";
        case RunEnding::Failed: return "failed";
        case RunEnding::Count_: break;
    }
    return "unknown";
}

const char* OpKindName(OpKind kind) {
    switch (kind) {
        case OpKind::Sign: return "sign";
        case OpKind::Encrypt: return "encrypt";
        case OpKind::Decrypt: return "decrypt";
        case OpKind::Fetch: return "fetch";
        case OpKind::Key: return "key";
        case OpKind::Other: return "other";
        case OpKind::Count_: break;
    }
    return "unknown";
}

std::uint32_t ChainMethodIndex(std::string_view method) {
    for (std::uint32_t i = 0; i + 1 < CHAIN_METHODS; ++i) {
        if (method == kChainMethods[i]) return i;
    }
    return CHAIN_METHODS - 1;
}

const char* ChainMethodName(std::uint32_t index) { return kChainMethods[index < CHAIN_METHODS ? index : CHAIN_METHODS - 1]; }

const char* DependencyName(Dependency dependency) {
    switch (dependency) {
        case Dependency::Chain: return "chain";
        case Dependency::Keyd: return "keyd";
        case Dependency::Ledger: return "ledger";
        case Dependency::Gateway: return "gateway";
        case Dependency::Fetch: return "fetch";
        case Dependency::Lowerer: return "lowerer";
        case Dependency::Agent: return "agent";
        case Dependency::Count_: break;
    }
    return "unknown";
}

const char* WorkerExitName(WorkerExit exit) {
    switch (exit) {
        case WorkerExit::Recycled: return "recycled";
        case WorkerExit::Stopped: return "stopped";
        case WorkerExit::Crashed: return "crashed";
        case WorkerExit::HardTimeout: return "hard_timeout";
        case WorkerExit::Count_: break;
    }
    return "unknown";
}

Result<Metrics> Metrics::Create(const std::string& name) {
    auto fail = [](const char* what) {
        return MakeError(ErrorKind::Internal, "metrics_create", std::string(what) + ": " + std::strerror(errno));
    };
    UniqueFd fd(memfd_create(name.c_str(), MFD_CLOEXEC));
    if (!fd.valid()) return fail("memfd_create");
    if (ftruncate(fd.get(), static_cast<off_t>(kSize)) != 0) return fail("ftruncate");
    void* map = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) return fail("mmap");
    auto* m = static_cast<SharedMetrics*>(map);  // the memfd is zero-filled: every counter starts at 0
    m->magic = kMagic;
    m->version = kVersion;
    m->size = static_cast<std::uint32_t>(kSize);
    return Metrics(std::move(fd), m);
}

Result<Metrics> Metrics::Attach(int raw_fd) {
    UniqueFd fd(raw_fd);
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || static_cast<std::size_t>(st.st_size) != kSize) {
        return MakeError(ErrorKind::InvalidInput, "metrics_invalid", "the metrics mapping has the wrong size");
    }
    void* map = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) {
        return MakeError(ErrorKind::InvalidInput, "metrics_invalid", std::string("mmap: ") + std::strerror(errno));
    }
    auto* m = static_cast<SharedMetrics*>(map);
    if (m->magic != kMagic || m->version != kVersion || m->size != kSize) {
        munmap(map, kSize);
        return MakeError(ErrorKind::InvalidInput, "metrics_invalid", "the metrics mapping is not this build's");
    }
    return Metrics(std::move(fd), m);
}

Metrics::Metrics(Metrics&& o) noexcept : m_fd(std::move(o.m_fd)), m_map(std::exchange(o.m_map, nullptr)) {}

Metrics& Metrics::operator=(Metrics&& o) noexcept {
    if (this != &o) {
        if (m_map != nullptr) munmap(m_map, kSize);
        m_fd = std::move(o.m_fd);
        m_map = std::exchange(o.m_map, nullptr);
    }
    return *this;
}

Metrics::~Metrics() {
    if (m_map != nullptr) munmap(m_map, kSize);
}

void BindMetrics(Metrics* metrics) { g_metrics = metrics != nullptr ? &metrics->shared() : nullptr; }

SharedMetrics* BoundMetrics() { return g_metrics; }

std::int64_t MetricsNowUs() {
    if (g_metrics == nullptr) return 0;  // metrics off: not even the clock read
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void CountRequest(std::uint32_t route_index, int status, std::int64_t micros) {
    if (g_metrics == nullptr) return;
    if (route_index >= METRICS_ROUTES) route_index = 0;
    int cls = status / 100 - 1;
    if (cls < 0 || cls >= static_cast<int>(STATUS_CLASSES)) cls = STATUS_CLASSES - 1;
    Add(g_metrics->requests[route_index][cls], 1);
    g_metrics->request_seconds[route_index].Observe(micros);
}

void CountRun(RunEnding ending, std::int64_t micros) {
    if (g_metrics == nullptr) return;
    const auto i = static_cast<std::uint32_t>(ending) % RUN_ENDINGS;
    Add(g_metrics->runs[i], 1);
    g_metrics->run_seconds[i].Observe(micros);
}

void CountRunCpu(std::int64_t micros) {
    if (g_metrics == nullptr) return;
    g_metrics->run_cpu_seconds.Observe(micros);
}

void CountOp(OpKind kind) {
    if (g_metrics == nullptr) return;
    Add(g_metrics->run_ops[static_cast<std::uint32_t>(kind) % OP_KINDS], 1);
}

void CountChainCall(std::string_view method, bool ok, std::int64_t micros) {
    if (g_metrics == nullptr) return;
    const auto i = ChainMethodIndex(method);
    Add(g_metrics->chain_calls[i], 1);
    if (!ok) Add(g_metrics->chain_failures[i], 1);
    g_metrics->chain_seconds[i].Observe(micros);
}

void CountDependency(Dependency dependency, bool ok, std::int64_t micros) {
    if (g_metrics == nullptr) return;
    const auto i = static_cast<std::uint32_t>(dependency) % DEPENDENCIES;
    if (!ok) Add(g_metrics->dependency_failures[i], 1);
    g_metrics->dependency_seconds[i].Observe(micros);
}

void CountCredits(std::int64_t charged_cents, std::int64_t refunded_cents) {
    if (g_metrics == nullptr) return;
    if (charged_cents > 0) Add(g_metrics->credits_charged_cents, static_cast<std::uint64_t>(charged_cents));
    if (refunded_cents > 0) Add(g_metrics->credits_refunded_cents, static_cast<std::uint64_t>(refunded_cents));
}

void CountPaymentConfirmed(std::int64_t cents) {
    if (g_metrics == nullptr) return;
    Add(g_metrics->payments_confirmed, 1);
    if (cents > 0) Add(g_metrics->payments_confirmed_cents, static_cast<std::uint64_t>(cents));
}

void CountOverloadRefusal() {
    if (g_metrics != nullptr) Add(g_metrics->overload_refusals, 1);
}

void CountHistoryDropped(std::uint64_t records) {
    if (g_metrics != nullptr && records > 0) Add(g_metrics->history_dropped, records);
}

void ObserveZygoteSpawn(std::int64_t micros) {
    if (g_metrics != nullptr) g_metrics->zygote_spawn_seconds.Observe(micros);
}

void AddLowererQueued(std::int64_t delta) {
    if (g_metrics != nullptr) g_metrics->lowerer_queued.fetch_add(static_cast<std::uint64_t>(delta), std::memory_order_relaxed);
}

void CountWorkerStart() {
    if (g_metrics != nullptr) Add(g_metrics->worker_starts, 1);
}

void CountWorkerExit(WorkerExit exit) {
    if (g_metrics != nullptr) Add(g_metrics->worker_exits[static_cast<std::uint32_t>(exit) % WORKER_EXITS], 1);
}

void CountZygoteStart() {
    if (g_metrics != nullptr) Add(g_metrics->zygote_starts, 1);
}

void CountReload() {
    if (g_metrics != nullptr) Add(g_metrics->reloads, 1);
}

}  // namespace sigil::common
