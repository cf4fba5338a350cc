// The run history's stores (SQLite file, real PostgreSQL server) and its queue: the same cases on both
// stores; the queue never blocks and counts what it drops when the store is gone.
#include <cppunit/extensions/HelperMacros.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "tests/support/postgres_server.h"
#include "workers/billing/history_store.h"
#include "workers/billing/run_history.h"
#include "workers/billing/store.h"

using namespace sigil::workers::billing;

namespace {

const std::string ACCOUNT_A = "0x" + std::string(64, 'a');
const std::string ACCOUNT_B = "0x" + std::string(64, 'b');
const std::string KEY_U = "0x" + std::string(64, 'c');

RunRecord Row(const std::string& id, std::int64_t at, const std::string& account, const std::string& key,
              const std::string& status = "ok") {
    RunRecord r;
    r.request_id = id;
    r.started_ms = at;
    r.key_hash = key;
    r.account_hash = account;
    r.cid = "QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL";
    r.duration_ms = 12;
    r.status = status;
    r.error_code = status == "ok" ? "" : status;
    r.cost_cents = 1;
    r.request_bytes = 40;
    r.response_bytes = 50;
    return r;
}

sigil::test::PostgresServer& SharedPostgres() {
    static std::unique_ptr<sigil::test::PostgresServer> server;
    if (!server) server = std::make_unique<sigil::test::PostgresServer>(std::vector<std::string>{"fsync=off"});
    return *server;
}

}  // namespace

class HistoryStoreContractTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(HistoryStoreContractTests);
    CPPUNIT_TEST(testListsNewestFirstWithinOneAccount);
    CPPUNIT_TEST(testFiltersAndCursor);
    CPPUNIT_TEST(testGetIsScopedByAccount);
    CPPUNIT_TEST(testPruneDeletesOnlyOldRowsInBoundedBatches);
    CPPUNIT_TEST(testLogsAndSettings);
    CPPUNIT_TEST_SUITE_END_ABSTRACT();

