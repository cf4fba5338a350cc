// A minimal benchmark loop: runs a body until enough time has passed and reports the rate.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>

namespace sigil::bench {

struct Rate {
    double per_second = 0;   // iterations per second
    double ns_per_op = 0;
};

// Runs `body` in batches for at least `min_seconds` after one warm-up batch.
inline Rate Measure(const std::function<void()>& body, double min_seconds = 1.0) {
    using Clock = std::chrono::steady_clock;
    for (int i = 0; i < 16; ++i) body();
    long iterations = 0;
    long batch = 16;
    const auto start = Clock::now();
    double elapsed = 0;
    while (elapsed < min_seconds) {
        for (long i = 0; i < batch; ++i) body();
        iterations += batch;
        batch *= 2;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    }
    return Rate{iterations / elapsed, elapsed * 1e9 / iterations};
}

inline void Report(const char* name, const Rate& r, const char* unit = "ops/s") {
    std::printf("%-40s %14.1f %-6s %10.1f ns/op\n", name, r.per_second, unit, r.ns_per_op);
}

inline void ReportThroughput(const char* name, const Rate& r, double bytes_per_op) {
    std::printf("%-40s %14.1f MB/s\n", name, r.per_second * bytes_per_op / 1e6);
}

}  // namespace sigil::bench
