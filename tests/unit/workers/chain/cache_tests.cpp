#include <cppunit/extensions/HelperMacros.h>

#include "workers/chain/cache.h"

using namespace sigil::workers;
using sigil::common::Bytes;
using namespace std::chrono_literals;

class ChainCacheTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ChainCacheTests);
    CPPUNIT_TEST(testHitWithinTtl);
    CPPUNIT_TEST(testExpiresAfterTtl);
    CPPUNIT_TEST(testInvalidateAllDropsEverything);
    CPPUNIT_TEST(testFullCacheIsClearedNotGrown);
    CPPUNIT_TEST(testZeroTtlDisablesCaching);
    CPPUNIT_TEST(testWriteInOneWorkerDropsAnothersCache);
    CPPUNIT_TEST(testValueReadBeforeAWriteIsNotCached);
    CPPUNIT_TEST_SUITE_END();

    const SteadyTime t0 = SteadyTime{} + 1000s;

public:
    void testHitWithinTtl() {
        ReadCache c(2000ms, 10);
        c.Put("k", Bytes{1, 2}, t0, 0);
        auto v = c.Get("k", t0 + 1999ms);
        CPPUNIT_ASSERT(v.has_value());
        CPPUNIT_ASSERT((*v == Bytes{1, 2}));
        CPPUNIT_ASSERT(!c.Get("other", t0).has_value());
    }
    void testExpiresAfterTtl() {
        ReadCache c(2000ms, 10);
        c.Put("k", Bytes{1}, t0, 0);
        CPPUNIT_ASSERT(!c.Get("k", t0 + 2000ms).has_value());
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, c.size());
    }
    void testInvalidateAllDropsEverything() {
        ReadCache c(2000ms, 10);
        c.Put("a", Bytes{1}, t0, 0);
        c.Put("b", Bytes{2}, t0, 0);
        c.InvalidateAll();
        CPPUNIT_ASSERT(!c.Get("a", t0).has_value());
        CPPUNIT_ASSERT(!c.Get("b", t0).has_value());
    }
    void testFullCacheIsClearedNotGrown() {
        ReadCache c(2000ms, 3);
        for (int i = 0; i < 3; ++i) c.Put(std::to_string(i), Bytes{1}, t0, 0);
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, c.size());
        c.Put("0", Bytes{9}, t0, 0);  // replacing an entry never clears
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, c.size());
        c.Put("new", Bytes{2}, t0, 0);
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, c.size());
        CPPUNIT_ASSERT(c.Get("new", t0).has_value());
    }
    void testZeroTtlDisablesCaching() {
        ReadCache c(0ms, 10);
        c.Put("k", Bytes{1}, t0, 0);
        CPPUNIT_ASSERT(!c.Get("k", t0).has_value());
    }
    void testWriteInOneWorkerDropsAnothersCache() {
        std::atomic<std::uint64_t> epoch{0};  // the scoreboard's counter, shared by the workers
        ReadCache a(2000ms, 10), b(2000ms, 10);
        a.ShareEpoch(&epoch);
        b.ShareEpoch(&epoch);
        b.Put("k", Bytes{1}, t0, b.Epoch());
        CPPUNIT_ASSERT(b.Get("k", t0).has_value());
        a.InvalidateEverywhere();  // worker a's write was mined
        CPPUNIT_ASSERT(!b.Get("k", t0).has_value());
        b.Put("k", Bytes{2}, t0, b.Epoch());
        CPPUNIT_ASSERT(b.Get("k", t0).has_value());
    }
    void testValueReadBeforeAWriteIsNotCached() {
        std::atomic<std::uint64_t> epoch{0};
        ReadCache a(2000ms, 10), b(2000ms, 10);
        a.ShareEpoch(&epoch);
        b.ShareEpoch(&epoch);
        const std::uint64_t before = b.Epoch();  // b starts reading the chain...
        a.InvalidateEverywhere();                // ...a's write lands meanwhile...
        b.Put("k", Bytes{1}, t0, before);        // ...so b's answer may be stale: not cached
        CPPUNIT_ASSERT(!b.Get("k", t0).has_value());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(ChainCacheTests);
