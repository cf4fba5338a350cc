#include <cppunit/extensions/HelperMacros.h>

#include "common/hex.h"

using namespace sigil::common;

class HexTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(HexTests);
    CPPUNIT_TEST(testEncodesLowercase);
    CPPUNIT_TEST(testDecodesEitherCase);
    CPPUNIT_TEST(testRejectsOddLength);
    CPPUNIT_TEST(testRejectsNonHexCharacters);
    CPPUNIT_TEST(testPrefixRules);
    CPPUNIT_TEST(testExactLength);
    CPPUNIT_TEST_SUITE_END();

public:
    void testEncodesLowercase() {
        const Bytes b{0x00, 0xab, 0xff, 0x10};
        CPPUNIT_ASSERT_EQUAL(std::string("00abff10"), HexEncode(b));
        CPPUNIT_ASSERT_EQUAL(std::string("0x00abff10"), HexEncode(b, true));
        CPPUNIT_ASSERT_EQUAL(std::string("0x"), HexEncode(Bytes{}, true));
    }
    void testDecodesEitherCase() {
        auto r = HexDecode("0xDEADbeef");
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT((*r == Bytes{0xde, 0xad, 0xbe, 0xef}));
        CPPUNIT_ASSERT(HexDecode("").ok());
        CPPUNIT_ASSERT(HexDecode("0x")->empty());
    }
    void testRejectsOddLength() {
        auto r = HexDecode("0xabc");
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_hex"), r.error().code);
        CPPUNIT_ASSERT(r.error().kind == ErrorKind::InvalidInput);
    }
    void testRejectsNonHexCharacters() {
        CPPUNIT_ASSERT(!HexDecode("zz").ok());
        CPPUNIT_ASSERT(!HexDecode("0x0g").ok());
        CPPUNIT_ASSERT(!HexDecode(" 00").ok());
        CPPUNIT_ASSERT(!HexDecode(std::string("0\0", 2)).ok());
        CPPUNIT_ASSERT(!HexDecode("0x0x00").ok());
    }
    void testPrefixRules() {
        CPPUNIT_ASSERT(!HexDecode("00", HexPrefix::Required).ok());
        CPPUNIT_ASSERT(HexDecode("0x00", HexPrefix::Required).ok());
        CPPUNIT_ASSERT(!HexDecode("0x00", HexPrefix::Forbidden).ok());
        CPPUNIT_ASSERT(HexDecode("00", HexPrefix::Forbidden).ok());
    }
    void testExactLength() {
        CPPUNIT_ASSERT(HexDecodeExact("0x" + std::string(64, 'a'), 32).ok());
        CPPUNIT_ASSERT(!HexDecodeExact("0x" + std::string(62, 'a'), 32).ok());
        CPPUNIT_ASSERT(!HexDecodeExact("0x" + std::string(66, 'a'), 32).ok());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(HexTests);
