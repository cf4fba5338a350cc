#include <cppunit/extensions/HelperMacros.h>

#include "workers/chain/circuit.h"

using namespace sigil::workers;
using namespace std::chrono_literals;
using Admission = ChainCircuit::Admission;

class ChainCircuitTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ChainCircuitTests);
    CPPUNIT_TEST(testClosedUntilThresholdConsecutiveFailures);
    CPPUNIT_TEST(testSuccessResetsTheFailureCount);
    CPPUNIT_TEST(testOnlyOneProbeAfterTheOpenTime);
    CPPUNIT_TEST(testFailedProbeReopensAtOnce);
    CPPUNIT_TEST(testSuccessfulProbeClosesForEveryone);
    CPPUNIT_TEST(testProbeThatNeverReportsExpires);
    CPPUNIT_TEST(testWorkersShareOneCircuit);
    CPPUNIT_TEST(testSlowAnswersOpenTheCircuit);
    CPPUNIT_TEST(testSlowProbeKeepsItOpenAndAFastOneCloses);
    CPPUNIT_TEST_SUITE_END();

    const CircuitOptions options{3, 500ms, 1000ms};
    static constexpr std::int64_t T0 = 1'000'000;

    static void Fail(ChainCircuit& c, std::int64_t now, int times = 1) {
        for (int i = 0; i < times; ++i) c.RecordFailure(now, c.Admit(now, 2000));
    }

public:
    void testClosedUntilThresholdConsecutiveFailures() {
        ChainCircuit c(options);
        Fail(c, T0, 2);
        CPPUNIT_ASSERT(c.Admit(T0, 2000) == Admission::Closed);
        Fail(c, T0);
        CPPUNIT_ASSERT(c.IsOpen(T0));
        CPPUNIT_ASSERT(c.Admit(T0 + 1, 2000) == Admission::Refused);
        CPPUNIT_ASSERT(c.Admit(T0 + 499, 2000) == Admission::Refused);
    }

    void testSuccessResetsTheFailureCount() {
        ChainCircuit c(options);
        Fail(c, T0, 2);
        c.RecordSuccess();
        Fail(c, T0, 2);
        CPPUNIT_ASSERT(c.Admit(T0, 2000) == Admission::Closed);
        CPPUNIT_ASSERT(!c.IsOpen(T0));
    }

    void testOnlyOneProbeAfterTheOpenTime() {
        ChainCircuit c(options);
        Fail(c, T0, 3);
        CPPUNIT_ASSERT(c.Admit(T0 + 500, 2000) == Admission::Probe);
        // While the probe runs (up to its 2 s budget), everyone else is refused.
        CPPUNIT_ASSERT(c.Admit(T0 + 501, 2000) == Admission::Refused);
        CPPUNIT_ASSERT(c.Admit(T0 + 2499, 2000) == Admission::Refused);
    }

    void testFailedProbeReopensAtOnce() {
        ChainCircuit c(options);
        Fail(c, T0, 3);
        const auto probe = c.Admit(T0 + 600, 2000);
        CPPUNIT_ASSERT(probe == Admission::Probe);
        c.RecordFailure(T0 + 700, probe);
        CPPUNIT_ASSERT(c.Admit(T0 + 1199, 2000) == Admission::Refused);
        CPPUNIT_ASSERT(c.Admit(T0 + 1200, 2000) == Admission::Probe);
    }

    void testSuccessfulProbeClosesForEveryone() {
        ChainCircuit c(options);
        Fail(c, T0, 3);
        CPPUNIT_ASSERT(c.Admit(T0 + 500, 2000) == Admission::Probe);
        c.RecordSuccess();
        CPPUNIT_ASSERT(c.Admit(T0 + 501, 2000) == Admission::Closed);
        // The count starts again from zero: one failure does not reopen it.
        Fail(c, T0 + 502);
        CPPUNIT_ASSERT(c.Admit(T0 + 503, 2000) == Admission::Closed);
    }

    void testProbeThatNeverReportsExpires() {
        ChainCircuit c(options);
        Fail(c, T0, 3);
        CPPUNIT_ASSERT(c.Admit(T0 + 500, 300) == Admission::Probe);  // its worker dies here
        CPPUNIT_ASSERT(c.Admit(T0 + 799, 300) == Admission::Refused);
        CPPUNIT_ASSERT(c.Admit(T0 + 800, 300) == Admission::Probe);
    }

    void testWorkersShareOneCircuit() {
        sigil::common::SharedCircuit shared;
        ChainCircuit a(options, &shared);
        ChainCircuit b(options, &shared);
        Fail(a, T0, 2);
        Fail(b, T0, 1);  // the pool's third consecutive failure
        CPPUNIT_ASSERT(a.Admit(T0 + 1, 2000) == Admission::Refused);
        CPPUNIT_ASSERT(b.Admit(T0 + 500, 2000) == Admission::Probe);
        CPPUNIT_ASSERT(a.Admit(T0 + 501, 2000) == Admission::Refused);
        b.RecordSuccess();
        CPPUNIT_ASSERT(a.Admit(T0 + 502, 2000) == Admission::Closed);
    }

    // A node that answers, but slowly (a stalled node draining its queue, a paused one resumed for a
    // moment), ties up callers like one that fails: slow_call decides which answers count.
    void testSlowAnswersOpenTheCircuit() {
        ChainCircuit c(options);
        auto answer = [&c](std::int64_t started, std::int64_t took) { c.RecordAnswer(started, started + took, c.Admit(started, 2000)); };
        answer(T0, 1000);  // at the limit: fine
        answer(T0, 1001);
        answer(T0, 1500);
        CPPUNIT_ASSERT(!c.IsOpen(T0 + 1500));
        answer(T0, 2000);  // the third slow answer in a row
        CPPUNIT_ASSERT(c.IsOpen(T0 + 2000));
        CPPUNIT_ASSERT(c.Admit(T0 + 2001, 2000) == Admission::Refused);
        // A fast answer in between starts the count again.
        ChainCircuit d(options);
        d.RecordAnswer(T0, T0 + 1200, d.Admit(T0, 2000));
        d.RecordAnswer(T0, T0 + 1200, d.Admit(T0, 2000));
        d.RecordAnswer(T0, T0 + 5, d.Admit(T0, 2000));
        d.RecordAnswer(T0, T0 + 1200, d.Admit(T0, 2000));
        CPPUNIT_ASSERT(!d.IsOpen(T0 + 1200));
    }

    // After the chain resumes, the first probe after open_for (500 ms) answers fast and closes the
    // circuit: chain requests flow again within about half a second; a slow probe reopens it.
    void testSlowProbeKeepsItOpenAndAFastOneCloses() {
        ChainCircuit c(options);
        Fail(c, T0, 3);
        const auto slow = c.Admit(T0 + 500, 2000);
        CPPUNIT_ASSERT(slow == Admission::Probe);
        c.RecordAnswer(T0 + 500, T0 + 1800, slow);
        CPPUNIT_ASSERT(c.Admit(T0 + 1801, 2000) == Admission::Refused);
        const auto fast = c.Admit(T0 + 2300, 2000);
        CPPUNIT_ASSERT(fast == Admission::Probe);
        c.RecordAnswer(T0 + 2300, T0 + 2303, fast);
        CPPUNIT_ASSERT(c.Admit(T0 + 2304, 2000) == Admission::Closed);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ChainCircuitTests);
