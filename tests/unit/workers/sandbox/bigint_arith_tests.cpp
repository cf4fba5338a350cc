// The BigInt natives of workers/sandbox/natives/bigint_arith.h called directly, in a heap with JSBI and the
// runtime (lower_runtime.js) as a run has them: their answers are JSBI values, they decline what
// is JSBI's to do (undefined), refuse what is not a JSBI value (TypeError), and survive operands
// whose reading runs code. (Their arithmetic against Node: tests/crosscheck/bigint_arith.test.mjs.)
#include <cppunit/extensions/HelperMacros.h>
#include <duktape.h>

#include <memory>
#include <string>

#include "tests/support/duk_heap.h"
#include "workers/sandbox/natives/bigint_native.h"
#include "workers/sandbox/transpiler.h"

using namespace sigil::workers;
using sigil::test::EvalToString;
using sigil::test::HeapFree;

namespace {

// A heap with the natives, the shims and the BigInt runtime; the natives the runtime binds are
// kept as the global N (the runtime removes their entry point).
std::unique_ptr<duk_context, HeapFree> MakeHeap() {
    std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
    duk_context* ctx = heap.get();
    InstallBigIntNatives(ctx);
    EvalToString(ctx, "(function (g) { var f = g.__sigil_bigint_arith;"
                      " g.__sigil_bigint_arith = function (p) { return (g.N = f(p)); }; })(this); ''");
    EvalToString(ctx, std::string(ShimsSource()) + "\n''");
    EvalToString(ctx, std::string(LowerRuntimeSource()) + "\n''");
    return heap;
}

}  // namespace

class BigIntArithTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(BigIntArithTests);
    CPPUNIT_TEST(testRuntimeBindsTheNativesOnce);
    CPPUNIT_TEST(testAnswersAreJsbiValues);
    CPPUNIT_TEST(testModularInverse);
    CPPUNIT_TEST(testModularExponentiation);
    CPPUNIT_TEST(testDeclinesWhatIsJsbis);
    CPPUNIT_TEST(testRefusesWhatIsNotABigInt);
    CPPUNIT_TEST(testSurvivesAThrowingGetter);
    CPPUNIT_TEST(testTextBothWays);
    CPPUNIT_TEST_SUITE_END();

