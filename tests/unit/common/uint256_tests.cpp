#include <cppunit/extensions/HelperMacros.h>

#include "common/hex.h"
#include "common/uint256.h"

using namespace sigil::common;

class Uint256Tests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(Uint256Tests);
    CPPUNIT_TEST(testDecimalRoundTrip);
    CPPUNIT_TEST(testHexParsing);
    CPPUNIT_TEST(testRejectsOverflowAndJunk);
    CPPUNIT_TEST(testBigEndianForms);
    CPPUNIT_TEST(testCheckedArithmetic);
    CPPUNIT_TEST(testOrdering);
    CPPUNIT_TEST_SUITE_END();

    static const std::string MAX;  // 2^256 - 1

public:
    void testDecimalRoundTrip() {
        for (const std::string s : {"0", "1", "255", "1000000000000000000", "18446744073709551615", "18446744073709551616",
                                    "57896044618658097711785492504343953926634992332820282019728792003956564832313",
                                    MAX.c_str()}) {
            auto v = Uint256::FromDecimal(s);
            CPPUNIT_ASSERT_MESSAGE(s, v.ok());
            CPPUNIT_ASSERT_EQUAL(s, v->ToDecimal());
        }
        CPPUNIT_ASSERT_EQUAL(std::string("7"), Uint256::FromDecimal("0007")->ToDecimal());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{18446744073709551615ull}, *Uint256::FromDecimal("18446744073709551615")->ToUint64());
        CPPUNIT_ASSERT(!Uint256::FromDecimal("18446744073709551616")->ToUint64());
    }
    void testHexParsing() {
        CPPUNIT_ASSERT_EQUAL(std::string("1000000000000000000"), Uint256::FromHex("0x0de0b6b3a7640000")->ToDecimal());
        CPPUNIT_ASSERT_EQUAL(std::string("0xde0b6b3a7640000"), Uint256::FromHex("DE0B6B3A7640000")->ToQuantityHex());
        CPPUNIT_ASSERT_EQUAL(std::string("0x0"), Uint256().ToQuantityHex());
        CPPUNIT_ASSERT_EQUAL(MAX, Uint256::FromHex("0x" + std::string(64, 'f'))->ToDecimal());
    }
    void testRejectsOverflowAndJunk() {
        // 2^256 is one past the maximum.
        auto over = Uint256::FromDecimal("115792089237316195423570985008687907853269984665640564039457584007913129639936");
        CPPUNIT_ASSERT(!over.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("uint256_overflow"), over.error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("uint256_overflow"), Uint256::FromHex("0x1" + std::string(64, '0')).error().code);
        for (const char* bad : {"", "-1", "1.5", " 1", "1e3", "0x10"}) {
            CPPUNIT_ASSERT_MESSAGE(bad, !Uint256::FromDecimal(bad).ok());
        }
        for (const char* bad : {"", "0x", "0xg", "0x-1"}) {
            CPPUNIT_ASSERT_MESSAGE(bad, !Uint256::FromHex(bad).ok());
        }
        CPPUNIT_ASSERT(!Uint256::FromBigEndian(Bytes(33, 0)).ok());
    }
    void testBigEndianForms() {
        auto v = Uint256::FromBigEndian(Bytes{0x00, 0x04, 0x00});
        CPPUNIT_ASSERT(v.ok());
        CPPUNIT_ASSERT((v->MinimalBytes() == Bytes{0x04, 0x00}));
        CPPUNIT_ASSERT_EQUAL(11u, v->BitLength());
        CPPUNIT_ASSERT(Uint256().MinimalBytes().empty());
        CPPUNIT_ASSERT_EQUAL(0u, Uint256().BitLength());
        CPPUNIT_ASSERT_EQUAL(256u, Uint256::FromDecimal(MAX)->BitLength());
        CPPUNIT_ASSERT_EQUAL(std::string("00000000000000000000000000000000000000000000000000000000000003e8"),
                             HexEncode(Uint256::FromUint64(1000).Word()));
    }
    void testCheckedArithmetic() {
        const Uint256 max = *Uint256::FromDecimal(MAX);
        const Uint256 one = Uint256::FromUint64(1);
        CPPUNIT_ASSERT(!max.CheckedAdd(one));
        CPPUNIT_ASSERT(!Uint256().CheckedSub(one));
        CPPUNIT_ASSERT(*max.CheckedSub(max) == Uint256());
        CPPUNIT_ASSERT_EQUAL(std::string("18446744073709551616"),
                             Uint256::FromUint64(~0ull).CheckedAdd(one)->ToDecimal());
        // 21000 gas * 100 gwei
        CPPUNIT_ASSERT_EQUAL(std::string("2100000000000000"),
                             Uint256::FromUint64(100000000000ull).CheckedMul(21000)->ToDecimal());
        CPPUNIT_ASSERT_EQUAL(std::string("340282366920938463426481119284349108225"),  // (2^64-1)^2
                             Uint256::FromUint64(~0ull).CheckedMul(~0ull)->ToDecimal());
        CPPUNIT_ASSERT(!max.CheckedMul(2));
        CPPUNIT_ASSERT(*max.CheckedMul(1) == max);
        CPPUNIT_ASSERT(Uint256::FromHex("0x1" + std::string(62, '0'))->CheckedMul(255).has_value());
        CPPUNIT_ASSERT(!Uint256::FromHex("0x1" + std::string(62, '0'))->CheckedMul(256).has_value());
    }
    void testOrdering() {
        CPPUNIT_ASSERT(Uint256::FromUint64(1) < Uint256::FromUint64(2));
        CPPUNIT_ASSERT(Uint256::FromUint64(256) > Uint256::FromUint64(255));
        CPPUNIT_ASSERT(Uint256::FromDecimal(MAX).value() > Uint256::FromUint64(~0ull));
        CPPUNIT_ASSERT(Uint256::FromUint64(5) == *Uint256::FromHex("5"));
    }
};
const std::string Uint256Tests::MAX =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";
CPPUNIT_TEST_SUITE_REGISTRATION(Uint256Tests);
