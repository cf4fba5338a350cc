#include "workers/sandbox/zygote.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workers/sandbox/protocol/control.h"
#include "workers/sandbox/transpiler.h"

namespace sigil::workers {

namespace {

std::int64_t NowUs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// How long a shared zygote lets a new connection wait per connection it already serves, and at
// most: every zygote is woken by a new connection and the first to call accept gets it, so the
// least busy one takes it (up to 200 connections each apart) and the pool's forks spread over all.
// Workers reconnect now and then (sandbox_host.h ZYGOTE_REBALANCE_RUNS), so the spread recovers
// from zygotes that started late or were restarted.
constexpr std::int64_t ACCEPT_WAIT_PER_CONNECTION_US = 50;
constexpr std::int64_t ACCEPT_WAIT_MAX_US = 10000;

// Connection ids are never reused (descriptor numbers are), so a child reaped after its
// connection closed is never reported to a newer connection on the same descriptor.
using ConnectionId = std::uint64_t;

// What one zygote process serves: its connections, its children and who asked for each.
class ZygoteServer {
public:
    ZygoteServer(int listen_fd, int sig_fd, const SandboxChildOptions& options, Transpiler* transpiler)
        : m_listen(listen_fd), m_sig(sig_fd), m_options(options), m_transpiler(transpiler) {}

    void AddConnection(common::UniqueFd fd) { m_connections.emplace(m_next_id++, std::move(fd)); }
    // Serves until poll fails, or (without a listening socket) until the last connection closed.
    void Serve();
    // SIGKILLs and reaps every child still alive.
    void KillAll();

private:
    void Accept();
    void Reap();
    // Handles one message on `id`; false when the connection is to be closed.
    bool OnMessage(ConnectionId id, int fd);
    void Close(ConnectionId id);
    std::size_t ChildrenOf(ConnectionId id) const;

