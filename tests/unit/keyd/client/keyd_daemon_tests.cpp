// Drives the real sigil-keyd binary over its unix socket, with the workers' KeydClient and with
// raw bytes where a misbehaving peer is the point.
#include <cppunit/extensions/HelperMacros.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/handles.h"
#include "common/abi.h"
#include "common/keccak.h"
#include "keyd/protocol.h"
#include "common/secp256k1.h"
#include "tests/test_support.h"
#include "keyd/client/keyd_client.h"

using namespace sigil::common;
using namespace sigil::keyd;
using sigil::workers::KeydClient;
using sigil::workers::KeydClientOptions;

namespace {

constexpr const char* CONTRACT = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
constexpr std::uint64_t CHAIN_ID = 31337;

bool Exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// One sigil-keyd process; stopped (SIGTERM, then SIGKILL) when destroyed.
class KeydProcess {
public:
    KeydProcess(const std::string& dir, std::vector<std::string> extra = {}, bool wait_ready = true)
        : m_socket(dir + "/run/keyd.sock"), m_log(dir + "/keyd.log") {
        std::vector<std::string> args{sigil::test::BinaryPath("keyd/sigil-keyd"), "--socket", m_socket,
                                      "--root-key-file", dir + "/root.key", "--chain-id", std::to_string(CHAIN_ID),
                                      "--contract", CONTRACT, "--payers", "2"};
        bool uid_given = false;
        for (const auto& e : extra) uid_given = uid_given || e == "--allowed-uid";
        if (!uid_given) {
            args.push_back("--allowed-uid");
            args.push_back(std::to_string(::getuid()));
        }
        args.insert(args.end(), extra.begin(), extra.end());
        m_pid = ::fork();
        CPPUNIT_ASSERT(m_pid >= 0);
        if (m_pid == 0) {
            const int log = ::open(m_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (log >= 0) ::dup2(log, STDERR_FILENO);
            std::vector<char*> argv;
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        if (wait_ready) CPPUNIT_ASSERT_MESSAGE("keyd did not start; see " + m_log, WaitReady());
    }
    ~KeydProcess() { Stop(SIGTERM); }

    // Ready = accepting connections (a stale socket file from a killed keyd may exist before).
    bool WaitReady() {
        for (int i = 0; i < 500; ++i) {
            if (Accepts()) return true;
            if (Exited()) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    // The exit status once the process ended within `ms`, or -1.
    int WaitExit(int ms) {
        for (int i = 0; i < ms / 10; ++i) {
            if (Exited()) return m_status;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return -1;
    }
    int Stop(int sig) {
        if (m_pid > 0 && !Exited()) {
            ::kill(m_pid, sig);
            if (WaitExit(3000) < 0) {
                ::kill(m_pid, SIGKILL);
                WaitExit(3000);
            }
        }
        return m_status;
    }
    const std::string& Socket() const { return m_socket; }
    pid_t Pid() const { return m_pid; }

private:
    bool Accepts() const {
        UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, m_socket.c_str(), m_socket.size());
        return ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    }
    bool Exited() {
        if (m_pid <= 0) return true;
        int status = 0;
        if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
            m_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            m_pid = -1;
            return true;
        }
        return false;
    }
    std::string m_socket, m_log;
    pid_t m_pid = -1;
    int m_status = -1;
};

UniqueFd RawConnect(const std::string& path) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size());
    CPPUNIT_ASSERT_EQUAL(0, ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr));
    return fd;
}

void SendAll(int fd, ByteView bytes) {
    CPPUNIT_ASSERT_EQUAL(static_cast<ssize_t>(bytes.size()), ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL));
}

// Reads until EOF or one complete frame (2 s at most). Returns the payload, or nullopt on EOF.
// Pass the same decoder to read several pipelined replies (one recv may carry both).
std::optional<Bytes> ReadFrame(int fd, bool* timed_out = nullptr, FrameDecoder* decoder = nullptr) {
    FrameDecoder local;
    FrameDecoder& d = decoder != nullptr ? *decoder : local;
    std::uint8_t chunk[4096];
    for (;;) {
        if (auto p = d.Front()) {
            Bytes out(p->begin(), p->end());
            d.Pop();
            return out;
        }
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 2000) <= 0) {
            if (timed_out) *timed_out = true;
            return std::nullopt;
        }
        const ssize_t n = ::recv(fd, chunk, std::min(sizeof chunk, d.Space()), 0);
        if (n <= 0) return std::nullopt;
        CPPUNIT_ASSERT(d.Feed(ByteView(chunk, static_cast<std::size_t>(n))).ok());
    }
}

