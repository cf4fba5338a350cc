// fetch() for actions: one HTTP(S) request made by the worker with libcurl, guarded against SSRF.
//
// Actions are untrusted code, so every address a socket is about to connect to (after DNS, on the
// first hop and on every redirect) must be public unless the operator allowed it; the address is
// checked in libcurl's open-socket hook, so DNS rebinding between a check and the connect cannot
// slip through. Only http and https are spoken, proxies from the environment are ignored, and the
// response is capped while it streams in (after content decoding, so a gzip bomb is cut off too).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace sigil::workers {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// What the action asked for; nothing here has been validated yet.
struct FetchRequest {
    std::string url;               // absolute http:// or https:// URL, no user:password@
    std::string method = "GET";    // GET POST PUT PATCH DELETE HEAD OPTIONS (any case)
    HeaderList headers;            // sent in order; names must be RFC 9110 tokens; no Content-Type
                                   // is added when none is given
    std::string body;              // sent for every method but GET and HEAD (which must have none)
};

struct FetchLimits {
    std::size_t max_response_bytes = 1u << 20;  // decoded body bytes
    std::size_t max_request_bytes = 1u << 20;   // request body bytes
    int timeout_ms = 10000;                     // whole request, redirects included
    int max_redirects = 5;                      // redirects followed; one more fails
    // Exact IPv4/IPv6 addresses reachable although not public: an operator's internal API, or
    // 127.0.0.1 in tests. An IPv4 entry also allows its IPv4-mapped IPv6 form.
    std::vector<std::string> allowed_addresses;
    bool allow_any_address = false;             // operator-configured targets only (IPFS gateways)
};

struct FetchResponse {
    long status = 0;           // e.g. 200
    std::string status_text;   // reason phrase of the final response ("" over HTTP/2)
    std::string url;           // final URL, after redirects
    HeaderList headers;        // final response only; names lowercased, values trimmed, in order
    std::string body;          // decoded (Content-Encoding undone), at most max_response_bytes
};

// Performs `request` within `limits`. Any HTTP status (404, 500...) is a successful fetch.
// Redirects (301 302 303 307 308 with a Location) are followed up to max_redirects, as fetch() does:
// 303 (but HEAD), and 301/302 after POST, continue as GET without body or Content-* headers; 307/308
// repeat method and body; Authorization and Cookie are dropped when the origin changes. One libcurl
// handle per call (about 0.4-0.5 ms per loopback request); connections are reused within a call.
// Error messages name the URL's host only (a query string may carry an API key) and never the body.
// Errors:
//   InvalidInput "fetch_bad_request": scheme not http/https, malformed URL, credentials in the URL,
//     method not allowed, header name not a token or value with CR/LF/NUL, a framing header the
//     worker owns (Host, Content-Length, Transfer-Encoding, Connection, ...), a body on GET/HEAD,
//     body above max_request_bytes, URL or request headers above 64 KiB.
//   Forbidden "fetch_address_refused": a hop resolved only to addresses that are not public and
//     not in allowed_addresses.
//   TooLarge "fetch_response_too_large": decoded body above max_response_bytes, or response headers
//     (all hops together) above 64 KiB.
//   Timeout "fetch_timeout": timeout_ms passed.
//   Unavailable "fetch_failed": DNS failure, connection refused or reset, TLS failure, too many
//     redirects, a redirect to another protocol; the message says which.
//   Internal "fetch_bad_limits": an entry of allowed_addresses is not an IP address (operator error).
common::Result<FetchResponse> Fetch(const FetchRequest& request, const FetchLimits& limits);

// True when `addr` (AF_INET or AF_INET6) is a globally reachable unicast address. False for:
// IPv4 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24, 192.168/16,
// 198.18/15, 198.51.100/24, 203.0.113/24, 224/4, 240/4 (incl. 255.255.255.255); IPv6 ::, ::1,
// 100::/64, 2001::/32 (Teredo), 2001:db8::/32, 64:ff9b:1::/48, fc00::/7, fe80::/10, fec0::/10,
// ff00::/8; IPv6 forms that embed an IPv4 address (::ffff:a.b.c.d mapped, ::a.b.c.d compatible,
// 64:ff9b::/96 NAT64, 2002::/16 6to4) are judged by that IPv4 address. Other families: false.
bool IsPublicAddress(const sockaddr* addr);

// The same for a textual address ("10.0.0.1", "::ffff:127.0.0.1"); false when `text` is not an
// IPv4 or IPv6 address.
bool IsPublicAddress(std::string_view text);

}  // namespace sigil::workers
