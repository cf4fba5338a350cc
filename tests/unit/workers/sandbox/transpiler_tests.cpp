#include <cppunit/extensions/HelperMacros.h>
#include <duktape.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/duk_heap.h"
#include "workers/sandbox/natives/bigint_native.h"
#include "workers/sandbox/natives/crypto.h"
#include "workers/sandbox/transpiler.h"
#include "workers/sandbox/natives/web_crypto.h"
#include "workers/sandbox/natives/web_globals.h"

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

using sigil::test::HeapFree;

bool Eval(duk_context* ctx, std::string_view code, std::string& error) {
    if (duk_peval_lstring(ctx, code.data(), code.size()) != 0) {
        error = duk_safe_to_string(ctx, -1);
        duk_pop(ctx);
        return false;
    }
    duk_pop(ctx);
    return true;
}

// Runs lowered `code` in a fresh heap with shims, prelude and fake natives (and ethers after the
// prelude, as a run has it, when `with_ethers`), calls main(JSON.parse(params)) and returns
// JSON.stringify of its result ("ERR: ..." on failure).
std::string RunLowered(const std::string& code, const std::string& params = "{}", bool bigint_natives = false,
                       bool with_ethers = false) {
    std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
    duk_context* ctx = heap.get();
    if (bigint_natives) InstallBigIntNatives(ctx);
    duk_push_c_function(ctx, FakeOp, 2);
    duk_put_global_string(ctx, "__sigil_op");
    duk_push_c_function(ctx, FakeLog, 1);
    duk_put_global_string(ctx, "__sigil_log");
    InstallWebGlobalsNatives(ctx);  // getrandom and the UTF-8 codec
    InstallWebCryptoNatives(ctx);   // crypto.subtle's
    std::string error;
    if (!Eval(ctx, ShimsSource(), error)) return "ERR: shims: " + error;
    if (!Eval(ctx, LowerRuntimeSource(), error)) return "ERR: lower runtime: " + error;
    if (!Eval(ctx, WebGlobalsSource(), error)) return "ERR: globals: " + error;
    if (!Eval(ctx, WebPackagesSource(), error)) return "ERR: web packages: " + error;
    if (!Eval(ctx, PreludeSource(), error)) return "ERR: prelude: " + error;
    if (with_ethers && !Eval(ctx, EthersSource(), error)) return "ERR: ethers: " + error;
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
    CPPUNIT_TEST(testOptionalChaining);
    CPPUNIT_TEST(testNullishAndLogicalAssignment);
    CPPUNIT_TEST(testExponentAndNumericSeparators);
    CPPUNIT_TEST(testOptionalCatchBinding);
    CPPUNIT_TEST(testClassFields);
    CPPUNIT_TEST(testPrivateMembers);
    CPPUNIT_TEST(testAsyncArrowMainAndMethods);
    CPPUNIT_TEST(testRestSpreadDefaultsTemplates);
    CPPUNIT_TEST(testBracelessLoopsWithClosures);
    CPPUNIT_TEST(testBigIntArithmetic);
    CPPUNIT_TEST(testBigIntComparisonsBitwiseTruth);
    CPPUNIT_TEST(testBigIntConversionsAndStrings);
    CPPUNIT_TEST(testObjectSpreadInBigIntCode);
    CPPUNIT_TEST(testBigIntErrorsAsInV8);
    CPPUNIT_TEST(testBigIntVectorsFromNode);
    CPPUNIT_TEST(testBigIntDecimalThroughTheNative);
    CPPUNIT_TEST(testEthersReadsBigIntsAsNodeDoes);
    CPPUNIT_TEST(testBubleWorkarounds);
    CPPUNIT_TEST(testOptionalCatchInACompatShape);
    CPPUNIT_TEST(testModernSyntaxErrorsKeepTheirLocation);
    CPPUNIT_TEST(testOnlyCodeMentioningBigIntIsRewritten);
    CPPUNIT_TEST(testScansAreLinearInTheSource);
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
            "async function main() { const A = Sigil.Actions; return [A.signEcdsa({ pkpId: 'k', toSign: [1, 2] }),"
            "  A.signMessage({ pkpId: 'k', message: 'm' }), A.getPublicKey({ pkpId: 'k' }),"
            "  A.getActionWalletAddress({ ipfsId: 'Qm' }), await LitActions.getLitActionPublicKey({ ipfsId: 'Qm' }),"
            "  await Lit.Actions.getPrivateKey({ pkpId: 'k' }), A.setResponse({ response: 'r' }) === undefined,"
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
        InstallWebGlobalsNatives(ctx);  // getrandom and the UTF-8 codec
        InstallWebCryptoNatives(ctx);   // crypto.subtle's
        CPPUNIT_ASSERT_MESSAGE(error, Eval(ctx, ShimsSource(), error));
        CPPUNIT_ASSERT_MESSAGE(error, Eval(ctx, WebGlobalsSource(), error));
        CPPUNIT_ASSERT_MESSAGE(error, Eval(ctx, WebPackagesSource(), error));
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
            "  const t = await r.text(); const j = JSON.parse(t);"
            "  return [r.status, r.ok, r.headers.get('content-type'), j.echo, t]; }";
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
    void testOptionalChaining() {
        const std::string src = R"JS(const main = () => { const o = { v: 7, a: { b: { c: 1 } }, m() { return this.v; }, k: { f() { return this === o.k; } } }; const n = null; let calls = 0; const f = () => ++calls;
  return [o?.a.b.c, n?.a.b.c, o.x?.y.z, o?.["a"]?.b?.["c"], o.m?.(), o.nope?.(), n?.m(), o?.k.f(), o.k?.f?.(), o?.["m"]?.(), n?.a[f()].b(f()), calls, (n?.x)?.y]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([1,null,null,1,7,null,null,true,true,7,null,0,null])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testNullishAndLogicalAssignment() {
        const std::string src = R"JS(const main = () => { const z = 0, e = '', n = null; let c = 0; let a = null, b = 0, d = 1; a ??= 5; b ||= 6; d &&= 7;
  const o = { p: null, q: 1, r: 0 }; let k = 0; const key = () => (k++, 'p'); o[key()] ??= 'set'; o.q ||= 'no'; o.r ||= 'yes'; o.q &&= 'and';
  return [z ?? 1, e ?? 'x', n ?? 'd', undefined ?? n ?? 'e', z ?? ++c, c, a, b, d, o, k]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([0,"","d","e",0,0,5,6,7,{"p":"set","q":"and","r":"yes"},1])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testExponentAndNumericSeparators() {
        const std::string src = R"JS(const main = () => { let x = 3; x **= 3; return [2 ** 10, (-2) ** 3, 2 ** 3 ** 2, x, 1_000_000, 0xFF_FF, 0b1010_1010, 1_0.5_0]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([1024,-8,512,27,1000000,65535,170,10.5])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testOptionalCatchBinding() {
        const std::string src = R"JS(function parse(t) { try { return JSON.parse(t); } catch { return null; } }
  const main = () => { let r = 'a'; try { throw new Error('x'); } catch { r += 'b'; } finally { r += 'c'; } return [r, parse('{'), parse('[1]')]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS(["abc",null,[1]])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testClassFields() {
        const std::string src = R"JS(class A { x = 1; y = this.x + 1; ['comp' + 'uted'] = 'c'; static count = 0; static label = 'A' + A.count; static { A.count = 10; } constructor(z) { this.z = z; A.count++; } sum() { return this.x + this.y + this.z; } }
  class B extends A { w = 5; arrow = () => this.w; constructor() { super(100); this.after = this.w * 2; } }
  class C extends A { q = 9; }
  const D = class { static s = 'static on an expression'; i = 'i'; };
  const main = () => { const a = new A(3), b = new B(), c = new C(1); return [a.sum(), a.computed, b.sum(), b.arrow.call(null), b.after, A.count, A.label, c.q, c.z, Object.keys(a), D.s, new D().i]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([6,"c",103,5,10,13,"A0",9,1,["x","y","computed","z"],"static on an expression","i"])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testPrivateMembers() {
        const std::string src = R"JS(class Counter { #n = 0; static #made = 0; #step() { this.#n += 2; } constructor() { Counter.#made++; } inc() { this.#step(); return this.#n; } static made() { return Counter.#made; } has(o) { return #n in o; } }
  const main = () => { const c = new Counter(); c.inc(); return [c.inc(), Counter.made(), c.has(c), c.has({}), JSON.stringify(c), Object.keys(c)]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([4,1,true,false,"{}",[]])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testAsyncArrowMainAndMethods() {
        const std::string src = R"JS(const twice = async (x) => x * 2; const o = { async m(v) { return (await v) + 1; } }; class K { async k() { return 'k'; } static async s() { return 's'; } }
  const main = async (p) => [await twice(21), await o.m(1), await new K().k(), await K.s(), p.who ?? 'nobody'];)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([42,2,"k","s","me"])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testRestSpreadDefaultsTemplates() {
        const std::string src = R"JS(const tag = (s, ...v) => s.raw.join('|') + '/' + s.join('|') + v.join(',');
const main = () => { const { a = 1, b: { c = 2 } = {}, ...r } = { d: 4, e: 5 }; const [x = 5, , y = 6, ...zs] = [undefined, 0, null, 7, 8]; const o = { ...r, f: 6, ...{ g: 7 } };
  return [a, c, r, x, y, zs, o, `t${a}${`in${c + 1}`}`, tag`x\n${1}y${2}z`, [...'hé', ...new Set([1, 1, 2])], Math.max(...[1, 5], ...[9])]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([1,2,{"d":4,"e":5},5,null,[7,8],{"d":4,"e":5,"f":6,"g":7},"t1in3","x\\n|y|z/x\n|y|z1,2",["h","é",1,2],9])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testBracelessLoopsWithClosures() {
        const std::string src = R"JS(const main = () => { const fns = []; for (const k of ['a', 'b']) fns.push(() => k); for (let i = 0; i < 2; i++) fns.push(() => i); const out = {}; for (const k of ['x', 'y']) if (k !== 'y') out[k] = (() => k)(); return [fns.map((f) => f()), out]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([["a","b",0,1],{"x":"x"}])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testBigIntArithmetic() {
        const std::string src = R"JS(const main = () => { const a = 2n ** 200n + 12345n, b = -987654321987654321n; let x = 5n; const y = x++; x += 10n; x *= 3n; x <<= 2n; const o = { v: 1n }; o.v++; o.v -= 5n;
  return [a + b, a - b, a * b, a / b, a % b, -b, 7n / -2n, -7n % 2n, 3n ** 0n, 0xffn, 0o17n, 0b101n, 1_000n, y, x, o.v].map(String); };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS(["1606938044258990275541962092341162602522202006128470847659400","1606938044258990275541962092341162602522203981437114822968042","-1587099304578780291727680466054949727863609535793370764494149415483878936238441","-1627024768164865076198972919241906240868813","297120869881722748","987654321987654321","-3","-1","1","255","15","5","1000","5","192","-3"])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testBigIntComparisonsBitwiseTruth() {
        const std::string src = R"JS(const main = () => { const a = 5n, m = 0b1100n, n = -0b1010n; let steps = 0, i = 3n; while (i) { i--; steps++; }
  return [a < 6n, a > 4, a >= 5.5, a == 5, a === 5, a === 5n, a !== 5n, '5' == a, 2n > 1.5, 0n == false, !0n, 0n ? 'y' : 'n', 0n || 'or', steps, typeof a, typeof 1, typeof BigInt, typeof notDeclared,
    String(m & n), String(m | n), String(m ^ n), String(~m), String(m << 70n), String(n >> 2n), String(-1n >> 100n)]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([true,true,false,true,false,true,false,true,true,true,true,"n","or",3,"bigint","number","function","undefined","4","-2","-6","-13","14167099448608935641088","-3","-1"])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testBigIntConversionsAndStrings() {
        const std::string src = R"JS(const main = () => { const x = 255n, y = -(2n ** 70n); return [BigInt(42), BigInt('0x1f'), BigInt(' 123 '), BigInt(true), BigInt.asUintN(8, 257n), BigInt.asUintN(64, -1n), BigInt.asIntN(8, 255n), BigInt.asIntN(64, 2n ** 63n), Number(2n ** 60n), Number(-12n)].map(String)
  .concat([x.toString(16), x.toString(2), y.toString(36), `v=${x}`, 'c' + x, x + 'd']); };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS(["42","31","123","1","1","18446744073709551615","-1","-9223372036854775808","1152921504606847000","-12","ff","11111111","-6x5kxtvuwilukg","v=255","c255","255d"])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testObjectSpreadInBigIntCode() {
        // zod's ZodObject.strict(): {...a, ...(cond ? {...} : {})} in a bundle that mentions BigInt, where
        // the spread's argument is rewritten (the comparison): an object spread copies own properties
        // and must not iterate its argument (a plain object is not iterable).
        const std::string src = R"JS(const main = () => { const big = 1n; const f = (m) => ({ a: 1, ...m !== void 0 ? { m, b: big + 1n } : {} });
  const g = (o) => ({ ...o, ...(o.k === 2 ? { k: 3 } : null), list: [...[o.k], ...'ab'] });
  return [JSON.stringify(f(undefined)), Object.keys(f('x')).join(), String(f('x').b), JSON.stringify(g({ k: 2, z: 0 }))]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS(["{\"a\":1}","a,m,b","2","{\"k\":3,\"z\":0,\"list\":[2,\"a\",\"b\"]}"])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testBigIntErrorsAsInV8() {
        const std::string src = R"JS(const main = () => { const t = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
  return [t(() => 1n + 1), t(() => 2 * 3n), t(() => 1n / 0n), t(() => 5n % 0n), t(() => JSON.stringify({ a: 1n })), t(() => BigInt(1.5)), t(() => BigInt('12x')), t(() => +1n), t(() => Math.max(1n)), t(() => new BigInt(1)), t(() => 1n >>> 0n), t(() => BigInt(undefined))]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS(["TypeError: Cannot mix BigInt and other types, use explicit conversions","TypeError: Cannot mix BigInt and other types, use explicit conversions","RangeError: Division by zero","RangeError: Division by zero","TypeError: Do not know how to serialize a BigInt","RangeError: The number 1.5 cannot be converted to a BigInt because it is not an integer","SyntaxError: Cannot convert 12x to a BigInt","TypeError: Cannot convert a BigInt value to a number","TypeError: Cannot convert a BigInt value to a number","TypeError: BigInt is not a constructor","TypeError: BigInts have no unsigned right shift, use >> instead","TypeError: Cannot convert undefined to a BigInt"])JS"), LowerAndRun(src, R"({"who":"me"})"));
    }
    void testBigIntVectorsFromNode() {
        // 16 random pairs up to 300 bits (a fixed seed); expected answers computed by Node's native BigInt.
        const std::string src = R"JS(const PAIRS = [["55526420859554012230418893495655442661648574352","-2975789203337424090600939738437919170"],["-356199648461017438013962804","4710282543109179724479927492961768845128457"],["68600672776241904875941230301321653838","234702038402229644105367040057101559657663382379"],["83614779738936044761888","9649868652783579086389400955954"],["10917491125000826613077420145758","-4675427816076945584442241719043500487994380043069249445886607078472236620708"],["1842542846447137338758885561325277122189664353","-6"],["8645557198810505269630081615766639","-2000451905652549516969896349169042935040455943067"],["334213883228","3556674"],["-16","27111518523325699840730476368554377247289963188113740028683145"],["628344687947162045916998060789919351288414871403257029807006398543139744112","39645822171462016915823127869284159569747"],["-148650161840285128488418885726557344172","3298202108534099714697171889619135235097700988669640662031109852177163367879920055863"],["-2659318075490273944220444278857414294533639418436270474260923008314586473211935114","96071002228146793647398558358137598638157527022214910873815800699438350749"],["0","252392186864429254765207528196398710514163912543700547692548498"],["36403742815708032888035554381090474702147060751887220556393948901528735407","71791415659215594023762240750358824029662524980991894818736280369"],["-2132467221855587227382595289209517715779490630348444478691744243146925864646088922575639","163437259243484094209542896643137282510558064085161588152337407536657746683287445965329196"],["-204426","-374611005801631425594956069318398647992007453119756972"]];
const main = () => PAIRS.map(([s, t]) => { const a = BigInt(s), b = BigInt(t), k = BigInt.asUintN(7, b);
  return [a + b, a - b, a * b, a / b, a % b, a & b, a | b, a ^ b, a << k, a >> k, a ** 3n, BigInt.asIntN(64, a), a < b, a == b].map(String).join(' '); }).join(';');)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS("55526420856578223027081469405054502923210655182 55526420862529801433756317586256382400086493522 -165234923693830761053470554642010566179781171524322245999821886655536134287911127840 -18659393211 1432582612031869630026817955983819482 55526420856583741438208064479754692734700815888 -5518411126595074700189811490160706 -55526420856589259849334659554454882546190976594 256070418731320100546610473078894444601432847914105975712889438208 12040373225254578108682424071 171198139803660090690948257948469248160342777849004174332793309405837842755285852803161309976848963767959920064125140990255748012489438302208 -3807648060122650736 false false;4710282543109179368280279031944330831165653 -4710282543109180080679575953979206859091261 -1677800986007557033774574498853841622416807832630912584911000999913428 0 -356199648461017438013962804 4710282543109179678521838432009968926884104 -310241559400065638095718451 -4710282543109179988763397832075607022602555 -182374220012040928263148955648 -695702438400424683621022 -45193966519978937221262031204296795915600908535215289551494290920759943228294464 6733054141480486348 true false;234702038470830316881608944933042789958985036217 -234702038333628971329125135181160329356341728541 16100717736348317251562066812437648728159659468602725660427687615797937659133266920602 0 68600672776241904875941230301321653838 47291440114680907274456759187400049226 234702038423538876766928037658586030771584986991 234702038376247436652247130384129271584184937765 11131095554670516089743705241094793798996324618168265578052107857035264 422784 322838354267401184517256850461558242857408173428579432974498359960277133066394337869567815925796628040202482476472 -6758265129220411826 true false;9649868736398358825325445717842 -9649868569168799347453356194066 806871641912162474897098315264176133059514921505881152 0 83614779738936044761888 5391064052079961382944 9649868731007294773245484334898 9649868725616230721165522951954 94141872718734617500162737363969114112 74264842 584586995800855175288643832500650796137177064549235425974052098179072 -4311147189352713440 true false;-4675427816076945584442241719043500487994380032151758320885780465394816474950 4675427816076945584442241719043500487994380053986740570887433691549656766466 -51043941687602050505031415157984237364256869726175147376471811169094302141204740240985148405135478721156664 0 10917491125000826613077420145758 142460139930929870608557712476 -4675427816076945584442241719043500487994380032294218460816710336003374187426 -4675427816076945584442241719043500487994380032436678600747640206611931899902 54060797568725255163547137160475302307253286472674514567168 2204 1301273371255408940220513335096491582341804299049031973920662685141497544588107234120860859512 -2665494457105646498 false false;1842542846447137338758885561325277122189664347 1842542846447137338758885561325277122189664359 -11055257078682824032553313367951662733137986118 -307090474407856223126480926887546187031610725 3 1842542846447137338758885561325277122189664352 -5 -1842542846447137338758885561325277122189664357 9796638139723049459879317531034012986689300629489158953744275720697975298496397312 346543793 6255366891932159228459627268772973078219874677209902304648355658496388899250259205513528458749541507415776415266194051837294176432114977 -561140958546026399 false false;-2000451905652540871412697538663773304958840176428 2000451905652558162527095159674312565122071709706 -17295021373788593174663440766636856848212860477529613164029403997643483516941941813 0 8645557198810505269630081615766639 2763657172099590725097677179094117 -2000451905652543635069869638254498402636019270545 -2000451905652546398727041737845223500313198364662 21919091544759253272879540482762592137856665718194035621812502528 3410 646217872649921461785273104594321776173751415431858166375202890789432394249916795322824914261079575119 1830136467099985007 false false;334217439902 334210326554 1188689828916063672 93968 340796 3278144 334214161758 334210883614 24660631879150260434312250785792 0 37331329719459903820375089769468352 334213883228 false false;27111518523325699840730476368554377247289963188113740028683129 -27111518523325699840730476368554377247289963188113740028683161 -433784296373211197451687621896870035956639411009819840458930320 0 -16 27111518523325699840730476368554377247289963188113740028683136 -7 -27111518523325699840730476368554377247289963188113740028683143 -8192 -1 -4096 -16 true false;628344687947162045916998060789919390934237042865273945630134267827299313859 628344687947162045916998060789919311642592699941240113983878529258980174365 24911241760735979391345035259854617816352534034199037347395868831666985227274854735967107069276210454633361596579664 15848950873806298254942798406455963 11364029876521096889629198867869957192751 17867648916421397178227523638596957940048 628344687947162045916998060789919373066588126443876767402610629230341373811 628344687947162045916998060789919355198939210022479589175086990633383433763 6076976935016170256559171111550037874405500756866868320178322973320366243298618900125841403408285696 64969317983821815824751805121840344748354016036719 248081194112640219430070960569590753668961018000841749753533336792115723117884642396088041706327409543084965846185230869576545016760942621166113563519393077004987801852171967988263700572424392669366730839703494479758943612928 451713785422981488 false false;3298202108534099714697171889619135235097700988520990500190824723688744482153362711691 -3298202108534099714697171889619135235097700988818290823871394980665582253606477400035 -490278277215563579130138737516842175534899816759504257544752235896953414048090436430841624755786801633145898750499157480436 0 -148650161840285128488418885726557344172 3298202108534099714697171889619135235097700988532309879876746716425811683482574874132 -11319379685921992737067201329212162441 -3298202108534099714697171889619135235097700988543629259562668709162878884811787036573 -5355686507779776228762149172338596181546211309042794496 -4125870807233509532054 -3284703393104841951359077280716625660126570491687669328897366884159122238197263332144090773867206828259518775776448 3849169089019866708 true false;-2659317979419271716073650631458855936396040780278743452046012134498785773773584365 -2659318171561276172367237926255972652671238056593797496475833882130387172650285863 -255483352755777151287426782108494737745907926823161886780782707191768803970316590793216907379533979749030575993442593752684701876237368171301564878961300386 -27680757 -8066483988937661102795488454067269985213405924586170166393003449648098121 7269372601233984986793532289499231567874196493109913890138971540221149204 -2659317986688644317307635618252388225895272348152939945155926024637757313994733569 -2659317993958016918541620605045920515394503916027136438265839914776728854215882773 -1427710520486548219563467049035362330268111609255030143395134261435635622776155173938003968 -4953365913574162766748004181044947904597296227582302827874055147756983477 -18806624635367712698203701078144015880218586846549422166141471292875699363414904155613189462503133554994272523661795275370644199142581087731552508821439782286397564864305356762008634847709430550583317061024744970248235056100536535086886873261544 -6367670506135533962 true false;252392186864429254765207528196398710514163912543700547692548498 -252392186864429254765207528196398710514163912543700547692548498 0 0 0 0 252392186864429254765207528196398710514163912543700547692548498 252392186864429254765207528196398710514163912543700547692548498 0 0 0 0 true false;36403742887499448547251148404852715452505884781549745537385843720265015776 36403742743916617228819960357328233951788236722224695575402054082792455038 2613476232033678852843846951186827593225049865615544536048998080129625765326583911962069000371440510989096217077577233794881142895569325183 507076542 17948339037990331511227036953999282157537234801681439042073731409 4119990252845275208941813896166550106572009147238955250622824993 36403742883379458294405873195910901556339334674977736390146888469642190783 36403742879259468041560597986969087660172784568405727242907933219019365790 20493485322464258469213652353287862309727366927074037933021716050655450625120960442793984 64666037530450695825897530221998143499723462838146340481404 48243422773100678767276670169204691506276885432419388921440469059369810331070875915333144737041652258901089169586126082529461551216614826755982136071363588105660755640874054790314798183289784576945835040790718350064464143 -3244384804904989009 false false;161304792021628506982160301353927764794778573454813143673645663293510820818641357042753557 -165569726465339681436925491932346800226337554715510032631029151779804672547933534887904835 -348524598166643920223869131936102473054189613589180359450505290923002704994604610963962396629017546695016473649130462489233123669205782820862111266176324189619035726802845056244 0 -2132467221855587227382595289209517715779490630348444478691744243146925864646088922575639 163437250695234353444537585833432037848829337385989896682140634685116893860319792294150184 -2132458673605846462377284479504273054050763931176753008494971391606073041678435251396627 -165569709368840199906914870312936310902880101317166649690635606076722966901998227545546811 -37514760100502419769276671781922980991817873018408935917374711355442457442678679702610925941973581824 -121216727498880756421760639182680149348214549169622641710006078207409579173 -9697216528632018853299459764379574145357863624006961343148364392828188840894791148536862616711306837079333100252984203985034881309214938152991666048407397441137716858389490874192900573314225704479314853744333579825471111227585447259607810670323434541147625642119 3581969949813558505 true false;-374611005801631425594956069318398647992007453119961398 374611005801631425594956069318398647992007453119552546 76580229472004305808674489426482962014414115611459438758072 0 -204426 -374611005801631425594956069318398647992007453119823532 -137866 374611005801631425594956069318398647992007453119685666 -3954173913608642938695755759616 -1 -8542960388620776 -204426 false false")JS"), LowerAndRun(src));
    }
    void testBigIntDecimalThroughTheNative() {
        // The same values through JSBI's conversion and through OpenSSL (__sigil_bigint_hex_to_dec):
        // negative, around the 30-bit digit boundary, 2^64, 300 and 2000 bits.
        const std::string src =
            "const main = () => { const v = [0n, -1n, 2n ** 30n - 1n, 2n ** 30n, -(2n ** 30n), 2n ** 64n, -(3n ** 190n),"
            " 7n ** 712n, BigInt('0x' + 'f'.repeat(500))]; return v.map((x) => x.toString() + '/' + String(x)).join(','); };";
        const std::string lowered = Lowered(src);
        const std::string with_jsbi = RunLowered(lowered);
        const std::string with_native = RunLowered(lowered, "{}", true);
        CPPUNIT_ASSERT_EQUAL(with_jsbi, with_native);
        // Spot checks against values Node prints.
        CPPUNIT_ASSERT_MESSAGE(with_native, with_native.find("\"0/0,-1/-1,1073741823/1073741823,1073741824/1073741824,"
                                                             "-1073741824/-1073741824,18446744073709551616/18446744073709551616,") == 0);
        CPPUNIT_ASSERT_MESSAGE(with_native, with_native.find("-4498196224760364601242719132174628305800834098010033971355568455673974002968757862019419449/") != std::string::npos);
    }
    void testEthersReadsBigIntsAsNodeDoes() {
        // BigInts are JSBI instances (Arrays of 30-bit digits); ethers v5 (ethers_lower.mjs) must
        // read them as Node's ethers v5 reads native bigints: 300n was "invalid BigNumber value",
        // 2n ** 30n + 5n (digits [5, 1]) passed isBytes and became 1281, an RLP item or an ABI
        // array was its digits. Expected: what Node answers for the same code.
        const std::string src = R"JS(const main = () => {
  const u = ethers.utils, BN = ethers.BigNumber, big = 2n ** 30n + 5n;
  const t = (f) => { try { return String(f()); } catch (e) { return 'throws: ' + e.message.split(' (')[0]; } };
  return [t(() => BN.from(300n)), t(() => BN.from(BigInt('345678000000'))), t(() => BN.from(big)), t(() => BN.from(-(2n ** 100n))),
    t(() => u.defaultAbiCoder.encode(['uint256'], [big])), t(() => u.formatUnits(1500000000000000000n, 18)), t(() => BN.from(10).add(5n)),
    t(() => u.hexlify(big)), t(() => u.isBytes(big)), t(() => u.arrayify(5n)), t(() => u.RLP.encode(big)),
    t(() => u.defaultAbiCoder.encode(['uint256[]'], [big])), t(() => u.deepCopy({ a: big }).a === big),
    t(() => typeof BN.from(7).toBigInt()), t(() => BN.from(7).toBigInt() * big)].join('|');
};)JS";
        CPPUNIT_ASSERT_EQUAL(std::string("\"300|345678000000|1073741829|-1267650600228229401496703205376|"
                                         "0x0000000000000000000000000000000000000000000000000000000040000005|1.5|15|0x40000005|false|"
                                         "throws: invalid arrayify value|throws: RLP object must be BytesLike|"
                                         "throws: expected array value|true|bigint|7516192803\""),
                             RunLowered(Lowered(src), "{}", false, true));
    }
    void testBubleWorkarounds() {
        // buble 0.20 alone: sibling loops destructuring the same names lost declarations, fields
        // before a nested super() were lost, and the s flag reached Duktape.
        const std::string src = R"JS(class A { constructor(x) { this.x = x; } } class B extends A { y = this.x + 1; constructor(x) { if (x > 0) { super(x); } else { super(-x); } } }
  const main = () => { const r = []; for (const [k, v] of Object.entries({ a: 1 })) r.push(() => k + v); for (const [k, v] of Object.entries({ b: 2 })) r.push(() => k + v);
    const nl = String.fromCharCode(10); return [r.map((f) => f()), new B(-4).y, /x.y/s.test('x' + nl + 'y'), /x.y/.test('x' + nl + 'y')]; };)JS";
        CPPUNIT_ASSERT_EQUAL(std::string(R"JS([["a1","b2"],5,true,false])JS"), LowerAndRun(src));
    }
    void testOptionalCatchInACompatShape() {
        // buble 0.20 alone crashed on `catch {` ("cannot read property 'type' of null"), as on a
        // published 4 KB action (compat 07_userWallet.js has this shape).
        const std::string src =
            "const OWNER = '0xabc';\n"
            "function ok(sig) {\n"
            "  try { if (!sig) throw new Error('no'); return sig.toLowerCase() === OWNER; } catch {\n"
            "    return false;\n  }\n}\n"
            "const main = async ({ sig }) => ({ ok: ok(sig), none: ok(undefined) });";
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"ok":true,"none":false})"), LowerAndRun(src, R"({"sig":"0xABC"})"));
    }
    void testModernSyntaxErrorsKeepTheirLocation() {
        auto chain = Shared().Lower("const a = {};\nconst b = a?.;\n");
        CPPUNIT_ASSERT(!chain.ok());
        CPPUNIT_ASSERT(chain.error().kind == ErrorKind::InvalidInput);
        CPPUNIT_ASSERT_EQUAL(std::string("syntax_error"), chain.error().code);
        CPPUNIT_ASSERT_MESSAGE(chain.error().message, chain.error().message.find("line 2, column 14") != std::string::npos);
        // A BigInt with a fraction, in a class field, on line 3.
        auto big = Shared().Lower("class A {\n  x = 1;\n  y = 1.5n;\n}");
        CPPUNIT_ASSERT(!big.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("syntax_error"), big.error().code);
        CPPUNIT_ASSERT_MESSAGE(big.error().message, big.error().message.find("line 3, column") != std::string::npos);
        // Generators inside modern code: refused where they are.
        auto gen = Shared().Lower("const x = a ?? b;\nconst g = function* () { yield 1; };");
        CPPUNIT_ASSERT(!gen.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("syntax_error"), gen.error().code);
        CPPUNIT_ASSERT_MESSAGE(gen.error().message, gen.error().message.find("line 2, column 11: generators") != std::string::npos);
    }
    // Sources built to make a scan of lower.js or buble quadratic lower (or are refused) in about
    // the time of one pass: 720 KB of `while(` took 120 s in sigil-lowerer (V8), and each of these
    // took longer still in the child, until its run's time limit. The bounds are generous for a
    // loaded machine; the old scans took minutes.
    void testScansAreLinearInTheSource() {
        using Clock = std::chrono::steady_clock;
        const std::size_t size = 720 * 1024;
        auto repeat = [](const std::string& unit, std::size_t bytes) {
            std::string out;
            while (out.size() < bytes) out += unit;
            return out;
        };
        struct Case {
            const char* name;
            std::string source;
            bool lowers;
        };
        const Case cases[] = {
            // A loop head's `)` searched from every head (HasBracelessLoop).
            {"while(", repeat("while(", size), false},
            // for\s*\([^;]*?\sof from every head with no `;` (the for-of marker).
            {"for(", repeat("for(", size), false},
            // A regular expression's flags: every split of a long run of flag letters was tried.
            {"/sss...x", "x = /" + std::string(size, 's') + "x/;", true},
        };
        for (const Case& c : cases) {
            const auto start = Clock::now();
            auto lowered = Shared().Lower(c.source);
            const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
            std::cerr << "\n  " << c.name << " (" << c.source.size() / 1024 << " KB): " << took << " ms";
            CPPUNIT_ASSERT_EQUAL_MESSAGE(c.name, c.lowers, lowered.ok());
            CPPUNIT_ASSERT_MESSAGE(std::string(c.name) + " took " + std::to_string(took) + " ms", took < 20000);
        }
        // Many blocks on one line (minified code; our rewrites' arrows): buble stepped back to the
        // line's start for each block's indentation.
        const std::string chains = "let a = {};" + repeat("a?.b;", 40 * 1024);
        const auto start = Clock::now();
        CPPUNIT_ASSERT(Shared().Lower(chains).ok());
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
        std::cerr << "\n  a?.b; on one line (40 KB): " << took << " ms\n";
        CPPUNIT_ASSERT_MESSAGE("took " + std::to_string(took) + " ms", took < 60000);
    }
    void testOnlyCodeMentioningBigIntIsRewritten() {
        // Ordinary code keeps native operators; the rewrite starts at a BigInt literal or the identifier.
        const std::string plain = Lowered("const main = (p) => p.a * 2 + p.b < 7 ? `x${p.a}` : typeof p;");
        CPPUNIT_ASSERT_MESSAGE(plain, plain.find("__sigil_b") == std::string::npos);
        const std::string with_literal = Lowered("const main = (p) => p.a * 2n;");
        CPPUNIT_ASSERT_MESSAGE(with_literal, with_literal.find("__sigil_b.mul(") != std::string::npos);
        const std::string with_call = Lowered("var main = function (p) { return String(BigInt(p.a) * BigInt(2)); };");
        CPPUNIT_ASSERT_MESSAGE(with_call, with_call.find("__sigil_BigInt(p.a)") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(std::string(R"("42")"), RunLowered(with_call, R"({"a":21})"));
        // A large ES5 bundle that merely names BigInt (ethers v5's BigNumber.toBigInt) runs as it is.
        std::string bundle = "var lib = { toBigInt: function (x) { return BigInt(x); } };\n";
        while (bundle.size() < 64 * 1024) bundle += "function f" + std::to_string(bundle.size()) + "(a, b) { return a * b + 1; }\n";
        auto as_is = Shared().Lower(bundle);
        CPPUNIT_ASSERT(as_is.ok());
        CPPUNIT_ASSERT(as_is.value() == bundle);
        // A property named BigInt is not the global.
        CPPUNIT_ASSERT_EQUAL(std::string(R"(["p","7"])"),
                             LowerAndRun("const o = { BigInt: 'p' }; const main = () => [o.BigInt, String(BigInt(7))];"));
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
