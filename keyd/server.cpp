#include "keyd/server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "keyd/protocol.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/secret.h"

namespace sigil::keyd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t READ_CHUNK = 4096;

std::atomic<int> g_stop_fd{-1};

void OnStopSignal(int) {
    const int saved = errno;
    const int fd = g_stop_fd.load();
    const char byte = 1;
    if (fd >= 0) [[maybe_unused]] auto n = ::write(fd, &byte, 1);
    errno = saved;
}

common::Error SocketFailed(std::string_view call) {
    return common::MakeError(common::ErrorKind::Internal, "socket_failed",
                             std::string(call) + ": " + std::strerror(errno));
}

std::string ParentDir(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

bool FillAddress(const std::string& path, sockaddr_un* addr) {
    std::memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr->sun_path) return false;
    std::memcpy(addr->sun_path, path.c_str(), path.size());
    return true;
}

// True if something accepts connections on `path` (another keyd is alive there).
bool SomeoneListens(const sockaddr_un& addr) {
    common::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!probe.valid()) return false;
    return ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

}  // namespace

struct Server::Connection {
    common::UniqueFd fd;
    uid_t uid = 0;
    pid_t pid = 0;
    common::FrameDecoder in;
    common::SecretBuffer out;
    std::size_t out_sent = 0;
    Clock::time_point last_progress;                // last byte read or written
    std::optional<Clock::time_point> frame_started;  // a partial frame has been pending since
    bool closed = false;
};

Server::Server(ServerOptions options, KeyService& service)
    : m_options(std::move(options)), m_service(service), m_stats(m_options.key_source) {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0) {
        m_stop_read.Reset(fds[0]);
        m_stop_write.Reset(fds[1]);
    }
}

Server::~Server() {
    if (g_stop_fd.load() == m_stop_write.get()) g_stop_fd = -1;
    m_connections.clear();
    if (m_bound) ::unlink(m_options.socket_path.c_str());
}

void Server::RequestStop() const {
    const char byte = 1;
    if (m_stop_write.valid()) [[maybe_unused]] auto n = ::write(m_stop_write.get(), &byte, 1);
}

void Server::InstallStopSignals() const {
    g_stop_fd = m_stop_write.get();
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGHUP, &ignore, nullptr);
    ::sigaction(SIGPIPE, &ignore, nullptr);
}

