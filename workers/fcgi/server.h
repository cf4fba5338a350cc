// The worker's FastCGI loop: connections from the inherited listen socket and the pool's handoff
// queue, kept between requests when nginx asks (fastcgi_keep_conn); read params and a bounded
// body, dispatch through the Router, write the response, keep the scoreboard slot current.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/scoreboard.h"
#include "workers/http/router.h"

namespace sigil::workers {

// Reads the request body through `read` (returns bytes read, 0 at end of input) and never holds
// more than max_bytes + 1 bytes. `content_length` is the CONTENT_LENGTH param if sent.
// Errors: TooLarge "body_too_large" when CONTENT_LENGTH or the bytes actually sent exceed
// max_bytes (refused before reading when the declared length is too big); InvalidInput
// "bad_content_length" when CONTENT_LENGTH is not a decimal number.
common::Result<std::string> ReadBoundedBody(const std::function<std::size_t(char*, std::size_t)>& read,
                                            std::optional<std::string_view> content_length, std::size_t max_bytes);

struct FcgiServerOptions {
    int listen_fd = 0;                   // FCGI_LISTENSOCK_FILENO
    std::size_t max_body_bytes = 1 << 20;
    std::uint64_t max_requests = 100000;   // exit after this many (the supervisor starts a fresh worker)
    common::Scoreboard* scoreboard = nullptr;  // optional
    std::uint32_t slot = 0;
    // The pool's handoff pair (fcgi_handoff.h); -1 = none: idle kept connections then stay with
    // this worker while it serves another.
    int handoff_send_fd = -1;
    int handoff_recv_fd = -1;
};

// Serves requests one at a time until max_requests have been served or SIGQUIT arrives (the
// in-flight request is finished first). A request nginx sends on a connection held by a worker busy
// with another request for more than 2 ms is passed to the pool (fcgi_handoff.h); on exit the
// worker passes on every connection it holds. SIGTERM keeps its default action (immediate exit) so the
// supervisor's escalation works. Returns the process exit code: 0 after a clean stop, 1 when the
// listen socket is unusable.
int RunFcgiServer(const Router& router, const FcgiServerOptions& options);

}  // namespace sigil::workers
