// The monotonic clock helpers: never go back, and the three units read the same clock.
#include <cppunit/extensions/HelperMacros.h>

#include <thread>

#include "common/clock.h"

using namespace sigil::common;

class ClockTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClockTests);
    CPPUNIT_TEST(testNeverGoesBack);
    CPPUNIT_TEST(testUnitsAgree);
    CPPUNIT_TEST(testSleepIsMeasured);
    CPPUNIT_TEST_SUITE_END();

public:
    void testNeverGoesBack() {
        std::int64_t last = MonotonicNs();
        for (int i = 0; i < 10000; ++i) {
            const std::int64_t now = MonotonicNs();
            CPPUNIT_ASSERT(now >= last);
            last = now;
        }
    }

    void testUnitsAgree() {
        const std::int64_t ms = MonotonicMs();
        const std::int64_t us = MonotonicUs();
        const std::int64_t ns = MonotonicNs();
        CPPUNIT_ASSERT(ms > 0);
        CPPUNIT_ASSERT(us / 1000 >= ms && us / 1000 - ms < 1000);
        CPPUNIT_ASSERT(ns / 1000 >= us && ns / 1000 - us < 1000000);
    }

    void testSleepIsMeasured() {
        const std::int64_t start = MonotonicMs();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CPPUNIT_ASSERT(MonotonicMs() - start >= 20);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClockTests);
