// The sandbox's ethers (ethers v5 from npm, lowered by workers/sandbox/build/ethers_lower.mjs) with
// its native fast paths (__sigil_crypto, __sigil_keccak256): against vectors made by the real
// ethers (tests/data/ethers_wallet_vectors.json; signatures, hashes and addresses are the same in
// v5 and v6), and against ethers' own JavaScript (elliptic, js-sha3) in a second heap without the
// natives, on the same inputs: every fast path must answer byte for byte what ethers' code does,
// errors included. Plus the natives refusing malformed calls.
#include <cppunit/extensions/HelperMacros.h>
#include <duktape.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "tests/support/duk_heap.h"
#include "tests/test_support.h"
#include "workers/sandbox/natives/crypto.h"
#include "workers/sandbox/transpiler.h"

using namespace sigil::workers;

namespace {

using sigil::test::HeapFree;

struct HeapSetup {
    const std::string* vectors;
    bool natives;
};

// Loads shims.js and ethers (with or without the natives) into `ctx`, the vectors into V.
duk_ret_t SetUpHeap(duk_context* ctx, void* udata) {
    const auto* setup = static_cast<const HeapSetup*>(udata);
    if (setup->natives) InstallCryptoNatives(ctx);
    const std::string_view shims = ShimsSource(), ethers = EthersSource();
    duk_eval_lstring_noresult(ctx, shims.data(), shims.size());
    duk_eval_lstring_noresult(ctx, ethers.data(), ethers.size());
    duk_push_lstring(ctx, setup->vectors->data(), setup->vectors->size());
    duk_json_decode(ctx, -1);
    duk_put_global_string(ctx, "V");
    duk_eval_string_noresult(ctx,
                             "function msgOf(m) { return m.message !== undefined ? m.message : ethers.utils.arrayify(m.bytes); }"
                             // The vectors' transactions name no type; their signed form says which.
                             // Decimal strings become BigNumbers (v5 hexlifies legacy fields as given).
                             "function txOf(t) { var tx = JSON.parse(JSON.stringify(t.tx)); var b = t.signed.substring(2, 4);"
                             " tx.type = b === '02' ? 2 : b === '01' ? 1 : 0;"
                             " Object.keys(tx).forEach(function (k) { if (typeof tx[k] === 'string' && /^[0-9]+$/.test(tx[k]))"
                             " tx[k] = ethers.BigNumber.from(tx[k]); }); return tx; }");
    return 0;
}

std::string Str(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

// Evaluates `code`; returns the value as a string (JSON for non-strings) or "ERR: message".
std::string RunIn(duk_context* ctx, const std::string& code) {
    std::string wrapped = "(function () { var r = (" + code +
                          "); return typeof r === 'string' ? r : JSON.stringify(r); })()";
    std::string out;
    if (duk_peval_lstring(ctx, wrapped.data(), wrapped.size()) != 0) {
        out = std::string("ERR: ") + duk_safe_to_string(ctx, -1);
    } else {
        out = duk_safe_to_string(ctx, -1);
    }
    duk_pop(ctx);
    return out;
}

}  // namespace

class SandboxCryptoTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SandboxCryptoTests);
    CPPUNIT_TEST(testHidesNativesAndFreezesExports);
    CPPUNIT_TEST(testWalletKeysMatchEthers);
    CPPUNIT_TEST(testReadmeExample);
    CPPUNIT_TEST(testSignMessageMatchesEthers);
    CPPUNIT_TEST(testSignTypedDataMatchesEthers);
    CPPUNIT_TEST(testSignDigestAndRecover);
    CPPUNIT_TEST(testSignTransactionMatchesEthers);
    CPPUNIT_TEST(testHashesMatchEthers);
    CPPUNIT_TEST(testGetAddressMatchesEthers);
    CPPUNIT_TEST(testVerifyRecoversSigner);
    CPPUNIT_TEST(testFastPathsMatchEthersOwnCode);
    CPPUNIT_TEST(testErrorsMatchEthersOwnCode);
    CPPUNIT_TEST(testNativeRefusesMalformedCalls);
    CPPUNIT_TEST_SUITE_END();

    std::unique_ptr<duk_context, HeapFree> m_heap;   // with the natives, as in a run
    std::unique_ptr<duk_context, HeapFree> m_plain;  // ethers' own code only, made on demand
    std::string m_vectors_text;
    rapidjson::Document m_vectors;

    std::unique_ptr<duk_context, HeapFree> MakeHeap(bool natives) {
        std::unique_ptr<duk_context, HeapFree> heap(duk_create_heap_default());
        CPPUNIT_ASSERT(heap != nullptr);
        HeapSetup setup{&m_vectors_text, natives};
        if (duk_safe_call(heap.get(), SetUpHeap, &setup, 0, 1) != 0) {
            CPPUNIT_FAIL(std::string("setup failed: ") + duk_safe_to_string(heap.get(), -1));
        }
        duk_pop(heap.get());
        return heap;
    }

    std::string Run(const std::string& code) { return RunIn(m_heap.get(), code); }

    std::string RunPlain(const std::string& code) {
        if (!m_plain) m_plain = MakeHeap(false);
        return RunIn(m_plain.get(), code);
    }

    // `code` answers the same with the fast paths as with ethers' own code.
    void AssertSameAsEthers(const std::string& code) {
        const std::string fast = Run(code), plain = RunPlain(code);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(code, plain, fast);
    }

    void AssertThrows(const std::string& code, const std::string& fragment) {
        const std::string result = Run(code);
        CPPUNIT_ASSERT_MESSAGE(code + " -> " + result, result.rfind("ERR: ", 0) == 0);
        CPPUNIT_ASSERT_MESSAGE(code + " -> " + result, result.find(fragment) != std::string::npos);
    }

    const rapidjson::Value& Wallets() const { return m_vectors["wallets"]; }

