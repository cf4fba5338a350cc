#include "supervisor/master.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/scoreboard.h"
#include "supervisor/backlog.h"
#include "supervisor/children.h"
#include "supervisor/listen_socket.h"
#include "supervisor/sd_notify.h"
#include "supervisor/signals.h"
#include "supervisor/zygotes.h"

namespace sigil::supervisor {
namespace {

using common::LogError;
using common::LogInfo;
using common::LogWarn;
using common::MonotonicMs;

// How often the supervisor looks at the pool: at rest, and while it is short of idle workers (a
// burst fills the pool's idle workers within milliseconds; the next fork should follow at once).
// Measured with shared zygotes, 12 requests of 500 ms at once on a pool of 2 + 2 spares: waiting
// p50/max 180-230/380-440 ms with a 100 ms rest tick, 116-157/269-290 with 50, 129-186/239-369
// with 20; idle, a 20 ms tick costs the supervisor 0.7 % of a core.
constexpr int kTickMs = 50;
constexpr int kPressureTickMs = 20;
// The pool stays watchful this long after it last lacked idle workers.
constexpr std::int64_t kPressureLingerMs = 1000;
// An idle worker beyond max_spare_workers is stopped this often (one at a time).
constexpr std::int64_t kShrinkEveryMs = 100;
// While idle workers stay short tick after tick, each tick forks this many more than the last (from
// min_spare_workers, doubling), up to this many at once (php-fpm's pm.max_spawn_rate).
constexpr std::uint32_t kMaxSpawnBatch = 32;
// At most this many workers start at once (php-fpm's pm.max_spawn_rate): 250 forked together share
// 2 cores until all are ready seconds later, where 32 at a time are ready in a fraction of that and
// serve while the next ones start.
constexpr std::uint32_t kMaxStarting = 32;

// Reloads may briefly double the pool (old workers draining, new ones serving), so the
// scoreboard holds twice the largest pool plus headroom for a reload during a reload.
std::uint32_t SlotsFor(std::uint32_t max_workers) {
    return std::min<std::uint32_t>(max_workers * 3 + 2, common::Scoreboard::MAX_SLOTS);
}

std::string StatusLine(const common::ScoreboardSummary& s, std::uint32_t floor, std::uint32_t max_workers) {
    std::string line = "STATUS=" + std::to_string(s.total) + " workers (" + std::to_string(floor) + ".." +
                       std::to_string(max_workers) + "), " + std::to_string(s.busy) + " busy";
    for (std::uint32_t k = 1; k < common::ACTIVITY_KINDS; ++k) {
        if (s.in_flight[k] == 0) continue;
        line += std::string(", ") + std::to_string(s.in_flight[k]) + " " + common::ActivityName(static_cast<common::Activity>(k));
    }
    return line + ", " + std::to_string(s.requests_served) + " requests served";
}

class Master {
public:
    Master(SupervisorOptions options, std::string self_exe)
        : m_opt(std::move(options)), m_self_exe(std::move(self_exe)) {}

    int Run();

private:
    void FillPool(std::int64_t now);
    void ShrinkPool(std::int64_t now);
    bool Spawn(std::int64_t now);
    int NextTickMs(std::int64_t now) const;
    void Reload(std::int64_t now);
    SpawnSpec Spec() const {
        return SpawnSpec{m_opt.worker_binary, m_opt.config_path, m_socket->fd(), m_config_fd.get(), m_handoff_send.get(),
                         m_handoff_recv.get(), m_zygotes ? m_zygotes->address() : std::string(),
                         m_metrics ? m_metrics->fd() : -1};
    }
    void BeginStop(std::int64_t now);
    void Tick(std::int64_t now);

