#include "supervisor/children.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/log.h"
#include "common/metrics.h"
#include "supervisor/zygotes.h"

extern char** environ;

namespace sigil::supervisor {
namespace {

constexpr int kScoreboardChildFd = 3;
constexpr int kConfigChildFd = 4;
constexpr int kHandoffSendChildFd = 5;
constexpr int kHandoffRecvChildFd = 6;
constexpr int kMetricsChildFd = 7;
constexpr std::int64_t kKillAfterTermMs = 2000;

std::vector<std::string> ChildEnvironment(std::uint32_t slot, const std::string& zygote_address, bool metrics) {
    std::vector<std::string> env;
    const std::string fd_prefix = std::string(common::Scoreboard::FD_ENV) + "=";
    const std::string slot_prefix = std::string(common::Scoreboard::SLOT_ENV) + "=";
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view v(*e);
        if (v.rfind(fd_prefix, 0) == 0 || v.rfind(slot_prefix, 0) == 0) continue;
        if (v.rfind("SIGIL_SUPERVISOR_PID=", 0) == 0 || v.rfind("SIGIL_CONFIG_FD=", 0) == 0) continue;
        if (v.rfind("SIGIL_HANDOFF_SEND_FD=", 0) == 0 || v.rfind("SIGIL_HANDOFF_RECV_FD=", 0) == 0) continue;
        if (v.rfind(std::string(ZYGOTE_SOCKET_ENV) + "=", 0) == 0) continue;
        if (v.rfind(std::string(common::Metrics::FD_ENV) + "=", 0) == 0) continue;
        // systemd's notify socket and watchdog belong to the supervisor alone.
        if (v.rfind("NOTIFY_SOCKET=", 0) == 0 || v.rfind("WATCHDOG_", 0) == 0) continue;
        env.emplace_back(v);
    }
    env.push_back(fd_prefix + std::to_string(kScoreboardChildFd));
    env.push_back("SIGIL_SUPERVISOR_PID=" + std::to_string(getpid()));
    env.push_back("SIGIL_CONFIG_FD=" + std::to_string(kConfigChildFd));
    env.push_back(slot_prefix + std::to_string(slot));
    env.push_back("SIGIL_HANDOFF_SEND_FD=" + std::to_string(kHandoffSendChildFd));
    env.push_back("SIGIL_HANDOFF_RECV_FD=" + std::to_string(kHandoffRecvChildFd));
    if (!zygote_address.empty()) env.push_back(std::string(ZYGOTE_SOCKET_ENV) + "=" + zygote_address);
    if (metrics) env.push_back(std::string(common::Metrics::FD_ENV) + "=" + std::to_string(kMetricsChildFd));
    return env;
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void ExecWorker(const SpawnSpec& spec, int scoreboard_fd, pid_t parent, char* const* argv,
                             char* const* envp) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // If the supervisor dies without stopping us, exit instead of serving unsupervised. Some
    // kernels clear this at exec (capability changes), so the worker sets it again itself.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    // Move the sources above the target numbers first, so no dup2 overwrites a source.
    const int sb = fcntl(scoreboard_fd, F_DUPFD, 10);
    const int cfg = fcntl(spec.config_fd, F_DUPFD, 10);
    const int hs = fcntl(spec.handoff_send_fd, F_DUPFD, 10);
    const int hr = fcntl(spec.handoff_recv_fd, F_DUPFD, 10);
    const int mt = spec.metrics_fd >= 0 ? fcntl(spec.metrics_fd, F_DUPFD, 10) : -1;
    if (sb < 0 || cfg < 0 || hs < 0 || hr < 0 || (spec.metrics_fd >= 0 && mt < 0)) _exit(126);
    if (dup2(spec.listen_fd, 0) != 0) _exit(126);
    if (dup2(sb, kScoreboardChildFd) != kScoreboardChildFd) _exit(126);
    if (dup2(cfg, kConfigChildFd) != kConfigChildFd) _exit(126);
    if (dup2(hs, kHandoffSendChildFd) != kHandoffSendChildFd) _exit(126);
    if (dup2(hr, kHandoffRecvChildFd) != kHandoffRecvChildFd) _exit(126);
    if (mt >= 0 && dup2(mt, kMetricsChildFd) != kMetricsChildFd) _exit(126);
    close_range(mt >= 0 ? kMetricsChildFd + 1 : kHandoffRecvChildFd + 1, ~0U, 0);
    execve(argv[0], argv, envp);
    static const char msg[] = "sigil-supervisor: exec of the worker binary failed\n";
    [[maybe_unused]] auto n = write(2, msg, sizeof msg - 1);
    _exit(127);
}

std::string Describe(int status) {
    if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status));
    return "ended";
}

}  // namespace

