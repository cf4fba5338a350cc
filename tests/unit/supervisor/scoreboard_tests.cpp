#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/scoreboard.h"

using namespace sigil::common;

class ScoreboardTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ScoreboardTests);
    CPPUNIT_TEST(testCreateStartsEmpty);
    CPPUNIT_TEST(testCacheKeyIsRandomPerScoreboardAndShared);
    CPPUNIT_TEST(testStatesAndSummary);
    CPPUNIT_TEST(testCountsRequests);
    CPPUNIT_TEST(testInFlightByActivity);
    CPPUNIT_TEST(testSharedAcrossFork);
    CPPUNIT_TEST(testAttachRefusesWrongFiles);
    CPPUNIT_TEST(testRejectsBadSlotCount);
    CPPUNIT_TEST_SUITE_END();

public:
    void testCreateStartsEmpty() {
        auto sb = Scoreboard::Create("test-sb", 4);
        CPPUNIT_ASSERT(sb.ok());
        CPPUNIT_ASSERT_EQUAL(4u, sb->capacity());
        const auto s = sb->Summarize();
        CPPUNIT_ASSERT_EQUAL(0u, s.total);
        CPPUNIT_ASSERT_EQUAL(4u, s.capacity);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, s.requests_served);
    }
    // The pool's cache key: 32 bytes, drawn per scoreboard, the same for every process that maps it.
    void testCacheKeyIsRandomPerScoreboardAndShared() {
        auto a = Scoreboard::Create("test-sb-a", 2);
        auto b = Scoreboard::Create("test-sb-b", 2);
        CPPUNIT_ASSERT(a.ok() && b.ok());
        const auto ka = a->CacheKey();
        CPPUNIT_ASSERT_EQUAL(std::size_t{32}, ka.size());
        CPPUNIT_ASSERT(std::any_of(ka.begin(), ka.end(), [](std::uint8_t v) { return v != 0; }));
        CPPUNIT_ASSERT(!std::equal(ka.begin(), ka.end(), b->CacheKey().begin()));
        auto attached = Scoreboard::Attach(::dup(a->fd()));
        CPPUNIT_ASSERT(attached.ok());
        CPPUNIT_ASSERT(std::equal(ka.begin(), ka.end(), attached->CacheKey().begin()));
    }
    void testStatesAndSummary() {
        auto sb = Scoreboard::Create("test-sb", 5);
        CPPUNIT_ASSERT(sb.ok());
        sb->Assign(0, 100, 1);
        sb->Assign(1, 101, 1);
        sb->Assign(2, 102, 1);
        sb->Assign(3, 103, 2);
        sb->MarkIdle(1);
        sb->MarkBusy(2, 12345);
        sb->MarkDraining(3);
        auto s = sb->Summarize();
        CPPUNIT_ASSERT_EQUAL(4u, s.total);
        CPPUNIT_ASSERT_EQUAL(1u, s.starting);
        CPPUNIT_ASSERT_EQUAL(1u, s.idle);
        CPPUNIT_ASSERT_EQUAL(1u, s.busy);
        CPPUNIT_ASSERT_EQUAL(1u, s.draining);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{12345}, sb->Slot(2).request_start_ms.load());
        CPPUNIT_ASSERT_EQUAL(std::int32_t{102}, sb->Slot(2).pid.load());
        CPPUNIT_ASSERT_EQUAL(2u, sb->Slot(3).generation.load());
        sb->MarkIdle(2);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, sb->Slot(2).request_start_ms.load());
        sb->Release(2);
        s = sb->Summarize();
        CPPUNIT_ASSERT_EQUAL(3u, s.total);
        CPPUNIT_ASSERT_EQUAL(std::int32_t{0}, sb->Slot(2).pid.load());
    }
    void testCountsRequests() {
        auto sb = Scoreboard::Create("test-sb", 2);
        CPPUNIT_ASSERT(sb.ok());
        sb->Assign(0, 1, 1);
        sb->Assign(1, 2, 1);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, sb->CountRequest(0));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, sb->CountRequest(0));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, sb->CountRequest(1));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{3}, sb->Summarize().requests_served);
        // A recycled slot restarts its own count; the total keeps counting.
        sb->Release(0);
        sb->Assign(0, 3, 2);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, sb->CountRequest(0));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{4}, sb->Summarize().requests_served);
    }
    // Busy slots are counted by what they wait on; a released slot's activity is cleared.
    void testInFlightByActivity() {
        auto sb = Scoreboard::Create("test-sb", 5);
        CPPUNIT_ASSERT(sb.ok());
        for (std::uint32_t i = 0; i < 4; ++i) {
            sb->Assign(i, static_cast<std::int32_t>(100 + i), 1);
            sb->MarkBusy(i, 1);
        }
        sb->Slot(0).activity.store(static_cast<std::uint32_t>(Activity::Chain));
        sb->Slot(1).activity.store(static_cast<std::uint32_t>(Activity::Receipt));
        sb->Slot(2).activity.store(static_cast<std::uint32_t>(Activity::Run));
        auto s = sb->Summarize();
        CPPUNIT_ASSERT_EQUAL(4u, s.busy);
        CPPUNIT_ASSERT_EQUAL(1u, s.in_flight[static_cast<std::uint32_t>(Activity::Chain)]);
        CPPUNIT_ASSERT_EQUAL(1u, s.in_flight[static_cast<std::uint32_t>(Activity::Receipt)]);
        CPPUNIT_ASSERT_EQUAL(1u, s.in_flight[static_cast<std::uint32_t>(Activity::Run)]);
        CPPUNIT_ASSERT_EQUAL(1u, s.in_flight[static_cast<std::uint32_t>(Activity::None)]);
        CPPUNIT_ASSERT_EQUAL(2u, sb->CountChainBound());
        CPPUNIT_ASSERT_EQUAL(std::string("receipt"), std::string(ActivityName(Activity::Receipt)));
        sb->Release(0);
        CPPUNIT_ASSERT_EQUAL(1u, sb->CountChainBound());
        sb->Assign(0, 200, 1);
        CPPUNIT_ASSERT_EQUAL(0u, sb->Slot(0).activity.load());
    }
    void testSharedAcrossFork() {
        auto sb = Scoreboard::Create("test-sb", 3);
        CPPUNIT_ASSERT(sb.ok());
        sb->Assign(1, 0, 1);
        const int child_fd = dup(sb->fd());
        const pid_t pid = fork();
        if (pid == 0) {
            // The child attaches by descriptor, as a worker does.
            auto mine = Scoreboard::Attach(child_fd);
            if (!mine.ok()) _exit(2);
            mine->MarkBusy(1, 777);
            mine->CountRequest(1);
            _exit(0);
        }
        close(child_fd);
        int status = 0;
        waitpid(pid, &status, 0);
        CPPUNIT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{777}, sb->Slot(1).request_start_ms.load());
        CPPUNIT_ASSERT_EQUAL(1u, sb->Summarize().busy);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, sb->Summarize().requests_served);
    }
    void testAttachRefusesWrongFiles() {
        CPPUNIT_ASSERT(!Scoreboard::Attach(-1).ok());
        CPPUNIT_ASSERT_EQUAL(std::string("scoreboard_invalid"), Scoreboard::Attach(9999).error().code);
        // A zero-filled file of plausible size has no magic.
        int fd = memfd_create("junk", MFD_CLOEXEC);
        CPPUNIT_ASSERT(ftruncate(fd, 4096) == 0);
        CPPUNIT_ASSERT(!Scoreboard::Attach(fd).ok());
        // A real scoreboard attaches; one resized after creation no longer matches its slot count.
        auto sb = Scoreboard::Create("test-sb", 8);
        CPPUNIT_ASSERT(sb.ok());
        CPPUNIT_ASSERT(Scoreboard::Attach(dup(sb->fd())).ok());
        auto sb2 = Scoreboard::Create("test-sb", 2);
        CPPUNIT_ASSERT(sb2.ok());
        const int grown = dup(sb2->fd());
        CPPUNIT_ASSERT(ftruncate(grown, 64 + 100 * sizeof(ScoreboardSlot)) == 0);
        CPPUNIT_ASSERT(!Scoreboard::Attach(grown).ok());
        // A tiny file is refused before mapping.
        int tiny = memfd_create("tiny", MFD_CLOEXEC);
        CPPUNIT_ASSERT(ftruncate(tiny, 8) == 0);
        CPPUNIT_ASSERT(!Scoreboard::Attach(tiny).ok());
    }
    void testRejectsBadSlotCount() {
        CPPUNIT_ASSERT_EQUAL(std::string("scoreboard_slots"), Scoreboard::Create("x", 0).error().code);
        CPPUNIT_ASSERT(!Scoreboard::Create("x", Scoreboard::MAX_SLOTS + 1).ok());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ScoreboardTests);
