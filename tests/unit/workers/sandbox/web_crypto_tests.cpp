#include <cppunit/extensions/HelperMacros.h>
#include <duktape.h>

#include <memory>
#include <sstream>
#include <string>

#include "tests/support/duk_heap.h"
#include "tests/test_support.h"
#include "workers/sandbox/transpiler.h"
#include "workers/sandbox/natives/web_crypto.h"
#include "workers/sandbox/natives/web_globals.h"

using namespace sigil::workers;

namespace {

using sigil::test::HeapFree;

// A heap with the web globals as a run has them (natives, shims.js, globals.js with subtle.js,
// the packages), without the prelude, so the test drains the promise jobs itself.
std::unique_ptr<duk_context, HeapFree> WebHeap() {
    std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
    duk_context* ctx = heap.get();
    InstallWebGlobalsNatives(ctx);
    InstallWebCryptoNatives(ctx);
    for (std::string_view source : {ShimsSource(), WebGlobalsSource(), WebPackagesSource()}) {
        if (duk_peval_lstring(ctx, source.data(), source.size()) != 0) {
            CPPUNIT_FAIL(std::string("runtime: ") + duk_safe_to_string(ctx, -1));
        }
        duk_pop(ctx);
    }
    const char* helpers =
        "function hex(b) { return Array.prototype.map.call(new Uint8Array(b), function (x) {"
        "  return (x < 16 ? '0' : '') + x.toString(16); }).join(''); }"
        "function unhex(s) { var out = new Uint8Array(s === '-' ? 0 : s.length / 2);"
        "  for (var i = 0; i < out.length; i++) out[i] = parseInt(s.substr(2 * i, 2), 16); return out; }"
        "function settle(p) { var out = 'pending'; p.then(function (v) { out = v; },"
        "  function (e) { out = 'ERR ' + (e && e.name); }); while (__sigil_jobs.runOne()) {} return out; }";
    if (duk_peval_string(ctx, helpers) != 0) CPPUNIT_FAIL(duk_safe_to_string(ctx, -1));
    duk_pop(ctx);
    return heap;
}

std::string Eval(duk_context* ctx, const std::string& code) { return sigil::test::EvalToString(ctx, code); }

std::string Quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace

class WebCryptoTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(WebCryptoTests);
    CPPUNIT_TEST(testHkdfRfc5869Vectors);
    CPPUNIT_TEST(testPbkdf2Rfc6070Vectors);
    CPPUNIT_TEST(testKeyAgreementRfc5903AndRfc7748Vectors);
    CPPUNIT_TEST(testDeriveKeyMakesUsableKeys);
    CPPUNIT_TEST(testKeyEncodingsRoundTrip);
    CPPUNIT_TEST(testRefusesWhatWebCryptoRefuses);
    CPPUNIT_TEST(testNativesRefuseBadInput);
    CPPUNIT_TEST_SUITE_END();

public:
    void testHkdfRfc5869Vectors() {
        auto heap = WebHeap();
        int checked = 0;
        for (const char* file : {"hkdf_rfc5869.txt", "hkdf_sha1_rfc5869.txt"}) {
            const std::string hash = std::string(file) == "hkdf_rfc5869.txt" ? "SHA-256" : "SHA-1";
            checked += sigil::test::ForEachVectorLine(file, [&](const std::string& line) {
                std::istringstream fields(line);
                std::string ikm, salt, info, okm;
                std::size_t length = 0;
                fields >> ikm >> salt >> info >> length >> okm;
                const std::string code =
                    "settle(crypto.subtle.importKey('raw', unhex(" + Quote(ikm) + "), 'HKDF', false, ['deriveBits'])"
                    ".then(function (k) { return crypto.subtle.deriveBits({ name: 'HKDF', hash: " + Quote(hash) +
                    ", salt: unhex(" + Quote(salt) + "), info: unhex(" + Quote(info) + ") }, k, " +
                    std::to_string(length * 8) + "); }).then(hex))";
                CPPUNIT_ASSERT_EQUAL_MESSAGE(line.substr(0, 40), okm, Eval(heap.get(), code));
            });
        }
        CPPUNIT_ASSERT_EQUAL(7, checked);
    }