void RestartBackoff::OnExit(const ChildExit& e, std::int64_t now_ms) {
    const bool young = now_ms - e.child.started_ms < 2000;
    if (!e.crashed || !young) {
        m_streak = 0;
        m_not_before_ms = 0;
        return;
    }
    m_streak = std::min(m_streak + 1, 16);
    const std::int64_t delay = std::min<std::int64_t>(100LL << std::min(m_streak - 1, 7), 10000);
    m_not_before_ms = now_ms + delay;
}

std::optional<std::uint32_t> ChildPool::FreeSlot() const {
    std::set<std::uint32_t> used;
    for (const auto& [pid, c] : m_children) used.insert(c.slot);
    for (std::uint32_t i = 0; i < m_scoreboard.capacity(); ++i) {
        if (used.count(i) == 0) return i;
    }
    return std::nullopt;
}

common::Result<pid_t> ChildPool::Spawn(std::uint32_t generation, std::int64_t now_ms) {
    const auto slot = FreeSlot();
    if (!slot) return common::MakeError(common::ErrorKind::Overloaded, "no_free_slot", "scoreboard full");

    // Everything the child needs is built before fork: after fork only async-signal-safe calls.
    std::vector<std::string> args = {m_spec.worker_binary, "-c", m_spec.config_path};
    std::vector<std::string> env = ChildEnvironment(*slot, m_spec.zygote_address, m_spec.metrics_fd >= 0);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t parent = getpid();

    // The slot is assigned before fork: the child may mark itself Idle before the parent runs again.
    m_scoreboard.Assign(*slot, 0, generation);
    const pid_t pid = fork();
    if (pid < 0) {
        m_scoreboard.Release(*slot);
        return common::MakeError(common::ErrorKind::Internal, "fork_failed", std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) ExecWorker(m_spec, m_scoreboard.fd(), parent, argv.data(), envp.data());

    m_scoreboard.Slot(*slot).pid.store(pid);
    Child c;
    c.pid = pid;
    c.slot = *slot;
    c.generation = generation;
    c.started_ms = now_ms;
    m_children[pid] = c;
    common::CountWorkerStart();
    return pid;
}

std::vector<ChildExit> ChildPool::Reap() {
    std::vector<ChildExit> out;
    for (;;) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) break;
        const auto it = m_children.find(pid);
        if (it == m_children.end()) continue;
        ChildExit e;
        e.child = it->second;
        e.status = status;
        const bool we_signalled = e.child.killed_stuck || e.child.quit_sent_ms != 0;
        e.crashed = !we_signalled && !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        // Run history records the worker took and could not write nor count (it was killed, or
        // crashed): counted dropped here, so no answered run goes missing silently.
        if (const std::uint64_t unwritten = m_scoreboard.Slot(e.child.slot).history_pending.exchange(0); unwritten > 0) {
            common::CountHistoryDropped(unwritten);
            common::LogWarn("worker pid " + std::to_string(pid) + " ended (" + Describe(status) + ") with " +
                            std::to_string(unwritten) + " run history records unwritten; counted dropped");
        }
        m_scoreboard.Release(e.child.slot);
        m_children.erase(it);
        common::CountWorkerExit(e.child.killed_stuck       ? common::WorkerExit::HardTimeout
                                : e.crashed                ? common::WorkerExit::Crashed
                                : e.child.quit_sent_ms != 0 ? common::WorkerExit::Stopped
                                                            : common::WorkerExit::Recycled);
        const std::string what = "worker pid " + std::to_string(pid) + " slot " + std::to_string(e.child.slot) + " " +
                                 Describe(status);
        if (e.crashed) {
            common::LogWarn(what);
        } else {
            common::LogDebug(what);
        }
        out.push_back(e);
    }
    return out;
}