KeydClient Client(const std::string& socket) {
    KeydClientOptions o;
    o.socket_path = socket;
    o.request_timeout = std::chrono::milliseconds(2000);
    return KeydClient(o);
}

Hash32 Filled(std::uint8_t b) {
    Hash32 h;
    h.fill(b);
    return h;
}

PayerTxRequest GoodTx() {
    PayerTxRequest tx;
    tx.payer = 1;
    tx.chain_id = CHAIN_ID;
    tx.nonce = 0;
    tx.max_priority_fee_per_gas = 1;
    tx.max_fee_per_gas = 2;
    tx.gas_limit = 100000;
    tx.to = *ParseAddress(CONTRACT);
    // A relayed removeGroup naming keccak256 of the key sent with it (keyd/relay_policy.h).
    const std::string_view key = "keyd-daemon-test-key";
    const AbiValue args[] = {AbiValue::Uint(std::uint64_t{1}), AbiValue::Uint(Uint256::FromWord(Keccak256Hash(key))),
                             AbiValue::Uint(std::uint64_t{2})};
    tx.data = *EncodeCall("removeGroup(uint256,uint256,uint256)", args);
    tx.api_key = SecretBytes(AsBytes(key));
    return tx;
}

}  // namespace

class KeydDaemonTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(KeydDaemonTests);
    CPPUNIT_TEST(testPingAndDistinctPaths);
    CPPUNIT_TEST(testStatsCountRequestsAndFailures);
    CPPUNIT_TEST(testPublicDataAndAccountBinding);
    CPPUNIT_TEST(testPayerSigningPolicy);
    CPPUNIT_TEST(testOversizedFrameClosesOnlyThatConnection);
    CPPUNIT_TEST(testTruncatedAndEmptyFramesCloseTheConnection);
    CPPUNIT_TEST(testUnknownTypeGetsFailureAndConnectionStays);
    CPPUNIT_TEST(testWrongPeerUidIsRefused);
    CPPUNIT_TEST(testRootKeyFileCreated0600AndRefused0644);
    CPPUNIT_TEST(testSocketDirectoryIsPrivateAndRemovedOnSigterm);
    CPPUNIT_TEST(testClientReconnectsAfterRestart);
    CPPUNIT_TEST(testClientNeverHangs);
    CPPUNIT_TEST(testDaemonCannotDumpCore);
    CPPUNIT_TEST_SUITE_END();

    std::string m_dir;

