#include <cppunit/extensions/HelperMacros.h>
#include <duktape.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "workers/sandbox/transpiler.h"

using namespace sigil::workers;
using sigil::common::ErrorKind;

namespace {

std::vector<std::string> g_log_lines;

// Fake __sigil_op: answers "<name>:<json_arg>" (as a JSON string), except "fetch", which answers
// a fixed JSON response so the Response object can be checked.
duk_ret_t FakeOp(duk_context* ctx) {
    std::string name = duk_require_string(ctx, 0);
    std::string arg = duk_require_string(ctx, 1);
    if (name == "fetch") {
        const char* reply =
            R"({"status":201,"headers":{"Content-Type":"application/json"},"body":"{\"echo\":\"x\"}"})";
        duk_push_string(ctx, reply);
        return 1;
    }
    duk_push_string(ctx, (name + ":" + arg).c_str());
    duk_json_encode(ctx, -1);
    return 1;
}

duk_ret_t FakeLog(duk_context* ctx) {
    g_log_lines.push_back(duk_safe_to_string(ctx, 0));
    return 0;
}

struct HeapFree {
    void operator()(duk_context* ctx) const { duk_destroy_heap(ctx); }
};

bool Eval(duk_context* ctx, std::string_view code, std::string& error) {
    if (duk_peval_lstring(ctx, code.data(), code.size()) != 0) {
        error = duk_safe_to_string(ctx, -1);
        duk_pop(ctx);
        return false;
    }
    duk_pop(ctx);
    return true;
}

// Runs lowered `code` in a fresh heap with shims, prelude and fake natives, calls
// main(JSON.parse(params)) and returns JSON.stringify of its result ("ERR: ..." on failure).
std::string RunLowered(const std::string& code, const std::string& params = "{}") {
    std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
    duk_context* ctx = heap.get();
    duk_push_c_function(ctx, FakeOp, 2);
    duk_put_global_string(ctx, "__sigil_op");
    duk_push_c_function(ctx, FakeLog, 1);
    duk_put_global_string(ctx, "__sigil_log");
    std::string error;
    if (!Eval(ctx, ShimsSource(), error)) return "ERR: shims: " + error;
    if (!Eval(ctx, LowerRuntimeSource(), error)) return "ERR: lower runtime: " + error;
    if (!Eval(ctx, PreludeSource(), error)) return "ERR: prelude: " + error;
    if (!Eval(ctx, code, error)) return "ERR: code: " + error;
    std::string call = "String(__sigil_run_main('" + params + "'))";
    if (duk_peval_string(ctx, call.c_str()) != 0) {
        std::string what = duk_safe_to_string(ctx, -1);
        return "ERR: main: " + what;
    }
    return duk_safe_to_string(ctx, -1);
}

}  // namespace

class TranspilerTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TranspilerTests);
    CPPUNIT_TEST(testHelloWorld);
    CPPUNIT_TEST(testLitEncryptExample);
    CPPUNIT_TEST(testLitDecryptExample);
    CPPUNIT_TEST(testActionKeyWithTemplateAndSpread);
    CPPUNIT_TEST(testTemplateStrings);
    CPPUNIT_TEST(testDestructuringDefaults);
    CPPUNIT_TEST(testSpreadInCallsArraysObjects);
    CPPUNIT_TEST(testArrowCapturesThis);
    CPPUNIT_TEST(testForOfOverArrays);
    CPPUNIT_TEST(testClasses);
    CPPUNIT_TEST(testAsyncArrowsAndMethods);
    CPPUNIT_TEST(testNestedAwaitAndTopLevelAwait);
    CPPUNIT_TEST(testWordsInStringsAndCommentsUntouched);
    CPPUNIT_TEST(testPromisesSettleInOrder);
    CPPUNIT_TEST(testAwaitRejectedPromiseThrows);
    CPPUNIT_TEST(testSetResponseAndReturnValue);
    CPPUNIT_TEST(testSigilActionsAndAliases);
    CPPUNIT_TEST(testPreludeToleratesPinnedNatives);
    CPPUNIT_TEST(testConsoleFormatsLikeNode);
    CPPUNIT_TEST(testFetchReturnsResponse);
    CPPUNIT_TEST(testPlainEs5PassesUnchanged);
    CPPUNIT_TEST(testNonAsciiSourceSurvives);
    CPPUNIT_TEST(testSyntaxErrorHasLineAndColumn);
    CPPUNIT_TEST(testRefusesGenerators);
    CPPUNIT_TEST(testRefusesOversizedSource);
    CPPUNIT_TEST(testMalformedInputIsRefusedNotCrashed);
    CPPUNIT_TEST(testCustomAllocatorIsUsed);
    CPPUNIT_TEST(testOutOfMemoryIsAnErrorNotACrash);
    CPPUNIT_TEST(testReportsTimings);
    CPPUNIT_TEST_SUITE_END();

    static Transpiler& Shared() {
        static std::unique_ptr<Transpiler> transpiler = [] {
            auto created = Transpiler::Create();
            if (!created.ok()) {
                std::cerr << "transpiler load failed: " << created.error().message << "\n";
                std::abort();
            }
            return std::move(created.value());
        }();
        return *transpiler;
    }

    static std::string Lowered(const std::string& source) {
        auto lowered = Shared().Lower(source);
        CPPUNIT_ASSERT_MESSAGE(lowered.ok() ? "" : lowered.error().message, lowered.ok());
        return lowered.value();
    }

    static std::string LowerAndRun(const std::string& source, const std::string& params = "{}") {
        return RunLowered(Lowered(source), params);
    }