public:
    void testRuntimeBindsTheNativesOnce() {
        auto heap = MakeHeap();
        duk_context* ctx = heap.get();
        CPPUNIT_ASSERT_EQUAL(std::string("object undefined"),
                             EvalToString(ctx, "typeof N + ' ' + typeof __sigil_bigint_arith"));
    }

    void testAnswersAreJsbiValues() {
        auto heap = MakeHeap();
        duk_context* ctx = heap.get();
        CPPUNIT_ASSERT_EQUAL(std::string("true -1606938044258990275541962092341162602522202993782792835301375 false 0 0"),
                             EvalToString(ctx, "var a = JSBI.BigInt('-1267650600228229401496703205375'), b = JSBI.BigInt('1267650600228229401496703205377');"
                                               "var p = N.mul(a, b), z = N.add(a, JSBI.unaryMinus(a));"
                                               "[p instanceof JSBI, String(p), z.sign, z.length, JSBI.equal(z, JSBI.BigInt(0)) ? 0 : 1].join(' ')"));
        // Truncated division and the remainder's sign, as V8.
        CPPUNIT_ASSERT_EQUAL(std::string("-3 -1 3 1"),
                             EvalToString(ctx, "var s = JSBI.BigInt(-7), t = JSBI.BigInt(2);"
                                               "[N.div(s, t), N.mod(s, t), N.div(s, JSBI.BigInt(-2)), N.mod(JSBI.BigInt(7), JSBI.BigInt(-2))].join(' ')"));
    }

    void testModularInverse() {
        auto heap = MakeHeap();
        duk_context* ctx = heap.get();
        CPPUNIT_ASSERT_EQUAL(std::string("5 2 0 undefined undefined undefined"),
                             EvalToString(ctx, "var B = JSBI.BigInt; [N.modinv(B(3), B(7)), N.modinv(B(-3), B(7)), N.modinv(B(5), B(1)),"
                                               " N.modinv(B(2), B(4)), N.modinv(B(3), B(0)), N.modinv(B(3), B(-7))].map(String).join(' ')"));
        // secp256k1's n: a * a^-1 = 1 (mod n).
        CPPUNIT_ASSERT_EQUAL(std::string("1"),
                             EvalToString(ctx, "var n = JSBI.BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');"
                                               "var a = JSBI.BigInt('0x123456789abcdef123456789abcdef');"
                                               "String(N.mod(N.mul(a, N.modinv(a, n)), n))"));
    }

    void testModularExponentiation() {
        auto heap = MakeHeap();
        duk_context* ctx = heap.get();
        CPPUNIT_ASSERT_EQUAL(std::string("445 52 undefined undefined 0"),
                             EvalToString(ctx, "var B = JSBI.BigInt; [N.modpow(B(4), B(13), B(497)), N.modpow(B(-4), B(13), B(497)),"
                                               " N.modpow(B(4), B(-1), B(497)), N.modpow(B(4), B(2), B(0)), N.modpow(B(4), B(2), B(1))].map(String).join(' ')"));
        // Fermat: a^(p-1) = 1 mod p for 2^255 - 19.
        CPPUNIT_ASSERT_EQUAL(std::string("1"),
                             EvalToString(ctx, "var p = JSBI.subtract(JSBI.exponentiate(JSBI.BigInt(2), JSBI.BigInt(255)), JSBI.BigInt(19));"
                                               "String(N.modpow(JSBI.BigInt(9), JSBI.subtract(p, JSBI.BigInt(1)), p))"));
    }

    void testDeclinesWhatIsJsbis() {
        auto heap = MakeHeap();
        duk_context* ctx = heap.get();
        // A zero divisor, a negative exponent, an operand over 2,185 digits (64 Ki bits rounded up
        // to whole digits), a power over 64 Ki bits; 2n ** 65535n has 65,536 bits, 2,185 digits.
        CPPUNIT_ASSERT_EQUAL(std::string("undefined undefined undefined undefined undefined 2185 2185"),
                             EvalToString(ctx, "var B = JSBI.BigInt, big = JSBI.leftShift(B(1), B(65550));"
                                               "[N.div(B(1), B(0)), N.mod(B(1), B(0)), N.pow(B(2), B(-1)), N.mul(big, B(1)),"
                                               " N.pow(B(2), B(65536)), N.pow(B(2), B(65535)).length, N.mul(JSBI.leftShift(B(1), B(65549)), B(1)).length].map(String).join(' ')"));
        // And the runtime then gives V8's errors.
        CPPUNIT_ASSERT_EQUAL(std::string("RangeError: Division by zero"),
                             EvalToString(ctx, "try { __sigil_b.div(JSBI.BigInt(1), JSBI.BigInt(0)) } catch (e) { e.name + ': ' + e.message }"));
    }

    void testRefusesWhatIsNotABigInt() {
        auto heap = MakeHeap();
        duk_context* ctx = heap.get();
        for (const char* operand : {"{}", "[1.5]", "['1']", "[1073741824]", "[-1]", "'12'", "undefined"}) {
            std::string code = std::string("try { N.mul(") + operand + ", JSBI.BigInt(3)); 'no error' } catch (e) { e.name }";
            CPPUNIT_ASSERT_EQUAL_MESSAGE(operand, std::string("TypeError"), EvalToString(ctx, code));
        }
        // A plain array of digits is read as one (the runtime only hands over JSBI values).
        CPPUNIT_ASSERT_EQUAL(std::string("6"), EvalToString(ctx, "String(N.mul([2], JSBI.BigInt(3)))"));
    }

    void testSurvivesAThrowingGetter() {
        auto heap = MakeHeap();
        duk_context* ctx = heap.get();
        CPPUNIT_ASSERT_EQUAL(std::string("boom 42"),
                             EvalToString(ctx, "var a = [1, 2]; Object.defineProperty(a, 1, { get: function () { throw new Error('boom'); } });"
                                               "var r; try { N.mul(a, JSBI.BigInt(3)); r = 'no error' } catch (e) { r = e.message }"
                                               "r + ' ' + String(N.mul(JSBI.BigInt(6), JSBI.BigInt(7)))"));
    }

    void testTextBothWays() {
        auto heap = MakeHeap();
        duk_context* ctx = heap.get();
        CPPUNIT_ASSERT_EQUAL(std::string("-ff 0 -255 undefined 4095 123 undefined undefined"),
                             EvalToString(ctx, "var B = JSBI.BigInt; [N.text(B(-255), 16), N.text(B(0), 16), N.text(B(-255), 10),"
                                               " N.text(B(255), 8), N.parse('fFf', 16), N.parse('0123', 10), N.parse('12a', 10),"
                                               " N.parse('-1', 10)].map(String).join(' ')"));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BigIntArithTests);
