// sigil-worker: one FastCGI responder process, started by sigil-supervisor with the listen socket
// on fd 0 and the scoreboard in $SIGIL_SCOREBOARD_FD. Usage: sigil-worker -c CONFIG [--check]
// Also: sigil-worker --cid FILE prints the file's CIDv0 (as `ipfs add --cid-version=0` would),
// which scripts/ipfs-add uses to fill the development gateway.
// And: sigil-worker --run-local FILE runs an action once in the real sandbox with throw-away keys
// (workers/actions/local_run.h), which `sigil run --local` uses.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <optional>
#include <string>

#include <fstream>
#include <iterator>

#include "common/cid.h"
#include "workers/actions/local_run.h"
#include "common/config.h"
#include "common/handles.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/activity.h"
#include "common/scoreboard.h"
#include "workers/actions/runner.h"
#include "workers/api/api.h"
#include "workers/api/attestation.h"
#include "workers/api/receipt.h"
#include "workers/api/metrics_route.h"
#include "workers/billing/billing.h"
#include "workers/billing/run_history.h"
#include "workers/fcgi/server.h"
#include "workers/chain/service.h"
#include "workers/http/router.h"
#include "workers/api/system_routes.h"

#ifndef SIGIL_VERSION
#define SIGIL_VERSION "0.0.0"
#endif
#ifndef SIGIL_COMMIT
#define SIGIL_COMMIT "unknown"
#endif