public:
    virtual std::string Database() = 0;

    std::unique_ptr<HistoryStore> Open() {
        auto s = OpenHistoryStore(Database());
        CPPUNIT_ASSERT_MESSAGE(s.ok() ? "" : s.error().message, s.ok());
        return std::move(s).value();
    }

    void testListsNewestFirstWithinOneAccount() {
        auto s = Open();
        CPPUNIT_ASSERT(s->Insert({Row("r1", 100, ACCOUNT_A, ACCOUNT_A), Row("r2", 300, ACCOUNT_A, KEY_U),
                                  Row("r3", 200, ACCOUNT_B, ACCOUNT_B)}).ok());
        RunQuery q;
        q.account_hash = ACCOUNT_A;
        auto rows = s->List(q);
        CPPUNIT_ASSERT(rows.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, rows->size());
        CPPUNIT_ASSERT_EQUAL(std::string("r2"), (*rows)[0].request_id);
        CPPUNIT_ASSERT_EQUAL(std::string("r1"), (*rows)[1].request_id);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{12}, (*rows)[0].duration_ms);
        CPPUNIT_ASSERT_EQUAL(KEY_U, (*rows)[0].key_hash);
    }

    void testFiltersAndCursor() {
        auto s = Open();
        std::vector<RunRecord> batch;
        for (int i = 0; i < 7; ++i) batch.push_back(Row("r" + std::to_string(i), 1000 + (i / 2), ACCOUNT_A,
                                                        i % 2 ? KEY_U : ACCOUNT_A, i == 3 ? "time_limit" : "ok"));
        CPPUNIT_ASSERT(s->Insert(batch).ok());
        RunQuery q;
        q.account_hash = ACCOUNT_A;
        q.key_hash = KEY_U;
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, s->List(q)->size());
        q.key_hash.reset();
        q.status = "time_limit";
        CPPUNIT_ASSERT_EQUAL(std::string("r3"), s->List(q)->at(0).request_id);
        q.status.reset();
        q.since_ms = 1001;
        q.until_ms = 1003;
        CPPUNIT_ASSERT_EQUAL(std::size_t{4}, s->List(q)->size());
        q.since_ms.reset();
        q.until_ms.reset();
        // Pages of 2 by (started_ms, id): equal times (two runs per ms) are neither repeated nor skipped.
        q.limit = 2;
        std::vector<std::string> seen;
        for (int page = 0; page < 10; ++page) {
            auto rows = s->List(q);
            CPPUNIT_ASSERT(rows.ok());
            for (const auto& r : *rows) seen.push_back(r.request_id);
            if (rows->size() < 2) break;
            q.before = std::pair(rows->back().started_ms, rows->back().id);
        }
        CPPUNIT_ASSERT_EQUAL(std::size_t{7}, seen.size());
        CPPUNIT_ASSERT_EQUAL(std::string("r6"), seen.front());
        CPPUNIT_ASSERT_EQUAL(std::string("r0"), seen.back());
    }

    void testGetIsScopedByAccount() {
        auto s = Open();
        CPPUNIT_ASSERT(s->Insert({Row("r1", 100, ACCOUNT_A, ACCOUNT_A)}).ok());
        CPPUNIT_ASSERT(s->Get(ACCOUNT_A, "r1")->has_value());
        CPPUNIT_ASSERT(!s->Get(ACCOUNT_B, "r1")->has_value());
        CPPUNIT_ASSERT(!s->Get(ACCOUNT_A, "r2")->has_value());
    }

    void testPruneDeletesOnlyOldRowsInBoundedBatches() {
        auto s = Open();
        std::vector<RunRecord> batch;
        for (int i = 0; i < 5; ++i) batch.push_back(Row("old" + std::to_string(i), 10 + i, ACCOUNT_A, ACCOUNT_A));
        batch.push_back(Row("new", 5000, ACCOUNT_A, ACCOUNT_A));
        CPPUNIT_ASSERT(s->Insert(batch).ok());
        CPPUNIT_ASSERT_EQUAL(std::int64_t{3}, *s->Prune(1000, 3));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{2}, *s->Prune(1000, 3));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, *s->Prune(1000, 3));
        RunQuery q;
        q.account_hash = ACCOUNT_A;
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, s->List(q)->size());
    }

    void testLogsAndSettings() {
        auto s = Open();
        CPPUNIT_ASSERT(!*s->RecordLogs(ACCOUNT_A));
        CPPUNIT_ASSERT(s->SetRecordLogs(ACCOUNT_A, true).ok());
        CPPUNIT_ASSERT(*s->RecordLogs(ACCOUNT_A));
        CPPUNIT_ASSERT(!*s->RecordLogs(ACCOUNT_B));
        CPPUNIT_ASSERT(s->SetRecordLogs(ACCOUNT_A, false).ok());
        CPPUNIT_ASSERT(!*s->RecordLogs(ACCOUNT_A));
        RunRecord with = Row("l1", 1, ACCOUNT_A, ACCOUNT_A);
        with.has_logs = true;
        with.logs = "line\n";
        with.logs_truncated = true;
        CPPUNIT_ASSERT(s->Insert({with, Row("l2", 2, ACCOUNT_A, ACCOUNT_A)}).ok());
        auto got = s->Get(ACCOUNT_A, "l1");
        CPPUNIT_ASSERT((*got)->has_logs);
        CPPUNIT_ASSERT_EQUAL(std::string("line\n"), (*got)->logs);
        CPPUNIT_ASSERT((*got)->logs_truncated);
        CPPUNIT_ASSERT(!(*s->Get(ACCOUNT_A, "l2"))->has_logs);
    }
};