std::uint32_t ChildPool::CountWanted(std::uint32_t generation) const {
    std::uint32_t n = 0;
    for (const auto& [pid, c] : m_children) {
        if (c.generation == generation && c.quit_sent_ms == 0) ++n;
    }
    return n;
}

std::uint32_t ChildPool::CountSpare(std::uint32_t generation) const {
    std::uint32_t n = 0;
    for (const auto& [pid, c] : m_children) {
        if (c.generation != generation || c.quit_sent_ms != 0) continue;
        const auto state = static_cast<common::SlotState>(m_scoreboard.Slot(c.slot).state.load());
        if (state == common::SlotState::Idle || state == common::SlotState::Starting) ++n;
    }
    return n;
}

void ChildPool::Quit(pid_t pid, Child& c, std::int64_t now_ms) {
    if (m_scoreboard.Slot(c.slot).pid.load() == pid) m_scoreboard.Slot(c.slot).drain.store(1);
    kill(pid, SIGQUIT);
    c.quit_sent_ms = now_ms;
}

void ChildPool::Drain(std::uint32_t below_generation, std::int64_t now_ms) {
    for (auto& [pid, c] : m_children) {
        if (c.quit_sent_ms != 0 || c.generation >= below_generation) continue;
        Quit(pid, c, now_ms);
    }
}

bool ChildPool::DrainOneIdle(std::uint32_t generation, std::int64_t now_ms) {
    // The highest slot first: the pool then keeps to the low slots, and a slot's number stays small.
    Child* pick = nullptr;
    pid_t pick_pid = 0;
    for (auto& [pid, c] : m_children) {
        if (c.generation != generation || c.quit_sent_ms != 0) continue;
        const auto& slot = m_scoreboard.Slot(c.slot);
        if (slot.pid.load() != pid || static_cast<common::SlotState>(slot.state.load()) != common::SlotState::Idle) continue;
        if (pick == nullptr || c.slot > pick->slot) {
            pick = &c;
            pick_pid = pid;
        }
    }
    if (pick == nullptr) return false;
    Quit(pick_pid, *pick, now_ms);
    return true;
}

void ChildPool::Escalate(std::int64_t now_ms, std::int64_t graceful_ms) {
    for (auto& [pid, c] : m_children) {
        if (c.quit_sent_ms == 0) continue;
        if (c.term_sent_ms == 0 && now_ms - c.quit_sent_ms >= graceful_ms) {
            common::LogWarn("worker pid " + std::to_string(pid) + " still running after SIGQUIT; sending SIGTERM");
            kill(pid, SIGTERM);
            c.term_sent_ms = now_ms;
        } else if (c.term_sent_ms != 0 && !c.kill_sent && now_ms - c.term_sent_ms >= kKillAfterTermMs) {
            common::LogWarn("worker pid " + std::to_string(pid) + " still running after SIGTERM; sending SIGKILL");
            kill(pid, SIGKILL);
            c.kill_sent = true;
        }
    }
}

int ChildPool::KillStuck(std::int64_t now_ms, std::int64_t hard_timeout_ms) {
    int killed = 0;
    for (auto& [pid, c] : m_children) {
        if (c.killed_stuck) continue;
        const auto& slot = m_scoreboard.Slot(c.slot);
        // The slot must still belong to this pid: a new worker may not have written it yet.
        if (slot.pid.load() != pid) continue;
        const std::int64_t start = slot.request_start_ms.load();
        if (start == 0 || now_ms - start <= hard_timeout_ms) continue;
        common::LogError("worker pid " + std::to_string(pid) + " busy on one request for " +
                         std::to_string((now_ms - start) / 1000) + " s; SIGKILL (request_hard_timeout_s)");
        kill(pid, SIGKILL);
        c.killed_stuck = true;
        ++killed;
    }
    return killed;
}

}  // namespace sigil::supervisor
