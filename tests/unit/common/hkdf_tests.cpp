#include <cppunit/extensions/HelperMacros.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/hex.h"
#include "common/hkdf.h"
#include "tests/test_support.h"

using namespace sigil::common;

class HkdfTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(HkdfTests);
    CPPUNIT_TEST(testRfc5869Vectors);
    CPPUNIT_TEST(testShorterOutputIsPrefix);
    CPPUNIT_TEST(testInputsChangeOutput);
    CPPUNIT_TEST(testRejectsBadArguments);
    CPPUNIT_TEST(testMaximumOutputLength);
    CPPUNIT_TEST_SUITE_END();

    static Bytes Field(const std::string& s) { return s == "-" ? Bytes{} : *HexDecode(s); }

    static std::string Okm(ByteView ikm, ByteView salt, ByteView info, std::size_t n) {
        auto r = HkdfSha256(ikm, salt, info, n);
        CPPUNIT_ASSERT(r.ok());
        return HexEncode(r->view());
    }

public:
    void testRfc5869Vectors() {
        const int checked = sigil::test::ForEachVectorLine("hkdf_rfc5869.txt", [&](const std::string& line) {
            std::istringstream fields(line);
            std::string ikm, salt, info, okm;
            std::size_t length = 0;
            fields >> ikm >> salt >> info >> length >> okm;
            CPPUNIT_ASSERT_EQUAL(okm.size(), length * 2);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(line.substr(0, 40), okm, Okm(Field(ikm), Field(salt), Field(info), length));
        });
        CPPUNIT_ASSERT_EQUAL(3, checked);
    }

    void testShorterOutputIsPrefix() {
        const Bytes ikm(22, 0x0b);
        const std::string full = Okm(ikm, {}, {}, 42);
        CPPUNIT_ASSERT_EQUAL(full.substr(0, 2), Okm(ikm, {}, {}, 1));
        CPPUNIT_ASSERT_EQUAL(full.substr(0, 64), Okm(ikm, {}, {}, 32));
        CPPUNIT_ASSERT_EQUAL(full.substr(0, 66), Okm(ikm, {}, {}, 33));
    }

    void testInputsChangeOutput() {
        const Bytes ikm(32, 1), salt = ToBytes("salt"), info = ToBytes("info");
        const std::string base = Okm(ikm, salt, info, 32);
        CPPUNIT_ASSERT(base != Okm(Bytes(32, 2), salt, info, 32));
        CPPUNIT_ASSERT(base != Okm(ikm, ToBytes("salt2"), info, 32));
        CPPUNIT_ASSERT(base != Okm(ikm, salt, ToBytes("info2"), 32));
        CPPUNIT_ASSERT(base != Okm(ikm, {}, info, 32));
        // RFC 5869 section 2.2: an absent salt means HashLen zero bytes.
        CPPUNIT_ASSERT_EQUAL(Okm(ikm, {}, info, 32), Okm(ikm, Bytes(32, 0), info, 32));
    }

    void testRejectsBadArguments() {
        const Bytes ikm(32, 1);
        std::vector<Result<SecretBytes>> bad;
        bad.push_back(HkdfSha256({}, {}, {}, 32));
        bad.push_back(HkdfSha256(ikm, {}, {}, 0));
        bad.push_back(HkdfSha256(ikm, {}, {}, HKDF_SHA256_MAX_OUTPUT + 1));
        bad.push_back(HkdfSha256(ikm, {}, Bytes(HKDF_MAX_INFO + 1, 0), 32));
        for (const auto& r : bad) {
            CPPUNIT_ASSERT(!r.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_hkdf_input"), r.error().code);
            CPPUNIT_ASSERT(r.error().kind == ErrorKind::InvalidInput);
        }
        CPPUNIT_ASSERT(HkdfSha256(ikm, {}, Bytes(HKDF_MAX_INFO, 0), 32).ok());
    }

    void testMaximumOutputLength() {
        auto r = HkdfSha256(Bytes(32, 1), {}, {}, HKDF_SHA256_MAX_OUTPUT);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_EQUAL(HKDF_SHA256_MAX_OUTPUT, r->size());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(HkdfTests);
