#include "workers/actions/sandbox_host.h"

#include <cerrno>
#include <cstddef>
#include <exception>
#include <csignal>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rapidjson/document.h>

#include "common/activity.h"
#include "common/metrics.h"
#include "common/utf8.h"
#include "common/zygote_env.h"
#include "workers/actions/string_response.h"
#include "workers/sandbox/protocol/control.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;
using common::UniqueFd;

namespace {

// Grace after the run's time limit before the worker kills the child itself.
constexpr std::int64_t KILL_GRACE_MS = 1000;
// How long a killed child may take to be reported before RunAction gives up.
constexpr int EXIT_REPORT_TIMEOUT_MS = 5000;
// Descriptors at or above this are free in the forked child while it arranges 0 and 3.
constexpr int EXEC_SCRATCH_FD = 10;

// Whether `text` is one complete JSON value in valid UTF-8 (what the worker copies into a response).
bool IsJsonValue(std::string_view text) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
    return !doc.HasParseError();
}

common::Error Gone() { return MakeError(ErrorKind::Unavailable, "zygote_gone", "the sandbox zygote is not answering"); }

common::Error StartFailed(const std::string& why) {
    return MakeError(ErrorKind::Internal, "zygote_start_failed", "sigil-sandbox: " + why);
}

std::int64_t NowMs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// In the forked child: only async-signal-safe calls until execve (the worker may have threads).
[[noreturn]] void ExecZygote(int control, int err_pipe, pid_t parent, const char* path, char* const* argv,
                             char* const* envp) {
    int saved_errno = 0;
    auto fail = [&]() {
        saved_errno = errno;
        (void)!::write(err_pipe, &saved_errno, sizeof(saved_errno));
        ::_exit(127);
    };
    // The zygote must not outlive its worker; if the worker died before this line, go now.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail();
    if (::getppid() != parent) ::_exit(127);
    // A clean signal state: exec keeps the blocked mask and ignored signals, and a worker may have
    // both (it ignores SIGPIPE and SIGHUP); the sandbox's limits count on default actions (SIGXCPU).
    sigset_t none;
    ::sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) fail();
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig != SIGKILL && sig != SIGSTOP) (void)::sigaction(sig, &dfl, nullptr);  // EINVAL for the RT signals libc keeps
    }
    // Park both descriptors above the ones being arranged, then place the control socket at 3
    // (without close-on-exec) and /dev/null at 0 (a worker's 0 is the FastCGI listen socket).
    const int ctl = ::fcntl(control, F_DUPFD_CLOEXEC, EXEC_SCRATCH_FD);
    const int err = ::fcntl(err_pipe, F_DUPFD_CLOEXEC, ctl + 1);
    if (ctl < 0 || err < 0) fail();
    err_pipe = err;
    if (::dup2(ctl, ZYGOTE_CONTROL_FD) < 0) fail();
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || ::dup2(null_fd, 0) < 0) fail();
    // Everything else but stdout/stderr (logs) and the error pipe (close-on-exec) goes.
    if (::close_range(ZYGOTE_CONTROL_FD + 1, static_cast<unsigned>(err - 1), 0) != 0 ||
        ::close_range(static_cast<unsigned>(err + 1), ~0u, 0) != 0) {
        fail();
    }
    ::execve(path, argv, envp);
    fail();
    ::_exit(127);
}

}  // namespace

std::string CapText(std::string_view text, std::size_t max_bytes) {
    std::string s = common::ReplaceInvalidUtf8(text);
    if (s.size() <= max_bytes) return s;
    std::string marker = " [... " + std::to_string(s.size()) + " bytes, cut]";
    std::size_t keep = max_bytes > marker.size() ? max_bytes - marker.size() : 0;
    while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;  // not inside a character
    s.resize(keep);
    return s + marker;
}

std::string DefaultSandboxExecutable() {
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) return "sigil-sandbox";
    std::string dir(self, static_cast<std::size_t>(n));
    const auto slash = dir.rfind('/');
    dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
    return dir + "/sigil-sandbox";
}

