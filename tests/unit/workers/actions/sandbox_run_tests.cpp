// Real sandboxes through the worker's host API: the exec'd zygote (tests/support's
// sigil-sandbox-test, which adds __sigil_test_syscall, and the production sigil-sandbox), child
// lockdown, seccomp, limits, the op channel, and what the zygote's process image holds.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "workers/actions/sandbox_host.h"

using namespace sigil::common;
using namespace sigil::workers;

namespace {

// sigil-sandbox with __sigil_test_syscall (tests/support/sigil_sandbox_test.cpp), and the real one.
const std::string TEST_SANDBOX = std::string(SIGIL_BINARY_DIR) + "/tests/sigil-sandbox-test";
const std::string PRODUCTION_SANDBOX = std::string(SIGIL_BINARY_DIR) + "/bin/sigil-sandbox";

std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The parent pid of `pid` from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces).
pid_t ParentOf(pid_t pid) {
    const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t ppid = -1;
    rest >> state >> ppid;
    return ppid;
}

std::vector<pid_t> ChildrenOf(pid_t parent) {
    std::vector<pid_t> out;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return out;
    while (const dirent* e = ::readdir(proc)) {
        const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
        if (pid > 0 && ParentOf(pid) == parent) out.push_back(pid);
    }
    ::closedir(proc);
    return out;
}

std::string ExeOf(pid_t pid) {
    char buf[PATH_MAX] = {};
    const ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

std::set<int> OpenDescriptors(pid_t pid) {
    std::set<int> out;
    DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
    if (dir == nullptr) return out;
    while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] != '.') out.insert(std::atoi(e->d_name));
    }
    ::closedir(dir);
    return out;
}

// The shared objects a process maps that a sandbox must never carry.
std::string WorkerLibrariesIn(const std::string& maps) {
    std::string found;
    for (const char* lib : {"libcurl", "libfcgi", "libboost"}) {
        if (maps.find(lib) != std::string::npos) found += std::string(lib) + " ";
    }
    return found;
}

class RecordingHandler : public OpHandler {
public:
    Result<std::string> OnOp(std::string_view name, std::string_view args_json) override {
        ops.emplace_back(name);
        if (name == "encrypt") return MakeError(ErrorKind::Forbidden, "refused", "not allowed here");
        if (name == "decrypt") {  // as if keyd were down: the service's failure, not the script's
            ours = true;
            return MakeError(ErrorKind::Unavailable, "keyd_unavailable", "keyd is down");
        }
        return std::string(args_json);
    }
    bool OpFailedOnOurSide() const override { return ours; }
    bool ours = false;
    Status OnLog(std::string_view text) override {
        logs.emplace_back(text);
        if (text == "stop") return MakeError(ErrorKind::Forbidden, "stop_requested", "told to stop");
        return Success();
    }
    std::vector<std::string> ops;
    std::vector<std::string> logs;
};

// RunAdmission with only `admit` set.
RunAdmission Admit(std::function<Status(RunLimits&)> admit) { return RunAdmission{std::move(admit), nullptr}; }

double Seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

class SandboxRunTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SandboxRunTests);
    CPPUNIT_TEST(testHelloWorld);
    CPPUNIT_TEST(testParamsReachMain);
    CPPUNIT_TEST(testUndefinedAndObjectReturns);
    CPPUNIT_TEST(testThrownErrorHasMessageAndStack);
    CPPUNIT_TEST(testSyntaxErrorIsScriptError);
    CPPUNIT_TEST(testEndlessLoopHitsTimeLimitAndZygoteServesNext);
    CPPUNIT_TEST(testCaughtTimeoutStillEnds);
    CPPUNIT_TEST(testNativeSpinStoppedByCpuLimit);
    CPPUNIT_TEST(testBlockedChildKilledByWorker);
    CPPUNIT_TEST(testMemoryBombHitsMemoryLimit);
    CPPUNIT_TEST(testCyclicGarbageIsCollectedAtTheCap);
    CPPUNIT_TEST(testForbiddenSyscallsKillWithSigsys);
    CPPUNIT_TEST(testCrashIsCleanOutcome);
    CPPUNIT_TEST(testDangerousGlobalsRemoved);
    CPPUNIT_TEST(testProxyKeptAndNativesRefuseIt);
    CPPUNIT_TEST(testBuiltinPrototypesFrozen);
    CPPUNIT_TEST(testFrozenPrototypesCanBeShadowed);
    CPPUNIT_TEST(testErrorSubclassesAsInV8);
    CPPUNIT_TEST(testRunsDoNotShareGlobals);
    CPPUNIT_TEST(testOpRoundTrip);
    CPPUNIT_TEST(testLogsReachHandler);
    CPPUNIT_TEST(testWorkerSideLimits);
    CPPUNIT_TEST(testCapTextCutsAtACharacterWithAMarker);
    CPPUNIT_TEST(testDateAndRandomWorkUnderSeccomp);
    CPPUNIT_TEST(testZygoteGoneIsAnError);
    CPPUNIT_TEST(testRefusedAdmissionRunsNothingAndZygoteServesNext);
    CPPUNIT_TEST(testAdmissionRunsWhileTheZygoteForks);
    CPPUNIT_TEST(testAdmissionShortensTheTimeLimitAndSaysWhy);
    CPPUNIT_TEST(testOversizedLogOrOpIsACatchableRangeError);
    CPPUNIT_TEST(testStacksShowOnlyTheScriptsFrames);
    CPPUNIT_TEST(testStarvedOpEndsAtTheTimeLimit);
    CPPUNIT_TEST(testModernCodeIsLoweredInTheChild);
    CPPUNIT_TEST(testLoweringSyntaxErrorNamesTheLine);
    CPPUNIT_TEST(testModulesAreLoweredReportedAndLinked);
    CPPUNIT_TEST(testUnsentImportStopsBeforeTheScript);
    CPPUNIT_TEST(testRandomDiffersBetweenRuns);
    CPPUNIT_TEST(testZygoteIsItsOwnCleanExecutable);
    CPPUNIT_TEST(testChildIsForkedFromTheZygote);
    CPPUNIT_TEST(testZygoteInheritsNoWorkerDescriptor);
    CPPUNIT_TEST(testZygoteStartsWithCleanSignalState);
    CPPUNIT_TEST(testChildrenDieWithTheControlSocket);
    CPPUNIT_TEST(testProductionSandboxHasNoTestNatives);
    CPPUNIT_TEST(testMissingExecutableFailsToStart);
    CPPUNIT_TEST_SUITE_END();

    std::optional<Zygote> m_zygote;

    RunOutcome Run(const std::string& code, RunLimits limits = {}, const std::string& params = "{}",
                   OpHandler* handler = nullptr) {
        return RunOn(*m_zygote, code, limits, params, handler);
    }
    static RunOutcome RunOn(Zygote& zygote, const std::string& code, RunLimits limits = {},
                            const std::string& params = "{}", OpHandler* handler = nullptr) {
        RecordingHandler fallback;
        auto r = RunAction(zygote, RunRequest{code, params, limits}, handler != nullptr ? *handler : fallback);
        CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().message, r.ok());
        return std::move(r).value();
    }
    RunOutcome RunLowered(const std::string& code) {
        RecordingHandler handler;
        auto r = RunAction(*m_zygote, RunRequest{code, "{}", {}, true}, handler);
        CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().message, r.ok());
        return std::move(r).value();
    }
    static RunLimits Short() {
        RunLimits l;
        l.time_ms = 1000;
        return l;
    }

