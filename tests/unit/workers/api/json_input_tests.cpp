// Input checks of the account, usage-key and wallet endpoints, driven through the router with a
// fixed caller and a Service without chain or keyd: every refusal here happens before any I/O,
// and a body that passes reaches the chain step (502 chain_not_configured).
#include <cppunit/extensions/HelperMacros.h>

#include <memory>
#include <string>

#include <rapidjson/document.h>

#include "common/config.h"
#include "workers/api/api.h"

using namespace sigil;
using namespace sigil::workers;

namespace {

const std::string MASTER_KEY = "bWFzdGVyIGtleSBvZiB0aGUgdGVzdCBhY2NvdW50ISE=";

HttpRequest Req(std::string method, std::string path, std::string body = "") {
    HttpRequest r;
    r.method = std::move(method);
    const auto q = path.find('?');
    if (q != std::string::npos) {
        r.query = path.substr(q + 1);
        path.resize(q);
    }
    r.path = std::move(path);
    if (!body.empty()) r.content_type = "application/json";
    r.body = std::move(body);
    r.request_id = "3f2c8a1e-9b4d-4c7e-a1f0-5d6e7b8c9a0b";
    return r;
}

std::string ErrorCode(const HttpResponse& r) {
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("error") || !d["error"].IsObject()) return "<none>";
    const auto& e = d["error"];
    if (!e.HasMember("code") || !e["code"].IsString() || !e.HasMember("message") || !e["message"].IsString()) {
        return "<none>";
    }
    return e["code"].GetString();
}

std::string Ids(std::size_t n) {
    std::string out = "[";
    for (std::size_t i = 0; i < n; ++i) out += (i ? ",1" : "1");
    return out + "]";
}

}  // namespace

class ApiInputTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ApiInputTests);
    CPPUNIT_TEST(testEverySchemaIsJson);
    CPPUNIT_TEST(testNewAccountChecksOptionalBody);
    CPPUNIT_TEST(testAccountExistsNeedsAHeader);
    CPPUNIT_TEST(testAddUsageKeyRefusesBadFields);
    CPPUNIT_TEST(testUsageKeyBodiesNeedTheKey);
    CPPUNIT_TEST(testMasterKeyIsNotAUsageKey);
    CPPUNIT_TEST(testMetadataNeedsNameAndDescription);
    CPPUNIT_TEST(testMembershipRefusesBadIds);
    CPPUNIT_TEST(testListsCheckPagingAndGroup);
    CPPUNIT_TEST(testCreateWalletWithoutKeyd);
    CPPUNIT_TEST(testValidBodiesReachTheChain);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override {
        auto service = Service::Create(common::Config::Defaults(), nullptr, 0);
        CPPUNIT_ASSERT(service.ok());
        m_service = std::move(service).value();
        m_router = std::make_unique<Router>();
        AddAccountRoutes(*m_router, *m_service);
        AddWalletRoutes(*m_router, *m_service);
        const Caller caller{ApiKeyHash("usage"), ApiKeyHash(MASTER_KEY), true};
        m_router->SetAuthenticator([caller](const HttpRequest&, AuthRequirement) -> common::Result<std::any> {
            return std::any(caller);
        });
    }

    void testEverySchemaIsJson() {
        CPPUNIT_ASSERT_EQUAL(std::size_t{13}, m_router->routes().size());
        for (const auto& route : m_router->routes()) {
            for (const std::string* schema : {&route.request_schema, &route.response_schema}) {
                if (schema->empty()) continue;
                rapidjson::Document d;
                d.Parse(schema->c_str());
                CPPUNIT_ASSERT_MESSAGE(route.method + " " + route.path, !d.HasParseError() && d.IsObject());
            }
            CPPUNIT_ASSERT_MESSAGE(route.path, !route.response_schema.empty());
        }
    }

    void testNewAccountChecksOptionalBody() {
        Expect(400, "invalid_account_name", Req("POST", "/core/v1/new_account", R"({"account_name":5})"));
        Expect(400, "invalid_account_description",
               Req("POST", "/core/v1/new_account", R"({"account_description":")" + std::string(5000, 'a') + "\"}"));
        Expect(400, "invalid_body", Req("POST", "/core/v1/new_account", "[1]"));
        // Accepted fields (and none) go on to the chain.
        Expect(502, "chain_not_configured",
               Req("POST", "/core/v1/new_account", R"({"account_name":"n","account_description":"d"})"));
        Expect(502, "chain_not_configured", Req("POST", "/core/v1/new_account"));
    }

    void testAccountExistsNeedsAHeader() {
        Expect(401, "missing_api_key", Req("GET", "/core/v1/account_exists"));
        auto r = Req("GET", "/core/v1/account_exists");
        r.headers["x-api-key"] = std::string(300, 'k');  // can belong to no account: a plain "no"
        const auto response = m_router->Dispatch(r);
        CPPUNIT_ASSERT_EQUAL(200, response.status);
        CPPUNIT_ASSERT_EQUAL(std::string("false"), response.body);
        r.headers["x-api-key"] = MASTER_KEY;
        Expect(502, "chain_not_configured", r);
    }

    void testAddUsageKeyRefusesBadFields() {
        const std::string path = "/core/v1/add_usage_api_key";
        Expect(400, "invalid_can_create_groups", Req("POST", path, R"({"can_create_groups":"yes"})"));
        Expect(400, "invalid_can_create_pkps", Req("POST", path, R"({"can_create_pkps":1})"));
        Expect(400, "invalid_execute_in_groups", Req("POST", path, R"({"execute_in_groups":5})"));
        Expect(400, "invalid_execute_in_groups", Req("POST", path, R"({"execute_in_groups":[-1]})"));
        Expect(400, "invalid_add_pkp_to_groups", Req("POST", path, R"({"add_pkp_to_groups":["x"]})"));
        Expect(400, "invalid_manage_ipfs_ids_in_groups",
               Req("POST", path, R"({"manage_ipfs_ids_in_groups":)" + Ids(101) + "}"));
        Expect(400, "invalid_remove_pkp_from_groups", Req("POST", path, R"({"remove_pkp_from_groups":[1.5]})"));
        Expect(400, "invalid_name", Req("POST", path, R"({"name":")" + std::string(257, 'n') + "\"}"));
        Expect(400, "invalid_description", Req("POST", path, R"({"description":["d"]})"));
        Expect(400, "invalid_expiration", Req("POST", path, R"({"expiration":"soon"})"));
        Expect(400, "invalid_balance", Req("POST", path, R"({"balance":-5})"));
        Expect(400, "invalid_body", Req("POST", path, R"("text")"));
    }

    void testUsageKeyBodiesNeedTheKey() {
        for (const char* p : {"/core/v1/update_usage_api_key", "/core/v1/remove_usage_api_key"}) {
            Expect(400, "missing_usage_api_key", Req("POST", p, "{}"));
            Expect(400, "missing_usage_api_key", Req("POST", p, R"({"usage_api_key":null})"));
            Expect(400, "invalid_usage_api_key", Req("POST", p, R"({"usage_api_key":7})"));
            Expect(400, "invalid_usage_api_key", Req("POST", p, R"({"usage_api_key":""})"));
            Expect(400, "invalid_usage_api_key",
                   Req("POST", p, R"({"usage_api_key":")" + std::string(257, 'k') + "\"}"));
        }
        Expect(400, "invalid_execute_in_groups",
               Req("POST", "/core/v1/update_usage_api_key", R"({"usage_api_key":"k","execute_in_groups":{}})"));
    }

    void testMasterKeyIsNotAUsageKey() {
        for (const char* p : {"/core/v1/update_usage_api_key", "/core/v1/remove_usage_api_key"}) {
            Expect(400, "master_key_not_usage_key", Req("POST", p, R"({"usage_api_key":")" + MASTER_KEY + "\"}"));
        }
        Expect(400, "master_key_not_usage_key",
               Req("POST", "/core/v1/update_usage_api_key_metadata",
                   R"({"usage_api_key":")" + MASTER_KEY + R"(","name":"n","description":"d"})"));
    }

    void testMetadataNeedsNameAndDescription() {
        const std::string path = "/core/v1/update_usage_api_key_metadata";
        Expect(400, "missing_name", Req("POST", path, R"({"usage_api_key":"k","description":"d"})"));
        Expect(400, "missing_description", Req("POST", path, R"({"usage_api_key":"k","name":"n"})"));
        Expect(400, "invalid_description",
               Req("POST", path, R"({"usage_api_key":"k","name":"n","description":")" + std::string(4097, 'd') + "\"}"));
    }

    void testMembershipRefusesBadIds() {
        for (const char* p : {"/core/v1/add_pkp_to_group", "/core/v1/remove_pkp_from_group"}) {
            const std::string pkp = R"("pkp_id":"0x52908400098527886e0f7030069857d2e4169ee7")";
            Expect(400, "missing_group_id", Req("POST", p, "{" + pkp + "}"));
            Expect(400, "invalid_group_id", Req("POST", p, R"({"group_id":0,)" + pkp + "}"));
            Expect(400, "invalid_group_id", Req("POST", p, R"({"group_id":"0x1",)" + pkp + "}"));
            Expect(400, "invalid_group_id", Req("POST", p, R"({"group_id":true,)" + pkp + "}"));
            Expect(400, "missing_pkp_id", Req("POST", p, R"({"group_id":1})"));
            Expect(400, "invalid_pkp_id", Req("POST", p, R"({"group_id":1,"pkp_id":"0x1234"})"));
            Expect(400, "invalid_pkp_id", Req("POST", p, R"({"group_id":1,"pkp_id":42})"));
            // A mixed-case address must carry a valid EIP-55 checksum.
            Expect(400, "invalid_pkp_id",
                   Req("POST", p, R"({"group_id":1,"pkp_id":"0x52908400098527886E0F7030069857D2E4169ee7"})"));
            Expect(415, "unsupported_media_type", [&] {
                auto r = Req("POST", p, "{}");
                r.content_type = "text/plain";
                return r;
            }());
        }
    }

    void testListsCheckPagingAndGroup() {
        Expect(400, "invalid_page_size", Req("GET", "/core/v1/list_api_keys?page_size=101"));
        Expect(400, "invalid_page_size", Req("GET", "/core/v1/list_wallets?page_size=0"));
        Expect(400, "invalid_page_number", Req("GET", "/core/v1/list_wallets?page_number=-1"));
        Expect(400, "missing_group_id", Req("GET", "/core/v1/list_wallets_in_group"));
        Expect(400, "invalid_group_id", Req("GET", "/core/v1/list_wallets_in_group?group_id=abc"));
        Expect(400, "invalid_page_size", Req("GET", "/core/v1/list_wallets_in_group?group_id=1&page_size=x"));
        Expect(502, "chain_not_configured", Req("GET", "/core/v1/list_api_keys?page_number=2&page_size=5"));
        Expect(502, "chain_not_configured", Req("GET", "/core/v1/list_wallets_in_group?group_id=3"));
    }

    void testCreateWalletWithoutKeyd() {
        Expect(400, "invalid_name", Req("POST", "/core/v1/create_wallet", R"({"name":1})"));
        Expect(502, "keyd_not_configured", Req("GET", "/core/v1/create_wallet"));
        Expect(502, "keyd_not_configured", Req("POST", "/core/v1/create_wallet"));
    }

    void testValidBodiesReachTheChain() {
        Expect(502, "chain_not_configured",
               Req("POST", "/core/v1/add_usage_api_key",
                   R"({"name":"ci","description":"","can_create_pkps":true,"execute_in_groups":[0,"7"],)"
                   R"("expiration":"1900000000","balance":10})"));
        Expect(502, "chain_not_configured",
               Req("POST", "/core/v1/update_usage_api_key", R"({"usage_api_key":"k","add_pkp_to_groups":[1,2]})"));
        Expect(502, "chain_not_configured", Req("POST", "/core/v1/remove_usage_api_key", R"({"usage_api_key":"k"})"));
        Expect(502, "chain_not_configured",
               Req("POST", "/core/v1/add_pkp_to_group",
                   R"({"group_id":"12","pkp_id":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"})"));
    }

private:
    void Expect(int status, const std::string& code, const HttpRequest& request) {
        const auto response = m_router->Dispatch(request);
        const std::string what = request.method + " " + request.path + " " + request.body.substr(0, 80) + " -> " +
                                 std::to_string(response.status) + " " + response.body.substr(0, 200);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(what, status, response.status);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(what, code, ErrorCode(response));
    }

    std::unique_ptr<Service> m_service;
    std::unique_ptr<Router> m_router;
};

CPPUNIT_TEST_SUITE_REGISTRATION(ApiInputTests);