public:
    void setUp() override {
        char tmpl[] = "/tmp/sigil-keyd-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(tmpl) != nullptr);
        m_dir = tmpl;
    }
    void tearDown() override { std::system(("rm -rf '" + m_dir + "'").c_str()); }

    void testPingAndDistinctPaths() {
        KeydProcess keyd(m_dir);
        KeydClient client = Client(keyd.Socket());
        CPPUNIT_ASSERT(client.Ping().ok());
        std::set<Hash32> paths;
        for (int i = 0; i < 20; ++i) {
            auto p = client.MintPath();
            CPPUNIT_ASSERT(p.ok());
            paths.insert(*p);
        }
        CPPUNIT_ASSERT_EQUAL(std::size_t{20}, paths.size());
    }

    void testStatsCountRequestsAndFailures() {
        KeydProcess keyd(m_dir);
        KeydClient client = Client(keyd.Socket());
        CPPUNIT_ASSERT(client.Ping().ok());
        CPPUNIT_ASSERT(client.MintPath().ok());
        CPPUNIT_ASSERT(client.MintPath().ok());
        CPPUNIT_ASSERT(!client.GetPayers(3).ok());  // out of range: a failure
        CPPUNIT_ASSERT(!client.GetPkpKeys(PkpRef{Hash32{}, Filled(1)}).ok());
        // An unknown type on a raw connection: counted as "unknown", a failure.
        {
            UniqueFd fd = RawConnect(keyd.Socket());
            SendAll(fd.get(), Bytes{0, 0, 0, 1, 0x55});
            bool timed_out = false;
            CPPUNIT_ASSERT(ReadFrame(fd.get(), &timed_out).has_value());
        }
        auto s = client.Stats();
        CPPUNIT_ASSERT_MESSAGE(s.ok() ? "" : s.error().message, s.ok());
        auto kind = [](const char* name) {
            for (std::size_t k = 0; k < STATS_KINDS; ++k) {
                if (std::string(StatsKindName(k)) == name) return k;
            }
            CPPUNIT_FAIL(name);
            return std::size_t{0};
        };
        CPPUNIT_ASSERT(s->key_source == KeySourceKind::File);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s->requests[kind("ping")]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, s->requests[kind("mint_path")]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, s->failures[kind("mint_path")]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s->requests[kind("get_payers")]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s->failures[kind("get_payers")]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s->failures[kind("get_pkp_keys")]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s->requests[kind("unknown")]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, s->failures[kind("unknown")]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, s->requests[kind("stats")]);  // counted once answered
        std::uint64_t in_buckets = 0;
        for (auto n : s->latency_buckets) in_buckets += n;
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{6}, s->latency_count);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{6}, in_buckets);
        CPPUNIT_ASSERT(s->connections_open >= 1);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, s->connections_refused);
        CPPUNIT_ASSERT(s->uptime_ms < 600000);
        auto again = client.Stats();
        CPPUNIT_ASSERT(again.ok());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, again->requests[kind("stats")]);
        CPPUNIT_ASSERT(again->uptime_ms >= s->uptime_ms);
    }

    void testPublicDataAndAccountBinding() {
        KeydProcess keyd(m_dir);
        KeydClient client = Client(keyd.Socket());
        const Hash32 path = *client.MintPath();
        const PkpRef alice{Filled(0xa1), path}, bob{Filled(0xb0), path};
        auto pub = client.GetPkpPublic(alice);
        auto keys = client.GetPkpKeys(alice);
        CPPUNIT_ASSERT(pub.ok() && keys.ok());
        CPPUNIT_ASSERT(PrivateKey::FromBytes(keys->signing_key.view())->Address() == pub->address);
        auto bob_keys = client.GetPkpKeys(bob);
        CPPUNIT_ASSERT(!ConstantTimeEqual(keys->signing_key.view(), bob_keys->signing_key.view()));
        CPPUNIT_ASSERT(!ConstantTimeEqual(keys->encryption_key.view(), bob_keys->encryption_key.view()));
        CPPUNIT_ASSERT(client.GetPkpPublic(bob)->address != pub->address);
        auto zero = client.GetPkpKeys(PkpRef{Hash32{}, path});
        CPPUNIT_ASSERT(!zero.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_invalid_input"), zero.error().code);
        // Action identity.
        const std::string cid = "QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL";
        auto action_key = client.GetActionKey(cid);
        CPPUNIT_ASSERT(action_key.ok());
        CPPUNIT_ASSERT(PrivateKey::FromBytes(action_key->view())->Address() == client.GetActionPublic(cid)->address);
        auto payers = client.GetPayers(2);
        CPPUNIT_ASSERT(payers.ok() && payers->payers.size() == 2);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_out_of_range"), client.GetPayers(3).error().code);
    }

    void testPayerSigningPolicy() {
        KeydProcess keyd(m_dir);
        KeydClient client = Client(keyd.Socket());
        auto raw = client.SignPayerTx(GoodTx());
        CPPUNIT_ASSERT(raw.ok());
        CPPUNIT_ASSERT_EQUAL(std::uint8_t{0x02}, (*raw)[0]);
        PayerTxRequest wrong_chain = GoodTx();
        wrong_chain.chain_id = 1;
        auto e = client.SignPayerTx(wrong_chain);
        CPPUNIT_ASSERT(!e.ok());
        CPPUNIT_ASSERT(e.error().kind == ErrorKind::Forbidden);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_refused"), e.error().code);
        PayerTxRequest wrong_to = GoodTx();
        wrong_to.to->fill(0x11);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_refused"), client.SignPayerTx(wrong_to).error().code);
        PayerTxRequest create = GoodTx();
        create.to.reset();
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_refused"), client.SignPayerTx(create).error().code);
        PayerTxRequest other_key = GoodTx();
        other_key.api_key = SecretBytes(AsBytes("someone else's key"));
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_refused"), client.SignPayerTx(other_key).error().code);
        CPPUNIT_ASSERT(client.Ping().ok());  // refusals leave the connection usable
    }

    void testOversizedFrameClosesOnlyThatConnection() {
        KeydProcess keyd(m_dir);
        KeydClient bystander = Client(keyd.Socket());
        CPPUNIT_ASSERT(bystander.Ping().ok());
        UniqueFd fd = RawConnect(keyd.Socket());
        const std::uint32_t too_big = IPC_MAX_PAYLOAD + 1;
        const Bytes header{static_cast<std::uint8_t>(too_big >> 24), static_cast<std::uint8_t>(too_big >> 16),
                           static_cast<std::uint8_t>(too_big >> 8), static_cast<std::uint8_t>(too_big)};
        SendAll(fd.get(), header);  // the header alone must be enough to be refused
        bool timed_out = false;
        CPPUNIT_ASSERT(!ReadFrame(fd.get(), &timed_out).has_value());
        CPPUNIT_ASSERT(!timed_out);  // closed by keyd, not left hanging
        CPPUNIT_ASSERT(bystander.Ping().ok());
        // A frame exactly at the cap is read in full and answered (here: malformed).
        UniqueFd exact = RawConnect(keyd.Socket());
        Bytes frame(IPC_HEADER_SIZE + IPC_MAX_PAYLOAD, 0);
        frame[1] = 0x01;  // length 0x00010000
        frame[4] = static_cast<std::uint8_t>(KeydMessage::Ping);
        SendAll(exact.get(), frame);
        auto reply = ReadFrame(exact.get());
        CPPUNIT_ASSERT(reply.has_value());
        CPPUNIT_ASSERT(DecodeFailureReply(*reply)->code == KeydFailure::MalformedRequest);
    }

    void testTruncatedAndEmptyFramesCloseTheConnection() {
        KeydProcess keyd(m_dir);
        {
            UniqueFd fd = RawConnect(keyd.Socket());
            const SecretBuffer ping = EncodePingRequest();
            SendAll(fd.get(), ByteView(ping).first(ping.size() - 1));
            ::shutdown(fd.get(), SHUT_WR);  // EOF in the middle of the frame
            bool timed_out = false;
            CPPUNIT_ASSERT(!ReadFrame(fd.get(), &timed_out).has_value());
            CPPUNIT_ASSERT(!timed_out);
        }
        {
            UniqueFd fd = RawConnect(keyd.Socket());
            SendAll(fd.get(), Bytes{0, 0, 0, 0});
            bool timed_out = false;
            CPPUNIT_ASSERT(!ReadFrame(fd.get(), &timed_out).has_value());
            CPPUNIT_ASSERT(!timed_out);
        }
        KeydClient client = Client(keyd.Socket());
        CPPUNIT_ASSERT(client.Ping().ok());
    }

    void testUnknownTypeGetsFailureAndConnectionStays() {
        KeydProcess keyd(m_dir);
        UniqueFd fd = RawConnect(keyd.Socket());
        SendAll(fd.get(), Bytes{0, 0, 0, 1, 0x42});
        auto reply = ReadFrame(fd.get());
        CPPUNIT_ASSERT(reply.has_value());
        auto failure = DecodeFailureReply(*reply);
        CPPUNIT_ASSERT(failure.ok() && failure->code == KeydFailure::UnknownRequest);
        // Pipelined: two pings in one write get two pongs, in order.
        SecretBuffer two = EncodePingRequest();
        const SecretBuffer ping = EncodePingRequest();
        two.insert(two.end(), ping.begin(), ping.end());
        SendAll(fd.get(), ByteView(two));
        FrameDecoder replies;
        CPPUNIT_ASSERT(DecodePongReply(*ReadFrame(fd.get(), nullptr, &replies)).ok());
        CPPUNIT_ASSERT(DecodePongReply(*ReadFrame(fd.get(), nullptr, &replies)).ok());
    }

    void testWrongPeerUidIsRefused() {
        KeydProcess keyd(m_dir, {"--allowed-uid", std::to_string(::getuid() + 4242)});
        KeydClient client = Client(keyd.Socket());
        const auto start = std::chrono::steady_clock::now();
        auto s = client.Ping();
        CPPUNIT_ASSERT(!s.ok());
        CPPUNIT_ASSERT(s.error().kind == ErrorKind::Unavailable);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_unavailable"), s.error().code);
        CPPUNIT_ASSERT(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500));  // closed, not timed out
    }

    void testRootKeyFileCreated0600AndRefused0644() {
        const std::string key = m_dir + "/root.key";
        Address20 first{};
        {
            KeydProcess keyd(m_dir);
            struct stat st {};
            CPPUNIT_ASSERT_EQUAL(0, ::stat(key.c_str(), &st));
            CPPUNIT_ASSERT_EQUAL(static_cast<mode_t>(0600), st.st_mode & 07777);
            CPPUNIT_ASSERT_EQUAL(static_cast<off_t>(32), st.st_size);
            first = Client(keyd.Socket()).GetPayers(0)->admin;
        }
        {
            KeydProcess keyd(m_dir);  // the same key file: the same wallets
            CPPUNIT_ASSERT(Client(keyd.Socket()).GetPayers(0)->admin == first);
        }
        CPPUNIT_ASSERT_EQUAL(0, ::chmod(key.c_str(), 0644));
        KeydProcess refused(m_dir, {}, false);
        CPPUNIT_ASSERT_EQUAL(1, refused.WaitExit(5000));
        CPPUNIT_ASSERT(!Exists(refused.Socket()));
    }

    void testSocketDirectoryIsPrivateAndRemovedOnSigterm() {
        KeydProcess keyd(m_dir);
        struct stat st {};
        CPPUNIT_ASSERT_EQUAL(0, ::stat((m_dir + "/run").c_str(), &st));
        CPPUNIT_ASSERT_EQUAL(static_cast<mode_t>(0700), st.st_mode & 07777);
        CPPUNIT_ASSERT_EQUAL(0, ::stat(keyd.Socket().c_str(), &st));
        CPPUNIT_ASSERT_EQUAL(static_cast<mode_t>(0600), st.st_mode & 0777);
        // A second keyd on the same socket refuses to steal it.
        KeydProcess second(m_dir, {}, false);
        CPPUNIT_ASSERT_EQUAL(1, second.WaitExit(5000));
        CPPUNIT_ASSERT(Client(keyd.Socket()).Ping().ok());
        CPPUNIT_ASSERT_EQUAL(0, keyd.Stop(SIGTERM));
        CPPUNIT_ASSERT(!Exists(keyd.Socket()));
    }

    void testClientReconnectsAfterRestart() {
        auto keyd = std::make_unique<KeydProcess>(m_dir);
        KeydClient client = Client(keyd->Socket());
        const PkpRef ref{Filled(0x01), Filled(0x02)};
        const Address20 before = client.GetPkpPublic(ref)->address;
        CPPUNIT_ASSERT(client.Connected());
        keyd->Stop(SIGKILL);  // no cleanup: the stale socket stays behind
        keyd.reset();
        auto down = client.Ping();
        CPPUNIT_ASSERT(!down.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_unavailable"), down.error().code);
        keyd = std::make_unique<KeydProcess>(m_dir);
        CPPUNIT_ASSERT(client.Ping().ok());
        // The same again, with the client still holding the dead connection when keyd returns.
        keyd->Stop(SIGKILL);
        keyd = std::make_unique<KeydProcess>(m_dir);
        auto after = client.GetPkpPublic(ref);
        CPPUNIT_ASSERT(after.ok());
        CPPUNIT_ASSERT(after->address == before);
    }

    void testClientNeverHangs() {
        // A listener that accepts nothing and answers nothing: the request must time out.
        const std::string path = m_dir + "/mute.sock";
        UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, path.c_str(), path.size());
        CPPUNIT_ASSERT_EQUAL(0, ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr));
        CPPUNIT_ASSERT_EQUAL(0, ::listen(listener.get(), 4));
        KeydClientOptions o;
        o.socket_path = path;
        o.request_timeout = std::chrono::milliseconds(300);
        KeydClient client(o);
        const auto start = std::chrono::steady_clock::now();
        auto s = client.MintPath();
        const auto took = std::chrono::steady_clock::now() - start;
        CPPUNIT_ASSERT(!s.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_unavailable"), s.error().code);
        CPPUNIT_ASSERT(took >= std::chrono::milliseconds(250) && took < std::chrono::milliseconds(1500));
        CPPUNIT_ASSERT(!client.Connected());
        // No socket at all: refused at once.
        KeydClient nowhere = Client(m_dir + "/absent.sock");
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_unavailable"), nowhere.Ping().error().code);
    }

    void testDaemonCannotDumpCore() {
        KeydProcess keyd(m_dir);
        std::ifstream limits("/proc/" + std::to_string(keyd.Pid()) + "/limits");
        std::string line;
        bool checked = false;
        while (std::getline(limits, line)) {
            if (line.rfind("Max core file size", 0) != 0) continue;
            std::istringstream fields(line.substr(std::strlen("Max core file size")));
            std::string soft, hard;
            fields >> soft >> hard;
            CPPUNIT_ASSERT_EQUAL(std::string("0"), soft);
            CPPUNIT_ASSERT_EQUAL(std::string("0"), hard);
            checked = true;
        }
        CPPUNIT_ASSERT(checked);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(KeydDaemonTests);
