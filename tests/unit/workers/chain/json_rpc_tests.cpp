#include <cppunit/extensions/HelperMacros.h>

#include "workers/chain/json_rpc.h"
#include "common/json.h"

using namespace sigil::workers;
using sigil::common::ErrorKind;

class JsonRpcTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(JsonRpcTests);
    CPPUNIT_TEST(testBuildsRequest);
    CPPUNIT_TEST(testParsesResult);
    CPPUNIT_TEST(testParsesRevertError);
    CPPUNIT_TEST(testRejectsMismatchedId);
    CPPUNIT_TEST(testRejectsMalformedBodies);
    CPPUNIT_TEST(testQuantities);
    CPPUNIT_TEST(testQuotesStrings);
    CPPUNIT_TEST_SUITE_END();

public:
    void testBuildsRequest() {
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]})"),
                             BuildRpcRequest("eth_chainId", "", 7));
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"jsonrpc":"2.0","id":1,"method":"eth_call","params":[1,"x"]})"),
                             BuildRpcRequest("eth_call", R"([1,"x"])", 1));
    }
    void testParsesResult() {
        auto r = ParseRpcResponse(R"({"jsonrpc":"2.0","id":3,"result":"0x7a69"})", 3);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(!r->is_error);
        CPPUNIT_ASSERT_EQUAL(std::string("\"0x7a69\""), r->result_json);
        CPPUNIT_ASSERT_EQUAL(std::string("0x7a69"), *ResultString(r->result_json));
        auto n = ParseRpcResponse(R"({"jsonrpc":"2.0","id":4,"result":null})", 4);
        CPPUNIT_ASSERT(n.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("null"), n->result_json);
    }
    void testParsesRevertError() {
        auto r = ParseRpcResponse(
            R"({"jsonrpc":"2.0","id":9,"error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}})", 9);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(r->is_error);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{3}, r->error_code);
        CPPUNIT_ASSERT(r->revert_data.has_value());
        CPPUNIT_ASSERT_EQUAL(std::size_t{4}, r->revert_data->size());
        auto no_data = ParseRpcResponse(R"({"id":9,"error":{"code":-32000,"message":"nonce too low"}})", 9);
        CPPUNIT_ASSERT(no_data.ok());
        CPPUNIT_ASSERT(!no_data->revert_data.has_value());
    }
    void testRejectsMismatchedId() {
        auto r = ParseRpcResponse(R"({"jsonrpc":"2.0","id":2,"result":"0x1"})", 3);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT(r.error().kind == ErrorKind::Unavailable);
    }
    void testRejectsMalformedBodies() {
        for (const char* body : {"", "[]", "null", "{", R"({"id":1})", R"({"id":"1","result":1})",
                                 R"({"id":1,"error":"boom"})", "<html>502</html>"}) {
            CPPUNIT_ASSERT_MESSAGE(body, !ParseRpcResponse(body, 1).ok());
        }
    }
    void testQuantities() {
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, *ParseQuantity("0x0"));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{31337}, *ParseQuantity("0x7a69"));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0xffffffffffffffffULL}, *ParseQuantity("0xffffffffffffffff"));
        CPPUNIT_ASSERT(!ParseQuantity("0x10000000000000000").ok());
        CPPUNIT_ASSERT(!ParseQuantity("0x").ok());
        CPPUNIT_ASSERT(!ParseQuantity("7a69").ok());
        CPPUNIT_ASSERT(!ParseQuantity("0xzz").ok());
        CPPUNIT_ASSERT_EQUAL(std::string("0x0"), FormatQuantity(0));
        CPPUNIT_ASSERT_EQUAL(std::string("0x7a69"), FormatQuantity(31337));
        for (std::uint64_t v : {1ull, 15ull, 16ull, 255ull, 1ull << 40, ~0ull}) {
            CPPUNIT_ASSERT_EQUAL(v, *ParseQuantity(FormatQuantity(v)));
        }
    }
    void testQuotesStrings() {
        CPPUNIT_ASSERT_EQUAL(std::string("\"a\\\"b\\\\c\\n\""), sigil::common::JsonQuote("a\"b\\c\n"));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(JsonRpcTests);