    void testPbkdf2Rfc6070Vectors() {
        auto heap = WebHeap();
        const int checked = sigil::test::ForEachVectorLine("pbkdf2_sha1_rfc6070.txt", [&](const std::string& line) {
            std::istringstream fields(line);
            std::string password, salt, dk;
            unsigned iterations = 0, length = 0;
            fields >> password >> salt >> iterations >> length >> dk;
            const std::string code =
                "settle(crypto.subtle.importKey('raw', unhex(" + Quote(password) + "), 'PBKDF2', false, ['deriveBits'])"
                ".then(function (k) { return crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-1', salt: unhex(" +
                Quote(salt) + "), iterations: " + std::to_string(iterations) + " }, k, " + std::to_string(length * 8) +
                "); }).then(hex))";
            CPPUNIT_ASSERT_EQUAL_MESSAGE(line.substr(0, 40), dk, Eval(heap.get(), code));
        });
        CPPUNIT_ASSERT_EQUAL(5, checked);
    }

    // Each side's private key as a JWK (with the public key it must match), the other's public key
    // raw; both directions agree on the published secret.
    void testKeyAgreementRfc5903AndRfc7748Vectors() {
        auto heap = WebHeap();
        const char* derive =
            "function b64u(b) { var s = ''; new Uint8Array(b).forEach(function (x) { s += String.fromCharCode(x); });"
            "  return btoa(s).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, ''); }"
            "function agree(curve, d, pub, peer) {"
            "  var alg = curve === 'X25519' ? { name: 'X25519' } : { name: 'ECDH', namedCurve: curve };"
            "  var jwk = curve === 'X25519' ? { kty: 'OKP', crv: curve, d: b64u(unhex(d)), x: b64u(unhex(pub)) }"
            "    : { kty: 'EC', crv: curve, d: b64u(unhex(d)), x: b64u(unhex(pub).subarray(1, 33)), y: b64u(unhex(pub).subarray(33)) };"
            "  return settle(Promise.all([crypto.subtle.importKey('jwk', jwk, alg, false, ['deriveBits']),"
            "      crypto.subtle.importKey('raw', unhex(peer), alg, true, [])])"
            "    .then(function (k) { return crypto.subtle.deriveBits({ name: alg.name, public: k[1] }, k[0], 256); }).then(hex)); }";
        CPPUNIT_ASSERT_EQUAL(std::string("undefined"), Eval(heap.get(), derive));
        const int checked = sigil::test::ForEachVectorLine("ecdh_rfc5903_rfc7748.txt", [&](const std::string& line) {
            std::istringstream fields(line);
            std::string curve, a, a_pub, b, b_pub, shared;
            fields >> curve >> a >> a_pub >> b >> b_pub >> shared;
            const std::string args = Quote(curve) + ", ";
            CPPUNIT_ASSERT_EQUAL_MESSAGE(curve, shared,
                                         Eval(heap.get(), "agree(" + args + Quote(a) + ", " + Quote(a_pub) + ", " + Quote(b_pub) + ")"));
            CPPUNIT_ASSERT_EQUAL_MESSAGE(curve, shared,
                                         Eval(heap.get(), "agree(" + args + Quote(b) + ", " + Quote(b_pub) + ", " + Quote(a_pub) + ")"));
        });
        CPPUNIT_ASSERT_EQUAL(2, checked);
    }

    void testDeriveKeyMakesUsableKeys() {
        auto heap = WebHeap();
        // HKDF -> AES-GCM: the key's bytes are deriveBits' (RFC 5869 A.1's first 32 bytes).
        const std::string aes = Eval(heap.get(),
            "settle(crypto.subtle.importKey('raw', unhex('0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b'), 'HKDF', false, ['deriveKey'])"
            ".then(function (k) { return crypto.subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256',"
            "  salt: unhex('000102030405060708090a0b0c'), info: unhex('f0f1f2f3f4f5f6f7f8f9') }, k,"
            "  { name: 'AES-GCM', length: 256 }, true, ['encrypt']); })"
            ".then(function (key) { return crypto.subtle.exportKey('raw', key).then(function (raw) {"
            "  return [key.algorithm.name, key.algorithm.length, key.usages.join(), hex(raw)].join(' '); }); }))");
        CPPUNIT_ASSERT_EQUAL(std::string("AES-GCM 256 encrypt 3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"), aes);
        // PBKDF2 -> HMAC without a length: the hash's block size (512 bits for SHA-256).
        const std::string hmac = Eval(heap.get(),
            "settle(crypto.subtle.importKey('raw', unhex('70617373776f7264'), 'PBKDF2', false, ['deriveKey'])"
            ".then(function (k) { return crypto.subtle.deriveKey({ name: 'PBKDF2', hash: 'SHA-256', salt: unhex('73616c74'),"
            "  iterations: 2 }, k, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']); })"
            ".then(function (key) { return [key.algorithm.name, key.algorithm.hash.name, key.algorithm.length, key.extractable].join(' '); }))");
        CPPUNIT_ASSERT_EQUAL(std::string("HMAC SHA-256 512 false"), hmac);
    }

