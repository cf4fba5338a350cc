#include "workers/actions/fetch.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "common/handles.h"
#include "common/log.h"

namespace sigil::workers {
namespace {

using common::Error;
using common::ErrorKind;
using common::MakeError;

constexpr std::size_t MAX_REQUEST_HEADER_BYTES = 64u << 10;
constexpr std::size_t MAX_RESPONSE_HEADER_BYTES = 64u << 10;
constexpr long MAX_CONNECT_TIMEOUT_MS = 5000;

using CurlEasy = common::CHandle<CURL, curl_easy_cleanup>;
using CurlList = common::CHandle<curl_slist, curl_slist_free_all>;

void InitCurlOnce() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// ---- per-call state shared with libcurl's callbacks (which must never throw) ----

struct CallState {
    FetchPolicy policy;
    bool check_addresses = true;  // false on the operator's own first hop (FetchLimits::trusted_first_hop)
    bool address_refused = false;
    std::string refused_address;  // "127.0.0.1, a loopback address"; assigned before the refusal, so no throw after it

    std::size_t max_body = 0;
    bool body_too_large = false;
    std::string body;

    std::size_t header_bytes = 0;
    bool headers_too_large = false;
    HeaderList headers;
    std::string status_text;
    bool out_of_memory = false;
};

extern "C" curl_socket_t OpenCheckedSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
    auto* state = static_cast<CallState*>(user);
    if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
    const auto ip = IpAddressOf(&address->addr);
    if (!ip) return CURL_SOCKET_BAD;
    if (state->check_addresses && !AddressAllowed(*ip, state->policy)) {
        state->address_refused = true;
        try {
            state->refused_address = ip->ToString() + ", which is not a public address (" +
                                     AddressClassName(ClassifyAddress(*ip)) + ")";
        } catch (...) {
            state->out_of_memory = true;
        }
        return CURL_SOCKET_BAD;
    }
    // CLOEXEC: the worker forks sandbox children, which must never inherit a connection.
    return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

extern "C" size_t WriteCappedBody(char* data, size_t size, size_t nmemb, void* user) {
    auto* state = static_cast<CallState*>(user);
    const size_t n = size * nmemb;
    if (n > state->max_body - state->body.size()) {
        state->body_too_large = true;
        return 0;
    }
    try {
        state->body.append(data, n);
    } catch (...) {
        state->out_of_memory = true;
        return 0;
    }
    return n;
}

std::string_view TrimWhitespace(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
        s.remove_suffix(1);
    }
    return s;
}

void TakeHeaderLine(CallState& state, std::string_view line) {
    line = TrimWhitespace(line.substr(0, line.find_first_of("\r\n")));
    if (line.empty()) return;
    if (line.rfind("HTTP/", 0) == 0) {
        // A new status line starts a new response (1xx interim or a redirect hop): keep the last.
        state.headers.clear();
        const auto code_at = line.find(' ');
        const auto text_at = code_at == std::string_view::npos ? code_at : line.find(' ', code_at + 1);
        state.status_text = text_at == std::string_view::npos ? "" : std::string(TrimWhitespace(line.substr(text_at)));
        return;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return;  // curl already refused worse
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    state.headers.emplace_back(std::move(name), std::string(TrimWhitespace(line.substr(colon + 1))));
}

extern "C" size_t TakeHeader(char* data, size_t size, size_t nmemb, void* user) {
    auto* state = static_cast<CallState*>(user);
    const size_t n = size * nmemb;
    state->header_bytes += n;
    if (state->header_bytes > MAX_RESPONSE_HEADER_BYTES) {
        state->headers_too_large = true;
        return 0;
    }
    try {
        TakeHeaderLine(*state, std::string_view(data, n));
    } catch (...) {
        state->out_of_memory = true;
        return 0;
    }
    return n;
}

// ---- request validation ----

Error BadRequest(std::string message) { return MakeError(ErrorKind::InvalidInput, "fetch_bad_request", std::move(message)); }

std::string ToLower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return out;
}

bool IsTokenChar(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// Headers that frame the message or the connection belong to the worker, not to the action.
bool IsWorkerOwnedHeader(const std::string& lower) {
    static constexpr const char* OWNED[] = {"host", "content-length", "transfer-encoding", "connection",
                                            "keep-alive", "upgrade", "te", "trailer", "expect", "x-sigil-run"};
    for (const char* o : OWNED) {
        if (lower == o) return true;
    }
    return lower.rfind("proxy-", 0) == 0;
}

common::Result<CurlList> BuildHeaderList(const HeaderList& headers, const std::string& host) {
    std::size_t total = 0;
    bool has_content_type = false;
    CurlList list;
    auto append = [&](const std::string& line) {
        curl_slist* grown = curl_slist_append(list.get(), line.c_str());
        if (grown == nullptr) return false;
        list.release();
        list.reset(grown);
        return true;
    };
    for (const auto& [name, raw_value] : headers) {
        if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return IsTokenChar(c); })) {
            return BadRequest("fetch to " + host + ": a header name is not a valid HTTP token");
        }
        if (raw_value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
            return BadRequest("fetch to " + host + ": header " + name + " contains CR, LF or NUL");
        }
        const std::string lower = ToLower(name);
        if (IsWorkerOwnedHeader(lower)) {
            return BadRequest("fetch to " + host + ": header " + name + " is set by the worker, not by actions");
        }
        has_content_type = has_content_type || lower == "content-type";
        const std::string_view value = TrimWhitespace(raw_value);
        total += name.size() + value.size() + 4;
        if (total > MAX_REQUEST_HEADER_BYTES) return BadRequest("fetch to " + host + ": request headers exceed 64 KiB");
        // "Name;" is libcurl's spelling for a header with an empty value ("Name:" would delete it).
        const std::string line = value.empty() ? name + ";" : name + ": " + std::string(value);
        if (!append(line)) return MakeError(ErrorKind::Internal, "curl_init_failed", "libcurl could not allocate");
    }
    // No "Expect: 100-continue" round trip before larger bodies: it only adds latency here.
    // libcurl would label every body application/x-www-form-urlencoded; send only what the action set.
    if (!has_content_type && !append("Content-Type:")) {
        return MakeError(ErrorKind::Internal, "curl_init_failed", "libcurl could not allocate");
    }
    if (!append("Expect:")) return MakeError(ErrorKind::Internal, "curl_init_failed", "libcurl could not allocate");
    if (!append(std::string(RUN_MARKER_HEADER) + ": 1")) {
        return MakeError(ErrorKind::Internal, "curl_init_failed", "libcurl could not allocate");
    }
    return list;
}

