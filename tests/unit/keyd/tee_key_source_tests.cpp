// keyd's TEE key source: GetKey answers parsed (good, malformed, wrong length), and the source
// against the real sigil-tee-sim process (the same key twice, the documented derivation, a killed
// agent, an agent that never answers, an agent that answers an error).
#include <cppunit/extensions/HelperMacros.h>

#include <fcntl.h>
#include <openssl/hmac.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/handles.h"
#include "common/hex.h"
#include "keyd/tee_key_source.h"

using namespace sigil::common;
using namespace sigil::keyd;

namespace {

// Fixed in the simulator's docs; the tests use the ones from the top of the file.
constexpr const char* APP_ID = "5fbdb2315678afecb367f032d93f642f64180aa3";
constexpr const char* DEV_SECRET = "sigil-tee-sim development key provider (public, not a secret)";

SecretBuffer Body(std::string_view text) { return SecretBuffer(text.begin(), text.end()); }

std::string Hex64(char c) { return std::string(64, c); }

std::string ReadText(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

bool Listening(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    return ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

// The simulator's GetKey, written out from its module doc with OpenSSL's HMAC.
std::string ExpectedSimKey(const std::string& app_id_hex, const std::string& path) {
    auto app_id = HexDecode(app_id_hex);
    CPPUNIT_ASSERT(app_id.ok());
    std::string msg = "sigil-tee-sim app key";
    msg.append(app_id->begin(), app_id->end());
    unsigned char app_key[32];
    unsigned int n = 0;
    ::HMAC(EVP_sha256(), DEV_SECRET, static_cast<int>(std::strlen(DEV_SECRET)),
           reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), app_key, &n);
    std::string msg2 = std::string("sigil-tee-sim GetKey") + '\0' + path;
    unsigned char key[32];
    ::HMAC(EVP_sha256(), app_key, 32, reinterpret_cast<const unsigned char*>(msg2.data()), msg2.size(), key, &n);
    return HexEncode(ByteView(key, 32), false);
}

// A node process serving on a unix socket in a fresh folder: sigil-tee-sim, or a one-line
// stand-in agent. Killed (SIGKILL) with the fixture.
class NodeServer {
public:
    // argv after node: the script and its arguments; "{socket}" is replaced by the socket path.
    explicit NodeServer(std::vector<std::string> args) {
        char dir[] = "/tmp/sigil-tee-key-test-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(dir) != nullptr);
        m_dir = dir;
        m_socket = m_dir + "/dstack.sock";
        m_log = m_dir + "/server.log";
        for (auto& a : args) {
            if (a == "{socket}") a = m_socket;
        }
        m_pid = ::fork();
        CPPUNIT_ASSERT(m_pid >= 0);
        if (m_pid == 0) {
            const int log = ::open(m_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (log < 0 || ::dup2(log, 2) < 0) ::_exit(126);
            std::vector<char*> argv{const_cast<char*>(SIGIL_NODE)};
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(SIGIL_NODE, argv.data());
            ::_exit(127);
        }
        for (int i = 0; i < 800 && !Listening(m_socket); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
        CPPUNIT_ASSERT_MESSAGE("the server did not come up on " + m_socket + ": " + ReadText(m_log), Listening(m_socket));
    }
    ~NodeServer() {
        Kill();
        std::system(("rm -rf '" + m_dir + "'").c_str());
    }
    void Kill() {
        if (m_pid <= 0) return;
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, nullptr, 0);
        m_pid = -1;
    }
    const std::string& socket() const { return m_socket; }
    std::string log() const { return ReadText(m_log); }

private:
    std::string m_dir, m_socket, m_log;
    pid_t m_pid = -1;
};

NodeServer StartSim(const std::string& app_id) {
    return NodeServer({std::string(SIGIL_SOURCE_DIR) + "/evidence/tee-sim/sigil-tee-sim.mjs", "--socket", "{socket}",
                       "--app-id", "0x" + app_id, "--compose", std::string(SIGIL_SOURCE_DIR) + "/evidence/dev/app-compose.json"});
}

// A stand-in agent answering every request with `status` and `body`.
NodeServer StartFake(int status, const std::string& body) {
    const std::string script = "const [s, code, body] = process.argv.slice(1);"
                               "require('http').createServer((q, r) => { q.resume(); r.writeHead(Number(code),"
                               " {'Content-Type': 'application/json'}); r.end(body); }).listen(s);";
    return NodeServer({"-e", script, "{socket}", std::to_string(status), body});
}

}  // namespace

class TeeKeySourceTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TeeKeySourceTests);
    CPPUNIT_TEST(testParsesDstackAnswer);
    CPPUNIT_TEST(testRefusesMalformedAnswers);
    CPPUNIT_TEST(testGetsTheSameKeyFromTheSimulator);
    CPPUNIT_TEST(testMissingSocketFailsNamingIt);
    CPPUNIT_TEST(testKilledAgentFails);
    CPPUNIT_TEST(testSilentAgentTimesOut);
    CPPUNIT_TEST(testErrorStatusAndWrongLengthFail);
    CPPUNIT_TEST_SUITE_END();

public:
    void testParsesDstackAnswer() {
        // dstack's shape: hex key, signature chain of two hex signatures.
        const std::string key = "0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789abcdef";
        auto body = Body("{\"key\":\"" + key + "\",\"signature_chain\":[\"" + std::string(130, 'a') + "\",\"" +
                         std::string(130, 'b') + "\"]}");
        auto root = ParseGetKeyAnswer(body);
        CPPUNIT_ASSERT_MESSAGE(root.ok() ? "" : root.error().message, root.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{32}, root->size());
        CPPUNIT_ASSERT_EQUAL(std::string("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
                             HexEncode(root->view(), false));
        // A 0x prefix, no signature chain, the simulator's extra member: all fine.
        auto sim = Body("{\"key\":\"0x" + Hex64('1') + "\",\"simulated\":true}");
        auto simRoot = ParseGetKeyAnswer(sim);
        CPPUNIT_ASSERT(simRoot.ok());
        CPPUNIT_ASSERT_EQUAL(Hex64('1'), HexEncode(simRoot->view(), false));
    }

    void testRefusesMalformedAnswers() {
        const std::pair<std::string, std::string> cases[] = {
            {"", "not a JSON object"},
            {"[1]", "not a JSON object"},
            {"{\"key\":", "not a JSON object"},
            {"{}", "no `key` string"},
            {"{\"key\":7}", "no `key` string"},
            {"{\"key\":\"" + Hex64('a').substr(0, 62) + "\"}", "62 characters"},
            {"{\"key\":\"" + Hex64('a') + "aa\"}", "66 characters"},
            // A PEM private key (GetTlsKey's shape) is not GetKey's answer.
            {"{\"key\":\"-----BEGIN PRIVATE KEY-----\\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\\n-----END PRIVATE KEY-----\"}",
             "characters"},
            {"{\"key\":\"" + Hex64('g') + "\"}", "not hex"},
            {"{\"key\":\"" + Hex64('0') + "\"}", "all zero"},
            {"{\"key\":\"" + Hex64('1') + "\",\"signature_chain\":\"ab\"}", "not an array"},
            {"{\"key\":\"" + Hex64('1') + "\",\"signature_chain\":[\"xyz\"]}", "not hex"},
        };
        for (const auto& [text, why] : cases) {
            auto body = Body(text);
            auto root = ParseGetKeyAnswer(body);
            CPPUNIT_ASSERT_MESSAGE(text, !root.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("tee_key_bad_answer"), root.error().code);
            CPPUNIT_ASSERT_MESSAGE(text + " -> " + root.error().message, root.error().message.find(why) != std::string::npos);
            // The message never quotes the answer's key.
            CPPUNIT_ASSERT(root.error().message.find(Hex64('a')) == std::string::npos);
        }
    }

    void testGetsTheSameKeyFromTheSimulator() {
        NodeServer sim = StartSim(APP_ID);
        TeeKeySource source(sim.socket());
        auto first = source.LoadRootKey();
        CPPUNIT_ASSERT_MESSAGE(first.ok() ? "" : first.error().message, first.ok());
        auto second = TeeKeySource(sim.socket()).LoadRootKey();
        CPPUNIT_ASSERT(second.ok());
        CPPUNIT_ASSERT_EQUAL(HexEncode(first->view(), false), HexEncode(second->view(), false));
        // The documented derivation for app id and the fixed path sigil/root/v1.
        CPPUNIT_ASSERT_EQUAL(ExpectedSimKey(APP_ID, "sigil/root/v1"), HexEncode(first->view(), false));
        CPPUNIT_ASSERT(sim.log().find("GetKey path \"sigil/root/v1\"") != std::string::npos);
        // Another app id: another key.
        NodeServer other = StartSim("00000000000000000000000000000000000000aa");
        auto third = TeeKeySource(other.socket()).LoadRootKey();
        CPPUNIT_ASSERT(third.ok());
        CPPUNIT_ASSERT(HexEncode(third->view(), false) != HexEncode(first->view(), false));
    }

    void testMissingSocketFailsNamingIt() {
        const std::string path = "/tmp/sigil-no-such-dir-for-keyd/dstack.sock";
        auto key = TeeKeySource(path).LoadRootKey();
        CPPUNIT_ASSERT(!key.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("tee_key_unavailable"), key.error().code);
        CPPUNIT_ASSERT_MESSAGE(key.error().message, key.error().message.find(path) != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(std::string("tee_key_unavailable"), TeeKeySource("").LoadRootKey().error().code);
    }

    void testKilledAgentFails() {
        NodeServer sim = StartSim(APP_ID);
        const std::string path = sim.socket();
        sim.Kill();  // SIGKILL: the socket file stays, nobody listens (connection refused)
        const auto start = std::chrono::steady_clock::now();
        auto key = TeeKeySource(path).LoadRootKey();
        CPPUNIT_ASSERT(!key.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("tee_key_unavailable"), key.error().code);
        CPPUNIT_ASSERT(key.error().message.find(path) != std::string::npos);
        CPPUNIT_ASSERT(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    }

    void testSilentAgentTimesOut() {
        // A socket that accepts (the backlog) and never answers.
        char dir[] = "/tmp/sigil-tee-silent-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(dir) != nullptr);
        const std::string path = std::string(dir) + "/dstack.sock";
        UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
        CPPUNIT_ASSERT_EQUAL(0, ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr));
        CPPUNIT_ASSERT_EQUAL(0, ::listen(listener.get(), 4));
        const auto start = std::chrono::steady_clock::now();
        auto key = TeeKeySource(path, 500).LoadRootKey();
        const auto took = std::chrono::steady_clock::now() - start;
        ::unlink(path.c_str());
        ::rmdir(dir);
        CPPUNIT_ASSERT(!key.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("tee_key_timeout"), key.error().code);
        CPPUNIT_ASSERT(key.error().message.find(path) != std::string::npos);
        CPPUNIT_ASSERT(took >= std::chrono::milliseconds(400) && took < std::chrono::seconds(10));
    }

    void testErrorStatusAndWrongLengthFail() {
        {
            NodeServer fake = StartFake(503, "{\"error\":\"no key provider\"}");
            auto key = TeeKeySource(fake.socket()).LoadRootKey();
            CPPUNIT_ASSERT(!key.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("tee_key_unavailable"), key.error().code);
            CPPUNIT_ASSERT_MESSAGE(key.error().message, key.error().message.find("HTTP 503") != std::string::npos);
            CPPUNIT_ASSERT(key.error().message.find(fake.socket()) != std::string::npos);
        }
        {
            NodeServer fake = StartFake(200, "{\"key\":\"abcd\",\"signature_chain\":[]}");
            auto key = TeeKeySource(fake.socket()).LoadRootKey();
            CPPUNIT_ASSERT(!key.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("tee_key_bad_answer"), key.error().code);
            CPPUNIT_ASSERT(key.error().message.find(fake.socket()) != std::string::npos);
        }
        {
            NodeServer fake = StartFake(200, "not json");
            CPPUNIT_ASSERT_EQUAL(std::string("tee_key_bad_answer"), TeeKeySource(fake.socket()).LoadRootKey().error().code);
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(TeeKeySourceTests);
