// The receipt key and keyd's receipt requests (keyd/receipt_protocol.h, docs/receipts.md): the key
// is its own, signs only receipts keyd builds itself, and never leaves keyd by any request.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cstring>

#include "common/hex.h"
#include "common/hkdf.h"
#include "common/keccak.h"
#include "common/key_derivation.h"
#include "common/receipt.h"
#include "common/secp256k1.h"
#include "keyd/key_service.h"
#include "keyd/protocol.h"
#include "keyd/receipt_protocol.h"

using namespace sigil::common;
using namespace sigil::keyd;

namespace {

constexpr std::int64_t NOW = 1'800'000'000;
constexpr std::string_view API_KEY = "c2lnaWwga2V5ZCB0ZXN0IGtleSwgMzIgYnl0ZXMgbG9uZyE=";

SecretBytes TestRoot() {
    Bytes root(32);
    for (std::size_t i = 0; i < root.size(); ++i) root[i] = static_cast<std::uint8_t>(i + 1);
    return SecretBytes(root);
}

Address20 Contract() {
    Address20 a;
    a.fill(0xcc);
    return a;
}

KeyService Service() {
    auto s = KeyService::Create(TestRoot(), KeyPolicy{31337, Contract(), 4});
    CPPUNIT_ASSERT(s.ok());
    s->SetClock([] { return NOW; });
    return std::move(s).value();
}

ByteView Payload(const SecretBuffer& frame) { return ByteView(frame).subspan(IPC_HEADER_SIZE); }

ReceiptSignRequest Request() {
    ReceiptSignRequest r;
    r.fields.cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
    r.fields.params_hash.fill(0x11);
    r.fields.response_hash.fill(0x22);
    r.fields.pkp.fill(0x33);
    r.fields.request_id = "6f1c2a8e-0d4b-4e8a-9c55-2b7d1e3f4a60";
    r.fields.issued_at = NOW;
    r.fields.app_id.fill(0x44);
    r.fields.ending = "completed";
    r.api_key = SecretBytes(AsBytes(API_KEY));
    return r;
}

// The reply's failure code, or 0 when it is not a Failure.
int FailureCode(const SecretBuffer& reply) {
    auto failure = DecodeFailureReply(Payload(reply));
    return failure.ok() ? static_cast<int>(failure->code) : 0;
}

bool Contains(ByteView haystack, ByteView needle) {
    return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) != haystack.end();
}

}  // namespace

class ReceiptTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ReceiptTests);
    CPPUNIT_TEST(testReceiptKeyUsesItsOwnSaltAndLabel);
    CPPUNIT_TEST(testReceiptKeyIsNoOtherKey);
    CPPUNIT_TEST(testSignsRecoveringToTheReceiptAddress);
    CPPUNIT_TEST(testBindsTheKeyItWasSent);
    CPPUNIT_TEST(testEveryFieldChangesTheDigest);
    CPPUNIT_TEST(testRefusesADigestInsteadOfFields);
    CPPUNIT_TEST(testRefusesInvalidFields);
    CPPUNIT_TEST(testRefusesATimeFarFromItsClock);
    CPPUNIT_TEST(testNoReplyCarriesTheReceiptSecret);
    CPPUNIT_TEST(testClientCodecRoundTrips);
    CPPUNIT_TEST_SUITE_END();

