// fetch() for actions: one HTTP(S) request made by the worker with libcurl, guarded against SSRF.
//
// Actions are untrusted code, so every address a socket is about to connect to (after DNS, on the
// first hop and on every redirect) must be public unless the operator allowed it; the address is
// checked in libcurl's open-socket hook, so DNS rebinding between a check and the connect cannot
// slip through. Only http and https are spoken, proxies from the environment are ignored, and the
// response is capped while it streams in (after content decoding, so a gzip bomb is cut off too).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "workers/actions/fetch_policy.h"

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
    // This service's own public names ("*.example.com" for a whole domain): refused before DNS.
    std::vector<std::string> refused_hosts;
    // The first URL is the operator's (an IPFS gateway; the development one is on loopback): its
    // address is not checked. Every redirect still is, exactly as for an action's fetch.
    bool trusted_first_hop = false;
};

struct FetchResponse {
    long status = 0;           // e.g. 200
    std::string status_text;   // reason phrase of the final response ("" over HTTP/2)
    std::string url;           // final URL, after redirects
    HeaderList headers;        // final response only; names lowercased, values trimmed, in order
    std::string body;          // decoded (Content-Encoding undone), at most max_response_bytes
};

// Performs `request` within `limits` and the address policy of fetch_policy.h (the URL is parsed
// there and sent in its Serialize() spelling). Any HTTP status (404, 500...) is a successful fetch.
// Every request carries "X-Sigil-Run: 1" (RUN_MARKER_HEADER), which the run endpoint refuses.
// Redirects (301 302 303 307 308 with a Location) are followed up to max_redirects, as fetch() does:
// 303 (but HEAD), and 301/302 after POST, continue as GET without body or Content-* headers; 307/308
// repeat method and body; Authorization and Cookie are dropped when the origin changes. One libcurl
// handle per call (about 0.4-0.5 ms per loopback request); connections are reused within a call.
// Error messages name the URL's host only (a query string may carry an API key) and never the body.
// Errors:
//   InvalidInput "fetch_bad_request": scheme not http/https, malformed URL, credentials in the URL,
//     method not allowed, header name not a token or value with CR/LF/NUL, a framing header the
//     worker owns (Host, Content-Length, Transfer-Encoding, Connection, ..., X-Sigil-Run), a body on GET/HEAD,
//     body above max_request_bytes, URL or request headers above 64 KiB.
//   Forbidden "fetch_address_refused": a hop's host is in refused_hosts, is an IP literal that is
//     not public and not in allowed_addresses, or resolved only to such addresses.
//   TooLarge "fetch_response_too_large": decoded body above max_response_bytes, or response headers
//     (all hops together) above 64 KiB.
//   Timeout "fetch_timeout": timeout_ms passed.
//   Unavailable "fetch_failed": DNS failure, connection refused or reset, TLS failure, too many
//     redirects, a redirect to another protocol; the message says which in our words (libcurl's
//     own text goes to the log only).
//   Internal "fetch_bad_limits": an entry of allowed_addresses is not an IP address, or one of
//     refused_hosts not a name (operator error).
common::Result<FetchResponse> Fetch(const FetchRequest& request, const FetchLimits& limits);

}  // namespace sigil::workers
