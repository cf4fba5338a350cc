#include "workers/fcgi/server.h"

#include <fcgiapp.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/handles.h"
#include "common/log.h"
#include "common/uuid.h"
#include "workers/fcgi/connections.h"
#include "workers/http/http.h"

namespace sigil::workers {
namespace {

using common::LogError;
using common::LogInfo;

// Requests taking at least this long are logged by the worker at info level.
constexpr std::int64_t SLOW_REQUEST_MS = 1000;
// An idle worker wakes this often to look at its drain flag (SIGQUIT wakes it at once).
constexpr int IDLE_WAKE_MS = 500;
// Most input read and discarded after a response so a kept connection stays usable.
constexpr std::size_t MAX_DRAIN_BYTES = std::size_t{64} << 20;

// One FastCGI request object, reused across connections; FCGX_Free releases its buffers.
class FcgiRequest {
public:
    explicit FcgiRequest(int listen_fd) { FCGX_InitRequest(&m_req, listen_fd, 0); }
    ~FcgiRequest() { FCGX_Free(&m_req, 1); }
    FcgiRequest(const FcgiRequest&) = delete;
    FcgiRequest& operator=(const FcgiRequest&) = delete;
    FCGX_Request* get() { return &m_req; }

private:
    FCGX_Request m_req{};
};

// Views into libfcgi's parameter block, which lives until FCGX_Finish_r.
CgiParams Params(FCGX_ParamArray envp) {
    CgiParams out;
    out.reserve(32);
    for (char** p = envp; p != nullptr && *p != nullptr; ++p) {
        const std::string_view kv(*p);
        const auto eq = kv.find('=');
        if (eq == std::string_view::npos) continue;
        out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return out;
}

std::optional<std::string_view> FindParam(const CgiParams& params,
                                          std::string_view name) {
    for (const auto& [n, v] : params) {
        if (n == name) return v;
    }
    return std::nullopt;
}

// SIGQUIT arrives through a signalfd: no handler, so no async-signal-safety concerns and no
// window between checking a flag and blocking.
common::UniqueFd QuitSignalFd() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGQUIT);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    return common::UniqueFd(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

// Reads and discards the rest of a request's input. False when it does not end within
// MAX_DRAIN_BYTES or the stream fails (the connection is then closed, not kept).
bool DrainInput(FCGX_Stream* in) {
    char buf[16384];
    std::size_t total = 0;
    for (;;) {
        const int got = FCGX_GetStr(buf, sizeof buf, in);
        if (got <= 0) return FCGX_GetError(in) == 0;
        total += static_cast<std::size_t>(got);
        if (total > MAX_DRAIN_BYTES) return false;
    }
}

bool QuitRequested(int sfd) {
    signalfd_siginfo si{};
    bool quit = false;
    while (read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        if (si.ssi_signo == SIGQUIT) quit = true;
    }
    return quit;
}

class Worker {
public:
    Worker(const Router& router, const FcgiServerOptions& opt) : m_router(router), m_opt(opt) {}

    int Run();

private:
    // Serves the request waiting on `fd`.
    void ServeConnection(FCGX_Request* req, Connections& conns, int fd);
    // Returns true when the request's input was consumed to its end.
    bool Serve(FCGX_Request* req);
    void MarkIdle() {
        if (m_opt.scoreboard != nullptr) m_opt.scoreboard->MarkIdle(m_opt.slot);
    }

    const Router& m_router;
    const FcgiServerOptions& m_opt;
    std::uint64_t m_served = 0;
};

int Worker::Run() {
    if (FCGX_Init() != 0) {
        LogError("FCGX_Init failed");
        return 1;
    }
    // FCGX_Init catches SIGTERM and SIGUSR1 to set its own shutdown flag, which would turn the
    // supervisor's QUIT -> TERM -> KILL escalation (and the parent-death SIGTERM) into no-ops.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGUSR1, SIG_DFL);
    int accepting = 0;
    socklen_t len = sizeof accepting;
    if (getsockopt(m_opt.listen_fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || !accepting) {
        LogError("descriptor " + std::to_string(m_opt.listen_fd) +
                 " is not a listening socket; sigil-worker is started by sigil-supervisor");
        return 1;
    }
    // Every worker accepts without blocking (after an epoll wake-up); accepted connections are
    // blocking, as libfcgi reads them.
    const int flags = fcntl(m_opt.listen_fd, F_GETFL);
    fcntl(m_opt.listen_fd, F_SETFL, flags | O_NONBLOCK);
    ::signal(SIGPIPE, SIG_IGN);  // nginx may close first; a write must fail, not kill us
    ::signal(SIGHUP, SIG_IGN);   // reloads are the supervisor's business
    // SIGQUIT (graceful stop) stays blocked, so it never interrupts a request; the loop reads it
    // from a signalfd between requests.
    common::UniqueFd sfd = QuitSignalFd();
    if (!sfd.valid()) {
        LogError(std::string("signalfd: ") + std::strerror(errno));
        return 1;
    }
    Connections conns(m_opt.listen_fd, m_opt.handoff_send_fd, m_opt.handoff_recv_fd, m_opt.scoreboard);
    if (!conns.Open(sfd.get())) {
        LogError(std::string("epoll: ") + std::strerror(errno));
        return 1;
    }

    FcgiRequest request(m_opt.listen_fd);
    MarkIdle();
    // Between requests a busy worker looks at its scoreboard slot's drain flag (the supervisor
    // sets it before SIGQUIT); an idle one is woken by the signalfd.
    const auto drain_requested = [&]() {
        return m_opt.scoreboard != nullptr &&
               m_opt.scoreboard->Slot(m_opt.slot).drain.load(std::memory_order_relaxed) != 0;
    };
    bool quit = false;
    epoll_event events[32];
    while (m_served < m_opt.max_requests && !quit && !drain_requested()) {
        const int n = epoll_wait(conns.epoll_fd(), events, 32, IDLE_WAKE_MS);
        if (n < 0) {
            if (errno == EINTR) continue;
            LogError(std::string("epoll_wait: ") + std::strerror(errno));
            return 1;
        }
        int ready = -1;
        bool listen_ready = false, queue_ready = false;
        for (int i = 0; i < n; ++i) {
            const int fd = events[i].data.fd;
            if (fd == sfd.get()) {
                quit = QuitRequested(sfd.get()) || quit;
            } else if (conns.IsListen(fd)) {
                listen_ready = true;
            } else if (conns.IsHandoff(fd)) {
                queue_ready = true;
            } else if ((events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
                conns.Drop(fd);
            } else if (ready < 0) {
                ready = fd;
            }
        }
        if (quit) continue;
        // A request waiting in the pool's queue was handed off by a busy worker: it is older than
        // anything on this worker's own connections, so it goes first.
        if (queue_ready) {
            const int fd = conns.ReceiveOne();
            if (fd >= 0 && conns.HasRequest(fd)) {
                // The request this one displaces should not wait behind it either.
                if (ready >= 0) conns.HandOff(ready);
                ready = fd;
            }
        }
        // A new connection carries a request; while this worker serves another, an idle one
        // should take it (one more EPOLLEXCLUSIVE wake-up, through the queue).
        if (listen_ready) {
            const int fd = conns.AcceptOne();
            if (fd >= 0 && ready >= 0) conns.HandOff(fd);
        }
        if (ready >= 0) ServeConnection(request.get(), conns, ready);
    }
    // Whatever connections this worker still holds go to the workers that stay (or, on a full
    // stop, close with the pool).
    conns.HandOffAll();
    if (m_opt.scoreboard != nullptr) m_opt.scoreboard->MarkDraining(m_opt.slot);
    LogInfo(m_served >= m_opt.max_requests ? "served max_requests; exiting for recycling" : "SIGQUIT; exiting");
    return 0;
}

void Worker::ServeConnection(FCGX_Request* req, Connections& conns, int fd) {
    if (!conns.Take(fd)) return;
    conns.SetBusy(true);
    // libfcgi reads the next request from ipcFd when it is set; keepConnection stops the
    // FCGX_Finish_r that opens FCGX_Accept_r from closing it first.
    req->ipcFd = fd;
    req->keepConnection = 1;
    const int rc = FCGX_Accept_r(req);
    if (rc < 0) {
        conns.SetBusy(false);
        // The connection broke (libfcgi closed it) and its fallback accept found nothing.
        if (rc != -EAGAIN && rc != -EWOULDBLOCK && rc != -EINTR && rc != -ECONNABORTED) {
            LogError("FCGX_Accept_r failed: " + std::to_string(rc));
        }
        return;
    }
    if (m_opt.scoreboard != nullptr) m_opt.scoreboard->MarkBusy(m_opt.slot, common::MonotonicMs());
    bool consumed = Serve(req);
    if (req->keepConnection != 0) {
        // The next request on this connection must start at a record boundary: read what is left
        // of this one's input (nginx already bounds it to client_max_body_size).
        consumed = DrainInput(req->in);
    } else if (consumed) {
        // Closing after this request, with nothing unread: libfcgi's lingering close (shutdown,
        // then poll and read until nginx closes) buys nothing, so detach to close at once.
        FCGX_Detach(req);
    }
    if (!consumed) req->keepConnection = 0;
    FCGX_Finish_r(req);
    if (req->ipcFd >= 0) {
        conns.Return(req->ipcFd);
        req->ipcFd = -1;
    }
    conns.SetBusy(false);
    ++m_served;
    if (m_opt.scoreboard != nullptr) m_opt.scoreboard->CountRequest(m_opt.slot);
    MarkIdle();
}

bool Worker::Serve(FCGX_Request* req) {
    const std::int64_t start = common::MonotonicMs();
    const auto params = Params(req->envp);
    auto body = ReadBoundedBody(
        [req](char* buf, std::size_t n) {
            const int got = FCGX_GetStr(buf, static_cast<int>(n), req->in);
            return got > 0 ? static_cast<std::size_t>(got) : 0;
        },
        FindParam(params, "CONTENT_LENGTH"), m_opt.max_body_bytes);

    HttpRequest http = RequestFromParams(params, body.ok() ? std::move(body).value() : std::string());
    http.request_id = common::NewUuidV4();
    HttpResponse response;
    if (body.ok()) {
        response = m_router.Dispatch(http);
    } else {
        response = ErrorResponse(body.error());
        FinalizeResponse(response, http);
    }
    // Preformatted and written with FCGX_PutStr: FCGX_FPrintF stops at %zu (DESIGN trap).
    const std::string out = SerializeCgiResponse(response);
    FCGX_PutStr(out.data(), static_cast<int>(out.size()), req->out);
    // nginx's access log has every request (with this X-Request-Id, see nginx/); the worker
    // adds a line only for server errors and slow requests, unless SIGIL_LOG_LEVEL=debug.
    const std::int64_t took = common::MonotonicMs() - start;
    const common::LogLevel level = response.status >= 500 ? common::LogLevel::Warn
                                   : took >= SLOW_REQUEST_MS ? common::LogLevel::Info
                                                             : common::LogLevel::Debug;
    if (common::LogEnabled(level)) {
        common::Log(level, http.method + " " + http.path + " " + std::to_string(response.status) + " " +
                               std::to_string(took) + "ms",
                    http.request_id);
    }
    return body.ok() && FCGX_GetError(req->in) == 0;
}

}  // namespace

common::Result<std::string> ReadBoundedBody(const std::function<std::size_t(char*, std::size_t)>& read,
                                            std::optional<std::string_view> content_length, std::size_t max_bytes) {
    const auto too_large = [max_bytes] {
        return common::MakeError(common::ErrorKind::TooLarge, "body_too_large",
                                 "request body larger than " + std::to_string(max_bytes) + " bytes");
    };
    if (content_length && !content_length->empty()) {
        std::size_t declared = 0;
        if (content_length->size() > 19) return too_large();
        for (char c : *content_length) {
            if (c < '0' || c > '9') {
                return common::MakeError(common::ErrorKind::InvalidInput, "bad_content_length", "invalid Content-Length");
            }
            declared = declared * 10 + static_cast<std::size_t>(c - '0');
        }
        if (declared > max_bytes) return too_large();
    }
    std::string body;
    char buf[16384];
    for (;;) {
        const std::size_t want = std::min(sizeof buf, max_bytes + 1 - body.size());
        const std::size_t got = read(buf, want);
        if (got == 0) break;
        body.append(buf, got);
        if (body.size() > max_bytes) return too_large();
    }
    return body;
}

int RunFcgiServer(const Router& router, const FcgiServerOptions& options) {
    Worker worker(router, options);
    return worker.Run();
}

}  // namespace sigil::workers
