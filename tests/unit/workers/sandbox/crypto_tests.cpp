// The sandbox's native ethers subset (workers/js/ethers.js over __sigil_crypto) against vectors
// made by the real ethers 6.17 (tests/data/ethers_wallet_vectors.json), plus malformed input.
#include <cppunit/extensions/HelperMacros.h>
#include <duktape.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "tests/test_support.h"
#include "workers/sandbox/crypto.h"
#include "workers/sandbox/transpiler.h"

using namespace sigil::workers;

namespace {

struct HeapFree {
    void operator()(duk_context* ctx) const { duk_destroy_heap(ctx); }
};

// Loads shims.js and ethers.js into `ctx` and the vectors into the global V.
duk_ret_t SetUpHeap(duk_context* ctx, void* udata) {
    const auto* vectors = static_cast<const std::string*>(udata);
    InstallCryptoNatives(ctx);
    const std::string_view shims = ShimsSource(), ethers = EthersSource();
    duk_eval_lstring_noresult(ctx, shims.data(), shims.size());
    duk_eval_lstring_noresult(ctx, ethers.data(), ethers.size());
    duk_push_lstring(ctx, vectors->data(), vectors->size());
    duk_json_decode(ctx, -1);
    duk_put_global_string(ctx, "V");
    duk_eval_string_noresult(ctx,
                             "function msgOf(m) { return m.message !== undefined ? m.message : ethers.getBytes(m.bytes); }");
    return 0;
}

std::string Str(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

}  // namespace

class SandboxCryptoTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SandboxCryptoTests);
    CPPUNIT_TEST(testHidesNativeAndFreezesExports);
    CPPUNIT_TEST(testWalletKeysMatchEthers);
    CPPUNIT_TEST(testReadmeExample);
    CPPUNIT_TEST(testSignMessageMatchesEthers);
    CPPUNIT_TEST(testSignTypedDataMatchesEthers);
    CPPUNIT_TEST(testSignDigestAndRecover);
    CPPUNIT_TEST(testSignTransactionMatchesEthers);
    CPPUNIT_TEST(testHashesMatchEthers);
    CPPUNIT_TEST(testGetAddressMatchesEthers);
    CPPUNIT_TEST(testVerifyRecoversSigner);
    CPPUNIT_TEST(testUtf8RoundTrips);
    CPPUNIT_TEST(testBytesHelpers);
    CPPUNIT_TEST(testRejectsBadPrivateKey);
    CPPUNIT_TEST(testRejectsBadHex);
    CPPUNIT_TEST(testRejectsBadAddress);
    CPPUNIT_TEST(testRejectsBadTypedData);
    CPPUNIT_TEST(testRejectsBadSignature);
    CPPUNIT_TEST(testRejectsBadTransaction);
    CPPUNIT_TEST(testNativeRefusesMalformedCalls);
    CPPUNIT_TEST_SUITE_END();

    std::unique_ptr<duk_context, HeapFree> m_heap;
    std::string m_vectors_text;
    rapidjson::Document m_vectors;

    // Evaluates `code`; returns the value as a string (JSON for non-strings) or "ERR: message".
    std::string Run(const std::string& code) {
        duk_context* ctx = m_heap.get();
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
        m_heap.reset(duk_create_heap_default());
        CPPUNIT_ASSERT(m_heap != nullptr);
        if (duk_safe_call(m_heap.get(), SetUpHeap, &m_vectors_text, 0, 1) != 0) {
            CPPUNIT_FAIL(std::string("setup failed: ") + duk_safe_to_string(m_heap.get(), -1));
        }
        duk_pop(m_heap.get());
    }
    void tearDown() override { m_heap.reset(); }

    void testHidesNativeAndFreezesExports() {
        CPPUNIT_ASSERT_EQUAL(std::string("undefined"), Run("typeof __sigil_crypto"));
        CPPUNIT_ASSERT_EQUAL(std::string("true"), Run("Object.isFrozen(ethers) && Object.isFrozen(ethers.utils)"));
        CPPUNIT_ASSERT_EQUAL(std::string("true"), Run("Object.isFrozen(ethers.Wallet.prototype)"));
        // A script cannot swap the implementation or a wallet's key.
        CPPUNIT_ASSERT_EQUAL(std::string("function"),
                             Run("(function () { try { ethers.keccak256 = null; } catch (e) {} return typeof ethers.keccak256; })()"));
        CPPUNIT_ASSERT_EQUAL(Str(Wallets()[1]["address"]),
                             Run("(function () { var w = new ethers.Wallet(V.wallets[1].privateKey);"
                                 " try { w.address = '0x'; } catch (e) {} return w.address; })()"));
        CPPUNIT_ASSERT_EQUAL(std::string("6.17.0"), Run("ethers.version"));
    }

    void testWalletKeysMatchEthers() {
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const auto& w = Wallets()[i];
            const std::string make = "new ethers.Wallet(V.wallets[" + std::to_string(i) + "].privateKey)";
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run(make + ".address"));
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run(make + ".getAddress()"));
            CPPUNIT_ASSERT_EQUAL(Str(w["publicKey"]), Run(make + ".publicKey"));
            CPPUNIT_ASSERT_EQUAL(Str(w["publicKey"]), Run(make + ".signingKey.publicKey"));
            CPPUNIT_ASSERT_EQUAL(Str(w["compressedPublicKey"]), Run(make + ".signingKey.compressedPublicKey"));
            CPPUNIT_ASSERT_EQUAL(Str(w["privateKey"]), Run(make + ".privateKey"));
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run("ethers.computeAddress(" + make + ".publicKey)"));
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run("ethers.computeAddress(" + make + ".signingKey.compressedPublicKey)"));
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]), Run("ethers.utils.computeAddress(V.wallets[" + std::to_string(i) + "].privateKey)"));
            // ethers v6 accepts the key without 0x and in upper case; so do we.
            CPPUNIT_ASSERT_EQUAL(Str(w["address"]),
                                 Run("new ethers.Wallet(V.wallets[" + std::to_string(i) + "].privateKey.substring(2).toUpperCase()).address"));
        }
        // JSON.stringify(wallet) shows what ethers 6 shows: no key material.
        CPPUNIT_ASSERT_EQUAL("{\"provider\":null,\"address\":\"" + Str(Wallets()[0]["address"]) + "\"}",
                             Run("new ethers.Wallet(V.wallets[0].privateKey)"));
    }

    void testReadmeExample() {
        const auto& w = Wallets()[1];
        const std::string result = Run(
            "(function () { const wallet = new ethers.Wallet(V.wallets[1].privateKey);"
            " const signature = wallet.signMessage('Chipotle Rocks!');"
            " return { wallet_address: wallet.address, signature: signature, publicKey: wallet.publicKey }; })()");
        const std::string expected = "{\"wallet_address\":\"" + Str(w["address"]) + "\",\"signature\":\"" +
                                     Str(w["messages"][0]["signature"]) + "\",\"publicKey\":\"" + Str(w["publicKey"]) + "\"}";
        CPPUNIT_ASSERT_EQUAL(expected, result);
    }

    void testSignMessageMatchesEthers() {
        int checked = 0;
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const auto& messages = Wallets()[i]["messages"];
            for (rapidjson::SizeType j = 0; j < messages.Size(); ++j) {
                const std::string m = "V.wallets[" + std::to_string(i) + "].messages[" + std::to_string(j) + "]";
                CPPUNIT_ASSERT_EQUAL_MESSAGE(m, Str(messages[j]["signature"]),
                                             Run("new ethers.Wallet(V.wallets[" + std::to_string(i) + "].privateKey).signMessage(msgOf(" + m + "))"));
                ++checked;
            }
        }
        CPPUNIT_ASSERT(checked >= 30);
    }

    void testSignTypedDataMatchesEthers() {
        CPPUNIT_ASSERT_EQUAL(Str(m_vectors["typedData"]["hash"]),
                             Run("ethers.TypedDataEncoder.hash(V.typedData.domain, V.typedData.types, V.typedData.value)"));
        CPPUNIT_ASSERT_EQUAL(Str(m_vectors["typedData"]["encodedType"]),
                             Run("ethers.TypedDataEncoder.encodeType(V.typedData.domain, V.typedData.types, V.typedData.value)"));
        CPPUNIT_ASSERT_EQUAL(std::string("Mail"), Run("ethers.TypedDataEncoder.getPrimaryType(V.typedData.types)"));
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const std::string make = "new ethers.Wallet(V.wallets[" + std::to_string(i) + "].privateKey)";
            const std::string expected = Str(Wallets()[i]["typedDataSignature"]);
            CPPUNIT_ASSERT_EQUAL(expected, Run(make + ".signTypedData(V.typedData.domain, V.typedData.types, V.typedData.value)"));
            CPPUNIT_ASSERT_EQUAL(expected, Run(make + "._signTypedData(V.typedData.domain, V.typedData.types, V.typedData.value)"));
        }
        // Bytes values, a hex chainId and a v5 BigNumber-like amount hash the same as ethers' form.
        CPPUNIT_ASSERT_EQUAL(Str(m_vectors["typedData"]["hash"]),
                             Run("(function () { var d = JSON.parse(JSON.stringify(V.typedData)); d.domain.chainId = '0x1';"
                                 " d.value.tags[0] = ethers.getBytes(d.value.tags[0]);"
                                 " return ethers.TypedDataEncoder.hash(d.domain, d.types, d.value); })()"));
    }

    void testSignDigestAndRecover() {
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const std::string idx = std::to_string(i);
            const std::string expected = Str(Wallets()[i]["digestSignature"]);
            CPPUNIT_ASSERT_EQUAL(expected, Run("new ethers.Wallet(V.wallets[" + idx + "].privateKey).signingKey.sign(ethers.id('digest')).serialized"));
            CPPUNIT_ASSERT_EQUAL(Str(Wallets()[i]["address"]), Run("ethers.recoverAddress(ethers.id('digest'), '" + expected + "')"));
            CPPUNIT_ASSERT_EQUAL(Str(Wallets()[i]["publicKey"]),
                                 Run("ethers.SigningKey.recoverPublicKey(ethers.id('digest'), ethers.Signature.from('" + expected + "'))"));
        }
    }

    void testSignTransactionMatchesEthers() {
        int checked = 0;
        for (rapidjson::SizeType i = 0; i < Wallets().Size(); ++i) {
            const auto& txs = Wallets()[i]["transactions"];
            for (rapidjson::SizeType j = 0; j < txs.Size(); ++j) {
                const std::string t = "V.wallets[" + std::to_string(i) + "].transactions[" + std::to_string(j) + "].tx";
                CPPUNIT_ASSERT_EQUAL_MESSAGE(t, Str(txs[j]["signed"]),
                                             Run("new ethers.Wallet(V.wallets[" + std::to_string(i) + "].privateKey).signTransaction(" + t + ")"));
                ++checked;
            }
        }
        CPPUNIT_ASSERT(checked >= 32);
        // `gas` is accepted as gasLimit (ethers 6 ignores it), and `from` must be the signer.
        CPPUNIT_ASSERT_EQUAL(std::string("true"),
                             Run("(function () { var w = new ethers.Wallet(V.wallets[1].privateKey);"
                                 " var a = JSON.parse(JSON.stringify(V.wallets[1].transactions[0].tx)); var b = JSON.parse(JSON.stringify(a));"
                                 " b.gas = b.gasLimit; delete b.gasLimit; b.from = w.address;"
                                 " return w.signTransaction(a) === w.signTransaction(b); })()"));
    }

    void testHashesMatchEthers() {
        for (const char* kind : {"keccak256", "sha256"}) {
            const auto& cases = m_vectors[kind];
            for (rapidjson::SizeType i = 0; i < cases.Size(); ++i) {
                const std::string c = std::string("V.") + kind + "[" + std::to_string(i) + "]";
                CPPUNIT_ASSERT_EQUAL(Str(cases[i]["hash"]), Run(std::string("ethers.") + kind + "(" + c + ".data)"));
                CPPUNIT_ASSERT_EQUAL(Str(cases[i]["hash"]), Run(std::string("ethers.utils.") + kind + "(ethers.getBytes(" + c + ".data))"));
            }
        }
        for (rapidjson::SizeType i = 0; i < m_vectors["id"].Size(); ++i) {
            CPPUNIT_ASSERT_EQUAL(Str(m_vectors["id"][i]["hash"]), Run("ethers.id(V.id[" + std::to_string(i) + "].text)"));
        }
        for (rapidjson::SizeType i = 0; i < m_vectors["hashMessage"].Size(); ++i) {
            CPPUNIT_ASSERT_EQUAL(Str(m_vectors["hashMessage"][i]["hash"]),
                                 Run("ethers.hashMessage(V.hashMessage[" + std::to_string(i) + "].message)"));
        }
    }

    void testGetAddressMatchesEthers() {
        const auto& cases = m_vectors["getAddress"];
        for (rapidjson::SizeType i = 0; i < cases.Size(); ++i) {
            const std::string c = "V.getAddress[" + std::to_string(i) + "].input";
            CPPUNIT_ASSERT_EQUAL(Str(cases[i]["address"]), Run("ethers.getAddress(" + c + ")"));
            CPPUNIT_ASSERT_EQUAL(Str(cases[i]["address"]), Run("ethers.utils.getAddress(" + c + ")"));
            CPPUNIT_ASSERT_EQUAL(std::string("true"), Run("ethers.isAddress(" + c + ")"));
        }
    }

    void testVerifyRecoversSigner() {
        const auto& w = Wallets()[2];
        const std::string address = Str(w["address"]);
        CPPUNIT_ASSERT_EQUAL(address, Run("ethers.verifyMessage(msgOf(V.wallets[2].messages[2]), V.wallets[2].messages[2].signature)"));
        CPPUNIT_ASSERT_EQUAL(address, Run("ethers.utils.verifyMessage(msgOf(V.wallets[2].messages[5]), V.wallets[2].messages[5].signature)"));
        CPPUNIT_ASSERT_EQUAL(address, Run("ethers.verifyTypedData(V.typedData.domain, V.typedData.types, V.typedData.value, V.wallets[2].typedDataSignature)"));
        // A {r, s, v} object and the v = 0/1 form recover the same signer.
        CPPUNIT_ASSERT_EQUAL(address, Run("(function () { var s = ethers.Signature.from(V.wallets[2].messages[0].signature);"
                                          " return ethers.verifyMessage(V.wallets[2].messages[0].message, {r: s.r, s: s.s, v: s.v}); })()"));
        // Another message does not recover this signer.
        CPPUNIT_ASSERT(address != Run("ethers.verifyMessage('other', V.wallets[2].messages[0].signature)"));
    }

    void testUtf8RoundTrips() {
        // Duktape keeps a non-BMP character from UTF-8 source as one code point; an escaped
        // surrogate pair is two. Both must encode to the same four bytes, as in ethers.
        CPPUNIT_ASSERT_EQUAL(std::string("0xf09f9880"), Run("ethers.hexlify(ethers.toUtf8Bytes('\xF0\x9F\x98\x80'))"));
        CPPUNIT_ASSERT_EQUAL(std::string("0xf09f9880"), Run("ethers.hexlify(ethers.toUtf8Bytes('\\ud83d\\ude00'))"));
        CPPUNIT_ASSERT_EQUAL(std::string("0x68c3a9e697a5"), Run("ethers.hexlify(ethers.toUtf8Bytes('h\\u00e9\\u65e5'))"));
        CPPUNIT_ASSERT_EQUAL(std::string("true"),
                             Run("ethers.toUtf8String(ethers.toUtf8Bytes(V.hashMessage[2].message)) === 'h\\u00e9llo w\\u00f6rld \\ud83d\\ude00 \\u65e5\\u672c'"));
        AssertThrows("ethers.toUtf8Bytes('\\ud83d')", "invalid surrogate pair");
        AssertThrows("ethers.toUtf8String('0xc0af')", "invalid codepoint");
        AssertThrows("ethers.toUtf8String('0xf09f98')", "invalid codepoint");
        AssertThrows("ethers.toUtf8String('0xeda080')", "invalid codepoint");
    }

    void testBytesHelpers() {
        CPPUNIT_ASSERT_EQUAL(std::string("0x0102ff"), Run("ethers.hexlify(new Uint8Array([1, 2, 255]))"));
        CPPUNIT_ASSERT_EQUAL(std::string("0xabcd"), Run("ethers.hexlify('0xABCD')"));
        CPPUNIT_ASSERT_EQUAL(std::string("{\"0\":171,\"1\":205}"), Run("ethers.getBytes('0xabcd')"));
        CPPUNIT_ASSERT_EQUAL(std::string("0x0102"), Run("ethers.hexlify(ethers.utils.arrayify([1, 2]))"));
        CPPUNIT_ASSERT_EQUAL(std::string("0x0100"), Run("ethers.utils.hexlify(256)"));
        CPPUNIT_ASSERT_EQUAL(std::string("0x0102ab"), Run("ethers.concat(['0x0102', new Uint8Array([171])])"));
        CPPUNIT_ASSERT_EQUAL(std::string("0x000000ab"), Run("ethers.zeroPadValue('0xab', 4)"));
        CPPUNIT_ASSERT_EQUAL(std::string("0xab000000"), Run("ethers.zeroPadBytes('0xab', 4)"));
        CPPUNIT_ASSERT_EQUAL(std::string("0x02"), Run("ethers.dataSlice('0x010203', 1, 2)"));
        CPPUNIT_ASSERT_EQUAL(std::string("[true,true,false,false,true,false]"),
                             Run("[ethers.isHexString('0x'), ethers.isHexString('0xab', 1), ethers.isHexString('0xab', 2),"
                                 " ethers.isHexString('ab'), ethers.isHexString('0xabc'), ethers.isHexString('0xabc', true)]"));
        AssertThrows("ethers.zeroPadValue('0xabcdef', 2)", "padding exceeds data length");
    }

    void testRejectsBadPrivateKey() {
        for (const char* key : {"'0x1234'", "'0x' + '00'.repeat(32)", "'0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141'",
                                "'0x' + 'zz'.repeat(32)", "'0x' + 'ab'.repeat(33)", "null", "12", "{}", "new Uint8Array(31)",
                                "'0x' + 'ff'.repeat(32)"}) {
            AssertThrows(std::string("new ethers.Wallet(") + key + ")", "invalid private key");
        }
        // The message never echoes the key.
        CPPUNIT_ASSERT(Run("new ethers.Wallet('0x' + 'ff'.repeat(32))").find("ffffffff") == std::string::npos);
        AssertThrows("ethers.Wallet(V.wallets[0].privateKey)", "without 'new'");
    }

    void testRejectsBadHex() {
        for (const char* bad : {"'0xabc'", "'abcd'", "'0xgg'", "[1, 2]", "null", "12", "'hello'"}) {
            AssertThrows(std::string("ethers.getBytes(") + bad + ")", "invalid BytesLike value");
            AssertThrows(std::string("ethers.keccak256(") + bad + ")", "invalid BytesLike value");
        }
        AssertThrows("ethers.utils.arrayify('0xabc')", "hex data is odd-length");
        AssertThrows("ethers.utils.arrayify([256])", "invalid arrayify value");
        AssertThrows("ethers.utils.arrayify(-1)", "invalid arrayify value");
    }

    void testRejectsBadAddress() {
        // One letter's case flipped in a checksummed address.
        AssertThrows("ethers.getAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')", "bad address checksum");
        for (const char* bad : {"'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae'", "'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaedd'",
                                "'0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaeg'", "'vitalik.eth'", "null", "''",
                                "'0X5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'"}) {
            AssertThrows(std::string("ethers.getAddress(") + bad + ")", "invalid address");
            CPPUNIT_ASSERT_EQUAL(std::string("false"), Run(std::string("ethers.isAddress(") + bad + ")"));
        }
        CPPUNIT_ASSERT_EQUAL(std::string("false"), Run("ethers.isAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')"));
        AssertThrows("ethers.computeAddress('0x04' + '00'.repeat(64))", "invalid public key");
    }

    void testRejectsBadTypedData() {
        const std::string sign = "new ethers.Wallet(V.wallets[0].privateKey).signTypedData";
        const std::string copy = "var d = JSON.parse(JSON.stringify(V.typedData));";
        const auto with = [&](const std::string& edit) {
            return "(function () { " + copy + edit + " return " + sign + "(d.domain, d.types, d.value); })()";
        };
        AssertThrows(with("d.value.amount = -1;"), "invalid typed data");
        AssertThrows(with("d.value.amount = 'abc';"), "invalid typed data");
        AssertThrows(with("delete d.value.contents;"), "invalid typed data");
        AssertThrows(with("d.value.extra = 1;"), "invalid typed data");
        AssertThrows(with("d.value.from.wallet = '0xCD2A3d9F938E13CD947Ec05AbC7FE734Df8DD826';"), "invalid typed data");
        AssertThrows(with("d.value.tags[0] = '0x11';"), "invalid typed data");
        AssertThrows(with("d.types.Person[0].type = 'uint7';"), "invalid typed data");
        AssertThrows(with("d.types.Person[0].type = 'Missing';"), "invalid typed data");
        AssertThrows(with("d.types.Unused = [{name: 'a', type: 'uint8'}];"), "invalid typed data");
        AssertThrows(with("d.types.Person.push({name: 'loop', type: 'Mail'});"), "invalid typed data");
        AssertThrows(with("d.domain.chainId = 'x';"), "invalid typed data");
        AssertThrows(with("d.domain.foo = 1;"), "invalid typed-data domain key");
        AssertThrows(sign + "(null, V.typedData.types, V.typedData.value)", "invalid domain");
        AssertThrows(sign + "(V.typedData.domain, V.typedData.types, 'x')", "invalid value");
        // Deep nesting is refused before any parsing.
        AssertThrows(with("var v = {}; for (var i = 0; i < 100; i++) v = {a: v}; d.value.contents = v;"), "nested too deeply");
    }

    void testRejectsBadSignature() {
        const std::string digest = "ethers.id('digest')";
        AssertThrows("ethers.recoverAddress(" + digest + ", '0x1234')", "invalid raw signature length");
        AssertThrows("ethers.recoverAddress(" + digest + ", '0x' + '00'.repeat(65))", "invalid signature");
        // v other than 0, 1, 27, 28.
        AssertThrows("ethers.recoverAddress(" + digest + ", V.wallets[0].digestSignature.substring(0, 130) + '1d')", "invalid signature");
        // High s (n - s): refused as non-canonical, as EIP-2 requires.
        AssertThrows("ethers.recoverAddress(" + digest + ", '0x' + '11'.repeat(32) + 'ff'.repeat(32) + '1b')", "invalid signature");
        AssertThrows("ethers.recoverAddress('0x1234', V.wallets[0].digestSignature)", "invalid digest length");
        AssertThrows("new ethers.Wallet(V.wallets[0].privateKey).signingKey.sign('0x1234')", "invalid digest length");
        AssertThrows("ethers.verifyMessage('x', {r: '0x12', s: '0x34', v: 27})", "invalid signature");
    }

    void testRejectsBadTransaction() {
        const std::string sign = "new ethers.Wallet(V.wallets[0].privateKey).signTransaction";
        AssertThrows(sign + "({to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'})", "bad address checksum");
        AssertThrows(sign + "({to: 'vitalik.eth'})", "invalid address");
        AssertThrows(sign + "({value: -1})", "invalid BigNumberish value");
        AssertThrows(sign + "({value: 1.5})", "invalid BigNumberish value");
        AssertThrows(sign + "({value: 1e300})", "overflow");
        AssertThrows(sign + "({value: '12abc'})", "invalid BigNumberish value");
        AssertThrows(sign + "({value: '0x1' + '0'.repeat(64)})", "invalid BigNumberish value");
        AssertThrows(sign + "({nonce: '0x10000000000000000'})", "nonce out of range");
        AssertThrows(sign + "({data: '0xabc'})", "invalid BytesLike value");
        AssertThrows(sign + "({type: 3})", "unsupported transaction type");
        AssertThrows(sign + "({type: 0, maxFeePerGas: 1})", "cannot have maxFeePerGas");
        AssertThrows(sign + "({maxFeePerGas: 1, maxPriorityFeePerGas: 2})", "priorityFee cannot be more than maxFee");
        AssertThrows(sign + "({accessList: [{address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', storageKeys: []}]})",
                     "accessList");
        AssertThrows(sign + "({from: V.wallets[1].address})", "transaction from address mismatch");
        AssertThrows(sign + "(null)", "invalid transaction");
    }

    void testNativeRefusesMalformedCalls() {
        // RunCryptoOp is what the native runs; it must refuse without crashing.
        CPPUNIT_ASSERT_EQUAL(std::string("unknown_crypto_operation"), RunCryptoOp("nope", "{}").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_json"), RunCryptoOp("keccak256", "{\"data\":").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_json"), RunCryptoOp("keccak256", "[]").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_argument"), RunCryptoOp("keccak256", "{}").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_argument"), RunCryptoOp("keccak256", "{\"data\":5}").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_argument"),
                             RunCryptoOp("signTransaction", "{\"privateKey\":\"0x" + std::string(64, '1') + "\",\"tx\":5}").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_crypto_argument"),
                             RunCryptoOp("signTransaction", "{\"privateKey\":\"0x" + std::string(64, '1') + "\",\"tx\":{\"type\":1.5}}").error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("crypto_args_too_large"),
                             RunCryptoOp("keccak256", std::string(MAX_CRYPTO_ARGS_BYTES + 1, ' ')).error().code);
        auto ok = RunCryptoOp("keccak256", "{\"data\":\"0x\"}");
        CPPUNIT_ASSERT(ok.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("\"0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470\""), *ok);
        // Through Duktape: wrong argument types are a TypeError, failures an Error; the heap survives.
        duk_context* ctx = m_heap.get();
        InstallCryptoNatives(ctx);
        CPPUNIT_ASSERT(Run("__sigil_crypto(1, 2)").find("TypeError") != std::string::npos);
        AssertThrows("__sigil_crypto('keccak256', '{\"data\":\"0xz\"}')", "invalid BytesLike value");
        AssertThrows("__sigil_crypto('keccak256', new Array(5 * 1024 * 1024).join(' '))", "too large");
        CPPUNIT_ASSERT_EQUAL(std::string("\"0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470\""),
                             Run("__sigil_crypto('keccak256', '{\"data\":\"0x\"}')"));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SandboxCryptoTests);
