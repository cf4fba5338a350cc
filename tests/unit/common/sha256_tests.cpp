#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <sstream>

#include "common/hex.h"
#include "common/sha256.h"
#include "tests/test_support.h"

using namespace sigil::common;

class Sha256Tests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(Sha256Tests);
    CPPUNIT_TEST(testKnownAnswers);
    CPPUNIT_TEST(testIncrementalMatchesOneShot);
    CPPUNIT_TEST(testBlockBoundaries);
    CPPUNIT_TEST_SUITE_END();

    static Bytes Input(const std::string& spec) {
        if (spec.rfind("utf8:", 0) == 0) return ToBytes(spec.substr(5));
        if (spec.rfind("repeat:", 0) == 0) {
            const auto colon = spec.find(':', 7);
            const Bytes byte = *HexDecode(spec.substr(7, colon - 7));
            return Bytes(std::stoul(spec.substr(colon + 1)), byte.at(0));
        }
        return *HexDecode(spec);
    }

public:
    void testKnownAnswers() {
        const int checked = sigil::test::ForEachVectorLine("sha256_nist.txt", [&](const std::string& line) {
            const auto sp = line.rfind(' ');
            const std::string input = line.substr(0, sp), expected = line.substr(sp + 1);
            const Bytes data = Input(input);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(input.substr(0, 40), expected, HexEncode(Sha256Hash(data)));
            // Also fed in 1000-byte pieces: the million-'a' case is specified that way in FIPS 180-2.
            Sha256 h;
            for (std::size_t off = 0; off < data.size(); off += 1000) {
                h.Update(ByteView(data).subspan(off, std::min<std::size_t>(1000, data.size() - off)));
            }
            CPPUNIT_ASSERT_EQUAL(expected, HexEncode(h.Final()));
        });
        CPPUNIT_ASSERT(checked >= 5);
    }

    void testIncrementalMatchesOneShot() {
        Bytes data(1000);
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 13 + 5);
        const Hash32 whole = Sha256Hash(data);
        for (std::size_t step : {1u, 3u, 63u, 64u, 65u, 999u}) {
            Sha256 h;
            h.Update({});  // empty updates are harmless
            for (std::size_t off = 0; off < data.size(); off += step) {
                h.Update(ByteView(data).subspan(off, std::min(step, data.size() - off)));
            }
            CPPUNIT_ASSERT(h.Final() == whole);
        }
        CPPUNIT_ASSERT(Sha256Hash(std::string_view("abc")) == Sha256Hash(ToBytes("abc")));
    }

    void testBlockBoundaries() {
        // Padding edge cases around the 64-byte block and the 56-byte length boundary.
        Hash32 prev{};
        for (std::size_t n : {55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 128u}) {
            const Bytes d(n, 0x61);
            const Hash32 h = Sha256Hash(d);
            CPPUNIT_ASSERT(h != prev);
            CPPUNIT_ASSERT(h == Sha256Hash(d));
            prev = h;
        }
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(Sha256Tests);
