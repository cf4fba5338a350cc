#include "workers/sandbox/zygote.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <memory>
#include <set>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "workers/sandbox/transpiler.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;
using common::UniqueFd;

namespace {

// Control messages between worker and zygote (SOCK_SEQPACKET keeps each one whole; both ends
// are ours, forked from the same binary, so a fixed struct is enough).
enum class ZygoteOp : std::uint32_t { Spawn = 1, Spawned = 2, Kill = 3, Exited = 4 };
struct ZygoteMsg {
    ZygoteOp op;
    std::int32_t pid;
    std::int32_t status;
};

constexpr int ZYGOTE_CONTROL_FD = 3;
// Grace after the run's time limit before the worker kills the child itself.
constexpr std::int64_t KILL_GRACE_MS = 1000;
// How long a killed child may take to be reported before RunAction gives up.
constexpr int EXIT_REPORT_TIMEOUT_MS = 5000;

bool SendMsg(int fd, const ZygoteMsg& msg, int pass_fd = -1) {
    iovec iov{const_cast<ZygoteMsg*>(&msg), sizeof(msg)};
    msghdr hdr{};
    hdr.msg_iov = &iov;
    hdr.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (pass_fd >= 0) {
        hdr.msg_control = control;
        hdr.msg_controllen = sizeof(control);
        cmsghdr* c = CMSG_FIRSTHDR(&hdr);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    for (;;) {
        const ssize_t n = ::sendmsg(fd, &hdr, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        return n == static_cast<ssize_t>(sizeof(msg));
    }
}

// Receives one message (and a passed descriptor, if any, into *passed_fd). 0 = EOF, -1 = error.
int RecvMsg(int fd, ZygoteMsg& msg, int* passed_fd) {
    iovec iov{&msg, sizeof(msg)};
    msghdr hdr{};
    hdr.msg_iov = &iov;
    hdr.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    hdr.msg_control = control;
    hdr.msg_controllen = sizeof(control);
    ssize_t n;
    do {
        n = ::recvmsg(fd, &hdr, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (passed_fd != nullptr) *passed_fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&hdr); c != nullptr; c = CMSG_NXTHDR(&hdr, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int got = -1;
            std::memcpy(&got, CMSG_DATA(c), sizeof(int));
            if (passed_fd != nullptr) *passed_fd = got;
            else ::close(got);
        }
    }
    if (n == 0) return 0;
    if (n != static_cast<ssize_t>(sizeof(msg))) return -1;
    return 1;
}

// The zygote's whole life: serve SPAWN/KILL, report exits, stop when the worker goes away.
[[noreturn]] void ZygoteMain(int control, const SandboxChildOptions& options) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (control != ZYGOTE_CONTROL_FD) {
        if (::dup2(control, ZYGOTE_CONTROL_FD) < 0) ::_exit(1);
        control = ZYGOTE_CONTROL_FD;
    }
    if (::close_range(ZYGOTE_CONTROL_FD + 1, ~0u, 0) != 0) {
        for (int fd = ZYGOTE_CONTROL_FD + 1; fd < 65536; ++fd) ::close(fd);
    }
    ::fcntl(control, F_SETFD, FD_CLOEXEC);
    // Descriptor 0 of a worker is the FastCGI listen socket: the zygote has no use for it.
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

    std::set<pid_t> live;
    auto reap = [&]() {
        int status = 0;
        pid_t pid;
        while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
            live.erase(pid);
            SendMsg(control, ZygoteMsg{ZygoteOp::Exited, pid, status});
        }
    };
    for (;;) {
        pollfd fds[2] = {{control, POLLIN, 0}, {sig_fd, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[1].revents & POLLIN) {
            signalfd_siginfo info;
            while (::read(sig_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
            }
            reap();
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ZygoteMsg msg{};
            int passed = -1;
            const int r = RecvMsg(control, msg, &passed);
            if (r <= 0) break;
            if (msg.op == ZygoteOp::Spawn && passed >= 0) {
                const pid_t child = ::fork();
                if (child == 0) {
                    ::close(sig_fd);
                    RunSandboxChild(passed, options, transpiler.get());
                }
                ::close(passed);
                if (child > 0) live.insert(child);
                SendMsg(control, ZygoteMsg{ZygoteOp::Spawned, child > 0 ? child : -1, 0});
            } else if (msg.op == ZygoteOp::Kill) {
                if (passed >= 0) ::close(passed);
                if (live.count(msg.pid) != 0) ::kill(msg.pid, SIGKILL);
            } else if (passed >= 0) {
                ::close(passed);
            }
        }
    }
    // The worker is gone: nobody can read the children's results.
    for (pid_t pid : live) ::kill(pid, SIGKILL);
    while (::waitpid(-1, nullptr, 0) > 0) {
    }
    ::_exit(0);
}

common::Error Gone() { return MakeError(ErrorKind::Unavailable, "zygote_gone", "the sandbox zygote is not answering"); }

std::int64_t NowMs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

Result<Zygote> Zygote::Start(const SandboxChildOptions& options) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        return MakeError(ErrorKind::Internal, "zygote_start_failed", std::string("socketpair: ") + std::strerror(errno));
    }
    UniqueFd ours(sv[0]), theirs(sv[1]);
    const pid_t pid = ::fork();
    if (pid < 0) return MakeError(ErrorKind::Internal, "zygote_start_failed", std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ours.Reset();
        ZygoteMain(theirs.Release(), options);
    }
    return Zygote(std::move(ours), pid);
}

Zygote::~Zygote() {
    if (!m_control.valid()) return;
    m_control.Reset();
    if (m_pid > 0) ::waitpid(m_pid, nullptr, 0);
}

Result<pid_t> Zygote::Spawn(int channel_fd) {
    if (!SendMsg(m_control.get(), ZygoteMsg{ZygoteOp::Spawn, 0, 0}, channel_fd)) return Gone();
    for (;;) {
        ZygoteMsg msg{};
        if (RecvMsg(m_control.get(), msg, nullptr) <= 0) return Gone();
        if (msg.op != ZygoteOp::Spawned) continue;  // an exit report from an abandoned run
        if (msg.pid <= 0) return MakeError(ErrorKind::Internal, "spawn_failed", "the zygote could not fork");
        return static_cast<pid_t>(msg.pid);
    }
}

Status Zygote::Kill(pid_t child) {
    if (!SendMsg(m_control.get(), ZygoteMsg{ZygoteOp::Kill, child, 0})) return Gone();
    return common::Success();
}

Result<int> Zygote::WaitExit(pid_t child, int timeout_ms) {
    const std::int64_t until = NowMs() + timeout_ms;
    for (;;) {
        const std::int64_t left = until - NowMs();
        if (left <= 0) return MakeError(ErrorKind::Timeout, "zygote_timeout", "no exit report from the zygote");
        pollfd p{m_control.get(), POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        ZygoteMsg msg{};
        if (RecvMsg(m_control.get(), msg, nullptr) <= 0) return Gone();
        if (msg.op == ZygoteOp::Exited && msg.pid == child) return static_cast<int>(msg.status);
    }
}

// RunAction -------------------------------------------------------------------------------------

namespace {

// One run's worker-side state machine: bytes to write, messages read, limits counted.
class RunSession {
public:
    RunSession(Zygote& zygote, const RunRequest& request, OpHandler& handler, int channel, pid_t pid)
        : m_zygote(zygote), m_request(request), m_handler(handler), m_channel(channel),
          m_reader(SANDBOX_MAX_CHILD_PAYLOAD) {
        m_outcome.pid = pid;
    }

    Result<RunOutcome> Drive(common::Bytes run_frame);

private:
    void Stop(RunEnd end, std::string code, std::string message);
    void Handle(SandboxMessage& message);
    bool ReadChannel();   // false at EOF or error
    bool WriteChannel();  // false on error
    void Classify(int status);

    Zygote& m_zygote;
    const RunRequest& m_request;
    OpHandler& m_handler;
    int m_channel;
    SandboxFrameReader m_reader;
    common::Bytes m_out;
    std::size_t m_out_pos = 0;
    std::size_t m_log_bytes = 0;
    bool m_done_seen = false;
    bool m_stopped = false;
    bool m_deadline_killed = false;
    RunOutcome m_outcome;
};

void RunSession::Stop(RunEnd end, std::string code, std::string message) {
    if (m_stopped) return;
    m_stopped = true;
    m_outcome.end = end;
    m_outcome.response_json.clear();
    m_outcome.error = ScriptError{std::move(code), std::move(message), ""};
    (void)m_zygote.Kill(m_outcome.pid);
}

void RunSession::Handle(SandboxMessage& message) {
    if (m_stopped) return;
    if (auto* op = std::get_if<SandboxOp>(&message)) {
        if (++m_outcome.ops > m_request.limits.max_ops) {
            Stop(RunEnd::OpLimit, "op_limit", "the action made too many requests");
            return;
        }
        auto result = m_handler.OnOp(op->name, op->args_json);
        if (!result.ok() && result.error().code.size() > 6 &&
            result.error().code.compare(result.error().code.size() - 6, 6, "_limit") == 0) {
            Stop(RunEnd::OpLimit, result.error().code, result.error().message);
            return;
        }
        SandboxOpResult reply{result.ok(), result.ok() ? std::move(result).value() : result.error().message};
        auto frame = EncodeSandboxMessage(reply);
        if (!frame.ok()) frame = EncodeSandboxMessage(SandboxOpResult{false, "op result too large"});
        m_out.insert(m_out.end(), frame->begin(), frame->end());
    } else if (auto* log = std::get_if<SandboxLog>(&message)) {
        m_log_bytes += log->text.size();
        if (m_log_bytes > m_request.limits.max_log_bytes) {
            Stop(RunEnd::LogLimit, "log_limit", "the action's logs exceed the limit");
            return;
        }
        auto st = m_handler.OnLog(log->text);
        if (!st.ok()) Stop(RunEnd::Stopped, st.error().code, st.error().message);
    } else if (auto* lowered = std::get_if<SandboxLowered>(&message)) {
        if (m_outcome.lowered_code || !m_request.lower || m_outcome.ops > 0 || m_log_bytes > 0) {
            Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent LOWERED out of turn");
            return;
        }
        m_outcome.lowered_code = std::move(lowered->code);
    } else if (auto* done = std::get_if<SandboxDone>(&message)) {
        if (m_done_seen) {
            Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent DONE twice");
            return;
        }
        m_done_seen = true;
        if (done->ok && done->response_json.size() > m_request.limits.max_response_bytes) {
            Stop(RunEnd::ResponseLimit, "response_limit", "the action's response exceeds the limit");
            return;
        }
        m_outcome.end = done->ok ? RunEnd::Completed : RunEnd::ScriptError;
        m_outcome.response_json = std::move(done->response_json);
        m_outcome.error = std::move(done->error);
    } else {
        Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent a worker-only message");
    }
}

bool RunSession::ReadChannel() {
    std::uint8_t buf[64 * 1024];
    for (;;) {
        const ssize_t n = ::read(m_channel, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n <= 0) return false;
        if (!m_reader.Feed(common::ByteView(buf, static_cast<std::size_t>(n))).ok()) {
            Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent a malformed frame");
            return false;
        }
        for (;;) {
            auto next = m_reader.Next();
            if (!next.ok()) {
                Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent a malformed message");
                return false;
            }
            if (!next->has_value()) break;
            Handle(**next);
        }
    }
}

bool RunSession::WriteChannel() {
    while (m_out_pos < m_out.size()) {
        const ssize_t n = ::send(m_channel, m_out.data() + m_out_pos, m_out.size() - m_out_pos, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n <= 0) return false;
        m_out_pos += static_cast<std::size_t>(n);
    }
    m_out.clear();
    m_out_pos = 0;
    return true;
}

void RunSession::Classify(int status) {
    m_outcome.wait_status = status;
    if (m_stopped) return;  // a worker-side limit already decided
    // Lowering finished before the run ended, however it ended: still worth caching.
    struct KeepLowered {
        RunOutcome& outcome;
        std::optional<std::string> code;
        ~KeepLowered() { outcome.lowered_code = std::move(code); }
    } keep{m_outcome, std::move(m_outcome.lowered_code)};
    const bool sig = WIFSIGNALED(status);
    const int signo = sig ? WTERMSIG(status) : 0;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (m_deadline_killed || signo == SIGXCPU || signo == SIGKILL || code == SANDBOX_EXIT_TIME_LIMIT) {
        m_outcome = RunOutcome{RunEnd::TimeLimit, "", {"time_limit", "the action ran past its time limit", ""},
                               m_outcome.pid, status, m_outcome.ops};
    } else if (code == SANDBOX_EXIT_MEMORY_LIMIT) {
        m_outcome = RunOutcome{RunEnd::MemoryLimit, "", {"memory_limit", "the action ran out of memory", ""},
                               m_outcome.pid, status, m_outcome.ops};
    } else if (signo == SIGSYS) {
        m_outcome = RunOutcome{RunEnd::Crashed, "", {"sandbox_violation", "the action attempted a forbidden system call", ""},
                               m_outcome.pid, status, m_outcome.ops};
    } else if (code != SANDBOX_EXIT_OK || !m_done_seen) {
        m_outcome = RunOutcome{RunEnd::Crashed, "",
                               {"sandbox_crashed", sig ? "the sandbox died from signal " + std::to_string(signo)
                                                       : "the sandbox exited with status " + std::to_string(code),
                                ""},
                               m_outcome.pid, status, m_outcome.ops};
    }
}

Result<RunOutcome> RunSession::Drive(common::Bytes run_frame) {
    m_out = std::move(run_frame);
    const std::int64_t deadline = NowMs() + static_cast<std::int64_t>(m_request.limits.time_ms) + KILL_GRACE_MS;
    bool channel_open = true;
    std::optional<int> status;
    std::int64_t give_up = 0;
    while (channel_open || !status) {
        if (!status && !m_deadline_killed && NowMs() >= deadline) {
            m_deadline_killed = true;
            (void)m_zygote.Kill(m_outcome.pid);
        }
        if ((m_deadline_killed || m_stopped) && give_up == 0) give_up = NowMs() + EXIT_REPORT_TIMEOUT_MS;
        if (give_up != 0 && NowMs() >= give_up) {
            return MakeError(ErrorKind::Timeout, "zygote_timeout", "the sandbox child was not reaped in time");
        }
        pollfd fds[2] = {{channel_open ? m_channel : -1, static_cast<short>(POLLIN | (m_out.empty() ? 0 : POLLOUT)), 0},
                         {status ? -1 : m_zygote.control_fd(), POLLIN, 0}};
        std::int64_t wait_ms = give_up != 0 ? give_up - NowMs() : deadline - NowMs();
        if (m_deadline_killed && give_up == 0) wait_ms = EXIT_REPORT_TIMEOUT_MS;
        const int r = ::poll(fds, 2, static_cast<int>(std::max<std::int64_t>(wait_ms, 0)));
        if (r < 0 && errno != EINTR) return Gone();
        if (r <= 0) continue;
        if (channel_open && (fds[0].revents & POLLOUT)) {
            if (!WriteChannel()) m_out.clear();  // the child is gone; its exit status will say why
        }
        if (channel_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) channel_open = ReadChannel();
        if (!status && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            ZygoteMsg msg{};
            if (RecvMsg(m_zygote.control_fd(), msg, nullptr) <= 0) return Gone();
            if (msg.op == ZygoteOp::Exited && msg.pid == m_outcome.pid) status = msg.status;
        }
    }
    Classify(*status);
    return std::move(m_outcome);
}

}  // namespace

Result<RunOutcome> RunAction(Zygote& zygote, const RunRequest& request, OpHandler& handler) {
    auto frame = EncodeSandboxMessage(
        SandboxRun{request.code, request.params_json, request.limits.time_ms, request.limits.memory_bytes, request.lower});
    if (!frame.ok()) return frame.error();
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        return MakeError(ErrorKind::Internal, "socketpair_failed", std::strerror(errno));
    }
    UniqueFd ours(sv[0]), theirs(sv[1]);
    auto pid = zygote.Spawn(theirs.get());
    theirs.Reset();  // the child holds the only other end now, so its death reads as EOF
    if (!pid.ok()) return pid.error();
    ::fcntl(ours.get(), F_SETFL, ::fcntl(ours.get(), F_GETFL) | O_NONBLOCK);
    RunSession session(zygote, request, handler, ours.get(), *pid);
    return session.Drive(std::move(frame).value());
}

}  // namespace sigil::workers
