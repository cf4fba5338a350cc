// The API's JSON Schemas from workers/api/schemas/*.json: every entry resolves to plain JSON without
// "$ref", members beside a "$ref" win, and a bad ref yields text the OpenAPI generator refuses.
#include <cppunit/extensions/HelperMacros.h>

#include <string>

#include <rapidjson/document.h>

#include "workers/api/schemas.h"

using namespace sigil::workers;

class SchemasTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SchemasTests);
    CPPUNIT_TEST(testEveryEntryResolvesWithoutRefs);
    CPPUNIT_TEST(testRefSplicesTheReferencedMembers);
    CPPUNIT_TEST(testMembersBesideARefWin);
    CPPUNIT_TEST(testRefSplicesSharedProperties);
    CPPUNIT_TEST(testUnknownRefIsNotJson);
    CPPUNIT_TEST_SUITE_END();

public:
    void testEveryEntryResolvesWithoutRefs() {
        const auto refs = ApiSchemaRefs();
        CPPUNIT_ASSERT(refs.size() > 40);
        for (const auto& ref : refs) {
            const std::string text = ApiSchema(ref);
            rapidjson::Document d;
            d.Parse(text.c_str());
            CPPUNIT_ASSERT_MESSAGE(ref + ": " + text, !d.HasParseError());
            CPPUNIT_ASSERT_MESSAGE(ref + " still holds a $ref", text.find("\"$ref\"") == std::string::npos);
        }
    }

    void testRefSplicesTheReferencedMembers() {
        CPPUNIT_ASSERT_EQUAL(std::string(R"~({"example":{"hashed_cid":"0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e)~"
                                         R"~(5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"},)~"
                                         R"~("type":"object","required":["hashed_cid"],"properties":{"hashed_cid":)~"
                                         R"~({"type":"string","pattern":"^0x[0-9a-fA-F]{64}$",)~"
                                         R"~("description":"0x + keccak256(utf8(CID))"}}})~"),
                             ApiSchema("actions.json#/DeleteActionRequest"));
        // A ref into another file, and one nested inside a referenced entry.
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"type":"object","properties":{"page_number":{"type":"integer",)"
                                         R"("minimum":0,"default":0},"page_size":{"type":"integer","minimum":1,)"
                                         R"("maximum":100,"default":10}}})"),
                             ApiSchema("common.json#/PageQuery"));
    }

    void testMembersBesideARefWin() {
        rapidjson::Document d;
        d.Parse(ApiSchema("accounts.json#/NewAccountResponse").c_str());
        const auto& wallet = d["properties"]["wallet_address"];
        CPPUNIT_ASSERT_EQUAL(std::string("^0x[0-9a-f]{40}$"), std::string(wallet["pattern"].GetString()));
        CPPUNIT_ASSERT_EQUAL(std::string("the owner wallet, whose private key is the decoded api_key"),
                             std::string(wallet["description"].GetString()));
        d.Parse(ApiSchema("actions.json#/ListActionsQuery").c_str());
        CPPUNIT_ASSERT_EQUAL(std::string("0-based page"),
                             std::string(d["properties"]["page_number"]["description"].GetString()));
    }

    void testRefSplicesSharedProperties() {
        rapidjson::Document d;
        d.Parse(ApiSchema("accounts.json#/UpdateUsageKeyRequest").c_str());
        const auto& props = d["properties"];
        // usage_api_key first (written before the spliced settings), then the shared settings in order.
        CPPUNIT_ASSERT_EQUAL(std::string("usage_api_key"), std::string(props.MemberBegin()->name.GetString()));
        CPPUNIT_ASSERT(props.HasMember("execute_in_groups") && props.HasMember("name"));
        CPPUNIT_ASSERT_EQUAL(std::string("unix seconds; 0 = never"),
                             std::string(props["expiration"]["description"].GetString()));
        CPPUNIT_ASSERT_EQUAL(12u, props.MemberCount());
    }

    void testUnknownRefIsNotJson() {
        for (const char* ref : {"nope.json#/X", "common.json#/Nope", "#/Name", "common.json#Name"}) {
            rapidjson::Document d;
            d.Parse(ApiSchema(ref).c_str());
            CPPUNIT_ASSERT_MESSAGE(ref, d.HasParseError());
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SchemasTests);