public:
    void setUp() override { g_log_lines.clear(); }

    void testPromisesSettleInOrder() {
        // Promise.all, a timer-resolved promise, then-chains and microtask order as in node:
        // node prints ["sync","micro1","micro2","timer10","timer20"] for the order array.
        CPPUNIT_ASSERT_EQUAL(
            std::string(R"([[1,2,3],"late",7,["sync","micro1","micro2","timer10","timer20"],["fulfilled","rejected"]])"),
            LowerAndRun(R"(
                const sleep = (ms, v) => new Promise(resolve => setTimeout(() => resolve(v), ms));
                async function main() {
                  const order = [];
                  setTimeout(() => order.push('timer20'), 20);
                  setTimeout(() => order.push('timer10'), 10);
                  Promise.resolve().then(() => order.push('micro1')).then(() => order.push('micro2'));
                  order.push('sync');
                  const all = await Promise.all([1, Promise.resolve(2), sleep(5, 3)]);
                  const late = await sleep(1, 'late');
                  const chained = await Promise.resolve(3).then(x => x * 2).then(x => x + 1);
                  await sleep(30);
                  const settled = (await Promise.allSettled([Promise.resolve(1), Promise.reject(new Error('no'))]))
                      .map(r => r.status);
                  return [all, late, chained, order, settled];
                })"));
        // A plain (non-async) main returning a promise is awaited too.
        CPPUNIT_ASSERT_EQUAL(std::string(R"("then")"),
                             LowerAndRun("function main() { return Promise.resolve('th').then(s => s + 'en'); }"));
    }
    void testAwaitRejectedPromiseThrows() {
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["caught: boom",42])"),
                             LowerAndRun(R"(async function main() {
                                 let m;
                                 try { await Promise.reject(new Error('boom')); } catch (e) { m = 'caught: ' + e.message; }
                                 const v = await new Promise((ok, fail) => { throw 42; }).catch(x => x);
                                 return [m, v]; })"));
        std::string never = LowerAndRun("async function main() { await new Promise(() => {}); }");
        CPPUNIT_ASSERT_MESSAGE(never, never.find("can never settle") != std::string::npos);
    }
    void testSetResponseAndReturnValue() {
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"a":1})"),
                             LowerAndRun("async function main() { Lit.Actions.setResponse({ response: { a: 1 } }); }"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"("returned")"),
                             LowerAndRun("async function main() { Lit.Actions.setResponse({ response: 'set' }); return 'returned'; }"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"("second")"),
                             LowerAndRun("function main() { Sigil.Actions.setResponse({ response: 'first' });"
                                         " Sigil.Actions.setResponse({ response: 'second' }); }"));
        CPPUNIT_ASSERT_EQUAL(std::string("undefined"), LowerAndRun("function main() {}"));
    }
    void testHelloWorld() {
        CPPUNIT_ASSERT_EQUAL(std::string(R"("Hello World!")"),
                             LowerAndRun(R"(async function main() { return "Hello World!"; })"));
    }
    void testLitEncryptExample() {
        const std::string src =
            "async function main({ pkpId, challenge }) { const result = await Lit.Actions.Encrypt({ pkpId, "
            "message: challenge }); return result; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"("encrypt:{\"pkpId\":\"k1\",\"message\":\"hi\"}")"),
                             LowerAndRun(src, R"({"pkpId":"k1","challenge":"hi"})"));
    }
    void testLitDecryptExample() {
        const std::string src =
            "async function main({ pkpId, ciphertext }) { return await Lit.Actions.Decrypt({ pkpId, ciphertext }); }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"("decrypt:{\"pkpId\":\"k1\",\"ciphertext\":\"00ff\"}")"),
                             LowerAndRun(src, R"({"pkpId":"k1","ciphertext":"00ff"})"));
    }
    void testActionKeyWithTemplateAndSpread() {
        const std::string src =
            "async function main() { const pk = await Lit.Actions.getLitActionPrivateKey(); const wallet = { pk }; "
            "return { wallet_address: `${pk}`, ...wallet }; }";
        CPPUNIT_ASSERT_EQUAL(
            std::string(R"({"wallet_address":"getActionPrivateKey:{}","pk":"getActionPrivateKey:{}"})"),
            LowerAndRun(src));
    }
    void testTemplateStrings() {
        const std::string src =
            "function main({a, b}) { const n = 2; return `a=${a}, sum=${a + b}, nested=${`x${n * 3}`}\\n$`; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"("a=1, sum=3, nested=x6\n$")"), LowerAndRun(src, R"({"a":1,"b":2})"));
    }
    void testDestructuringDefaults() {
        const std::string src =
            "function main({ a = 5, b: { c = 7, d } = {}, ...rest }, [x, , y = 9] = [1, 2]) {"
            "  const [p = 'p', q] = ['', 'q']; let {z = 3} = {};"
            "  return [a, c, d, rest, x, y, p, q, z]; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"([5,7,8,{"e":1,"f":2},1,9,"","q",3])"),
                             LowerAndRun(src, R"({"b":{"d":8},"e":1,"f":2})"));
    }
    void testSpreadInCallsArraysObjects() {
        const std::string src =
            "function add(a, b, c) { return a + b + c; }"
            "function main() { const xs = [1, 2]; const o = { a: 1, b: 2 };"
            "  return { call: add(...xs, 3), arr: [0, ...xs, ...[3]], obj: { ...o, b: 5, c: 6 },"
            "           max: Math.max(...xs), rest: ((...r) => r.length)(1, 2, 3) }; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"call":6,"arr":[0,1,2,3],"obj":{"a":1,"b":5,"c":6},"max":2,"rest":3})"),
                             LowerAndRun(src));
    }
    void testArrowCapturesThis() {
        const std::string src =
            "function Counter() { this.n = 10; this.add = (k) => { this.n += k; return this.n; }; }"
            "function main() { const c = new Counter(); const add = c.add; add(1);"
            "  const o = { v: 4, f() { return [1, 2].map(x => x * this.v); } };"
            "  return [c.n, add(5), o.f()]; }";
        CPPUNIT_ASSERT_EQUAL(std::string("[11,16,[4,8]]"), LowerAndRun(src));
    }
    void testForOfOverArrays() {
        const std::string src =
            "function main() { let total = 0; const seen = [];"
            "  for (const x of [1, 2, 3]) { total += x; }"
            "  for (const [k, v] of [['a', 1], ['b', 2]]) seen.push(k + v);"
            "  for (const ch of 'hey'.split('')) seen.push(ch);"
            "  return { total, seen }; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"total":6,"seen":["a1","b2","h","e","y"]})"), LowerAndRun(src));
    }
    void testClasses() {
        const std::string src =
            "class Animal { constructor(name) { this.name = name; } speak() { return `${this.name} speaks`; }"
            "  static kind() { return 'animal'; } get upper() { return this.name.toUpperCase(); } }"
            "class Dog extends Animal { speak() { return super.speak() + ' woof'; } }"
            "function main() { const d = new Dog('rex');"
            "  return [d.speak(), Dog.kind(), d.upper, d instanceof Animal]; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["rex speaks woof","animal","REX",true])"), LowerAndRun(src));
    }
    void testAsyncArrowsAndMethods() {
        const std::string src =
            "const twice = async x => (await x) * 2; const inc = async (x) => { return await x + 1; };"
            "const o = { async m(v) { return await twice(v); }, async: 1, ['comp' + 'uted']: async function () { return 'c'; } };"
            "class C { async k() { return 'k'; } static async /* async */ s() { return 's'; } }"
            "async function main() { return [await twice(3), await inc(4), await o.m(5), o.async, await o.computed(),"
            "  await new C().k(), await C.s()]; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"([6,5,10,1,"c","k","s"])"), LowerAndRun(src));
    }
    void testNestedAwaitAndTopLevelAwait() {
        const std::string src =
            "const top = await Sigil.Actions.getActionPrivateKey();"
            "async function f() { return 'v'; }"
            "async function main() { for await (const x of [1]) {} return [await await f(), top]; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["v","getActionPrivateKey:{}"])"), LowerAndRun(src));
    }
    void testWordsInStringsAndCommentsUntouched() {
        const std::string src =
            "// async function await comment\n"
            "/* await async */\n"
            "async function main() {\n"
            "  const s = \"async function await x\"; const t = 'await (async)';\n"
            "  const u = `async ${'await'} await`; const r = /async await/.source;\n"
            "  return [s, t, u, r]; }";
        const std::string lowered = Lowered(src);
        for (const char* kept : {"// async function await comment", "/* await async */", "\"async function await x\"",
                                 "'await (async)'", "async await"}) {
            CPPUNIT_ASSERT_MESSAGE(kept, lowered.find(kept) != std::string::npos);
        }
        CPPUNIT_ASSERT_EQUAL(
            std::string(R"js(["async function await x","await (async)","async await await","async await"])js"),
            RunLowered(lowered));
    }
    void testSigilActionsAndAliases() {
        const std::string src =
            "function main() { const A = Sigil.Actions; return [A.signEcdsa({ pkpId: 'k', toSign: [1, 2] }),"
            "  A.signMessage({ pkpId: 'k', message: 'm' }), A.getPublicKey({ pkpId: 'k' }),"
            "  A.getActionWalletAddress({ ipfsId: 'Qm' }), LitActions.getLitActionPublicKey({ ipfsId: 'Qm' }),"
            "  Lit.Actions.getPrivateKey({ pkpId: 'k' }), A.setResponse({ response: 'r' }) === undefined,"
            "  typeof __sigil_op, typeof __sigil_log, LitActions === Lit.Actions]; }";
        CPPUNIT_ASSERT_EQUAL(
            std::string(R"(["signEcdsa:{\"pkpId\":\"k\",\"toSign\":[1,2]}","signMessage:{\"pkpId\":\"k\",\"message\":\"m\"}",)"
                        R"("getPublicKey:{\"pkpId\":\"k\"}","getActionWalletAddress:{\"ipfsId\":\"Qm\"}",)"
                        R"("getActionPublicKey:{\"ipfsId\":\"Qm\"}","getPrivateKey:{\"pkpId\":\"k\"}",true,)"
                        R"("undefined","undefined",true])"),
            LowerAndRun(src));
    }
    void testPreludeToleratesPinnedNatives() {
        std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
        duk_context* ctx = heap.get();
        duk_push_c_function(ctx, FakeOp, 2);
        duk_put_global_string(ctx, "__sigil_op");
        duk_push_c_function(ctx, FakeLog, 1);
        duk_put_global_string(ctx, "__sigil_log");
        std::string error;
        CPPUNIT_ASSERT(Eval(ctx,
                            "['__sigil_op', '__sigil_log'].forEach(function (n) {"
                            "  Object.defineProperty(this, n, { writable: false, configurable: false }); }, this);",
                            error));
        CPPUNIT_ASSERT_MESSAGE(error, Eval(ctx, ShimsSource(), error));
        CPPUNIT_ASSERT_MESSAGE(error, Eval(ctx, PreludeSource(), error));
        CPPUNIT_ASSERT(duk_peval_string(ctx, "Sigil.Actions.getPublicKey({ pkpId: 'k' })") == 0);
        CPPUNIT_ASSERT_EQUAL(std::string(R"(getPublicKey:{"pkpId":"k"})"), std::string(duk_safe_to_string(ctx, -1)));
    }
    void testConsoleFormatsLikeNode() {
        const std::string src =
            "function main() { console.log('a', { x: 1 }, [1, 'b'], 5, undefined, null, true);"
            "  const cyc = {}; cyc.self = cyc; console.error(cyc); console.warn(function named() {}); return 0; }";
        CPPUNIT_ASSERT_EQUAL(std::string("0"), LowerAndRun(src));
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), g_log_lines.size());
        CPPUNIT_ASSERT_EQUAL(std::string(R"(a {"x":1} [1,"b"] 5 undefined null true)"), g_log_lines[0]);
        CPPUNIT_ASSERT_EQUAL(std::string("[object Object]"), g_log_lines[1]);
        CPPUNIT_ASSERT_EQUAL(std::string("[Function: named]"), g_log_lines[2]);
    }
    void testFetchReturnsResponse() {
        const std::string src =
            "async function main() { const r = await fetch('https://example.com/x', { method: 'post', body: 'b' });"
            "  const j = await r.json();"
            "  return [r.status, r.ok, r.headers.get('content-type'), j.echo, await r.text()]; }";
        CPPUNIT_ASSERT_EQUAL(std::string(R"([201,true,"application/json","x","{\"echo\":\"x\"}"])"),
                             LowerAndRun(src));
    }
    void testPlainEs5PassesUnchanged() {
        const std::string es5 = "var o = { a: 1, m: function () { return this.a; } };\nfunction main() { return o.m(); }";
        CPPUNIT_ASSERT_EQUAL(es5, Lowered(es5));
        CPPUNIT_ASSERT_EQUAL(std::string("1"), RunLowered(es5));
        // const in Duktape means var: such code is lowered, so loop closures capture per iteration.
        const std::string with_const =
            "function main() { var fs = []; for (let i = 0; i < 2; i++) { const j = i; fs.push(function () { return j; }); }"
            "  return fs.map(function (f) { return f(); }); }";
        CPPUNIT_ASSERT(Lowered(with_const) != with_const);
        CPPUNIT_ASSERT_EQUAL(std::string("[0,1]"), RunLowered(Lowered(with_const)));
    }
    void testNonAsciiSourceSurvives() {
        // "h\u00e9llo \u00fc" written as UTF-8 in the source, in a template and a comment.
        const std::string src = "/* caf\xc3\xa9 */ const main = () => `h\xc3\xa9llo ${'\xc3\xbc'}`;";
        CPPUNIT_ASSERT_EQUAL(std::string("\"h\xc3\xa9llo \xc3\xbc\""), LowerAndRun(src));
    }
    void testSyntaxErrorHasLineAndColumn() {
        auto lowered = Shared().Lower("var a = 1;\nvar b = ;\n");
        CPPUNIT_ASSERT(!lowered.ok());
        CPPUNIT_ASSERT(lowered.error().kind == ErrorKind::InvalidInput);
        CPPUNIT_ASSERT_EQUAL(std::string("syntax_error"), lowered.error().code);
        CPPUNIT_ASSERT_MESSAGE(lowered.error().message,
                               lowered.error().message.find("line 2, column 9") != std::string::npos);
        // The heap stays usable after an error.
        CPPUNIT_ASSERT_EQUAL(std::string("1"), LowerAndRun("const main = () => 1;"));
    }
    void testRefusesGenerators() {
        auto lowered = Shared().Lower("function* g() { yield 1; }");
        CPPUNIT_ASSERT(!lowered.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("syntax_error"), lowered.error().code);
    }
    void testRefusesOversizedSource() {
        std::string big(MAX_ACTION_SOURCE_BYTES + 1, ' ');
        auto lowered = Shared().Lower(big);
        CPPUNIT_ASSERT(!lowered.ok());
        CPPUNIT_ASSERT(lowered.error().kind == ErrorKind::TooLarge);
        CPPUNIT_ASSERT_EQUAL(std::string("code_too_large"), lowered.error().code);
    }
    void testMalformedInputIsRefusedNotCrashed() {
        const std::vector<std::string> bad = {
            std::string("var a = '\0';\x01\xff\xfe", 15), "`unterminated ${", "async function () {", "await;",
            "let x = ;", "class { }", std::string(20000, '(') + "1" + std::string(20000, ')'), std::string(5000, '[')};
        for (const auto& source : bad) {
            auto lowered = Shared().Lower(source);
            CPPUNIT_ASSERT_MESSAGE(source.substr(0, 40), !lowered.ok());
            CPPUNIT_ASSERT_MESSAGE(lowered.error().message, lowered.error().kind == ErrorKind::InvalidInput);
        }
        CPPUNIT_ASSERT_EQUAL(std::string("2"), LowerAndRun("function main() { return 2; }"));
    }
    void testCustomAllocatorIsUsed() {
        struct Counter {
            std::size_t calls = 0;
        } counter;
        TranspilerAllocator allocator;
        allocator.alloc = [](void* udata, std::size_t size) -> void* {
            ++static_cast<Counter*>(udata)->calls;
            return std::malloc(size);
        };
        allocator.realloc = [](void* udata, void* ptr, std::size_t size) -> void* {
            ++static_cast<Counter*>(udata)->calls;
            return std::realloc(ptr, size);
        };
        allocator.free = [](void*, void* ptr) { std::free(ptr); };
        auto created = Transpiler::Create(&counter, &allocator);
        CPPUNIT_ASSERT(created.ok());
        const std::size_t after_load = counter.calls;
        CPPUNIT_ASSERT(after_load > 1000);
        CPPUNIT_ASSERT(created.value()->Lower("const main = () => `${1}`;").ok());
        CPPUNIT_ASSERT(counter.calls > after_load);
    }
    void testOutOfMemoryIsAnErrorNotACrash() {
        // Refuses any allocation once `fail` is set, as the sandbox's capped allocator does.
        struct Gate {
            bool fail = false;
        } gate;
        TranspilerAllocator allocator;
        allocator.alloc = [](void* udata, std::size_t size) -> void* {
            return static_cast<Gate*>(udata)->fail ? nullptr : std::malloc(size);
        };
        allocator.realloc = [](void* udata, void* ptr, std::size_t size) -> void* {
            if (static_cast<Gate*>(udata)->fail && size > 0) return nullptr;
            return std::realloc(ptr, size);
        };
        allocator.free = [](void*, void* ptr) { std::free(ptr); };
        auto created = Transpiler::Create(&gate, &allocator);
        CPPUNIT_ASSERT(created.ok());
        gate.fail = true;
        auto lowered = created.value()->Lower("const main = async () => [`${await 1}`, ...[2]];");
        CPPUNIT_ASSERT(!lowered.ok());
        CPPUNIT_ASSERT_MESSAGE(lowered.error().code, lowered.error().code == "transpiler_failed" ||
                                                         lowered.error().code == "syntax_error");
        gate.fail = false;
        CPPUNIT_ASSERT(created.value()->Lower("const main = async () => [`${await 1}`, ...[2]];").ok());
    }
    void testReportsTimings() {
        using Clock = std::chrono::steady_clock;
        auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
        auto t0 = Clock::now();
        auto fresh = Transpiler::Create();
        CPPUNIT_ASSERT(fresh.ok());
        std::cerr << "\n  transpiler load: " << ms(Clock::now() - t0) << " ms\n";

        const std::string examples[] = {
            R"(async function main() { return "Hello World!"; })",
            "async function main({ pkpId, challenge }) { const result = await Lit.Actions.Encrypt({ pkpId, message: "
            "challenge }); return result; }",
            "async function main({ pkpId, ciphertext }) { return await Lit.Actions.Decrypt({ pkpId, ciphertext }); }",
            "async function main() { const pk = await Lit.Actions.getLitActionPrivateKey(); const wallet = { pk }; "
            "return { wallet_address: `${pk}`, ...wallet }; }"};
        for (const auto& example : examples) {
            t0 = Clock::now();
            CPPUNIT_ASSERT(fresh.value()->Lower(example).ok());
            std::cerr << "  lower " << example.size() << " B example: " << ms(Clock::now() - t0) << " ms\n";
        }
        std::string big;
        for (int i = 0; big.size() < 50 * 1024; ++i) {
            big += "class K" + std::to_string(i) + " { constructor(a = 1, ...r) { this.a = a; this.r = r; }\n"
                   "  async m({ x, y = 2 }, [p, q]) { const s = `${x}-${y}-${p}`; for (const v of [p, q]) { "
                   "await this.f(v); } return { s, ...this, arr: [...this.r, x] }; }\n"
                   "  f(v) { return (w) => v + w + this.a; } }\n";
        }
        t0 = Clock::now();
        CPPUNIT_ASSERT(fresh.value()->Lower(big).ok());
        std::cerr << "  lower " << big.size() << " B modern script: " << ms(Clock::now() - t0) << " ms\n";
        std::string es5;
        for (int i = 0; es5.size() < 50 * 1024; ++i) {
            es5 += "function F" + std::to_string(i) + "(a, b) { var s = 'x' + a; for (var k in b) { s += b[k]; }"
                   " return { s: s, n: [a, b].length }; }\n";
        }
        t0 = Clock::now();
        auto same = fresh.value()->Lower(es5);
        CPPUNIT_ASSERT(same.ok() && same.value() == es5);
        std::cerr << "  lower " << es5.size() << " B ES5 script (passes as is): " << ms(Clock::now() - t0) << " ms\n";
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(TranspilerTests);