    // A generated key pair leaves and comes back through every format, and still agrees.
    void testKeyEncodingsRoundTrip() {
        auto heap = WebHeap();
        for (const char* alg : {"{ name: 'ECDH', namedCurve: 'P-256' }", "{ name: 'X25519' }"}) {
            const std::string a = alg;
            const std::string code =
                "settle(Promise.all([crypto.subtle.generateKey(" + a + ", true, ['deriveBits']), crypto.subtle.generateKey(" + a +
                ", true, ['deriveBits'])]).then(function (pairs) { var s = crypto.subtle;"
                "  return Promise.all([s.exportKey('pkcs8', pairs[0].privateKey), s.exportKey('spki', pairs[1].publicKey),"
                "    s.exportKey('jwk', pairs[0].privateKey), s.exportKey('raw', pairs[1].publicKey),"
                "    s.deriveBits({ name: " + a + ".name, public: pairs[1].publicKey }, pairs[0].privateKey, 256)])"
                "  .then(function (e) { return Promise.all([s.importKey('pkcs8', e[0], " + a + ", false, ['deriveBits']),"
                "    s.importKey('spki', e[1], " + a + ", true, []), s.importKey('jwk', e[2], " + a + ", false, ['deriveBits']),"
                "    s.importKey('raw', e[3], " + a + ", true, [])]).then(function (k) { return Promise.all([e[4],"
                "      s.deriveBits({ name: " + a + ".name, public: k[1] }, k[0], 256),"
                "      s.deriveBits({ name: " + a + ".name, public: k[3] }, k[2], 256)]); }); }); })"
                ".then(function (r) { return hex(r[0]) === hex(r[1]) && hex(r[1]) === hex(r[2]) && r[0].byteLength === 32; }))";
            CPPUNIT_ASSERT_EQUAL_MESSAGE(a, std::string("true"), Eval(heap.get(), code));
        }
    }

