#include <cppunit/extensions/HelperMacros.h>

#include <stdexcept>
#include <string>

#include "common/scoreboard.h"
#include "workers/http/router.h"
#include "workers/api/attestation.h"
#include "workers/api/system_routes.h"

using namespace sigil;
using namespace sigil::workers;

namespace {

HttpRequest Req(std::string method, std::string path, std::string body = "", std::string content_type = "") {
    HttpRequest r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.body = std::move(body);
    r.content_type = std::move(content_type);
    r.request_id = "3f2c8a1e-9b4d-4c7e-a1f0-5d6e7b8c9a0b";
    return r;
}

std::string HeaderOf(const HttpResponse& r, const std::string& name) {
    for (const auto& [n, v] : r.headers) {
        if (n == name) return v;
    }
    return "<none>";
}

bool HasErrorCode(const HttpResponse& r, const std::string& code) {
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    return !d.HasParseError() && d.IsObject() && d.HasMember("error") && d["error"].IsObject() &&
           d["error"].HasMember("code") && d["error"]["code"].IsString() && code == d["error"]["code"].GetString() &&
           d["error"].HasMember("message") && d["error"]["message"].IsString() &&
           // the same text at the top level, for clients of the deployed implementation (issue 28)
           d.HasMember("message") && d["message"].IsString() &&
           std::string(d["message"].GetString()) == d["error"]["message"].GetString();
}

Router TestRouter() {
    Router router;
    router.Add({"POST", "/core/v1/echo", AuthRequirement::None, BodyKind::Json,
                [](RequestContext& ctx) -> common::Result<HttpResponse> {
                    const bool is_obj = ctx.json != nullptr && ctx.json->IsObject();
                    return JsonResponse(200, is_obj ? "{\"object\":true}" : "{\"object\":false}");
                },
                "echo", "test", "", ""});
    router.Add({"GET", "/core/v1/echo", AuthRequirement::None, BodyKind::None,
                [](RequestContext&) -> common::Result<HttpResponse> { return JsonResponse(200, "{}"); }, "", "", "", ""});
    router.Add({"POST", "/core/v1/maybe", AuthRequirement::None, BodyKind::OptionalJson,
                [](RequestContext& ctx) -> common::Result<HttpResponse> {
                    return JsonResponse(200, ctx.json == nullptr ? "{\"body\":false}" : "{\"body\":true}");
                },
                "", "", "", ""});
    router.Add({"GET", "/core/v1/fail", AuthRequirement::None, BodyKind::None,
                [](RequestContext&) -> common::Result<HttpResponse> {
                    return common::MakeError(common::ErrorKind::Conflict, "already_exists", "exists");
                },
                "", "", "", ""});
    router.Add({"GET", "/core/v1/throw", AuthRequirement::None, BodyKind::None,
                [](RequestContext&) -> common::Result<HttpResponse> { throw std::runtime_error("boom"); }, "", "", "", ""});
    router.Add({"GET", "/core/v1/private", AuthRequirement::ApiKey, BodyKind::None,
                [](RequestContext& ctx) -> common::Result<HttpResponse> {
                    return JsonResponse(200, "{\"who\":\"" + std::any_cast<std::string>(ctx.auth) + "\"}");
                },
                "", "", "", ""});
    return router;
}

}  // namespace

class RouterTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(RouterTests);
    CPPUNIT_TEST(testRoutesByMethodAndPath);
    CPPUNIT_TEST(testUnknownPathIsJson404);
    CPPUNIT_TEST(testOperatorOnlyRouteIsAbsentOffTheOperatorListener);
    CPPUNIT_TEST(testOperatorFlagComesOnlyFromTheFastCgiParam);
    CPPUNIT_TEST(testWrongMethodIs405WithAllow);
    CPPUNIT_TEST(testNonJsonBodyIs415);
    CPPUNIT_TEST(testMalformedJsonIs422);
    CPPUNIT_TEST(testDeepNestingIsParsedWithoutRecursion);
    CPPUNIT_TEST(testOptionalJsonBody);
    CPPUNIT_TEST(testHandlerErrorsAreMapped);
    CPPUNIT_TEST(testExceptionBecomes500);
    CPPUNIT_TEST(testHooksFrameEveryRequestEvenAThrowingOne);
    CPPUNIT_TEST(testAuthRequiresAuthenticator);
    CPPUNIT_TEST(testEveryResponseCarriesHeaders);
    CPPUNIT_TEST(testSystemRoutes);
    CPPUNIT_TEST(testRouteTableIsExposed);
    CPPUNIT_TEST_SUITE_END();

