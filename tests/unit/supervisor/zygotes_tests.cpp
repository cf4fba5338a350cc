// The shared sandbox zygotes for real: sigil-supervisor's ZygotePool starting tests/'
// sigil-sandbox-test on its listening socket, and workers' connections to it through the host
// API (Zygote::Connect, RunAction): many connections on one zygote, each seeing and touching only
// its own children, restarts after kill -9, and a run under a dying zygote ending typed.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/config.h"
#include "common/handles.h"
#include "supervisor/options.h"
#include "supervisor/zygotes.h"
#include "workers/actions/sandbox_host.h"
#include "workers/sandbox/protocol/control.h"

using namespace sigil;
using namespace sigil::common;
using namespace sigil::workers;
using sigil::supervisor::ZygotePool;

namespace {

const std::string TEST_SANDBOX = std::string(SIGIL_BINARY_DIR) + "/tests/sigil-sandbox-test";

std::int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool Alive(pid_t pid) { return ::kill(pid, 0) == 0; }

pid_t ParentOf(pid_t pid) {
    pid_t ppid = -1;
    if (FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r")) {
        int ignored = 0;
        char comm[256], state = 0;
        (void)std::fscanf(f, "%d %255s %c %d", &ignored, comm, &state, &ppid);
        std::fclose(f);
    }
    return ppid;
}

// Whether `pid` is gone (or a zombie nobody reaped yet) within `ms`.
bool GoneWithin(pid_t pid, int ms) {
    const std::int64_t until = NowMs() + ms;
    while (NowMs() < until) {
        char state = 0;
        if (FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r")) {
            int ignored = 0;
            char comm[256];
            (void)std::fscanf(f, "%d %255s %c", &ignored, comm, &state);
            std::fclose(f);
        } else {
            return true;
        }
        if (state == 'Z' || state == 'X') return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

// The workers' connections a shared zygote holds: its sockets above the listening one (3).
std::size_t ConnectionsOf(pid_t pid) {
    std::size_t n = 0;
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    if (DIR* d = ::opendir(dir.c_str())) {
        while (const dirent* e = ::readdir(d)) {
            char link[PATH_MAX] = {};
            if (std::atoi(e->d_name) <= 3) continue;
            const ssize_t len = ::readlink((dir + "/" + e->d_name).c_str(), link, sizeof(link) - 1);
            if (len > 0 && std::string(link).rfind("socket:", 0) == 0) ++n;
        }
        ::closedir(d);
    }
    return n;
}

std::string ExeOf(pid_t pid) {
    char buf[PATH_MAX] = {};
    const ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

class NoOps : public OpHandler {
public:
    Result<std::string> OnOp(std::string_view, std::string_view) override { return std::string("null"); }
    Status OnLog(std::string_view) override { return Success(); }
};

RunLimits Limits(std::uint64_t time_ms) {
    RunLimits l;
    l.time_ms = time_ms;
    return l;
}

// A child spawned on `zygote` that waits for a RUN that never comes; `channel` keeps it waiting.
pid_t SpawnIdle(Zygote& zygote, UniqueFd& channel) {
    int sv[2];
    CPPUNIT_ASSERT_EQUAL(0, ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
    channel = UniqueFd(sv[0]);
    const UniqueFd theirs(sv[1]);
    auto pid = zygote.Spawn(theirs.get());
    CPPUNIT_ASSERT_MESSAGE(pid.ok() ? "" : pid.error().message, pid.ok());
    return *pid;
}

}  // namespace

class ZygotesTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ZygotesTests);
    CPPUNIT_TEST(testDefaultCountIsOnlineCpus);
    CPPUNIT_TEST(testStartsCountZygotesOfTheSandboxExecutable);
    CPPUNIT_TEST(testReadyMeansWarm);
    CPPUNIT_TEST(testManyConnectionsRunOnOneZygote);
    CPPUNIT_TEST(testEachConnectionSeesOnlyItsOwnChildren);
    CPPUNIT_TEST(testClosingAConnectionKillsOnlyItsChildren);
    CPPUNIT_TEST(testPeerOfAnotherUidIsRefused);
    CPPUNIT_TEST(testKilledZygoteIsRestartedAndRunsReconnect);
    CPPUNIT_TEST(testZygoteKilledMidRunEndsTheRunTyped);
    CPPUNIT_TEST(testRunNotYetForkedIsAskedOnceMore);
    CPPUNIT_TEST(testNoZygoteIsABoundedTimeout);
    CPPUNIT_TEST(testStopKillsEveryZygote);
    CPPUNIT_TEST(testChildHoldsNoOtherConnection);
    CPPUNIT_TEST(testChildrenPerConnectionAreCapped);
    CPPUNIT_TEST(testOptionsResolveZygotesAndSandbox);
    CPPUNIT_TEST_SUITE_END();

    std::optional<ZygotePool> m_pool;

    ZygotePool& Pool(std::uint32_t count) {
        auto pool = ZygotePool::Open(TEST_SANDBOX, count);
        CPPUNIT_ASSERT_MESSAGE(pool.ok() ? "" : pool.error().message, pool.ok());
        m_pool.emplace(std::move(pool).value());
        m_pool->Tick(NowMs());
        // Once the zygotes serve (a loaded machine may take seconds to warm one up), the tests'
        // own 5 s bounds measure what they mean to.
        CPPUNIT_ASSERT(m_pool->WaitReady(60000));
        return *m_pool;
    }
    Zygote Connect() {
        auto z = Zygote::Connect(m_pool->address());
        CPPUNIT_ASSERT_MESSAGE(z.ok() ? "" : z.error().message, z.ok());
        return std::move(z).value();
    }
    static RunOutcome Hello(Zygote& zygote, const std::string& who) {
        NoOps ops;
        auto r = RunAction(zygote, RunRequest{"function main(p) { return 'hi ' + p.who; }", R"({"who":")" + who + "\"}",
                                              Limits(5000)},
                           ops);
        CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().code + ": " + r.error().message, r.ok());
        return std::move(r).value();
    }
    // Hello on a zygote that may still be warming up (a loaded machine can take seconds): a
    // zygote_timeout is retried a few times, anything else fails.
    static RunOutcome HelloOnceWarm(Zygote& zygote, const std::string& who) {
        for (int attempt = 0;; ++attempt) {
            NoOps ops;
            auto r = RunAction(zygote, RunRequest{"function main(p) { return 'hi ' + p.who; }",
                                                  R"({"who":")" + who + "\"}", Limits(5000)},
                               ops);
            if (r.ok() || attempt == 3 || r.error().code != "zygote_timeout") {
                CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().code + ": " + r.error().message, r.ok());
                return std::move(r).value();
            }
        }
    }
    // Ticks the pool until it runs `count` zygotes other than `dead`.
    void WaitForRestart(std::size_t count, pid_t dead) {
        const std::int64_t until = NowMs() + 10000;
        while (NowMs() < until) {
            m_pool->Tick(NowMs());
            const auto pids = m_pool->pids();
            bool has_dead = false;
            for (pid_t p : pids) has_dead = has_dead || p == dead;
            if (pids.size() == count && !has_dead) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        CPPUNIT_FAIL("the pool did not restart the killed zygote");
    }

public:
    void tearDown() override { m_pool.reset(); }

    void testDefaultCountIsOnlineCpus() {
        CPPUNIT_ASSERT_EQUAL(1u, supervisor::DefaultZygoteCount(0));
        CPPUNIT_ASSERT_EQUAL(2u, supervisor::DefaultZygoteCount(2));
        CPPUNIT_ASSERT_EQUAL(64u, supervisor::DefaultZygoteCount(512));
    }
    void testStartsCountZygotesOfTheSandboxExecutable() {
        ZygotePool& pool = Pool(2);
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, pool.pids().size());
        for (pid_t pid : pool.pids()) {
            for (int i = 0; i < 100 && ExeOf(pid) != TEST_SANDBOX; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            CPPUNIT_ASSERT_EQUAL(TEST_SANDBOX, ExeOf(pid));
            CPPUNIT_ASSERT_EQUAL(::getpid(), ParentOf(pid));
        }
        CPPUNIT_ASSERT(pool.address().rfind("@sigil-zygote-" + std::to_string(::getpid()) + "-", 0) == 0);
        CPPUNIT_ASSERT_EQUAL(std::string("@sigil-zygote-").size() + std::to_string(::getpid()).size() + 1 + 16,
                             pool.address().size());
        // Ticking again starts nothing more.
        pool.Tick(NowMs());
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, pool.pids().size());
    }
    void testReadyMeansWarm() {
        auto pool = ZygotePool::Open(TEST_SANDBOX, 2);
        CPPUNIT_ASSERT(pool.ok());
        CPPUNIT_ASSERT(!pool->WaitReady(0));  // none running yet
        pool->Tick(NowMs());
        CPPUNIT_ASSERT(pool->WaitReady(60000));
        // Each has closed its end of the readiness pipe (descriptor 4) and holds the listening socket.
        for (pid_t pid : pool->pids()) {
            char link[PATH_MAX] = {};
            const std::string fd4 = "/proc/" + std::to_string(pid) + "/fd/4";
            const ssize_t n = ::readlink(fd4.c_str(), link, sizeof(link) - 1);
            CPPUNIT_ASSERT_MESSAGE(link, n < 0 || std::string(link, static_cast<std::size_t>(n)).rfind("pipe:", 0) != 0);
            const std::string fd3 = "/proc/" + std::to_string(pid) + "/fd/3";
            CPPUNIT_ASSERT(::readlink(fd3.c_str(), link, sizeof(link) - 1) > 0 && std::string(link).rfind("socket:", 0) == 0);
        }
        // A run right away is forked at once, not after a warm-up.
        m_pool.emplace(std::move(pool).value());
        Zygote w = Connect();
        CPPUNIT_ASSERT(Hello(w, "ready").end == RunEnd::Completed);
    }
    void testManyConnectionsRunOnOneZygote() {
        Pool(1);
        std::vector<Zygote> workers;
        for (int i = 0; i < 8; ++i) workers.push_back(Connect());
        for (int round = 0; round < 2; ++round) {
            for (int i = 0; i < 8; ++i) {
                const RunOutcome o = Hello(workers[i], std::to_string(i));
                CPPUNIT_ASSERT(o.end == RunEnd::Completed);
                CPPUNIT_ASSERT_EQUAL("\"hi " + std::to_string(i) + "\"", o.response_json);
            }
        }
    }
    void testEachConnectionSeesOnlyItsOwnChildren() {
        Pool(1);
        Zygote a = Connect(), b = Connect();
        UniqueFd ca, cb;
        const pid_t child_a = SpawnIdle(a, ca);
        const pid_t child_b = SpawnIdle(b, cb);
        // b asks to kill a's child: ignored.
        CPPUNIT_ASSERT(b.Kill(child_a).ok());
        CPPUNIT_ASSERT(!GoneWithin(child_a, 300));
        // a kills its own: only a hears of its exit, b's wait for it times out.
        CPPUNIT_ASSERT(a.Kill(child_a).ok());
        auto status = a.WaitExit(child_a, 5000);
        CPPUNIT_ASSERT(status.ok());
        CPPUNIT_ASSERT(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
        auto other = b.WaitExit(child_a, 300);
        CPPUNIT_ASSERT(!other.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("zygote_timeout"), other.error().code);
        CPPUNIT_ASSERT(Alive(child_b));
        CPPUNIT_ASSERT(b.Kill(child_b).ok());
        CPPUNIT_ASSERT(b.WaitExit(child_b, 5000).ok());
    }
    void testClosingAConnectionKillsOnlyItsChildren() {
        Pool(1);
        std::optional<Zygote> a(Connect());
        Zygote b = Connect();
        UniqueFd ca, cb;
        const pid_t child_a = SpawnIdle(*a, ca);
        const pid_t child_b = SpawnIdle(b, cb);
        a.reset();  // the worker died
        CPPUNIT_ASSERT(GoneWithin(child_a, 5000));
        CPPUNIT_ASSERT(!GoneWithin(child_b, 300));
        // b's connection still works.
        CPPUNIT_ASSERT(Hello(b, "b").end == RunEnd::Completed);
        CPPUNIT_ASSERT(b.Kill(child_b).ok());
    }
    void testPeerOfAnotherUidIsRefused() {
        if (::geteuid() != 0) return;  // needs root to become another uid
        Pool(1);
        const std::string address = m_pool->address();
        const pid_t pid = ::fork();
        if (pid == 0) {
            if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
            auto z = Zygote::Connect(address);  // accepted by the kernel, then closed by the zygote
            if (!z.ok()) ::_exit(4);
            int sv[2];
            if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) ::_exit(5);
            auto child = z->Spawn(sv[1]);
            ::_exit(!child.ok() && child.error().code == "zygote_gone" ? 0 : 1);
        }
        int status = 0;
        CPPUNIT_ASSERT_EQUAL(pid, ::waitpid(pid, &status, 0));
        CPPUNIT_ASSERT(WIFEXITED(status));
        CPPUNIT_ASSERT_EQUAL(0, WEXITSTATUS(status));
        // Our own uid is still served.
        Zygote ok = Connect();
        CPPUNIT_ASSERT(Hello(ok, "me").end == RunEnd::Completed);
    }
    void testKilledZygoteIsRestartedAndRunsReconnect() {
        ZygotePool& pool = Pool(1);
        Zygote w = Connect();
        CPPUNIT_ASSERT(Hello(w, "before").end == RunEnd::Completed);
        const pid_t dead = pool.pids().at(0);
        ::kill(dead, SIGKILL);
        CPPUNIT_ASSERT(GoneWithin(dead, 5000));
        WaitForRestart(1, dead);
        // The broken connection is replaced before the next run asks for anything.
        CPPUNIT_ASSERT(HelloOnceWarm(w, "after").end == RunEnd::Completed);
    }
    void testZygoteKilledMidRunEndsTheRunTyped() {
        ZygotePool& pool = Pool(1);
        Zygote w = Connect();
        CPPUNIT_ASSERT(Hello(w, "first").end == RunEnd::Completed);  // the zygote serves us
        const pid_t zygote = pool.pids().at(0);
        std::thread killer([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            ::kill(zygote, SIGKILL);
        });
        NoOps ops;
        const std::int64_t start = NowMs();
        auto r = RunAction(w, RunRequest{"function main() { for (;;) {} }", "{}", Limits(10000)}, ops);
        killer.join();
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("zygote_gone"), r.error().code);
        CPPUNIT_ASSERT(NowMs() - start < 3000);  // not the run's 10 s: it ended with the zygote
        WaitForRestart(1, zygote);
        CPPUNIT_ASSERT(HelloOnceWarm(w, "next").end == RunEnd::Completed);
    }
    void testRunNotYetForkedIsAskedOnceMore() {
        ZygotePool& pool = Pool(2);
        Zygote w = Connect();
        CPPUNIT_ASSERT(Hello(w, "first").end == RunEnd::Completed);
        const auto pids = pool.pids();
        const pid_t holder = ConnectionsOf(pids[0]) == 1 ? pids[0] : pids[1];
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, ConnectionsOf(holder));
        // The zygote holding w's connection takes the SPAWN and dies without answering.
        ::kill(holder, SIGSTOP);
        std::optional<Result<RunOutcome>> result;
        std::thread runner([&] {
            NoOps ops;
            result.emplace(RunAction(w, RunRequest{"function main() { return 'again'; }", "{}", Limits(5000)}, ops));
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::kill(holder, SIGKILL);
        runner.join();
        // Nothing of the run had started: it was asked once more, on a new connection to the other.
        CPPUNIT_ASSERT_MESSAGE(result->ok() ? "" : result->error().code, result->ok());
        CPPUNIT_ASSERT_EQUAL(std::string("\"again\""), (*result)->response_json);
    }
    void testNoZygoteIsABoundedTimeout() {
        auto pool = ZygotePool::Open(TEST_SANDBOX, 1);  // never ticked: nobody accepts
        CPPUNIT_ASSERT(pool.ok());
        m_pool.emplace(std::move(pool).value());
        Zygote w = Connect();
        NoOps ops;
        const std::int64_t start = NowMs();
        auto r = RunAction(w, RunRequest{"function main() { return 1; }", "{}", Limits(1000)}, ops);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("zygote_timeout"), r.error().code);
        const std::int64_t took = NowMs() - start;
        CPPUNIT_ASSERT(took >= SHARED_SPAWN_TIMEOUT_MS - 100 && took < SHARED_SPAWN_TIMEOUT_MS + 2000);
        // Once a zygote runs, the same worker's next run works on a new connection.
        m_pool->Tick(NowMs());
        CPPUNIT_ASSERT(HelloOnceWarm(w, "late").end == RunEnd::Completed);
    }
    void testStopKillsEveryZygote() {
        ZygotePool& pool = Pool(2);
        Zygote w = Connect();
        UniqueFd channel;
        const pid_t child = SpawnIdle(w, channel);
        const auto pids = pool.pids();
        pool.Stop();
        CPPUNIT_ASSERT(pool.pids().empty());
        for (pid_t pid : pids) CPPUNIT_ASSERT(!Alive(pid));  // reaped: not even a zombie
        // A run child dies with its zygote (PR_SET_PDEATHSIG).
        CPPUNIT_ASSERT(GoneWithin(child, 5000));
    }
    void testChildHoldsNoOtherConnection() {
        ZygotePool& pool = Pool(1);
        Zygote a = Connect(), b = Connect();
        CPPUNIT_ASSERT(Hello(b, "b").end == RunEnd::Completed);  // b's connection is accepted
        UniqueFd channel;
        const pid_t child = SpawnIdle(a, channel);
        // The zygote holds the listening socket and both connections; the child, waiting for its
        // RUN, holds nothing but its op channel (descriptor 0).
        const std::string dir = "/proc/" + std::to_string(pool.pids().at(0)) + "/fd";
        std::set<std::string> child_fds;
        for (int i = 0; i < 100; ++i) {
            child_fds.clear();
            if (DIR* d = ::opendir(("/proc/" + std::to_string(child) + "/fd").c_str())) {
                while (const dirent* e = ::readdir(d)) {
                    if (e->d_name[0] != '.') child_fds.insert(e->d_name);
                }
                ::closedir(d);
            }
            if (child_fds == std::set<std::string>{"0"}) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        CPPUNIT_ASSERT(child_fds == std::set<std::string>{"0"});
        CPPUNIT_ASSERT(a.Kill(child).ok());
    }
    void testChildrenPerConnectionAreCapped() {
        Pool(1);
        Zygote a = Connect(), b = Connect();
        std::vector<UniqueFd> channels(ZYGOTE_MAX_CHILDREN_PER_CONNECTION);
        std::vector<pid_t> children;
        for (auto& c : channels) children.push_back(SpawnIdle(a, c));
        // One more on a is refused; b is not held back by a's children.
        int sv[2];
        CPPUNIT_ASSERT_EQUAL(0, ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
        const UniqueFd ours(sv[0]), theirs(sv[1]);
        auto refused = a.Spawn(theirs.get());
        CPPUNIT_ASSERT(!refused.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("spawn_failed"), refused.error().code);
        CPPUNIT_ASSERT(Hello(b, "b").end == RunEnd::Completed);
        // Once one of a's children is reaped, a may spawn again.
        CPPUNIT_ASSERT(a.Kill(children[0]).ok());
        CPPUNIT_ASSERT(a.WaitExit(children[0], 5000).ok());
        CPPUNIT_ASSERT(Hello(a, "a").end == RunEnd::Completed);
    }
    void testOptionsResolveZygotesAndSandbox() {
        auto parse = [](const std::string& text) {
            auto config = Config::Parse(text);
            CPPUNIT_ASSERT(config.ok());
            auto o = supervisor::OptionsFromConfig(*config, "/etc/sigil.conf", "/usr/bin/sigil-supervisor");
            CPPUNIT_ASSERT_MESSAGE(o.ok() ? "" : o.error().message, o.ok());
            return std::move(o).value();
        };
        // 0 = one per online CPU; no sigil-sandbox beside /bin/true: none (workers start their own).
        const auto defaults = parse("[supervisor]\nworker_binary = /bin/true\n");
        CPPUNIT_ASSERT_EQUAL(supervisor::DefaultZygoteCount(::sysconf(_SC_NPROCESSORS_ONLN)), defaults.zygotes);
        CPPUNIT_ASSERT_EQUAL(std::string(), defaults.sandbox_path);
        const auto set = parse("[supervisor]\nworker_binary = /bin/true\nzygotes = 3\n[actions]\nsandbox_path = " +
                               TEST_SANDBOX + "\n");
        CPPUNIT_ASSERT_EQUAL(3u, set.zygotes);
        CPPUNIT_ASSERT_EQUAL(TEST_SANDBOX, set.sandbox_path);
        // The default is the sigil-sandbox beside the worker binary.
        const auto beside = parse("[supervisor]\nworker_binary = " + std::string(SIGIL_BINARY_DIR) + "/bin/sigil-worker\n");
        CPPUNIT_ASSERT_EQUAL(std::string(SIGIL_BINARY_DIR) + "/bin/sigil-sandbox", beside.sandbox_path);
        CPPUNIT_ASSERT(!Config::Parse("[supervisor]\nzygotes = 65\n").ok());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ZygotesTests);
