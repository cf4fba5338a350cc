// The credit ledger against both stores: the same cases on a SQLite file in a temporary folder and
// on a real PostgreSQL server this suite starts once (initdb + postgres on a free loopback port).
#include <cppunit/extensions/HelperMacros.h>

#include <libpq-fe.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/postgres_server.h"
#include "workers/billing/ledger.h"
#include "workers/billing/postgres_ledger.h"
#include "workers/billing/sqlite_ledger.h"

using namespace sigil::workers::billing;
using sigil::common::ErrorKind;

namespace {

constexpr std::int64_t T0 = 1'700'000'000'000;  // the fixture clock's start, unix ms
constexpr std::int64_t DAY_MS = 24LL * 3600 * 1000;

std::string Customer(int n) {
    char buf[43];
    std::snprintf(buf, sizeof buf, "0x%040x", n);
    return buf;
}

template <typename R>
void ExpectError(const R& r, ErrorKind kind, const std::string& code) {
    CPPUNIT_ASSERT_MESSAGE("expected error " + code, !r.ok());
    CPPUNIT_ASSERT_EQUAL_MESSAGE(r.error().message, code, r.error().code);
    CPPUNIT_ASSERT_MESSAGE(r.error().code, r.error().kind == kind);
}

template <typename R>
void ExpectOk(const R& r) {
    CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().code + ": " + r.error().message, r.ok());
}

// Entries newest first: ids strictly decreasing, and oldest to newest each balance_after is the
// previous one plus the delta, never negative.
void ExpectConsistent(const std::vector<LedgerEntry>& newest_first) {
    Cents balance = 0;
    for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) {
        if (it != newest_first.rbegin()) CPPUNIT_ASSERT((it - 1)->id < it->id);
        CPPUNIT_ASSERT_EQUAL(balance + it->delta, it->balance_after);
        CPPUNIT_ASSERT(it->balance_after >= 0);
        balance = it->balance_after;
    }
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The suite's PostgreSQL server, started on first use and stopped when the suite's process exits.
// A failed start is remembered, so every PostgreSQL case fails at once with the same message.
sigil::test::PostgresServer& SharedPostgres() {
    static std::unique_ptr<sigil::test::PostgresServer> server;
    static std::string failure;
    if (!server) {
        if (!failure.empty()) throw std::runtime_error(failure);
        try {
            server = std::make_unique<sigil::test::PostgresServer>(std::vector<std::string>{"fsync=off"});
        } catch (const std::exception& e) {
            failure = std::string("cannot start the test PostgreSQL server: ") + e.what();
            throw std::runtime_error(failure);
        }
    }
    return *server;
}

}  // namespace

// Every case, for any store. Subclasses give a fresh, empty store per case.
class LedgerContractTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(LedgerContractTests);
    CPPUNIT_TEST(testNewCustomerHasZeroBalance);
    CPPUNIT_TEST(testCreditOnceCreditsOnce);
    CPPUNIT_TEST(testChargeRefusesWhenShortAndWritesNothing);
    CPPUNIT_TEST(testSpenderCapCountsChargesAndSettlements);
    CPPUNIT_TEST(testChargeUpToHoldsWhatBalanceAndCapCover);
    CPPUNIT_TEST(testSpentTotalsRebuiltForALedgerMadeBeforeThem);
    CPPUNIT_TEST(testSettleRefundsChargesExtraOrNothing);
    CPPUNIT_TEST(testSettleClampsExtraAtZeroBalance);
    CPPUNIT_TEST(testSettleOnlyChargesAndOnlyOnce);
    CPPUNIT_TEST(testMoveBalanceMovesEverything);
    CPPUNIT_TEST(testMoveBalanceOnceMovesOncePerId);
    CPPUNIT_TEST(testEntriesNewestFirstAndConsistent);
    CPPUNIT_TEST(testIntentsPutFindConflictAndCredited);
    CPPUNIT_TEST(testCreditOnceRefusesAnotherCustomersIntent);
    CPPUNIT_TEST(testClaimFinishRelease);
    CPPUNIT_TEST(testClaimsExpireAfter24Hours);
    CPPUNIT_TEST(testClaimsAreBoundedPerOwner);
    CPPUNIT_TEST(testAbandonedClaimIsTakenOverAfterItsLease);
    CPPUNIT_TEST(testCreditFromBudgetStopsAtTheBudget);
    CPPUNIT_TEST(testOpensTablesMadeBeforeOwnersAndBlocks);
    CPPUNIT_TEST(testRejectsInvalidInput);
    CPPUNIT_TEST(testReopenKeepsDataAndOpenDispatches);
    CPPUNIT_TEST(testEntriesAreAppendOnly);
    CPPUNIT_TEST(testUnreachableStoreIsUnavailable);
    CPPUNIT_TEST(testConcurrentChargesFromThreadsNeverOverdraw);
    CPPUNIT_TEST(testConcurrentChargesFromProcessesNeverOverdraw);
    CPPUNIT_TEST(testDropsTheUnreadSpenderIndex);
    CPPUNIT_TEST_SUITE_END_ABSTRACT();

