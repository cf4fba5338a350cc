#include "workers/http/router.h"

#include <rapidjson/error/en.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>

#include "common/log.h"
#include "common/metrics.h"

namespace sigil::workers {
namespace {

// Iterative parsing: a deeply nested body must not exhaust the stack. Encoding validation: a
// handler must never see invalid UTF-8 in a string.
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;

}  // namespace

void Router::Add(Route route) {
    for (const auto& r : m_routes) {
        if (r.method == route.method && r.path == route.path) {
            std::fprintf(stderr, "router: duplicate route %s %s\n", route.method.c_str(), route.path.c_str());
            std::abort();
        }
    }
    m_routes.push_back(std::move(route));
}

HttpResponse Router::Dispatch(const HttpRequest& request) const {
    const std::int64_t started_us = common::MetricsNowUs();
    std::uint32_t route_index = 0;
    HttpResponse response;
    try {
        if (m_request_hook) m_request_hook();
        response = DispatchUnfinalized(request, route_index);
    } catch (const std::exception& e) {
        common::LogError(std::string("handler threw: ") + e.what(), request.request_id);
        response = ErrorResponse(500, "internal_error", "internal error");
    } catch (...) {
        common::LogError("handler threw a non-standard exception", request.request_id);
        response = ErrorResponse(500, "internal_error", "internal error");
    }
    if (m_request_end_hook) m_request_end_hook();
    FinalizeResponse(response, request);
    common::CountRequest(route_index, response.status, common::MetricsNowUs() - started_us);
    return response;
}

HttpResponse Router::DispatchUnfinalized(const HttpRequest& request, std::uint32_t& route_index) const {
    const Route* route = nullptr;
    std::set<std::string> allowed;
    for (const auto& r : m_routes) {
        if (r.path != request.path) continue;
        if (r.operator_only && !request.operator_listener) continue;
        allowed.insert(r.method);
        if (r.method == request.method) {
            route = &r;
            route_index = static_cast<std::uint32_t>(&r - m_routes.data()) + 1;
        }
    }
    if (allowed.empty()) return ErrorResponse(404, "not_found", "no such endpoint");
    if (route == nullptr && request.method == "OPTIONS" && m_preflight) return m_preflight(request, allowed);
    if (route == nullptr) {
        std::string allow;
        for (const auto& m : allowed) allow += (allow.empty() ? "" : ", ") + m;
        auto resp = ErrorResponse(405, "method_not_allowed", "method " + request.method + " not allowed; use " + allow);
        resp.SetHeader("Allow", allow);
        return resp;
    }

    rapidjson::Document doc;
    RequestContext ctx{request, nullptr, {}};
    const bool has_body = !request.body.empty();
    if (route->body == BodyKind::Json || (route->body == BodyKind::OptionalJson && has_body)) {
        if (!IsJsonContentType(request.content_type)) {
            return ErrorResponse(415, "unsupported_media_type", "the request body must be application/json");
        }
        doc.Parse<kParseFlags>(request.body.data(), request.body.size());
        if (doc.HasParseError()) {
            return ErrorResponse(422, "malformed_json",
                                 std::string("malformed JSON body: ") + rapidjson::GetParseError_En(doc.GetParseError()) +
                                     " at offset " + std::to_string(doc.GetErrorOffset()));
        }
        ctx.json = &doc;
    }

    if (route->auth != AuthRequirement::None) {
        if (!m_authenticator) return ErrorResponse(500, "auth_not_configured", "authentication is not configured");
        auto who = m_authenticator(request, route->auth);
        if (!who.ok()) return ErrorResponse(who.error());
        ctx.auth = std::move(who).value();
    }

    auto result = route->handler(ctx);
    if (!result.ok()) {
        auto response = ErrorResponse(result.error());
        if (ctx.retry_after_s > 0) response.SetHeader("Retry-After", std::to_string(ctx.retry_after_s));
        return response;
    }
    return std::move(result).value();
}

}  // namespace sigil::workers
