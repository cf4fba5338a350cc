// What recording a run in the history costs in CPU (issue 26 asks for <= 3 % of hello-world throughput;
// wall-clock A/B runs on this shared VM swing too much to resolve that, CPU time does not):
//  1. the run's own path: building the record as workers/api/run_record.cpp does (the strings, the
//     response's SHA-256 in hex, the capped logs) and RunHistory::Record (a mutex and a vector push),
//     timed with CLOCK_THREAD_CPUTIME_ID on the calling thread over many records;
//  2. the writer thread: batches of B records written to a SQLite file (WAL, synchronous = NORMAL, as the
//     worker opens it) or a PostgreSQL database, the process's CPU time while the main thread sleeps
//     until the batch is written (RunHistory::PublishPendingTo answers when), per record.
// Prints each in microseconds per record and as a share of 17.8 ms, the CPU a hello-world run costs the
// whole stack on this VM (bench_cpu_profile.mjs, README "CPU per run").
//   cmake --build build --target bench_history_cpu && build/tests/bench/bench_history_cpu [postgresql://...]
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <time.h>

#include "common/hex.h"
#include "common/sha256.h"
#include "workers/billing/run_history.h"
#include "workers/billing/store.h"

using namespace sigil::workers::billing;

namespace {

constexpr double HELLO_RUN_CPU_US = 17800;  // bench_cpu_profile.mjs: the whole stack per hello-world run

double CpuUs(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

const std::string ACCOUNT = "0x" + std::string(64, 'a');
const std::string KEY = "0x" + std::string(64, 'c');
const std::string RESPONSE = "\"Hello World!\"";

// One record as RecordRun builds it for a hello-world run (no logs, no PKP).
RunRecord HelloRecord(std::uint64_t n, std::int64_t now) {
    RunRecord r;
    r.request_id = std::to_string(n) + "-0123456789abcdef0123456789abcdef";
    r.started_ms = now;
    r.key_hash = KEY;
    r.account_hash = ACCOUNT;
    r.cid = "QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL";
    r.duration_ms = 15;
    r.cost_cents = 1;
    r.request_bytes = 64;
    r.status = "ok";
    r.response_sha256 = sigil::common::HexEncode(sigil::common::Sha256Hash(RESPONSE), false);
    r.has_logs = true;  // the writer asks whether the account keeps logs, as for a real run
    r.response_bytes = 80;
    return r;
}

void WaitWritten(const std::atomic<std::uint64_t>& pending) {
    while (pending.load() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir;
    std::string database;
    if (argc > 1) {
        database = argv[1];
    } else {
        char tmpl[] = "/tmp/sigil-bench-history-XXXXXX";
        if (::mkdtemp(tmpl) == nullptr) return 1;
        dir = tmpl;
        database = dir + "/history.sqlite";
    }
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) < 0) load[0] = -1;
    std::printf("run history CPU per record (%s), load average %.2f\n", argc > 1 ? "PostgreSQL" : "SQLite file", load[0]);

    HistorySettings settings;
    settings.database = database;
    settings.queue_records = 1 << 20;
    settings.flush_interval_ms = 200;
    settings.prune_interval_ms = 1LL << 40;  // no pruning in the measured windows

    // 1. The run's path.
    {
        auto history = RunHistory::Start(settings);
        std::atomic<std::uint64_t> pending{0};
        history->PublishPendingTo(&pending);
        constexpr int N = 100000;
        const std::int64_t now = WallClockMs();
        const double t0 = CpuUs(CLOCK_THREAD_CPUTIME_ID);
        for (int i = 0; i < N; ++i) history->Record(HelloRecord(static_cast<std::uint64_t>(i), now));
        const double us = (CpuUs(CLOCK_THREAD_CPUTIME_ID) - t0) / N;
        std::printf("run path (build the record + Record): %8.2f us/record = %.4f %% of a hello run's %.1f ms\n", us,
                    100 * us / HELLO_RUN_CPU_US, HELLO_RUN_CPU_US / 1000);
        WaitWritten(pending);
    }

    // 2. The writer thread, by batch size: at 60-80 runs/s over 8-16 workers, each worker's 200 ms batch
    // holds 1-2 records; one worker alone at that rate holds 12-16.
    for (const int batch : {1, 4, 16, 64, 256}) {
        settings.flush_interval_ms = 5;  // the batch is written at once (its size is what is measured)
        auto history = RunHistory::Start(settings);
        std::atomic<std::uint64_t> pending{0};
        history->PublishPendingTo(&pending);
        history->Record(HelloRecord(0, WallClockMs()));  // the store opened, the schema checked
        WaitWritten(pending);
        const int rounds = batch >= 64 ? 40 : 200;
        double cpu = 0;
        for (int r = 0; r < rounds; ++r) {
            const std::int64_t now = WallClockMs();
            std::vector<RunRecord> records;
            for (int i = 0; i < batch; ++i) records.push_back(HelloRecord(static_cast<std::uint64_t>(r * batch + i), now));
            const double t0 = CpuUs(CLOCK_PROCESS_CPUTIME_ID);
            const double main0 = CpuUs(CLOCK_THREAD_CPUTIME_ID);
            for (auto& rec : records) history->Record(std::move(rec));
            WaitWritten(pending);
            // The process's CPU less this (mostly sleeping) thread's: the writer thread's.
            cpu += (CpuUs(CLOCK_PROCESS_CPUTIME_ID) - t0) - (CpuUs(CLOCK_THREAD_CPUTIME_ID) - main0);
        }
        const double us = cpu / (static_cast<double>(rounds) * batch);
        std::printf("writer thread, batches of %3d:          %8.1f us/record = %.3f %% of a hello run\n", batch, us,
                    100 * us / HELLO_RUN_CPU_US);
    }
    if (!dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    if (getloadavg(load, 3) < 0) load[0] = -1;
    std::printf("load average after: %.2f\n", load[0]);
    return 0;
}
