#include "workers/fcgi_server.h"

#include <fcgiapp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "common/handles.h"
#include "common/log.h"
#include "common/uuid.h"
#include "workers/http.h"

namespace sigil::workers {
namespace {

using common::LogError;
using common::LogInfo;

// Requests taking at least this long are logged by the worker at info level.
constexpr std::int64_t SLOW_REQUEST_MS = 1000;
// Longest a blocked accept waits before the loop looks at the quit flag again.
constexpr long ACCEPT_TIMEOUT_MS = 500;

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
    // Workers share the listen socket and block in accept(): the kernel queues blocked accepts
    // as exclusive waiters and wakes one per connection. (Polling the socket instead woke every
    // idle worker per connection, and all but one lost the accept: 2.4-4.3 accept calls and as
    // many wake-ups per request with 4 workers, measured with strace under wrk.) The receive
    // timeout bounds each accept so an idle worker still notices SIGQUIT within that time.
    const int flags = fcntl(m_opt.listen_fd, F_GETFL);
    fcntl(m_opt.listen_fd, F_SETFL, flags & ~O_NONBLOCK);
    const timeval accept_timeout{0, ACCEPT_TIMEOUT_MS * 1000};
    setsockopt(m_opt.listen_fd, SOL_SOCKET, SO_RCVTIMEO, &accept_timeout, sizeof accept_timeout);
    ::signal(SIGPIPE, SIG_IGN);  // nginx may close first; a write must fail, not kill us
    ::signal(SIGHUP, SIG_IGN);   // reloads are the supervisor's business
    // SIGQUIT (graceful stop) stays blocked, so it never interrupts a request; the loop reads it
    // from a signalfd between requests and after each accept timeout.
    common::UniqueFd sfd = QuitSignalFd();
    if (!sfd.valid()) {
        LogError(std::string("signalfd: ") + std::strerror(errno));
        return 1;
    }

    FcgiRequest request(m_opt.listen_fd);
    MarkIdle();
    // Between requests a busy worker looks at its scoreboard slot's drain flag (the supervisor
    // sets it before SIGQUIT); the signalfd is read after each accept timeout (idle) and, with
    // no scoreboard, between requests.
    const auto drain_requested = [&]() {
        if (m_opt.scoreboard != nullptr) return m_opt.scoreboard->Slot(m_opt.slot).drain.load(std::memory_order_relaxed) != 0;
        return QuitRequested(sfd.get());
    };
    bool quit = false;
    while (m_served < m_opt.max_requests && !quit && !drain_requested()) {
        const int rc = FCGX_Accept_r(request.get());
        if (rc < 0) {
            if (rc == -EAGAIN || rc == -EWOULDBLOCK) {  // the accept timed out: idle
                quit = QuitRequested(sfd.get());
                continue;
            }
            if (rc == -EINTR || rc == -ECONNABORTED || rc == -EPROTO) continue;
            LogError("FCGX_Accept_r failed: " + std::to_string(rc));
            return 1;
        }
        if (m_opt.scoreboard != nullptr) m_opt.scoreboard->MarkBusy(m_opt.slot, common::MonotonicMs());
        // A request whose input was read to its end leaves nothing unread on the connection, so
        // libfcgi's lingering close (shutdown, then poll and read until nginx closes: three
        // system calls and a wait for nginx per request) buys nothing: detach to close at once.
        if (Serve(request.get())) FCGX_Detach(request.get());
        FCGX_Finish_r(request.get());
        ++m_served;
        if (m_opt.scoreboard != nullptr) m_opt.scoreboard->CountRequest(m_opt.slot);
        MarkIdle();
    }
    if (m_opt.scoreboard != nullptr) m_opt.scoreboard->MarkDraining(m_opt.slot);
    LogInfo(m_served >= m_opt.max_requests ? "served max_requests; exiting for recycling" : "SIGQUIT; exiting");
    return 0;
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
