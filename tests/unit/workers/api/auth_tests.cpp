// API-key extraction: which header wins, trimming, the Bearer scheme, refusals, and that the key
// comes back in a wiping SecretBytes (the master key is the owner wallet's private key).
#include <cppunit/extensions/HelperMacros.h>

#include <string>

#include "common/hex.h"
#include "workers/api/auth.h"

using namespace sigil::workers;

namespace {

HttpRequest With(std::initializer_list<std::pair<const std::string, std::string>> headers) {
    HttpRequest r;
    r.headers = headers;
    return r;
}

std::string KeyOf(const HttpRequest& r) {
    auto key = ExtractApiKey(r);
    CPPUNIT_ASSERT_MESSAGE(key.ok() ? "" : key.error().message, key.ok());
    return std::string(key->text());
}

std::string ErrorOf(const HttpRequest& r) {
    auto key = ExtractApiKey(r);
    CPPUNIT_ASSERT(!key.ok());
    return key.error().code;
}

}  // namespace

class AuthTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(AuthTests);
    CPPUNIT_TEST(testHeadersAndTrimming);
    CPPUNIT_TEST(testRefusals);
    CPPUNIT_TEST(testHashIsKeccakOfTheText);
    CPPUNIT_TEST_SUITE_END();

public:
    void testHeadersAndTrimming() {
        CPPUNIT_ASSERT_EQUAL(std::string("abc="), KeyOf(With({{"x-api-key", " \tabc= "}})));
        CPPUNIT_ASSERT_EQUAL(std::string("tok"), KeyOf(With({{"authorization", "Bearer tok"}})));
        CPPUNIT_ASSERT_EQUAL(std::string("tok"), KeyOf(With({{"authorization", "  bEaReR\t tok  "}})));
        // X-Api-Key wins; an empty one falls back to Authorization.
        CPPUNIT_ASSERT_EQUAL(std::string("a"), KeyOf(With({{"x-api-key", "a"}, {"authorization", "Bearer b"}})));
        CPPUNIT_ASSERT_EQUAL(std::string("b"), KeyOf(With({{"x-api-key", "  "}, {"authorization", "Bearer b"}})));
        CPPUNIT_ASSERT_EQUAL(std::string(MAX_API_KEY_LENGTH, 'k'),
                             KeyOf(With({{"x-api-key", std::string(MAX_API_KEY_LENGTH, 'k')}})));
    }

    void testRefusals() {
        CPPUNIT_ASSERT_EQUAL(std::string("missing_api_key"), ErrorOf(With({})));
        CPPUNIT_ASSERT_EQUAL(std::string("missing_api_key"), ErrorOf(With({{"authorization", "Basic dXNlcg=="}})));
        CPPUNIT_ASSERT_EQUAL(std::string("missing_api_key"), ErrorOf(With({{"authorization", "Bearer"}})));
        CPPUNIT_ASSERT_EQUAL(std::string("missing_api_key"), ErrorOf(With({{"authorization", "Bearer    "}})));
        CPPUNIT_ASSERT_EQUAL(std::string("missing_api_key"), ErrorOf(With({{"authorization", "Bearerx tok"}})));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_api_key"),
                             ErrorOf(With({{"x-api-key", std::string(MAX_API_KEY_LENGTH + 1, 'k')}})));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_api_key"), ErrorOf(With({{"x-api-key", "a b"}})));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_api_key"), ErrorOf(With({{"x-api-key", std::string("a\x7f", 2)}})));
    }

    void testHashIsKeccakOfTheText() {
        // keccak256("") and the hash of the same text from a std::string and from the SecretBytes agree.
        CPPUNIT_ASSERT_EQUAL(std::string("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
                             sigil::common::HexEncode(ApiKeyHash("").Word(), true));
        auto key = ExtractApiKey(With({{"x-api-key", "some-key"}}));
        CPPUNIT_ASSERT(key.ok());
        CPPUNIT_ASSERT(ApiKeyHash(key->text()) == ApiKeyHash(std::string("some-key")));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(AuthTests);
