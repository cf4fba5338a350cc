// The credit ledger's throughput on both stores: Charge+Settle pairs (a run's hold and its
// settlement, which refunds part of the hold: three entries' worth of work in two transactions) and
// CreditOnce, from one process and from 4 processes at once (each its own connection, as worker
// processes are), the 4 on their own customers and on one shared customer (lock contention).
//
//   cmake --build build --target bench_ledger && build/tests/bench/bench_ledger [SECONDS=2] [sqlite|postgresql|holds]
//
// A second argument measures one store only; `holds` only the run holds on SQLite (a quick A/B).
//
// SQLite: a file in a new folder under /tmp (WAL, synchronous=FULL, as shipped). PostgreSQL: a
// throw-away server started like the tests' (tests/support/postgres_server.h), with its default
// durable settings (fsync on), on loopback TCP.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/postgres_server.h"
#include "workers/billing/ledger.h"

using namespace sigil::workers::billing;

namespace {

using Clock = std::chrono::steady_clock;

std::string Customer(int n) {
    char buf[43];
    std::snprintf(buf, sizeof buf, "0x%040x", n);
    return buf;
}

// One operation on `ledger` for `customer`, its n-th; false (after printing why) on an error.
using Op = std::function<bool(Ledger& ledger, const std::string& customer, long n)>;

bool Failed(const char* what, const std::string& why) {
    std::fprintf(stderr, "bench_ledger: %s: %s\n", what, why.c_str());
    return false;
}

bool ChargeSettle(Ledger& l, const std::string& customer, long) {
    auto hold = l.Charge(customer, 2, "run:hold", "bench");
    if (!hold) return Failed("charge", hold.error().message);
    auto settled = l.Settle(*hold, 1, "run:settle");
    if (!settled) return Failed("settle", settled.error().message);
    return true;
}

// What a run within its first second writes: its hold, which is its price (no settlement).
bool Hold(Ledger& l, const std::string& customer, long) {
    auto hold = l.Charge(customer, 1, "run:hold", "bench");
    if (!hold) return Failed("charge", hold.error().message);
    return true;
}

// A usage key's run under its spend cap (DESIGN.md section 9): the cap is checked in the charge's
// transaction against what the key has spent so far.
const std::string CAPPED_KEY = "0x" + std::string(64, 'b');
bool ChargeSettleCapped(Ledger& l, const std::string& customer, long) {
    auto hold = l.Charge(customer, 2, "run:hold", "bench", CAPPED_KEY, 1'000'000'000);
    if (!hold) return Failed("charge", hold.error().message);
    auto settled = l.Settle(*hold, 1, "run:settle");
    if (!settled) return Failed("settle", settled.error().message);
    return true;
}

bool Credit(Ledger& l, const std::string& customer, long n) {
    const std::string id = "bench:" + std::to_string(::getpid()) + ":" + std::to_string(n);
    auto r = l.CreditOnce(customer, id, 1, "bench", "");
    if (!r) return Failed("credit", r.error().message);
    if (!*r) return Failed("credit", "not credited");
    return true;
}

// Runs `op` in this process during the window [start, start + seconds) shared by every process
// (steady_clock is CLOCK_MONOTONIC, one clock for the whole machine); answers the operations done in
// the window, or -1 on an error.
long RunWindow(const std::string& database, const std::string& customer, const Op& op, Clock::time_point start,
               double seconds) {
    auto opened = Ledger::Open(database);
    if (!opened) return Failed("open", opened.error().message) ? 0 : -1;
    auto& l = *opened;
    for (long i = 0; i < 20; ++i) {  // warm-up: connection, statement caches
        if (!op(*l, customer, -1 - i)) return -1;
    }
    std::this_thread::sleep_until(start);
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    long n = 0;
    while (Clock::now() < end) {
        if (!op(*l, customer, n)) return -1;
        ++n;
    }
    return n;
}

struct Figure {
    double rate = -1;   // operations per second, all processes together; negative on an error
    long least = 0;    // operations of the slowest process in the window (fairness)
    long most = 0;     // and of the fastest
};

// `procs` fork()ed processes, each with its own Ledger (connection), all measured in one window.
Figure RunProcesses(const std::string& database, int procs, bool shared_customer, const Op& op, double seconds) {
    std::vector<std::pair<pid_t, int>> children;
    std::fflush(nullptr);  // or the children would print the parent's buffered lines again
    const auto start = Clock::now() + std::chrono::milliseconds(300 + 100 * procs);
    for (int p = 0; p < procs; ++p) {
        int fds[2];
        if (::pipe(fds) != 0) return {};
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(fds[0]);
            const long n = RunWindow(database, Customer(shared_customer ? 1 : 100 + p), op, start, seconds);
            (void)!::write(fds[1], &n, sizeof n);
            ::_exit(n < 0 ? 1 : 0);
        }
        ::close(fds[1]);
        children.emplace_back(pid, fds[0]);
    }
    Figure f;
    long total = 0;
    bool ok = true;
    for (auto [pid, fd] : children) {
        long n = -1;
        if (::read(fd, &n, sizeof n) != sizeof n || n < 0) ok = false;
        ::close(fd);
        int status = 0;
        ::waitpid(pid, &status, 0);
        ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        f.least = total == 0 && f.most == 0 ? n : std::min(f.least, n);
        f.most = std::max(f.most, n);
        total += n;
    }
    if (ok) f.rate = total / seconds;
    return f;
}

void Report(const char* store, const char* what, int procs, bool shared_customer, const Figure& f) {
    const std::string mode = procs == 1 ? "1 process" : std::to_string(procs) + (shared_customer ? " processes, one customer" : " processes, own customers");
    if (f.rate < 0) {
        std::printf("%-10s %-20s %-28s %10s\n", store, what, mode.c_str(), "FAILED");
        return;
    }
    // The latency is one operation's mean inside a process; least/most show how evenly the
    // processes got the lock.
    std::printf("%-10s %-20s %-28s %8.0f /s %8.3f ms mean", store, what, mode.c_str(), f.rate, 1000.0 * procs / f.rate);
    if (procs > 1) std::printf("   per process %ld..%ld", f.least, f.most);
    std::printf("\n");
}

void Bench(const char* store, const std::string& database, double seconds, bool holds_only = false) {
    {
        // Enough credit for every charge, on every customer the runs use.
        auto l = Ledger::Open(database);
        if (!l) {
            Failed("open", l.error().message);
            std::exit(1);
        }
        for (int c : {1, 100, 101, 102, 103}) {
            auto r = (*l)->CreditOnce(Customer(c), "bench-funds:" + std::to_string(c), 1'000'000'000, "bench", "");
            if (!r) {
                Failed("funding", r.error().message);
                std::exit(1);
            }
        }
    }
    Report(store, "run hold (charge)", 1, false, RunProcesses(database, 1, false, Hold, seconds));
    Report(store, "run hold (charge)", 4, true, RunProcesses(database, 4, true, Hold, seconds));
    if (holds_only) return;
    Report(store, "charge+settle pairs", 1, false, RunProcesses(database, 1, false, ChargeSettle, seconds));
    Report(store, "charge+settle pairs", 4, false, RunProcesses(database, 4, false, ChargeSettle, seconds));
    Report(store, "charge+settle pairs", 4, true, RunProcesses(database, 4, true, ChargeSettle, seconds));
    // The capped key already made 20,000 runs: the check must not grow with its history.
    Report(store, "capped charge+settle", 1, false, RunProcesses(database, 1, false, ChargeSettleCapped, seconds));
    {
        auto l = Ledger::Open(database);
        for (long i = 0; l && i < 20'000; ++i) {
            if (!ChargeSettleCapped(**l, Customer(100), i)) std::exit(1);
        }
    }
    Report(store, "capped, 20k runs before", 1, false, RunProcesses(database, 1, false, ChargeSettleCapped, seconds));
    Report(store, "credit_once", 1, false, RunProcesses(database, 1, false, Credit, seconds));
    Report(store, "credit_once", 4, false, RunProcesses(database, 4, false, Credit, seconds));
}

std::string LoadAverage() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a + " " + b + " " + c;
}

}  // namespace

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::max(0.2, std::atof(argv[1])) : 2.0;
    std::printf("bench_ledger: %.1f s per figure, nproc=%ld, load average %s\n", seconds, ::sysconf(_SC_NPROCESSORS_ONLN),
                LoadAverage().c_str());

    const std::string only = argc > 2 ? argv[2] : "";
    if (only != "postgresql") {
        char tmpl[] = "/tmp/sigil-bench-ledger-XXXXXX";
        if (::mkdtemp(tmpl) == nullptr) return 1;
        const std::string dir = tmpl;
        Bench("sqlite", dir + "/ledger.db", seconds, only == "holds");
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    if (only == "sqlite" || only == "holds") return 0;
    try {
        sigil::test::PostgresServer server;
        Bench("postgresql", server.CreateDatabase(), seconds);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_ledger: PostgreSQL: %s\n", e.what());
        return 1;
    }
    std::printf("load average at the end %s\n", LoadAverage().c_str());
    return 0;
}