public:
    void setUp() override {
        auto z = Zygote::Start(ZygoteOptions{TEST_SANDBOX, {}});
        CPPUNIT_ASSERT_MESSAGE(z.ok() ? "" : z.error().message, z.ok());
        CPPUNIT_ASSERT(z.ok());
        m_zygote.emplace(std::move(z).value());
    }
    void tearDown() override { m_zygote.reset(); }

    void testModernCodeIsLoweredInTheChild() {
        const std::string src =
            "const pair = async (a) => { const r = await Promise.all([a, Promise.resolve(2)]); return r; };\n"
            "async function main({ a, ...rest }) { const [x, y] = await pair(a); return `${x}-${y}-${Object.keys(rest)}`; }";
        RecordingHandler h;
        auto r = RunAction(*m_zygote, RunRequest{src, R"({"a":1,"b":2})", {}, true}, h);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string(R"("1-2-b")"), r->response_json);
        CPPUNIT_ASSERT(r->lowered_code.has_value());
        CPPUNIT_ASSERT(r->lowered_code->find("async") == std::string::npos);
        CPPUNIT_ASSERT(r->lowered_code->find("__sigil_await(") != std::string::npos);
        // The lowered text runs as is (what the worker's cache hands later runs).
        auto again = RunAction(*m_zygote, RunRequest{*r->lowered_code, R"({"a":5})", {}, false}, h);
        CPPUNIT_ASSERT(again.ok());
        CPPUNIT_ASSERT_EQUAL(std::string(R"("5-2-")"), again->response_json);
        CPPUNIT_ASSERT(!again->lowered_code.has_value());
    }
    void testModulesAreLoweredReportedAndLinked() {
        const std::string mod = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
        RunRequest request{"import twice, { k } from \"ipfs://" + mod + "\";\nconst main = async () => twice(k);", "{}", {}, true};
        request.modules.push_back(SandboxModule{mod, "export const k = 21;\nexport default (x) => x * 2;", true});
        RecordingHandler h;
        auto r = RunAction(*m_zygote, request, h);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_MESSAGE(r->error.message, r->end == RunEnd::Completed);
        CPPUNIT_ASSERT_EQUAL(std::string("42"), r->response_json);
        CPPUNIT_ASSERT(r->lowered_code.has_value());
        CPPUNIT_ASSERT(r->lowered_code->rfind("/*sigil-imports ipfs://" + mod + "*/", 0) == 0);
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, r->lowered_modules.size());
        CPPUNIT_ASSERT_EQUAL(mod, r->lowered_modules[0].first);
        CPPUNIT_ASSERT(r->lowered_modules[0].second.find("__sigil_exports") != std::string::npos);
        // The lowered texts run as they are, as the worker's caches hand them to later runs.
        RunRequest warm{*r->lowered_code, "{}", {}, false};
        warm.modules.push_back(SandboxModule{mod, r->lowered_modules[0].second, false});
        auto again = RunAction(*m_zygote, warm, h);
        CPPUNIT_ASSERT(again.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("42"), again->response_json);
        CPPUNIT_ASSERT(again->lowered_modules.empty());
    }
    void testUnsentImportStopsBeforeTheScript() {
        const std::string mod = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
        RecordingHandler h;
        auto r = RunAction(*m_zygote,
                           RunRequest{"import x from \"ipfs://" + mod + "\";\nconsole.log('ran');\nconst main = () => x;", "{}", {}, true}, h);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(r->end == RunEnd::ScriptError);
        CPPUNIT_ASSERT_EQUAL(std::string("sigil_imports_unresolved"), r->error.code);
        CPPUNIT_ASSERT_MESSAGE(r->error.message, r->error.message.find("ipfs://" + mod) != std::string::npos);
        CPPUNIT_ASSERT(r->lowered_code.has_value());  // what the worker needs to resolve them
        CPPUNIT_ASSERT_EQUAL(0u, r->ops);
        CPPUNIT_ASSERT(h.logs.empty());
    }
    void testLoweringSyntaxErrorNamesTheLine() {
        RecordingHandler h;
        auto r = RunAction(*m_zygote, RunRequest{"async function main() {\n  return [1, 2;\n}", "{}", {}, true}, h);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(r->end == RunEnd::ScriptError);
        CPPUNIT_ASSERT_EQUAL(std::string("SyntaxError"), r->error.code);
        CPPUNIT_ASSERT_MESSAGE(r->error.message, r->error.message.find("line 2") != std::string::npos);
        CPPUNIT_ASSERT(!r->lowered_code.has_value());
    }
    void testRandomDiffersBetweenRuns() {
        const std::string code = "function main() { return [Math.random(), Math.random()]; }";
        const std::string a = Run(code).response_json, b = Run(code).response_json;
        CPPUNIT_ASSERT(a != b);
        CPPUNIT_ASSERT(a.find("0.") != std::string::npos);
    }
    void testHelloWorld() {
        auto o = Run("function main() { return 'Hello World!'; }");
        CPPUNIT_ASSERT(o.end == RunEnd::Completed);
        CPPUNIT_ASSERT_EQUAL(std::string("\"Hello World!\""), o.response_json);
        CPPUNIT_ASSERT(WIFEXITED(o.wait_status) && WEXITSTATUS(o.wait_status) == 0);
    }
    void testParamsReachMain() {
        auto o = Run("function main(p) { return {sum: p.a + p.b, who: p.who}; }", {}, R"({"a":2,"b":40,"who":"x"})");
        CPPUNIT_ASSERT(o.end == RunEnd::Completed);
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"sum":42,"who":"x"})"), o.response_json);
    }
    void testUndefinedAndObjectReturns() {
        CPPUNIT_ASSERT_EQUAL(std::string(""), Run("function main() {}").response_json);
        CPPUNIT_ASSERT_EQUAL(std::string(""), Run("var x = 1;").response_json);  // no main
        CPPUNIT_ASSERT_EQUAL(std::string("[1,null]"), Run("function main() { return [1, null]; }").response_json);
        CPPUNIT_ASSERT_EQUAL(std::string("7"), Run("function main() { return 7; }").response_json);
    }
    void testThrownErrorHasMessageAndStack() {
        auto o = Run("function inner() { throw new TypeError('bad thing'); }\nfunction main() { inner(); }");
        CPPUNIT_ASSERT(o.end == RunEnd::ScriptError);
        CPPUNIT_ASSERT_EQUAL(std::string("TypeError"), o.error.code);
        CPPUNIT_ASSERT_EQUAL(std::string("bad thing"), o.error.message);
        CPPUNIT_ASSERT_MESSAGE(o.error.stack, o.error.stack.find("inner") != std::string::npos);
        auto thrown_string = Run("function main() { throw 'plain'; }");
        CPPUNIT_ASSERT(thrown_string.end == RunEnd::ScriptError);
        CPPUNIT_ASSERT_EQUAL(std::string("plain"), thrown_string.error.message);
    }
    void testSyntaxErrorIsScriptError() {
        auto o = Run("function main( {");
        CPPUNIT_ASSERT(o.end == RunEnd::ScriptError);
        CPPUNIT_ASSERT_EQUAL(std::string("SyntaxError"), o.error.code);
        auto bad_params = Run("function main(p) { return p; }", {}, "{not json");
        CPPUNIT_ASSERT(bad_params.end == RunEnd::ScriptError);
    }
    void testEndlessLoopHitsTimeLimitAndZygoteServesNext() {
        const auto start = std::chrono::steady_clock::now();
        auto o = Run("function main() { while (true) {} }", Short());
        const double took = Seconds(start);
        CPPUNIT_ASSERT(o.end == RunEnd::TimeLimit);
        CPPUNIT_ASSERT_MESSAGE(std::to_string(took), took < 2.0 && took >= 0.9);
        CPPUNIT_ASSERT_EQUAL(std::string("\"Hello World!\""), Run("function main() { return 'Hello World!'; }").response_json);
    }
    void testCaughtTimeoutStillEnds() {
        const auto start = std::chrono::steady_clock::now();
        auto o = Run("function main() { for (;;) { try { while (true) {} } catch (e) {} } }", Short());
        CPPUNIT_ASSERT(o.end == RunEnd::TimeLimit);
        CPPUNIT_ASSERT(Seconds(start) < 2.0);
    }
    void testNativeSpinStoppedByCpuLimit() {
        // The engine's interrupt never runs inside a native loop: RLIMIT_CPU must end it.
        const auto start = std::chrono::steady_clock::now();
        auto o = Run("function main() { __sigil_test_syscall('spin'); }", Short());
        CPPUNIT_ASSERT(o.end == RunEnd::TimeLimit);
        CPPUNIT_ASSERT(WIFSIGNALED(o.wait_status));
        CPPUNIT_ASSERT(WTERMSIG(o.wait_status) == SIGXCPU || WTERMSIG(o.wait_status) == SIGKILL);
        CPPUNIT_ASSERT(Seconds(start) < 2.6);  // SIGXCPU at 1 s of CPU, or the 2 s wall-clock kill on a busy machine
    }
    void testBlockedChildKilledByWorker() {
        // Blocked without using CPU: only the worker's wall-clock kill ends it.
        const auto start = std::chrono::steady_clock::now();
        auto o = Run("function main() { __sigil_test_syscall('block'); }", Short());
        const double took = Seconds(start);
        CPPUNIT_ASSERT(o.end == RunEnd::TimeLimit);
        CPPUNIT_ASSERT(WIFSIGNALED(o.wait_status) && WTERMSIG(o.wait_status) == SIGKILL);
        CPPUNIT_ASSERT_MESSAGE(std::to_string(took), took >= 1.9 && took < 3.0);
    }
    void testMemoryBombHitsMemoryLimit() {
        RunLimits l;
        l.memory_bytes = 16u * 1024 * 1024;
        l.time_ms = 10000;
        auto o = Run("function main() { var a = []; while (true) a.push(new Array(1e6)); }", l);
        CPPUNIT_ASSERT(o.end == RunEnd::MemoryLimit);
        // Catching the engine's "alloc failed" does not hide the limit.
        auto caught = Run("function main() { var a = []; try { while (true) a.push('x'.repeat(1e5) + a.length); }"
                          " catch (e) { a = null; } return 'fine'; }", l);
        CPPUNIT_ASSERT(caught.end == RunEnd::MemoryLimit);
        // Many mid-sized strings (each a fresh allocation) end the same way, well before the time limit.
        l.time_ms = 2000;
        auto strings = Run("function main() { var a = []; while (true) a.push('x'.repeat(10000) + a.length); }", l);
        CPPUNIT_ASSERT_EQUAL(std::string("memory_limit"), strings.error.code);
    }
    // Every function and its prototype object are a reference cycle that only mark-and-sweep frees;
    // Duktape runs it when an allocation is refused and then asks again. 400,000 closures are far
    // more garbage than the 16 MiB cap with almost nothing live: the run ends well, not memory_limit
    // (it did before the allocator told a refusal the retry got from one that stayed refused).
    void testCyclicGarbageIsCollectedAtTheCap() {
        RunLimits l;
        l.memory_bytes = 16u * 1024 * 1024;
        l.time_ms = 20000;
        auto o = Run("function main() { var n = 0; for (var i = 0; i < 400000; i++) {"
                     " var f = function () { return i; }; n += f.prototype ? 1 : 0; } return n; }", l);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(o.error.code, std::string("400000"), o.response_json);
    }
    void testForbiddenSyscallsKillWithSigsys() {
        for (const char* what : {"open", "socket", "fork", "mmap_exec"}) {
            auto o = Run(std::string("function main() { return __sigil_test_syscall('") + what + "'); }");
            CPPUNIT_ASSERT_MESSAGE(what, o.end == RunEnd::Crashed);
            CPPUNIT_ASSERT_MESSAGE(what, WIFSIGNALED(o.wait_status) && WTERMSIG(o.wait_status) == SIGSYS);
            CPPUNIT_ASSERT_EQUAL(std::string("sandbox_violation"), o.error.code);
        }
    }
    void testCrashIsCleanOutcome() {
        for (const char* what : {"abort", "segv"}) {
            auto o = Run(std::string("function main() { __sigil_test_syscall('") + what + "'); }");
            CPPUNIT_ASSERT_MESSAGE(what, o.end == RunEnd::Crashed);
            CPPUNIT_ASSERT(WIFSIGNALED(o.wait_status));
            CPPUNIT_ASSERT(!o.error.code.empty() && !o.error.message.empty());
        }
        CPPUNIT_ASSERT(Run("function main() { return 1; }").end == RunEnd::Completed);
    }
    void testDangerousGlobalsRemoved() {
        auto o = Run("function main() { return [typeof Duktape, typeof CBOR, typeof __sigil_op,"
                     " typeof __sigil_log, typeof __sigil_jobs, typeof __sigil_random, typeof __sigil_crypto,"
                     " typeof __sigil_keccak256]; }");
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"])"),
                             o.response_json);
    }
    // Proxy stays (bundled libraries build on it at load): its traps only run script code where a
    // getter could already, and no native looks through one (js/lockdown.js). The web
    // globals hand their natives fresh buffer views made from what a Proxy answers, which the
    // engine checks like any other, and the Proxy constructor is frozen like every built-in.
    void testProxyKeptAndNativesRefuseIt() {
        auto o = Run(R"JS(
            function main() {
              var p = new Proxy({}, { get: function (t, k) { return 'got ' + String(k); } });
              var r = [p.hello, Object.isFrozen(Proxy)];
              r.push(new TextDecoder().decode(new Proxy(new Uint8Array([104, 105]), {})));
              var lying = new Proxy(new Uint8Array(4), { get: function (t, k) { return k === 'byteOffset' ? 1e6 : t[k]; } });
              try { crypto.getRandomValues(lying); r.push('filled'); } catch (e) { r.push(e.name); }
              var loud = new Proxy({}, { get: function (t, k) { return k === 'toString' ? function () { return 'abc'; } : undefined; } });
              r.push(new TextEncoder().encode(loud).length);
              try { new Proxy(p, {}); } catch (e) { r.push(e.name); }
              return r;
            })JS");
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["got hello",true,"hi","RangeError",3,"TypeError"])"), o.response_json);
    }
    void testBuiltinPrototypesFrozen() {
        auto o = Run(R"JS(
            function main() {
              var r = [Object.isFrozen(Object.prototype), Object.isFrozen(Array.prototype),
                       Object.isFrozen(Function.prototype), Object.isFrozen(JSON), Object.isFrozen(Math),
                       Object.isFrozen(Object.getPrototypeOf(Uint8Array.prototype))];
              Object.prototype.polluted = 1;
              try { (function () { 'use strict'; Array.prototype.push = null; })(); r.push('no throw'); }
              catch (e) { r.push(e.name); }
              try { __sigil_await = null; } catch (e) {}
              r.push(({}).polluted === undefined, typeof __sigil_await);
              return r;
            })JS");
        CPPUNIT_ASSERT_EQUAL(std::string(R"([true,true,true,true,true,true,"TypeError",true,"function"])"), o.response_json);
    }
    // The override mistake repaired (js/lockdown.js): assignments that shadow a frozen
    // built-in's constructor, toString or an error's name give the object its own property, in
    // strict code too, while the prototypes themselves stay as they were.
    void testFrozenPrototypesCanBeShadowed() {
        auto o = Run(R"JS(
            'use strict';
            function C() {}
            C.prototype = Object.create(Error.prototype);
            C.prototype.constructor = C;
            C.prototype.name = 'C';
            function main() {
              var obj = {}; obj.toString = function () { return 'mine'; }; obj.constructor = C;
              var r = [String(obj), obj.constructor === C, Object.keys(obj).join(), String(new C()), ({}).constructor === Object];
              try { Object.prototype.toString = null; } catch (e) { r.push(e.name); }
              try { Error.prototype.name = 'x'; } catch (e) { r.push(e.name); }
              r.push(Object.isFrozen(Object.prototype), Object.isFrozen(Error.prototype), String({}), new Error('m').name);
              return r;
            })JS");
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["mine",true,"toString,constructor","C",true,"TypeError","TypeError",true,true,"[object Object]","Error"])"),
                             o.response_json);
    }
    // An ES5-lowered class's super call (Error.call(this, m, options)) initialises `this`; the
    // constructors themselves, and the errors they and the engine make, are Duktape's own.
    void testErrorSubclassesAsInV8() {
        auto o = RunLowered(R"JS(
            class E extends Error { constructor(m, o) { super(m, o); this.name = 'E'; } }
            class F extends E { code = 3; }
            function make() { return new F('boom', { cause: 'why' }); }
            function main() {
              var e = make();
              var own = Object.getOwnPropertyDescriptor(e, 'message');
              var native = new Error('n');
              var target = {};
              Error.captureStackTrace(target);
              return [e.message, e.cause, e.code, e instanceof E, e instanceof Error, String(e), own.enumerable,
                      e.stack.split('\n')[0], e.stack.indexOf('at make') > 0, native.constructor === Error,
                      native.stack.split('\n')[1].indexOf('at main') > 0, Error('plain').message,
                      Object.getPrototypeOf(native) === Error.prototype, target.stack.split('\n')[1].indexOf('at main') > 0];
            })JS");
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["boom","why",3,true,true,"E: boom",false,"E: boom",true,true,true,"plain",true,true])"),
                             o.response_json);
    }
    void testRunsDoNotShareGlobals() {
        CPPUNIT_ASSERT(Run("leaked = 42; function main() { return leaked; }").response_json == "42");
        CPPUNIT_ASSERT_EQUAL(std::string("\"undefined\""), Run("function main() { return typeof leaked; }").response_json);
    }
    void testOpRoundTrip() {
        RecordingHandler h;
        auto o = Run(R"JS(
            function main() {
              var echoed = Sigil.Actions.signEcdsa({x: [1, 2]});
              var refused;
              try { Sigil.Actions.encrypt({}); } catch (e) { refused = e.message; }
              return {x: echoed.x, refused: refused};
            })JS", {}, "{}", &h);
        CPPUNIT_ASSERT(o.end == RunEnd::Completed);
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"x":[1,2],"refused":"not allowed here"})"), o.response_json);
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, h.ops.size());
        CPPUNIT_ASSERT_EQUAL(std::string("signEcdsa"), h.ops[0]);
        CPPUNIT_ASSERT_EQUAL(2u, o.ops);
    }
    void testLogsReachHandler() {
        RecordingHandler h;
        auto o = Run("function main() { console.log('one'); console.log({}); return 1; }", {}, "{}", &h);
        CPPUNIT_ASSERT(o.end == RunEnd::Completed);
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, h.logs.size());
        CPPUNIT_ASSERT_EQUAL(std::string("one"), h.logs[0]);
        CPPUNIT_ASSERT_EQUAL(std::string("{}"), h.logs[1]);
        auto stopped = Run("function main() { console.log('stop'); while (true) {} }", {}, "{}", &h);
        CPPUNIT_ASSERT(stopped.end == RunEnd::Stopped);
        CPPUNIT_ASSERT_EQUAL(std::string("stop_requested"), stopped.error.code);
        // An op that failed on the service's side ends the run: the script cannot catch it.
        auto failed = Run("function main() { try { Sigil.Actions.decrypt({}); } catch (e) { return 'caught'; } }", {}, "{}", &h);
        CPPUNIT_ASSERT(failed.end == RunEnd::Stopped);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_unavailable"), failed.error.code);
    }
    void testWorkerSideLimits() {
        RunLimits l;
        l.max_ops = 2;
        l.max_log_bytes = 10;
        l.max_response_bytes = 20;
        CPPUNIT_ASSERT(Run("function main() { for (var i = 0; i < 3; i++) Sigil.Actions.getPublicKey({}); }", l).end == RunEnd::OpLimit);
        // A line counts with its newline: 10 characters are 11 bytes, over a cap of 10.
        CPPUNIT_ASSERT(Run("function main() { console.log('0123456789'); }", l).end == RunEnd::LogLimit);
        CPPUNIT_ASSERT(Run("function main() { for (;;) console.log(); }", l).end == RunEnd::LogLimit);
        CPPUNIT_ASSERT(Run("function main() { return 'x'.repeat(30); }", l).end == RunEnd::ResponseLimit);
        CPPUNIT_ASSERT(Run("function main() { Sigil.Actions.getPublicKey({}); console.log('012345678'); return 'ok'; }", l).end ==
                       RunEnd::Completed);
    }
    void testCapTextCutsAtACharacterWithAMarker() {
        CPPUNIT_ASSERT_EQUAL(std::string("short"), CapText("short", 100));
        const std::string cut = CapText(std::string(1000, 'x'), 100);
        CPPUNIT_ASSERT(cut.size() <= 100);
        CPPUNIT_ASSERT(cut.find(" [... 1000 bytes, cut]") != std::string::npos);
        // 3-byte characters never split, invalid bytes become U+FFFD.
        std::string euros;
        for (int i = 0; i < 100; ++i) euros += "\xE2\x82\xAC";
        const std::string e = CapText(euros, 50);
        CPPUNIT_ASSERT(e.size() <= 50);
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, e.find(" [") % 3);
        CPPUNIT_ASSERT_EQUAL(std::string("a\xEF\xBF\xBD"), CapText("a\xFF", 100));
    }
    void testDateAndRandomWorkUnderSeccomp() {
        auto o = Run("function main() { var d = new Date(); return [typeof d.toString(), d.getTimezoneOffset() === 0,"
                     " Date.now() > 0, Math.random() < 1, typeof new Date(2020, 1, 1).getTime()]; }");
        CPPUNIT_ASSERT_MESSAGE(o.error.message, o.end == RunEnd::Completed);
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["string",true,true,true,"number"])"), o.response_json);
    }
    void testZygoteGoneIsAnError() {
        ::kill(m_zygote->pid(), SIGKILL);
        ::usleep(50 * 1000);
        RecordingHandler h;
        auto r = RunAction(*m_zygote, RunRequest{"function main() {}", "{}", {}}, h);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("zygote_gone"), r.error().code);
    }
    // A run whose admission fails (402 before any work) never sends its code: the refusal is the
    // answer, nothing reached the handler, and the next runs get their own children (the refused
    // child's pid is not taken for theirs), also after an admission that threw.
    void testRefusedAdmissionRunsNothingAndZygoteServesNext() {
        RecordingHandler h;
        const std::string code = "function main() { console.log('ran'); return 1; }";
        auto refused = RunAction(*m_zygote, RunRequest{code, "{}", {}}, h, Admit([](RunLimits&) {
            return sigil::common::Status(sigil::common::MakeError(sigil::common::ErrorKind::PaymentRequired,
                                                                  "insufficient_credit", "no credit"));
        }));
        CPPUNIT_ASSERT(!refused.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("insufficient_credit"), refused.error().code);
        auto threw = RunAction(*m_zygote, RunRequest{code, "{}", {}}, h,
                               Admit([](RunLimits&) -> sigil::common::Status { throw std::runtime_error("no memory"); }));
        CPPUNIT_ASSERT(!threw.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("admission_failed"), threw.error().code);
        CPPUNIT_ASSERT(h.logs.empty());
        for (int i = 0; i < 3; ++i) {
            auto o = Run("function main() { return 'Hello World!'; }");
            CPPUNIT_ASSERT(o.end == RunEnd::Completed);
            CPPUNIT_ASSERT_EQUAL(std::string("\"Hello World!\""), o.response_json);
        }
    }
    // Admission runs once the zygote was asked for the child, before its pid is read back: the
    // zygote forks meanwhile (a slow admission can see the child), and the run goes to that child.
    void testAdmissionRunsWhileTheZygoteForks() {
        RecordingHandler h;
        std::vector<pid_t> before;
        auto r = RunAction(*m_zygote, RunRequest{"function main() { return 1; }", "{}", {}}, h, Admit([&](RunLimits&) {
            const auto start = std::chrono::steady_clock::now();
            while (Seconds(start) < 2.0 && ChildrenOf(m_zygote->pid()).empty()) ::usleep(1000);
            before = ChildrenOf(m_zygote->pid());
            return sigil::common::Status(sigil::common::Success());
        }));
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(r->end == RunEnd::Completed);
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, before.size());
        CPPUNIT_ASSERT_EQUAL(before[0], r->pid);
    }
    // Billing's admission may give a run fewer seconds than configured (what the credit held): the
    // child gets that limit, the handler and `started` learn it before the code runs, and the
    // time_limit error says why it was shorter.
    void testAdmissionShortensTheTimeLimitAndSaysWhy() {
        struct Starting : RecordingHandler {
            void OnStart(const RunLimits& limits) override { started_ms = limits.time_ms; }
            std::uint64_t started_ms = 0;
        } h;
        bool started = false;
        const auto start = std::chrono::steady_clock::now();
        auto r = RunAction(*m_zygote, RunRequest{"function main() { while (true) {} }", "{}", {}}, h,
                           RunAdmission{[](RunLimits& limits) {
                                            limits.time_ms = 1000;
                                            limits.time_limited_by = "what the credit held";
                                            return Status(Success());
                                        },
                                        [&] { started = true; }});
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(r->end == RunEnd::TimeLimit);
        CPPUNIT_ASSERT(Seconds(start) < 5.0);  // the configured 30 s were not given
        CPPUNIT_ASSERT(started);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1000}, h.started_ms);
        CPPUNIT_ASSERT_EQUAL(std::string("time_limit"), r->error.code);
        CPPUNIT_ASSERT_MESSAGE(r->error.message, r->error.message.find("of 1 s (what the credit held)") != std::string::npos);
    }
    // A console line or an op argument larger than a child frame is a RangeError the script can
    // catch (it used to end the child with exit 120, a crash the service refunded).
    void testOversizedLogOrOpIsACatchableRangeError() {
        RecordingHandler h;
        auto o = Run("function main() { var big = 'x'; while (big.length < 1024 * 1024) big += big; big = big + big + big;"
                     " var out = [];"
                     " try { console.log(big); } catch (e) { out.push(e.name + ': ' + e.message); }"
                     " try { Sigil.Actions.signMessage({ pkpId: '0x', message: big }); } catch (e) { out.push(e.name); }"
                     " console.log('after'); return out; }",
                     {}, "{}", &h);
        CPPUNIT_ASSERT_MESSAGE(o.error.message, o.end == RunEnd::Completed);
        CPPUNIT_ASSERT_MESSAGE(o.response_json, o.response_json.find("RangeError: a console line of 3145728 bytes") != std::string::npos);
        CPPUNIT_ASSERT_MESSAGE(o.response_json, o.response_json.find(",\"RangeError\"]") != std::string::npos);
        CPPUNIT_ASSERT(h.ops.empty());
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, h.logs.size());
        CPPUNIT_ASSERT_EQUAL(std::string("after"), h.logs[0]);
    }
    // Error stacks, fileName and lineNumber name the script's frames only: never a C source path of
    // the native that threw, nor the runtime's own files, neither in the sandbox's report nor in
    // what the script reads itself.
    void testStacksShowOnlyTheScriptsFrames() {
        RecordingHandler h;
        auto o = Run("function inner() { var r = Sigil.Actions.encrypt({ pkpId: '0x' }); return r; }\n"
                     "function main() { var seen = [];\n"
                     "  try { inner(); } catch (e) { seen.push(e.stack, String(e.fileName), String(e.lineNumber)); }\n"
                     "  try { [1].forEach(function () { null.x; }); } catch (e) { seen.push(e.stack, String(e.fileName)); }\n"
                     "  try { eval('(function evald() { throw new Error(\"in eval\"); })()'); } catch (e) { seen.push(e.stack); }\n"
                     "  try { new Function('throw new Error(\"built\")')(); } catch (e) { seen.push(e.stack); }\n"
                     "  return seen.join('\\n---\\n'); }",
                     {}, "{}", &h);
        CPPUNIT_ASSERT_MESSAGE(o.error.message, o.end == RunEnd::Completed);
        const std::string& seen = o.response_json;
        for (const char* leak : {".cpp", ".c:", ".h:", "/", "prelude.js", "shims.js", " internal", " native"}) {
            CPPUNIT_ASSERT_MESSAGE(std::string(leak) + " in " + seen, seen.find(leak) == std::string::npos);
        }
        for (const char* frame : {"at inner (action.js:1)", "at main (action.js:3)", "action.js\\n---", "\\n1\\n---",
                                  "at main (action.js:4)", "evald", "Error: in eval",
                                  "Error: built\\n    at anonymous (compile:1)"}) {
            CPPUNIT_ASSERT_MESSAGE(std::string(frame) + " not in " + seen, seen.find(frame) != std::string::npos);
        }
        auto thrown = Run("function main() { Sigil.Actions.encrypt({ pkpId: '0x' }); }", {}, "{}", &h);
        CPPUNIT_ASSERT(thrown.end == RunEnd::ScriptError);
        CPPUNIT_ASSERT_MESSAGE(thrown.error.stack, thrown.error.stack.find("/") == std::string::npos);
        CPPUNIT_ASSERT_MESSAGE(thrown.error.stack, thrown.error.stack.find("at main (action.js:1)") != std::string::npos);
    }
    // An op that the run's own deadline left no time for answers "time_limit": the run ends at its
    // time limit (not as a service failure the caller is not charged for).
    void testStarvedOpEndsAtTheTimeLimit() {
        struct Starved : RecordingHandler {
            Result<std::string> OnOp(std::string_view, std::string_view) override {
                return MakeError(ErrorKind::Overloaded, "time_limit", "the action's time limit passed while it waited");
            }
        } h;
        auto o = Run("function main() { try { Sigil.Actions.getPublicKey({}); } catch (e) { return 'caught'; } }", {}, "{}", &h);
        CPPUNIT_ASSERT(o.end == RunEnd::TimeLimit);
        CPPUNIT_ASSERT_EQUAL(std::string("time_limit"), o.error.code);
    }
    void testZygoteIsItsOwnCleanExecutable() {
        // The zygote is sigil-sandbox(-test), exec'd: not a fork of this test. Its maps are read
        // after a run, so the loader has mapped every library it ever will (right after exec they
        // may still be missing); libcrypto (common's) being there shows the read saw them.
        // tests/integration/service_test.sh checks the same against a real worker, which maps
        // libcurl and libfcgi itself.
        const auto check = [this](Zygote& z, const std::string& exe) {
            CPPUNIT_ASSERT_EQUAL(std::string("\"ready\""), RunOn(z, "function main() { return 'ready'; }").response_json);
            CPPUNIT_ASSERT_EQUAL(exe, ExeOf(z.pid()));
            CPPUNIT_ASSERT_EQUAL(::getpid(), ParentOf(z.pid()));
            const std::string maps = ReadFile("/proc/" + std::to_string(z.pid()) + "/maps");
            CPPUNIT_ASSERT_MESSAGE(maps, maps.find(exe) != std::string::npos);
            CPPUNIT_ASSERT_MESSAGE(maps, maps.find("libcrypto") != std::string::npos);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(maps, std::string(), WorkerLibrariesIn(maps));
        };
        check(*m_zygote, TEST_SANDBOX);
        auto production = Zygote::Start(ZygoteOptions{PRODUCTION_SANDBOX, {}});
        CPPUNIT_ASSERT(production.ok());
        check(*production, PRODUCTION_SANDBOX);
    }
    void testChildIsForkedFromTheZygote() {
        // While the child waits for its op result, it is a child of the zygote (not of this
        // process) running the zygote's image.
        struct Inspecting : RecordingHandler {
            pid_t zygote = -1;
            std::vector<pid_t> children;
            std::string exe, maps;
            Result<std::string> OnOp(std::string_view name, std::string_view args) override {
                children = ChildrenOf(zygote);
                if (children.size() == 1) {
                    exe = ExeOf(children[0]);
                    maps = ReadFile("/proc/" + std::to_string(children[0]) + "/maps");
                }
                return RecordingHandler::OnOp(name, args);
            }
        } h;
        h.zygote = m_zygote->pid();
        auto o = Run("function main() { return Sigil.Actions.getPublicKey({}); }", {}, "{}", &h);
        CPPUNIT_ASSERT(o.end == RunEnd::Completed);
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, h.children.size());
        CPPUNIT_ASSERT_EQUAL(o.pid, h.children[0]);
        CPPUNIT_ASSERT_EQUAL(TEST_SANDBOX, h.exe);
        // A locked-down child is not dumpable, so only root reads its maps; it shares the zygote's.
        if (!h.maps.empty()) CPPUNIT_ASSERT_EQUAL_MESSAGE(h.maps, std::string(), WorkerLibrariesIn(h.maps));
        // The answer comes on DONE and end of channel, before the child exits; the zygote reaps
        // it right after, off the run's path.
        bool reaped = false;
        for (int i = 0; i < 200 && !reaped; ++i) {
            reaped = ChildrenOf(m_zygote->pid()).empty();
            if (!reaped) ::usleep(10 * 1000);
        }
        CPPUNIT_ASSERT(reaped);
    }
    void testZygoteInheritsNoWorkerDescriptor() {
        // A descriptor without close-on-exec (as a worker's FastCGI socket at 0 may be) stays here.
        int leak[2];
        CPPUNIT_ASSERT_EQUAL(0, ::pipe(leak));
        auto z = Zygote::Start(ZygoteOptions{TEST_SANDBOX, {}});
        ::close(leak[0]);
        ::close(leak[1]);
        CPPUNIT_ASSERT(z.ok());
        // Let it reach its loop (the signalfd is its fourth descriptor), then look.
        RecordingHandler h;
        CPPUNIT_ASSERT(RunAction(*z, RunRequest{"function main() { return 1; }", "{}", {}}, h).ok());
        const std::set<int> fds = OpenDescriptors(z->pid());
        CPPUNIT_ASSERT_EQUAL(std::size_t{5}, fds.size());  // 0 (/dev/null), 1, 2, 3 (control), 4 (signalfd)
        char target[64] = {};
        CPPUNIT_ASSERT(::readlink(("/proc/" + std::to_string(z->pid()) + "/fd/0").c_str(), target, sizeof(target) - 1) > 0);
        CPPUNIT_ASSERT_EQUAL(std::string("/dev/null"), std::string(target));
        // Nothing of the worker's environment (sanitizer builds pass their options only).
        CPPUNIT_ASSERT(ReadFile("/proc/" + std::to_string(z->pid()) + "/environ").find("PATH=") == std::string::npos);
    }
    void testZygoteStartsWithCleanSignalState() {
        // A worker ignores SIGPIPE and SIGHUP and may block signals; exec keeps both, so the host
        // resets them. The zygote itself only blocks SIGCHLD (read through its signalfd).
        struct sigaction ignore {}, old_pipe {}, old_hup {};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, &old_pipe);
        ::sigaction(SIGHUP, &ignore, &old_hup);
        sigset_t block, old_mask;
        ::sigemptyset(&block);
        ::sigaddset(&block, SIGXCPU);
        ::sigaddset(&block, SIGUSR1);
        ::pthread_sigmask(SIG_BLOCK, &block, &old_mask);
        auto z = Zygote::Start(ZygoteOptions{TEST_SANDBOX, {}});
        ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
        ::sigaction(SIGPIPE, &old_pipe, nullptr);
        ::sigaction(SIGHUP, &old_hup, nullptr);
        CPPUNIT_ASSERT(z.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("1"), RunOn(*z, "function main() { return 1; }").response_json);
        const std::string status = ReadFile("/proc/" + std::to_string(z->pid()) + "/status");
        const auto field = [&](const std::string& name) {
            const auto at = status.find("\n" + name + ":\t");
            return at == std::string::npos ? std::string() : status.substr(at + name.size() + 3, 16);
        };
        CPPUNIT_ASSERT_EQUAL_MESSAGE(status, std::string("0000000000000000"), field("SigIgn"));
        char chld_only[17];
        std::snprintf(chld_only, sizeof chld_only, "%016llx", 1ull << (SIGCHLD - 1));
        CPPUNIT_ASSERT_EQUAL_MESSAGE(status, std::string(chld_only), field("SigBlk"));
    }
    void testChildrenDieWithTheControlSocket() {
        int sv[2];
        CPPUNIT_ASSERT_EQUAL(0, ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
        UniqueFd ours(sv[0]), theirs(sv[1]);
        auto child = m_zygote->Spawn(theirs.get());  // waits for RUN, which never comes
        theirs.Reset();
        CPPUNIT_ASSERT(child.ok());
        CPPUNIT_ASSERT_EQUAL(0, ::kill(*child, 0));
        m_zygote.reset();  // closes the control socket and reaps the zygote
        CPPUNIT_ASSERT(::kill(*child, 0) != 0);
        CPPUNIT_ASSERT_EQUAL(ssize_t{0}, ::read(ours.get(), sv, 1));  // its end of the channel is gone
    }
    void testProductionSandboxHasNoTestNatives() {
        m_zygote.reset();
        auto z = Zygote::Start();  // the default: sigil-sandbox beside the running program
        CPPUNIT_ASSERT(!z.ok());   // this test binary's folder has none
        CPPUNIT_ASSERT_EQUAL(std::string("zygote_start_failed"), z.error().code);
        auto production = Zygote::Start(ZygoteOptions{PRODUCTION_SANDBOX, {}});
        CPPUNIT_ASSERT(production.ok());
        m_zygote.emplace(std::move(production).value());
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["undefined","Hello World!"])"),
                             Run("function main() { return [typeof __sigil_test_syscall, 'Hello World!']; }").response_json);
    }
    void testMissingExecutableFailsToStart() {
        auto z = Zygote::Start(ZygoteOptions{"/nonexistent/sigil-sandbox", {}});
        CPPUNIT_ASSERT(!z.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("zygote_start_failed"), z.error().code);
        CPPUNIT_ASSERT(z.error().message.find("/nonexistent/sigil-sandbox") != std::string::npos);
        // Executable but not a sandbox: it refuses to run without its control socket.
        auto wrong = Zygote::Start(ZygoteOptions{TEST_SANDBOX, {"--bogus"}});
        CPPUNIT_ASSERT(wrong.ok());  // the exec worked; the program then exits
        RecordingHandler h;
        auto r = RunAction(*wrong, RunRequest{"function main() {}", "{}", {}}, h);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("zygote_gone"), r.error().code);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SandboxRunTests);
