// Sans-IO HTTP model of the worker: requests built from FastCGI params, responses serialized to
// CGI response text, and the one place where error kinds become HTTP statuses.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace sigil::workers {

// Everything a handler may look at. Built by RequestFromParams; nothing here is validated beyond
// what the comments say, so handlers treat every field as untrusted client input.
struct HttpRequest {
    std::string method;        // REQUEST_METHOD, e.g. "GET"
    std::string path;          // path without the query string, e.g. "/core/v1/version" (not decoded)
    std::string query;         // raw query string without '?'
    std::string content_type;  // CONTENT_TYPE as sent, "" if none
    std::map<std::string, std::string> headers;  // lowercase, '-' separated names, from HTTP_* params
    std::string body;
    std::string remote_addr;
    std::string request_id;      // fresh UUID v4 for this request
    std::string correlation_id;  // sanitized X-Correlation-Id, "" when absent or empty after sanitizing
    // Set only by nginx's operator listener (fastcgi_param SIGIL_OPERATOR 1, nginx/sigil.conf.template):
    // a FastCGI param no client can send (request headers arrive as HTTP_*), so operator-only routes
    // (/metrics) are refused on the public listener even if its config passed every path.
    bool operator_listener = false;

    // Header by lowercase name ("x-api-key"), if present.
    std::optional<std::string> Header(std::string_view name) const;

    // First value of query parameter `name`, percent- and '+'-decoded. nullopt if absent or if its
    // encoding is malformed (a bad %xx escape).
    std::optional<std::string> QueryParam(std::string_view name) const;
};

// Builds a request from FastCGI params ("NAME", "value") and the body already read.
// HTTP_X_API_KEY becomes header "x-api-key"; CONTENT_TYPE also appears as header "content-type".
// The path is DOCUMENT_URI if set, else REQUEST_URI up to '?'. request_id is left empty.
// CGI parameters as name/value views (into libfcgi's request memory, valid until the request ends).
using CgiParams = std::vector<std::pair<std::string_view, std::string_view>>;
HttpRequest RequestFromParams(const CgiParams& params, std::string body);

// Keeps printable ASCII (0x20..0x7e), trims spaces, truncates to 128 characters. Returns "" when
// nothing is left, in which case the id is not echoed.
std::string SanitizeCorrelationId(std::string_view raw);

// "application/json; charset=utf-8" -> true; anything else (including "") -> false. Case-insensitive.
bool IsJsonContentType(std::string_view content_type);

struct HttpResponse {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;  // besides the ones FinalizeResponse adds
    std::string body;

    void SetHeader(std::string name, std::string value);
};

// The HTTP status for each ErrorKind (the only such mapping in the code base).
int HttpStatusFor(common::ErrorKind kind);

// Reason phrase for the Status line ("Not Found"); "Unknown" for codes we never send.
std::string_view ReasonPhrase(int status);

// A JSON response: `json` must already be a serialized JSON value.
HttpResponse JsonResponse(int status, std::string json);

// {"error":{"code":..., "message":..., "tx_hash"?:...}, "message":...}: the same text twice, the
// top-level one being what clients of the deployed implementation read (additive).
std::string ErrorBody(std::string_view code, std::string_view message, std::string_view tx_hash);
// That body with the status for error.kind (and Retry-After for a suspended dependency).
HttpResponse ErrorResponse(const common::Error& error);
// The same with an explicit status (for statuses no ErrorKind maps to, e.g. 503).
HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message);

// Adds the headers every response carries: Content-Type application/json (unless the handler set
// one), Cache-Control no-store, X-Request-Id, and X-Correlation-Id when the request had one.
void FinalizeResponse(HttpResponse& response, const HttpRequest& request);

// CGI/FastCGI response text: "Status: 404 Not Found\r\n" + headers + "\r\n" + body. Header names
// and values containing CR, LF or NUL are dropped, so no input can inject a header.
std::string SerializeCgiResponse(const HttpResponse& response);

}  // namespace sigil::workers
