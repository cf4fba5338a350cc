#include <cppunit/extensions/HelperMacros.h>

#include <sstream>
#include <vector>

#include "common/base58.h"
#include "common/hex.h"
#include "tests/test_support.h"

using namespace sigil::common;

class Base58Tests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(Base58Tests);
    CPPUNIT_TEST(testBitcoinCoreVectors);
    CPPUNIT_TEST(testRoundTripsLeadingZerosAndLongInput);
    CPPUNIT_TEST(testRejectsCharactersOutsideAlphabet);
    CPPUNIT_TEST(testRejectsTextBeyondSizeCap);
    CPPUNIT_TEST_SUITE_END();

public:
    // Both directions for every pair of Bitcoin Core's base58_encode_decode.json.
    void testBitcoinCoreVectors() {
        const int checked = sigil::test::ForEachVectorLine("cid_base58_vectors.txt", [&](const std::string& line) {
            const auto sp = line.find(' ');
            CPPUNIT_ASSERT(line.rfind("hex:", 0) == 0 && sp != std::string::npos);
            CPPUNIT_ASSERT(line.compare(sp + 1, 4, "b58:") == 0);
            const std::string hex = line.substr(4, sp - 4), b58 = line.substr(sp + 5);
            const Bytes bytes = *HexDecode(hex);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(hex, b58, Base58Encode(bytes));
            auto decoded = Base58Decode(b58);
            CPPUNIT_ASSERT_MESSAGE(b58, decoded.ok());
            CPPUNIT_ASSERT_MESSAGE(b58, *decoded == bytes);
        });
        CPPUNIT_ASSERT_EQUAL(21, checked);
    }

    void testRoundTripsLeadingZerosAndLongInput() {
        for (std::size_t zeros : {0u, 1u, 5u}) {
            for (std::size_t n : {1u, 2u, 33u, 34u, 200u, 1000u}) {
                Bytes data(zeros, 0);
                for (std::size_t i = 0; i < n; ++i) data.push_back(static_cast<std::uint8_t>(i * 151 + 17));
                const std::string text = Base58Encode(data);
                CPPUNIT_ASSERT_EQUAL(zeros, text.find_first_not_of('1'));
                auto back = Base58Decode(text, data.size());
                CPPUNIT_ASSERT(back.ok());
                CPPUNIT_ASSERT(*back == data);
            }
        }
        CPPUNIT_ASSERT_EQUAL(std::string("1"), Base58Encode(Bytes{0}));
        CPPUNIT_ASSERT(*Base58Decode("1") == Bytes{0});
    }

    void testRejectsCharactersOutsideAlphabet() {
        // 0, O, I and l are left out of the alphabet on purpose; whitespace and signs are not base58.
        for (const std::string& bad : std::vector<std::string>{"0", "O", "I", "l", "2g0", "a3gV ", " a3gV", "a3g\nV", "+2g", "2g=",
                                      std::string("2g\0", 3), "\xc3\xa9", "\x80", "\xff"}) {
            auto r = Base58Decode(bad);
            CPPUNIT_ASSERT_MESSAGE(bad, !r.ok());
            CPPUNIT_ASSERT_EQUAL(ErrorKind::InvalidInput, r.error().kind);
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_base58"), r.error().code);
        }
    }

    void testRejectsTextBeyondSizeCap() {
        // "zzzzz" is 4 bytes (271F359F): allowed at a cap of 4, refused at 3.
        CPPUNIT_ASSERT(Base58Decode("zzzzz", 4).ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_base58"), Base58Decode("zzzzz", 3).error().code);
        // Leading '1's are bytes too.
        CPPUNIT_ASSERT(Base58Decode("111", 3).ok());
        CPPUNIT_ASSERT(!Base58Decode("1111", 3).ok());
        // Long text is refused before the quadratic conversion runs.
        CPPUNIT_ASSERT(!Base58Decode(std::string(1 << 20, 'z')).ok());
        CPPUNIT_ASSERT(!Base58Decode(std::string(BASE58_DEFAULT_MAX_DECODED * 2, '2')).ok());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(Base58Tests);