common::Status Server::Listen() {
    if (!m_stop_read.valid()) return SocketFailed("pipe2");
    sockaddr_un addr{};
    if (!FillAddress(m_options.socket_path, &addr)) {
        return common::MakeError(common::ErrorKind::Internal, "socket_path_invalid",
                                 "socket path must be 1..107 bytes: " + m_options.socket_path);
    }
    // The directory is what keeps other users from replacing our socket with theirs.
    const std::string dir = ParentDir(m_options.socket_path);
    const mode_t dir_mode = m_options.socket_group ? 0750 : 0700;
    if (::mkdir(dir.c_str(), dir_mode) == 0) {
        if (::chmod(dir.c_str(), dir_mode) != 0) return SocketFailed("chmod " + dir);
        if (m_options.socket_group && ::chown(dir.c_str(), static_cast<uid_t>(-1), *m_options.socket_group) != 0) {
            return SocketFailed("chown " + dir);
        }
    } else if (errno != EEXIST) {
        return SocketFailed("mkdir " + dir);
    }
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return SocketFailed("lstat " + dir);
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
        return common::MakeError(common::ErrorKind::Internal, "socket_dir_insecure",
                                 dir + " must be a directory owned by keyd's user that group and others cannot write");
    }
    if (::lstat(m_options.socket_path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            return common::MakeError(common::ErrorKind::Internal, "socket_path_invalid",
                                     m_options.socket_path + " exists and is not a socket");
        }
        if (SomeoneListens(addr)) {
            return common::MakeError(common::ErrorKind::Internal, "socket_in_use",
                                     "another process serves " + m_options.socket_path);
        }
        ::unlink(m_options.socket_path.c_str());  // left behind by a keyd that crashed
    }
    // The socket is bound and listening under a temporary name first and then renamed into place,
    // so whoever sees socket_path (workers reconnecting, systemd, a start script) can connect:
    // between bind() and listen() a connect would be refused.
    const std::string staging = m_options.socket_path + ".new";
    sockaddr_un staging_addr{};
    if (!FillAddress(staging, &staging_addr)) {
        return common::MakeError(common::ErrorKind::Internal, "socket_path_invalid",
                                 "socket path must be 1..103 bytes: " + m_options.socket_path);
    }
    ::unlink(staging.c_str());  // left behind by a keyd that died while starting
    m_listen.Reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!m_listen.valid()) return SocketFailed("socket");
    // bind() creates the node with the umask applied: make it private from the first instant.
    const mode_t old_umask = ::umask(0177);
    const int bound = ::bind(m_listen.get(), reinterpret_cast<const sockaddr*>(&staging_addr), sizeof staging_addr);
    const int bind_errno = errno;
    ::umask(old_umask);
    errno = bind_errno;
    if (bound != 0) return SocketFailed("bind " + staging);
    const auto fail = [&](const std::string& what) {
        const int saved = errno;
        ::unlink(staging.c_str());
        errno = saved;
        return SocketFailed(what);
    };
    if (m_options.socket_group) {
        if (::chown(staging.c_str(), static_cast<uid_t>(-1), *m_options.socket_group) != 0 ||
            ::chmod(staging.c_str(), 0660) != 0) {
            return fail("chown/chmod " + staging);
        }
    }
    if (::listen(m_listen.get(), 128) != 0) return fail("listen");
    if (::rename(staging.c_str(), m_options.socket_path.c_str()) != 0) return fail("rename " + staging);
    m_bound = true;
    common::LogInfo("listening on " + m_options.socket_path);
    return common::Success();
}

void Server::AcceptAll() {
    for (;;) {
        common::UniqueFd fd(::accept4(m_listen.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!fd.valid()) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
                common::LogWarn(std::string("accept: ") + std::strerror(errno));
            }
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return;
        }
        struct ucred cred {};
        socklen_t len = sizeof cred;
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
            common::LogWarn("refused a connection: SO_PEERCRED failed");
            continue;
        }
        const auto& allowed = m_options.allowed_uids;
        if (std::find(allowed.begin(), allowed.end(), cred.uid) == allowed.end()) {
            common::LogWarn("refused a connection from uid " + std::to_string(cred.uid) + " pid " +
                            std::to_string(cred.pid) + ": uid not allowed");
            m_stats.ConnectionRefused();
            continue;  // closed by UniqueFd
        }
        if (m_connections.size() >= m_options.max_connections) {
            common::LogWarn("refused a connection from pid " + std::to_string(cred.pid) + ": " +
                            std::to_string(m_options.max_connections) + " connections open");
            m_stats.ConnectionRefused();
            continue;
        }
        auto c = std::make_unique<Connection>();
        c->fd = std::move(fd);
        c->uid = cred.uid;
        c->pid = cred.pid;
        c->last_progress = Clock::now();
        common::LogDebug("connection from uid " + std::to_string(cred.uid) + " pid " + std::to_string(cred.pid));
        m_connections.push_back(std::move(c));
    }
}

bool Server::ReadSome(Connection& c) {
    std::array<std::uint8_t, READ_CHUNK> chunk;
    const std::size_t want = std::min(chunk.size(), c.in.Space());
    if (want == 0) return true;  // a complete frame waits for its reply to drain
    const ssize_t n = ::recv(c.fd.get(), chunk.data(), want, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
        return false;
    }
    if (n == 0) {
        if (c.in.Pending() > 0) {
            common::LogWarn("pid " + std::to_string(c.pid) + " closed in the middle of a frame (truncated)");
        }
        return false;
    }
    const common::Status fed = c.in.Feed(common::ByteView(chunk.data(), static_cast<std::size_t>(n)));
    common::Wipe(chunk.data(), static_cast<std::size_t>(n));  // may hold a request's secrets in transit
    if (!fed.ok()) {
        common::LogWarn("closing the connection of pid " + std::to_string(c.pid) + ": " + fed.error().message);
        return false;
    }
    c.last_progress = Clock::now();
    if (c.in.Pending() == 0) {
        c.frame_started.reset();
    } else if (!c.frame_started) {
        c.frame_started = c.last_progress;
    }
    return true;
}

