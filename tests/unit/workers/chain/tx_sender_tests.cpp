#include <cppunit/extensions/HelperMacros.h>

#include "workers/chain/tx_sender.h"

using namespace sigil::workers;

// What a stuck transaction's replacement pays: the node replaces a pending transaction of the same
// nonce only when both fee fields rise by at least 10%; the live replacement is tested on anvil in
// chain_faults_tests.
class TxSenderTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TxSenderTests);
    CPPUNIT_TEST(testReplacementRaisesBothFeesByTheBump);
    CPPUNIT_TEST(testReplacementFollowsAHigherQuote);
    CPPUNIT_TEST(testReplacementNeverBelowTheNodesTenPercent);
    CPPUNIT_TEST(testReplacementKeepsEverythingElse);
    CPPUNIT_TEST_SUITE_END();

    static TxSigner::Fields Sent(std::uint64_t max_fee, std::uint64_t tip) {
        TxSigner::Fields f;
        f.chain_id = 31337;
        f.nonce = 7;
        f.max_fee_per_gas = max_fee;
        f.max_priority_fee_per_gas = tip;
        f.gas_limit = 100000;
        f.to.fill(0xab);
        f.data = {1, 2, 3};
        return f;
    }

public:
    void testReplacementRaisesBothFeesByTheBump() {
        const auto f = BumpedFees(Sent(2000, 1000), FeeQuote{}, 25);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{2500}, f.max_fee_per_gas);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1250}, f.max_priority_fee_per_gas);
        // Rounded up, and always at least one more.
        const auto g = BumpedFees(Sent(3, 1), FeeQuote{}, 25);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{4}, g.max_fee_per_gas);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, g.max_priority_fee_per_gas);
        const auto z = BumpedFees(Sent(0, 0), FeeQuote{}, 25);
        CPPUNIT_ASSERT(z.max_fee_per_gas >= 1 && z.max_priority_fee_per_gas >= 1);
    }

    void testReplacementFollowsAHigherQuote() {
        // The base fee rose past what the stuck one offers: the node's quote wins.
        const auto f = BumpedFees(Sent(2000, 1000), FeeQuote{90000, 1100}, 25);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{90000}, f.max_fee_per_gas);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1250}, f.max_priority_fee_per_gas);
        // The tip is never above the cap.
        const auto g = BumpedFees(Sent(1000, 1000), FeeQuote{0, 5000}, 25);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{5000}, g.max_priority_fee_per_gas);
        CPPUNIT_ASSERT(g.max_fee_per_gas >= g.max_priority_fee_per_gas);
    }

    void testReplacementNeverBelowTheNodesTenPercent() {
        const auto f = BumpedFees(Sent(1000, 100), FeeQuote{}, 1);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1100}, f.max_fee_per_gas);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{110}, f.max_priority_fee_per_gas);
        // No overflow near the top: capped.
        const auto g = BumpedFees(Sent(UINT64_MAX - 5, 10), FeeQuote{}, 25);
        CPPUNIT_ASSERT_EQUAL(UINT64_MAX, g.max_fee_per_gas);
    }

    void testReplacementKeepsEverythingElse() {
        const auto sent = Sent(2000, 1000);
        const auto f = BumpedFees(sent, FeeQuote{}, 25);
        CPPUNIT_ASSERT_EQUAL(sent.nonce, f.nonce);
        CPPUNIT_ASSERT_EQUAL(sent.chain_id, f.chain_id);
        CPPUNIT_ASSERT_EQUAL(sent.gas_limit, f.gas_limit);
        CPPUNIT_ASSERT(sent.to == f.to && sent.data == f.data);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(TxSenderTests);