public:
    // The store under test, with the fixture clock.
    virtual std::unique_ptr<Ledger> OpenLedger() = 0;
    // What Ledger::Open takes for the same store.
    virtual std::string Database() = 0;
    // A database Ledger::Open cannot reach.
    virtual std::string UnreachableDatabase() = 0;
    // Runs one raw SQL statement on the store, bypassing the ledger; answers whether it succeeded.
    virtual bool RawSql(const std::string& sql) = 0;
    // Whether the store has an index of that name.
    virtual bool IndexExists(const std::string& name) = 0;

    // Ledgers made while the spend cap summed a key's entries had an index for that sum; Open drops
    // it (every charge paid to keep it) and the cap still holds.
    void testDropsTheUnreadSpenderIndex() {
        const std::string key = "0x" + std::string(64, 'c');
        ExpectOk(OpenLedger()->CreditOnce(A, "c1", 30, "starter", ""));
        CPPUNIT_ASSERT(RawSql("CREATE INDEX entries_customer_spender ON entries (customer, spender)"));
        CPPUNIT_ASSERT(IndexExists("entries_customer_spender"));
        auto l = OpenLedger();
        CPPUNIT_ASSERT(!IndexExists("entries_customer_spender"));
        ExpectOk(l->Charge(A, 5, "write:add_group", "r1", key, 8));
        ExpectError(l->Charge(A, 5, "write:add_group", "r2", key, 8), ErrorKind::PaymentRequired, "spend_cap_reached");
        CPPUNIT_ASSERT_EQUAL(Cents{25}, *l->Balance(A));
    }

    void testNewCustomerHasZeroBalance() {
        auto l = OpenLedger();
        auto b = l->Balance(A);
        ExpectOk(b);
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *b);
        auto e = l->Entries(A, 10);
        ExpectOk(e);
        CPPUNIT_ASSERT(e->empty());
    }

    void testCreditOnceCreditsOnce() {
        auto l = OpenLedger();
        auto first = l->CreditOnce(A, "starter:" + A, 100, "starter", "req-1");
        ExpectOk(first);
        CPPUNIT_ASSERT(*first);
        CPPUNIT_ASSERT_EQUAL(Cents{100}, *l->Balance(A));
        auto second = l->CreditOnce(A, "starter:" + A, 100, "starter", "req-2");
        ExpectOk(second);
        CPPUNIT_ASSERT(!*second);
        CPPUNIT_ASSERT_EQUAL(Cents{100}, *l->Balance(A));
        // The id is taken for every customer.
        auto other = l->CreditOnce(B, "starter:" + A, 100, "starter", "req-3");
        ExpectOk(other);
        CPPUNIT_ASSERT(!*other);
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(B));
        auto entries = l->Entries(A, 10);
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, entries->size());
        CPPUNIT_ASSERT_EQUAL(Cents{100}, (*entries)[0].delta);
        CPPUNIT_ASSERT_EQUAL(std::string("req-1"), (*entries)[0].request_id);
    }

    void testChargeRefusesWhenShortAndWritesNothing() {
        auto l = OpenLedger();
        ExpectError(l->Charge(A, 1, "write:add_group", "r0"), ErrorKind::PaymentRequired, "insufficient_credit");
        ExpectOk(l->CreditOnce(A, "c1", 10, "starter", ""));
        ExpectError(l->Charge(A, 11, "write:add_group", "r1"), ErrorKind::PaymentRequired, "insufficient_credit");
        CPPUNIT_ASSERT_EQUAL(Cents{10}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, l->Entries(A, 10)->size());
        auto id = l->Charge(A, 10, "write:add_group", "r2");
        ExpectOk(id);
        CPPUNIT_ASSERT(*id > 0);
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(A));
        auto free = l->Charge(A, 0, "write:free", "r3");  // a zero price is always covered
        ExpectOk(free);
        CPPUNIT_ASSERT(*free > *id);
        ExpectError(l->Charge(A, 1, "write:add_group", "r4"), ErrorKind::PaymentRequired, "insufficient_credit");
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, l->Entries(A, 10)->size());
    }

    void testSpenderCapCountsChargesAndSettlements() {
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 100, "starter", ""));
        const std::string key = "0x" + std::string(64, 'a');
        const std::string other = "0x" + std::string(64, 'b');
        // A cap of 10: two charges of 4 fit, a third does not (and writes nothing).
        ExpectOk(l->Charge(A, 4, "write:add_group", "r1", key, 10));
        auto hold = l->Charge(A, 4, "run:hold", "r2", key, 10);
        ExpectOk(hold);
        ExpectError(l->Charge(A, 4, "write:add_group", "r3", key, 10), ErrorKind::PaymentRequired, "spend_cap_reached");
        CPPUNIT_ASSERT_EQUAL(Cents{92}, *l->Balance(A));
        // A refund at settlement is the spender's again.
        ExpectOk(l->Settle(*hold, 1, "run:settle"));
        ExpectOk(l->Charge(A, 4, "write:add_group", "r4", key, 10));
        ExpectError(l->Charge(A, 2, "write:add_group", "r5", key, 10), ErrorKind::PaymentRequired, "spend_cap_reached");
        // Another key, the master key (no spender) and a cap of 0 (none) are not held to it.
        ExpectOk(l->Charge(A, 8, "write:add_group", "r6", other, 10));
        ExpectOk(l->Charge(A, 30, "write:add_group", "r7"));
        ExpectOk(l->Charge(A, 20, "write:add_group", "r8", key, 0));
        CPPUNIT_ASSERT_EQUAL(Cents{100 - 4 - 1 - 4 - 8 - 30 - 20}, *l->Balance(A));
        ExpectError(l->Charge(A, 1, "write:x", "r9", std::string(101, 'k'), 10), ErrorKind::InvalidInput, "invalid_spender");
    }

    // A run's hold: whole units up to the maximum, as many as the balance and the spender's
    // remaining cap both cover, at least one; settled like any charge.
    void testChargeUpToHoldsWhatBalanceAndCapCover() {
        const std::string key = "0x" + std::string(64, 'e');
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 23, "starter", ""));
        auto full = l->ChargeUpTo(A, 5, 3, "run:hold", "r1");
        ExpectOk(full);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{3}, full->units);
        CPPUNIT_ASSERT_EQUAL(Cents{8}, *l->Balance(A));
        auto balance_bound = l->ChargeUpTo(A, 5, 3, "run:hold", "r2");  // 8 cents: one unit
        ExpectOk(balance_bound);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{1}, balance_bound->units);
        ExpectError(l->ChargeUpTo(A, 5, 3, "run:hold", "r3"), ErrorKind::PaymentRequired, "insufficient_credit");
        CPPUNIT_ASSERT_EQUAL(Cents{3}, *l->Balance(A));
        ExpectOk(l->Settle(full->id, 5, "run:settle"));
        ExpectOk(l->Settle(balance_bound->id, 5, "run:settle"));
        CPPUNIT_ASSERT_EQUAL(Cents{13}, *l->Balance(A));
        // The spender's cap bounds it too, counting its earlier charges and holds.
        ExpectOk(l->CreditOnce(A, "c2", 1000, "payment", ""));
        auto capped = l->ChargeUpTo(A, 5, 30, "run:hold", "r4", key, 12);
        ExpectOk(capped);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{2}, capped->units);
        ExpectError(l->ChargeUpTo(A, 5, 30, "run:hold", "r5", key, 12), ErrorKind::PaymentRequired, "spend_cap_reached");
        ExpectOk(l->Settle(capped->id, 5, "run:settle"));
        auto rest = l->ChargeUpTo(A, 5, 30, "run:hold", "r6", key, 12);
        ExpectOk(rest);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{1}, rest->units);
        ExpectError(l->ChargeUpTo(A, 0, 3, "run:hold", "r7"), ErrorKind::InvalidInput, "invalid_unit");
        ExpectError(l->ChargeUpTo(A, 5, 0, "run:hold", "r8"), ErrorKind::InvalidInput, "invalid_max_units");
    }

    // The spend cap reads a running total per spender; a ledger made before that table existed
    // gains it, summed from its entries, on the next Open.
    void testSpentTotalsRebuiltForALedgerMadeBeforeThem() {
        const std::string key = "0x" + std::string(64, 'd');
        {
            auto l = OpenLedger();
            ExpectOk(l->CreditOnce(A, "c1", 100, "starter", ""));
            ExpectOk(l->Charge(A, 4, "write:add_group", "r1", key, 10));
            auto hold = l->Charge(A, 5, "run:hold", "r2", key, 10);
            ExpectOk(hold);
            ExpectOk(l->Settle(*hold, 2, "run:settle"));  // spent 6 of 10
        }
        CPPUNIT_ASSERT(RawSql("DROP TABLE spent"));
        auto l = OpenLedger();
        ExpectError(l->Charge(A, 5, "write:add_group", "r3", key, 10), ErrorKind::PaymentRequired, "spend_cap_reached");
        ExpectOk(l->Charge(A, 4, "write:add_group", "r4", key, 10));
        ExpectError(l->Charge(A, 1, "write:add_group", "r5", key, 10), ErrorKind::PaymentRequired, "spend_cap_reached");
        CPPUNIT_ASSERT_EQUAL(Cents{100 - 6 - 4}, *l->Balance(A));
    }

    void testSettleRefundsChargesExtraOrNothing() {
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 100, "starter", ""));
        auto refund_hold = l->Charge(A, 10, "run:hold", "r1");
        auto refunded = l->Settle(*refund_hold, 4, "run:settle");
        ExpectOk(refunded);
        CPPUNIT_ASSERT_EQUAL(Cents{4}, *refunded);
        CPPUNIT_ASSERT_EQUAL(Cents{96}, *l->Balance(A));

        auto extra_hold = l->Charge(A, 10, "run:hold", "r2");
        auto extra = l->Settle(*extra_hold, 25, "run:settle");
        ExpectOk(extra);
        CPPUNIT_ASSERT_EQUAL(Cents{25}, *extra);
        CPPUNIT_ASSERT_EQUAL(Cents{71}, *l->Balance(A));

        auto equal_hold = l->Charge(A, 10, "run:hold", "r3");
        const std::size_t before = l->Entries(A, 100)->size();
        auto equal = l->Settle(*equal_hold, 10, "run:settle");
        ExpectOk(equal);
        CPPUNIT_ASSERT_EQUAL(Cents{10}, *equal);
        CPPUNIT_ASSERT_EQUAL(Cents{61}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(before, l->Entries(A, 100)->size());  // nothing written when equal
        auto entries = l->Entries(A, 100);
        CPPUNIT_ASSERT_EQUAL(std::size_t{6}, entries->size());
        ExpectConsistent(*entries);
    }

    void testSettleClampsExtraAtZeroBalance() {
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 10, "starter", ""));
        auto hold = l->Charge(A, 10, "run:hold", "r1");
        auto charged = l->Settle(*hold, 30, "run:settle");
        ExpectOk(charged);
        CPPUNIT_ASSERT_EQUAL(Cents{10}, *charged);  // the balance could pay nothing more: forgiven
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, l->Entries(A, 10)->size());

        ExpectOk(l->CreditOnce(A, "c2", 15, "payment", ""));
        auto hold2 = l->Charge(A, 10, "run:hold", "r2");
        auto charged2 = l->Settle(*hold2, 30, "run:settle");
        CPPUNIT_ASSERT_EQUAL(Cents{15}, *charged2);  // 10 held + the 5 left
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(A));
        ExpectConsistent(*l->Entries(A, 10));
    }

    void testSettleOnlyChargesAndOnlyOnce() {
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 50, "starter", ""));
        ExpectError(l->Settle(987654, 1, "run:settle"), ErrorKind::NotFound, "charge_not_found");
        const std::int64_t credit_id = (*l->Entries(A, 1))[0].id;
        ExpectError(l->Settle(credit_id, 1, "run:settle"), ErrorKind::InvalidInput, "not_a_charge");
        auto hold = l->Charge(A, 10, "run:hold", "r1");
        CPPUNIT_ASSERT_EQUAL(Cents{4}, *l->Settle(*hold, 4, "run:settle"));
        CPPUNIT_ASSERT_EQUAL(Cents{46}, *l->Balance(A));
        // A retry answers the first result and writes nothing; another amount is refused.
        auto again = l->Settle(*hold, 4, "run:settle");
        ExpectOk(again);
        CPPUNIT_ASSERT_EQUAL(Cents{4}, *again);
        CPPUNIT_ASSERT_EQUAL(Cents{46}, *l->Balance(A));
        ExpectError(l->Settle(*hold, 5, "run:settle"), ErrorKind::Conflict, "already_settled");
        const std::int64_t settle_entry = (*l->Entries(A, 1))[0].id;
        ExpectError(l->Settle(settle_entry, 1, "run:settle"), ErrorKind::InvalidInput, "not_a_charge");
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, l->Entries(A, 10)->size());
    }

    void testMoveBalanceMovesEverything() {
        auto l = OpenLedger();
        auto empty = l->MoveBalance(A, B, "conv-0");
        ExpectOk(empty);
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *empty);
        CPPUNIT_ASSERT(l->Entries(A, 10)->empty());
        CPPUNIT_ASSERT(l->Entries(B, 10)->empty());

        ExpectOk(l->CreditOnce(A, "c1", 70, "starter", ""));
        ExpectOk(l->CreditOnce(B, "c2", 5, "starter", ""));
        auto moved = l->MoveBalance(A, B, "conv-1");
        ExpectOk(moved);
        CPPUNIT_ASSERT_EQUAL(Cents{70}, *moved);
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(Cents{75}, *l->Balance(B));
        auto from = l->Entries(A, 10);
        CPPUNIT_ASSERT_EQUAL(Cents{-70}, (*from)[0].delta);
        CPPUNIT_ASSERT_EQUAL(std::string("move:to:") + B, (*from)[0].reason);
        CPPUNIT_ASSERT_EQUAL(std::string("conv-1"), (*from)[0].request_id);
        auto to = l->Entries(B, 10);
        CPPUNIT_ASSERT_EQUAL(Cents{70}, (*to)[0].delta);
        CPPUNIT_ASSERT_EQUAL(std::string("move:from:") + A, (*to)[0].reason);
        ExpectConsistent(*from);
        ExpectConsistent(*to);

        auto nothing = l->MoveBalance(A, B, "conv-2");
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *nothing);
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, l->Entries(A, 10)->size());
        ExpectError(l->MoveBalance(A, A, "conv-3"), ErrorKind::InvalidInput, "invalid_to");
    }

    void testMoveBalanceOnceMovesOncePerId() {
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 70, "starter", ""));
        auto moved = l->MoveBalanceOnce(A, B, "0xaa:3", "chain:0xaa");
        ExpectOk(moved);
        CPPUNIT_ASSERT_EQUAL(Cents{70}, *moved);
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(Cents{70}, *l->Balance(B));
        ExpectConsistent(*l->Entries(A, 10));
        ExpectConsistent(*l->Entries(B, 10));
        // Credit that arrives later stays where it lands, however often the same event is heard.
        ExpectOk(l->CreditOnce(A, "c2", 5, "payment", ""));
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->MoveBalanceOnce(A, B, "0xaa:3", "chain:0xaa"));
        CPPUNIT_ASSERT_EQUAL(Cents{5}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(Cents{70}, *l->Balance(B));
        // An id that found nothing to move is spent all the same.
        auto l2 = l->MoveBalanceOnce(B, A, "0xbb:0", "chain:0xbb");
        CPPUNIT_ASSERT_EQUAL(Cents{70}, *l2);
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->MoveBalanceOnce(B, A, "0xcc:1", "chain:0xcc"));
        ExpectOk(l->CreditOnce(B, "c3", 9, "payment", ""));
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->MoveBalanceOnce(B, A, "0xcc:1", "chain:0xcc"));
        CPPUNIT_ASSERT_EQUAL(Cents{9}, *l->Balance(B));
        // A move id never collides with a credit id of the same text.
        ExpectOk(l->CreditOnce(A, "0xdd:0", 1, "payment", ""));
        CPPUNIT_ASSERT_EQUAL(Cents{76}, *l->MoveBalanceOnce(A, B, "0xdd:0", "chain:0xdd"));
        ExpectError(l->MoveBalanceOnce(A, A, "0xee:0", ""), ErrorKind::InvalidInput, "invalid_to");
        ExpectError(l->MoveBalanceOnce(A, B, "", ""), ErrorKind::InvalidInput, "invalid_move_id");
    }

    void testEntriesNewestFirstAndConsistent() {
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 50, "starter", "r1"));
        m_now = T0 + 1000;
        ExpectOk(l->Charge(A, 5, "write:add_group", "r2"));
        auto hold = l->Charge(A, 7, "run:hold", "r3");
        ExpectOk(l->Settle(*hold, 3, "run:settle"));
        ExpectOk(l->CreditOnce(B, "c2", 9, "starter", "other"));  // another customer's entry in between
        ExpectOk(l->Charge(A, 1, "write:add_group", "r4"));
        auto all = l->Entries(A, 100);
        ExpectOk(all);
        CPPUNIT_ASSERT_EQUAL(std::size_t{5}, all->size());
        ExpectConsistent(*all);
        CPPUNIT_ASSERT_EQUAL(Cents{41}, (*all)[0].balance_after);
        CPPUNIT_ASSERT_EQUAL(Cents{41}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(std::string("r4"), (*all)[0].request_id);
        CPPUNIT_ASSERT_EQUAL(std::string("run:settle"), (*all)[1].reason);
        CPPUNIT_ASSERT_EQUAL(std::string("starter"), (*all)[4].reason);
        CPPUNIT_ASSERT_EQUAL(A, (*all)[2].customer);
        CPPUNIT_ASSERT_EQUAL(T0, (*all)[4].at_ms);
        CPPUNIT_ASSERT_EQUAL(T0 + 1000, (*all)[0].at_ms);
        auto newest = l->Entries(A, 2);
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, newest->size());
        CPPUNIT_ASSERT_EQUAL((*all)[0].id, (*newest)[0].id);
        CPPUNIT_ASSERT_EQUAL((*all)[1].id, (*newest)[1].id);
        CPPUNIT_ASSERT(l->Entries(A, 0)->empty());
    }

    void testIntentsPutFindConflictAndCredited() {
        auto l = OpenLedger();
        PaymentIntent pi{"pi_0123456789abcdef0123456789abcdef", A, 500, "chain",
                         "0x" + std::string(64, 'a'), "0x" + std::string(64, 'a'), false, 0};
        ExpectOk(l->PutIntent(pi));
        auto found = l->FindIntent(pi.id);
        ExpectOk(found);
        CPPUNIT_ASSERT(found->has_value());
        CPPUNIT_ASSERT_EQUAL(pi.customer, (*found)->customer);
        CPPUNIT_ASSERT_EQUAL(Cents{500}, (*found)->amount_cents);
        CPPUNIT_ASSERT_EQUAL(std::string("chain"), (*found)->processor);
        CPPUNIT_ASSERT_EQUAL(pi.reference, (*found)->reference);
        CPPUNIT_ASSERT_EQUAL(pi.client_secret, (*found)->client_secret);
        CPPUNIT_ASSERT(!(*found)->credited);
        CPPUNIT_ASSERT_EQUAL(T0, (*found)->created_ms);  // 0 = now
        ExpectError(l->PutIntent(pi), ErrorKind::Conflict, "intent_exists");
        auto unknown = l->FindIntent("pi_unknown");
        ExpectOk(unknown);
        CPPUNIT_ASSERT(!unknown->has_value());

        auto credited = l->CreditOnce(A, pi.id, 500, "payment:" + pi.id, "confirm-1");
        ExpectOk(credited);
        CPPUNIT_ASSERT(*credited);
        CPPUNIT_ASSERT((*l->FindIntent(pi.id))->credited);
        CPPUNIT_ASSERT_EQUAL(Cents{500}, *l->Balance(A));
        CPPUNIT_ASSERT(!*l->CreditOnce(A, pi.id, 500, "payment:" + pi.id, "confirm-2"));
        CPPUNIT_ASSERT_EQUAL(Cents{500}, *l->Balance(A));

        PaymentIntent stripe{"pi_3Nstripe", B, 1200, "stripe", "", "pi_3Nstripe_secret_x", false, T0 - 5};
        ExpectOk(l->PutIntent(stripe));
        CPPUNIT_ASSERT_EQUAL(T0 - 5, (*l->FindIntent(stripe.id))->created_ms);
        CPPUNIT_ASSERT(!(*l->FindIntent(stripe.id))->credited);
    }

    void testCreditOnceRefusesAnotherCustomersIntent() {
        auto l = OpenLedger();
        PaymentIntent pi{"pi_a", A, 500, "chain", "", "", false, 0};
        ExpectOk(l->PutIntent(pi));
        ExpectError(l->CreditOnce(B, pi.id, 500, "payment:pi_a", ""), ErrorKind::Conflict, "intent_mismatch");
        ExpectError(l->CreditOnce(A, pi.id, 5000, "payment:pi_a", ""), ErrorKind::Conflict, "intent_mismatch");
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(B));
        CPPUNIT_ASSERT(!(*l->FindIntent(pi.id))->credited);
        CPPUNIT_ASSERT(*l->CreditOnce(A, pi.id, 500, "payment:pi_a", ""));
    }

    void testClaimFinishRelease() {
        auto l = OpenLedger();
        const std::string scope = "acct1:key-1", hash = std::string(64, 'b');
        auto first = l->Claim(scope, hash);
        ExpectOk(first);
        CPPUNIT_ASSERT(!first->has_value());
        auto pending = l->Claim(scope, std::string(64, 'c'));  // answers the row, writes nothing
        ExpectOk(pending);
        CPPUNIT_ASSERT(pending->has_value());
        CPPUNIT_ASSERT_EQUAL(0, (*pending)->status);
        CPPUNIT_ASSERT_EQUAL(hash, (*pending)->request_hash);
        CPPUNIT_ASSERT_EQUAL(T0, (*pending)->created_ms);

        const std::string body = R"({"group_id":"7","note":"caf\u00e9 \u2713"})";
        ExpectOk(l->Finish(scope, 201, body));
        auto final = l->Claim(scope, hash);
        CPPUNIT_ASSERT(final->has_value());
        CPPUNIT_ASSERT_EQUAL(201, (*final)->status);
        CPPUNIT_ASSERT_EQUAL(body, (*final)->body);
        ExpectError(l->Finish(scope, 500, "{}"), ErrorKind::Conflict, "claim_finished");
        ExpectError(l->Finish("acct1:unknown", 200, "{}"), ErrorKind::NotFound, "claim_not_found");
        ExpectOk(l->Release(scope));  // a final answer stays
        CPPUNIT_ASSERT_EQUAL(201, (*l->Claim(scope, hash))->status);

        const std::string other = "acct1:key-2";
        CPPUNIT_ASSERT(!l->Claim(other, hash)->has_value());
        ExpectOk(l->Release(other));
        CPPUNIT_ASSERT(!l->Claim(other, hash)->has_value());  // claimable again after a release
        ExpectOk(l->Release("acct1:never-claimed"));
    }

    void testClaimsExpireAfter24Hours() {
        auto l = OpenLedger();
        const std::string hash = std::string(64, 'd');
        CPPUNIT_ASSERT(!l->Claim("a:old", hash)->has_value());
        ExpectOk(l->Finish("a:old", 200, "{\"ok\":true}"));
        m_now = T0 + DAY_MS - 1;
        CPPUNIT_ASSERT_EQUAL(200, (*l->Claim("a:old", hash))->status);
        CPPUNIT_ASSERT(!l->Claim("a:newer", hash)->has_value());
        m_now = T0 + DAY_MS + 1;
        CPPUNIT_ASSERT(!l->Claim("a:old", hash)->has_value());  // forgotten: claimed afresh
        CPPUNIT_ASSERT_EQUAL(0, (*l->Claim("a:old", hash))->status);
        CPPUNIT_ASSERT((*l->Claim("a:newer", hash)).has_value());  // 1 day - 1 ms old
    }

    // An account holds at most max_per_owner rows (pending or final); others' rows do not count, and
    // rows forgotten after 24 h free their place.
    void testClaimsAreBoundedPerOwner() {
        auto l = OpenLedger();
        const std::string hash(64, 'e');
        const ClaimPolicy mine{"0xacc1", 2, 0};
        CPPUNIT_ASSERT(!l->Claim("s1", hash, mine)->has_value());
        ExpectOk(l->Finish("s1", 200, "{}"));
        CPPUNIT_ASSERT(!l->Claim("s2", hash, mine)->has_value());
        ExpectError(l->Claim("s3", hash, mine), ErrorKind::Overloaded, "idempotency_keys_exhausted");
        CPPUNIT_ASSERT_EQUAL(200, (*l->Claim("s1", hash, mine))->status);  // its own rows still answer
        CPPUNIT_ASSERT(!l->Claim("t1", hash, ClaimPolicy{"0xacc2", 2, 0})->has_value());
        m_now = T0 + DAY_MS + 1;
        CPPUNIT_ASSERT(!l->Claim("s4", hash, mine)->has_value());
    }

    // A pending claim whose worker died is taken over once its lease has passed, by the same request
    // only, and by one taker; before that it answers pending.
    void testAbandonedClaimIsTakenOverAfterItsLease() {
        auto l = OpenLedger();
        const std::string hash(64, 'f');
        const ClaimPolicy policy{"0xacc1", 0, 60'000};
        CPPUNIT_ASSERT(!l->Claim("s", hash, policy)->has_value());
        m_now = T0 + 59'999;
        CPPUNIT_ASSERT_EQUAL(0, (*l->Claim("s", hash, policy))->status);
        m_now = T0 + 60'000;
        auto other_body = l->Claim("s", std::string(64, '0'), policy);
        CPPUNIT_ASSERT(other_body->has_value());  // another request never takes it over
        CPPUNIT_ASSERT(!l->Claim("s", hash, policy)->has_value());  // taken over
        auto again = l->Claim("s", hash, policy);  // the new claim has its own lease
        CPPUNIT_ASSERT(again->has_value());
        CPPUNIT_ASSERT_EQUAL(0, (*again)->status);
        CPPUNIT_ASSERT_EQUAL(T0 + 60'000, (*again)->created_ms);
        CPPUNIT_ASSERT_EQUAL(0, (*l->Claim("s", hash))->status);  // no lease: never taken over
        ExpectOk(l->Finish("s", 200, "{}"));
        m_now = T0 + 10 * 60'000;
        CPPUNIT_ASSERT_EQUAL(200, (*l->Claim("s", hash, policy))->status);  // a final answer is never taken over
    }

    // Credits from a budget stop once the budget cannot pay the next one whole; each credit id still
    // credits once, and another budget id starts afresh.
    void testCreditFromBudgetStopsAtTheBudget() {
        auto l = OpenLedger();
        using R = BudgetedCredit;
        CPPUNIT_ASSERT(*l->CreditFromBudget(A, "starter:a", 20, "starter", "", "starter:2026-11-28", 50) == R::Credited);
        CPPUNIT_ASSERT(*l->CreditFromBudget(A, "starter:a", 20, "starter", "", "starter:2026-11-28", 50) ==
                       R::AlreadyCredited);
        CPPUNIT_ASSERT(*l->CreditFromBudget(B, "starter:b", 20, "starter", "", "starter:2026-11-28", 50) == R::Credited);
        const std::string c = Customer(0xc);
        CPPUNIT_ASSERT(*l->CreditFromBudget(c, "starter:c", 20, "starter", "", "starter:2026-11-28", 50) ==
                       R::BudgetExhausted);
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(c));
        CPPUNIT_ASSERT(l->Entries(c, 10)->empty());
        CPPUNIT_ASSERT(*l->CreditFromBudget(c, "starter:c", 10, "starter", "", "starter:2026-11-28", 50) == R::Credited);
        CPPUNIT_ASSERT(*l->CreditFromBudget(c, "starter:c2", 20, "starter", "", "starter:2026-11-29", 50) == R::Credited);
        CPPUNIT_ASSERT_EQUAL(Cents{30}, *l->Balance(c));
        ExpectError(l->CreditFromBudget(c, "x", 5, "starter", "", "", 50), ErrorKind::InvalidInput, "invalid_budget_id");
    }

    // A ledger made before idempotency rows had an owner and intents a block: the old rows, scoped by
    // account with their answers in clear, are dropped; intents stay and read block 0.
    void testOpensTablesMadeBeforeOwnersAndBlocks() {
        CPPUNIT_ASSERT(RawSql("CREATE TABLE idempotency (scope text PRIMARY KEY, request_hash text NOT NULL,"
                              " status integer NOT NULL, body text NOT NULL, created_ms bigint NOT NULL)"));
        CPPUNIT_ASSERT(RawSql("INSERT INTO idempotency VALUES ('0xacc:k', 'h', 200, '{\"api_key\":\"secret\"}', " +
                              std::to_string(T0) + ")"));
        CPPUNIT_ASSERT(RawSql("CREATE TABLE intents (id text PRIMARY KEY, customer text NOT NULL, amount_cents bigint NOT NULL,"
                              " processor text NOT NULL, reference text NOT NULL, client_secret text NOT NULL,"
                              " credited boolean NOT NULL DEFAULT false, created_ms bigint NOT NULL)"));
        CPPUNIT_ASSERT(RawSql("INSERT INTO intents VALUES ('pi_old', '" + A + "', 500, 'chain', '', '', false, 1)"));
        auto l = OpenLedger();
        CPPUNIT_ASSERT(!l->Claim("0xacc:k", "h")->has_value());
        auto old = l->FindIntent("pi_old");
        CPPUNIT_ASSERT(old->has_value());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, (*old)->from_block);
        PaymentIntent pi{"pi_new", A, 500, "chain", "", "", false, 0, 1234};
        ExpectOk(l->PutIntent(pi));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1234}, (*OpenLedger()->FindIntent("pi_new"))->from_block);
    }

    void testRejectsInvalidInput() {
        auto l = OpenLedger();
        ExpectError(l->Balance(""), ErrorKind::InvalidInput, "invalid_customer");
        ExpectError(l->Balance("0x" + std::string(40, 'A')), ErrorKind::InvalidInput, "invalid_customer");
        ExpectError(l->Balance("0x" + std::string(39, 'a')), ErrorKind::InvalidInput, "invalid_customer");
        ExpectError(l->CreditOnce(A, "c", 0, "starter", ""), ErrorKind::InvalidInput, "invalid_cents");
        ExpectError(l->CreditOnce(A, "", 5, "starter", ""), ErrorKind::InvalidInput, "invalid_credit_id");
        ExpectError(l->CreditOnce(A, "c", 5, "", ""), ErrorKind::InvalidInput, "invalid_reason");
        ExpectError(l->CreditOnce(A, "c", 5, "bad\nreason", ""), ErrorKind::InvalidInput, "invalid_reason");
        ExpectError(l->CreditOnce(A, "c", 5, "starter", std::string(129, 'r')), ErrorKind::InvalidInput,
                    "invalid_request_id");
        ExpectError(l->CreditOnce(A, "c", 2'000'000'000'000, "starter", ""), ErrorKind::InvalidInput, "invalid_cents");
        ExpectError(l->Charge(A, -1, "write:x", ""), ErrorKind::InvalidInput, "invalid_cents");
        ExpectError(l->Settle(0, 1, "run:settle"), ErrorKind::InvalidInput, "invalid_charge_id");
        ExpectError(l->Settle(1, -1, "run:settle"), ErrorKind::InvalidInput, "invalid_actual");
        ExpectError(l->MoveBalance("nope", B, ""), ErrorKind::InvalidInput, "invalid_from");
        ExpectError(l->Entries("nope", 5), ErrorKind::InvalidInput, "invalid_customer");
        ExpectError(l->PutIntent(PaymentIntent{"pi_x", A, 0, "chain", "", "", false, 0}), ErrorKind::InvalidInput,
                    "invalid_amount_cents");
        ExpectError(l->PutIntent(PaymentIntent{"", A, 5, "chain", "", "", false, 0}), ErrorKind::InvalidInput,
                    "invalid_intent_id");
        ExpectError(l->Claim("", "h"), ErrorKind::InvalidInput, "invalid_scope");
        ExpectError(l->Claim("s", ""), ErrorKind::InvalidInput, "invalid_request_hash");
        ExpectError(l->Finish("s", 0, "{}"), ErrorKind::InvalidInput, "invalid_status");
        ExpectError(l->Finish("s", 200, std::string("\xff\xfe", 2)), ErrorKind::InvalidInput, "invalid_body");
        // Nothing of the above was written.
        CPPUNIT_ASSERT(l->Entries(A, 10)->empty());
        CPPUNIT_ASSERT(!l->FindIntent("pi_x")->has_value());
    }

    void testReopenKeepsDataAndOpenDispatches() {
        {
            auto l = OpenLedger();
            ExpectOk(l->CreditOnce(A, "c1", 42, "starter", ""));
        }
        auto again = OpenLedger();  // the schema exists already: created idempotently
        CPPUNIT_ASSERT_EQUAL(Cents{42}, *again->Balance(A));
        auto opened = Ledger::Open(Database());
        ExpectOk(opened);
        CPPUNIT_ASSERT_EQUAL(Cents{42}, *(*opened)->Balance(A));
        ExpectOk((*opened)->Charge(A, 2, "write:x", ""));
        CPPUNIT_ASSERT_EQUAL(Cents{40}, *again->Balance(A));  // the same store through both
    }

    void testEntriesAreAppendOnly() {
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 42, "starter", ""));
        CPPUNIT_ASSERT(!RawSql("UPDATE entries SET delta = 1000, balance_after = 1000"));
        CPPUNIT_ASSERT(!RawSql("DELETE FROM entries"));
        CPPUNIT_ASSERT_EQUAL(Cents{42}, *l->Balance(A));
        CPPUNIT_ASSERT(RawSql("SELECT count(*) FROM entries"));  // the raw access itself works
    }

    void testUnreachableStoreIsUnavailable() {
        const auto start = std::chrono::steady_clock::now();
        auto opened = Ledger::Open(UnreachableDatabase());
        ExpectError(opened, ErrorKind::Unavailable, "ledger_unavailable");
        CPPUNIT_ASSERT(SecondsSince(start) < 3.0);
        ExpectError(Ledger::Open(""), ErrorKind::Unavailable, "ledger_unavailable");
    }

    // 100 charges of 1 cent against 50, from 8 threads each with its own Ledger (connection).
    void testConcurrentChargesFromThreadsNeverOverdraw() {
        ExpectOk(OpenLedger()->CreditOnce(A, "c1", 50, "starter", ""));
        std::atomic<int> next{0}, charged{0}, refused{0}, failed{0};
        std::vector<std::thread> threads;
        std::vector<std::string> errors(8);
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&, t] {
                auto l = OpenLedger();
                while (next.fetch_add(1) < 100) {
                    auto r = l->Charge(A, 1, "write:x", "t" + std::to_string(t));
                    if (r.ok()) ++charged;
                    else if (r.error().code == "insufficient_credit") ++refused;
                    else {
                        ++failed;
                        errors[t] = r.error().code + ": " + r.error().message;
                    }
                }
            });
        }
        for (auto& t : threads) t.join();
        for (const auto& e : errors) CPPUNIT_ASSERT_EQUAL(std::string(), e);
        CPPUNIT_ASSERT_EQUAL(0, failed.load());
        CPPUNIT_ASSERT_EQUAL(50, charged.load());
        CPPUNIT_ASSERT_EQUAL(50, refused.load());
        ExpectSpentExactly(50);
    }

    // The same from 8 fork()ed processes, as worker processes share the store.
    void testConcurrentChargesFromProcessesNeverOverdraw() {
        ExpectOk(OpenLedger()->CreditOnce(A, "c1", 50, "starter", ""));
        std::vector<pid_t> children;
        for (int p = 0; p < 8; ++p) {
            const pid_t pid = ::fork();
            CPPUNIT_ASSERT(pid >= 0);
            if (pid == 0) {
                // Exit status: charges made (at most 13), or 200 + something went wrong.
                int made = 0;
                try {
                    auto l = OpenLedger();
                    for (int i = p; i < 100; i += 8) {
                        auto r = l->Charge(A, 1, "write:x", "p" + std::to_string(p));
                        if (r.ok()) ++made;
                        else if (r.error().code != "insufficient_credit") ::_exit(200);
                    }
                } catch (...) {
                    ::_exit(201);
                }
                ::_exit(made);
            }
            children.push_back(pid);
        }
        int charged = 0;
        for (pid_t pid : children) {
            int status = 0;
            CPPUNIT_ASSERT_EQUAL(pid, ::waitpid(pid, &status, 0));
            CPPUNIT_ASSERT(WIFEXITED(status));
            CPPUNIT_ASSERT_MESSAGE("child status " + std::to_string(WEXITSTATUS(status)), WEXITSTATUS(status) < 200);
            charged += WEXITSTATUS(status);
        }
        CPPUNIT_ASSERT_EQUAL(50, charged);
        ExpectSpentExactly(50);
    }

