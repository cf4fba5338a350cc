// The worker's side of sigil-lowerer against the real daemon (Node.js running bin/sigil-lowerer.cjs
// on a socket of this test): it answers exactly what the sandbox child's transpiler produces, and
// every way it can fail (a syntax error, no daemon, a daemon that never answers, source it must not
// be sent) gives nullopt quickly, so the child lowers instead.
#include <cppunit/extensions/HelperMacros.h>

#include <dirent.h>
#include <fcntl.h>
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
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/handles.h"
#include "workers/actions/lowerer_client.h"
#include "workers/sandbox/transpiler.h"

using namespace sigil::workers;

namespace {

using Clock = std::chrono::steady_clock;

std::string ReadText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// sigil-lowerer on a socket in a fresh folder, stopped (SIGTERM) with the fixture; `deadline_ms`
// (0 = the daemon's default) is its per-request deadline whatever the source's size (with no
// warm-up then, so no warm-up round makes a small request wait past it).
class Daemon {
public:
    explicit Daemon(int deadline_ms = 0) {
        char dir[] = "/tmp/sigil-lowerer-test-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(dir) != nullptr);
        m_dir = dir;
        m_socket = m_dir + "/lowerer.sock";
        m_log = m_dir + "/lowerer.log";
        m_pid = ::fork();
        CPPUNIT_ASSERT(m_pid >= 0);
        if (m_pid == 0) {
            const int log = ::open(m_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (log < 0 || ::dup2(log, 2) < 0) ::_exit(126);
            const std::string script = std::string(SIGIL_BINARY_DIR) + "/bin/sigil-lowerer.cjs";
            const std::string deadline = std::to_string(deadline_ms);
            if (deadline_ms > 0) {
                ::execl(SIGIL_NODE, SIGIL_NODE, script.c_str(), "--socket", m_socket.c_str(), "--warmup", "0", "--deadline-ms",
                        deadline.c_str(), "--deadline-ms-per-kib", "0", static_cast<char*>(nullptr));
            } else {
                ::execl(SIGIL_NODE, SIGIL_NODE, script.c_str(), "--socket", m_socket.c_str(), "--warmup", "2",
                        static_cast<char*>(nullptr));
            }
            ::_exit(127);
        }
        // Listening, and both lowering threads started and warmed up: the tests time the lowering,
        // not a thread's start (requests that arrive earlier wait, within their deadline).
        const std::string ready = deadline_ms > 0 ? "ready in" : "warmed up";
        for (int i = 0; i < 1200 && !(Listening() && Count(ReadText(m_log), ready) >= 2); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
        CPPUNIT_ASSERT_MESSAGE("sigil-lowerer did not come up on " + m_socket + ": " + ReadText(m_log), Listening());
    }
    static std::size_t Count(const std::string& text, const std::string& word) {
        std::size_t n = 0;
        for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
        return n;
    }
    ~Daemon() {
        Stop();
        ::rmdir(m_dir.c_str());
    }
    void Stop() {
        if (m_pid <= 0) return;
        ::kill(m_pid, SIGTERM);
        ::waitpid(m_pid, nullptr, 0);
        m_pid = -1;
        ::unlink(m_socket.c_str());
        std::cerr << ReadText(m_log);
        ::unlink(m_log.c_str());
    }
    const std::string& socket() const { return m_socket; }
    const std::string& dir() const { return m_dir; }

private:
    bool Listening() const {
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, m_socket.c_str(), sizeof addr.sun_path - 1);
        sigil::common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        return ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    }
    std::string m_dir, m_socket, m_log;
    pid_t m_pid = -1;
};

// Modern code of every kind the front pass and buble rewrite.
const std::vector<std::string>& Corpus() {
    static const std::vector<std::string> corpus = [] {
        std::vector<std::string> c = {
            "const main = async ({ a = 1, ...rest } = {}) => ({ a, n: rest?.b?.c ?? 'none', s: `x${a}` });",
            "class A { static n = 0; #v = 1; get v() { return this.#v; } static { A.n++; } has(o) { return #v in o; } }\n"
            "function main() { return new A().v + A.n; }",
            "const big = 10n ** 18n; function main(p) { return (BigInt(p.x ?? 1) * big + 7n).toString(16); }",
            "async function main(p) { const out = []; for await (const v of [1, Promise.resolve(2)]) out.push(v); return out; }",
            "const tag = (s, ...v) => s.raw.join('|') + v.join(','); const main = () => tag`a${1}\\n${2}`;",
            "let x = null; x ??= 3; let y = 0; y ||= 4; let z = 1; z &&= 5; const main = () => [x, y, z, 2 ** 10, 1_000];",
            "function main() { try { JSON.parse('{'); } catch { return /a.b/s.test('a\\nb'); } }",
            "const s = '\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80'; const main = () => [...s].length + s.length;",
            // \p{...} and the v flag go to regexp.js at run time, as string literals both engines write alike.
            "const main = () => [/^\\p{L}+$/u.test('\xc3\xa9'), /[\\p{L}--[a-z]]/v.test('A'), /\\u{1F600}/u.source,"
            " /\xc3\xa9\"\\\\\\p{N}/v.flags, /\xf0\x9f\x98\x80.\\P{L}/su.test('x')];",
            "const { a, b: [c, d = 2] } = { a: 1, b: [3] }; const f = (...xs) => Math.max(...xs, a, c, d);\n"
            "for (const [k, v] of Object.entries({ p: 1 })) { setTimeout(() => f(k, v)); }\n"
            "Sigil.Actions.setResponse({ response: String(f(1)) });",
        };
        // About 10 KB of one shape, as a published action's size.
        std::string large;
        for (int i = 0; large.size() < 10 * 1024; ++i) {
            const std::string n = std::to_string(i);
            large += "class Ledger" + n + " { #t = 0; add({ amount = 0 } = {}, ...tags) { this.#t += amount; return tags?.length ?? 0; } }\n"
                     "const step" + n + " = async (input) => { const l = new Ledger" + n + "(); for (const [k, v] of Object.entries(input ?? {})) "
                     "l.add({ amount: Number(v) || " + n + " }, k); return `${k0}:${await Promise.resolve(" + n + ")}`; };\n";
        }
        c.push_back("const k0 = 'x';\n" + large);
        // The published fixtures, when this checkout has them (tests/api/compat_actions runs them).
        const std::string fixtures = std::string(SIGIL_SOURCE_DIR) + "/../shared/compat-actions";
        if (DIR* d = ::opendir(fixtures.c_str())) {
            while (const dirent* e = ::readdir(d)) {
                const std::string name = e->d_name;
                if (name.size() > 3 && name.compare(name.size() - 3, 3, ".js") == 0) c.push_back(ReadText(fixtures + "/" + name));
            }
            ::closedir(d);
        }
        return c;
    }();
    return corpus;
}

}  // namespace

class LowererClientTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(LowererClientTests);
    CPPUNIT_TEST(testAnswersWhatTheSandboxTranspilerAnswers);
    CPPUNIT_TEST(testSyntaxErrorLeavesItToTheChild);
    CPPUNIT_TEST(testNoDaemonFailsAtOnce);
    CPPUNIT_TEST(testSilentDaemonTimesOut);
    CPPUNIT_TEST(testSourceItMustNotSeeIsNotSent);
    CPPUNIT_TEST(testServesSeveralRequestsAtOnce);
    CPPUNIT_TEST(testDaemonThatGivesUpIsAskedAgain);
    CPPUNIT_TEST_SUITE_END();

public:
    void testAnswersWhatTheSandboxTranspilerAnswers() {
        Daemon daemon;
        auto transpiler = Transpiler::Create();
        CPPUNIT_ASSERT(transpiler.ok());
        std::size_t compared = 0;
        for (const std::string& source : Corpus()) {
            auto expected = (*transpiler)->Lower(source);
            CPPUNIT_ASSERT_MESSAGE(source.substr(0, 80), expected.ok());
            // Each request is lowered in a fresh V8 context (about 2.5x the cost of a warm one): on
            // a loaded machine the 10 KB source may pass the worker's wait; this test is about the
            // text, so such a source is asked again.
            auto got = LowerWithDaemon(daemon.socket(), source, 20000);
            for (int attempt = 0; attempt < 4 && !got; ++attempt) got = LowerWithDaemon(daemon.socket(), source, 20000);
            CPPUNIT_ASSERT_MESSAGE(source.substr(0, 80), got.has_value());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(source.substr(0, 80), *expected, *got);
            ++compared;
        }
        CPPUNIT_ASSERT(compared >= 10);
    }
    void testSyntaxErrorLeavesItToTheChild() {
        Daemon daemon;
        CPPUNIT_ASSERT(!LowerWithDaemon(daemon.socket(), "const main = () => { return 1 +; };", 20000).has_value());
        CPPUNIT_ASSERT(!LowerWithDaemon(daemon.socket(), "function* g() { yield 1; }", 20000).has_value());
        // The connection and the daemon are fine afterwards.
        CPPUNIT_ASSERT(LowerWithDaemon(daemon.socket(), "const main = () => 1;", 20000).has_value());
    }
    void testNoDaemonFailsAtOnce() {
        std::string socket;
        {
            Daemon daemon;
            socket = daemon.socket();
            CPPUNIT_ASSERT(LowerWithDaemon(socket, "const main = () => 1;", 20000).has_value());
        }
        const auto start = Clock::now();
        CPPUNIT_ASSERT(!LowerWithDaemon(socket, "const main = () => 1;", 20000).has_value());
        CPPUNIT_ASSERT(!LowerWithDaemon("", "const main = () => 1;", 20000).has_value());
        CPPUNIT_ASSERT(Clock::now() - start < std::chrono::milliseconds(200));
        // (A daemon that refuses connections is asked again each time: no cooldown for that.)
    }
    void testSilentDaemonTimesOut() {
        // Something listens and accepts but never answers (a daemon stuck on a huge source).
        char dir[] = "/tmp/sigil-lowerer-test-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(dir) != nullptr);
        const std::string path = std::string(dir) + "/silent.sock";
        sigil::common::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
        CPPUNIT_ASSERT_EQUAL(0, ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr));
        CPPUNIT_ASSERT_EQUAL(0, ::listen(listener.get(), 4));
        auto start = Clock::now();
        CPPUNIT_ASSERT(!LowerWithDaemon(path, "const main = () => 1;", 300).has_value());
        const auto took = Clock::now() - start;
        CPPUNIT_ASSERT(took >= std::chrono::milliseconds(290));
        CPPUNIT_ASSERT(took < std::chrono::milliseconds(1000));
        // Then it is left alone for a while: the next runs do not wait for it again.
        start = Clock::now();
        CPPUNIT_ASSERT(!LowerWithDaemon(path, "const main = () => 2;", 300).has_value());
        CPPUNIT_ASSERT(Clock::now() - start < std::chrono::milliseconds(50));
        // The wait is bounded by the source's size as well as by the caller's limit.
        CPPUNIT_ASSERT_EQUAL(1000, LowererWaitMs(0));
        CPPUNIT_ASSERT_EQUAL(1250, LowererWaitMs(10 * 1024));
        CPPUNIT_ASSERT_EQUAL(1000 + 25 * 1024, LowererWaitMs(MAX_LOWERER_SOURCE_BYTES));
        ::unlink(path.c_str());
        ::rmdir(dir);
    }
    void testSourceItMustNotSeeIsNotSent() {
        Daemon daemon;
        // Not UTF-8: Node would replace the bytes, so the child lowers it as it is.
        CPPUNIT_ASSERT(!LowerWithDaemon(daemon.socket(), std::string("const s = '\xff\xfe'; const main = () => s;"), 20000)
                            .has_value());
        // Over the cap: left to the child (and its limits).
        std::string huge = "const main = () => 1;\n";
        huge += "// " + std::string(MAX_LOWERER_SOURCE_BYTES, 'x') + "\n";
        CPPUNIT_ASSERT(!LowerWithDaemon(daemon.socket(), huge, 20000).has_value());
    }
    void testServesSeveralRequestsAtOnce() {
        Daemon daemon;
        auto transpiler = Transpiler::Create();
        CPPUNIT_ASSERT(transpiler.ok());
        const std::string& source = Corpus().front();
        auto expected = (*transpiler)->Lower(source);
        CPPUNIT_ASSERT(expected.ok());
        // Twice as many as the daemon has threads (2 by default), of a small source: they share the
        // threads within the deadline (large sources past it are left to the child:
        // testDaemonThatGivesUpIsAskedAgain, lowerer_pool.test.mjs).
        std::vector<std::optional<std::string>> got(4);
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < got.size(); ++i) {
            threads.emplace_back([&, i] { got[i] = LowerWithDaemon(daemon.socket(), source, 20000); });
        }
        for (auto& t : threads) t.join();
        for (const auto& g : got) {
            CPPUNIT_ASSERT(g.has_value());
            CPPUNIT_ASSERT_EQUAL(*expected, *g);
        }
    }
    void testDaemonThatGivesUpIsAskedAgain() {
        // A source past the daemon's deadline: it answers 'T' (its thread killed), the child lowers
        // that source, and the daemon, which answered, is asked again at once (no pause, as for a
        // daemon that said nothing).
        Daemon daemon(300);
        // Its threads start after it listens: until they do, requests wait (past 300 ms: 'T').
        bool up = false;
        for (int i = 0; i < 100 && !up; ++i) {
            up = LowerWithDaemon(daemon.socket(), "const up = 1;", 20000).has_value();
            if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        CPPUNIT_ASSERT(up);
        std::string slow = "let a = {};";
        while (slow.size() < 400 * 1024) slow += "a?.b;";
        auto start = Clock::now();
        CPPUNIT_ASSERT(!LowerWithDaemon(daemon.socket(), slow, 20000).has_value());
        const auto took = Clock::now() - start;
        CPPUNIT_ASSERT(took >= std::chrono::milliseconds(290));
        CPPUNIT_ASSERT(took < std::chrono::milliseconds(LowererWaitMs(slow.size())));
        start = Clock::now();
        auto small = LowerWithDaemon(daemon.socket(), "const main = () => 1 ?? 2;", 20000);
        CPPUNIT_ASSERT(small.has_value());
        CPPUNIT_ASSERT(small->find("__sigil_nc") != std::string::npos);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(LowererClientTests);
