#include <cppunit/extensions/HelperMacros.h>

#include <sstream>
#include <string>

#include "common/base64.h"
#include "common/hex.h"
#include "tests/test_support.h"

using namespace sigil::common;

class Base64Tests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(Base64Tests);
    CPPUNIT_TEST(testKnownAnswers);
    CPPUNIT_TEST(testRoundTripsEveryLength);
    CPPUNIT_TEST(testRejectsBadCharacters);
    CPPUNIT_TEST(testRejectsBadPadding);
    CPPUNIT_TEST(testRejectsNonCanonicalTrailingBits);
    CPPUNIT_TEST(testRejectsBadLength);
    CPPUNIT_TEST(testDecodesApiKeyIntoSecret);
    CPPUNIT_TEST(testSecretDecodeRejectsWrongSizeAndBadText);
    CPPUNIT_TEST_SUITE_END();

    static Bytes Input(const std::string& spec) {
        if (spec.rfind("utf8:", 0) == 0) return ToBytes(spec.substr(5));
        return *HexDecode(spec.substr(4));
    }

    static void AssertRejected(std::string_view text) {
        auto r = Base64Decode(text);
        CPPUNIT_ASSERT_MESSAGE(std::string(text), !r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_base64"), r.error().code);
        CPPUNIT_ASSERT(r.error().kind == ErrorKind::InvalidInput);
    }

public:
    void testKnownAnswers() {
        const int checked = sigil::test::ForEachVectorLine("base64_rfc4648.txt", [&](const std::string& line) {
            const auto sp = line.rfind(' ');
            const Bytes input = Input(line.substr(0, sp));
            std::string expected = line.substr(sp + 1);
            if (expected == "-") expected.clear();
            CPPUNIT_ASSERT_EQUAL_MESSAGE(line, expected, Base64Encode(input));
            auto decoded = Base64Decode(expected);
            CPPUNIT_ASSERT_MESSAGE(line, decoded.ok());
            CPPUNIT_ASSERT_MESSAGE(line, *decoded == input);
        });
        CPPUNIT_ASSERT(checked >= 7);
    }

    void testRoundTripsEveryLength() {
        Bytes data;
        for (int n = 0; n < 70; ++n) {
            const std::string text = Base64Encode(data);
            CPPUNIT_ASSERT_EQUAL(static_cast<std::size_t>((n + 2) / 3 * 4), text.size());
            auto back = Base64Decode(text);
            CPPUNIT_ASSERT(back.ok());
            CPPUNIT_ASSERT(*back == data);
            data.push_back(static_cast<std::uint8_t>(n * 37 + 11));
        }
        // Every byte value survives (exercises all 64 alphabet characters).
        Bytes all(256);
        for (int i = 0; i < 256; ++i) all[i] = static_cast<std::uint8_t>(i);
        CPPUNIT_ASSERT(*Base64Decode(Base64Encode(all)) == all);
    }

    void testRejectsBadCharacters() {
        AssertRejected("Zm9v\n");  // length 5 anyway, but also whitespace
        AssertRejected("Zm 9v");
        AssertRejected(" Zm9");
        AssertRejected("Zm9\t");
        AssertRejected("Zm9vYmFy\r\n");
        AssertRejected("Zm-v");    // base64url alphabet is not accepted
        AssertRejected("Zm_v");
        AssertRejected("Zm.v");
        AssertRejected("Zm9@");
        AssertRejected("Zm9\x80");
        AssertRejected("\xff\xff\xff\xff");
        AssertRejected(std::string_view("Zm\0v", 4));
        AssertRejected("Zm9v====");
    }

    void testRejectsBadPadding() {
        AssertRejected("Zg");      // missing padding
        AssertRejected("Zg=");
        AssertRejected("Zm8");
        AssertRejected("Z===");    // three pads
        AssertRejected("====");
        AssertRejected("=Zg=");    // pad in the middle
        AssertRejected("Zg=a");
        AssertRejected("Zg==Zm9v");  // pad before more data
        AssertRejected("Zm9v=");
        AssertRejected("Zm9vYg===");
    }

    void testRejectsNonCanonicalTrailingBits() {
        // "f" is Zg==; Zh== .. Zv== carry non-zero unused bits.
        AssertRejected("Zh==");
        AssertRejected("Zv==");
        // "fo" is Zm8=; Zm9= has non-zero unused bits.
        AssertRejected("Zm9=");
        AssertRejected("AB==");
        AssertRejected("AAB=");
        CPPUNIT_ASSERT(Base64Decode("AA==").ok());
        CPPUNIT_ASSERT(Base64Decode("AAA=").ok());
    }

    void testRejectsBadLength() {
        AssertRejected("A");
        AssertRejected("AA");
        AssertRejected("AAA");
        AssertRejected("AAAAA");
        AssertRejected("Zm9vYmFyZ");
    }

    void testDecodesApiKeyIntoSecret() {
        Bytes raw(API_KEY_SECRET_SIZE);
        for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::uint8_t>(0xa0 + i);
        const std::string key = Base64Encode(raw);
        CPPUNIT_ASSERT_EQUAL(API_KEY_BASE64_SIZE, key.size());
        auto secret = Base64DecodeSecret(key, API_KEY_SECRET_SIZE);
        CPPUNIT_ASSERT(secret.ok());
        CPPUNIT_ASSERT(ConstantTimeEqual(secret->view(), raw));
    }

    void testSecretDecodeRejectsWrongSizeAndBadText() {
        const std::string key31 = Base64Encode(Bytes(31, 7));
        const std::string key33 = Base64Encode(Bytes(33, 7));
        for (const std::string& bad : {key31, key33, std::string(""), std::string("AAAA")}) {
            auto r = Base64DecodeSecret(bad, API_KEY_SECRET_SIZE);
            CPPUNIT_ASSERT(!r.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_base64"), r.error().code);
        }
        std::string key = Base64Encode(Bytes(32, 7));
        key[10] = '*';
        CPPUNIT_ASSERT(!Base64DecodeSecret(key, API_KEY_SECRET_SIZE).ok());
        key = Base64Encode(Bytes(32, 7));
        key[42] = 'B';  // last data char of a 1-pad group with non-zero unused bits
        CPPUNIT_ASSERT(!Base64DecodeSecret(key, API_KEY_SECRET_SIZE).ok());
        // The message never echoes the offending text (it may be a secret).
        auto r = Base64DecodeSecret("c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0!!!=", API_KEY_SECRET_SIZE);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT(r.error().message.find("c2Vj") == std::string::npos);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(Base64Tests);
