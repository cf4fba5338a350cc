// Key guardrails: the token bucket and window arithmetic, Origin canonicalisation, and the ledger's
// admission of runs (rates, runs in flight, the rolling spend cap) on both stores: a SQLite file and a
// real PostgreSQL server the suite starts, with a clock the cases move.
#include <cppunit/extensions/HelperMacros.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/postgres_server.h"
#include "workers/billing/guardrails.h"
#include "workers/billing/history_store.h"
#include "workers/billing/ledger.h"
#include "workers/billing/postgres_ledger.h"
#include "workers/billing/sqlite_ledger.h"

using namespace sigil::workers::billing;
using sigil::common::ErrorKind;

namespace {

constexpr std::int64_t T0 = 1'700'000'000'000;
const std::string KEY = "0x" + std::string(63, '0') + "1";
const std::string ACCOUNT = "0x" + std::string(63, '0') + "a";
const std::string CUSTOMER = "0x" + std::string(39, '0') + "c";

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

sigil::test::PostgresServer& SharedPostgres() {
    static std::unique_ptr<sigil::test::PostgresServer> server;
    if (!server) server = std::make_unique<sigil::test::PostgresServer>(std::vector<std::string>{"fsync=off"});
    return *server;
}

}  // namespace

class GuardrailArithmeticTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(GuardrailArithmeticTests);
    CPPUNIT_TEST(testBucketRefillsExactlyAndCapsAtBurst);
    CPPUNIT_TEST(testRetryAfterRoundsUpToWholeSeconds);
    CPPUNIT_TEST(testWindowStartCountsTheLastWindowSeconds);
    CPPUNIT_TEST(testOriginsAreCanonicalAndCompareExactly);
    CPPUNIT_TEST(testValidationRefusesOutOfBounds);
    CPPUNIT_TEST_SUITE_END();