Result<Zygote> Zygote::Start(const ZygoteOptions& options) {
    const std::string path = options.executable.empty() ? DefaultSandboxExecutable() : options.executable;
    if (::access(path.c_str(), X_OK) != 0) return StartFailed(path + ": " + std::strerror(errno));
    // Everything the child needs is built before fork: it may only make async-signal-safe calls.
    std::vector<std::string> arg_strings{path};
    arg_strings.insert(arg_strings.end(), options.args.begin(), options.args.end());
    const std::vector<std::string> env_strings = common::ZygoteEnvironment();
    std::vector<char*> argv, envp;
    for (auto& a : arg_strings) argv.push_back(const_cast<char*>(a.c_str()));
    for (auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
    argv.push_back(nullptr);
    envp.push_back(nullptr);

    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        return StartFailed(std::string("socketpair: ") + std::strerror(errno));
    }
    UniqueFd ours(sv[0]), theirs(sv[1]);
    int ep[2];
    if (::pipe2(ep, O_CLOEXEC) != 0) return StartFailed(std::string("pipe: ") + std::strerror(errno));
    UniqueFd err_read(ep[0]), err_write(ep[1]);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) return StartFailed(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) ExecZygote(theirs.get(), err_write.get(), parent, path.c_str(), argv.data(), envp.data());
    theirs.Reset();
    err_write.Reset();
    // The pipe closes on a successful exec (EOF) or carries the errno of the step that failed.
    int child_errno = 0;
    ssize_t n;
    do {
        n = ::read(err_read.get(), &child_errno, sizeof(child_errno));
    } while (n < 0 && errno == EINTR);
    if (n != 0) {
        ::waitpid(pid, nullptr, 0);
        return StartFailed("exec " + path + ": " + std::strerror(n == sizeof(child_errno) ? child_errno : EIO));
    }
    return Zygote(std::move(ours), pid);
}

Result<Zygote> Zygote::Connect(const std::string& address) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    // "@name" is Linux's abstract namespace (a leading NUL), which leaves no file behind.
    const bool abstract = !address.empty() && address[0] == '@';
    if (address.empty() || address.size() >= sizeof(addr.sun_path)) {
        return MakeError(ErrorKind::Unavailable, "zygote_gone", "bad shared zygote address '" + address + "'");
    }
    std::memcpy(addr.sun_path, address.data(), address.size());
    if (abstract) addr.sun_path[0] = '\0';
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size() + (abstract ? 0 : 1));
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd.valid() || ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
        return MakeError(ErrorKind::Unavailable, "zygote_gone",
                         "cannot reach the shared sandbox zygotes at " + address + ": " + std::strerror(errno));
    }
    return Zygote(std::move(fd), -1, address);
}

Status Zygote::Reconnect() {
    if (!shared()) return MakeError(ErrorKind::Internal, "not_shared", "only a shared zygote's connection is replaced");
    m_control.Reset();  // first: a failed connect below must not leave the broken one in place
    SIGIL_TRY(next, Connect(m_address));
    m_control = std::move(next->m_control);
    return common::Success();
}

Status Zygote::EnsureConnected() {
    if (!shared()) return common::Success();
    if (m_control.valid()) {
        // Exit reports of earlier runs may be queued (POLLIN); only a hang-up means a dead zygote.
        pollfd p{m_control.get(), 0, 0};
        if (::poll(&p, 1, 0) == 0 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)) == 0) return common::Success();
    }
    return Reconnect();
}

void Zygote::RunEnded() {
    if (!shared() || ++m_runs % ZYGOTE_REBALANCE_RUNS != 0) return;
    (void)Reconnect();  // a failure leaves no connection: the next run's EnsureConnected tries again
}

Zygote::~Zygote() {
    if (!m_control.valid()) return;
    m_control.Reset();
    if (m_pid > 0) ::waitpid(m_pid, nullptr, 0);
}

Result<pid_t> Zygote::Spawn(int channel_fd) {
    SIGIL_TRY_STATUS(RequestSpawn(channel_fd));
    return AwaitSpawned();
}

Status Zygote::RequestSpawn(int channel_fd) {
    if (!SendZygoteControl(m_control.get(), ZygoteControl{ZygoteControlType::Spawn, 0, 0}, channel_fd)) return Gone();
    return common::Success();
}

Result<pid_t> Zygote::AwaitSpawned() {
    const std::int64_t until = NowMs() + SHARED_SPAWN_TIMEOUT_MS;
    for (;;) {
        // A shared zygote may be gone with our request still queued for the next one the
        // supervisor starts: bounded, so a run never hangs on it. Our own zygote answers or dies.
        if (shared()) {
            const std::int64_t left = until - NowMs();
            pollfd p{m_control.get(), POLLIN, 0};
            const int r = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
            if (r < 0 && errno == EINTR) continue;
            if (r == 0) {
                m_control.Reset();  // its SPAWNED, should it come, must not answer a later request
                return MakeError(ErrorKind::Timeout, "zygote_timeout", "no shared sandbox zygote answered in time");
            }
        }
        auto msg = ReceiveZygoteControl(m_control.get());
        if (!msg.ok() || !msg->has_value()) return Gone();
        const ZygoteControl& m = (*msg)->message;
        if (m.type == ZygoteControlType::Exited) {
            // The exit report of an earlier run, which answered without waiting for it: its child's
            // CPU time is counted now.
            common::CountRunCpu(static_cast<std::int64_t>(m.cpu_us));
            continue;
        }
        if (m.type != ZygoteControlType::Spawned) continue;
        if (m.pid <= 0) return MakeError(ErrorKind::Internal, "spawn_failed", "the zygote could not fork");
        return static_cast<pid_t>(m.pid);
    }
}