protected:
    const std::string A = Customer(0xa11ce);
    const std::string B = Customer(0xb0b);
    std::atomic<std::int64_t> m_now{T0};

    sigil::workers::billing::NowMsFn Clock() {
        return [this] { return m_now.load(); };
    }

    // After the concurrent cases: balance 0 and `charges` one-cent charges after the 50 credit.
    void ExpectSpentExactly(int charges) {
        auto l = OpenLedger();
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *l->Balance(A));
        auto entries = l->Entries(A, 1000);
        ExpectOk(entries);
        CPPUNIT_ASSERT_EQUAL(static_cast<std::size_t>(charges + 1), entries->size());
        ExpectConsistent(*entries);
        for (std::size_t i = 0; i + 1 < entries->size(); ++i) CPPUNIT_ASSERT_EQUAL(Cents{-1}, (*entries)[i].delta);
    }
};

class SqliteLedgerTests : public LedgerContractTests {
    CPPUNIT_TEST_SUB_SUITE(SqliteLedgerTests, LedgerContractTests);
    CPPUNIT_TEST(testOpensALedgerMadeBeforeSpenders);
    CPPUNIT_TEST(testCommitsNeverCheckpointThemselves);
    CPPUNIT_TEST(testLogIsCheckpointedAndRestartedOffTheCommitPath);
    CPPUNIT_TEST(testCommitsGoOnWhileAReaderPinsTheLog);
    CPPUNIT_TEST(testProcessKilledWhileCheckpointingLeavesLedgerConsistent);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override {
        char tmpl[] = "/tmp/sigil-ledger-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(tmpl) != nullptr);
        m_dir = tmpl;
        m_path = m_dir + "/ledger.db";
    }
    void tearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }

    // A ledger file whose entries table predates the spender column keeps its rows and gains the column.
    void testOpensALedgerMadeBeforeSpenders() {
        sqlite3* raw = nullptr;
        CPPUNIT_ASSERT_EQUAL(SQLITE_OK, sqlite3_open(m_path.c_str(), &raw));
        const char* old_schema =
            "CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, customer TEXT NOT NULL, kind TEXT NOT NULL,"
            " delta INTEGER NOT NULL, balance_after INTEGER NOT NULL CHECK (balance_after >= 0), reason TEXT NOT NULL,"
            " request_id TEXT NOT NULL, at_ms INTEGER NOT NULL);"
            "INSERT INTO entries (customer, kind, delta, balance_after, reason, request_id, at_ms)"
            " VALUES ('0x00000000000000000000000000000000000a11ce', 'credit', 30, 30, 'starter', '', 1);";
        CPPUNIT_ASSERT_EQUAL(SQLITE_OK, sqlite3_exec(raw, old_schema, nullptr, nullptr, nullptr));
        sqlite3_close(raw);
        auto l = OpenLedger();
        CPPUNIT_ASSERT_EQUAL(Cents{30}, *l->Balance(A));
        ExpectOk(l->Charge(A, 5, "write:add_group", "r1", "0x" + std::string(64, 'c'), 8));
        ExpectError(l->Charge(A, 5, "write:add_group", "r2", "0x" + std::string(64, 'c'), 8), ErrorKind::PaymentRequired,
                    "spend_cap_reached");
        CPPUNIT_ASSERT_EQUAL(Cents{25}, *l->Balance(A));
        auto again = OpenLedger();  // a second Open finds the column there
        CPPUNIT_ASSERT_EQUAL(Cents{25}, *again->Balance(A));
    }

    // With the thread's threshold out of reach, nothing copies the log into the database file, though
    // SQLite's own automatic checkpoint would have, in some commit, once the log passed 1000 pages.
    void testCommitsNeverCheckpointThemselves() {
        WalCheckpointOptions never;
        never.checkpoint_frames = 1 << 30;
        never.restart_frames = 1 << 30;
        auto l = OpenLedger(never);
        ExpectOk(l->CreditOnce(A, "c1", 1'000'000, "starter", ""));
        const auto db_before = std::filesystem::file_size(m_path);
        for (int i = 0; i < 600; ++i) ExpectOk(l->Charge(A, 1, "run:hold", "r" + std::to_string(i)));
        CPPUNIT_ASSERT(std::filesystem::file_size(m_path + "-wal") > 1000u * 4096);
        CPPUNIT_ASSERT_EQUAL(db_before, std::filesystem::file_size(m_path));
        CPPUNIT_ASSERT_EQUAL(Cents{1'000'000 - 600}, *l->Balance(A));
    }

    // Commits only count the log's frames; the ledger's thread copies the log into the database file
    // and restarts it (the log's header gets new salts), so the file stops growing. Without
    // checkpoints these charges would leave a log of about 40 MB (4 pages each).
    void testLogIsCheckpointedAndRestartedOffTheCommitPath() {
        auto l = OpenLedger(SmallCheckpoints());
        ExpectOk(l->CreditOnce(A, "c1", 1'000'000, "starter", ""));
        const auto db_before = std::filesystem::file_size(m_path);
        for (int i = 0; i < 2500; ++i) ExpectOk(l->Charge(A, 1, "run:hold", "r" + std::to_string(i)));
        const auto start = std::chrono::steady_clock::now();
        while (std::filesystem::file_size(m_path) == db_before && SecondsSince(start) < 10) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        CPPUNIT_ASSERT_MESSAGE("nothing was checkpointed into the database file", std::filesystem::file_size(m_path) > db_before);
        const std::string salts = WalSalts();
        int more = 0;
        while (WalSalts() == salts && SecondsSince(start) < 10) {
            ExpectOk(l->Charge(A, 1, "run:hold", "m" + std::to_string(more++)));
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        CPPUNIT_ASSERT_MESSAGE("the log never restarted", WalSalts() != salts);
        const auto wal = std::filesystem::file_size(m_path + "-wal");
        CPPUNIT_ASSERT_MESSAGE("the log grew to " + std::to_string(wal) + " bytes", wal < 30u * 1024 * 1024);
        CPPUNIT_ASSERT_EQUAL(Cents{1'000'000 - 2500 - more}, *l->Balance(A));
        auto fresh = OpenLedger();  // another connection reads the same, from file and log
        CPPUNIT_ASSERT_EQUAL(Cents{1'000'000 - 2500 - more}, *fresh->Balance(A));
    }

    // The log header's two salts (bytes 16..23): new ones each time the log restarts.
    std::string WalSalts() const {
        std::ifstream in(m_path + "-wal", std::ios::binary);
        char header[24] = {};
        in.read(header, sizeof header);
        return std::string(header + 16, 8);
    }

    // A reader that keeps its snapshot (a stuck process) stops the log from being copied past it and
    // from restarting; charges still commit, each waiting at most a restart checkpoint's short wait,
    // and once the reader goes the log is checkpointed again.
    void testCommitsGoOnWhileAReaderPinsTheLog() {
        auto l = OpenLedger(SmallCheckpoints());
        ExpectOk(l->CreditOnce(A, "c1", 1'000'000, "starter", ""));
        sqlite3* reader = nullptr;
        CPPUNIT_ASSERT_EQUAL(SQLITE_OK, sqlite3_open(m_path.c_str(), &reader));
        CPPUNIT_ASSERT_EQUAL(SQLITE_OK, sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM entries;", nullptr, nullptr, nullptr));
        double slowest = 0;
        for (int i = 0; i < 600; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            ExpectOk(l->Charge(A, 1, "run:hold", "r" + std::to_string(i)));
            slowest = std::max(slowest, SecondsSince(t0));
        }
        CPPUNIT_ASSERT_MESSAGE("a charge waited " + std::to_string(slowest) + " s", slowest < 2.0);
        CPPUNIT_ASSERT_EQUAL(SQLITE_OK, sqlite3_exec(reader, "COMMIT", nullptr, nullptr, nullptr));
        sqlite3_close(reader);
        const auto db_before = std::filesystem::file_size(m_path);
        for (int i = 0; i < 600; ++i) ExpectOk(l->Charge(A, 1, "run:hold", "s" + std::to_string(i)));
        const auto start = std::chrono::steady_clock::now();
        while (std::filesystem::file_size(m_path) == db_before && SecondsSince(start) < 10) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        CPPUNIT_ASSERT(std::filesystem::file_size(m_path) > db_before);
        CPPUNIT_ASSERT_EQUAL(Cents{1'000'000 - 1200}, *OpenLedger()->Balance(A));
    }

    // kill -9 of a process charging as fast as it can (its thread checkpointing all along): every
    // charge it committed is there once, the rest never happened, and the balance agrees.
    void testProcessKilledWhileCheckpointingLeavesLedgerConsistent() {
        ExpectOk(OpenLedger()->CreditOnce(A, "c1", 1'000'000, "starter", ""));
        const pid_t pid = ::fork();
        CPPUNIT_ASSERT(pid >= 0);
        if (pid == 0) {
            try {
                auto l = OpenLedger(SmallCheckpoints());
                for (int i = 0;; ++i) {
                    if (!l->Charge(A, 1, "run:hold", "k" + std::to_string(i)).ok()) ::_exit(200);
                }
            } catch (...) {
                ::_exit(201);
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        ::kill(pid, SIGKILL);
        int status = 0;
        CPPUNIT_ASSERT_EQUAL(pid, ::waitpid(pid, &status, 0));
        CPPUNIT_ASSERT_MESSAGE("the child stopped by itself", WIFSIGNALED(status));
        auto l = OpenLedger();
        // Every entry after the credit is one charge whose balance_after is the one before minus 1.
        const std::int64_t charges = SqlNumber("SELECT count(*) FROM entries WHERE kind = 'charge'");
        const std::int64_t broken = SqlNumber(
            "SELECT count(*) FROM entries e JOIN entries p ON p.id = (SELECT max(id) FROM entries WHERE id < e.id) "
            "WHERE e.balance_after <> p.balance_after + e.delta OR e.delta <> -1");
        CPPUNIT_ASSERT_MESSAGE("no charge before the kill", charges > 0);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, broken);
        CPPUNIT_ASSERT_EQUAL(Cents{1'000'000} - charges, *l->Balance(A));
        ExpectOk(l->Charge(A, 1, "run:hold", "after"));  // and it takes charges again
    }

    // The first column of the first row `sql` answers on a connection of its own; -1 on an error.
    std::int64_t SqlNumber(const std::string& sql) const {
        sqlite3* db = nullptr;
        sqlite3_stmt* st = nullptr;
        std::int64_t n = -1;
        if (sqlite3_open(m_path.c_str(), &db) == SQLITE_OK && sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            n = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
        return n;
    }

    // Thresholds low enough for a test to cross them many times.
    static WalCheckpointOptions SmallCheckpoints() {
        WalCheckpointOptions c;
        c.checkpoint_frames = 50;
        c.restart_frames = 200;
        return c;
    }

    std::unique_ptr<Ledger> OpenLedger() override { return OpenLedger(WalCheckpointOptions{}); }
    std::unique_ptr<Ledger> OpenLedger(const WalCheckpointOptions& checkpoint) {
        SqliteLedgerOptions options;
        options.now_ms = Clock();
        options.checkpoint = checkpoint;
        auto l = OpenSqliteLedger(m_path, options);
        if (!l.ok()) throw std::runtime_error("open sqlite ledger: " + l.error().message);
        return std::move(*l);
    }
    std::string Database() override { return m_path; }
    std::string UnreachableDatabase() override { return m_dir + "/missing-folder/ledger.db"; }
    bool RawSql(const std::string& sql) override {
        sqlite3* db = nullptr;
        bool ok = sqlite3_open(m_path.c_str(), &db) == SQLITE_OK &&
                  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
        sqlite3_close(db);
        return ok;
    }
    bool IndexExists(const std::string& name) override {
        return SqlNumber("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = '" + name + "'") == 1;
    }

private:
    std::string m_dir;
    std::string m_path;
};

class PostgresLedgerTests : public LedgerContractTests {
    CPPUNIT_TEST_SUB_SUITE(PostgresLedgerTests, LedgerContractTests);
    CPPUNIT_TEST(testDeadServerFailsFastAndReconnects);
    CPPUNIT_TEST(testHungServerTimesOut);
    CPPUNIT_TEST(testQueuedStatementFailingRollsBackAndTheConnectionGoesOn);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override { m_url = SharedPostgres().CreateDatabase(); }

    std::unique_ptr<Ledger> OpenLedger() override { return Open(m_url, {}); }
    std::string Database() override { return m_url; }
    std::string UnreachableDatabase() override {
        return "postgresql://postgres@127.0.0.1:" + std::to_string(sigil::test::FreeLoopbackPort()) + "/postgres";
    }
    bool RawSql(const std::string& sql) override {
        PGconn* conn = PQconnectdb(m_url.c_str());
        PGresult* r = PQexec(conn, sql.c_str());
        const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
        PQclear(r);
        PQfinish(conn);
        return ok;
    }
    bool IndexExists(const std::string& name) override {
        return SqlNumber("SELECT count(*) FROM pg_class WHERE relkind = 'i' AND relname = '" + name + "'") == 1;
    }

    // Stop the server under an open Ledger: the call fails fast and cleanly; once the server is
    // back, the same Ledger reconnects on its own.
    void testDeadServerFailsFastAndReconnects() {
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 9, "starter", ""));
        auto& server = SharedPostgres();
        struct Restart {
            sigil::test::PostgresServer& server;
            ~Restart() {
                try {
                    server.Start();
                } catch (...) {
                }
            }
        } restart{server};
        server.Stop();

        auto start = std::chrono::steady_clock::now();
        ExpectError(l->Balance(A), ErrorKind::Unavailable, "ledger_unavailable");
        CPPUNIT_ASSERT(SecondsSince(start) < 3.0);
        // Until the next attempt is due (backoff.h), calls are refused without trying to connect.
        start = std::chrono::steady_clock::now();
        ExpectError(l->Charge(A, 1, "write:x", ""), ErrorKind::Unavailable, "ledger_unavailable");
        CPPUNIT_ASSERT(SecondsSince(start) < 0.2);
        start = std::chrono::steady_clock::now();
        ExpectError(Ledger::Open(m_url), ErrorKind::Unavailable, "ledger_unavailable");
        CPPUNIT_ASSERT(SecondsSince(start) < 3.0);

        server.Start();
        // Reconnects once the next attempt is due (500 ms after one failed connection).
        start = std::chrono::steady_clock::now();
        auto back = l->Balance(A);
        while (!back.ok() && SecondsSince(start) < 5.0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            back = l->Balance(A);
        }
        ExpectOk(back);
        CPPUNIT_ASSERT_EQUAL(Cents{9}, *back);
        // A server restarted under an idle connection: the stale connection is replaced once.
        server.Stop();
        server.Start();
        ExpectOk(l->Charge(A, 1, "write:x", ""));
        CPPUNIT_ASSERT_EQUAL(Cents{8}, *l->Balance(A));
    }

    // A server that accepted the query and never answers (its backend stopped): the client's
    // deadline answers Unavailable, and the next call works on a new connection.
    void testHungServerTimesOut() {
        PostgresLedgerOptions options;
        options.query_timeout_ms = 800;
        auto l = Open(m_url + "?application_name=sigil_hung_test", options);
        ExpectOk(l->Balance(A));
        const pid_t backend = BackendPid("sigil_hung_test");
        CPPUNIT_ASSERT(backend > 0);
        struct Resume {
            pid_t pid;
            ~Resume() { ::kill(pid, SIGCONT); }
        } resume{backend};
        CPPUNIT_ASSERT_EQUAL(0, ::kill(backend, SIGSTOP));
        const auto start = std::chrono::steady_clock::now();
        ExpectError(l->Balance(A), ErrorKind::Unavailable, "ledger_unavailable");
        const double took = SecondsSince(start);
        CPPUNIT_ASSERT_MESSAGE(std::to_string(took), took >= 0.7 && took < 3.0);
        ::kill(backend, SIGCONT);
        auto again = l->Balance(A);
        ExpectOk(again);
    }

    // The running total's upsert travels in one pipeline with COMMIT (postgres_ledger.cpp). When it
    // fails, the COMMIT behind it is skipped: the call fails, nothing of it stays (the entry it
    // appended is rolled back with it), and the same connection serves the next call.
    void testQueuedStatementFailingRollsBackAndTheConnectionGoesOn() {
        const std::string key = "0x" + std::string(64, 'c');
        auto l = OpenLedger();
        ExpectOk(l->CreditOnce(A, "c1", 30, "starter", ""));
        CPPUNIT_ASSERT(RawSql("ALTER TABLE spent ADD CONSTRAINT spent_below_ten CHECK (cents < 10)"));
        ExpectOk(l->Charge(A, 5, "write:add_group", "r1", key, 0));
        ExpectError(l->Charge(A, 5, "write:add_group", "r2", key, 0), ErrorKind::Internal, "ledger_error");
        CPPUNIT_ASSERT_EQUAL(Cents{25}, *l->Balance(A));
        auto entries = l->Entries(A, 10);
        ExpectOk(entries);
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, entries->size());
        ExpectConsistent(*entries);
        ExpectOk(l->Charge(A, 5, "write:add_group", "r3"));  // no spender: nothing queued fails
        CPPUNIT_ASSERT_EQUAL(Cents{20}, *l->Balance(A));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, SqlNumber("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'"));
    }