public:
    void setUp() override {
        m_vectors_text = sigil::test::ReadDataFile("ethers_wallet_vectors.json");
        m_vectors.Parse(m_vectors_text.c_str());
        CPPUNIT_ASSERT(!m_vectors.HasParseError());
        m_heap = MakeHeap(true);
    }
    void tearDown() override {
        m_heap.reset();
        m_plain.reset();
    }

    void testHidesNativesAndFreezesExports() {
        CPPUNIT_ASSERT_EQUAL(std::string("undefined"), Run("typeof __sigil_crypto"));
        CPPUNIT_ASSERT_EQUAL(std::string("undefined"), Run("typeof __sigil_keccak256"));
        CPPUNIT_ASSERT_EQUAL(std::string("ethers/5.8.0"), Run("ethers.version"));
        CPPUNIT_ASSERT_EQUAL(std::string("true"),
                             Run("Object.isFrozen(ethers) && Object.isFrozen(ethers.utils) && Object.isFrozen(ethers.providers)"));
        // A script cannot swap the implementation or the global.
        CPPUNIT_ASSERT_EQUAL(std::string("function"),
                             Run("(function () { try { ethers.utils.keccak256 = null; } catch (e) {} return typeof ethers.utils.keccak256; })()"));
        CPPUNIT_ASSERT_EQUAL(std::string("object"), Run("(function () { try { ethers = null; } catch (e) {} return typeof ethers; })()"));
        // A wallet's address is read-only, as in ethers.
        CPPUNIT_ASSERT_EQUAL(Str(Wallets()[1]["address"]),
                             Run("(function () { var w = new ethers.Wallet(V.wallets[1].privateKey);"
                                 " try { w.address = '0x'; } catch (e) {} return w.address; })()"));
    }

    void testWalletKeysMatchEthers() {
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const auto& w = Wallets()[i];
            const std::string key = "V.wallets[" + std::to_string(i) + "].privateKey";
            const std::string make = "new ethers.Wallet(" + key + ")";
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run(make + ".address"));
            CPPUNIT_ASSERT_EQUAL(Str(w["publicKey"]), Run(make + ".publicKey"));
            CPPUNIT_ASSERT_EQUAL(Str(w["compressedPublicKey"]), Run(make + "._signingKey().compressedPublicKey"));
            CPPUNIT_ASSERT_EQUAL(Str(w["privateKey"]), Run(make + ".privateKey"));
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run("ethers.utils.computeAddress(" + make + ".publicKey)"));
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run("ethers.utils.computeAddress(" + make + "._signingKey().compressedPublicKey)"));
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run("ethers.utils.computeAddress(" + key + ")"));
            CPPUNIT_ASSERT_EQUAL(Str(w["compressedPublicKey"]), Run("ethers.utils.computePublicKey(" + key + ", true)"));
            CPPUNIT_ASSERT_EQUAL(Str(w["publicKey"]), Run("ethers.utils.computePublicKey(V.wallets[" + std::to_string(i) + "].compressedPublicKey)"));
        }
    }

    void testReadmeExample() {
        const auto& w = Wallets()[1];
        const std::string result = Run(
            "(function () { const wallet = new ethers.Wallet(V.wallets[1].privateKey); var signature;"
            " wallet.signMessage('Chipotle Rocks!').then(function (s) { signature = s; });"
            " while (signature === undefined && __sigil_jobs.runOne()) {}"
            " return { wallet_address: wallet.address, signature: signature, publicKey: wallet.publicKey }; })()");
        const std::string expected = "{\"wallet_address\":\"" + Str(w["address"]) + "\",\"signature\":\"" +
                                     Str(w["messages"][0]["signature"]) + "\",\"publicKey\":\"" + Str(w["publicKey"]) + "\"}";
        CPPUNIT_ASSERT_EQUAL(expected, result);
    }

    // A promise's value, settled by running the heap's jobs (as the prelude's await does).
    static std::string Settled(const std::string& promise) {
        return "(function () { var out = 'pending'; (" + promise + ").then(function (v) { out = v; }, function (e) { out = 'ERR: ' + e.message; });"
               " while (out === 'pending' && __sigil_jobs.runOne()) {} return out; })()";
    }

    void testSignMessageMatchesEthers() {
        int checked = 0;
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const auto& messages = Wallets()[i]["messages"];
            for (rapidjson::SizeType j = 0; j < messages.Size(); ++j) {
                const std::string m = "V.wallets[" + std::to_string(i) + "].messages[" + std::to_string(j) + "]";
                CPPUNIT_ASSERT_EQUAL_MESSAGE(m, Str(messages[j]["signature"]),
                                             Run(Settled("new ethers.Wallet(V.wallets[" + std::to_string(i) + "].privateKey).signMessage(msgOf(" + m + "))")));
                ++checked;
            }
        }
        CPPUNIT_ASSERT(checked >= 30);
    }

    void testSignTypedDataMatchesEthers() {
        CPPUNIT_ASSERT_EQUAL(Str(m_vectors["typedData"]["hash"]),
                             Run("ethers.utils._TypedDataEncoder.hash(V.typedData.domain, V.typedData.types, V.typedData.value)"));
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const std::string make = "new ethers.Wallet(V.wallets[" + std::to_string(i) + "].privateKey)";
            CPPUNIT_ASSERT_EQUAL(Str(Wallets()[i]["typedDataSignature"]),
                                 Run(Settled(make + "._signTypedData(V.typedData.domain, V.typedData.types, V.typedData.value)")));
        }
    }

    void testSignDigestAndRecover() {
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const std::string idx = std::to_string(i);
            const std::string expected = Str(Wallets()[i]["digestSignature"]);
            CPPUNIT_ASSERT_EQUAL(expected, Run("ethers.utils.joinSignature(new ethers.utils.SigningKey(V.wallets[" + idx +
                                               "].privateKey).signDigest(ethers.utils.id('digest')))"));
            CPPUNIT_ASSERT_EQUAL(Str(Wallets()[i]["address"]), Run("ethers.utils.recoverAddress(ethers.utils.id('digest'), '" + expected + "')"));
            CPPUNIT_ASSERT_EQUAL(Str(Wallets()[i]["publicKey"]),
                                 Run("ethers.utils.recoverPublicKey(ethers.utils.id('digest'), ethers.utils.splitSignature('" + expected + "'))"));
        }
    }

    void testSignTransactionMatchesEthers() {
        int checked = 0;
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const auto& txs = Wallets()[i]["transactions"];
            for (rapidjson::SizeType j = 0; j < txs.Size(); ++j) {
                const std::string t = "V.wallets[" + std::to_string(i) + "].transactions[" + std::to_string(j) + "]";
                CPPUNIT_ASSERT_EQUAL_MESSAGE(t, Str(txs[j]["signed"]),
                                             Run(Settled("new ethers.Wallet(V.wallets[" + std::to_string(i) + "].privateKey).signTransaction(txOf(" + t + "))")));
                ++checked;
            }
        }
        CPPUNIT_ASSERT(checked >= 32);
    }

    void testHashesMatchEthers() {
        for (const char* kind : {"keccak256", "sha256"}) {
            const auto& cases = m_vectors[kind];
            for (rapidjson::SizeType i = 0; i < cases.Size(); ++i) {
                const std::string c = std::string("V.") + kind + "[" + std::to_string(i) + "]";
                CPPUNIT_ASSERT_EQUAL(Str(cases[i]["hash"]), Run(std::string("ethers.utils.") + kind + "(" + c + ".data)"));
                CPPUNIT_ASSERT_EQUAL(Str(cases[i]["hash"]), Run(std::string("ethers.utils.") + kind + "(ethers.utils.arrayify(" + c + ".data))"));
            }
        }
        for (rapidjson::SizeType i = 0; i < m_vectors["id"].Size(); ++i) {
            CPPUNIT_ASSERT_EQUAL(Str(m_vectors["id"][i]["hash"]), Run("ethers.utils.id(V.id[" + std::to_string(i) + "].text)"));
        }
        for (rapidjson::SizeType i = 0; i < m_vectors["hashMessage"].Size(); ++i) {
            CPPUNIT_ASSERT_EQUAL(Str(m_vectors["hashMessage"][i]["hash"]),
                                 Run("ethers.utils.hashMessage(V.hashMessage[" + std::to_string(i) + "].message)"));
        }
    }

    void testGetAddressMatchesEthers() {
        const auto& cases = m_vectors["getAddress"];
        for (rapidjson::SizeType i = 0; i < cases.Size(); ++i) {
            const std::string c = "V.getAddress[" + std::to_string(i) + "].input";
            CPPUNIT_ASSERT_EQUAL(Str(cases[i]["address"]), Run("ethers.utils.getAddress(" + c + ")"));
            CPPUNIT_ASSERT_EQUAL(std::string("true"), Run("ethers.utils.isAddress(" + c + ")"));
        }
    }

    void testVerifyRecoversSigner() {
        const std::string address = Str(Wallets()[2]["address"]);
        CPPUNIT_ASSERT_EQUAL(address, Run("ethers.utils.verifyMessage(msgOf(V.wallets[2].messages[2]), V.wallets[2].messages[2].signature)"));
        CPPUNIT_ASSERT_EQUAL(address, Run("ethers.utils.verifyTypedData(V.typedData.domain, V.typedData.types, V.typedData.value, V.wallets[2].typedDataSignature)"));
        CPPUNIT_ASSERT_EQUAL(address, Run("(function () { var s = ethers.utils.splitSignature(V.wallets[2].messages[0].signature);"
                                          " return ethers.utils.verifyMessage(V.wallets[2].messages[0].message, {r: s.r, s: s.s, v: s.v}); })()"));
        CPPUNIT_ASSERT(address != Run("ethers.utils.verifyMessage('other', V.wallets[2].messages[0].signature)"));
    }

    void testFastPathsMatchEthersOwnCode() {
        // Keys spread over the scalar range (small, large, random-looking), digests and data of
        // lengths around keccak's 136-byte block.
        for (int i = 0; i < 6; ++i) {
            const std::string key = i == 0   ? "'0x' + '00'.repeat(31) + '01'"
                                    : i == 1 ? "'0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140'"
                                             : "ethers.utils.keccak256(ethers.utils.toUtf8Bytes('key " + std::to_string(i) + "'))";
            const std::string digest = "ethers.utils.keccak256(ethers.utils.toUtf8Bytes('digest " + std::to_string(i) + "'))";
            const std::string sk = "new ethers.utils.SigningKey(" + key + ")";
            AssertSameAsEthers("[" + sk + ".publicKey, " + sk + ".compressedPublicKey, new ethers.Wallet(" + key + ").address]");
            AssertSameAsEthers("[ethers.utils.computeAddress(" + key + "), ethers.utils.computeAddress(" + sk + ".publicKey),"
                               " ethers.utils.computeAddress(" + sk + ".compressedPublicKey), ethers.utils.computeAddress(" + sk +
                               ".publicKey.toUpperCase().replace('0X', '0x')), ethers.utils.computeAddress(ethers.utils.arrayify(" + sk + ".publicKey))]");
            AssertSameAsEthers(sk + ".signDigest(" + digest + ")");
            AssertSameAsEthers("(function () { var s = " + sk + ".signDigest(" + digest + "); return [ethers.utils.recoverPublicKey(" +
                               digest + ", s), ethers.utils.recoverAddress(" + digest + ", ethers.utils.joinSignature(s))]; })()");
            AssertSameAsEthers("[ethers.utils.computePublicKey(" + key + "), ethers.utils.computePublicKey(" + key + ", true),"
                               " ethers.utils.computePublicKey(" + sk + ".compressedPublicKey),"
                               " ethers.utils.computePublicKey(" + sk + ".publicKey, true)]");
            AssertSameAsEthers(Settled("new ethers.Wallet(" + key + ").signMessage('message " + std::to_string(i) + "')"));
            AssertSameAsEthers(Settled("new ethers.Wallet(" + key + ").signTransaction({to: V.wallets[0].address, nonce: " +
                                       std::to_string(i) + ", gasLimit: 21000, maxFeePerGas: 7, maxPriorityFeePerGas: 1, chainId: 31337, type: 2})"));
            AssertSameAsEthers(Settled("new ethers.Wallet(" + key + ")._signTypedData(V.typedData.domain, V.typedData.types, V.typedData.value)"));
        }
        AssertSameAsEthers("[0, 1, 31, 32, 135, 136, 137, 271, 272, 1000].map(function (n) {"
                           " var b = new Uint8Array(n); for (var i = 0; i < n; i++) b[i] = (i * 7 + n) & 255; return ethers.utils.keccak256(b); })");
        // HMAC with keys shorter and longer than the hash's block, and PBKDF2 (BIP-39's seed and a
        // few output lengths across block boundaries).
        AssertSameAsEthers("['sha256', 'sha512'].map(function (a) { return [0, 1, 64, 65, 128, 129, 300].map(function (n) {"
                           " var k = new Uint8Array(n); for (var i = 0; i < n; i++) k[i] = (i * 13 + n) & 255;"
                           " return ethers.utils.computeHmac(a, k, ethers.utils.toUtf8Bytes('data ' + n)); }); })");
        AssertSameAsEthers("[[32, 'sha256', 1], [20, 'sha256', 3], [64, 'sha512', 2048], [65, 'sha512', 2], [100, 'sha256', 5]].map(function (c) {"
                           " return ethers.utils.pbkdf2(ethers.utils.toUtf8Bytes('password'), ethers.utils.toUtf8Bytes('mnemonicsalt'), c[2], c[0], c[1]); })");
        AssertSameAsEthers("ethers.utils.mnemonicToSeed('test test test test test test test test test test test junk', 'pass')");
    }

    void testErrorsMatchEthersOwnCode() {
        // Where a native refuses, ethers' own code runs: the same error, worded as ethers words it.
        for (const char* key : {"'0x' + '00'.repeat(32)", "'0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141'",
                                "'0x' + 'ff'.repeat(32)", "'0x1234'", "'0x' + 'ab'.repeat(33)"}) {
            AssertSameAsEthers(std::string("new ethers.Wallet(") + key + ").address");
        }
        AssertSameAsEthers("ethers.utils.computePublicKey('0x04' + '00'.repeat(64), true)");
        AssertSameAsEthers("ethers.utils.computePublicKey('0x02' + 'ff'.repeat(32))");
        // Not on the curve: ethers hashes the 64 bytes as given; so must the fast path (by not taking it).
        AssertSameAsEthers("ethers.utils.computeAddress('0x04' + '11'.repeat(64))");
        AssertSameAsEthers("ethers.utils.computeAddress('0x05' + '11'.repeat(64))");
        AssertSameAsEthers("ethers.utils.computeAddress('0x02' + 'ff'.repeat(32))");
        AssertSameAsEthers("ethers.utils.computeAddress('0x' + '00'.repeat(32))");
        AssertSameAsEthers("ethers.utils.recoverAddress(ethers.utils.id('x'), '0x' + '00'.repeat(65))");
        AssertSameAsEthers("ethers.utils.recoverAddress(ethers.utils.id('x'), '0x' + '11'.repeat(32) + 'ff'.repeat(32) + '1b')");
        AssertSameAsEthers("ethers.utils.recoverAddress('0x1234', V.wallets[0].digestSignature)");
        AssertSameAsEthers("new ethers.utils.SigningKey(V.wallets[0].privateKey).signDigest('0x1234')");
        AssertSameAsEthers("ethers.utils.keccak256('0xabc')");
        AssertSameAsEthers("ethers.utils.computeHmac('sha1', '0x01', '0x02')");
        AssertSameAsEthers("ethers.utils.computeHmac('sha256', '0x0', '0x02')");
        AssertSameAsEthers("ethers.utils.pbkdf2('0x01', '0x02', 1, 32, 'md5')");
        AssertThrows("new ethers.Wallet('0x1234')", "invalid private key");
        // The message never echoes the key.
        CPPUNIT_ASSERT(Run("new ethers.Wallet('0x' + 'ff'.repeat(32))").find("ffffffff") == std::string::npos);
    }

    void testNativeRefusesMalformedCalls() {
        // RunCryptoOp is what the native runs; it must refuse without crashing.
        CPPUNIT_ASSERT_EQUAL(std::string("unknown_crypto_operation"), RunCryptoOp("nope", "{}").error().code);
        // PBKDF2-HMAC-SHA256 of P = "password", S = "salt", c = 1 and 2 (values from Python's
        // hashlib.pbkdf2_hmac), and what the native refuses (ethers' own code then answers).
        auto pbkdf2 = RunCryptoOp("pbkdf2", R"({"algorithm":"sha256","password":"0x70617373776f7264","salt":"0x73616c74","iterations":1,"keylen":32})");
        CPPUNIT_ASSERT(pbkdf2.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("\"0x120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b\""), *pbkdf2);
        pbkdf2 = RunCryptoOp("pbkdf2", R"({"algorithm":"sha256","password":"0x70617373776f7264","salt":"0x73616c74","iterations":2,"keylen":32})");
        CPPUNIT_ASSERT_EQUAL(std::string("\"0xae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43\""), *pbkdf2);
        for (const char* bad : {R"({"algorithm":"md5","password":"0x","salt":"0x","iterations":1,"keylen":32})",
                                R"({"algorithm":"sha256","password":"0x","salt":"0x","iterations":0,"keylen":32})",
                                R"({"algorithm":"sha256","password":"0x","salt":"0x","iterations":1,"keylen":0})",
                                R"({"algorithm":"sha256","password":"0x","salt":"0x","iterations":1,"keylen":100000})",
                                R"({"algorithm":"sha256","password":"0x","salt":"0x","iterations":100000000,"keylen":32})"}) {
            CPPUNIT_ASSERT_EQUAL_MESSAGE(bad, std::string("invalid_crypto_argument"), RunCryptoOp("pbkdf2", bad).error().code);
        }
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_json"), RunCryptoOp("keccak256", "{\"data\":").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_json"), RunCryptoOp("keccak256", "[]").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_argument"), RunCryptoOp("keccak256", "{}").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_argument"), RunCryptoOp("keccak256", "{\"data\":5}").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_argument"),
                             RunCryptoOp("signTransaction", "{\"privateKey\":\"0x" + std::string(64, '1') + "\",\"tx\":5}").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("crypto_args_too_large"),
                             RunCryptoOp("keccak256", std::string(MAX_CRYPTO_ARGS_BYTES + 1, ' ')).error().code);
        auto ok = RunCryptoOp("keccak256", "{\"data\":\"0x\"}");
        CPPUNIT_ASSERT(ok.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("\"0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470\""), *ok);
        // Through Duktape (installed again: ethers took them): wrong argument types are a
        // TypeError, failures an Error; the heap survives.
        duk_context* ctx = m_heap.get();
        InstallCryptoNatives(ctx);
        CPPUNIT_ASSERT(Run("__sigil_crypto(1, 2)").find("TypeError") != std::string::npos);
        AssertThrows("__sigil_crypto('keccak256', '{\"data\":\"0xz\"}')", "invalid BytesLike value");
        AssertThrows("__sigil_crypto('keccak256', new Array(5 * 1024 * 1024).join(' '))", "too large");
        CPPUNIT_ASSERT(Run("__sigil_keccak256('0x12')").find("TypeError") != std::string::npos);
        CPPUNIT_ASSERT(Run("__sigil_keccak256({length: 2})").find("TypeError") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(std::string("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
                             Run("__sigil_keccak256(new Uint8Array(0))"));
        CPPUNIT_ASSERT_EQUAL(Run("ethers.utils.keccak256('0x0102')"), Run("__sigil_keccak256(new Uint8Array([1, 2]).subarray(0))"));
        CPPUNIT_ASSERT_EQUAL(Run("ethers.utils.keccak256('0x02')"), Run("__sigil_keccak256(new Uint8Array([1, 2]).subarray(1))"));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SandboxCryptoTests);