public:
    void testReceiptKeyUsesItsOwnSaltAndLabel() {
        auto key = DeriveReceiptKey(TestRoot());
        CPPUNIT_ASSERT(key.ok());
        auto direct = HkdfSha256(TestRoot().view(), AsBytes(std::string_view("sigil/receipt/v1")),
                                 AsBytes(std::string_view("receipt")), 32);
        CPPUNIT_ASSERT(direct.ok());
        CPPUNIT_ASSERT(key->view().size() == 32);
        CPPUNIT_ASSERT(std::equal(key->view().begin(), key->view().end(), direct->view().begin()));
        // Not the same construction under the PKP salt with the same label.
        auto pkp_salt = HkdfSha256(TestRoot().view(), AsBytes(KEY_DERIVATION_SALT), AsBytes(std::string_view("receipt")), 32);
        CPPUNIT_ASSERT(!std::equal(key->view().begin(), key->view().end(), pkp_salt->view().begin()));
    }

    void testReceiptKeyIsNoOtherKey() {
        const SecretBytes root = TestRoot();
        auto receipt = DeriveReceiptKey(root);
        CPPUNIT_ASSERT(receipt.ok());
        auto differs = [&](const Result<SecretBytes>& other) {
            CPPUNIT_ASSERT(other.ok());
            CPPUNIT_ASSERT(!std::equal(receipt->view().begin(), receipt->view().end(), other->view().begin()));
        };
        // PKP paths: the label "receipt" spelled into the hash or path fields reaches nothing.
        Hash32 label{};
        std::memcpy(label.data(), "receipt", 7);
        for (const Hash32& account : {label, Keccak256Hash(std::string_view("receipt"))}) {
            for (const Hash32& path : {label, Keccak256Hash(std::string_view("sigil/receipt/v1"))}) {
                differs(DerivePkpSigningKey(root, account, path));
                differs(DerivePkpEncryptionKey(root, account, path));
            }
        }
        differs(DeriveActionKey(root, "receipt"));
        differs(DerivePayerKey(root, 0));
        differs(DeriveAdminPayerKey(root));
        // And another root gives another receipt key.
        Bytes other_root(32, 9);
        differs(DeriveReceiptKey(SecretBytes(other_root)));
    }

    void testSignsRecoveringToTheReceiptAddress() {
        KeyService keyd = Service();
        auto pub = DecodePublicKeyReply(Payload(keyd.Handle(Payload(EncodeGetReceiptPublicRequest()))));
        CPPUNIT_ASSERT(pub.ok());
        auto secret = DeriveReceiptKey(TestRoot());
        CPPUNIT_ASSERT(PrivateKey::FromBytes(secret->view())->PublicKey().Address() == pub->address);

        ReceiptSignRequest req = Request();
        auto frame = EncodeSignReceiptRequest(req);
        CPPUNIT_ASSERT(frame.ok());
        auto sig = DecodeReceiptSignatureReply(Payload(keyd.Handle(Payload(*frame))));
        CPPUNIT_ASSERT(sig.ok());
        CPPUNIT_ASSERT(sig->signature[64] == 27 || sig->signature[64] == 28);
        req.fields.api_key_hash = Keccak256Hash(API_KEY);
        auto digest = ReceiptDigest({31337, Contract()}, req.fields);
        CPPUNIT_ASSERT(digest.ok());
        auto signer = RecoverAddress(*digest, sig->signature);
        CPPUNIT_ASSERT(signer.ok());
        CPPUNIT_ASSERT(*signer == pub->address);
    }

    void testBindsTheKeyItWasSent() {
        KeyService keyd = Service();
        ReceiptSignRequest req = Request();
        req.fields.api_key_hash.fill(0x99);  // not on the wire: keyd computes it
        auto sig = DecodeReceiptSignatureReply(Payload(keyd.Handle(Payload(*EncodeSignReceiptRequest(req)))));
        CPPUNIT_ASSERT(sig.ok());
        CPPUNIT_ASSERT(sig->api_key_hash == Keccak256Hash(API_KEY));
        req.api_key = SecretBytes();
        CPPUNIT_ASSERT(!EncodeSignReceiptRequest(req).ok());
    }

    void testEveryFieldChangesTheDigest() {
        ReceiptFields base = Request().fields;
        const Hash32 d0 = *ReceiptDigest({31337, Contract()}, base);
        std::vector<ReceiptFields> variants(9, base);
        variants[0].cid[5] = 'Z';
        variants[1].params_hash[31] ^= 1;
        variants[2].response_hash[0] ^= 1;
        variants[3].pkp[19] ^= 1;
        variants[4].api_key_hash[7] ^= 1;
        variants[5].request_id[0] = '7';
        variants[6].issued_at += 1;
        variants[7].app_id[0] ^= 1;
        variants[8].ending = "script_error";
        for (const ReceiptFields& v : variants) CPPUNIT_ASSERT(*ReceiptDigest({31337, Contract()}, v) != d0);
        CPPUNIT_ASSERT(*ReceiptDigest({1, Contract()}, base) != d0);
        Address20 other = Contract();
        other[0] ^= 1;
        CPPUNIT_ASSERT(*ReceiptDigest({31337, other}, base) != d0);
    }

    void testRefusesADigestInsteadOfFields() {
        KeyService keyd = Service();
        // A caller that wants an arbitrary digest signed has no way to say so: a digest alone, or
        // a digest in any field position, is a malformed request.
        sigil::common::MessageWriter w(IPC_SIGN_RECEIPT);
        Hash32 digest;
        digest.fill(0xab);
        w.PutBytes(digest);
        auto frame = std::move(w).Finish();
        CPPUNIT_ASSERT_EQUAL(static_cast<int>(KeydFailure::MalformedRequest), FailureCode(keyd.Handle(Payload(*frame))));
        // A 32-byte "CID" of raw bytes is not CID text.
        ReceiptSignRequest req = Request();
        req.fields.cid = std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
        CPPUNIT_ASSERT(!EncodeSignReceiptRequest(req).ok());
        // Nor do other key requests sign with it: SIGN_PAYER_TX signs only with payer keys, and the
        // message table has no other signing request.
        for (int type = 0; type < 256; ++type) {
            if (type == IPC_SIGN_RECEIPT || type == static_cast<int>(KeydMessage::SignPayerTx)) continue;
            const SecretBuffer reply = keyd.Handle(Payload(*sigil::common::MessageWriter(
                static_cast<std::uint8_t>(type)).Finish()));
            CPPUNIT_ASSERT(ByteView(reply)[IPC_HEADER_SIZE] != IPC_RECEIPT_SIGNATURE);
        }
    }

    void testRefusesInvalidFields() {
        for (int i = 0; i < 4; ++i) {
            ReceiptSignRequest req = Request();
            if (i == 0) req.fields.ending = "Completed";
            if (i == 1) req.fields.request_id = "has space";
            if (i == 2) req.fields.cid = "";
            if (i == 3) req.fields.issued_at = 0;
            auto frame = EncodeSignReceiptRequest(req);
            CPPUNIT_ASSERT(!frame.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_receipt"), frame.error().code);
        }
    }

    void testRefusesATimeFarFromItsClock() {
        KeyService keyd = Service();
        for (std::int64_t skew : {-301, 301}) {
            ReceiptSignRequest req = Request();
            req.fields.issued_at = static_cast<std::uint64_t>(NOW + skew);
            CPPUNIT_ASSERT_EQUAL(static_cast<int>(KeydFailure::Refused),
                                 FailureCode(keyd.Handle(Payload(*EncodeSignReceiptRequest(req)))));
        }
        ReceiptSignRequest req = Request();
        req.fields.issued_at = NOW - 300;
        CPPUNIT_ASSERT_EQUAL(0, FailureCode(keyd.Handle(Payload(*EncodeSignReceiptRequest(req)))));
    }

    void testNoReplyCarriesTheReceiptSecret() {
        KeyService keyd = Service();
        auto secret = DeriveReceiptKey(TestRoot());
        std::vector<SecretBuffer> requests;
        requests.push_back(EncodeGetReceiptPublicRequest());
        requests.push_back(*EncodeSignReceiptRequest(Request()));
        requests.push_back(*EncodeActionRequest(KeydMessage::GetActionKey, "receipt"));
        requests.push_back(*EncodeActionRequest(KeydMessage::GetActionKey, "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"));
        Hash32 label{};
        std::memcpy(label.data(), "receipt", 7);
        requests.push_back(EncodePkpRequest(KeydMessage::GetPkpKeys, {label, label}));
        requests.push_back(EncodePkpRequest(KeydMessage::GetPkpKeys, {Keccak256Hash(std::string_view("receipt")), label}));
        requests.push_back(EncodeGetPayersRequest(4));
        for (const SecretBuffer& r : requests) {
            const SecretBuffer reply = keyd.Handle(Payload(r));
            CPPUNIT_ASSERT(!Contains(ByteView(reply), secret->view()));
        }
    }

    void testClientCodecRoundTrips() {
        ReceiptSignRequest req = Request();
        auto frame = EncodeSignReceiptRequest(req);
        auto back = DecodeSignReceiptRequest(Payload(*frame));
        CPPUNIT_ASSERT(back.ok());
        CPPUNIT_ASSERT(back->fields.cid == req.fields.cid && back->fields.request_id == req.fields.request_id &&
                       back->fields.ending == req.fields.ending && back->fields.issued_at == req.fields.issued_at &&
                       back->fields.params_hash == req.fields.params_hash && back->fields.pkp == req.fields.pkp &&
                       back->fields.app_id == req.fields.app_id && back->fields.response_hash == req.fields.response_hash);
        ReceiptSignature sig;
        sig.signature.fill(5);
        sig.api_key_hash.fill(6);
        auto decoded = DecodeReceiptSignatureReply(Payload(EncodeReceiptSignatureReply(sig)));
        CPPUNIT_ASSERT(decoded.ok() && decoded->signature == sig.signature && decoded->api_key_hash == sig.api_key_hash);
        auto failure = DecodeReceiptSignatureReply(Payload(EncodeFailureReply(KeydFailure::Refused, "no")));
        CPPUNIT_ASSERT(!failure.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_refused"), failure.error().code);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ReceiptTests);