common::Result<std::string> CheckMethod(const FetchRequest& request, const std::string& host) {
    std::string method(request.method);
    for (char& c : method) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    static constexpr const char* ALLOWED[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"};
    if (std::none_of(std::begin(ALLOWED), std::end(ALLOWED), [&](const char* m) { return method == m; })) {
        return BadRequest("fetch to " + host + ": method not allowed (GET POST PUT PATCH DELETE HEAD OPTIONS)");
    }
    if ((method == "GET" || method == "HEAD") && !request.body.empty()) {
        return BadRequest("fetch to " + host + ": a " + method + " request cannot have a body");
    }
    return method;
}

// ---- outcome ----

// libcurl follows no redirect itself (Fetch does), so the failing request is always `host`'s.
Error MapFailure(CURLcode rc, const CallState& state, const std::string& host) {
    if (state.body_too_large) {
        return MakeError(ErrorKind::TooLarge, "fetch_response_too_large",
                         "fetch from " + host + ": response body exceeds " + std::to_string(state.max_body) + " bytes");
    }
    if (state.headers_too_large) {
        return MakeError(ErrorKind::TooLarge, "fetch_response_too_large",
                         "fetch from " + host + ": response headers exceed 64 KiB");
    }
    if (state.out_of_memory) {
        return MakeError(ErrorKind::Internal, "fetch_out_of_memory", "fetch from " + host + ": out of memory");
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        return MakeError(ErrorKind::Timeout, "fetch_timeout", "fetch from " + host + " timed out");
    }
    if (rc == CURLE_COULDNT_CONNECT && state.address_refused) {
        return MakeError(ErrorKind::Forbidden, "fetch_address_refused",
                         "fetch to " + host + " refused: it resolves to " + state.refused_address);
    }
    std::string why;
    switch (rc) {
        case CURLE_COULDNT_RESOLVE_HOST: why = "DNS lookup failed"; break;
        case CURLE_COULDNT_CONNECT: why = "connection refused or unreachable"; break;
        case CURLE_PEER_FAILED_VERIFICATION: why = "TLS certificate verification failed"; break;
        case CURLE_SSL_CONNECT_ERROR: why = "TLS handshake failed"; break;
        case CURLE_SSL_CACERT_BADFILE: why = "TLS trust store unavailable"; break;
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_GOT_NOTHING: why = "connection closed or reset"; break;
        default:
            // libcurl's own text can name local paths and internals: the log gets it, the caller not.
            common::LogWarn("fetch from " + host + " failed: " + curl_easy_strerror(rc));
            why = "transfer error (code " + std::to_string(static_cast<int>(rc)) + ")";
            break;
    }
    return MakeError(ErrorKind::Unavailable, "fetch_failed", "fetch from " + host + " failed: " + why);
}

// ---- one request of a redirect chain ----

struct Hop {
    FetchUrl url;
    std::string method;
    std::string body;
    HeaderList headers;
    CurlList header_list;
};

// Options that stay the same on every hop.
void SetFixedOptions(CURL* c, CallState& state) {
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");  // never a proxy from http_proxy / ALL_PROXY
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NETRC, static_cast<long>(CURL_NETRC_IGNORED));
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(c, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // every decoder curl has; the cap counts decoded bytes
    curl_easy_setopt(c, CURLOPT_USERAGENT, "Sigil-Action-Fetch/1");
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, OpenCheckedSocket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &state);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteCappedBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &state);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, TakeHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &state);
}

