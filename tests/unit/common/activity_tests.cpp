#include <cppunit/extensions/HelperMacros.h>

#include "common/activity.h"
#include "common/scoreboard.h"

using namespace sigil::common;

namespace {

Activity ActivityOf(const Scoreboard& sb, std::uint32_t slot) {
    return static_cast<Activity>(sb.Slot(slot).activity.load());
}

}  // namespace

class ActivityTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ActivityTests);
    CPPUNIT_TEST(testNoOpWithoutScoreboard);
    CPPUNIT_TEST(testScopesNestAndRestore);
    CPPUNIT_TEST(testChainReserveRefusesBeyondLimit);
    CPPUNIT_TEST(testNestedChainCallsAreNotRecounted);
    CPPUNIT_TEST_SUITE_END();

public:
    void tearDown() override { BindActivitySlot(nullptr, 0, 0); }

    void testNoOpWithoutScoreboard() {
        BindActivitySlot(nullptr, 0, 1);
        const ActivityScope chain(Activity::Chain);
        CPPUNIT_ASSERT(chain.admitted());
    }
    void testScopesNestAndRestore() {
        auto sb = Scoreboard::Create("test-activity", 4);
        CPPUNIT_ASSERT(sb.ok());
        BindActivitySlot(&*sb, 2, 0);
        {
            const ActivityScope run(Activity::Run);
            CPPUNIT_ASSERT(ActivityOf(*sb, 2) == Activity::Run);
            {
                const ActivityScope fetch(Activity::Fetch);
                CPPUNIT_ASSERT(ActivityOf(*sb, 2) == Activity::Fetch);
            }
            CPPUNIT_ASSERT(ActivityOf(*sb, 2) == Activity::Run);
            CPPUNIT_ASSERT(ActivityOf(*sb, 1) == Activity::None);  // only this process's slot
        }
        CPPUNIT_ASSERT(ActivityOf(*sb, 2) == Activity::None);
    }
    // Two other slots already wait on the chain; with a limit of 3 one more chain call is admitted,
    // the next is refused (and leaves nothing behind), and one admitted again once a place frees.
    void testChainReserveRefusesBeyondLimit() {
        auto sb = Scoreboard::Create("test-activity", 6);
        CPPUNIT_ASSERT(sb.ok());
        sb->Slot(0).activity.store(static_cast<std::uint32_t>(Activity::Chain));
        sb->Slot(1).activity.store(static_cast<std::uint32_t>(Activity::Receipt));
        sb->Slot(2).activity.store(static_cast<std::uint32_t>(Activity::Fetch));  // not chain-bound
        BindActivitySlot(&*sb, 4, 3);
        {
            const ActivityScope third(Activity::Chain);
            CPPUNIT_ASSERT(third.admitted());
            CPPUNIT_ASSERT_EQUAL(3u, sb->CountChainBound());
        }
        sb->Slot(3).activity.store(static_cast<std::uint32_t>(Activity::Chain));
        {
            const ActivityScope fourth(Activity::Chain);
            CPPUNIT_ASSERT(!fourth.admitted());
        }
        CPPUNIT_ASSERT(ActivityOf(*sb, 4) == Activity::None);
        CPPUNIT_ASSERT_EQUAL(3u, sb->CountChainBound());
        // Other kinds are never refused, and a receipt wait is admitted whatever the count.
        {
            const ActivityScope keyd(Activity::Keyd);
            CPPUNIT_ASSERT(keyd.admitted());
            const ActivityScope receipt(Activity::Receipt);
            CPPUNIT_ASSERT(receipt.admitted());
        }
        sb->Release(3);  // a worker that died mid-call frees its place
        const ActivityScope again(Activity::Chain);
        CPPUNIT_ASSERT(again.admitted());
    }
    // A receipt wait polls through chain calls: they belong to a write already admitted.
    void testNestedChainCallsAreNotRecounted() {
        auto sb = Scoreboard::Create("test-activity", 3);
        CPPUNIT_ASSERT(sb.ok());
        sb->Slot(0).activity.store(static_cast<std::uint32_t>(Activity::Chain));
        BindActivitySlot(&*sb, 1, 1);
        const ActivityScope receipt(Activity::Receipt);
        const ActivityScope poll(Activity::Chain);
        CPPUNIT_ASSERT(poll.admitted());
        CPPUNIT_ASSERT(ActivityOf(*sb, 1) == Activity::Chain);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ActivityTests);
