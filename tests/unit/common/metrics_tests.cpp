#include <cppunit/extensions/HelperMacros.h>

#include <sys/wait.h>
#include <unistd.h>

#include "common/metrics.h"
#include "common/prometheus_text.h"

using namespace sigil::common;

class MetricsTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(MetricsTests);
    CPPUNIT_TEST(testCountsAreNoOpsWhenUnbound);
    CPPUNIT_TEST(testChildrenCountIntoTheSameMapping);
    CPPUNIT_TEST(testAttachRefusesAForeignDescriptor);
    CPPUNIT_TEST(testStatusClassesAndRouteBounds);
    CPPUNIT_TEST(testHistogramBucketsAreCumulative);
    CPPUNIT_TEST(testLabelValuesAreEscaped);
    CPPUNIT_TEST(testChainMethodsOutsideTheTableAreOther);
    CPPUNIT_TEST_SUITE_END();

public:
    void tearDown() override { BindMetrics(nullptr); }

    void testCountsAreNoOpsWhenUnbound() {
        BindMetrics(nullptr);
        CountRequest(1, 200, 10);  // must not crash
        CountRun(RunEnding::Ok, 10);
        CPPUNIT_ASSERT(BoundMetrics() == nullptr);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, MetricsNowUs());  // metrics off: not even the clock
    }

    void testChildrenCountIntoTheSameMapping() {
        auto m = Metrics::Create("test-metrics");
        CPPUNIT_ASSERT(m.ok());
        BindMetrics(&*m);
        // Like the supervisor's workers: forked processes count into the mapping the parent reads.
        for (int i = 0; i < 3; ++i) {
            const pid_t pid = fork();
            if (pid == 0) {
                for (int k = 0; k < 1000; ++k) CountRun(RunEnding::ScriptError, 1500);
                _exit(0);
            }
            CPPUNIT_ASSERT(pid > 0);
        }
        for (int i = 0; i < 3; ++i) {
            int status = 0;
            CPPUNIT_ASSERT(wait(&status) > 0);
        }
        const auto& s = m->shared();
        const auto e = static_cast<std::uint32_t>(RunEnding::ScriptError);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{3000}, s.runs[e].load());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{3000}, s.run_seconds[e].count.load());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{3000 * 1500}, s.run_seconds[e].sum_us.load());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{3000}, s.run_seconds[e].buckets[1].load());  // 1.5 ms: le 0.0025
        // Attach (what a worker does with $SIGIL_METRICS_FD) sees the same counters.
        auto attached = Metrics::Attach(dup(m->fd()));
        CPPUNIT_ASSERT(attached.ok());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{3000}, attached->shared().runs[e].load());
    }

    void testAttachRefusesAForeignDescriptor() {
        int p[2];
        CPPUNIT_ASSERT(pipe(p) == 0);
        close(p[1]);
        auto m = Metrics::Attach(p[0]);
        CPPUNIT_ASSERT(!m.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("metrics_invalid"), m.error().code);
    }

    void testStatusClassesAndRouteBounds() {
        auto m = Metrics::Create("test-metrics");
        CPPUNIT_ASSERT(m.ok());
        BindMetrics(&*m);
        CountRequest(3, 204, 5);
        CountRequest(3, 404, 5);
        CountRequest(3, 503, 5);
        CountRequest(METRICS_ROUTES + 7, 200, 5);  // beyond the table: "unmatched", never out of bounds
        CountRequest(3, 999, 5);                   // no such class: counted as 5xx
        const auto& s = m->shared();
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s.requests[3][1].load());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s.requests[3][3].load());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, s.requests[3][4].load());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s.requests[0][1].load());
    }

    void testHistogramBucketsAreCumulative() {
        auto m = Metrics::Create("test-metrics");
        CPPUNIT_ASSERT(m.ok());
        SharedHistogram& h = m->shared().zygote_spawn_seconds;
        h.Observe(500);        // 0.5 ms  -> le 0.001
        h.Observe(20000);      // 20 ms   -> le 0.025
        h.Observe(60000000);   // 60 s    -> +Inf
        PrometheusText out;
        out.Family("x_seconds", "histogram", "test");
        out.Histogram("x_seconds", {{"kind", "a"}}, h);
        const std::string& t = out.text();
        CPPUNIT_ASSERT(t.find("x_seconds_bucket{kind=\"a\",le=\"0.001\"} 1\n") != std::string::npos);
        CPPUNIT_ASSERT(t.find("x_seconds_bucket{kind=\"a\",le=\"0.01\"} 1\n") != std::string::npos);
        CPPUNIT_ASSERT(t.find("x_seconds_bucket{kind=\"a\",le=\"0.025\"} 2\n") != std::string::npos);
        CPPUNIT_ASSERT(t.find("x_seconds_bucket{kind=\"a\",le=\"30\"} 2\n") != std::string::npos);
        CPPUNIT_ASSERT(t.find("x_seconds_bucket{kind=\"a\",le=\"+Inf\"} 3\n") != std::string::npos);
        CPPUNIT_ASSERT(t.find("x_seconds_count{kind=\"a\"} 3\n") != std::string::npos);
        CPPUNIT_ASSERT(t.find("x_seconds_sum{kind=\"a\"} 60.0205\n") != std::string::npos);
        CPPUNIT_ASSERT(t.find("# TYPE x_seconds histogram\n") != std::string::npos);
    }

    void testLabelValuesAreEscaped() {
        CPPUNIT_ASSERT_EQUAL(std::string("a\\\"b\\\\c\\nd"), EscapeLabelValue("a\"b\\c\nd"));
        PrometheusText out;
        out.Sample("y_total", {{"route", "GET /x"}}, std::uint64_t{7});
        CPPUNIT_ASSERT_EQUAL(std::string("y_total{route=\"GET /x\"} 7\n"), out.text());
    }

    void testChainMethodsOutsideTheTableAreOther() {
        CPPUNIT_ASSERT_EQUAL(std::string("eth_call"), std::string(ChainMethodName(ChainMethodIndex("eth_call"))));
        CPPUNIT_ASSERT_EQUAL(std::string("other"), std::string(ChainMethodName(ChainMethodIndex("debug_traceCall"))));
        CPPUNIT_ASSERT_EQUAL(std::string("other"), std::string(ChainMethodName(ChainMethodIndex(""))));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(MetricsTests);
