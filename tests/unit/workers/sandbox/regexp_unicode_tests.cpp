#include <cppunit/extensions/HelperMacros.h>
#include <duktape.h>

#include <memory>
#include <string>

#include "tests/support/duk_heap.h"
#include "workers/sandbox/natives/regexp_unicode.h"
#include "workers/sandbox/transpiler.h"
#include "workers/sandbox/natives/web_crypto.h"
#include "workers/sandbox/natives/web_globals.h"

using namespace sigil::workers;

namespace {

using sigil::test::HeapFree;

std::string Eval(duk_context* ctx, const std::string& code) { return sigil::test::EvalToString(ctx, code); }

// A heap with the web globals (regexp.js among them) whose built-in prototypes are then frozen, as
// a run's are (child.cpp), with regexpu-core's loader counted.
std::unique_ptr<duk_context, HeapFree> FrozenHeap() {
    std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
    duk_context* ctx = heap.get();
    InstallWebGlobalsNatives(ctx);
    InstallWebCryptoNatives(ctx);
    CPPUNIT_ASSERT_EQUAL(std::string("0"), Eval(ctx,
        "var loads = 0, realLoad = __sigil_regexpu;"
        "__sigil_regexpu = function (glue) { loads++; return realLoad(glue); }; loads"));
    for (std::string_view source : {ShimsSource(), WebGlobalsSource()}) {
        if (duk_peval_lstring(ctx, source.data(), source.size()) != 0) CPPUNIT_FAIL(duk_safe_to_string(ctx, -1));
        duk_pop(ctx);
    }
    CPPUNIT_ASSERT_EQUAL(std::string("true"), Eval(ctx,
        "[Object.prototype, Function.prototype, Array.prototype, String.prototype, RegExp.prototype]"
        ".forEach(Object.freeze); Object.isFrozen(Object.prototype)"));
    return heap;
}

}  // namespace

class RegExpUnicodeTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(RegExpUnicodeTests);
    CPPUNIT_TEST(testFindsPropertyModulesByExactPath);
    CPPUNIT_TEST(testPropertyNativeCompilesOneModule);
    CPPUNIT_TEST(testRewritesInAFrozenHeap);
    CPPUNIT_TEST(testPlainPatternsLoadNothing);
    CPPUNIT_TEST(testRefusesBadPatternsWithSyntaxError);
    CPPUNIT_TEST_SUITE_END();

