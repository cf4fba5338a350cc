// The sandbox alone, through the worker's host API (workers/actions/sandbox_host): one hello-world
// run is a SPAWN to the sigil-sandbox zygote, a fork, a fresh heap, the run and the exit report.
// Prints p50/p90/p99/max over N runs for code that is already lowered (what the worker's cache
// hands a repeated CID) and for source lowered in the child (a first run of a CID), then the same
// for ethers actions (a Wallet's signMessage; Interface.encodeFunctionData), and the zygote's
// start-up (start to the first run's end, which includes preparing the heap) and resident size.
//
//   cmake --build build --target bench_sandbox && build/tests/bench/bench_sandbox [RUNS=500] [SANDBOX]
//
// SANDBOX defaults to the build's bin/sigil-sandbox. With SIGIL_BENCH_HELLO_ONLY set in the environment
// it stops after the first line (for before/after rounds of two sandbox builds, one sitting). Each
// line also gives the CPU time and page faults per run of the run children and of the zygote (from
// /proc: what a run costs however loaded the machine is).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "workers/actions/sandbox_host.h"

using namespace sigil;

namespace {

// Hello world makes no op and logs nothing; anything else is a broken build.
class NoOps : public workers::OpHandler {
public:
    common::Result<std::string> OnOp(std::string_view, std::string_view) override {
        return common::MakeError(common::ErrorKind::Forbidden, "unexpected_op", "hello world makes no op");
    }
    common::Status OnLog(std::string_view) override { return common::Success(); }
};

// A process's CPU ticks and minor faults from /proc/<pid>/stat: its own and its reaped children's.
struct ProcCpu {
    long utime = 0, stime = 0, cutime = 0, cstime = 0, minflt = 0, cminflt = 0;
};
ProcCpu ReadProcCpu(pid_t pid) {
    ProcCpu p;
    std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
    if (f == nullptr) return p;
    char buf[1024] = {};
    const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    const char* close = std::strrchr(buf, ')');
    if (n == 0 || close == nullptr) return p;
    // Fields 3.. after the command name: state ppid pgrp session tty tpgid flags minflt cminflt
    // majflt cmajflt utime stime cutime cstime.
    std::sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %ld %ld %*u %*u %ld %ld %ld %ld", &p.minflt, &p.cminflt,
                &p.utime, &p.stime, &p.cutime, &p.cstime);
    return p;
}

constexpr const char* HELLO = "function main() { return 'Hello World!'; }";

// Returns false (after printing why) when a run does not complete with the expected answer
// (`expected` empty: any completed run).
bool Measure(workers::Zygote& zygote, const char* label, bool lower, int runs, const std::string& code = HELLO,
             const std::string& expected = "\"Hello World!\"") {
    NoOps handler;
    std::vector<double> ms;
    ProcCpu before{};
    ms.reserve(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs + runs / 10; ++i) {  // the first tenth warms up and is not counted
        const auto start = std::chrono::steady_clock::now();
        auto outcome = workers::RunAction(zygote, workers::RunRequest{code, "{}", {}, lower}, handler);
        const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (!outcome.ok() || outcome->end != workers::RunEnd::Completed || !outcome->error.message.empty() ||
            (!expected.empty() && outcome->response_json != expected)) {
            std::fprintf(stderr, "bench_sandbox: %s: the run failed: %s\n", label,
                         outcome.ok() ? outcome->error.message.c_str() : outcome.error().message.c_str());
            return false;
        }
        if (i >= runs / 10) ms.push_back(elapsed);
        if (i + 1 == runs / 10) before = ReadProcCpu(zygote.pid());
    }
    // The last run's child may not be reaped yet: its exit report is the next run's.
    const ProcCpu after = ReadProcCpu(zygote.pid());
    const double tick_ms = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
    const double n = static_cast<double>(runs);
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))]; };
    std::printf("%-44s %6d runs  p50 %7.3f ms  p90 %7.3f ms  p99 %7.3f ms  max %7.3f ms\n", label, runs, at(0.50),
                at(0.90), at(0.99), ms.back());
    // CPU time is what a run costs however loaded the machine is (wall-clock times are not).
    std::printf("%-44s   CPU per run: children %.2f ms (user %.2f, sys %.2f, %.0f faults), zygote %.2f ms (%.0f faults)\n",
                "", (after.cutime + after.cstime - before.cutime - before.cstime) * tick_ms / n,
                (after.cutime - before.cutime) * tick_ms / n, (after.cstime - before.cstime) * tick_ms / n,
                (after.cminflt - before.cminflt) / n, (after.utime + after.stime - before.utime - before.stime) * tick_ms / n,
                (after.minflt - before.minflt) / n);
    return true;
}

// VmRSS of `pid` in KiB, 0 when unreadable.
long ResidentKiB(pid_t pid) {
    std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
    if (f == nullptr) return 0;
    char line[256];
    long kib = 0;
    while (std::fgets(line, sizeof(line), f) != nullptr) {
        if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    }
    std::fclose(f);
    return kib;
}

}  // namespace

int main(int argc, char** argv) {
    const int runs = argc > 1 ? std::max(10, std::atoi(argv[1])) : 500;
    const std::string sandbox = argc > 2 ? argv[2] : std::string(SIGIL_BINARY_DIR) + "/bin/sigil-sandbox";
    const auto started = std::chrono::steady_clock::now();
    auto zygote = workers::Zygote::Start(workers::ZygoteOptions{sandbox, {}});
    if (!zygote.ok()) {
        std::fprintf(stderr, "bench_sandbox: %s\n", zygote.error().message.c_str());
        return 1;
    }
    {
        NoOps handler;
        auto first = workers::RunAction(*zygote, workers::RunRequest{HELLO, "{}", {}, false}, handler);
        if (!first.ok() || first->end != workers::RunEnd::Completed) {
            std::fprintf(stderr, "bench_sandbox: the first run failed\n");
            return 1;
        }
    }
    const double startup = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    std::printf("sandbox run (spawn, fork, heap, run, exit report) through %s\n", sandbox.c_str());
    std::printf("zygote start to the end of its first run: %.1f ms; zygote resident: %ld KiB\n", startup,
                ResidentKiB(zygote->pid()));
    if (!Measure(*zygote, "hello world, lowered code (cached CID)", false, runs)) return 1;
    if (std::getenv("SIGIL_BENCH_HELLO_ONLY") != nullptr) return 0;  // A/B rounds of the child's cost
    if (!Measure(*zygote, "hello world, lowered in the child (new CID)", true, runs)) return 1;
    const std::string sign =
        "function main() { var w = new ethers.Wallet('0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318');"
        " return w.signMessage('Chipotle Rocks!'); }";
    if (!Measure(*zygote, "ethers Wallet + signMessage (lowered code)", false, runs, sign, "")) return 1;
    const std::string encode =
        "function main() { var i = new ethers.utils.Interface(['function transfer(address to, uint256 amount)']);"
        " return i.encodeFunctionData('transfer', ['0x8ba1f109551bD432803012645Ac136ddd64DBA72', 5]); }";
    if (!Measure(*zygote, "ethers Interface.encodeFunctionData (lowered)", false, runs, encode, "")) {
        std::printf("(this sandbox has no ethers.utils.Interface)\n");
    }
    return 0;
}