namespace {

constexpr int kExitUsage = 64;
constexpr int kExitConfig = 78;

// Parses a small non-negative decimal from the environment; nullopt if unset or malformed.
std::optional<long> EnvNumber(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 0 || n > INT_MAX) return std::nullopt;
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace sigil;
    if (argc >= 2 && std::strcmp(argv[1], "--run-local") == 0) return workers::RunLocalMain(argc, argv);
    if (argc == 3 && std::strcmp(argv[1], "--cid") == 0) {
        std::ifstream in(argv[2], std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "sigil-worker: cannot read %s\n", argv[2]);
            return 66;
        }
        const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::printf("%s\n", common::ComputeCidV0(data).c_str());
        return 0;
    }
    std::string config_path;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            config_path = argv[++i];
        } else if (std::strcmp(argv[i], "--check") == 0) {
            check = true;
        } else {
            config_path.clear();
            break;
        }
    }
    if (config_path.empty()) {
        std::fprintf(stderr, "usage: sigil-worker -c CONFIG [--check]   (normally started by sigil-supervisor)\n");
        return kExitUsage;
    }
    common::SetLogComponent("worker");
    // An account's master key is its owner wallet's private key and passes through this process on
    // every owner request: no core dump, and no ptrace or /proc/<pid>/mem by processes of the same
    // uid (keyd does the same; the sandbox child sets it again after its exec).
    const struct rlimit no_core {0, 0};
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || setrlimit(RLIMIT_CORE, &no_core) != 0) {
        common::LogError(std::string("cannot disable core dumps: ") + std::strerror(errno));
        return 1;
    }
    // Die with the supervisor: an orphaned worker would keep the listen socket open and serve
    // unsupervised. Set here because exec may clear a parent-death signal set before it.
    if (const auto parent = EnvNumber("SIGIL_SUPERVISOR_PID")) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != static_cast<pid_t>(*parent)) return 1;
    }
    // Under the supervisor, read the snapshot it validated (SIGIL_CONFIG_FD), not the file, which
    // may have been edited since. The descriptor's offset is shared by all workers: use pread.
    const auto cfg_fd = EnvNumber("SIGIL_CONFIG_FD");
    auto config = [&]() -> common::Result<common::Config> {
        if (!cfg_fd) return common::Config::LoadFile(config_path);
        const common::UniqueFd fd(static_cast<int>(*cfg_fd));  // the supervisor's memfd, closed once read
        std::string text;
        char buf[4096];
        for (off_t off = 0;;) {
            const auto n = pread(fd.get(), buf, sizeof buf, off);
            if (n <= 0) break;
            text.append(buf, static_cast<std::size_t>(n));
            off += n;
        }
        return common::Config::Parse(text);
    }();
    if (!config.ok()) {
        common::LogError(config.error().message);
        return kExitConfig;
    }
    auto action_settings = workers::ActionSettings::FromConfig(*config);
    if (!action_settings.ok()) {
        common::LogError(action_settings.error().message);
        return kExitConfig;
    }
    auto billing_settings = workers::billing::BillingSettings::FromConfig(*config);
    if (!billing_settings.ok()) {
        common::LogError(billing_settings.error().message);
        return kExitConfig;
    }
    if (check) {
        // The sandbox is a program of its own: a wrong path would only show at the first start.
        const std::string sandbox = action_settings->sandbox_path.empty() ? workers::DefaultSandboxExecutable()
                                                                           : action_settings->sandbox_path;
        if (access(sandbox.c_str(), X_OK) != 0) {
            common::LogError("actions.sandbox_path: not an executable file: " + sandbox);
            return kExitConfig;
        }
        std::printf("%s: configuration ok\n", config_path.c_str());
        return 0;
    }
    // The sandbox zygote first, while this process holds nothing but its configuration and before
    // it accepts any request: a connection to the supervisor's shared zygotes, or (started without
    // the supervisor) a sigil-sandbox of its own, fork+exec.
    auto runner = workers::ActionRunner::Create(std::move(action_settings).value());
    if (!runner.ok()) common::LogError("action sandbox unavailable: " + runner.error().message);

    std::optional<common::Scoreboard> scoreboard;
    std::uint32_t slot = 0;
    const auto sb_fd = EnvNumber(common::Scoreboard::FD_ENV);
    const auto sb_slot = EnvNumber(common::Scoreboard::SLOT_ENV);
    if (sb_fd && sb_slot) {
        auto sb = common::Scoreboard::Attach(static_cast<int>(*sb_fd));
        if (!sb.ok() || static_cast<std::uint32_t>(*sb_slot) >= sb->capacity()) {
            common::LogError(sb.ok() ? "scoreboard slot out of range" : sb.error().message);
            return 1;
        }
        scoreboard.emplace(std::move(sb).value());
        slot = static_cast<std::uint32_t>(*sb_slot);
        if (runner.ok()) (*runner)->SetLoweredCacheKey(scoreboard->CacheKey());
        common::SetLogComponent("worker[" + std::to_string(slot) + "]");
        // The chain reserve: at most max_workers - reserve_workers requests wait on the chain at
        // once (the supervisor checked that reserve_workers < max_workers).
        const auto max_workers = config->GetInt("supervisor", "max_workers");
        const auto reserve = config->GetInt("supervisor", "reserve_workers");
        common::BindActivitySlot(&*scoreboard, slot,
                                 static_cast<std::uint32_t>(max_workers > reserve ? max_workers - reserve : 1));
    }

    // The pool's shared counters (absent with [metrics] enabled = false: every count is then a no-op).
    std::optional<common::Metrics> metrics;
    if (const auto m_fd = EnvNumber(common::Metrics::FD_ENV)) {
        auto m = common::Metrics::Attach(static_cast<int>(*m_fd));
        if (!m.ok()) {
            common::LogError(m.error().message);
            return 1;
        }
        metrics.emplace(std::move(m).value());
        common::BindMetrics(&*metrics);
    }

    // One keyd connection per worker, opened lazily and reopened after keyd restarts.
    std::optional<workers::KeydClient> keyd;
    if (const std::string keyd_socket = config->GetString("keyd", "socket_path"); !keyd_socket.empty()) {
        workers::KeydClientOptions keyd_options;
        keyd_options.socket_path = keyd_socket;
        keyd_options.request_timeout = std::chrono::milliseconds(config->GetInt("keyd", "request_timeout_ms"));
        keyd.emplace(keyd_options);
    }

    workers::Router router;
    workers::AddSystemRoutes(router, {SIGIL_VERSION, scoreboard ? &*scoreboard : nullptr, keyd ? &*keyd : nullptr,
                                      static_cast<std::uint32_t>(config->GetInt("supervisor", "max_workers"))});
    workers::ConfigureReceipts({config->GetString("worker", "dstack_socket"),
                                static_cast<int>(config->GetInt("worker", "attestation_timeout_ms"))});
    workers::AddAttestationRoutes(router, {config->GetString("worker", "dstack_socket"),
                                           static_cast<int>(config->GetInt("worker", "attestation_timeout_ms")),
                                           static_cast<int>(config->GetInt("worker", "attestation_cache_ms"))});
    // The management API: the chain stack, leasing API payer wallets from the pool's table per write
    // (DESIGN.md section 7).
    auto service = workers::Service::Create(*config, keyd ? &*keyd : nullptr, slot,
                                            scoreboard ? &scoreboard->ChainEpoch() : nullptr,
                                            scoreboard ? &scoreboard->ChainCircuit() : nullptr,
                                            scoreboard ? scoreboard->PayerOwners() : nullptr,
                                            scoreboard ? scoreboard->ChainArea() : nullptr);
    if (!service.ok()) {
        common::LogError(service.error().message);
        return kExitConfig;
    }
    // Billing: the ledger opens on first use, so a database that is down fails only what needs it.
    auto billing = workers::billing::Billing::Create(std::move(billing_settings).value(), **service);
    if (!billing.ok()) {
        common::LogError(billing.error().message);
        return kExitConfig;
    }
    // Run history (issue 26): a queue and a writer thread of this worker's own; the store opens on
    // the thread's first batch, so a database that is down never delays the start.
    auto history_settings = workers::billing::HistorySettings::FromConfig(*config);
    if (!history_settings.ok()) {
        common::LogError(history_settings.error().message);
        return kExitConfig;
    }
    auto history = workers::billing::RunHistory::Start(std::move(history_settings).value());
    if (scoreboard) history->PublishPendingTo(&scoreboard->Slot(slot).history_pending);
    workers::BillingContext billing_context{billing->get(), scoreboard ? &*scoreboard : nullptr, slot};
    billing_context.history = history.get();
    workers::AddApiRoutes(router, **service, runner.ok() ? runner->get() : nullptr, billing_context);
    workers::AddMetricsRoute(router, {SIGIL_VERSION, SIGIL_COMMIT, scoreboard ? &*scoreboard : nullptr,
                                      keyd ? &*keyd : nullptr, config->GetString("metrics", "evidence_dir"),
                                      static_cast<std::uint32_t>(config->GetInt("supervisor", "max_workers")),
                                      config->GetString("metrics", "nginx_tally_dir")});
    if (config->GetBool("worker", "test_routes")) {
        common::LogWarn("test_routes enabled: /core/v1/test/* is served");
        workers::AddTestRoutes(router);
    }

    workers::FcgiServerOptions options;
    options.listen_fd = 0;
    options.max_body_bytes = static_cast<std::size_t>(config->GetInt("worker", "max_body_bytes"));
    options.max_requests = static_cast<std::uint64_t>(config->GetInt("supervisor", "max_requests"));
    options.scoreboard = scoreboard ? &*scoreboard : nullptr;
    options.slot = slot;
    const auto handoff_send = EnvNumber("SIGIL_HANDOFF_SEND_FD");
    const auto handoff_recv = EnvNumber("SIGIL_HANDOFF_RECV_FD");
    if (handoff_send && handoff_recv) {
        options.handoff_send_fd = static_cast<int>(*handoff_send);
        options.handoff_recv_fd = static_cast<int>(*handoff_recv);
    }
    return workers::RunFcgiServer(router, options);
}