Status Zygote::Kill(pid_t child) {
    if (!SendZygoteControl(m_control.get(), ZygoteControl{ZygoteControlType::Kill, child, 0})) return Gone();
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
        auto msg = ReceiveZygoteControl(m_control.get());
        if (!msg.ok() || !msg->has_value()) return Gone();
        const ZygoteControl& m = (*msg)->message;
        if (m.type == ZygoteControlType::Exited && m.pid == child) return m.status;
    }
}

// RunAction -------------------------------------------------------------------------------------

namespace {

// One run's worker-side state machine: bytes to write, messages read, limits counted.
class RunSession {
public:
    RunSession(Zygote& zygote, const RunRequest& request, RunLimits limits, OpHandler& handler, int channel, pid_t pid)
        : m_zygote(zygote), m_request(request), m_limits(std::move(limits)), m_handler(handler), m_channel(channel),
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
    // `what`, and when admission shortened the time limit, by how much and why.
    std::string TimeLimitMessage(const std::string& what) const {
        if (m_limits.time_limited_by.empty()) return what;
        return what + " of " + std::to_string(m_limits.time_ms / 1000) + " s (" + m_limits.time_limited_by + ")";
    }

    Zygote& m_zygote;
    const RunRequest& m_request;
    const RunLimits m_limits;  // the request's, as admission left them
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
    if (m_done_seen) {  // the result is final: nothing may follow it, an op least of all
        Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent a message after its result");
        return;
    }
    if (auto* op = std::get_if<SandboxOp>(&message)) {
        if (++m_outcome.ops > m_limits.max_ops) {
            Stop(RunEnd::OpLimit, "op_limit", "the action made too many requests");
            return;
        }
        auto result = m_handler.OnOp(op->name, op->args_json);
        // The run's own deadline left the op no time (a chain call it starved): its time limit.
        if (!result.ok() && result.error().code == "time_limit") {
            Stop(RunEnd::TimeLimit, "time_limit", TimeLimitMessage(result.error().message));
            return;
        }
        if (!result.ok() && result.error().code.size() > 6 &&
            result.error().code.compare(result.error().code.size() - 6, 6, "_limit") == 0) {
            Stop(RunEnd::OpLimit, result.error().code, result.error().message);
            return;
        }
        // A dependency that failed (keyd, the chain, a timeout) is the service's failure, not the
        // script's: the run ends with that error instead of handing the script an exception.
        if (!result.ok() && m_handler.OpFailedOnOurSide()) {
            Stop(RunEnd::Stopped, result.error().code, result.error().message);
            return;
        }
        SandboxOpResult reply{result.ok(), result.ok() ? std::move(result).value() : result.error().message};
        auto frame = EncodeSandboxMessage(reply);
        if (!frame.ok()) frame = EncodeSandboxMessage(SandboxOpResult{false, "op result too large"});
        m_out.insert(m_out.end(), frame->begin(), frame->end());
    } else if (auto* log = std::get_if<SandboxLog>(&message)) {
        // Counted as it will be answered: valid UTF-8, and with the newline the line ends with.
        const std::string text = common::ReplaceInvalidUtf8(log->text);
        m_log_bytes += text.size() + 1;
        if (m_log_bytes > m_limits.max_log_bytes) {
            Stop(RunEnd::LogLimit, "log_limit", "the action's logs exceed the limit");
            return;
        }
        auto st = m_handler.OnLog(text);
        if (!st.ok()) Stop(RunEnd::Stopped, st.error().code, st.error().message);
    } else if (auto* lowered = std::get_if<SandboxLowered>(&message)) {
        if (m_outcome.lowered_code || !m_request.lower || m_outcome.ops > 0 || m_log_bytes > 0) {
            Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent LOWERED out of turn");
            return;
        }
        m_outcome.lowered_code = std::move(lowered->code);
    } else if (auto* module = std::get_if<SandboxModuleLowered>(&message)) {
        // Only for a module sent as source, once, before any of the run's code ran.
        bool expected = false;
        for (const auto& sent : m_request.modules) expected = expected || (sent.cid == module->cid && sent.lower);
        for (const auto& got : m_outcome.lowered_modules) expected = expected && got.first != module->cid;
        if (!expected || m_outcome.ops > 0 || m_log_bytes > 0) {
            Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent MODULE_LOWERED out of turn");
            return;
        }
        m_outcome.lowered_modules.emplace_back(std::move(module->cid), std::move(module->code));
    } else if (auto* done = std::get_if<SandboxDone>(&message)) {
        if (m_done_seen) {
            Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent DONE twice");
            return;
        }
        m_done_seen = true;
        if (done->ok && done->response_json.size() > m_limits.max_response_bytes) {
            Stop(RunEnd::ResponseLimit, "response_limit", "the action's response exceeds the limit");
            return;
        }
        // The child is not trusted to have serialized its result: the worker copies it verbatim.
        if (done->ok && !done->response_json.empty() && !IsJsonValue(done->response_json)) {
            Stop(RunEnd::Crashed, "protocol_error", "the sandbox sent a result that is not JSON");
            return;
        }
        if (!done->ok) {
            done->error.code = CapText(done->error.code, SCRIPT_ERROR_NAME_MAX_BYTES);
            done->error.message = CapText(done->error.message, SCRIPT_ERROR_MESSAGE_MAX_BYTES);
            done->error.stack = CapText(done->error.stack, SCRIPT_ERROR_STACK_MAX_BYTES);
        }
        m_outcome.end = done->ok ? RunEnd::Completed : RunEnd::ScriptError;
        // A string holding JSON is answered parsed (string_response.h), here so that everything
        // after (the answer, its size) sees the value the client gets.
        m_outcome.response_json = ParsedStringResponse(std::move(done->response_json));
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
        std::vector<std::pair<std::string, std::string>> modules;
        ~KeepLowered() {
            outcome.lowered_code = std::move(code);
            outcome.lowered_modules = std::move(modules);
        }
    } keep{m_outcome, std::move(m_outcome.lowered_code), std::move(m_outcome.lowered_modules)};
    const bool sig = WIFSIGNALED(status);
    const int signo = sig ? WTERMSIG(status) : 0;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (m_deadline_killed || signo == SIGXCPU || signo == SIGKILL || code == SANDBOX_EXIT_TIME_LIMIT) {
        m_outcome = RunOutcome{RunEnd::TimeLimit, "", {"time_limit", TimeLimitMessage("the action ran past its time limit"), ""},
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
    const std::int64_t deadline = NowMs() + static_cast<std::int64_t>(m_limits.time_ms) + KILL_GRACE_MS;
    bool channel_open = true;
    std::optional<int> status;
    std::int64_t give_up = 0;
    while (channel_open || !status) {
        // The child sent DONE and closed the channel: its answer is whole, and how its exit goes
        // changes nothing (the zygote reaps it; a later run drops the report). Not waiting for
        // the exit keeps the child's teardown off the request's path.
        if (!channel_open && m_done_seen && !m_stopped && !m_deadline_killed && !status) return std::move(m_outcome);
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
            auto msg = ReceiveZygoteControl(m_zygote.control_fd());
            if (!msg.ok() || !msg->has_value()) return Gone();
            const ZygoteControl& m = (*msg)->message;
            if (m.type == ZygoteControlType::Exited && m.pid == m_outcome.pid) {
                status = m.status;
                m_outcome.cpu_us = m.cpu_us;
                common::CountRunCpu(static_cast<std::int64_t>(m.cpu_us));
            }
        }
    }
    Classify(*status);
    return std::move(m_outcome);
}

// A fresh op channel (the worker's end in `ours`) and a SPAWN for it. The zygote's end closes
// here once sent: the zygote has its copy, and once it forks, the child holds the only other end.
Status RequestChild(Zygote& zygote, UniqueFd& ours) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        return MakeError(ErrorKind::Internal, "socketpair_failed", std::strerror(errno));
    }
    ours = UniqueFd(sv[0]);
    const UniqueFd theirs(sv[1]);
    return zygote.RequestSpawn(theirs.get());
}