    SupervisorOptions m_opt;
    std::string m_self_exe;
    std::optional<ListenSocket> m_socket;
    std::optional<common::Scoreboard> m_scoreboard;
    std::optional<common::Metrics> m_metrics;  // none when [metrics] enabled = false
    common::UniqueFd m_config_fd;
    common::UniqueFd m_handoff_send;
    common::UniqueFd m_handoff_recv;
    std::optional<ChildPool> m_pool;
    std::optional<ZygotePool> m_zygotes;  // none when no sandbox executable was found
    RestartBackoff m_backoff;
    std::uint32_t m_generation = 1;
    bool m_stopping = false;
    std::int64_t m_watchdog_ms = 0;
    std::int64_t m_last_watchdog = 0;
    std::int64_t m_last_status = 0;
    std::string m_status;
    std::int64_t m_pressure_ms = 0;     // when the pool last lacked idle workers (0 = never)
    std::uint32_t m_spawn_batch = 0;    // the next fork batch while the shortage lasts
    std::int64_t m_last_shrink = 0;
};

int Master::Run() {
    SignalPipe signals;
    if (auto st = signals.Install({SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGQUIT}); !st.ok()) {
        LogError(st.error().message);
        return 1;
    }
    ::signal(SIGPIPE, SIG_IGN);

    // nginx passes at most max_workers requests at once, and those not yet taken wait here while the
    // pool grows: the backlog must hold them all, or nginx's connect fails with EAGAIN (a 502).
    auto sock = ListenSocket::Open({m_opt.socket_path, m_opt.socket_mode, m_opt.socket_group,
                                    static_cast<int>(std::max<std::uint32_t>(511, 2 * m_opt.max_workers))});
    if (!sock.ok()) {
        LogError(sock.error().message);
        return 1;
    }
    m_socket.emplace(std::move(sock).value());
    auto sb = common::Scoreboard::Create(m_opt.scoreboard_name, SlotsFor(m_opt.max_workers));
    if (!sb.ok()) {
        LogError(sb.error().message);
        return 1;
    }
    m_scoreboard.emplace(std::move(sb).value());
    if (m_opt.metrics) {
        // Beside the scoreboard and as long-lived: workers of every generation add to the same
        // counters, so a reload never resets a series Prometheus is watching.
        auto metrics = common::Metrics::Create("sigil-metrics");
        if (!metrics.ok()) {
            LogError(metrics.error().message);
            return 1;
        }
        m_metrics.emplace(std::move(metrics).value());
        common::BindMetrics(&*m_metrics);
    }
    auto snapshot = ConfigSnapshot(m_opt.config_text);
    if (!snapshot.ok()) {
        LogError(snapshot.error().message);
        return 1;
    }
    m_config_fd = std::move(snapshot).value();
    // Workers pass idle kept FastCGI connections to each other through this pair; it outlives
    // every worker (and reloads), so connections handed off by a draining worker reach its successors.
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) {
        LogError(std::string("socketpair (connection handoff): ") + std::strerror(errno));
        return 1;
    }
    m_handoff_send = common::UniqueFd(pair[0]);
    m_handoff_recv = common::UniqueFd(pair[1]);
    // The shared sandbox zygotes start first, so the workers' first runs find them warm.
    if (!m_opt.sandbox_path.empty()) {
        auto zygotes = ZygotePool::Open(m_opt.sandbox_path, m_opt.zygotes);
        if (!zygotes.ok()) {
            LogError(zygotes.error().message);
            return 1;
        }
        m_zygotes.emplace(std::move(zygotes).value());
        m_zygotes->Tick(MonotonicMs());
        // About 0.2 s; bounded, so a broken sandbox never keeps the pool from starting (its
        // workers' runs then fail typed until a zygote serves).
        if (!m_zygotes->WaitReady(10000)) LogWarn("sandbox zygotes not all ready after 10 s; starting the workers anyway");
    } else {
        LogWarn("no sigil-sandbox beside the worker binary and no actions.sandbox_path: no shared zygotes");
    }
    m_pool.emplace(*m_scoreboard, Spec());
    m_watchdog_ms = WatchdogIntervalMs();

    LogInfo("listening on " + m_opt.socket_path + " with " + std::to_string(m_opt.workers) + " to " +
            std::to_string(m_opt.max_workers) + " workers (" + m_opt.worker_binary + ")");
    FillPool(MonotonicMs());
    SdNotify("READY=1\nMAINPID=" + std::to_string(::getpid()) + "\n" +
             StatusLine(m_scoreboard->Summarize(), m_opt.workers, m_opt.max_workers));

