#include <cppunit/extensions/HelperMacros.h>

#include <bit>
#include <set>

#include "common/random.h"

using namespace sigil::common;

class RandomTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(RandomTests);
    CPPUNIT_TEST(testSizes);
    CPPUNIT_TEST(testOutputsDiffer);
    CPPUNIT_TEST(testBitsLookUniform);
    CPPUNIT_TEST_SUITE_END();

public:
    void testSizes() {
        CPPUNIT_ASSERT(RandomBytes(0).empty());
        CPPUNIT_ASSERT(RandomSecret(0).empty());
        CPPUNIT_ASSERT_EQUAL(std::size_t{12}, RandomBytes(12).size());
        CPPUNIT_ASSERT_EQUAL(std::size_t{32}, RandomSecret(32).size());
        RandomFill(nullptr, 0);
    }

    void testOutputsDiffer() {
        std::set<Bytes> seen;
        for (int i = 0; i < 100; ++i) CPPUNIT_ASSERT(seen.insert(RandomBytes(16)).second);
        const SecretBytes a = RandomSecret(32), b = RandomSecret(32);
        CPPUNIT_ASSERT(!ConstantTimeEqual(a.view(), b.view()));
        CPPUNIT_ASSERT(!ConstantTimeEqual(a.view(), Bytes(32, 0)));
    }

    void testBitsLookUniform() {
        // A crude sanity check that catches a stuck or zero generator, not a statistical test:
        // 80000 bits have mean 40000 and standard deviation ~141; allow about 7 sigma.
        const Bytes b = RandomBytes(10000);
        int ones = 0;
        for (std::uint8_t x : b) ones += std::popcount(x);
        CPPUNIT_ASSERT(ones > 39000 && ones < 41000);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(RandomTests);
