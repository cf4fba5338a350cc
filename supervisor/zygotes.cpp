#include "supervisor/zygotes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/zygote_env.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace sigil::supervisor {
namespace {

using common::ErrorKind;
using common::MakeError;

// Where sigil-sandbox finds its control socket and its readiness pipe (workers/sandbox/protocol/control.h
// ZYGOTE_CONTROL_FD, ZYGOTE_READY_FD).
constexpr int kZygoteControlFd = 3;
constexpr int kZygoteReadyFd = 4;
// Room above the descriptors being arranged in the forked child.
constexpr int kScratchFd = 10;

common::Error SocketError(const std::string& what) {
    return MakeError(ErrorKind::Internal, "zygote_socket", "shared zygote socket: " + what + ": " + std::strerror(errno));
}

// In the forked child: async-signal-safe calls only until execve.
[[noreturn]] void ExecZygote(int listen_fd, int ready_fd, pid_t parent, char* const* argv, char* const* envp) {
    // The supervisor's handlers are reset by exec, its ignored SIGPIPE and blocked mask are not;
    // the sandbox's limits count on default actions (SIGXCPU).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig != SIGKILL && sig != SIGSTOP) (void)sigaction(sig, &dfl, nullptr);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    const int sock = fcntl(listen_fd, F_DUPFD, kScratchFd);
    const int ready = fcntl(ready_fd, F_DUPFD, kScratchFd);
    const int null_fd = open("/dev/null", O_RDWR);
    if (sock < 0 || ready < 0 || null_fd < 0) _exit(126);
    if (dup2(null_fd, 0) != 0 || dup2(sock, kZygoteControlFd) != kZygoteControlFd ||
        dup2(ready, kZygoteReadyFd) != kZygoteReadyFd) {
        _exit(126);
    }
    close_range(kZygoteReadyFd + 1, ~0U, 0);
    execve(argv[0], argv, envp);
    static const char msg[] = "sigil-supervisor: exec of the sandbox zygote failed\n";
    [[maybe_unused]] auto n = write(2, msg, sizeof msg - 1);
    _exit(127);
}

std::string Describe(int code, int status) {
    if (code == CLD_EXITED) return "exited " + std::to_string(status);
    return "killed by signal " + std::to_string(status);
}

}  // namespace

std::uint32_t DefaultZygoteCount(long online_cpus) { return static_cast<std::uint32_t>(std::clamp<long>(online_cpus, 1, 64)); }

common::Result<ZygotePool> ZygotePool::Open(std::string sandbox_executable, std::uint32_t count) {
    unsigned char random[8];
    if (getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) return SocketError("getrandom");
    std::string name = "sigil-zygote-" + std::to_string(getpid()) + "-";
    for (unsigned char b : random) {
        static const char hex[] = "0123456789abcdef";
        name += hex[b >> 4];
        name += hex[b & 15];
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    common::UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return SocketError("socket");
    if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) return SocketError("bind");
    // Each worker connects once and keeps its connection, so the backlog only holds the
    // connections made while every zygote is busy or being restarted.
    if (listen(fd.get(), SOMAXCONN) != 0) return SocketError("listen");
    return ZygotePool(std::move(fd), "@" + name, std::move(sandbox_executable), count);
}

ZygotePool::~ZygotePool() { Stop(); }

void ZygotePool::Tick(std::int64_t now_ms) {
    ReapDead(now_ms);
    while (m_running.size() < m_count && m_backoff.Allowed(now_ms)) {
        if (auto st = StartOne(now_ms); !st.ok()) {
            common::LogError(st.error().message);
            return;
        }
    }
}

void ZygotePool::ReapDead(std::int64_t now_ms) {
    for (auto it = m_running.begin(); it != m_running.end();) {
        pollfd p{it->pidfd.get(), POLLIN, 0};
        if (poll(&p, 1, 0) <= 0) {
            ++it;
            continue;
        }
        // By the pidfd, not the pid: if ChildPool::Reap got there first, the pid may already be
        // another process's.
        siginfo_t info{};
        std::string how = "ended";
        if (waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(it->pidfd.get()), &info, WEXITED | WNOHANG) == 0 &&
            info.si_pid != 0) {
            how = Describe(info.si_code, info.si_status);
        }
        common::LogWarn("sandbox zygote pid " + std::to_string(it->pid) + " " + how + "; starting another");
        ChildExit e;
        e.child.pid = it->pid;
        e.child.started_ms = it->started_ms;
        e.crashed = true;  // a zygote never ends on its own while we run
        m_backoff.OnExit(e, now_ms);
        it = m_running.erase(it);
    }
}

common::Status ZygotePool::StartOne(std::int64_t now_ms) {
    // Everything the child needs is built before fork: after fork only async-signal-safe calls.
    std::vector<std::string> args{m_executable};
    std::vector<std::string> env = common::ZygoteEnvironment();
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        return MakeError(ErrorKind::Internal, "fork_failed", std::string("pipe (zygote): ") + std::strerror(errno));
    }
    common::UniqueFd ready_read(pipe_fds[0]), ready_write(pipe_fds[1]);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) return MakeError(ErrorKind::Internal, "fork_failed", std::string("fork (zygote): ") + std::strerror(errno));
    if (pid == 0) ExecZygote(m_listen.get(), ready_write.get(), parent, argv.data(), envp.data());
    ready_write.Reset();  // the zygote holds the only write end: EOF here once it is warm (or dead)
    // Nothing reaps between fork and here (this loop is the supervisor's only thread).
    common::UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd.valid()) {
        const int err = errno;
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        errno = err;
        return MakeError(ErrorKind::Internal, "fork_failed", std::string("pidfd_open (zygote): ") + std::strerror(errno));
    }
    m_running.push_back(Running{pid, std::move(pidfd), std::move(ready_read), now_ms});
    common::CountZygoteStart();
    common::LogDebug("sandbox zygote pid " + std::to_string(pid) + " started");
    return common::Success();
}

bool ZygotePool::WaitReady(int timeout_ms) {
    const std::int64_t until = common::MonotonicMs() + timeout_ms;
    for (;;) {
        std::vector<pollfd> fds;
        for (const auto& z : m_running) {
            if (z.ready.valid()) fds.push_back({z.ready.get(), POLLIN, 0});
        }
        if (fds.empty()) return m_running.size() == m_count;
        const std::int64_t left = until - common::MonotonicMs();
        if (left <= 0) return false;
        if (poll(fds.data(), fds.size(), static_cast<int>(left)) < 0 && errno != EINTR) return false;
        for (auto& z : m_running) {
            for (const auto& p : fds) {
                if (p.fd == z.ready.get() && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) z.ready.Reset();
            }
        }
    }
}

void ZygotePool::Stop() {
    for (auto& z : m_running) {
        (void)syscall(SYS_pidfd_send_signal, z.pidfd.get(), SIGKILL, nullptr, 0);  // never a recycled pid
        siginfo_t info{};
        (void)waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(z.pidfd.get()), &info, WEXITED);
    }
    m_running.clear();
}

std::vector<pid_t> ZygotePool::pids() const {
    std::vector<pid_t> out;
    for (const auto& z : m_running) out.push_back(z.pid);
    return out;
}

}  // namespace sigil::supervisor
