// What the metrics cost one hello-world run on the run path (issue 29), counted alone: the
// router's request count and latency, the run's ending and duration, the zygote spawn time, a keyd
// and two chain calls timed (what a run with a key check does), each on the shared mapping the
// supervisor makes. Prints ns per run with metrics bound and unbound (metrics off), and that cost as
// a fraction of 12 ms, a lower bound of a hello-world run's CPU through the stack here (2 cores at
// 60-80 runs/s is 25-33 ms each), so the ratio it prints is the least the counters can leave.
//   cmake --build build --target bench_metrics_counters && build/tests/bench/bench_metrics_counters
#include <chrono>
#include <cstdio>

#include "common/metrics.h"

using namespace sigil::common;

namespace {

// One run's worth of counting, as the worker does it.
void OneRun() {
    const std::int64_t start = MetricsNowUs();
    ObserveZygoteSpawn(MetricsNowUs() - start);
    {
        DependencyTimer keyd(Dependency::Keyd);
        keyd.MarkOk();
    }
    for (int i = 0; i < 2; ++i) {
        const std::int64_t t = MetricsNowUs();
        CountChainCall("eth_call", true, MetricsNowUs() - t);
        CountDependency(Dependency::Chain, true, MetricsNowUs() - t);
    }
    CountRun(RunEnding::Ok, MetricsNowUs() - start);
    CountRequest(42, 200, MetricsNowUs() - start);
}

double NsPerRun(int n) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) OneRun();
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
}

}  // namespace

int main() {
    constexpr int N = 2'000'000;
    auto metrics = Metrics::Create("bench-metrics");
    if (!metrics.ok()) {
        std::fprintf(stderr, "%s\n", metrics.error().message.c_str());
        return 1;
    }
    BindMetrics(nullptr);
    NsPerRun(N / 10);  // warm
    const double off = NsPerRun(N);
    BindMetrics(&*metrics);
    NsPerRun(N / 10);
    const double on = NsPerRun(N);
    std::printf("metrics counting per hello-world run: %.0f ns bound, %.1f ns unbound (metrics off)\n", on, off);
    std::printf("as a share of a run of 12 ms CPU: %.5f %% (runs/s ratio on/off >= %.5f)\n", on / 12e6 * 100,
                12e6 / (12e6 + on));
    return 0;
}
