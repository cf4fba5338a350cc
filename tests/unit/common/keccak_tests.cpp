#include <cppunit/extensions/HelperMacros.h>

#include <sstream>

#include "common/hex.h"
#include "common/keccak.h"
#include "tests/test_support.h"

using namespace sigil::common;

class KeccakTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(KeccakTests);
    CPPUNIT_TEST(testKnownAnswers);
    CPPUNIT_TEST(testIncrementalMatchesOneShot);
    CPPUNIT_TEST(testRateBoundaries);
    CPPUNIT_TEST_SUITE_END();

    static Bytes Input(const std::string& spec) {
        if (spec.rfind("utf8:", 0) == 0) return ToBytes(spec.substr(5));
        return *HexDecode(spec);
    }

public:
    void testKnownAnswers() {
        const int checked = sigil::test::ForEachVectorLine("keccak256.txt", [&](const std::string& line) {
            const auto sp = line.rfind(' ');
            const std::string input = line.substr(0, sp), expected = line.substr(sp + 1);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(input, expected, HexEncode(Keccak256Hash(Input(input))));
        });
        CPPUNIT_ASSERT(checked >= 4);
    }
    void testIncrementalMatchesOneShot() {
        Bytes data(1000);
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
        const Hash32 whole = Keccak256Hash(data);
        for (std::size_t step : {1u, 7u, 135u, 136u, 137u, 500u}) {
            Keccak256 h;
            for (std::size_t off = 0; off < data.size(); off += step) {
                h.Update(ByteView(data).subspan(off, std::min(step, data.size() - off)));
            }
            CPPUNIT_ASSERT(h.Final() == whole);
        }
    }
    void testRateBoundaries() {
        // Lengths around the 136-byte rate must all differ and be stable (padding edge cases).
        Hash32 prev{};
        for (std::size_t n : {134u, 135u, 136u, 137u, 271u, 272u, 273u}) {
            const Bytes d(n, 0x61);
            const Hash32 h = Keccak256Hash(d);
            CPPUNIT_ASSERT(h != prev);
            CPPUNIT_ASSERT(h == Keccak256Hash(d));
            prev = h;
        }
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(KeccakTests);
