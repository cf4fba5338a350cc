// Imports by CID in the sandbox: the lowering of each import and export form (js/lower.js, run by
// the sandbox's own transpiler), the header the worker reads (import_header.h), and the module
// registry of prelude.js linking lowered modules as the child does (child.cpp's LinkModules).
#include <cppunit/extensions/HelperMacros.h>
#include <duktape.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/cid.h"
#include "tests/support/duk_heap.h"
#include "workers/sandbox/protocol/import_header.h"
#include "workers/sandbox/transpiler.h"
#include "workers/sandbox/natives/web_crypto.h"
#include "workers/sandbox/natives/web_globals.h"

using namespace sigil::workers;
using sigil::test::EvalToString;
using sigil::test::HeapFree;

namespace {

duk_ret_t FakeOp(duk_context* ctx) {
    duk_push_string(ctx, "null");
    return 1;
}
duk_ret_t FakeLog(duk_context*) { return 0; }

Transpiler& Shared() {
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

std::string Lowered(const std::string& source) {
    auto lowered = Shared().Lower(source);
    CPPUNIT_ASSERT_MESSAGE(lowered.ok() ? "" : lowered.error().message, lowered.ok());
    return lowered.value();
}

std::string LoweredModule(const std::string& source) { return Lowered(std::string(MODULE_LOWERING_PRAGMA) + source); }

// Distinct well-formed CIDv0s.
std::string Cid(const std::string& seed) { return sigil::common::ComputeCidV0(seed); }
std::string Spec(const std::string& seed) { return "ipfs://" + Cid(seed); }

struct Module {
    std::string cid;
    std::string lowered;
};

// Runs the lowered `action` with `modules` linked as the child links them; JSON of main's result,
// or "ERR: ..." when something throws.
std::string RunWithModules(const std::string& action, const std::vector<Module>& modules) {
    std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
    duk_context* ctx = heap.get();
    duk_push_c_function(ctx, FakeOp, 2);
    duk_put_global_string(ctx, "__sigil_op");
    duk_push_c_function(ctx, FakeLog, 1);
    duk_put_global_string(ctx, "__sigil_log");
    InstallWebGlobalsNatives(ctx);
    InstallWebCryptoNatives(ctx);
    for (auto source : {ShimsSource(), LowerRuntimeSource(), WebGlobalsSource(), WebPackagesSource(), PreludeSource()}) {
        if (duk_peval_lstring(ctx, source.data(), source.size()) != 0) return std::string("ERR: runtime: ") + duk_safe_to_string(ctx, -1);
        duk_pop(ctx);
    }
    duk_get_global_string(ctx, "__sigil_define_modules");
    duk_push_array(ctx);
    for (std::size_t i = 0; i < modules.size(); ++i) {
        duk_push_object(ctx);
        duk_push_string(ctx, modules[i].cid.c_str());
        duk_put_prop_string(ctx, -2, "cid");
        duk_push_boolean(ctx, ParseImportHeader(modules[i].lowered).esm);
        duk_put_prop_string(ctx, -2, "esm");
        const std::string text = "function (module, exports, require, __sigil_exports) {" + modules[i].lowered + "\n}";
        duk_push_string(ctx, ("ipfs://" + modules[i].cid).c_str());
        if (duk_pcompile_lstring_filename(ctx, DUK_COMPILE_FUNCTION, text.data(), text.size()) != 0) {
            return std::string("ERR: module: ") + duk_safe_to_string(ctx, -1);
        }
        duk_put_prop_string(ctx, -2, "factory");
        duk_put_prop_index(ctx, -2, static_cast<duk_uarridx_t>(i));
    }
    if (duk_pcall(ctx, 1) != 0) return std::string("ERR: define: ") + duk_safe_to_string(ctx, -1);
    duk_pop(ctx);
    const std::string result = EvalToString(ctx, action);
    if (result.rfind("THROW ", 0) == 0) return "ERR: action: " + result;
    return EvalToString(ctx, "String(__sigil_run_main('{}'))");
}

}  // namespace

class ImportsTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ImportsTests);
    CPPUNIT_TEST(testEachImportFormLowersOntoTheRegistry);
    CPPUNIT_TEST(testHeaderListsEachCidOnceAndMarksEsModules);
    CPPUNIT_TEST(testLineNumbersStayTheSources);
    CPPUNIT_TEST(testRefusesWhatIsNotPinned);
    CPPUNIT_TEST(testHeaderParsing);
    CPPUNIT_TEST(testEsModuleExportsEveryForm);
    CPPUNIT_TEST(testCommonJsDefaultIsModuleExports);
    CPPUNIT_TEST(testTransitiveAndEvaluatedOnce);
    CPPUNIT_TEST(testDynamicImportAndReExports);
    CPPUNIT_TEST(testCycleSeesExportsSoFar);
    CPPUNIT_TEST(testActionExportsStayDropped);
    CPPUNIT_TEST_SUITE_END();

