#include "workers/actions/lowerer_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

#include "common/handles.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/utf8.h"

namespace sigil::workers {

namespace {

std::int64_t NowMs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool WaitFor(int fd, short events, std::int64_t deadline_ms) {
    for (;;) {
        const std::int64_t left = deadline_ms - NowMs();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(left));
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

bool SendAll(int fd, const char* data, std::size_t size, std::int64_t deadline_ms) {
    while (size > 0) {
        const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
        if (n > 0) {
            data += n;
            size -= static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!WaitFor(fd, POLLOUT, deadline_ms)) return false;
        } else {
            return false;
        }
    }
    return true;
}

bool ReceiveAll(int fd, char* data, std::size_t size, std::int64_t deadline_ms) {
    while (size > 0) {
        const ssize_t n = ::recv(fd, data, size, 0);
        if (n > 0) {
            data += n;
            size -= static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!WaitFor(fd, POLLIN, deadline_ms)) return false;
        } else {
            return false;  // end of stream or an error
        }
    }
    return true;
}

// What went wrong with the daemon, or "" when it answered; `connected` tells whether it got as
// far as a connection (a daemon that is down fails before). An answer other than lowered code sets
// `syntax_error` (the source does not lower) or `gave_up` (the daemon did not lower it: past its
// deadline, or its lowering thread died), with the daemon's reason in `out`.
std::string Exchange(const std::string& socket_path, std::string_view source, int timeout_ms, std::string& out,
                     bool& syntax_error, bool& gave_up, bool& connected) {
    const std::int64_t deadline = NowMs() + timeout_ms;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path) return "socket path too long";
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return std::string("socket: ") + std::strerror(errno);
    // A unix connect completes at once or fails (EAGAIN: the daemon's backlog is full).
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        return "connect " + socket_path + ": " + std::strerror(errno);
    }
    connected = true;
    const std::uint32_t size = static_cast<std::uint32_t>(source.size());
    const unsigned char header[4] = {static_cast<unsigned char>(size >> 24), static_cast<unsigned char>(size >> 16),
                                     static_cast<unsigned char>(size >> 8), static_cast<unsigned char>(size)};
    if (!SendAll(fd.get(), reinterpret_cast<const char*>(header), 4, deadline) ||
        !SendAll(fd.get(), source.data(), source.size(), deadline)) {
        return "no answer within " + std::to_string(timeout_ms) + " ms (sending)";
    }
    unsigned char answer_header[5];
    if (!ReceiveAll(fd.get(), reinterpret_cast<char*>(answer_header), 5, deadline)) {
        return "no answer within " + std::to_string(timeout_ms) + " ms";
    }
    const std::uint32_t length = (std::uint32_t{answer_header[0]} << 24) | (std::uint32_t{answer_header[1]} << 16) |
                                 (std::uint32_t{answer_header[2]} << 8) | std::uint32_t{answer_header[3]};
    // Lowering adds helpers and temporaries but never grows code by more than a few times.
    const std::size_t cap = 8 * source.size() + (1u << 20);
    if (length == 0 || length - 1 > cap) return "answer of " + std::to_string(length) + " bytes";
    out.resize(length - 1);
    if (!ReceiveAll(fd.get(), out.data(), out.size(), deadline)) return "answer cut short";
    const char kind = static_cast<char>(answer_header[4]);
    if (kind == 'E') {
        syntax_error = true;
        return "";
    }
    if (kind == 'T') {
        if (out.size() > 200 || !common::IsUtf8(out)) return "malformed answer";
        gave_up = true;
        return "";
    }
    if (kind != 'C' || !common::IsUtf8(out)) return "malformed answer";
    return "";
}

// Whether the last exchange failed (so a daemon that is down logs once, not once per run).
std::atomic<bool> g_daemon_failing{false};

// A daemon that took a connection and then did not answer in time (stuck on a huge source, or
// starved) is not asked again for LOWERER_COOLDOWN_MS, so a run does not wait for it each time;
// one that refuses connections is asked each time (that fails at once, and a restarted daemon
// is used right away). Per socket path.
constexpr std::int64_t LOWERER_COOLDOWN_MS = 5000;
std::mutex g_cooldown_mutex;
std::map<std::string, std::int64_t> g_cooldown_until;

bool CoolingDown(const std::string& socket_path) {
    std::lock_guard<std::mutex> lock(g_cooldown_mutex);
    auto it = g_cooldown_until.find(socket_path);
    return it != g_cooldown_until.end() && NowMs() < it->second;
}

}  // namespace

int LowererWaitMs(std::size_t source_bytes) {
    return static_cast<int>(1000 + 25 * (source_bytes / 1024));
}

std::optional<std::string> LowerWithDaemon(const std::string& socket_path, std::string_view source, int max_wait_ms) {
    if (socket_path.empty() || source.size() > MAX_LOWERER_SOURCE_BYTES || !common::IsUtf8(source)) return std::nullopt;
    if (CoolingDown(socket_path)) return std::nullopt;
    std::string out;
    bool syntax_error = false, gave_up = false, connected = false;
    const int timeout_ms = std::min(max_wait_ms, LowererWaitMs(source.size()));
    // The pool's lowerings in flight (its queue at the daemon) and their time; a failure is the
    // daemon's, not the source's (a syntax error is an answer).
    common::AddLowererQueued(1);
    common::DependencyTimer timer(common::Dependency::Lowerer);
    const std::string failure = Exchange(socket_path, source, timeout_ms, out, syntax_error, gave_up, connected);
    common::AddLowererQueued(-1);
    if (failure.empty()) timer.MarkOk();
    if (!failure.empty()) {
        if (connected) {
            std::lock_guard<std::mutex> lock(g_cooldown_mutex);
            g_cooldown_until[socket_path] = NowMs() + LOWERER_COOLDOWN_MS;
        }
        if (!g_daemon_failing.exchange(true)) common::LogWarn("sigil-lowerer: " + failure + "; the sandbox child lowers meanwhile");
        return std::nullopt;
    }
    if (g_daemon_failing.exchange(false)) common::LogInfo("sigil-lowerer: answering again");
    // The daemon is well and said so: no pause for it, only this source goes to the child.
    if (gave_up) {
        common::LogWarn("sigil-lowerer: did not lower " + std::to_string(source.size()) + " bytes (" + out +
                        "); the sandbox child lowers them");
        return std::nullopt;
    }
    if (syntax_error) return std::nullopt;
    return out;
}

}  // namespace sigil::workers
