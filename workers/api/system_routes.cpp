#include "workers/api/system_routes.h"

#include <chrono>
#include <thread>

#include "common/json.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

common::Result<HttpResponse> Health(const SystemInfo& info) {
    // Without keyd no key can be derived or payer transaction signed: the instance is degraded.
    const bool keyd_ok = info.keyd == nullptr || info.keyd->Ping().ok();
    std::string body = std::string("{\"status\":") + (keyd_ok ? "\"ok\"" : "\"degraded\"") +
                       ",\"version\":" + common::JsonQuote(info.version);
    if (info.keyd != nullptr) body += std::string(",\"keyd\":") + (keyd_ok ? "\"ok\"" : "\"unavailable\"");
    if (info.scoreboard != nullptr) {
        const auto s = info.scoreboard->Summarize();
        body += ",\"workers\":{\"total\":" + std::to_string(s.total) + ",\"idle\":" + std::to_string(s.idle) +
                ",\"busy\":" + std::to_string(s.busy) + ",\"starting\":" + std::to_string(s.starting) +
                ",\"draining\":" + std::to_string(s.draining) + ",\"capacity\":" + std::to_string(s.capacity) +
                ",\"max_workers\":" + std::to_string(info.max_workers) +
                ",\"requests_served\":" + std::to_string(s.requests_served) +
                ",\"connections_accepted\":" + std::to_string(s.connections_accepted) + "}";
        // Requests in flight by what they wait on (a busy worker computing counts in total only).
        body += ",\"in_flight\":{\"total\":" + std::to_string(s.busy);
        for (std::uint32_t k = 1; k < common::ACTIVITY_KINDS; ++k) {
            body += std::string(",\"") + common::ActivityName(static_cast<common::Activity>(k)) + "\":" +
                    std::to_string(s.in_flight[k]);
        }
        body += "}";
        // The pool-wide chain circuit: "unavailable" while chain requests fail fast (DESIGN section 10).
        const auto& circuit = info.scoreboard->ChainCircuit();
        const std::int64_t open_until = circuit.open_until_ms.load(std::memory_order_acquire);
        body += std::string(",\"chain\":") + (open_until != 0 ? "\"unavailable\"" : "\"ok\"");
    }
    return JsonResponse(keyd_ok ? 200 : 503, body + "}");
}

}  // namespace

void AddSystemRoutes(Router& router, const SystemInfo& info) {
    // `/`: where a newcomer (or a script) finds everything else, instead of a bare 404 (issue 25).
    router.Add({"GET", "/", AuthRequirement::None, BodyKind::None,
                [info](RequestContext&) -> common::Result<HttpResponse> {
                    return JsonResponse(
                        200, "{\"service\":\"sigil\",\"version\":" + common::JsonQuote(info.version) +
                                 ",\"api\":\"/core/v1\",\"links\":{\"openapi\":\"/core/v1/openapi.json\","
                                 "\"swagger_ui\":\"/core/v1/swagger-ui/\",\"dashboard\":\"/dashboard/\","
                                 "\"health\":\"/health\",\"attestation\":\"/attestation\",\"info\":\"/info\","
                                 "\"evidences\":\"/evidences/\",\"action_client_config\":\"/core/v1/get_action_client_config\"},"
                                 "\"docs\":{\"readme\":\"README.md\",\"actions\":\"docs/actions.md\","
                                 "\"sdk\":\"clients/js/README.md\",\"cli\":\"clients/cli (sigil --help)\"}}");
                },
                "An index: links to the API, its OpenAPI document and Swagger UI, the dashboard and the docs", "system",
                "", ApiSchema("system.json#/Index")});
    router.Add({"GET", "/health", AuthRequirement::None, BodyKind::None,
                [info](RequestContext&) { return Health(info); },
                "Liveness and worker pool summary", "system", "", ApiSchema("system.json#/Health")});
    router.Add({"GET", "/core/v1/version", AuthRequirement::None, BodyKind::None,
                [info](RequestContext&) -> common::Result<HttpResponse> {
                    return JsonResponse(200, "{\"service\":\"sigil\",\"version\":" + common::JsonQuote(info.version) +
                                                 ",\"api\":\"v1\"}");
                },
                "Service version", "system", "", ApiSchema("system.json#/Version")});
}

void AddTestRoutes(Router& router) {
    router.Add({"POST", "/core/v1/test/echo", AuthRequirement::None, BodyKind::Json,
                [](RequestContext& ctx) -> common::Result<HttpResponse> {
                    return JsonResponse(200, "{\"echo\":" + common::JsonSerialize(*ctx.json) + "}");
                },
                "Echo a JSON body (test_routes only)", "test", R"({})", ""});
    router.Add({"GET", "/core/v1/test/sleep", AuthRequirement::None, BodyKind::None,
                [](RequestContext& ctx) -> common::Result<HttpResponse> {
                    const auto ms_text = ctx.request.QueryParam("ms");
                    long ms = -1;
                    if (ms_text && !ms_text->empty() && ms_text->size() <= 6 &&
                        ms_text->find_first_not_of("0123456789") == std::string::npos) {
                        ms = std::stol(*ms_text);
                    }
                    if (ms < 0 || ms > 600000) {
                        return common::MakeError(common::ErrorKind::InvalidInput, "invalid_sleep", "ms must be 0..600000");
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                    return JsonResponse(200, "{\"slept_ms\":" + std::to_string(ms) + "}");
                },
                "Hold the worker busy for ms milliseconds (test_routes only)", "test", "", ""});
}

}  // namespace sigil::workers