// The handle is reused across hops, so every call starts from a plain GET and builds up.
void SetMethod(CURL* c, const Hop& hop) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, static_cast<const char*>(nullptr));
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    if (hop.method == "GET") return;
    if (hop.method == "HEAD") {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        return;
    }
    const bool sends_body = !hop.body.empty() || hop.method == "POST" || hop.method == "PUT" || hop.method == "PATCH";
    if (sends_body) {  // Content-Length: 0 for an empty PUT, or servers answer 411
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(hop.body.size()));
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, hop.body.data());
    }
    if (hop.method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, hop.method.c_str());
}

// fetch()'s redirect rules: 303 (except for HEAD), and 301/302 after a POST, continue as a GET
// without the body and its headers; Authorization and Cookie stay with the origin they were for.
common::Status FollowRedirect(Hop& hop, long status, FetchUrl next) {
    auto drop = [&](std::initializer_list<const char*> names) {
        std::erase_if(hop.headers, [&](const auto& header) {
            const std::string lower = ToLower(header.first);
            return std::any_of(names.begin(), names.end(), [&](const char* n) { return lower == n; });
        });
    };
    if ((status == 303 && hop.method != "GET" && hop.method != "HEAD") ||
        ((status == 301 || status == 302) && hop.method == "POST")) {
        hop.method = "GET";
        hop.body.clear();
        drop({"content-type", "content-encoding", "content-language", "content-location"});
    }
    if (next.Origin() != hop.url.Origin()) drop({"authorization", "cookie"});
    hop.url = std::move(next);
    SIGIL_TRY(list, BuildHeaderList(hop.headers, hop.url.host));
    hop.header_list = std::move(*list);
    return common::Success();
}

}  // namespace