public:
    void testRoutesByMethodAndPath() {
        const Router router = TestRouter();
        auto r = router.Dispatch(Req("POST", "/core/v1/echo", "{\"a\":1}", "application/json"));
        CPPUNIT_ASSERT_EQUAL(200, r.status);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"object\":true}"), r.body);
        CPPUNIT_ASSERT_EQUAL(200, router.Dispatch(Req("GET", "/core/v1/echo")).status);
    }
    void testUnknownPathIsJson404() {
        const Router router = TestRouter();
        for (const char* p : {"/nope", "/core/v1/echo/", "/core/v1/ECHO", "", "/core/v1/echo?x"}) {
            auto r = router.Dispatch(Req("GET", p));
            CPPUNIT_ASSERT_EQUAL_MESSAGE(p, 404, r.status);
            CPPUNIT_ASSERT(HasErrorCode(r, "not_found"));
        }
    }
    void testOperatorOnlyRouteIsAbsentOffTheOperatorListener() {
        Router router;
        Route route{"GET", "/metrics", AuthRequirement::None, BodyKind::None,
                    [](RequestContext&) -> common::Result<HttpResponse> { return JsonResponse(200, "{}"); }, "", "", "", ""};
        route.operator_only = true;
        router.Add(std::move(route));
        auto pub = router.Dispatch(Req("GET", "/metrics"));
        CPPUNIT_ASSERT_EQUAL(404, pub.status);
        CPPUNIT_ASSERT(HasErrorCode(pub, "not_found"));
        // Not even a 405 that would tell the route exists.
        CPPUNIT_ASSERT_EQUAL(404, router.Dispatch(Req("POST", "/metrics")).status);
        HttpRequest op = Req("GET", "/metrics");
        op.operator_listener = true;
        CPPUNIT_ASSERT_EQUAL(200, router.Dispatch(op).status);
    }
    void testOperatorFlagComesOnlyFromTheFastCgiParam() {
        // A client's header "Sigil-Operator: 1" arrives as HTTP_SIGIL_OPERATOR and must not count.
        const CgiParams from_client = {{"REQUEST_METHOD", "GET"}, {"REQUEST_URI", "/metrics"}, {"HTTP_SIGIL_OPERATOR", "1"}};
        CPPUNIT_ASSERT(!RequestFromParams(from_client, "").operator_listener);
        const CgiParams from_nginx = {{"REQUEST_METHOD", "GET"}, {"REQUEST_URI", "/metrics"}, {"SIGIL_OPERATOR", "1"}};
        CPPUNIT_ASSERT(RequestFromParams(from_nginx, "").operator_listener);
    }
    void testWrongMethodIs405WithAllow() {
        const Router router = TestRouter();
        auto r = router.Dispatch(Req("DELETE", "/core/v1/echo"));
        CPPUNIT_ASSERT_EQUAL(405, r.status);
        CPPUNIT_ASSERT(HasErrorCode(r, "method_not_allowed"));
        CPPUNIT_ASSERT_EQUAL(std::string("GET, POST"), HeaderOf(r, "Allow"));
        CPPUNIT_ASSERT_EQUAL(std::string("GET"), HeaderOf(router.Dispatch(Req("POST", "/core/v1/fail")), "Allow"));
    }
    void testNonJsonBodyIs415() {
        const Router router = TestRouter();
        for (const char* ct : {"", "text/plain", "application/x-www-form-urlencoded", "application/jsonp"}) {
            auto r = router.Dispatch(Req("POST", "/core/v1/echo", "{\"a\":1}", ct));
            CPPUNIT_ASSERT_EQUAL_MESSAGE(ct, 415, r.status);
            CPPUNIT_ASSERT(HasErrorCode(r, "unsupported_media_type"));
        }
        CPPUNIT_ASSERT_EQUAL(200, router.Dispatch(Req("POST", "/core/v1/echo", "[]", "application/json; charset=utf-8")).status);
    }
    void testMalformedJsonIs422() {
        const Router router = TestRouter();
        for (const std::string body : {"", "{", "{\"a\":}", "{} {}", "{\"a\":1,}", "'x'", "NaN", "{\"a\":\"\xff\"}"}) {
            auto r = router.Dispatch(Req("POST", "/core/v1/echo", body, "application/json"));
            CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 422, r.status);
            CPPUNIT_ASSERT(HasErrorCode(r, "malformed_json"));
        }
    }
    void testDeepNestingIsParsedWithoutRecursion() {
        const Router router = TestRouter();
        const std::string deep = std::string(200000, '[') + std::string(200000, ']');
        CPPUNIT_ASSERT_EQUAL(200, router.Dispatch(Req("POST", "/core/v1/echo", deep, "application/json")).status);
        const std::string unbalanced = std::string(200000, '[');
        CPPUNIT_ASSERT_EQUAL(422, router.Dispatch(Req("POST", "/core/v1/echo", unbalanced, "application/json")).status);
    }
    void testOptionalJsonBody() {
        const Router router = TestRouter();
        CPPUNIT_ASSERT_EQUAL(std::string("{\"body\":false}"), router.Dispatch(Req("POST", "/core/v1/maybe")).body);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"body\":true}"),
                             router.Dispatch(Req("POST", "/core/v1/maybe", "{}", "application/json")).body);
        CPPUNIT_ASSERT_EQUAL(415, router.Dispatch(Req("POST", "/core/v1/maybe", "{}", "text/plain")).status);
    }
    void testHandlerErrorsAreMapped() {
        auto r = TestRouter().Dispatch(Req("GET", "/core/v1/fail"));
        CPPUNIT_ASSERT_EQUAL(409, r.status);
        CPPUNIT_ASSERT(HasErrorCode(r, "already_exists"));
    }
    void testExceptionBecomes500() {
        auto r = TestRouter().Dispatch(Req("GET", "/core/v1/throw"));
        CPPUNIT_ASSERT_EQUAL(500, r.status);
        CPPUNIT_ASSERT(HasErrorCode(r, "internal_error"));
        CPPUNIT_ASSERT(r.body.find("boom") == std::string::npos);  // internals never reach the client
    }
    void testHooksFrameEveryRequestEvenAThrowingOne() {
        // The API wipes a request's write credential in the end hook: it must run whatever the
        // handler did, and after it, never before.
        Router router = TestRouter();
        std::string trace;
        router.SetRequestHook([&trace] { trace += "start "; });
        router.SetRequestEndHook([&trace] { trace += "end "; });
        router.Add({"GET", "/core/v1/traced", AuthRequirement::None, BodyKind::None,
                    [&trace](RequestContext&) -> common::Result<HttpResponse> {
                        trace += "handler ";
                        return JsonResponse(200, "{}");
                    },
                    "", "", "", ""});
        CPPUNIT_ASSERT_EQUAL(200, router.Dispatch(Req("GET", "/core/v1/traced")).status);
        CPPUNIT_ASSERT_EQUAL(std::string("start handler end "), trace);
        trace.clear();
        CPPUNIT_ASSERT_EQUAL(500, router.Dispatch(Req("GET", "/core/v1/throw")).status);
        CPPUNIT_ASSERT_EQUAL(std::string("start end "), trace);
        trace.clear();
        CPPUNIT_ASSERT_EQUAL(404, router.Dispatch(Req("GET", "/nope")).status);
        CPPUNIT_ASSERT_EQUAL(std::string("start end "), trace);
    }
    void testAuthRequiresAuthenticator() {
        Router router = TestRouter();
        auto none = router.Dispatch(Req("GET", "/core/v1/private"));
        CPPUNIT_ASSERT_EQUAL(500, none.status);
        CPPUNIT_ASSERT(HasErrorCode(none, "auth_not_configured"));
        router.SetAuthenticator([](const HttpRequest& req, AuthRequirement need) -> common::Result<std::any> {
            if (need != AuthRequirement::ApiKey) return common::MakeError(common::ErrorKind::Internal, "x", "x");
            const auto key = req.Header("x-api-key");
            if (!key) return common::MakeError(common::ErrorKind::Unauthenticated, "missing_api_key", "no key");
            return std::any(std::string("acct-") + *key);
        });
        auto denied = router.Dispatch(Req("GET", "/core/v1/private"));
        CPPUNIT_ASSERT_EQUAL(401, denied.status);
        CPPUNIT_ASSERT(HasErrorCode(denied, "missing_api_key"));
        auto req = Req("GET", "/core/v1/private");
        req.headers["x-api-key"] = "7";
        auto ok = router.Dispatch(req);
        CPPUNIT_ASSERT_EQUAL(200, ok.status);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"who\":\"acct-7\"}"), ok.body);
        // Public routes never consult the authenticator.
        CPPUNIT_ASSERT_EQUAL(200, router.Dispatch(Req("GET", "/core/v1/echo")).status);
    }
    void testEveryResponseCarriesHeaders() {
        const Router router = TestRouter();
        auto req = Req("GET", "/nope");
        req.correlation_id = "trace-9";
        for (const auto& r : {router.Dispatch(req), router.Dispatch(Req("GET", "/core/v1/echo")),
                              router.Dispatch(Req("PUT", "/core/v1/echo")), router.Dispatch(Req("GET", "/core/v1/throw"))}) {
            CPPUNIT_ASSERT_EQUAL(std::string("application/json"), HeaderOf(r, "Content-Type"));
            CPPUNIT_ASSERT_EQUAL(std::string("3f2c8a1e-9b4d-4c7e-a1f0-5d6e7b8c9a0b"), HeaderOf(r, "X-Request-Id"));
        }
        CPPUNIT_ASSERT_EQUAL(std::string("trace-9"), HeaderOf(router.Dispatch(req), "X-Correlation-Id"));
        CPPUNIT_ASSERT_EQUAL(std::string("<none>"), HeaderOf(router.Dispatch(Req("GET", "/nope")), "X-Correlation-Id"));
    }
    void testSystemRoutes() {
        auto sb = common::Scoreboard::Create("router-test", 4);
        CPPUNIT_ASSERT(sb.ok());
        sb->Assign(0, 10, 1);
        sb->MarkIdle(0);
        sb->Assign(1, 11, 1);
        sb->MarkBusy(1, 5);
        sb->CountRequest(1);
        Router router;
        AddSystemRoutes(router, {"1.2.3", &*sb, nullptr});
        AddAttestationRoutes(router, {});  // no agent configured
        auto health = router.Dispatch(Req("GET", "/health"));
        CPPUNIT_ASSERT_EQUAL(200, health.status);
        rapidjson::Document d;
        d.Parse(health.body.c_str());
        CPPUNIT_ASSERT(!d.HasParseError());
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), std::string(d["status"].GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("1.2.3"), std::string(d["version"].GetString()));
        CPPUNIT_ASSERT_EQUAL(2, d["workers"]["total"].GetInt());
        CPPUNIT_ASSERT_EQUAL(1, d["workers"]["idle"].GetInt());
        CPPUNIT_ASSERT_EQUAL(1, d["workers"]["busy"].GetInt());
        CPPUNIT_ASSERT_EQUAL(1, d["workers"]["requests_served"].GetInt());
        auto version = router.Dispatch(Req("GET", "/core/v1/version"));
        CPPUNIT_ASSERT_EQUAL(std::string("{\"service\":\"sigil\",\"version\":\"1.2.3\",\"api\":\"v1\"}"), version.body);
        for (const char* p : {"/attestation", "/info"}) {
            auto r = router.Dispatch(Req("GET", p));
            CPPUNIT_ASSERT_EQUAL(503, r.status);
            CPPUNIT_ASSERT(HasErrorCode(r, "attestation_unavailable"));
        }
        // /attestation's query is judged before the agent is asked: only a literal nonce= is read,
        // never a percent-encoded name nginx's limit did not see as one (issue 22).
        for (const char* q : {"%6eonce=01", "n%6Fnce=01", "foo=1", "nonce=01&nonce=02", "nonce"}) {
            auto request = Req("GET", "/attestation");
            request.query = q;
            auto r = router.Dispatch(request);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(q, 400, r.status);
            CPPUNIT_ASSERT_MESSAGE(q, HasErrorCode(r, "invalid_query"));
        }
        for (const char* q : {"nonce=", "nonce=zz", "nonce=%30%31"}) {
            auto request = Req("GET", "/attestation");
            request.query = q;
            CPPUNIT_ASSERT_MESSAGE(q, HasErrorCode(router.Dispatch(request), "invalid_nonce"));
        }
        auto nonce = Req("GET", "/attestation");
        nonce.query = "nonce=0x0102";
        CPPUNIT_ASSERT(HasErrorCode(router.Dispatch(nonce), "attestation_unavailable"));
        Router bare;
        AddSystemRoutes(bare, {"1", nullptr, nullptr});
        CPPUNIT_ASSERT_EQUAL(std::string("{\"status\":\"ok\",\"version\":\"1\"}"), bare.Dispatch(Req("GET", "/health")).body);
        // `/` answers the JSON index with its links (issue 25), not a 404.
        const auto index = bare.Dispatch(Req("GET", "/"));
        CPPUNIT_ASSERT_EQUAL(200, index.status);
        rapidjson::Document links;
        links.Parse(index.body.c_str());
        CPPUNIT_ASSERT(!links.HasParseError());
        CPPUNIT_ASSERT_EQUAL(std::string("/core/v1/swagger-ui/"), std::string(links["links"]["swagger_ui"].GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("/dashboard/"), std::string(links["links"]["dashboard"].GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("docs/actions.md"), std::string(links["docs"]["actions"].GetString()));
    }
    void testRouteTableIsExposed() {
        Router router;
        AddSystemRoutes(router, {"1", nullptr, nullptr});
        AddAttestationRoutes(router, {});
        AddTestRoutes(router);
        CPPUNIT_ASSERT_EQUAL(std::size_t{7}, router.routes().size());  // `/` (the index) included
        for (const auto& r : router.routes()) {
            CPPUNIT_ASSERT(!r.summary.empty());
            if (!r.response_schema.empty()) {
                rapidjson::Document d;
                d.Parse(r.response_schema.c_str());
                CPPUNIT_ASSERT_MESSAGE(r.path, !d.HasParseError() && d.IsObject());
            }
        }
        auto echo = router.Dispatch(Req("POST", "/core/v1/test/echo", "{\"k\":[1,\"x\"]}", "application/json"));
        CPPUNIT_ASSERT_EQUAL(std::string("{\"echo\":{\"k\":[1,\"x\"]}}"), echo.body);
        auto sleep_bad = Req("GET", "/core/v1/test/sleep");
        sleep_bad.query = "ms=-1";
        CPPUNIT_ASSERT_EQUAL(400, router.Dispatch(sleep_bad).status);
        auto sleep_ok = Req("GET", "/core/v1/test/sleep");
        sleep_ok.query = "ms=1";
        CPPUNIT_ASSERT_EQUAL(200, router.Dispatch(sleep_ok).status);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(RouterTests);