bool Server::Flush(Connection& c) {
    while (c.out_sent < c.out.size()) {
        const ssize_t n = ::send(c.fd.get(), c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
            return false;
        }
        c.out_sent += static_cast<std::size_t>(n);
        c.last_progress = Clock::now();
    }
    common::SecretBuffer().swap(c.out);  // frees, and so wipes, the reply
    c.out_sent = 0;
    return true;
}

bool Server::Process(Connection& c) {
    while (c.out.empty()) {
        const auto payload = c.in.Front();
        if (!payload) break;
        c.out = Answer(*payload);
        c.out_sent = 0;
        c.in.Pop();
        if (!Flush(c)) return false;
    }
    if (c.in.Pending() == 0) c.frame_started.reset();
    return true;
}

common::SecretBuffer Server::Answer(common::ByteView payload) {
    const std::uint8_t type = payload.empty() ? 0 : payload[0];
    const std::int64_t started = common::MetricsNowUs();
    common::SecretBuffer reply;
    if (type == static_cast<std::uint8_t>(KeydMessage::Stats)) {
        reply = DecodeEmptyRequest(payload).ok()
                    ? EncodeStatsReply(m_stats.Snapshot(m_connections.size()))
                    : EncodeFailureReply(KeydFailure::MalformedRequest, "STATS has no fields");
    } else {
        reply = m_service.Handle(payload);
    }
    // A frame is length(4) || payload: the reply's type byte says whether it is a FAILURE.
    const bool ok = reply.size() > 4 && reply[4] != static_cast<std::uint8_t>(KeydMessage::Failure);
    m_stats.Record(type, ok, common::MetricsNowUs() - started);
    return reply;
}

bool Server::Expired(const Connection& c, Clock::time_point now) const {
    if (c.frame_started && now - *c.frame_started > m_options.frame_timeout) return true;
    if (!c.out.empty() && now - c.last_progress > m_options.frame_timeout) return true;
    return now - c.last_progress > m_options.idle_timeout;
}

common::Status Server::Run() {
    std::vector<pollfd> fds;
    for (;;) {
        fds.clear();
        fds.push_back({m_stop_read.get(), POLLIN, 0});
        fds.push_back({m_listen.get(), POLLIN, 0});
        for (const auto& c : m_connections) {
            fds.push_back({c->fd.get(), static_cast<short>(c->out.empty() ? POLLIN : POLLOUT), 0});
        }
        // Wake up in time for the nearest deadline: at worst once a second.
        const int rc = ::poll(fds.data(), fds.size(), 1000);
        if (rc < 0) {
            if (errno == EINTR) continue;
            return SocketFailed("poll");
        }
        if (fds[0].revents != 0) {
            common::LogInfo("stopping");
            return common::Success();
        }
        const auto now = Clock::now();
        for (std::size_t i = 0; i < m_connections.size(); ++i) {
            Connection& c = *m_connections[i];
            const short ev = fds[i + 2].revents;
            bool alive = (ev & (POLLERR | POLLNVAL)) == 0;
            if (alive && (ev & (POLLOUT | POLLHUP)) != 0 && !c.out.empty()) alive = Flush(c);
            if (alive && (ev & (POLLIN | POLLHUP)) != 0 && c.out.empty()) alive = ReadSome(c);
            if (alive) alive = Process(c);
            if (alive && Expired(c, now)) {
                common::LogWarn("closing the connection of pid " + std::to_string(c.pid) + ": timed out");
                alive = false;
            }
            c.closed = !alive;
        }
        std::erase_if(m_connections, [](const std::unique_ptr<Connection>& c) { return c->closed; });
        if ((fds[1].revents & POLLIN) != 0) AcceptAll();
    }
}

}  // namespace sigil::keyd
