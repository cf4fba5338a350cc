#include <cppunit/extensions/HelperMacros.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "common/shared_cache.h"

using namespace sigil::common;

namespace {

// A zeroed area in shared anonymous memory, as the scoreboard's memfd pages start.
struct Area {
    Area() {
        void* p = mmap(nullptr, sizeof(SharedChainArea), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        CPPUNIT_ASSERT(p != MAP_FAILED);
        area = static_cast<SharedChainArea*>(p);
    }
    ~Area() { munmap(area, sizeof(SharedChainArea)); }
    SharedChainArea* area;
};

void KeyOf(std::uint64_t n, std::uint8_t (&key)[32]) {
    std::memset(key, 0, sizeof key);
    std::memcpy(key, &n, sizeof n);
    key[31] = static_cast<std::uint8_t>(n * 7 + 1);
}

}  // namespace

class SharedCacheTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SharedCacheTests);
    CPPUNIT_TEST(testHitUntilExpiry);
    CPPUNIT_TEST(testOtherEpochIsAMiss);
    CPPUNIT_TEST(testTwoKeysOfOneSetBothStay);
    CPPUNIT_TEST(testThirdKeyEvictsTheSoonestToExpire);
    CPPUNIT_TEST(testTooLargeOrEmptyIsNotStored);
    CPPUNIT_TEST(testEntryBeingWrittenIsAMissAndADeadWriterIsTakenOver);
    CPPUNIT_TEST(testAnotherProcessSeesTheValue);
    CPPUNIT_TEST(testLargestValueRoundTrips);
    CPPUNIT_TEST_SUITE_END();

public:
    void testHitUntilExpiry() {
        Area a;
        SharedReadTable t(a.area);
        std::uint8_t k[32];
        KeyOf(1, k);
        const Bytes v{1, 2, 3};
        t.Put(k, v, 5, 1000, 3000);
        auto hit = t.Get(k, 5, 2999);
        CPPUNIT_ASSERT(hit.has_value());
        CPPUNIT_ASSERT(*hit == v);
        CPPUNIT_ASSERT(!t.Get(k, 5, 3000).has_value());
        std::uint8_t other[32];
        KeyOf(2, other);
        CPPUNIT_ASSERT(!t.Get(other, 5, 1000).has_value());
    }
    void testOtherEpochIsAMiss() {
        // A value read before a write (an older epoch) is never served after it.
        Area a;
        SharedReadTable t(a.area);
        std::uint8_t k[32];
        KeyOf(1, k);
        t.Put(k, Bytes{9}, 5, 1000, 3000);
        CPPUNIT_ASSERT(!t.Get(k, 6, 1000).has_value());
        t.Put(k, Bytes{8}, 6, 1000, 3000);  // the same key replaced in place
        CPPUNIT_ASSERT((*t.Get(k, 6, 1000) == Bytes{8}));
    }
    void testTwoKeysOfOneSetBothStay() {
        Area a;
        SharedReadTable t(a.area);
        std::uint8_t k1[32], k2[32];
        KeyOf(10, k1);
        KeyOf(10 + SHARED_CACHE_ENTRIES / 2, k2);  // the same set
        t.Put(k1, Bytes{1}, 0, 0, 100);
        t.Put(k2, Bytes{2}, 0, 0, 100);
        CPPUNIT_ASSERT((*t.Get(k1, 0, 0) == Bytes{1}));
        CPPUNIT_ASSERT((*t.Get(k2, 0, 0) == Bytes{2}));
    }
    void testThirdKeyEvictsTheSoonestToExpire() {
        Area a;
        SharedReadTable t(a.area);
        std::uint8_t k1[32], k2[32], k3[32];
        KeyOf(10, k1);
        KeyOf(10 + SHARED_CACHE_ENTRIES / 2, k2);
        KeyOf(10 + SHARED_CACHE_ENTRIES, k3);
        t.Put(k1, Bytes{1}, 0, 0, 500);
        t.Put(k2, Bytes{2}, 0, 0, 100);
        t.Put(k3, Bytes{3}, 0, 10, 600);
        CPPUNIT_ASSERT(t.Get(k1, 0, 10).has_value());
        CPPUNIT_ASSERT(!t.Get(k2, 0, 10).has_value());
        CPPUNIT_ASSERT((*t.Get(k3, 0, 10) == Bytes{3}));
    }
    void testTooLargeOrEmptyIsNotStored() {
        Area a;
        SharedReadTable t(a.area);
        std::uint8_t k[32];
        KeyOf(3, k);
        t.Put(k, Bytes(SharedReadTable::MAX_VALUE + 1, 7), 0, 0, 100);
        CPPUNIT_ASSERT(!t.Get(k, 0, 0).has_value());
        t.Put(k, Bytes{}, 0, 0, 100);
        CPPUNIT_ASSERT(!t.Get(k, 0, 0).has_value());
        t.Put(k, Bytes{1}, 0, 100, 100);  // already expired
        CPPUNIT_ASSERT(!t.Get(k, 0, 50).has_value());
    }
    void testEntryBeingWrittenIsAMissAndADeadWriterIsTakenOver() {
        Area a;
        SharedReadTable t(a.area);
        std::uint8_t k[32];
        KeyOf(4, k);
        t.Put(k, Bytes{1}, 0, 1000, 100000);
        std::uint64_t w;
        std::memcpy(&w, k, sizeof w);
        const std::size_t first = static_cast<std::size_t>(w % (SHARED_CACHE_ENTRIES / 2)) * 2;
        SharedCacheEntry* e = &a.area->entries[first];
        if (e->key[0].load() != w) e = &a.area->entries[first + 1];
        // A writer took the entry at t=1000 and died.
        e->seq.fetch_add(1);
        e->write_ms.store(1000);
        CPPUNIT_ASSERT(!t.Get(k, 0, 1500).has_value());
        t.Put(k, Bytes{2}, 0, 1500, 100000);  // too soon to take over: skipped
        CPPUNIT_ASSERT(!t.Get(k, 0, 1500).has_value());
        t.Put(k, Bytes{3}, 0, 1000 + STUCK_WRITE_MS, 100000);
        CPPUNIT_ASSERT((*t.Get(k, 0, 2500) == Bytes{3}));
        CPPUNIT_ASSERT_EQUAL(0U, e->seq.load() & 1U);
    }
    void testAnotherProcessSeesTheValue() {
        Area a;
        SharedReadTable t(a.area);
        std::uint8_t k[32];
        KeyOf(5, k);
        const pid_t pid = fork();
        if (pid == 0) {
            SharedReadTable child(a.area);
            child.Put(k, Bytes{4, 5, 6}, 2, 0, 1000);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CPPUNIT_ASSERT((*t.Get(k, 2, 10) == Bytes{4, 5, 6}));
    }
    void testLargestValueRoundTrips() {
        Area a;
        SharedReadTable t(a.area);
        std::uint8_t k[32];
        KeyOf(6, k);
        Bytes v(SharedReadTable::MAX_VALUE);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(i * 31);
        t.Put(k, v, 0, 0, 10);
        CPPUNIT_ASSERT(*t.Get(k, 0, 0) == v);
        Bytes odd(13, 0xab);  // not a multiple of 8
        t.Put(k, odd, 0, 0, 10);
        CPPUNIT_ASSERT(*t.Get(k, 0, 0) == odd);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(SharedCacheTests);