private:
    std::unique_ptr<Ledger> Open(const std::string& url, PostgresLedgerOptions options) {
        options.now_ms = Clock();
        auto l = OpenPostgresLedger(url, options);
        if (!l.ok()) throw std::runtime_error("open postgres ledger: " + l.error().message);
        return std::move(*l);
    }

    std::int64_t SqlNumber(const std::string& sql) const {
        PGconn* conn = PQconnectdb(m_url.c_str());
        PGresult* r = PQexec(conn, sql.c_str());
        std::int64_t n = -1;
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) n = std::atoll(PQgetvalue(r, 0, 0));
        PQclear(r);
        PQfinish(conn);
        return n;
    }

    pid_t BackendPid(const std::string& application) {
        PGconn* conn = PQconnectdb(m_url.c_str());
        const std::string sql = "SELECT pid FROM pg_stat_activity WHERE application_name = '" + application + "'";
        PGresult* r = PQexec(conn, sql.c_str());
        pid_t pid = -1;
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) pid = std::atoi(PQgetvalue(r, 0, 0));
        PQclear(r);
        PQfinish(conn);
        return pid;
    }

    std::string m_url;
};

CPPUNIT_TEST_SUITE_REGISTRATION(SqliteLedgerTests);
CPPUNIT_TEST_SUITE_REGISTRATION(PostgresLedgerTests);