public:
    void testEachImportFormLowersOntoTheRegistry() {
        const std::string a = Spec("a");
        const std::string text = Lowered("import x from \"" + a + "\";\nimport {p, q as r} from '" + a +
                                         "';\nimport * as ns from \"" + a + "\";\nimport \"" + a +
                                         "\";\nasync function main() { const m = await import(\"" + a + "\"); return 1; }");
        for (const std::string& expected :
             {std::string("x = _m$0[\"default\"]"), std::string("p = _m$1[\"p\"]"), std::string("r = _m$1[\"q\"]"),
              std::string("ns = _m$2;"), "__sigil_import(\"" + a + "\");", "__sigil_import_async(\"" + a + "\")"}) {
            CPPUNIT_ASSERT_MESSAGE(expected + " in " + text, text.find(expected) != std::string::npos);
        }
    }

    void testHeaderListsEachCidOnceAndMarksEsModules() {
        const std::string a = Spec("a"), b = Spec("b");
        const auto action = ParseImportHeader(
            Lowered("import x from \"" + a + "\"; import y from \"" + b + "\"; import z from \"" + a + "\"; const main = () => 1;"));
        CPPUNIT_ASSERT(!action.esm);  // an action is a script
        CPPUNIT_ASSERT(action.cids == (std::vector<std::string>{Cid("a"), Cid("b")}));
        CPPUNIT_ASSERT(ParseImportHeader(LoweredModule("export const k = 1;")).esm);
        CPPUNIT_ASSERT(ParseImportHeader(LoweredModule("export const k = 1;")).cids.empty());
        // CommonJS, and an action importing nothing: no header, the text as before.
        CPPUNIT_ASSERT_EQUAL(std::string("module.exports = 1;"), LoweredModule("module.exports = 1;"));
        CPPUNIT_ASSERT(Lowered("const main = () => 1;").rfind("/*sigil-imports", 0) == std::string::npos);
        // Only the lowering writes a header.
        auto spoofed = Shared().Lower("/*sigil-imports " + a + "*/ const main = () => 1;");
        CPPUNIT_ASSERT(!spoofed.ok());
    }

    void testLineNumbersStayTheSources() {
        const std::string a = Spec("a");
        const std::string text = Lowered("import x from \"" + a + "\";\n\nimport {y} from \"" + a + "\";\nconst main = () => x + y;\n");
        CPPUNIT_ASSERT_EQUAL(std::string::difference_type(4), std::count(text.begin(), text.end(), '\n'));
        CPPUNIT_ASSERT(text.substr(text.rfind('\n', text.size() - 2)).find("main") != std::string::npos);
    }

    void testRefusesWhatIsNotPinned() {
        const std::string a = Spec("a");
        for (const std::string& source :
             {std::string("import x from \"lodash\";"), std::string("import x from \"https://cdn.example/m.js\";"),
              std::string("import x from \"./lib.js\";"), std::string("export * from \"ethers\";"),
              std::string("const m = await import(\"https://cdn.example/m.js\");"),
              std::string("import x from \"ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi\";"),
              "import x from \"" + a.substr(0, a.size() - 1) + "\";"}) {
            auto lowered = Shared().Lower(source);
            CPPUNIT_ASSERT_MESSAGE(source, !lowered.ok());
            CPPUNIT_ASSERT_MESSAGE(lowered.error().message, lowered.error().message.find("import_not_allowed: the module") !=
                                                               std::string::npos);
            CPPUNIT_ASSERT_MESSAGE(lowered.error().message, lowered.error().message.find("ipfs://<its CID>") != std::string::npos);
        }
        for (const std::string& source : {std::string("const m = await import(name);"), "const m = await import(`" + a + "`);",
                                          std::string("const m = await import(\"\\x69pfs://") + a.substr(7) + "\");"}) {
            auto lowered = Shared().Lower(source);
            CPPUNIT_ASSERT_MESSAGE(source, !lowered.ok());
            CPPUNIT_ASSERT_MESSAGE(lowered.error().message, lowered.error().message.find("import_not_allowed") != std::string::npos);
        }
    }

    void testHeaderParsing() {
        const std::string a = Cid("a"), b = Cid("b");
        auto h = ParseImportHeader("/*sigil-imports esm ipfs://" + a + " ipfs://" + b + "*/var x;");
        CPPUNIT_ASSERT(h.esm);
        CPPUNIT_ASSERT(h.cids == (std::vector<std::string>{a, b}));
        CPPUNIT_ASSERT(ParseImportHeader("/*sigil-imports ipfs://" + a + "*/").cids.size() == 1);
        CPPUNIT_ASSERT(ParseImportHeader(" /*sigil-imports ipfs://" + a + "*/").cids.empty());  // not at the start
        CPPUNIT_ASSERT(ParseImportHeader("/*sigil-imports ipfs://" + a).cids.empty());          // no end
        CPPUNIT_ASSERT(ParseImportHeader("/*sigil-imports ipfs://Qm0OIl*/").cids.empty());      // not a CIDv0
        CPPUNIT_ASSERT(ParseImportHeader("/*sigil-imports https://x ipfs://" + a + "*/").cids.empty());
        CPPUNIT_ASSERT(ParseImportHeader("").cids.empty());
    }

    void testEsModuleExportsEveryForm() {
        const std::string m = Cid("m");
        const std::string module = LoweredModule(
            "export const k = 1, {p, q: [r]} = {p: 2, q: [3]};\nexport function f() { return 'f'; }\n"
            "export class C { get v() { return 'c'; } }\nconst hidden = 4; export { hidden as shown, hidden as 'quoted name' };\n"
            "export default async function main() { return 'default'; } // ends in a comment");
        const std::string action = Lowered(
            "import main2, {k, p, r, f, C, shown} from \"ipfs://" + m + "\";\nimport * as ns from \"ipfs://" + m + "\";\n"
            "async function main() { return [k, p, r, f(), new C().v, shown, ns['quoted name'], await main2(), Object.keys(ns).sort().join()]; }");
        CPPUNIT_ASSERT_EQUAL(std::string("[1,2,3,\"f\",\"c\",4,4,\"default\",\"C,default,f,k,p,quoted name,r,shown\"]"),
                             RunWithModules(action, {{m, module}}));
        // export default of an expression, an anonymous function or class.
        const std::string d = Cid("d");
        CPPUNIT_ASSERT_EQUAL(std::string("[42]"),
                             RunWithModules(Lowered("import v from \"ipfs://" + d + "\"; const main = () => [v];"),
                                            {{d, LoweredModule("export default 6 * 7;")}}));
        CPPUNIT_ASSERT_EQUAL(std::string("\"anon\""),
                             RunWithModules(Lowered("import v from \"ipfs://" + d + "\"; const main = () => v();"),
                                            {{d, LoweredModule("export default function () { return 'anon'; }")}}));
    }

    void testCommonJsDefaultIsModuleExports() {
        const std::string c = Cid("c"), fn = Cid("fn");
        const std::string module = LoweredModule("exports.add = (a, b) => a + b; module.exports.name = 'cjs'; var self = this;"
                                                 " exports.selfIsExports = self === module.exports;");
        CPPUNIT_ASSERT_EQUAL(std::string("[5,\"cjs\",5,true,\"cjs\"]"),
                             RunWithModules(Lowered("import lib, {add} from \"ipfs://" + c + "\"; import * as ns from \"ipfs://" + c +
                                                    "\"; const main = () => [lib.add(2, 3), lib.name, add(2, 3), ns.selfIsExports, ns.default.name];"),
                                            {{c, module}}));
        // module.exports replaced by a function: the default import is that function.
        CPPUNIT_ASSERT_EQUAL(std::string("\"called\""),
                             RunWithModules(Lowered("import f from \"ipfs://" + fn + "\"; const main = () => f();"),
                                            {{fn, LoweredModule("module.exports = function () { return 'called'; };")}}));
        // require of a bare name says how to import instead.
        const std::string r = Cid("r");
        const std::string out = RunWithModules(Lowered("import \"ipfs://" + r + "\"; const main = () => 1;"),
                                               {{r, LoweredModule("var lodash = require('lodash');")}});
        CPPUNIT_ASSERT_MESSAGE(out, out.find("require(\"lodash\") is not available") != std::string::npos);
    }

    void testTransitiveAndEvaluatedOnce() {
        const std::string base = Cid("base"), mid = Cid("mid");
        const std::string baseText = LoweredModule("globalThis.__count = (globalThis.__count || 0) + 1; export const one = 1;");
        const std::string midText = LoweredModule("import {one} from \"ipfs://" + base + "\"; export const two = one + 1;");
        CPPUNIT_ASSERT(ParseImportHeader(midText).cids == std::vector<std::string>{base});
        CPPUNIT_ASSERT_EQUAL(std::string("[1,2,1]"),
                             RunWithModules(Lowered("import {one} from \"ipfs://" + base + "\"; import {two} from \"ipfs://" + mid +
                                                    "\"; const main = () => [one, two, globalThis.__count];"),
                                            {{base, baseText}, {mid, midText}}));
    }

    void testDynamicImportAndReExports() {
        const std::string base = Cid("base"), re = Cid("re");
        const std::string baseText = LoweredModule("export const one = 1; export const two = 2; export default 'base';");
        const std::string reText = LoweredModule("export * from \"ipfs://" + base + "\"; export {one as uno} from \"ipfs://" + base +
                                                 "\"; export * as all from \"ipfs://" + base + "\";");
        CPPUNIT_ASSERT_EQUAL(std::string("[1,2,1,\"base\",false,\"base\"]"),
                             RunWithModules(Lowered("async function main() { const m = await import(\"ipfs://" + re +
                                                    "\"); const b = await import(\"ipfs://" + base +
                                                    "\"); return [m.one, m.two, m.uno, m.all.default, 'default' in m, b.default]; }"),
                                            {{base, baseText}, {re, reText}}));
        // A module that throws: the import rejects, the error reaches the action.
        const std::string bad = Cid("bad");
        CPPUNIT_ASSERT_EQUAL(std::string("\"boom\""),
                             RunWithModules(Lowered("async function main() { try { await import(\"ipfs://" + bad +
                                                    "\"); } catch (e) { return e.message; } }"),
                                            {{bad, LoweredModule("throw new Error('boom');")}}));
    }

    void testCycleSeesExportsSoFar() {
        // Two modules importing each other cannot exist by CID (each CID hashes the other's), but the
        // registry answers a module under evaluation with what it has exported so far.
        const std::string a = Cid("cycle-a"), b = Cid("cycle-b");
        const std::string aText = LoweredModule("export function early() { return 'early'; }\nimport {seen} from \"ipfs://" + b +
                                                "\";\nexport const late = 'late'; export const fromB = seen;");
        const std::string bText = LoweredModule("import * as a from \"ipfs://" + a + "\"; export const seen = [typeof a.early, typeof a.late];");
        CPPUNIT_ASSERT_EQUAL(std::string("[[\"function\",\"undefined\"],\"late\"]"),
                             RunWithModules(Lowered("import {fromB, late} from \"ipfs://" + a + "\"; const main = () => [fromB, late];"),
                                            {{a, aText}, {b, bText}}));
    }

    void testActionExportsStayDropped() {
        // An action's own exports are dropped (it runs as a script); its main is still found.
        CPPUNIT_ASSERT_EQUAL(std::string("41"),
                             RunWithModules(Lowered("const helper = (v) => v * 2;\nexport async function main() { return helper(20) + K; }\n"
                                                    "export const K = 1;\nexport { helper };"),
                                            {}));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ImportsTests);
