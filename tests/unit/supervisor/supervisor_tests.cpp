#include <cppunit/extensions/HelperMacros.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/handles.h"
#include "supervisor/backlog.h"
#include "supervisor/children.h"
#include "supervisor/listen_socket.h"
#include "supervisor/options.h"
#include "supervisor/sd_notify.h"
#include "supervisor/signals.h"

using namespace sigil;
using namespace sigil::supervisor;

namespace {

std::string TempDir() {
    char tmpl[] = "/tmp/sigil-sup-test-XXXXXX";
    return mkdtemp(tmpl);
}

// A datagram socket bound at `name` (path, or abstract when it starts with '@').
common::UniqueFd BindDatagram(const std::string& name) {
    common::UniqueFd fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, name.data(), name.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    if (name[0] == '@') {
        a.sun_path[0] = '\0';
    } else {
        ++len;
    }
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&a), len) != 0) return {};
    return fd;
}

std::string Receive(int fd) {
    char buf[512];
    struct timeval tv {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const auto n = recv(fd, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

ChildExit Exit(bool crashed, std::int64_t started_ms) {
    ChildExit e;
    e.crashed = crashed;
    e.child.started_ms = started_ms;
    return e;
}

}  // namespace

class SupervisorTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SupervisorTests);
    CPPUNIT_TEST(testDefaultWorkerCount);
    CPPUNIT_TEST(testOptionsFromConfig);
    CPPUNIT_TEST(testOptionsRefuseMissingWorkerBinary);
    CPPUNIT_TEST(testPoolSizes);
    CPPUNIT_TEST(testSparesAndDrainingOneIdle);
    CPPUNIT_TEST(testPendingConnectionsCountsTheAcceptQueue);
    CPPUNIT_TEST(testLoadOptionsKeepsValidatedText);
    CPPUNIT_TEST(testConfigSnapshotIsSealed);
    CPPUNIT_TEST(testBackoffGrowsOnlyForYoungCrashes);
    CPPUNIT_TEST(testSdNotifyPathAndAbstract);
    CPPUNIT_TEST(testSdNotifyWithoutSocket);
    CPPUNIT_TEST(testWatchdogInterval);
    CPPUNIT_TEST(testSignalPipeDeliversSignals);
    CPPUNIT_TEST(testListenSocketModeAndCleanup);
    CPPUNIT_TEST(testListenSocketRefusesLiveAndReplacesStale);
    CPPUNIT_TEST(testListenSocketRefusesBadPaths);
    CPPUNIT_TEST_SUITE_END();

public:
    void testDefaultWorkerCount() {
        CPPUNIT_ASSERT_EQUAL(2u, DefaultWorkerCount(1));
        CPPUNIT_ASSERT_EQUAL(4u, DefaultWorkerCount(2));
        CPPUNIT_ASSERT_EQUAL(32u, DefaultWorkerCount(64));
        CPPUNIT_ASSERT_EQUAL(2u, DefaultWorkerCount(-1));  // sysconf failure
    }
    void testOptionsFromConfig() {
        auto cfg = common::Config::Parse(
            "[supervisor]\nworkers = 3\nrequest_hard_timeout_s = 5\nworker_binary = /bin/true\nsocket_mode = 0660\n");
        CPPUNIT_ASSERT(cfg.ok());
        auto o = OptionsFromConfig(*cfg, "/etc/sigil.conf", "/usr/bin/sigil-supervisor");
        CPPUNIT_ASSERT(o.ok());
        CPPUNIT_ASSERT_EQUAL(3u, o->workers);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{5000}, o->request_hard_timeout_ms);
        CPPUNIT_ASSERT_EQUAL(0660u, o->socket_mode);
        CPPUNIT_ASSERT_EQUAL(std::string("/etc/sigil.conf"), o->config_path);
        auto auto_cfg = common::Config::Parse("[supervisor]\nworker_binary = /bin/true\n");
        CPPUNIT_ASSERT(auto_cfg.ok());
        auto a = OptionsFromConfig(*auto_cfg, "c", "x");
        CPPUNIT_ASSERT(a.ok() && a->workers >= 2 && a->workers <= 32);
    }
    // The dynamic pool's bounds: defaults, and the combinations that cannot work are refused.
    void testPoolSizes() {
        const auto options = [](const std::string& lines) {
            auto cfg = common::Config::Parse("[supervisor]\nworker_binary = /bin/true\n" + lines);
            CPPUNIT_ASSERT(cfg.ok());
            return OptionsFromConfig(*cfg, "c", "x");
        };
        auto d = options("workers = 4\n");
        CPPUNIT_ASSERT(d.ok());
        CPPUNIT_ASSERT_EQUAL(256u, d->max_workers);
        CPPUNIT_ASSERT_EQUAL(4u, d->min_spare_workers);
        CPPUNIT_ASSERT_EQUAL(16u, d->max_spare_workers);
        CPPUNIT_ASSERT_EQUAL(8u, d->reserve_workers);
        auto s = options("workers = 6\nmax_workers = 6\nreserve_workers = 2\n");  // static
        CPPUNIT_ASSERT(s.ok());
        CPPUNIT_ASSERT_EQUAL(6u, s->max_workers);
        // workers = 0 (two per CPU) never exceeds the ceiling.
        auto a = options("workers = 0\nmax_workers = 2\nreserve_workers = 1\n");
        CPPUNIT_ASSERT(a.ok());
        CPPUNIT_ASSERT_EQUAL(2u, a->workers);
        for (const char* bad : {"workers = 8\nmax_workers = 4\nreserve_workers = 1\n",
                                "min_spare_workers = 5\nmax_spare_workers = 4\n",
                                "workers = 2\nmax_workers = 8\nreserve_workers = 8\n"}) {
            auto o = options(bad);
            CPPUNIT_ASSERT_MESSAGE(bad, !o.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("pool_sizes"), o.error().code);
        }
    }
    // The pool's primitives for growing and shrinking, on real child processes (a script standing in
    // for the worker): idle and starting workers are spare; the highest idle slot is drained first,
    // busy ones never.
    void testSparesAndDrainingOneIdle() {
        const std::string dir = TempDir();
        const std::string bin = dir + "/fake-worker";
        FILE* f = fopen(bin.c_str(), "w");
        fputs("#!/bin/sh\nexec sleep 30\n", f);
        fclose(f);
        chmod(bin.c_str(), 0755);
        auto sb = common::Scoreboard::Create("test-pool", 8);
        CPPUNIT_ASSERT(sb.ok());
        auto cfg = ConfigSnapshot("");
        CPPUNIT_ASSERT(cfg.ok());
        int pair[2];
        CPPUNIT_ASSERT(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) == 0);
        common::UniqueFd a(pair[0]), b(pair[1]);
        common::UniqueFd listen_fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        ChildPool pool(*sb, SpawnSpec{bin, "c", listen_fd.get(), cfg->get(), a.get(), b.get()});
        for (int i = 0; i < 4; ++i) CPPUNIT_ASSERT(pool.Spawn(1, 0).ok());
        CPPUNIT_ASSERT_EQUAL(4u, pool.CountSpare(1));  // all starting
        sb->MarkIdle(0);
        sb->MarkBusy(1, 1);
        sb->MarkIdle(2);
        sb->MarkBusy(3, 1);
        CPPUNIT_ASSERT_EQUAL(2u, pool.CountSpare(1));
        CPPUNIT_ASSERT_EQUAL(0u, pool.CountSpare(2));  // another generation's are not
        CPPUNIT_ASSERT(pool.DrainOneIdle(1, 5));
        CPPUNIT_ASSERT_EQUAL(1u, sb->Slot(2).drain.load());  // the highest idle slot
        CPPUNIT_ASSERT_EQUAL(0u, sb->Slot(0).drain.load());
        CPPUNIT_ASSERT_EQUAL(3u, pool.CountWanted(1));
        CPPUNIT_ASSERT(pool.DrainOneIdle(1, 6));
        CPPUNIT_ASSERT_EQUAL(1u, sb->Slot(0).drain.load());
        CPPUNIT_ASSERT(!pool.DrainOneIdle(1, 7));  // the busy ones stay
        CPPUNIT_ASSERT_EQUAL(2u, pool.CountWanted(1));
        // The drained ones got SIGQUIT and end; the rest are stopped here.
        pool.Drain(UINT32_MAX, 8);
        for (int i = 0; i < 100 && pool.size() > 0; ++i) {
            pool.Reap();
            usleep(20000);
        }
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, pool.size());
        unlink(bin.c_str());
        rmdir(dir.c_str());
    }
    // The pool forks one worker per connection nobody has accepted yet: the kernel's count of them.
    void testPendingConnectionsCountsTheAcceptQueue() {
        const std::string dir = TempDir();
        auto sock = ListenSocket::Open({dir + "/s.sock", 0600, ""});
        CPPUNIT_ASSERT(sock.ok());
        CPPUNIT_ASSERT(PendingConnections(sock->fd()) == std::optional<std::uint32_t>(0));
        std::vector<common::UniqueFd> clients;
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, (dir + "/s.sock").c_str(), sizeof a.sun_path - 1);
        for (int i = 0; i < 3; ++i) {
            clients.emplace_back(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
            CPPUNIT_ASSERT(connect(clients.back().get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        }
        CPPUNIT_ASSERT(PendingConnections(sock->fd()) == std::optional<std::uint32_t>(3));
        common::UniqueFd taken(accept4(sock->fd(), nullptr, nullptr, SOCK_CLOEXEC));
        CPPUNIT_ASSERT(taken.valid());
        CPPUNIT_ASSERT(PendingConnections(sock->fd()) == std::optional<std::uint32_t>(2));
        CPPUNIT_ASSERT(!PendingConnections(-1));
        sock->Close();
        rmdir(dir.c_str());
    }
    void testOptionsRefuseMissingWorkerBinary() {
        auto cfg = common::Config::Parse("");
        CPPUNIT_ASSERT(cfg.ok());
        auto o = OptionsFromConfig(*cfg, "c", "/nonexistent/dir/sigil-supervisor");
        CPPUNIT_ASSERT(!o.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("worker_binary_missing"), o.error().code);
        CPPUNIT_ASSERT(o.error().message.find("/nonexistent/dir/sigil-worker") != std::string::npos);
    }
    void testLoadOptionsKeepsValidatedText() {
        const std::string dir = TempDir();
        const std::string path = dir + "/sigil.conf";
        const std::string text = "[supervisor]\nworkers = 3\nworker_binary = /bin/true\n";
        FILE* f = fopen(path.c_str(), "w");
        fputs(text.c_str(), f);
        fclose(f);
        auto o = LoadOptions(path, "x");
        CPPUNIT_ASSERT(o.ok());
        CPPUNIT_ASSERT_EQUAL(text, o->config_text);
        CPPUNIT_ASSERT_EQUAL(3u, o->workers);
        f = fopen(path.c_str(), "a");
        fputs("bogus = 1\n", f);
        fclose(f);
        auto bad = LoadOptions(path, "x");
        CPPUNIT_ASSERT(!bad.ok());
        CPPUNIT_ASSERT(bad.error().message.find("supervisor.bogus") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(std::string("config_unreadable"), LoadOptions(dir + "/none", "x").error().code);
        unlink(path.c_str());
        rmdir(dir.c_str());
    }
    void testConfigSnapshotIsSealed() {
        auto fd = ConfigSnapshot("[worker]\nmax_body_bytes = 7\n");
        CPPUNIT_ASSERT(fd.ok());
        char buf[64] = {};
        const auto n = pread(fd->get(), buf, sizeof buf, 0);
        CPPUNIT_ASSERT_EQUAL(std::string("[worker]\nmax_body_bytes = 7\n"), std::string(buf, static_cast<std::size_t>(n)));
        CPPUNIT_ASSERT(pwrite(fd->get(), "x", 1, 0) < 0);  // sealed: nobody can change what workers read
        CPPUNIT_ASSERT(ftruncate(fd->get(), 0) != 0);
    }
    void testBackoffGrowsOnlyForYoungCrashes() {
        RestartBackoff b;
        CPPUNIT_ASSERT(b.Allowed(0));
        b.OnExit(Exit(true, 1000), 1100);
        CPPUNIT_ASSERT_EQUAL(1, b.streak());
        CPPUNIT_ASSERT_EQUAL(std::int64_t{1200}, b.not_before_ms());
        CPPUNIT_ASSERT(!b.Allowed(1199));
        CPPUNIT_ASSERT(b.Allowed(1200));
        b.OnExit(Exit(true, 1200), 1300);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{1500}, b.not_before_ms());
        for (int i = 0; i < 20; ++i) b.OnExit(Exit(true, 5000), 5001);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{5001 + 10000}, b.not_before_ms());  // capped at 10 s
        // A clean exit (recycling) or a crash after a long life resets the streak.
        b.OnExit(Exit(false, 0), 6000);
        CPPUNIT_ASSERT_EQUAL(0, b.streak());
        CPPUNIT_ASSERT(b.Allowed(6000));
        b.OnExit(Exit(true, 0), 1000);
        b.OnExit(Exit(true, 0), 60000);
        CPPUNIT_ASSERT_EQUAL(0, b.streak());
    }
    void testSdNotifyPathAndAbstract() {
        const std::string dir = TempDir();
        const std::string path = dir + "/notify.sock";
        auto fd = BindDatagram(path);
        CPPUNIT_ASSERT(fd.valid());
        CPPUNIT_ASSERT(SdNotifyTo(path, "READY=1\nSTATUS=ok"));
        CPPUNIT_ASSERT_EQUAL(std::string("READY=1\nSTATUS=ok"), Receive(fd.get()));

        const std::string abstract = "@sigil-test-notify-" + std::to_string(getpid());
        auto afd = BindDatagram(abstract);
        CPPUNIT_ASSERT(afd.valid());
        setenv("NOTIFY_SOCKET", abstract.c_str(), 1);
        CPPUNIT_ASSERT(SdNotify("WATCHDOG=1"));
        CPPUNIT_ASSERT_EQUAL(std::string("WATCHDOG=1"), Receive(afd.get()));
        unsetenv("NOTIFY_SOCKET");
        unlink(path.c_str());
        rmdir(dir.c_str());
    }
    void testSdNotifyWithoutSocket() {
        unsetenv("NOTIFY_SOCKET");
        CPPUNIT_ASSERT(!SdNotify("READY=1"));
        CPPUNIT_ASSERT(!SdNotifyTo("relative/path", "READY=1"));
        CPPUNIT_ASSERT(!SdNotifyTo("/nonexistent/notify.sock", "READY=1"));
        CPPUNIT_ASSERT(!SdNotifyTo(std::string(200, '/'), "READY=1"));
    }
    void testWatchdogInterval() {
        unsetenv("WATCHDOG_PID");
        unsetenv("WATCHDOG_USEC");
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, WatchdogIntervalMs());
        setenv("WATCHDOG_USEC", "30000000", 1);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{15000}, WatchdogIntervalMs());
        setenv("WATCHDOG_PID", "1", 1);  // someone else's watchdog
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, WatchdogIntervalMs());
        setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{15000}, WatchdogIntervalMs());
        setenv("WATCHDOG_USEC", "abc", 1);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, WatchdogIntervalMs());
        unsetenv("WATCHDOG_PID");
        unsetenv("WATCHDOG_USEC");
    }
    void testSignalPipeDeliversSignals() {
        SignalPipe pipe;
        CPPUNIT_ASSERT(pipe.Install({SIGUSR1, SIGUSR2}).ok());
        CPPUNIT_ASSERT(pipe.Drain().empty());
        raise(SIGUSR1);
        raise(SIGUSR2);
        const auto got = pipe.Drain();
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, got.size());
        CPPUNIT_ASSERT_EQUAL(SIGUSR1, got[0]);
        CPPUNIT_ASSERT_EQUAL(SIGUSR2, got[1]);
        CPPUNIT_ASSERT(pipe.Drain().empty());
    }
    void testListenSocketModeAndCleanup() {
        const std::string dir = TempDir();
        const std::string path = dir + "/sub/fcgi.sock";  // parent created on demand
        {
            auto ls = ListenSocket::Open({path, 0666, "", 16});
            CPPUNIT_ASSERT_MESSAGE(ls.ok() ? "" : ls.error().message, ls.ok());
            struct stat st {};
            CPPUNIT_ASSERT(stat(path.c_str(), &st) == 0);
            CPPUNIT_ASSERT(S_ISSOCK(st.st_mode));
            CPPUNIT_ASSERT_EQUAL(0666u, static_cast<unsigned>(st.st_mode & 07777));
            CPPUNIT_ASSERT(stat((dir + "/sub").c_str(), &st) == 0);
            CPPUNIT_ASSERT_EQUAL(0755u, static_cast<unsigned>(st.st_mode & 0777) | 0u);
        }
        CPPUNIT_ASSERT(access(path.c_str(), F_OK) != 0);  // removed by the destructor
        rmdir((dir + "/sub").c_str());
        rmdir(dir.c_str());
    }
    void testListenSocketRefusesLiveAndReplacesStale() {
        const std::string dir = TempDir();
        const std::string path = dir + "/fcgi.sock";
        {
            // A socket file nobody listens on, as a crashed supervisor leaves behind.
            common::UniqueFd stale(socket(AF_UNIX, SOCK_STREAM, 0));
            sockaddr_un a{};
            a.sun_family = AF_UNIX;
            std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
            CPPUNIT_ASSERT(bind(stale.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        }
        auto first = ListenSocket::Open({path, 0600, "", 16});
        CPPUNIT_ASSERT_MESSAGE(first.ok() ? "" : first.error().message, first.ok());
        auto second = ListenSocket::Open({path, 0600, "", 16});
        CPPUNIT_ASSERT(!second.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("socket_in_use"), second.error().code);
        // A newer supervisor's socket at the same path survives the old one's cleanup.
        unlink(path.c_str());
        auto newer = ListenSocket::Open({path, 0600, "", 16});
        CPPUNIT_ASSERT(newer.ok());
        first->Close();
        CPPUNIT_ASSERT(access(path.c_str(), F_OK) == 0);
        newer->Close();
        CPPUNIT_ASSERT(access(path.c_str(), F_OK) != 0);
        rmdir(dir.c_str());
    }
    void testListenSocketRefusesBadPaths() {
        auto too_long = ListenSocket::Open({"/tmp/" + std::string(200, 'a'), 0600, "", 16});
        CPPUNIT_ASSERT_EQUAL(std::string("socket_path"), too_long.error().code);
        const std::string dir = TempDir();
        const std::string file = dir + "/regular";
        close(open(file.c_str(), O_CREAT | O_WRONLY, 0600));
        auto not_sock = ListenSocket::Open({file, 0600, "", 16});
        CPPUNIT_ASSERT_EQUAL(std::string("socket_path"), not_sock.error().code);
        auto bad_group = ListenSocket::Open({dir + "/s.sock", 0600, "no-such-group-sigil", 16});
        CPPUNIT_ASSERT_EQUAL(std::string("socket_group"), bad_group.error().code);
        unlink(file.c_str());
        rmdir(dir.c_str());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SupervisorTests);