public:
    void testFindsPropertyModulesByExactPath() {
        for (const char* path : {"Script/Greek", "Script_Extensions/Latin", "Binary_Property/Extended_Pictographic",
                                 "General_Category/Letter", "Property_of_Strings/RGI_Emoji"}) {
            const std::string_view module = UnicodePropertySource(path);
            CPPUNIT_ASSERT_MESSAGE(path, module.find("require('regenerate')") != std::string_view::npos);
            CPPUNIT_ASSERT_MESSAGE(path, module.find("//# ") == std::string_view::npos);  // one module only
        }
        for (const char* path : {"Script/Gree", "Script/Nope", "Script", "Script/Greek/x", "../Script/Greek", "/Greek", "Script/",
                                 "", "Script/Gr eek", "Script/Greek\n"}) {
            CPPUNIT_ASSERT_MESSAGE(path, UnicodePropertySource(path).empty());
        }
    }

    void testPropertyNativeCompilesOneModule() {
        std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
        duk_context* ctx = heap.get();
        InstallRegExpUnicodeNatives(ctx);
        CPPUNIT_ASSERT_EQUAL(std::string("function"), Eval(ctx, "typeof __sigil_unicode_property('Script/Greek')"));
        CPPUNIT_ASSERT_EQUAL(std::string("undefined"), Eval(ctx, "typeof __sigil_unicode_property('Script/Klingon')"));
        CPPUNIT_ASSERT_EQUAL(std::string("undefined"), Eval(ctx, "typeof __sigil_unicode_property('../../etc/passwd')"));
        // The module builds its set with the regenerate it is handed and exports it.
        CPPUNIT_ASSERT_EQUAL(std::string("0x30-0x39,0x41-0x46,0x61-0x66 true"), Eval(ctx,
            "var ranges = [], fake = { addRange: function (a, b) { ranges.push('0x' + a.toString(16) + '-0x' + b.toString(16)); return fake; } };"
            "var m = { exports: {} }; __sigil_unicode_property('Binary_Property/ASCII_Hex_Digit')(m, m.exports, function () { return function () { return fake; }; });"
            "ranges.join() + ' ' + (m.exports.characters === fake)"));
    }

    // regenerate (inside regexpu-core) defines toString on its prototype; in a run, where
    // Object.prototype is frozen, a plain assignment of it would fail silently.
    void testRewritesInAFrozenHeap() {
        auto heap = FrozenHeap();
        duk_context* ctx = heap.get();
        const struct {
            const char* code;
            const char* expected;
        } cases[] = {
            {"new RegExp('^\\\\p{Extended_Pictographic}$', 'u').test('\\ud83d\\ude00')", "true"},
            {"new RegExp('^\\\\p{Extended_Pictographic}$', 'u').test('a')", "false"},
            {"new RegExp('^.$', 'u').test('\\ud83d\\ude00')", "true"},
            {"new RegExp('^\\\\u{1F600}{2}$', 'u').test('\\ud83d\\ude00\\ud83d\\ude00')", "true"},
            {"new RegExp('^[\\\\p{L}--[a-z]]+$', 'v').test('AB')", "true"},
            {"new RegExp('^[\\\\p{L}--[a-z]]+$', 'v').test('ab')", "false"},
            {"new RegExp('\\\\u212a', 'iu').test('k')", "true"},
            {"var r = new RegExp('\\\\p{Lu}', 'gu'); [r.source, r.flags, r.unicode, String(r), r instanceof RegExp].join()",
             "\\p{Lu},gu,true,/\\p{Lu}/gu,true"},
            {"'a\\ud83d\\ude00b'.split(new RegExp('\\\\p{Extended_Pictographic}', 'u')).join('|')", "a|b"},
            {"'Ab'.replace(new RegExp('\\\\p{Lu}', 'gu'), '_')", "_b"},
        };
        for (const auto& c : cases) CPPUNIT_ASSERT_EQUAL_MESSAGE(c.code, std::string(c.expected), Eval(ctx, c.code));
        CPPUNIT_ASSERT_EQUAL(std::string("1"), Eval(ctx, "loads"));  // once for the whole run
    }

    void testPlainPatternsLoadNothing() {
        auto heap = FrozenHeap();
        duk_context* ctx = heap.get();
        CPPUNIT_ASSERT_EQUAL(std::string("true,false,true,true,u,0"), Eval(ctx,
            "[new RegExp('^[a-z]+$', 'u').test('abc'), new RegExp('^[a-z]+$', 'u').test('ab1'), new RegExp('\\\\d+\\\\.\\\\w', 'gu').test('1.a'),"
            " new RegExp('a.b', 's').test('a\\nb'), new RegExp('x', 'u').flags, loads].join()"));
    }

    void testRefusesBadPatternsWithSyntaxError() {
        auto heap = FrozenHeap();
        duk_context* ctx = heap.get();
        for (const char* code : {"new RegExp('\\\\p{NoSuchProperty}', 'u')", "new RegExp('\\\\p{Script=Klingon}', 'u')",
                                 "new RegExp('[\\\\p{L}', 'v')", "new RegExp('a', 'uv')", "new RegExp('a', 'uu')", "new RegExp('a', 'z')"}) {
            CPPUNIT_ASSERT_EQUAL_MESSAGE(code, std::string("SyntaxError"),
                                         Eval(ctx, std::string("(function () { try { ") + code + "; return 'none'; } catch (e) { return e.name; } })()"));
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(RegExpUnicodeTests);