    for (;;) {
        pollfd pfd{signals.fd(), POLLIN, 0};
        ::poll(&pfd, 1, NextTickMs(MonotonicMs()));
        const std::int64_t now = MonotonicMs();
        for (int sig : signals.Drain()) {
            if (sig == SIGHUP && !m_stopping) {
                Reload(now);
            } else if ((sig == SIGTERM || sig == SIGINT || sig == SIGQUIT) && !m_stopping) {
                LogInfo(std::string("stopping on signal ") + std::to_string(sig));
                BeginStop(now);
            }
        }
        Tick(now);
        if (m_stopping && m_pool->size() == 0) break;
    }
    // Every worker is gone, and with them every run the zygotes forked.
    if (m_zygotes) m_zygotes->Stop();
    LogInfo("stopped");
    return 0;
}

void Master::Tick(std::int64_t now) {
    // Before the pool's Reap, which reaps any child it does not know (zygotes.h).
    if (m_zygotes) m_zygotes->Tick(now);
    for (const auto& e : m_pool->Reap()) m_backoff.OnExit(e, now);
    m_pool->KillStuck(now, m_opt.request_hard_timeout_ms);
    m_pool->Escalate(now, m_opt.graceful_stop_timeout_ms);
    if (!m_stopping) {
        FillPool(now);
        ShrinkPool(now);
    }

    if (m_watchdog_ms > 0 && now - m_last_watchdog >= m_watchdog_ms) {
        SdNotify("WATCHDOG=1");
        m_last_watchdog = now;
    }
    if (now - m_last_status >= 1000) {
        const std::string status = StatusLine(m_scoreboard->Summarize(), m_opt.workers, m_opt.max_workers);
        if (status != m_status) SdNotify(status);
        m_status = status;
        m_last_status = now;
    }
}

int Master::NextTickMs(std::int64_t now) const {
    return m_pressure_ms != 0 && now - m_pressure_ms < kPressureLingerMs ? kPressureTickMs : kTickMs;
}

// False when no worker could be started now (backoff, or no free slot while old workers drain).
bool Master::Spawn(std::int64_t now) {
    if (!m_backoff.Allowed(now)) return false;
    auto pid = m_pool->Spawn(m_generation, now);
    if (!pid.ok()) {
        // No free slot: old workers are still draining; the next tick retries.
        if (pid.error().code != "no_free_slot") LogError(pid.error().message);
        return false;
    }
    return true;
}

void Master::FillPool(std::int64_t now) {
    // The floor: `workers` always run.
    while (m_pool->CountWanted(m_generation) < m_opt.workers) {
        if (!Spawn(now)) return;
    }
    // The spares: min_spare_workers idle ones, plus one for each connection waiting in the listen
    // socket's queue (requests no worker has taken), all forked at once. Where the kernel does not
    // tell the queue's length, each tick the shortage lasts forks more than the last.
    const std::uint32_t wanted = m_pool->CountWanted(m_generation);
    const std::uint32_t spare = m_pool->CountSpare(m_generation);
    const auto waiting = PendingConnections(m_socket->fd());
    const std::uint32_t need = m_opt.min_spare_workers + waiting.value_or(0);
    if (spare >= need || wanted >= m_opt.max_workers) {
        if (m_pressure_ms != 0 && now - m_pressure_ms >= kPressureLingerMs) m_spawn_batch = 0;
        return;
    }
    m_pressure_ms = now;
    const std::uint32_t starting = m_scoreboard->Summarize().starting;
    const std::uint32_t batch = std::min({waiting ? need - spare : std::max(need - spare, m_spawn_batch),
                                          m_opt.max_workers - wanted, starting < kMaxStarting ? kMaxStarting - starting : 0});
    m_spawn_batch = std::min(std::max(m_spawn_batch * 2, m_opt.min_spare_workers), kMaxSpawnBatch);
    for (std::uint32_t i = 0; i < batch; ++i) {
        if (!Spawn(now)) return;
    }
}

void Master::ShrinkPool(std::int64_t now) {
    if (now - m_last_shrink < kShrinkEveryMs) return;
    if (m_pool->CountWanted(m_generation) <= m_opt.workers) return;
    // Every idle worker counts (a draining old generation's too: it leaves soon, and meanwhile it
    // is spare capacity all the same).
    if (m_scoreboard->Summarize().idle <= m_opt.max_spare_workers) return;
    if (m_pool->DrainOneIdle(m_generation, now)) m_last_shrink = now;
}

void Master::Reload(std::int64_t now) {
    SdNotify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(common::MonotonicUs()));
    auto next = LoadOptions(m_opt.config_path, m_self_exe);
    auto snapshot = next.ok() ? ConfigSnapshot(next->config_text) : common::Result<common::UniqueFd>(next.error());
    if (!snapshot.ok()) {
        LogError("reload refused, keeping the running configuration: " + snapshot.error().message);
        SdNotify("READY=1\nSTATUS=reload refused: invalid configuration");
        return;
    }
    if (next->socket_path != m_opt.socket_path || next->socket_mode != m_opt.socket_mode ||
        next->socket_group != m_opt.socket_group || next->scoreboard_name != m_opt.scoreboard_name) {
        LogWarn("socket and scoreboard settings change only on restart; keeping the current ones");
        next->socket_path = m_opt.socket_path;
        next->socket_mode = m_opt.socket_mode;
        next->socket_group = m_opt.socket_group;
        next->scoreboard_name = m_opt.scoreboard_name;
    }
    if (next->zygotes != m_opt.zygotes || next->sandbox_path != m_opt.sandbox_path) {
        // Draining workers still run actions on the zygotes they are connected to.
        LogWarn("zygotes and actions.sandbox_path change only on restart; keeping the current ones");
        next->zygotes = m_opt.zygotes;
        next->sandbox_path = m_opt.sandbox_path;
    }
    if (next->metrics != m_opt.metrics) {
        // The counters' mapping is made once, before the first worker; series must not vanish mid-run.
        LogWarn("metrics.enabled changes only on restart; keeping the current setting");
        next->metrics = m_opt.metrics;
    }
    common::CountReload();
    const std::uint32_t max_workers = (m_scoreboard->capacity() - 2) / 3;
    if (next->max_workers > max_workers) {
        LogWarn("max_workers above " + std::to_string(max_workers) + " needs a restart; using " + std::to_string(max_workers));
        next->max_workers = max_workers;
        next->workers = std::min(next->workers, max_workers);
        next->reserve_workers = std::min(next->reserve_workers, max_workers - 1);
    }
    m_opt = std::move(next).value();
    // Old workers keep their inherited copy of the previous snapshot; new ones get this one.
    m_config_fd = std::move(snapshot).value();
    m_pool->SetSpec(Spec());
    ++m_generation;
    LogInfo("reloading: generation " + std::to_string(m_generation) + ", " + std::to_string(m_opt.workers) + " workers");
    // New workers first, then drain the old ones: the socket never lacks an accepting worker.
    m_backoff = RestartBackoff{};
    FillPool(now);
    m_pool->Drain(m_generation, now);
    SdNotify("READY=1\n" + StatusLine(m_scoreboard->Summarize(), m_opt.workers, m_opt.max_workers));
}

void Master::BeginStop(std::int64_t now) {
    m_stopping = true;
    SdNotify("STOPPING=1\nSTATUS=stopping");
    // Unlink first so nginx fails fast (502) instead of queueing on a socket nobody will serve,
    // and so a new supervisor can bind the path while our workers finish.
    m_socket->Close();
    m_pool->Drain(UINT32_MAX, now);
}

}  // namespace

int RunMaster(SupervisorOptions options, const std::string& self_exe) {
    Master master(std::move(options), self_exe);
    return master.Run();
}

}  // namespace sigil::supervisor