    void testRefusesWhatWebCryptoRefuses() {
        auto heap = WebHeap();
        const std::string setup =
            "var s = crypto.subtle, hkdf = settle(s.importKey('raw', new Uint8Array(32), 'HKDF', false, ['deriveBits']));"
            "var P = { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new Uint8Array(0) };"
            "var pair = settle(s.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']));"
            "var x = settle(s.generateKey({ name: 'X25519' }, false, ['deriveBits'])); 0";
        CPPUNIT_ASSERT_EQUAL(std::string("0"), Eval(heap.get(), setup));
        const struct {
            const char* code;
            const char* expected;
        } cases[] = {
            {"s.deriveBits(P, hkdf, 255 * 256 + 8)", "ERR OperationError"},
            {"s.deriveBits(P, hkdf, 12)", "ERR OperationError"},
            {"s.deriveBits(P, hkdf, null)", "ERR OperationError"},
            {"s.deriveBits(P, hkdf, 0).then(function (b) { return b.byteLength; })", "0"},
            {"s.deriveBits({ name: 'HKDF', hash: 'SHA-256', info: new Uint8Array(0) }, hkdf, 256)", "ERR TypeError"},
            {"s.deriveKey(P, hkdf, { name: 'AES-GCM', length: 256 }, false, ['encrypt'])", "ERR InvalidAccessError"},
            {"s.importKey('raw', new Uint8Array(32), 'HKDF', true, ['deriveBits'])", "ERR SyntaxError"},
            {"s.importKey('raw', new Uint8Array(32), 'HKDF', false, ['sign'])", "ERR SyntaxError"},
            {"s.importKey('jwk', { kty: 'oct', k: 'AAAA' }, 'HKDF', false, ['deriveBits'])", "ERR NotSupportedError"},
            {"s.exportKey('raw', hkdf)", "ERR InvalidAccessError"},
            {"s.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(1), iterations: 1 }, hkdf, 256)",
             "ERR InvalidAccessError"},
            {"s.importKey('raw', (function () { var p = new Uint8Array(65); p[0] = 4; p[1] = 1; return p; })(),"
             " { name: 'ECDH', namedCurve: 'P-256' }, true, [])", "ERR DataError"},
            {"s.importKey('raw', new Uint8Array(65), { name: 'ECDH', namedCurve: 'P-384' }, true, [])", "ERR NotSupportedError"},
            {"s.importKey('pkcs8', new Uint8Array(10), { name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])", "ERR DataError"},
            {"s.deriveBits({ name: 'ECDH', public: pair.publicKey }, pair.privateKey, 264)", "ERR OperationError"},
            {"s.deriveBits({ name: 'ECDH', public: pair.privateKey }, pair.privateKey, 256)", "ERR InvalidAccessError"},
            {"s.deriveBits({ name: 'ECDH', public: x.publicKey }, pair.privateKey, 256)", "ERR InvalidAccessError"},
            {"s.exportKey('pkcs8', pair.privateKey)", "ERR InvalidAccessError"},
            {"s.deriveBits({ name: 'ECDH', public: pair.publicKey }, pair.privateKey, 100).then(hex)"
             ".then(function (h) { return h.length + ':' + (parseInt(h.slice(-2), 16) & 15); })", "26:0"},
            // X25519's small-order point 0 gives the all-zero secret, which Web Crypto refuses.
            {"s.importKey('raw', new Uint8Array(32), 'X25519', true, []).then(function (zero) {"
             " return s.deriveBits({ name: 'X25519', public: zero }, x.privateKey, 256); })", "ERR OperationError"},
        };
        for (const auto& c : cases) {
            CPPUNIT_ASSERT_EQUAL_MESSAGE(c.code, std::string(c.expected), Eval(heap.get(), std::string("settle(") + c.code + ")"));
        }
    }

    void testNativesRefuseBadInput() {
        std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
        duk_context* ctx = heap.get();
        InstallWebCryptoNatives(ctx);
        const struct {
            const char* code;
            const char* expected;
        } cases[] = {
            {"__sigil_hkdf('SHA-256', new Uint8Array(1), null, null, 255 * 32 + 1)", "THROW RangeError"},
            {"__sigil_hkdf('MD5', new Uint8Array(1), null, null, 1)", "THROW TypeError"},
            {"__sigil_hkdf('SHA-256', 'not bytes', null, null, 1)", "THROW TypeError"},
            {"__sigil_hkdf('SHA-512', new Uint8Array(0), null, null, 255 * 64).byteLength", "16320"},
            {"__sigil_pbkdf2('SHA-256', new Uint8Array(1), new Uint8Array(1), 0, 32)", "THROW RangeError"},
            {"__sigil_pbkdf2('SHA-256', new Uint8Array(1), new Uint8Array(1), 1, 65537)", "THROW RangeError"},
            {"__sigil_ec_generate('P-384')", "THROW TypeError"},
            {"__sigil_ec_public('P-256', new Uint8Array(65))", "null"},
            {"__sigil_ec_public('X25519', new Uint8Array(31))", "null"},
            {"__sigil_ec_public_of('P-256', new Uint8Array(32))", "null"},  // zero is no scalar
            {"__sigil_ec_public_of('P-256', (function () { var a = new Uint8Array(32); for (var i = 0; i < 32; i++) a[i] = 255; return a; })())",
             "null"},  // above the order
            {"__sigil_ec_import_der('spki', new Uint8Array([0x30, 0x00]))", "null"},
            {"__sigil_ec_import_der('pem', new Uint8Array(1))", "THROW TypeError"},
            {"var k = __sigil_ec_generate('P-256'), p = new Uint8Array(__sigil_ec_public_of('P-256', k[0])),"
             " q = new Uint8Array(k[1]), same = p.length === 65 && q.length === 65 && k[0].byteLength === 32;"
             " for (var i = 0; i < p.length; i++) same = same && p[i] === q[i]; same", "true"},
        };
        for (const auto& c : cases) {
            std::string got = Eval(ctx, c.code);
            if (got.rfind("THROW ", 0) == 0) got = got.substr(0, got.find(':'));
            CPPUNIT_ASSERT_EQUAL_MESSAGE(c.code, std::string(c.expected), got);
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(WebCryptoTests);
