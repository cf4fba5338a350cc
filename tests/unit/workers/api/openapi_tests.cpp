// The OpenAPI generator, and the routes of api_groups/api_actions/api_config that answer without a
// chain: their input validation (every refusal a 400 naming the field), the action CID, the limits.
#include <cppunit/extensions/HelperMacros.h>

#include <memory>
#include <set>
#include <string>

#include <rapidjson/document.h>

#include "common/config.h"
#include "workers/api/api.h"
#include "workers/http/openapi.h"
#include "workers/http/router.h"
#include "workers/api/attestation.h"
#include "workers/api/system_routes.h"

using namespace sigil;
using namespace sigil::workers;

namespace {

HttpRequest Req(std::string method, std::string path, std::string body = "", std::string query = "") {
    HttpRequest r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.body = std::move(body);
    r.query = std::move(query);
    if (!r.body.empty()) r.content_type = "application/json";
    r.request_id = "3f2c8a1e-9b4d-4c7e-a1f0-5d6e7b8c9a0b";
    return r;
}

std::string ErrorCode(const HttpResponse& r) {
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("error") || !d["error"].IsObject()) return "<not an error>";
    const auto& e = d["error"];
    if (!e.HasMember("code") || !e["code"].IsString() || !e.HasMember("message") || !e["message"].IsString()) {
        return "<malformed error>";
    }
    return e["code"].GetString();
}

common::Result<HttpResponse> Ok(RequestContext&) { return JsonResponse(200, "{}"); }

Router SmallRouter() {
    Router router;
    router.Add({"GET", "/core/v1/list_things", AuthRequirement::ApiKey, BodyKind::None, Ok, "List things", "things",
                R"({"type":"object","required":["kind"],"properties":{"kind":{"type":"string","description":"which"},)"
                R"("page_size":{"type":"integer"}}})",
                R"({"type":"array","items":{"type":"string"}})"});
    router.Add({"POST", "/core/v1/add_thing", AuthRequirement::AccountOwner, BodyKind::Json, Ok, "Add a thing", "things",
                R"({"type":"object","required":["name"],"properties":{"name":{"type":"string"}}})",
                R"({"type":"object","properties":{"success":{"type":"boolean"}}})"});
    router.Add({"GET", "/core/v1/public", AuthRequirement::None, BodyKind::None, Ok, "Public", "", "", ""});
    router.Add({"POST", "/core/v1/public", AuthRequirement::None, BodyKind::OptionalJson, Ok, "Public post", "", "", ""});
    return router;
}

const rapidjson::Value& Get(const rapidjson::Value& v, const char* key) {
    CPPUNIT_ASSERT_MESSAGE(std::string("missing member ") + key, v.IsObject() && v.HasMember(key));
    return v[key];
}

bool HasApiKeyParam(const rapidjson::Value& op) {
    if (!op.HasMember("parameters")) return false;
    for (const auto& p : op["parameters"].GetArray()) {
        if (std::string(p["name"].GetString()) == "X-Api-Key" && std::string(p["in"].GetString()) == "header") return true;
    }
    return false;
}

// A router as the worker builds it, but without chain or keyd: handlers reach their input checks and
// then fail with chain_not_configured. The authenticator is replaced by one that accepts everyone.
struct RealRouter {
    std::unique_ptr<Service> service;
    Router router;

    explicit RealRouter(bool fake_auth = true) {
        auto s = Service::Create(common::Config::Defaults(), nullptr, 0);
        CPPUNIT_ASSERT(s.ok());
        service = std::move(s).value();
        AddSystemRoutes(router, {"1.2.3", nullptr, nullptr});
        AddAttestationRoutes(router, {});
        AddApiRoutes(router, *service);
        if (fake_auth) {
            router.SetAuthenticator([](const HttpRequest&, AuthRequirement) -> common::Result<std::any> {
                Caller c;
                c.key_hash = common::Uint256::FromUint64(7);
                c.account_hash = common::Uint256::FromUint64(7);
                c.is_owner = true;
                return std::any(c);
            });
        }
    }
    HttpResponse Post(const std::string& path, const std::string& body) {
        return router.Dispatch(Req("POST", "/core/v1/" + path, body));
    }
    HttpResponse GetQ(const std::string& path, const std::string& query = "") {
        return router.Dispatch(Req("GET", "/core/v1/" + path, "", query));
    }
};

}  // namespace

class OpenApiTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(OpenApiTests);
    CPPUNIT_TEST(testSmallRouterDocument);
    CPPUNIT_TEST(testEveryRouteDeclaresTheChargeBillingApplied);
    CPPUNIT_TEST(testQueryParametersAndRequestBody);
    CPPUNIT_TEST(testErrorResponsesFollowAuthAndBody);
    CPPUNIT_TEST(testChargedRoutesAnswer402AndTheRunBodyIsOneOf);
    CPPUNIT_TEST(testInvalidSchemaIsRefused);
    CPPUNIT_TEST(testEveryRealRouteIsDocumented);
    CPPUNIT_TEST(testLaterRoutesAppearBecauseGenerationIsLazy);
    CPPUNIT_TEST(testActionIpfsIdKnownAnswers);
    CPPUNIT_TEST(testActionIpfsIdRefusesNonStringBodies);
    CPPUNIT_TEST(testActionClientConfig);
    CPPUNIT_TEST(testGroupInputIsValidated);
    CPPUNIT_TEST(testActionInputIsValidated);
    CPPUNIT_TEST(testListQueriesAreValidated);
    CPPUNIT_TEST(testPublicConfigWithoutChainIs502);
    CPPUNIT_TEST(testAuthenticatedRoutesNeedAKey);
    CPPUNIT_TEST_SUITE_END();

