#include "workers/http/http.h"

#include "common/json.h"
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cctype>

namespace sigil::workers {
namespace {

constexpr std::size_t kMaxCorrelationId = 128;

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> PercentDecode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            const int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

bool SafeHeaderText(std::string_view s) {
    return std::none_of(s.begin(), s.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

}  // namespace

std::optional<std::string> HttpRequest::Header(std::string_view name) const {
    const auto it = headers.find(std::string(name));
    if (it == headers.end()) return std::nullopt;
    return it->second;
}

std::optional<std::string> HttpRequest::QueryParam(std::string_view name) const {
    std::string_view q = query;
    while (!q.empty()) {
        const auto amp = q.find('&');
        const std::string_view pair = q.substr(0, amp);
        q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
        const auto eq = pair.find('=');
        const auto key = PercentDecode(pair.substr(0, eq));
        if (!key || *key != name) continue;
        if (eq == std::string_view::npos) return std::string();
        return PercentDecode(pair.substr(eq + 1));
    }
    return std::nullopt;
}

HttpRequest RequestFromParams(const CgiParams& params, std::string body) {
    HttpRequest r;
    std::string request_uri, document_uri;
    for (const auto& [name, value] : params) {
        if (name == "REQUEST_METHOD") {
            r.method = std::string(value);
        } else if (name == "REQUEST_URI") {
            request_uri = std::string(value);
        } else if (name == "DOCUMENT_URI") {
            document_uri = std::string(value);
        } else if (name == "QUERY_STRING") {
            r.query = std::string(value);
        } else if (name == "CONTENT_TYPE") {
            r.content_type = std::string(value);
            r.headers["content-type"] = std::string(value);
        } else if (name == "REMOTE_ADDR") {
            r.remote_addr = std::string(value);
        } else if (name == "SIGIL_OPERATOR") {
            r.operator_listener = value == "1";
        } else if (name.rfind("HTTP_", 0) == 0 && name.size() > 5) {
            std::string h;
            h.reserve(name.size() - 5);
            for (char c : name.substr(5)) h += c == '_' ? '-' : Lower(c);
            // A header sent twice arrives as two params from nginx 1.22 and as one joined by ", "
            // from 1.23 on; both become the joined form (RFC 9110 5.3), so no value is silently dropped.
            auto [it, inserted] = r.headers.try_emplace(std::move(h), value);
            if (!inserted) it->second.append(", ").append(value);
        }
    }
    r.path = !document_uri.empty() ? document_uri : request_uri.substr(0, request_uri.find('?'));
    if (r.query.empty() && document_uri.empty()) {
        const auto qm = request_uri.find('?');
        if (qm != std::string::npos) r.query = request_uri.substr(qm + 1);
    }
    if (const auto cid = r.Header("x-correlation-id")) r.correlation_id = SanitizeCorrelationId(*cid);
    r.body = std::move(body);
    return r;
}

std::string SanitizeCorrelationId(std::string_view raw) {
    std::string out;
    for (char c : raw) {
        if (c >= 0x20 && c <= 0x7e) out += c;
    }
    const auto b = out.find_first_not_of(' ');
    if (b == std::string::npos) return {};
    out = out.substr(b, out.find_last_not_of(' ') - b + 1);
    if (out.size() > kMaxCorrelationId) out.resize(kMaxCorrelationId);
    return out;
}

bool IsJsonContentType(std::string_view ct) {
    std::string media(ct.substr(0, ct.find(';')));
    std::transform(media.begin(), media.end(), media.begin(), Lower);
    const auto b = media.find_first_not_of(" \t");
    if (b == std::string::npos) return false;
    media = media.substr(b, media.find_last_not_of(" \t") - b + 1);
    return media == "application/json";
}

void HttpResponse::SetHeader(std::string name, std::string value) {
    for (auto& [n, v] : headers) {
        if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(),
                                                  [](char a, char b) { return Lower(a) == Lower(b); })) {
            v = std::move(value);
            return;
        }
    }
    headers.emplace_back(std::move(name), std::move(value));
}

int HttpStatusFor(common::ErrorKind kind) {
    using K = common::ErrorKind;
    switch (kind) {
        case K::InvalidInput: return 400;
        case K::Unauthenticated: return 401;
        case K::PaymentRequired: return 402;
        case K::Forbidden: return 403;
        case K::NotFound: return 404;
        case K::Conflict: return 409;
        case K::TooLarge: return 413;
        case K::MalformedJson: return 422;
        case K::Overloaded: return 429;
        case K::Internal: return 500;
        case K::Unavailable: return 502;
        case K::Timeout: return 504;
        case K::Suspended: return 503;
    }
    return 500;
}

std::string_view ReasonPhrase(int status) {
    switch (status) {
        case 200: return "OK";
        case 201: return "Created";
        case 204: return "No Content";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 402: return "Payment Required";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 409: return "Conflict";
        case 413: return "Payload Too Large";
        case 415: return "Unsupported Media Type";
        case 422: return "Unprocessable Content";
        case 429: return "Too Many Requests";
        case 500: return "Internal Server Error";
        case 502: return "Bad Gateway";
        case 503: return "Service Unavailable";
        case 504: return "Gateway Timeout";
        default: return "Unknown";
    }
}

HttpResponse JsonResponse(int status, std::string json) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(json);
    return r;
}

// The error object, then the same message at the top level: existing clients of the deployed
// implementation read a top-level `message` (its SDK throws with it), ours read error.message.
std::string ErrorBody(std::string_view code, std::string_view message, std::string_view tx_hash) {
    const std::string quoted = common::JsonQuote(message);
    std::string body = "{\"error\":{\"code\":" + common::JsonQuote(code) + ",\"message\":" + quoted;
    if (!tx_hash.empty()) body += ",\"tx_hash\":" + common::JsonQuote(tx_hash);
    return body + "},\"message\":" + quoted + "}";
}

HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message) {
    return JsonResponse(status, ErrorBody(code, message, ""));
}

HttpResponse ErrorResponse(const common::Error& error) {
    auto response = JsonResponse(HttpStatusFor(error.kind), ErrorBody(error.code, error.message, error.tx_hash));
    // A suspended dependency is retried by its circuit within a second: tell clients when to retry.
    if (error.kind == common::ErrorKind::Suspended) response.SetHeader("Retry-After", "1");
    return response;
}

void FinalizeResponse(HttpResponse& response, const HttpRequest& request) {
    const bool has_type = std::any_of(response.headers.begin(), response.headers.end(), [](const auto& h) {
        std::string n = h.first;
        std::transform(n.begin(), n.end(), n.begin(), Lower);
        return n == "content-type";
    });
    if (!has_type) response.SetHeader("Content-Type", "application/json");
    response.SetHeader("Cache-Control", "no-store");
    response.SetHeader("X-Request-Id", request.request_id);
    if (!request.correlation_id.empty()) response.SetHeader("X-Correlation-Id", request.correlation_id);
}

std::string SerializeCgiResponse(const HttpResponse& response) {
    std::string out = "Status: " + std::to_string(response.status) + " " + std::string(ReasonPhrase(response.status)) + "\r\n";
    for (const auto& [name, value] : response.headers) {
        if (name.empty() || !SafeHeaderText(name) || !SafeHeaderText(value) || name.find(':') != std::string::npos) continue;
        out += name + ": " + value + "\r\n";
    }
    out += "\r\n";
    out += response.body;
    return out;
}

}  // namespace sigil::workers