public:
    void testBucketRefillsExactlyAndCapsAtBurst() {
        // 0.5 per second: 500 micro-tokens a millisecond; 1 ms steps never lose the fraction.
        std::int64_t tokens = 0;
        for (int i = 0; i < 2000; ++i) tokens = RefilledTokens(tokens, 1, 500, 5);
        CPPUNIT_ASSERT_EQUAL(MICRO_TOKENS, tokens);  // one token after 2 s
        CPPUNIT_ASSERT_EQUAL(5 * MICRO_TOKENS, RefilledTokens(0, 60'000, 500, 5));  // capped at the burst
        CPPUNIT_ASSERT_EQUAL(std::int64_t{7}, RefilledTokens(7, -5000, 500, 5));   // a clock going back adds nothing
        CPPUNIT_ASSERT_EQUAL(2 * MICRO_TOKENS, RefilledTokens(0, MAX_REFILL_MS * 10, MAX_RATE_MILLI, 2));  // no overflow
    }
    void testRetryAfterRoundsUpToWholeSeconds() {
        CPPUNIT_ASSERT_EQUAL(1, RetryAfterSeconds(0, 10'000));        // 10/s: 100 ms -> 1 s
        CPPUNIT_ASSERT_EQUAL(2, RetryAfterSeconds(0, 500));           // 0.5/s: 2 s
        CPPUNIT_ASSERT_EQUAL(1, RetryAfterSeconds(500'000, 500));     // half a token at 0.5/s: 1 s
        CPPUNIT_ASSERT_EQUAL(1000, RetryAfterSeconds(0, 1));          // 0.001/s
        CPPUNIT_ASSERT_EQUAL(1, RetryAfterSeconds(MICRO_TOKENS, 1));  // already there: at least 1
    }
    void testWindowStartCountsTheLastWindowSeconds() {
        CPPUNIT_ASSERT_EQUAL(T0 - 86'400'000 + 1, WindowStartMs(T0, 86'400));
        CPPUNIT_ASSERT_EQUAL(T0, WindowStartMs(T0, 0) - 1);
    }
    void testOriginsAreCanonicalAndCompareExactly() {
        CPPUNIT_ASSERT_EQUAL(std::string("https://app.example"), *CanonicalOrigin("HTTPS://App.Example:443"));
        CPPUNIT_ASSERT_EQUAL(std::string("http://127.0.0.1:8080"), *CanonicalOrigin("http://127.0.0.1:8080/"));
        CPPUNIT_ASSERT_EQUAL(std::string("http://[::1]:3000"), *CanonicalOrigin("http://[::1]:3000"));
        for (const char* bad : {"null", "app.example", "https://app.example/path", "https://user@app.example",
                                "ftp://app.example", "https://", "https://app.example:0", "https://app.example:99999",
                                "https://a b.example"}) {
            ExpectError(CanonicalOrigin(bad), ErrorKind::InvalidInput, "invalid_origin");
        }
        const std::vector<std::string> allowed{"https://app.example"};
        CPPUNIT_ASSERT(OriginAllowed(allowed, "https://app.example"));
        CPPUNIT_ASSERT(OriginAllowed(allowed, "https://APP.example:443"));
        CPPUNIT_ASSERT(!OriginAllowed(allowed, "https://app.example.evil"));
        CPPUNIT_ASSERT(!OriginAllowed(allowed, "http://app.example"));
        CPPUNIT_ASSERT(!OriginAllowed(allowed, "null"));
        CPPUNIT_ASSERT(allowed == SplitOrigins(JoinOrigins(allowed)));
        CPPUNIT_ASSERT(SplitOrigins("").empty());
    }
    void testValidationRefusesOutOfBounds() {
        KeyGuardrails g;
        ExpectOk(ValidateGuardrails(g));
        g.rate_milli = 1000;
        ExpectError(ValidateGuardrails(g), ErrorKind::InvalidInput, "invalid_guardrails");  // no burst
        g.burst = 1;
        ExpectOk(ValidateGuardrails(g));
        g.window_cap_cents = 500;
        ExpectError(ValidateGuardrails(g), ErrorKind::InvalidInput, "invalid_guardrails");  // no window
        g.window_seconds = 86'400;
        ExpectOk(ValidateGuardrails(g));
        g.allowed_origins = {"https://App.example"};
        ExpectError(ValidateGuardrails(g), ErrorKind::InvalidInput, "invalid_guardrails");  // not canonical
        g.allowed_origins = {"https://app.example"};
        g.max_runs_in_flight = -2;
        ExpectError(ValidateGuardrails(g), ErrorKind::InvalidInput, "invalid_guardrails");
    }
};

// Admission on any store; subclasses give a fresh store per case.
class GuardedLedgerTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(GuardedLedgerTests);
    CPPUNIT_TEST(testSetGetClear);
    CPPUNIT_TEST(testKeyRateAllowsTheBurstThenRefills);
    CPPUNIT_TEST(testAddressRateIsPerAddress);
    CPPUNIT_TEST(testRunsInFlightCapAndLease);
    CPPUNIT_TEST(testDefaultInFlightAppliesWithoutGuardrails);
    CPPUNIT_TEST(testWindowCapLimitsHoldsAndRolls);
    CPPUNIT_TEST(testRefusalWritesNothing);
    CPPUNIT_TEST(testConcurrentAdmissionsStopAtTheWindowCap);
    CPPUNIT_TEST(testIdleFullBucketsArePruned);
    CPPUNIT_TEST(testRequestsTakeFromTheRunBuckets);
    CPPUNIT_TEST_SUITE_END_ABSTRACT();

public:
    virtual std::unique_ptr<Ledger> OpenLedger() = 0;
    virtual std::string Database() = 0;  // the ledger's, as [billing] database names it

    void setUp() override {
        m_now = std::make_shared<std::atomic<std::int64_t>>(T0);
        Prepare();
        m_ledger = OpenLedger();
    }
    void tearDown() override {
        m_ledger.reset();
        Cleanup();
    }

    void testSetGetClear() {
        auto none = m_ledger->GetGuardrails(KEY);
        ExpectOk(none);
        CPPUNIT_ASSERT(!*none);
        KeyGuardrails g = Guard();
        g.allowed_origins = {"https://a.example", "http://127.0.0.1:3000"};
        g.max_runs_in_flight = 0;
        ExpectOk(m_ledger->SetGuardrails(g));
        auto got = m_ledger->GetGuardrails(KEY);
        ExpectOk(got);
        CPPUNIT_ASSERT(*got);
        CPPUNIT_ASSERT(g.allowed_origins == (*got)->allowed_origins);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, (*got)->max_runs_in_flight);
        CPPUNIT_ASSERT_EQUAL(ACCOUNT, (*got)->account);
        CPPUNIT_ASSERT_EQUAL(T0, (*got)->updated_ms);
        g.allowed_origins = {"not an origin"};
        ExpectError(m_ledger->SetGuardrails(g), ErrorKind::InvalidInput, "invalid_guardrails");
        CPPUNIT_ASSERT(*m_ledger->ClearGuardrails(KEY));
        CPPUNIT_ASSERT(!*m_ledger->ClearGuardrails(KEY));
        CPPUNIT_ASSERT(!*m_ledger->GetGuardrails(KEY));
    }

    void testKeyRateAllowsTheBurstThenRefills() {
        KeyGuardrails g = Guard();
        g.rate_milli = 2000;  // 2 per second
        g.burst = 3;
        ExpectOk(m_ledger->SetGuardrails(g));
        for (int i = 0; i < 3; ++i) ExpectOk(Admit("r" + std::to_string(i)));
        RunRefusal refusal;
        auto refused = m_ledger->AdmitRun(Gate("r3"), &refusal);
        ExpectError(refused, ErrorKind::Overloaded, "rate_limited");
        CPPUNIT_ASSERT_EQUAL(1, refusal.retry_after_s);
        *m_now += 499;
        ExpectError(Admit("r4"), ErrorKind::Overloaded, "rate_limited");  // 0.998 tokens
        *m_now += 1;
        ExpectOk(Admit("r5"));  // exactly one token after 500 ms
        ExpectError(Admit("r6"), ErrorKind::Overloaded, "rate_limited");
        *m_now += 60'000;  // a long quiet time refills the burst, no more
        for (int i = 0; i < 3; ++i) ExpectOk(Admit("s" + std::to_string(i)));
        ExpectError(Admit("s3"), ErrorKind::Overloaded, "rate_limited");
    }

    // The history's pruner deletes a bucket row once it is full again (the same as no row: the next
    // take creates it full), never sooner, in bounded batches; rows of a key with no rate go too; the
    // admissions after a prune answer as they would have without it.
    void testIdleFullBucketsArePruned() {
        KeyGuardrails g = Guard();
        g.rate_milli = 1000;  // 1 per second, burst 2: an empty key bucket is full 2 s later
        g.burst = 2;
        g.address_rate_milli = 1000;  // burst 1: an empty address bucket is full 1 s later
        g.address_burst = 1;
        ExpectOk(m_ledger->SetGuardrails(g));
        ExpectOk(Admit("p1", "127.0.0.2"));
        ExpectOk(Admit("p2", "127.0.0.3"));  // key bucket: 0 tokens; two address buckets: 0 tokens
        auto store = OpenHistoryStore(Database());
        ExpectOk(store);
        auto pruned = (*store)->PruneBuckets(T0 + 999, 100);
        ExpectOk(pruned);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, *pruned);  // none full yet
        pruned = (*store)->PruneBuckets(T0 + 1000, 1);
        ExpectOk(pruned);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{1}, *pruned);  // bounded: one of the two address buckets
        pruned = (*store)->PruneBuckets(T0 + 1999, 100);
        ExpectOk(pruned);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{1}, *pruned);  // the other; the key's is not full before 2 s
        pruned = (*store)->PruneBuckets(T0 + 2000, 100);
        ExpectOk(pruned);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{1}, *pruned);
        // The same answers as full buckets: two at once, the third refused; one per address.
        *m_now += 2000;
        ExpectOk(Admit("q1", "127.0.0.2"));
        ExpectError(Admit("q2", "127.0.0.2"), ErrorKind::Overloaded, "rate_limited");  // the address's one
        ExpectOk(Admit("q3", "127.0.0.4"));
        ExpectError(Admit("q4", "127.0.0.5"), ErrorKind::Overloaded, "rate_limited");  // the key's two
        // A key whose rates are taken off: its rows are no bucket any take reads.
        g.rate_milli = 0;
        g.burst = 0;
        g.address_rate_milli = 0;
        g.address_burst = 0;
        g.max_runs_in_flight = 5;
        ExpectOk(m_ledger->SetGuardrails(g));
        pruned = (*store)->PruneBuckets(*m_now, 100);
        ExpectOk(pruned);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{3}, *pruned);  // the key's and two addresses'
    }

    // A usage key's relayed write (AdmitRequest) takes from the buckets its runs take from; a refused
    // one takes nothing (the key's token is given back when the address's bucket refuses).
    void testRequestsTakeFromTheRunBuckets() {
        ExpectOk(m_ledger->AdmitRequest(KEY, "127.0.0.2"));  // no guardrails: nothing to take
        KeyGuardrails g = Guard();
        g.rate_milli = 1000;
        g.burst = 3;
        g.address_rate_milli = 1000;
        g.address_burst = 1;
        ExpectOk(m_ledger->SetGuardrails(g));
        ExpectOk(m_ledger->AdmitRequest(KEY, "127.0.0.2"));
        RunRefusal refusal;
        ExpectError(m_ledger->AdmitRequest(KEY, "127.0.0.2", &refusal), ErrorKind::Overloaded, "rate_limited");
        CPPUNIT_ASSERT_EQUAL(1, refusal.retry_after_s);
        ExpectOk(Admit("r1", "127.0.0.3"));  // the key's second token (the refusal above took none)
        ExpectOk(m_ledger->AdmitRequest(KEY, "127.0.0.4"));  // its third
        ExpectError(Admit("r2", "127.0.0.5"), ErrorKind::Overloaded, "rate_limited");
        ExpectError(m_ledger->AdmitRequest("", "127.0.0.2"), ErrorKind::InvalidInput, "invalid_key");
    }

    void testAddressRateIsPerAddress() {
        KeyGuardrails g = Guard();
        g.address_rate_milli = 1000;
        g.address_burst = 1;
        ExpectOk(m_ledger->SetGuardrails(g));
        ExpectOk(Admit("a1", "127.0.0.2"));
        auto refused = Admit("a2", "127.0.0.2");
        ExpectError(refused, ErrorKind::Overloaded, "rate_limited");
        CPPUNIT_ASSERT(refused.error().message.find("address") != std::string::npos);
        ExpectOk(Admit("b1", "127.0.0.3"));
        ExpectOk(Admit("m1", ""));  // no address known: the per-address rate cannot apply
    }

    void testRunsInFlightCapAndLease() {
        KeyGuardrails g = Guard();
        g.max_runs_in_flight = 2;
        ExpectOk(m_ledger->SetGuardrails(g));
        auto first = Admit("f1");
        ExpectOk(first);
        ExpectOk(Admit("f2"));
        ExpectError(Admit("f3"), ErrorKind::Overloaded, "too_many_runs");
        ExpectOk(m_ledger->EndRun(*first, std::nullopt));
        ExpectOk(Admit("f4"));
        ExpectError(Admit("f5"), ErrorKind::Overloaded, "too_many_runs");
        *m_now += 60'000;  // the lease (60 s here) of f2 and f4 ends: a crashed worker's rows stop counting
        ExpectOk(Admit("f6"));
    }

    void testDefaultInFlightAppliesWithoutGuardrails() {
        RunGate gate = Gate("d1");
        gate.usage_key = false;  // the master key: no guardrails of its own, the default binds
        gate.default_in_flight = 1;
        ExpectOk(m_ledger->AdmitRun(gate));
        gate.run_id = "d2";
        ExpectError(m_ledger->AdmitRun(gate), ErrorKind::Overloaded, "too_many_runs");
        KeyGuardrails g = Guard();
        g.max_runs_in_flight = 0;  // a key's own 0: no cap, whatever the default
        ExpectOk(m_ledger->SetGuardrails(g));
        RunGate usage = Gate("u1");
        usage.default_in_flight = 1;
        ExpectOk(m_ledger->AdmitRun(usage));
        usage.run_id = "u2";
        ExpectOk(m_ledger->AdmitRun(usage));
    }

    void testWindowCapLimitsHoldsAndRolls() {
        ExpectOk(m_ledger->CreditOnce(CUSTOMER, "c1", 1000, "test", ""));
        KeyGuardrails g = Guard();
        g.window_cap_cents = 10;
        g.window_seconds = 3600;
        ExpectOk(m_ledger->SetGuardrails(g));
        auto first = Admit("w1", "", 3, 3);  // holds 3 x 3 = 9 of the 10
        ExpectOk(first);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{3}, first->units);
        ExpectError(Admit("w2", "", 3, 3), ErrorKind::PaymentRequired, "spend_cap_reached");  // 1 left < 3
        auto settled = m_ledger->Settle(*first->hold_id, 3, "run:settle");
        ExpectOk(settled);
        ExpectOk(m_ledger->EndRun(*first, *settled));  // the window now holds 3
        *m_now += 1000;
        auto second = Admit("w3", "", 3, 3);
        ExpectOk(second);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{2}, second->units);  // 7 left: two units
        ExpectOk(Admit("w4", "", 1, 1));                       // the last cent
        ExpectError(Admit("w5", "", 1, 1), ErrorKind::PaymentRequired, "spend_cap_reached");  // exactly at the cap
        *m_now += 3600'000 - 1000;  // the first run leaves the window; the others (1 s later) are still in it
        auto third = Admit("w6", "", 5, 1);
        ExpectOk(third);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{3}, third->units);  // 10 - 7
        ExpectError(Admit("w7", "", 1, 1), ErrorKind::PaymentRequired, "spend_cap_reached");
        CPPUNIT_ASSERT_EQUAL(Cents{1000 - 3 - 6 - 1 - 3}, *m_ledger->Balance(CUSTOMER));
    }

    void testRefusalWritesNothing() {
        KeyGuardrails g = Guard();
        g.rate_milli = 1000;
        g.burst = 1;
        g.max_runs_in_flight = 5;
        ExpectOk(m_ledger->SetGuardrails(g));
        ExpectOk(m_ledger->CreditOnce(CUSTOMER, "c1", 1, "test", ""));
        // No credit for one unit of 2 cents: the hold is refused, and with it the token and the run row.
        ExpectError(Admit("n1", "", 1, 2), ErrorKind::PaymentRequired, "insufficient_credit");
        ExpectOk(Admit("n2", "", 1, 1));  // the token is still there
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *m_ledger->Balance(CUSTOMER));
    }

    void testConcurrentAdmissionsStopAtTheWindowCap() {
        ExpectOk(m_ledger->CreditOnce(CUSTOMER, "c1", 100'000, "test", ""));
        KeyGuardrails g = Guard();
        g.window_cap_cents = 50;
        g.window_seconds = 86'400;
        g.max_runs_in_flight = 0;
        ExpectOk(m_ledger->SetGuardrails(g));
        std::atomic<int> admitted{0};
        std::atomic<int> refused{0};
        std::atomic<int> failed{0};
        std::vector<std::thread> threads;
        std::vector<std::unique_ptr<Ledger>> ledgers;  // a connection each, as worker processes have
        for (int t = 0; t < 4; ++t) ledgers.push_back(OpenLedger());
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                Ledger* ledger = ledgers[static_cast<std::size_t>(t)].get();
                for (int i = 0; i < 25; ++i) {
                    RunGate gate = Gate("c" + std::to_string(t) + "-" + std::to_string(i));
                    gate.customer = CUSTOMER;
                    gate.unit = 1;
                    gate.max_units = 1;
                    gate.reason = "run:hold";
                    auto r = ledger->AdmitRun(gate);
                    if (r.ok()) ++admitted;
                    else if (r.error().code == "spend_cap_reached") ++refused;
                    else if (++failed == 1) {
                        std::lock_guard<std::mutex> lock(m_mutex);
                        m_failure = r.error().code + ": " + r.error().message;
                    }
                }
            });
        }
        for (auto& th : threads) th.join();
        CPPUNIT_ASSERT_EQUAL_MESSAGE(m_failure, 0, failed.load());
        CPPUNIT_ASSERT_EQUAL(50, admitted.load());
        CPPUNIT_ASSERT_EQUAL(50, refused.load());
        CPPUNIT_ASSERT_EQUAL(Cents{100'000 - 50}, *m_ledger->Balance(CUSTOMER));
    }

protected:
    virtual void Prepare() = 0;
    virtual void Cleanup() = 0;

    NowMsFn Clock() {
        auto now = m_now;
        return [now] { return now->load(); };
    }

    static KeyGuardrails Guard() {
        KeyGuardrails g;
        g.key = KEY;
        g.account = ACCOUNT;
        return g;
    }
    static RunGate Gate(const std::string& run_id, const std::string& address = "127.0.0.1") {
        RunGate gate;
        gate.key = KEY;
        gate.usage_key = true;
        gate.client_address = address;
        gate.run_id = run_id;
        gate.lease_ms = 60'000;
        return gate;
    }
    sigil::common::Result<RunPass> Admit(const std::string& run_id, const std::string& address = "127.0.0.1",
                                         std::int64_t max_units = 0, Cents unit = 0) {
        RunGate gate = Gate(run_id, address);
        if (max_units > 0) {
            gate.customer = CUSTOMER;
            gate.unit = unit;
            gate.max_units = max_units;
            gate.reason = "run:hold";
        }
        return m_ledger->AdmitRun(gate);
    }

    std::shared_ptr<std::atomic<std::int64_t>> m_now;
    std::unique_ptr<Ledger> m_ledger;
    std::mutex m_mutex;
    std::string m_failure;
};