class SqliteHistoryTests : public HistoryStoreContractTests {
    CPPUNIT_TEST_SUB_SUITE(SqliteHistoryTests, HistoryStoreContractTests);
    CPPUNIT_TEST(testQueueWritesInTheBackgroundAndDropsWhenFull);
    CPPUNIT_TEST(testStopLeavesNothingUncounted);
    CPPUNIT_TEST(testWriterTakesNoSignal);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override {
        char tmpl[] = "/tmp/sigil-history-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(tmpl) != nullptr);
        m_dir = tmpl;
    }
    void tearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }
    std::string Database() override { return m_dir + "/history.sqlite"; }

    // Record() returns at once whatever the store does; the writer thread writes the queue, and a
    // store that cannot be opened (a folder that does not exist) costs dropped records, never a wait.
    void testQueueWritesInTheBackgroundAndDropsWhenFull() {
        HistorySettings settings;
        settings.database = Database();
        settings.flush_interval_ms = 20;
        {
            auto history = RunHistory::Start(settings);
            // Started now: older rows would be the pruner's (keep_ms) before the list sees them.
            const std::int64_t now = WallClockMs();
            for (int i = 0; i < 10; ++i) history->Record(Row("q" + std::to_string(i), now + i, ACCOUNT_A, ACCOUNT_A));
            RunQuery q;
            q.account_hash = ACCOUNT_A;
            std::size_t n = 0;
            for (int i = 0; i < 100 && n < 10; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                auto rows = history->List(q);
                n = rows.ok() ? rows->size() : 0;
            }
            CPPUNIT_ASSERT_EQUAL(std::size_t{10}, n);
            CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, history->dropped());
        }
        settings.database = m_dir + "/missing/history.sqlite";
        settings.queue_records = 4;
        auto history = RunHistory::Start(settings);
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 100; ++i) history->Record(Row("d" + std::to_string(i), 1, ACCOUNT_A, ACCOUNT_A));
        CPPUNIT_ASSERT(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(200));
        CPPUNIT_ASSERT(history->dropped() >= 90);
    }

    // What the worker publishes for the supervisor (its slot's history_pending) is every record
    // neither written nor counted dropped; a worker that stops with a store that refuses (more than
    // one batch of 256 queued) leaves none behind: each is written or counted dropped.
    void testStopLeavesNothingUncounted() {
        HistorySettings settings;
        settings.database = m_dir + "/missing/history.sqlite";
        settings.queue_records = 1000;
        settings.flush_interval_ms = 20;
        std::atomic<std::uint64_t> pending{0};
        auto history = RunHistory::Start(settings);
        history->PublishPendingTo(&pending);
        for (int i = 0; i < 300; ++i) history->Record(Row("s" + std::to_string(i), 1, ACCOUNT_A, ACCOUNT_A));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{300}, pending.load() + history->dropped());
        history->Stop();
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, pending.load());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{300}, history->dropped());
        history->Record(Row("late", 1, ACCOUNT_A, ACCOUNT_A));  // after Stop: counted, never queued
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{301}, history->dropped());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, pending.load());

        // The same with a store that works: everything is written, nothing pending or dropped.
        settings.database = Database();
        auto ok = RunHistory::Start(settings);
        ok->PublishPendingTo(&pending);
        const std::int64_t now = WallClockMs();
        for (int i = 0; i < 300; ++i) ok->Record(Row("w" + std::to_string(i), now, ACCOUNT_A, ACCOUNT_A));
        ok->Stop();
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, pending.load());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, ok->dropped());
        auto store = OpenHistoryStore(Database());
        CPPUNIT_ASSERT(store.ok());
        RunQuery q;
        q.account_hash = ACCOUNT_A;
        q.limit = 1000;
        auto rows = (*store)->List(q);
        CPPUNIT_ASSERT(rows.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{300}, rows->size());
    }

    // The worker starts the history before it blocks SIGQUIT (read from a signalfd between requests):
    // a process-directed SIGQUIT must stay pending for the main thread, never be taken by the writer
    // thread, whose default action would end the worker at once with its queue.
    void testWriterTakesNoSignal() {
        const pid_t child = ::fork();
        CPPUNIT_ASSERT(child >= 0);
        if (child == 0) {
            HistorySettings settings;
            settings.database = Database();
            settings.flush_interval_ms = 20;
            auto history = RunHistory::Start(settings);
            sigset_t quit;
            sigemptyset(&quit);
            sigaddset(&quit, SIGQUIT);
            pthread_sigmask(SIG_BLOCK, &quit, nullptr);  // as the FastCGI loop does
            ::kill(::getpid(), SIGQUIT);
            std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the writer wakes a few times
            sigset_t pending;
            sigpending(&pending);
            ::_exit(sigismember(&pending, SIGQUIT) == 1 ? 0 : 3);
        }
        int status = 0;
        CPPUNIT_ASSERT_EQUAL(child, ::waitpid(child, &status, 0));
        CPPUNIT_ASSERT_MESSAGE("the child died by signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0),
                               WIFEXITED(status));
        CPPUNIT_ASSERT_EQUAL(0, WEXITSTATUS(status));
    }

private:
    std::string m_dir;
};

class PostgresHistoryTests : public HistoryStoreContractTests {
    CPPUNIT_TEST_SUB_SUITE(PostgresHistoryTests, HistoryStoreContractTests);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override { m_url = SharedPostgres().CreateDatabase(); }
    std::string Database() override { return m_url; }

private:
    std::string m_url;
};

CPPUNIT_TEST_SUITE_REGISTRATION(SqliteHistoryTests);
CPPUNIT_TEST_SUITE_REGISTRATION(PostgresHistoryTests);
