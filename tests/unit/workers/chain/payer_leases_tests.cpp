#include <cppunit/extensions/HelperMacros.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "common/scoreboard.h"
#include "workers/chain/payer_leases.h"

using namespace sigil;
using namespace sigil::workers;
using namespace std::chrono_literals;

// Payer leases: a wallet is held by one write at a time, across processes sharing the scoreboard,
// and comes back when the write ends or its worker is reaped.
class PayerLeasesTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(PayerLeasesTests);
    CPPUNIT_TEST(testEachPayerLeasedOnceUntilGivenBack);
    CPPUNIT_TEST(testNoFreePayerIsOverloadedAfterABriefWait);
    CPPUNIT_TEST(testWaiterGetsAPayerGivenBackMeanwhile);
    CPPUNIT_TEST(testWorkersShareTheScoreboardTable);
    CPPUNIT_TEST(testReapedWorkersLeasesComeBack);
    CPPUNIT_TEST_SUITE_END();

public:
    void testEachPayerLeasedOnceUntilGivenBack() {
        PayerLeases leases(nullptr, 3, 1);  // no scoreboard: this process's own table
        std::vector<PayerLeases::Lease> held;
        std::set<std::uint32_t> indices;
        for (int i = 0; i < 3; ++i) {
            auto l = leases.TryAcquire();
            CPPUNIT_ASSERT(l.has_value());
            indices.insert(l->Index());
            held.push_back(std::move(*l));
        }
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, indices.size());
        CPPUNIT_ASSERT(*indices.rbegin() < 3);
        CPPUNIT_ASSERT(!leases.TryAcquire().has_value());
        const std::uint32_t given_back = held[1].Index();
        held.erase(held.begin() + 1);
        auto again = leases.TryAcquire();
        CPPUNIT_ASSERT(again.has_value());
        CPPUNIT_ASSERT_EQUAL(given_back, again->Index());
        // A moved-from lease gives nothing back twice.
        PayerLeases::Lease moved = std::move(*again);
        again.reset();
        CPPUNIT_ASSERT(!leases.TryAcquire().has_value());
    }

    void testNoFreePayerIsOverloadedAfterABriefWait() {
        PayerLeases leases(nullptr, 1, 1);
        auto only = leases.Acquire(100ms);
        CPPUNIT_ASSERT(only.ok());
        const auto t = std::chrono::steady_clock::now();
        auto none = leases.Acquire(100ms);
        const auto waited = std::chrono::steady_clock::now() - t;
        CPPUNIT_ASSERT(!none.ok());
        CPPUNIT_ASSERT(none.error().kind == common::ErrorKind::Suspended);  // 503 with Retry-After: 1
        CPPUNIT_ASSERT_EQUAL(std::string("overloaded"), none.error().code);
        CPPUNIT_ASSERT(waited >= 100ms && waited < 1000ms);
    }

    void testWaiterGetsAPayerGivenBackMeanwhile() {
        auto sb = common::Scoreboard::Create("test-leases", 2);
        CPPUNIT_ASSERT(sb.ok());
        PayerLeases mine(sb->PayerOwners(), 1, 1);
        auto held = mine.Acquire(0ms);
        CPPUNIT_ASSERT(held.ok());
        const pid_t pid = ::fork();
        if (pid == 0) {
            PayerLeases theirs(sb->PayerOwners(), 1, 2);
            ::_exit(theirs.Acquire(2000ms).ok() ? 0 : 1);
        }
        std::this_thread::sleep_for(50ms);
        { auto gone = std::move(held).value(); }  // the write ends: the payer goes back
        int status = 0;
        ::waitpid(pid, &status, 0);
        CPPUNIT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }

    void testWorkersShareTheScoreboardTable() {
        auto sb = common::Scoreboard::Create("test-leases", 4);
        CPPUNIT_ASSERT(sb.ok());
        PayerLeases a(sb->PayerOwners(), 2, 1);
        PayerLeases b(sb->PayerOwners(), 2, 2);
        auto la = a.TryAcquire();
        auto lb = b.TryAcquire();
        CPPUNIT_ASSERT(la && lb);
        CPPUNIT_ASSERT(la->Index() != lb->Index());
        CPPUNIT_ASSERT(!a.TryAcquire() && !b.TryAcquire());
        CPPUNIT_ASSERT_EQUAL(1u, sb->PayersLeasedBy(0));
        CPPUNIT_ASSERT_EQUAL(1u, sb->PayersLeasedBy(1));
        // Payers beyond `payers` are never handed out, whatever the table's size.
        PayerLeases c(sb->PayerOwners(), 2, 3);
        CPPUNIT_ASSERT(!c.TryAcquire());
    }

    // A worker killed with SIGKILL mid-write never gives its lease back itself: the supervisor's
    // Release of its slot does, and only that slot's.
    void testReapedWorkersLeasesComeBack() {
        auto sb = common::Scoreboard::Create("test-leases", 4);
        CPPUNIT_ASSERT(sb.ok());
        PayerLeases survivor(sb->PayerOwners(), 3, 1);  // slot 0
        auto kept = survivor.TryAcquire();
        CPPUNIT_ASSERT(kept);
        int ready[2];
        CPPUNIT_ASSERT_EQUAL(0, ::pipe(ready));
        const pid_t pid = ::fork();
        if (pid == 0) {
            PayerLeases victim(sb->PayerOwners(), 3, 3);  // slot 2
            auto l1 = victim.TryAcquire();
            auto l2 = victim.TryAcquire();
            const char ok = (l1 && l2) ? 'y' : 'n';
            (void)!::write(ready[1], &ok, 1);
            ::pause();
            ::_exit(0);
        }
        char ok = 0;
        CPPUNIT_ASSERT_EQUAL(ssize_t{1}, ::read(ready[0], &ok, 1));
        CPPUNIT_ASSERT_EQUAL('y', ok);
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        CPPUNIT_ASSERT_EQUAL(2u, sb->PayersLeasedBy(2));
        CPPUNIT_ASSERT(!survivor.TryAcquire());  // still held by the dead worker
        sb->Release(2);
        CPPUNIT_ASSERT_EQUAL(0u, sb->PayersLeasedBy(2));
        CPPUNIT_ASSERT_EQUAL(1u, sb->PayersLeasedBy(0));
        auto a = survivor.TryAcquire();
        auto b = survivor.TryAcquire();
        CPPUNIT_ASSERT(a && b);
        ::close(ready[0]);
        ::close(ready[1]);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(PayerLeasesTests);