common::RunEnding EndingOf(RunEnd end) {
    switch (end) {
        case RunEnd::Completed: return common::RunEnding::Ok;
        case RunEnd::ScriptError: return common::RunEnding::ScriptError;
        case RunEnd::TimeLimit: return common::RunEnding::TimeLimit;
        case RunEnd::MemoryLimit: return common::RunEnding::MemoryLimit;
        case RunEnd::ResponseLimit: return common::RunEnding::ResponseLimit;
        case RunEnd::LogLimit: return common::RunEnding::LogLimit;
        case RunEnd::OpLimit: return common::RunEnding::OpLimit;
        case RunEnd::Stopped: return common::RunEnding::Stopped;
        case RunEnd::Crashed: break;
    }
    return common::RunEnding::Crashed;
}

// RunAction without its metrics; `refused` is set when admission said no.
Result<RunOutcome> RunActionUncounted(Zygote& zygote, const RunRequest& request, OpHandler& handler,
                                      const RunAdmission& admission, bool& refused) {
    // Refused before anything starts when too large; the frame itself is encoded after admission
    // (which may shorten the time limit it carries).
    if (request.code.size() + request.params_json.size() + request.cid.size() + 128 > SANDBOX_MAX_PAYLOAD) {
        return MakeError(ErrorKind::TooLarge, "frame_too_large", "the code and params exceed the sandbox's frame cap");
    }
    RunLimits limits = request.limits;
    SIGIL_TRY_STATUS(zygote.EnsureConnected());
    const std::int64_t spawn_started_us = common::MetricsNowUs();
    UniqueFd ours;
    Status requested = RequestChild(zygote, ours);
    // The shared zygote died since EnsureConnected looked: nothing was asked yet, so ask anew.
    bool may_retry = zygote.shared();
    if (!requested.ok() && may_retry && requested.error().code == "zygote_gone") {
        may_retry = false;
        SIGIL_TRY_STATUS(zygote.Reconnect());
        requested = RequestChild(zygote, ours);
    }
    SIGIL_TRY_STATUS(requested);
    // Admission (the credit hold) runs while the zygote forks, so it costs a run no time of its
    // own; a refused run's child never gets its code.
    // Nothing may leave between the request and its answer (a later AwaitSpawned would take this
    // child's pid for its own), not even an exception.
    Status admitted = common::Success();
    if (admission.admit) {
        try {
            admitted = admission.admit(limits);
        } catch (const std::exception& e) {
            admitted = MakeError(ErrorKind::Internal, "admission_failed", e.what());
        }
    }
    auto pid = zygote.AwaitSpawned();
    if (!pid.ok() && may_retry && admitted.ok() && pid.error().code == "zygote_gone") {
        // The shared zygote died with the request: no child got anything, so the run may ask once
        // more (admission stands). A fresh op channel: an orphan the dead zygote may have forked
        // keeps the old one, which then only ever reads EOF.
        if (zygote.Reconnect().ok() && RequestChild(zygote, ours).ok()) pid = zygote.AwaitSpawned();
    }
    if (!admitted.ok()) {
        // Never sent its code; its exit report is dropped by a later WaitExit.
        if (pid.ok()) (void)zygote.Kill(*pid);
        refused = true;
        return admitted.error();
    }
    if (!pid.ok()) return pid.error();
    // With admission beside it (it overlaps the fork on purpose), so this is what a run waits for its child.
    common::ObserveZygoteSpawn(common::MetricsNowUs() - spawn_started_us);
    auto frame = EncodeSandboxMessage(
        SandboxRun{request.code, request.params_json, limits.time_ms, limits.memory_bytes, request.lower, request.cid,
                   request.caller_json, request.modules});
    if (!frame.ok()) {
        (void)zygote.Kill(*pid);
        return frame.error();
    }
    ::fcntl(ours.get(), F_SETFL, ::fcntl(ours.get(), F_GETFL) | O_NONBLOCK);
    handler.OnStart(limits);
    if (admission.started) admission.started();
    RunSession session(zygote, request, std::move(limits), handler, ours.get(), *pid);
    auto outcome = session.Drive(std::move(frame).value());
    if (outcome.ok()) zygote.RunEnded();
    return outcome;
}

}  // namespace

Result<RunOutcome> RunAction(Zygote& zygote, const RunRequest& request, OpHandler& handler,
                             const RunAdmission& admission) {
    const common::ActivityScope activity(common::Activity::Run);
    const std::int64_t started_us = common::MetricsNowUs();
    bool refused = false;
    auto outcome = RunActionUncounted(zygote, request, handler, admission, refused);
    const auto ending = outcome.ok() ? EndingOf(outcome->end)
                        : refused    ? common::RunEnding::Refused
                                     : common::RunEnding::Failed;
    common::CountRun(ending, common::MetricsNowUs() - started_us);
    return outcome;
}

}  // namespace sigil::workers