common::Result<FetchResponse> Fetch(const FetchRequest& request, const FetchLimits& limits) {
    if (limits.timeout_ms <= 0 || limits.max_redirects < 0) {
        return MakeError(ErrorKind::Internal, "fetch_bad_limits", "fetch limits need a positive timeout");
    }
    CallState state;
    state.max_body = limits.max_response_bytes;
    SIGIL_TRY(policy, MakeFetchPolicy(limits.allowed_addresses, limits.refused_hosts));
    state.policy = std::move(*policy);

    SIGIL_TRY(url, ParseFetchUrl(request.url));
    SIGIL_TRY(method, CheckMethod(request, url->host));
    if (request.body.size() > limits.max_request_bytes) {
        return BadRequest("fetch to " + url->host + ": request body exceeds " +
                          std::to_string(limits.max_request_bytes) + " bytes");
    }
    SIGIL_TRY(first_headers, BuildHeaderList(request.headers, url->host));

    InitCurlOnce();
    CurlEasy curl(curl_easy_init());
    CURL* c = curl.get();
    if (c == nullptr) return MakeError(ErrorKind::Internal, "curl_init_failed", "libcurl could not be initialized");
    SetFixedOptions(c, state);

    // Redirects are followed here rather than by libcurl, so that the method and body change as
    // fetch() specifies and Authorization never travels to another origin. Every hop still goes
    // through OpenCheckedSocket for each new connection.
    Hop hop{std::move(*url), std::move(*method), request.body, request.headers, std::move(*first_headers)};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.timeout_ms);
    for (int redirects = 0;; ++redirects) {
        const auto remaining =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (remaining <= 0) return MakeError(ErrorKind::Timeout, "fetch_timeout", "fetch from " + hop.url.host + " timed out");
        // The operator's first hop is trusted; every other hop, redirects of that one included, meets
        // the policy: here for names and IP literals, in OpenCheckedSocket for what DNS answered.
        // A new connection for each hop after a trusted one, so none skips the socket check.
        state.check_addresses = !(limits.trusted_first_hop && redirects == 0);
        if (state.check_addresses) SIGIL_TRY_STATUS(CheckFetchHost(hop.url, state.policy));
        curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, limits.trusted_first_hop && redirects > 0 ? 1L : 0L);
        const std::string wire_url = hop.url.Serialize();
        curl_easy_setopt(c, CURLOPT_URL, wire_url.c_str());
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(remaining));
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(remaining, MAX_CONNECT_TIMEOUT_MS));
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hop.header_list.get());
        SetMethod(c, hop);
        state.body.clear();
        state.address_refused = false;  // a refusal on an earlier hop must not label this hop's failure

        const CURLcode rc = curl_easy_perform(c);
        if (rc != CURLE_OK) return MapFailure(rc, state, hop.url.host);

        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        char* location = nullptr;
        curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location);
        const bool redirect = status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
        if (!redirect || location == nullptr) {
            FetchResponse response;
            response.status = status;
            response.url = hop.url.Serialize();
            response.status_text = std::move(state.status_text);
            response.headers = std::move(state.headers);
            response.body = std::move(state.body);
            return response;
        }
        if (redirects >= limits.max_redirects) {
            return MakeError(ErrorKind::Unavailable, "fetch_failed",
                             "fetch from " + hop.url.host + " failed: too many redirects (more than " +
                                 std::to_string(limits.max_redirects) + ")");
        }
        auto next = ParseFetchUrl(location);
        if (!next.ok()) {
            return MakeError(ErrorKind::Unavailable, "fetch_failed",
                             "fetch from " + hop.url.host +
                                 " failed: redirect to a protocol other than http/https or to an invalid URL refused");
        }
        SIGIL_TRY_STATUS(FollowRedirect(hop, status, std::move(*next)));
    }
}

}  // namespace sigil::workers