    int m_listen;  // -1: serving the one control socket a worker started us with
    int m_sig;
    const SandboxChildOptions& m_options;
    Transpiler* m_transpiler;
    ConnectionId m_next_id = 1;
    std::map<ConnectionId, common::UniqueFd> m_connections;
    std::map<pid_t, ConnectionId> m_children;  // unreaped children and the connection that spawned each
};

void ZygoteServer::Serve() {
    std::vector<pollfd> fds;
    std::vector<ConnectionId> ids;
    std::int64_t accept_at = 0;  // a connection waits; taken at this time unless another zygote took it
    while (m_listen >= 0 || !m_connections.empty()) {
        const std::int64_t now = NowUs();
        if (accept_at != 0 && now >= accept_at) {
            accept_at = 0;
            Accept();
        }
        fds.assign({{m_sig, POLLIN, 0}, {accept_at == 0 ? m_listen : -1, POLLIN, 0}});
        ids.clear();
        for (const auto& [id, fd] : m_connections) {
            fds.push_back({fd.get(), POLLIN, 0});
            ids.push_back(id);
        }
        const timespec wait{0, static_cast<long>(accept_at - now) * 1000};
        if (::ppoll(fds.data(), fds.size(), accept_at == 0 ? nullptr : &wait, nullptr) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo info;
            while (::read(m_sig, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
            }
            Reap();
        }
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if ((fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
            if (m_connections.count(ids[i]) == 0) continue;  // closed by Reap above
            if (!OnMessage(ids[i], fds[i + 2].fd)) Close(ids[i]);
        }
        if (fds[1].revents & POLLIN) {
            const std::int64_t delay = std::min<std::int64_t>(
                static_cast<std::int64_t>(m_connections.size()) * ACCEPT_WAIT_PER_CONNECTION_US, ACCEPT_WAIT_MAX_US);
            if (delay == 0) {
                Accept();
            } else {
                accept_at = NowUs() + delay;
            }
        }
    }
}

// Workers connect once and keep the connection; a peer of another uid is refused (the address is
// abstract, so anyone on the host can reach it), and so is any connection beyond the cap.
// One at a time: the next waiting connection is weighed against this zygote's new count.
void ZygoteServer::Accept() {
    common::UniqueFd fd(::accept4(m_listen, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) return;  // EAGAIN: another zygote took it; anything else: retried on the next wake-up
    ucred peer{};
    socklen_t len = sizeof(peer);
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != ::geteuid()) {
        std::fprintf(stderr, "sigil-sandbox: refused a connection from uid %u\n", static_cast<unsigned>(peer.uid));
        return;
    }
    if (m_connections.size() >= ZYGOTE_MAX_CONNECTIONS) {
        std::fprintf(stderr, "sigil-sandbox: %zu connections already; refused one more\n", m_connections.size());
        return;
    }
    AddConnection(std::move(fd));
}

void ZygoteServer::Reap() {
    int status = 0;
    pid_t pid;
    rusage usage{};
    // wait4: the child's CPU time comes with its exit, for the worker's run CPU metric.
    while ((pid = ::wait4(-1, &status, WNOHANG, &usage)) > 0) {
        const auto child = m_children.find(pid);
        if (child == m_children.end()) continue;
        const ConnectionId owner = child->second;
        m_children.erase(child);
        const auto conn = m_connections.find(owner);
        if (conn == m_connections.end()) continue;  // its worker is gone: nobody to tell
        const auto micros = [](const timeval& t) {
            return static_cast<std::uint64_t>(t.tv_sec) * 1000000U + static_cast<std::uint64_t>(t.tv_usec);
        };
        const ZygoteControl exited{ZygoteControlType::Exited, pid, status, micros(usage.ru_utime) + micros(usage.ru_stime)};
        if (!SendZygoteControl(conn->second.get(), exited)) Close(owner);
    }
}

bool ZygoteServer::OnMessage(ConnectionId id, int fd) {
    auto received = ReceiveZygoteControl(fd);
    if (!received.ok()) {
        // A malformed packet (its descriptors already closed) is dropped; a dead socket is closed.
        return received.error().code == "malformed_message";
    }
    if (!received->has_value()) return false;
    ReceivedControl& msg = **received;
    if (msg.message.type == ZygoteControlType::Spawn) {
        // A worker runs one action at a time; this only stops one that floods us with forks.
        pid_t child = -1;
        if (ChildrenOf(id) < ZYGOTE_MAX_CHILDREN_PER_CONNECTION) {
            const pid_t zygote = ::getpid();
            child = ::fork();
            if (child == 0) {
                // Dies with the zygote, also when the zygote died before this line (then nobody
                // would report or kill the child).
                ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                if (::getppid() != zygote) ::_exit(SANDBOX_EXIT_CHANNEL_LOST);
                ::close(m_sig);
                // Every descriptor but the op channel (the listening socket, other workers'
                // connections) is closed by the child's lockdown before it reads anything.
                RunSandboxChild(msg.passed.get(), m_options, m_transpiler);
            }
        }
        msg.passed.Reset();
        if (child > 0) m_children.emplace(child, id);
        // Sent without blocking: a worker that does not read its answers loses its connection
        // (and its children) rather than stalling every other worker's runs.
        return SendZygoteControl(fd, ZygoteControl{ZygoteControlType::Spawned, child > 0 ? child : -1, 0});
    }
    if (msg.message.type == ZygoteControlType::Kill) {
        // Only a child this connection spawned and nobody has reaped yet (so a recycled pid, or
        // another worker's child, is never hit).
        const auto child = m_children.find(msg.message.pid);
        if (child != m_children.end() && child->second == id) ::kill(child->first, SIGKILL);
    }
    return true;
}

// The worker is gone (or broke the protocol): nobody can read its children's results.
void ZygoteServer::Close(ConnectionId id) {
    m_connections.erase(id);
    for (const auto& [pid, owner] : m_children) {
        if (owner == id) ::kill(pid, SIGKILL);
    }
}

std::size_t ZygoteServer::ChildrenOf(ConnectionId id) const {
    std::size_t n = 0;
    for (const auto& [pid, owner] : m_children) n += owner == id ? 1 : 0;
    return n;
}

void ZygoteServer::KillAll() {
    for (const auto& [pid, owner] : m_children) ::kill(pid, SIGKILL);
    while (::waitpid(-1, nullptr, 0) > 0) {
    }
}

bool IsListening(int fd) {
    int accepting = 0;
    socklen_t len = sizeof(accepting);
    return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) == 0 && accepting != 0;
}

}  // namespace

// The zygote's whole life: serve SPAWN/KILL, report exits, stop when nobody can ask any more.
[[noreturn]] void RunZygote(int control, const SandboxChildOptions& options) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (control != ZYGOTE_CONTROL_FD) {
        if (::dup2(control, ZYGOTE_CONTROL_FD) < 0) ::_exit(1);
        control = ZYGOTE_CONTROL_FD;
    }
    // A shared zygote keeps ZYGOTE_READY_FD until it is warm: closing it tells the supervisor.
    const bool shared = IsListening(control);
    const int first_closed = shared ? ZYGOTE_READY_FD + 1 : ZYGOTE_CONTROL_FD + 1;
    if (::close_range(static_cast<unsigned>(first_closed), ~0u, 0) != 0) {
        for (int fd = first_closed; fd < 65536; ++fd) ::close(fd);
    }
    if (shared) ::fcntl(ZYGOTE_READY_FD, F_SETFD, FD_CLOEXEC);
    ::fcntl(control, F_SETFD, FD_CLOEXEC);
    // The starter already put /dev/null at 0 (a worker's own 0 is the FastCGI listen socket); kept
    // in case sigil-sandbox is started some other way.
    if (const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC); null_fd >= 0) {
        ::dup2(null_fd, 0);
        ::close(null_fd);
    }
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &chld, nullptr);
    const int sig_fd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sig_fd < 0) ::_exit(1);
    if (shared) ::fcntl(control, F_SETFL, ::fcntl(control, F_GETFL) | O_NONBLOCK);

    // Everything children share copy-on-write is built once, here, before any request data.
    WarmUpSandboxParent();
    std::unique_ptr<Transpiler> transpiler;
    if (options.preload_transpiler) {
        const SandboxHeapHooks hooks = SandboxHeap();
        const TranspilerAllocator allocator{hooks.alloc, hooks.realloc, hooks.free};
        auto created = Transpiler::Create(hooks.udata, &allocator);
        // A build defect; children then run code as given and modern syntax fails to parse.
        if (created.ok()) transpiler = std::move(created).value();
    }
    PrepareSandboxHeap(options);
    if (shared) ::close(ZYGOTE_READY_FD);  // before any fork: no child ever holds it

    ZygoteServer server(shared ? control : -1, sig_fd, options, transpiler.get());
    if (!shared) server.AddConnection(common::UniqueFd(control));
    server.Serve();
    server.KillAll();
    ::_exit(0);
}
int SandboxMain(int argc, char** argv, SandboxNativeInstaller install_test_natives) {
    SandboxChildOptions options;
    options.install_test_natives = install_test_natives;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--no-transpiler") {
            options.preload_transpiler = false;
        } else {
            std::fprintf(stderr, "sigil-sandbox: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    struct stat st {};
    if (::fstat(ZYGOTE_CONTROL_FD, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        std::fprintf(stderr, "sigil-sandbox: descriptor %d is not a socket; sigil-worker starts this program with "
                             "its control socket there\n", ZYGOTE_CONTROL_FD);
        return 2;
    }
    RunZygote(ZYGOTE_CONTROL_FD, options);
}

}  // namespace sigil::workers