public:
    // The charges the routes declare are the ones the billing layer applied when it matched paths
    // (before Route::charge): every authenticated POST but the run, and GET create_wallet, is a relayed
    // write; conversion also moves the balance; new_account grants the starter credit; nothing else.
    void testEveryRouteDeclaresTheChargeBillingApplied() {
        RealRouter real;
        std::size_t writes = 0;
        for (const auto& route : real.router.routes()) {
            Charge want = Charge::None;
            if (route.path == "/core/v1/new_account") {
                want = Charge::StarterCredit;
            } else if (route.path == "/core/v1/sigil_action" || route.path == "/core/v1/lit_action") {
                want = Charge::RunTime;  // its handler charges the run's seconds (declared for OpenAPI's 402)
            } else if (route.path == "/core/v1/convert_to_chain_secured_account") {
                want = Charge::WriteMovingBalance;
            } else if (route.auth != AuthRequirement::None && route.path != "/core/v1/sigil_action" &&
                       route.path != "/core/v1/lit_action" &&
                       (route.method == "POST" || route.path == "/core/v1/create_wallet")) {
                want = Charge::Write;
                ++writes;
            }
            CPPUNIT_ASSERT_MESSAGE(route.method + " " + route.path, route.charge == want);
        }
        CPPUNIT_ASSERT(writes >= 15);
    }

    void testSmallRouterDocument() {
        auto router = SmallRouter();
        auto text = GenerateOpenApi(router.routes(), {"T", "9", "d"});
        CPPUNIT_ASSERT(text.ok());
        rapidjson::Document d;
        d.Parse(text->c_str());
        CPPUNIT_ASSERT(!d.HasParseError());
        CPPUNIT_ASSERT_EQUAL(std::string("3.0.3"), std::string(Get(d, "openapi").GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("T"), std::string(Get(Get(d, "info"), "title").GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("9"), std::string(Get(Get(d, "info"), "version").GetString()));
        const auto& paths = Get(d, "paths");
        CPPUNIT_ASSERT_EQUAL(3u, paths.MemberCount());
        const auto& list = Get(Get(paths, "/core/v1/list_things"), "get");
        CPPUNIT_ASSERT_EQUAL(std::string("list_things"), std::string(Get(list, "operationId").GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("List things"), std::string(Get(list, "summary").GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("things"), std::string(Get(list, "tags")[0].GetString()));
        CPPUNIT_ASSERT(HasApiKeyParam(list));
        CPPUNIT_ASSERT_EQUAL(2u, Get(list, "security").Size());
        const auto& pub = Get(paths, "/core/v1/public");
        CPPUNIT_ASSERT(pub.HasMember("get") && pub.HasMember("post"));
        CPPUNIT_ASSERT(!HasApiKeyParam(pub["get"]) && !pub["get"].HasMember("security"));
        CPPUNIT_ASSERT(!pub["get"].HasMember("tags"));
        // Two routes share the last segment: operation ids stay unique.
        CPPUNIT_ASSERT_EQUAL(std::string("public"), std::string(Get(pub["get"], "operationId").GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("public_post"), std::string(Get(pub["post"], "operationId").GetString()));
        const auto& schemes = Get(Get(d, "components"), "securitySchemes");
        CPPUNIT_ASSERT_EQUAL(std::string("X-Api-Key"), std::string(Get(Get(schemes, "ApiKeyHeader"), "name").GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("bearer"), std::string(Get(Get(schemes, "BearerAuth"), "scheme").GetString()));
        const auto& err = Get(Get(Get(d, "components"), "schemas"), "Error");
        CPPUNIT_ASSERT(Get(Get(err, "properties"), "error").IsObject());
    }

    void testQueryParametersAndRequestBody() {
        auto router = SmallRouter();
        rapidjson::Document d;
        d.Parse(GenerateOpenApi(router.routes())->c_str());
        const auto& list = d["paths"]["/core/v1/list_things"]["get"];
        CPPUNIT_ASSERT(!list.HasMember("requestBody"));
        const auto& params = list["parameters"];
        CPPUNIT_ASSERT_EQUAL(3u, params.Size());  // kind, page_size, X-Api-Key
        CPPUNIT_ASSERT_EQUAL(std::string("kind"), std::string(params[0]["name"].GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("query"), std::string(params[0]["in"].GetString()));
        CPPUNIT_ASSERT(params[0]["required"].GetBool());
        CPPUNIT_ASSERT_EQUAL(std::string("which"), std::string(params[0]["description"].GetString()));
        CPPUNIT_ASSERT(!params[1]["required"].GetBool());
        CPPUNIT_ASSERT_EQUAL(std::string("integer"), std::string(params[1]["schema"]["type"].GetString()));
        const auto& ok_schema = list["responses"]["200"]["content"]["application/json"]["schema"];
        CPPUNIT_ASSERT_EQUAL(std::string("array"), std::string(ok_schema["type"].GetString()));

        const auto& add = d["paths"]["/core/v1/add_thing"]["post"];
        CPPUNIT_ASSERT(add["requestBody"]["required"].GetBool());
        const auto& body = add["requestBody"]["content"]["application/json"]["schema"];
        CPPUNIT_ASSERT_EQUAL(std::string("name"), std::string(body["required"][0].GetString()));
        const auto& opt = d["paths"]["/core/v1/public"]["post"];
        CPPUNIT_ASSERT(!opt["requestBody"]["required"].GetBool());
        // No response schema: a 200 without content.
        CPPUNIT_ASSERT(!d["paths"]["/core/v1/public"]["get"]["responses"]["200"].HasMember("content"));
    }

    void testErrorResponsesFollowAuthAndBody() {
        auto router = SmallRouter();
        rapidjson::Document d;
        d.Parse(GenerateOpenApi(router.routes())->c_str());
        const auto& add = d["paths"]["/core/v1/add_thing"]["post"]["responses"];
        for (const char* s : {"400", "401", "403", "404", "409", "413", "415", "422", "502", "504", "default"}) {
            CPPUNIT_ASSERT_MESSAGE(s, add.HasMember(s));
            CPPUNIT_ASSERT_EQUAL(std::string("#/components/schemas/Error"),
                                 std::string(add[s]["content"]["application/json"]["schema"]["$ref"].GetString()));
        }
        const auto& list = d["paths"]["/core/v1/list_things"]["get"]["responses"];
        CPPUNIT_ASSERT(list.HasMember("400") && list.HasMember("401") && list.HasMember("403"));
        CPPUNIT_ASSERT(!list.HasMember("413") && !list.HasMember("422") && !list.HasMember("409"));
        const auto& pub = d["paths"]["/core/v1/public"]["get"]["responses"];
        CPPUNIT_ASSERT(!pub.HasMember("400") && !pub.HasMember("401") && !pub.HasMember("403"));
        CPPUNIT_ASSERT(pub.HasMember("default"));
        const auto& pub_post = d["paths"]["/core/v1/public"]["post"]["responses"];
        CPPUNIT_ASSERT(pub_post.HasMember("400") && pub_post.HasMember("422") && !pub_post.HasMember("401"));
        // Every route may meet nginx's request bound (503); only authenticated ones a rate or concurrency
        // limit (429); an uncharged route never 402. Each error answer carries an example body.
        CPPUNIT_ASSERT(pub.HasMember("503") && !pub.HasMember("429") && !pub.HasMember("402"));
        CPPUNIT_ASSERT(add.HasMember("429") && add.HasMember("503") && !add.HasMember("402"));
        CPPUNIT_ASSERT_EQUAL(std::string("overloaded"),
                             std::string(add["503"]["content"]["application/json"]["example"]["error"]["code"].GetString()));
        for (auto it = add.MemberBegin(); it != add.MemberEnd(); ++it) {
            const std::string status = it->name.GetString();
            if (status == "200" || status == "default") continue;
            CPPUNIT_ASSERT_MESSAGE(status, it->value["content"]["application/json"].HasMember("example"));
        }
    }

    // A charged route (a relayed write, a run) documents 402; the run's body is exactly one of code and
    // ipfs_id (oneOf), with an example that sends only one, as Swagger UI's "Try it out" does.
    void testChargedRoutesAnswer402AndTheRunBodyIsOneOf() {
        RealRouter real;
        rapidjson::Document d;
        d.Parse(GenerateOpenApi(real.router.routes())->c_str());
        const auto& paths = d["paths"];
        CPPUNIT_ASSERT(paths["/core/v1/add_group"]["post"]["responses"].HasMember("402"));
        CPPUNIT_ASSERT(paths["/core/v1/sigil_action"]["post"]["responses"].HasMember("402"));
        CPPUNIT_ASSERT(paths["/core/v1/sigil_action"]["post"]["responses"].HasMember("429"));
        CPPUNIT_ASSERT(!paths["/core/v1/list_groups"]["get"]["responses"].HasMember("402"));
        const auto& body = paths["/core/v1/sigil_action"]["post"]["requestBody"]["content"]["application/json"]["schema"];
        CPPUNIT_ASSERT_EQUAL(2u, body["oneOf"].Size());
        CPPUNIT_ASSERT(body["example"].HasMember("code") && !body["example"].HasMember("ipfs_id"));
        // Every JSON request body comes with an example (Swagger UI's Try it out starts from it).
        std::size_t bodies = 0;
        for (auto p = paths.MemberBegin(); p != paths.MemberEnd(); ++p) {
            for (auto op = p->value.MemberBegin(); op != p->value.MemberEnd(); ++op) {
                if (!op->value.HasMember("requestBody")) continue;
                const std::string where = std::string(op->name.GetString()) + " " + p->name.GetString();
                if (where.find("/test/") != std::string::npos) continue;  // test-only routes
                const auto& schema = op->value["requestBody"]["content"]["application/json"]["schema"];
                CPPUNIT_ASSERT_MESSAGE(where, schema.HasMember("example"));
                ++bodies;
            }
        }
        CPPUNIT_ASSERT_MESSAGE(std::to_string(bodies), bodies >= 20);
        // So does every success answer of the API (the attestation's, the OpenAPI document itself, the
        // chain config and the action limits excepted: their values are the deployment's).
        std::size_t answers = 0;
        for (auto p = paths.MemberBegin(); p != paths.MemberEnd(); ++p) {
            const std::string path = p->name.GetString();
            if (path.find("/test/") != std::string::npos || path == "/attestation" || path == "/info" ||
                path == "/core/v1/openapi.json" || path == "/core/v1/get_node_chain_config" ||
                path == "/core/v1/get_action_client_config") {
                continue;
            }
            for (auto op = p->value.MemberBegin(); op != p->value.MemberEnd(); ++op) {
                const auto& ok = op->value["responses"]["200"];
                if (!ok.HasMember("content")) continue;
                CPPUNIT_ASSERT_MESSAGE(std::string(op->name.GetString()) + " " + path,
                                       ok["content"]["application/json"]["schema"].HasMember("example"));
                ++answers;
            }
        }
        CPPUNIT_ASSERT_MESSAGE(std::to_string(answers), answers >= 30);
    }

    void testInvalidSchemaIsRefused() {
        Router router;
        router.Add({"GET", "/x", AuthRequirement::None, BodyKind::None, Ok, "x", "", "", "{not json"});
        auto r = GenerateOpenApi(router.routes());
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_route_schema"), r.error().code);
        CPPUNIT_ASSERT(r.error().message.find("GET /x") != std::string::npos);
        Router arr;
        arr.Add({"POST", "/y", AuthRequirement::None, BodyKind::Json, Ok, "y", "", "[1]", ""});
        CPPUNIT_ASSERT(!GenerateOpenApi(arr.routes()).ok());
    }

    void testEveryRealRouteIsDocumented() {
        RealRouter real(false);
        AddTestRoutes(real.router);
        auto resp = real.GetQ("openapi.json");
        CPPUNIT_ASSERT_EQUAL(200, resp.status);
        rapidjson::Document d;
        d.Parse(resp.body.c_str());
        CPPUNIT_ASSERT(!d.HasParseError() && d.IsObject());
        const auto& paths = d["paths"];
        std::set<std::string> ids;
        std::size_t operations = 0;
        for (const auto& route : real.router.routes()) {
            std::string method = route.method;
            for (auto& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            CPPUNIT_ASSERT_MESSAGE(route.path, paths.HasMember(route.path.c_str()));
            CPPUNIT_ASSERT_MESSAGE(route.method + " " + route.path, paths[route.path.c_str()].HasMember(method.c_str()));
            const auto& op = paths[route.path.c_str()][method.c_str()];
            CPPUNIT_ASSERT_MESSAGE(route.path, ids.insert(op["operationId"].GetString()).second);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(route.path, route.auth != AuthRequirement::None, HasApiKeyParam(op));
            CPPUNIT_ASSERT_MESSAGE(route.path, !route.summary.empty());
            ++operations;
        }
        std::size_t documented = 0;
        for (const auto& p : paths.GetObject()) documented += p.value.MemberCount();
        CPPUNIT_ASSERT_EQUAL(operations, documented);
        // This file's own routes, each with its schemas.
        for (const char* p : {"/core/v1/add_group", "/core/v1/update_group", "/core/v1/remove_group",
                              "/core/v1/list_groups", "/core/v1/add_action", "/core/v1/update_action_metadata",
                              "/core/v1/delete_action", "/core/v1/add_action_to_group",
                              "/core/v1/remove_action_from_group", "/core/v1/list_actions",
                              "/core/v1/get_sigil_action_ipfs_id", "/core/v1/get_node_chain_config",
                              "/core/v1/get_api_payers", "/core/v1/get_admin_api_payer",
                              "/core/v1/get_action_client_config", "/core/v1/openapi.json", "/health",
                              "/core/v1/test/echo"}) {
            CPPUNIT_ASSERT_MESSAGE(p, paths.HasMember(p));
        }
        for (const auto& route : real.router.routes()) {
            if (route.path.rfind("/core/v1/test/", 0) == 0 || route.path == "/attestation" || route.path == "/info") continue;
            CPPUNIT_ASSERT_MESSAGE(route.path + " has no response schema", !route.response_schema.empty());
        }
        const auto& list_actions = paths["/core/v1/list_actions"]["get"]["parameters"];
        CPPUNIT_ASSERT_EQUAL(std::string("group_id"), std::string(list_actions[0]["name"].GetString()));
        CPPUNIT_ASSERT(!list_actions[0]["required"].GetBool());
    }

    void testLaterRoutesAppearBecauseGenerationIsLazy() {
        RealRouter real;
        real.router.Add({"GET", "/core/v1/added_later", AuthRequirement::None, BodyKind::None, Ok, "later", "", "", ""});
        auto first = real.GetQ("openapi.json");
        CPPUNIT_ASSERT(first.body.find("/core/v1/added_later") != std::string::npos);
        // Generated once: the same text again.
        CPPUNIT_ASSERT_EQUAL(first.body, real.GetQ("openapi.json").body);
    }

    void testActionIpfsIdKnownAnswers() {
        // Vectors from tests/data/cid_vectors.txt (kubo / ipfs-only-hash).
        RealRouter real;
        auto r = real.Post("get_sigil_action_ipfs_id", "\"console.log(\\\"hello\\\")\"");
        CPPUNIT_ASSERT_EQUAL(200, r.status);
        CPPUNIT_ASSERT_EQUAL(std::string("\"QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL\""), r.body);
        auto empty = real.Post("get_sigil_action_ipfs_id", R"("")");
        CPPUNIT_ASSERT_EQUAL(std::string("\"QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH\""), empty.body);
    }

    void testActionIpfsIdRefusesNonStringBodies() {
        RealRouter real;
        for (const char* body : {R"({"code":"x"})", "[\"x\"]", "42", "true", "null"}) {
            auto r = real.Post("get_sigil_action_ipfs_id", body);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 400, r.status);
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_body"), ErrorCode(r));
        }
        CPPUNIT_ASSERT_EQUAL(422, real.Post("get_sigil_action_ipfs_id", "\"unterminated").status);
        auto no_type = Req("POST", "/core/v1/get_sigil_action_ipfs_id", "\"x\"");
        no_type.content_type = "text/plain";
        CPPUNIT_ASSERT_EQUAL(415, real.router.Dispatch(no_type).status);
    }

    void testActionClientConfig() {
        RealRouter real;
        auto r = real.GetQ("get_action_client_config");
        CPPUNIT_ASSERT_EQUAL(200, r.status);
        rapidjson::Document d;
        d.Parse(r.body.c_str());
        CPPUNIT_ASSERT(!d.HasParseError());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{30000}, d["timeout_ms"].GetUint64());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{64} << 20, d["memory_limit_bytes"].GetUint64());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{16} << 20, d["max_code_bytes"].GetUint64());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{65536}, d["max_js_params_bytes"].GetUint64());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{102400}, d["max_response_bytes"].GetUint64());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{102400}, d["max_console_log_bytes"].GetUint64());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{50}, d["max_fetch_count"].GetUint64());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{10}, d["max_key_requests"].GetUint64());
        // The runtime's level, from the build (runtime_level.h).
        const auto& runtime = d["runtime"];
        CPPUNIT_ASSERT_EQUAL(std::string("duktape "), std::string(runtime["engine"].GetString()).substr(0, 8));
        CPPUNIT_ASSERT_EQUAL(std::string("5."), std::string(runtime["ethers_version"].GetString()).substr(0, 2));
        CPPUNIT_ASSERT(runtime["syntax_level"].IsString());
        bool has_url = false;
        for (const auto& g : runtime["web_globals"].GetArray()) has_url = has_url || std::string(g.GetString()) == "URL";
        CPPUNIT_ASSERT(has_url);
    }

    void testGroupInputIsValidated() {
        RealRouter real;
        const std::string long_name(257, 'n');
        std::string many_pkps = "[";
        for (int i = 0; i < 101; ++i) many_pkps += std::string(i ? "," : "") + "\"0x" + std::string(40, 'a') + "\"";
        many_pkps += "]";
        const std::pair<std::string, std::string> cases[] = {
            {"[]", "invalid_body"},
            {R"({"group_description":"d"})", "missing_group_name"},
            {R"({"group_name":5,"group_description":"d"})", "invalid_group_name"},
            {R"({"group_name":")" + long_name + R"(","group_description":"d"})", "invalid_group_name"},
            {R"({"group_name":"n"})", "missing_group_description"},
            {R"({"group_name":"n","group_description":"d","pkp_ids_permitted":"0x00"})", "invalid_pkp_ids_permitted"},
            {R"({"group_name":"n","group_description":"d","pkp_ids_permitted":)" + many_pkps + "}",
             "invalid_pkp_ids_permitted"},
            {R"({"group_name":"n","group_description":"d","cid_hashes_permitted":["QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL"]})",
             "invalid_cid_hashes_permitted"},
        };
        for (const auto& [body, code] : cases) {
            auto r = real.Post("add_group", body);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 400, r.status);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(body, code, ErrorCode(r));
        }
        // Valid input gets past validation to the (absent) chain.
        auto ok = real.Post("add_group", R"({"group_name":"n","group_description":"d","pkp_ids_permitted":[],)"
                                         R"("cid_hashes_permitted":["0x)" + std::string(64, 'a') + "\"]}");
        CPPUNIT_ASSERT_EQUAL(std::string("chain_not_configured"), ErrorCode(ok));
        CPPUNIT_ASSERT_EQUAL(502, ok.status);

        CPPUNIT_ASSERT_EQUAL(std::string("missing_group_id"), ErrorCode(real.Post("update_group", R"({"name":"n","description":"d"})")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_group_id"),
                             ErrorCode(real.Post("update_group", R"({"group_id":0,"name":"n","description":"d"})")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_group_id"),
                             ErrorCode(real.Post("update_group", R"({"group_id":"abc","name":"n","description":"d"})")));
        CPPUNIT_ASSERT_EQUAL(std::string("missing_name"), ErrorCode(real.Post("update_group", R"({"group_id":1,"description":"d"})")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_description"),
                             ErrorCode(real.Post("update_group", R"({"group_id":1,"name":"n","description":[]})")));
        CPPUNIT_ASSERT_EQUAL(std::string("chain_not_configured"),
                             ErrorCode(real.Post("update_group", R"({"group_id":"3","name":"n","description":"d","pkp_ids_permitted":[],"cid_hashes_permitted":[]})")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_group_id"), ErrorCode(real.Post("remove_group", R"({"group_id":-1})")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_group_id"), ErrorCode(real.Post("remove_group", R"({"group_id":1.5})")));
        CPPUNIT_ASSERT_EQUAL(std::string("chain_not_configured"), ErrorCode(real.Post("remove_group", R"({"group_id":"12"})")));
        CPPUNIT_ASSERT_EQUAL(std::string("chain_not_configured"), ErrorCode(real.Post("remove_group", R"({"group_id":12})")));
    }

    void testActionInputIsValidated() {
        RealRouter real;
        const std::string cid = "QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL";
        const std::string hash = "0x" + std::string(64, 'b');
        const std::pair<std::string, std::pair<std::string, std::string>> cases[] = {
            {"add_action", {R"({"name":"n","description":"d"})", "missing_action_ipfs_cid"}},
            {"add_action", {R"({"action_ipfs_cid":"notacid","name":"n","description":"d"})", "invalid_action_ipfs_cid"}},
            {"add_action", {R"({"action_ipfs_cid":")" + cid + R"(","name":"n","description":"x)" +
                                std::string(4096, 'x') + "\"}",
                            "invalid_description"}},
            {"add_action", {R"({"action_ipfs_cid":")" + cid + R"(","description":"d"})", "missing_name"}},
            {"update_action_metadata", {R"({"hashed_cid":")" + cid + R"(","name":"n","description":"d"})", "invalid_hashed_cid"}},
            {"update_action_metadata", {R"({"hashed_cid":")" + hash + R"(","name":true,"description":"d"})", "invalid_name"}},
            {"delete_action", {R"({})", "missing_hashed_cid"}},
            {"delete_action", {R"({"hashed_cid":"0x1234"})", "invalid_hashed_cid"}},
            {"add_action_to_group", {R"({"group_id":1,"action_ipfs_cid":")" + hash + "\"}", "invalid_action_ipfs_cid"}},
            {"add_action_to_group", {R"({"action_ipfs_cid":")" + cid + "\"}", "missing_group_id"}},
            {"remove_action_from_group", {R"({"group_id":1,"hashed_cid":")" + cid + "\"}", "invalid_hashed_cid"}},
            {"remove_action_from_group", {R"({"group_id":"1x","hashed_cid":")" + hash + "\"}", "invalid_group_id"}},
        };
        for (const auto& [path, c] : cases) {
            auto r = real.Post(path, c.first);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(path + " " + c.first.substr(0, 80), 400, r.status);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(path + " " + c.first.substr(0, 80), c.second, ErrorCode(r));
        }
        for (const auto& [path, body] : std::initializer_list<std::pair<std::string, std::string>>{
                 {"add_action", R"({"action_ipfs_cid":")" + cid + R"(","name":"n","description":"d"})"},
                 {"update_action_metadata", R"({"hashed_cid":")" + hash + R"(","name":"n","description":"d"})"},
                 {"delete_action", R"({"hashed_cid":")" + hash + "\"}"},
                 {"add_action_to_group", R"({"group_id":"2","action_ipfs_cid":")" + cid + "\"}"},
                 {"remove_action_from_group", R"({"group_id":2,"hashed_cid":")" + hash + "\"}"}}) {
            CPPUNIT_ASSERT_EQUAL_MESSAGE(path, std::string("chain_not_configured"), ErrorCode(real.Post(path, body)));
        }
    }

    void testListQueriesAreValidated() {
        RealRouter real;
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_page_size"), ErrorCode(real.GetQ("list_groups", "page_size=0")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_page_size"), ErrorCode(real.GetQ("list_groups", "page_size=101")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_page_number"), ErrorCode(real.GetQ("list_groups", "page_number=-1")));
        CPPUNIT_ASSERT_EQUAL(std::string("chain_not_configured"), ErrorCode(real.GetQ("list_groups", "page_number=2&page_size=5")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_group_id"), ErrorCode(real.GetQ("list_actions", "group_id=x")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_group_id"), ErrorCode(real.GetQ("list_actions", "group_id=0")));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_page_size"), ErrorCode(real.GetQ("list_actions", "group_id=1&page_size=abc")));
        CPPUNIT_ASSERT_EQUAL(std::string("chain_not_configured"), ErrorCode(real.GetQ("list_actions", "group_id=1")));
        CPPUNIT_ASSERT_EQUAL(std::string("chain_not_configured"), ErrorCode(real.GetQ("list_actions")));
    }

    void testPublicConfigWithoutChainIs502() {
        RealRouter real;
        for (const char* p : {"get_node_chain_config", "get_api_payers", "get_admin_api_payer"}) {
            auto r = real.GetQ(p);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(p, 502, r.status);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(p, std::string("chain_not_configured"), ErrorCode(r));
        }
    }

    void testAuthenticatedRoutesNeedAKey() {
        RealRouter real(false);
        auto r = real.GetQ("list_groups");
        CPPUNIT_ASSERT_EQUAL(401, r.status);
        CPPUNIT_ASSERT_EQUAL(std::string("missing_api_key"), ErrorCode(r));
        // Public routes still answer without one.
        CPPUNIT_ASSERT_EQUAL(200, real.GetQ("get_action_client_config").status);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(OpenApiTests);