class SqliteGuardedLedgerTests : public GuardedLedgerTests {
    CPPUNIT_TEST_SUB_SUITE(SqliteGuardedLedgerTests, GuardedLedgerTests);
    CPPUNIT_TEST_SUITE_END();

public:
    std::unique_ptr<Ledger> OpenLedger() override {
        SqliteLedgerOptions options;
        options.now_ms = Clock();
        auto l = OpenSqliteLedger(Database(), options);
        if (!l.ok()) throw std::runtime_error(l.error().message);
        return std::move(*l);
    }
    std::string Database() override { return m_dir + "/ledger.db"; }

protected:
    void Prepare() override {
        char tmpl[] = "/tmp/sigil-guard-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(tmpl) != nullptr);
        m_dir = tmpl;
    }
    void Cleanup() override {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }
    std::string m_dir;
};

class PostgresGuardedLedgerTests : public GuardedLedgerTests {
    CPPUNIT_TEST_SUB_SUITE(PostgresGuardedLedgerTests, GuardedLedgerTests);
    CPPUNIT_TEST_SUITE_END();

public:
    std::unique_ptr<Ledger> OpenLedger() override {
        PostgresLedgerOptions options;
        options.now_ms = Clock();
        auto l = OpenPostgresLedger(m_url, options);
        if (!l.ok()) throw std::runtime_error(l.error().message);
        return std::move(*l);
    }
    std::string Database() override { return m_url; }

protected:
    void Prepare() override { m_url = SharedPostgres().CreateDatabase(); }
    void Cleanup() override {}
    std::string m_url;
};

CPPUNIT_TEST_SUITE_REGISTRATION(GuardrailArithmeticTests);
CPPUNIT_TEST_SUITE_REGISTRATION(SqliteGuardedLedgerTests);
CPPUNIT_TEST_SUITE_REGISTRATION(PostgresGuardedLedgerTests);
