// The payer share of each instance sharing one chain: disjoint, covering, refused when it cannot be.
#include <cppunit/extensions/HelperMacros.h>

#include <vector>

#include "common/config.h"
#include "common/payer_range.h"

using namespace sigil::common;

class PayerRangeTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(PayerRangeTests);
    CPPUNIT_TEST(testOneInstanceHasEveryPayer);
    CPPUNIT_TEST(testSharesAreDisjointAndCoverEveryPayer);
    CPPUNIT_TEST(testUnevenSplitGivesEveryInstanceAPayer);
    CPPUNIT_TEST(testRefusesIndexOutsideTheCount);
    CPPUNIT_TEST(testRefusesFewerPayersThanInstances);
    CPPUNIT_TEST(testReadsTheChainSection);
    CPPUNIT_TEST_SUITE_END();

public:
    void testOneInstanceHasEveryPayer() {
        auto r = SplitPayers(64, 0, 1);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_EQUAL(0u, r->first);
        CPPUNIT_ASSERT_EQUAL(64u, r->count);
    }

    void testSharesAreDisjointAndCoverEveryPayer() {
        for (std::uint32_t payers : {1u, 2u, 7u, 64u, 1024u}) {
            for (std::uint32_t n = 1; n <= payers && n <= 40; ++n) {
                std::vector<int> owner(payers, -1);
                for (std::uint32_t i = 0; i < n; ++i) {
                    auto r = SplitPayers(payers, i, n);
                    CPPUNIT_ASSERT(r.ok());
                    CPPUNIT_ASSERT(r->count >= 1);
                    for (std::uint32_t k = r->first; k < r->first + r->count; ++k) {
                        CPPUNIT_ASSERT(k < payers);
                        CPPUNIT_ASSERT_EQUAL_MESSAGE("payer held by two instances", -1, owner[k]);
                        owner[k] = static_cast<int>(i);
                    }
                }
                for (int o : owner) CPPUNIT_ASSERT_MESSAGE("payer held by no instance", o >= 0);
            }
        }
    }

    void testUnevenSplitGivesEveryInstanceAPayer() {
        // 8 payers over 3 instances: 2, 3, 3.
        const std::uint32_t firsts[] = {0, 2, 5}, counts[] = {2, 3, 3};
        for (std::uint32_t i = 0; i < 3; ++i) {
            auto r = SplitPayers(8, i, 3);
            CPPUNIT_ASSERT(r.ok());
            CPPUNIT_ASSERT_EQUAL(firsts[i], r->first);
            CPPUNIT_ASSERT_EQUAL(counts[i], r->count);
        }
    }

    void testRefusesIndexOutsideTheCount() {
        auto r = SplitPayers(64, 2, 2);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_config"), r.error().code);
        CPPUNIT_ASSERT(r.error().message.find("instance_index") != std::string::npos);
        CPPUNIT_ASSERT(!SplitPayers(64, 0, 0).ok());
    }

    void testRefusesFewerPayersThanInstances() {
        auto r = SplitPayers(2, 0, 3);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_config"), r.error().code);
        CPPUNIT_ASSERT(r.error().message.find("payers") != std::string::npos);
    }

    void testReadsTheChainSection() {
        auto config = Config::Parse("[chain]\npayers = 10\ninstance_index = 1\ninstance_count = 2\n");
        CPPUNIT_ASSERT(config.ok());
        auto r = PayerRangeFromConfig(*config);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_EQUAL(5u, r->first);
        CPPUNIT_ASSERT_EQUAL(5u, r->count);
        auto defaults = PayerRangeFromConfig(Config::Defaults());
        CPPUNIT_ASSERT(defaults.ok());
        CPPUNIT_ASSERT_EQUAL(0u, defaults->first);
        CPPUNIT_ASSERT_EQUAL(64u, defaults->count);
        // The schema's own range refuses an index past 1023 before any share is computed.
        CPPUNIT_ASSERT(!Config::Parse("[chain]\ninstance_index = 1024\n").ok());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PayerRangeTests);
