#include <cppunit/extensions/HelperMacros.h>

#include <cstring>
#include <set>

#include "common/abi.h"
#include "common/eip712.h"
#include "common/eth_tx.h"
#include "common/hex.h"
#include "common/keccak.h"
#include "common/key_derivation.h"
#include "common/rlp.h"
#include "common/secp256k1.h"
#include "keyd/key_service.h"
#include "keyd/protocol.h"
#include "keyd/relay_policy.h"

using namespace sigil::common;
using namespace sigil::keyd;
using sigil::keyd::KeyPolicy;
using sigil::keyd::KeyService;

namespace {

Hash32 Filled(std::uint8_t b) {
    Hash32 h;
    h.fill(b);
    return h;
}

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

KeyPolicy Policy() { return KeyPolicy{31337, Contract(), 4}; }

ByteView Payload(const SecretBuffer& frame) { return ByteView(frame).subspan(IPC_HEADER_SIZE); }

// The HTTP caller's key the worker forwards with a relayed write.
constexpr std::string_view API_KEY = "c2lnaWwga2V5ZCB0ZXN0IGtleSwgMzIgYnl0ZXMgbG9uZyE=";
constexpr std::int64_t NOW = 1'800'000'000;

Uint256 KeyHash(std::string_view key) { return Uint256::FromWord(Keccak256Hash(key)); }

// removeGroup(accountHash, callerKeyHash, groupId): a relayed write naming `caller_hash`.
Bytes RemoveGroupCall(const Uint256& caller_hash) {
    const AbiValue args[] = {AbiValue::Uint(Uint256::FromWord(Filled(7))), AbiValue::Uint(caller_hash),
                             AbiValue::Uint(std::uint64_t{1})};
    return *EncodeCall("removeGroup(uint256,uint256,uint256)", args);
}

Bytes ConvertCall(const Uint256& account_hash, const Address20& new_admin) {
    const AbiValue args[] = {AbiValue::Uint(account_hash), AbiValue::Address(new_admin)};
    return *EncodeCall("convertToChainSecuredAccount(uint256,address)", args);
}

Result<PrivateKey> AdminKey(std::uint8_t seed) {
    Bytes secret(32, seed);
    return PrivateKey::FromBytes(secret);
}

// The ConvertAccount digest as the worker and ethers build it: from the canonical JSON document.
Hash32 ConvertDigestFromJson(const Address20& signer, std::uint64_t issued_at) {
    const std::string json =
        R"({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},)"
        R"({"name":"chainId","type":"uint256"}],"ConvertAccount":[{"name":"address","type":"address"},)"
        R"({"name":"issuedAt","type":"uint256"}]},"primaryType":"ConvertAccount",)"
        R"("domain":{"name":"Sigil ChainSecured","version":"1","chainId":31337},)"
        R"("message":{"address":")" + HexEncode(signer, true) + R"(","issuedAt":)" + std::to_string(issued_at) + "}}";
    return *HashTypedDataJson(json);
}

PayerTxRequest::Consent Consent(const PrivateKey& key, const Address20& named, std::uint64_t issued_at) {
    PayerTxRequest::Consent c;
    c.issued_at = issued_at;
    const Signature65 sig = SignDigest(key, ConvertDigestFromJson(named, issued_at));
    std::memcpy(c.signature.data(), sig.data(), 65);
    c.signature[64] = static_cast<std::uint8_t>(c.signature[64] + 27);  // as eth_signTypedData_v4 gives it
    return c;
}

PayerTxRequest GoodTx(std::uint64_t payer) {
    PayerTxRequest tx;
    tx.payer = payer;
    tx.chain_id = 31337;
    tx.nonce = 5;
    tx.max_priority_fee_per_gas = 1'000'000'000;
    tx.max_fee_per_gas = 3'000'000'000;
    tx.gas_limit = 200'000;
    tx.to = Contract();
    tx.data = RemoveGroupCall(KeyHash(API_KEY));
    tx.api_key = SecretBytes(AsBytes(API_KEY));
    return tx;
}

}  // namespace

class KeyServiceTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(KeyServiceTests);
    CPPUNIT_TEST(testPingAnswersPong);
    CPPUNIT_TEST(testMintPathIsFresh32Bytes);
    CPPUNIT_TEST(testPublicDataMatchesSigningKey);
    CPPUNIT_TEST(testKeysAreBoundToTheAccount);
    CPPUNIT_TEST(testKeysFollowTheDerivationRules);
    CPPUNIT_TEST(testRefusesZeroAccountHashOrPath);
    CPPUNIT_TEST(testActionKeyAndPublicAgree);
    CPPUNIT_TEST(testPayersAndRange);
    CPPUNIT_TEST(testSignsPayerTxRecoverableToThePayer);
    CPPUNIT_TEST(testRefusesWrongChainId);
    CPPUNIT_TEST(testRefusesWrongRecipient);
    CPPUNIT_TEST(testRefusesContractCreation);
    CPPUNIT_TEST(testRefusesUnknownPayer);
    CPPUNIT_TEST(testRefusesFeesAndGasOverTheCaps);
    CPPUNIT_TEST(testSignsOnlyForTheKeySentWithTheWrite);
    CPPUNIT_TEST(testRefusesCallsThatAreNotRelayedWrites);
    CPPUNIT_TEST(testConversionNeedsTheNewAdminsOwnConsent);
    CPPUNIT_TEST(testUnknownTypeGetsFailure);
    CPPUNIT_TEST(testMalformedRequestGetsFailure);
    CPPUNIT_TEST(testCreateRefusesBadPolicyOrRoot);
    CPPUNIT_TEST_SUITE_END();

    std::optional<KeyService> m_service;

    SecretBuffer Ask(const SecretBuffer& request) { return m_service->Handle(Payload(request)); }

    static KeydFailure FailureCode(const SecretBuffer& reply) {
        auto f = DecodeFailureReply(Payload(reply));
        CPPUNIT_ASSERT_MESSAGE("expected a failure reply", f.ok());
        return f->code;
    }

    Address20 PayerAddress(std::uint64_t payer) {
        auto list = DecodePayersReply(Payload(Ask(EncodeGetPayersRequest(4))));
        CPPUNIT_ASSERT(list.ok());
        return payer == IPC_ADMIN_PAYER ? list->admin : list->payers.at(payer);
    }

public:
    void setUp() override {
        auto s = KeyService::Create(TestRoot(), Policy());
        CPPUNIT_ASSERT(s.ok());
        m_service.emplace(std::move(s).value());
        m_service->SetClock([] { return NOW; });
    }

    KeydFailure AskTx(const PayerTxRequest& tx) {
        const SecretBuffer reply = Ask(*EncodeSignPayerTxRequest(tx));
        if (DecodeSignedTxReply(Payload(reply)).ok()) return KeydFailure{0};
        return FailureCode(reply);
    }

    void testSignsOnlyForTheKeySentWithTheWrite() {
        CPPUNIT_ASSERT(AskTx(GoodTx(0)) == KeydFailure{0});
        // The call names another key than the one sent (a worker writing for a hash it read on chain).
        PayerTxRequest other = GoodTx(0);
        other.data = RemoveGroupCall(KeyHash("another key"));
        CPPUNIT_ASSERT(AskTx(other) == KeydFailure::Refused);
        // No key at all, or a key differing in one character.
        PayerTxRequest none = GoodTx(0);
        none.api_key = SecretBytes();
        CPPUNIT_ASSERT(AskTx(none) == KeydFailure::Refused);
        std::string near(API_KEY);
        near.back() = 'x';
        PayerTxRequest wrong = GoodTx(0);
        wrong.api_key = SecretBytes(AsBytes(near));
        CPPUNIT_ASSERT(AskTx(wrong) == KeydFailure::Refused);
        // newAccount(apiKeyHash, wallet): the account hash is the key's (the worker's freshly drawn key).
        const AbiValue args[] = {AbiValue::Uint(KeyHash(API_KEY)), AbiValue::Address(AdminKey(3)->Address())};
        PayerTxRequest create = GoodTx(0);
        create.data = *EncodeCall("newAccount(uint256,address)", args);
        CPPUNIT_ASSERT(AskTx(create) == KeydFailure{0});
        create.api_key = SecretBytes(AsBytes(near));
        CPPUNIT_ASSERT(AskTx(create) == KeydFailure::Refused);
    }

    void testRefusesCallsThatAreNotRelayedWrites() {
        PayerTxRequest tx = GoodTx(0);
        // The direct-path forms, admin functions and unknown selectors are never a payer's to send.
        const AbiValue one[] = {AbiValue::Address(AdminKey(4)->Address())};
        for (const auto& data : {*EncodeCall("transferOwnership(address)", one), *EncodeCall("setApiPayers(address[])",
                                 std::vector<AbiValue>{AbiValue::Array({})}), Bytes{0x12, 0x34, 0x56, 0x78}, Bytes{}}) {
            tx.data = data;
            CPPUNIT_ASSERT(AskTx(tx) == KeydFailure::Refused);
        }
        // A relayed selector whose key word is cut off.
        tx.data = RemoveGroupCall(KeyHash(API_KEY));
        tx.data.resize(4 + 40);
        CPPUNIT_ASSERT(AskTx(tx) == KeydFailure::Refused);
        // A consent goes with a conversion only.
        PayerTxRequest extra = GoodTx(0);
        extra.consent = Consent(*AdminKey(5), AdminKey(5)->Address(), NOW);
        CPPUNIT_ASSERT(AskTx(extra) == KeydFailure::Refused);
    }

    void testConversionNeedsTheNewAdminsOwnConsent() {
        const auto admin_key = AdminKey(6);
        const PrivateKey& admin = *admin_key;
        const Address20 named = admin.Address();
        // keyd's own digest is the one of the canonical JSON document (DESIGN.md section 4).
        CPPUNIT_ASSERT(sigil::keyd::ConvertAccountDigest(31337, named, NOW) == ConvertDigestFromJson(named, NOW));
        PayerTxRequest tx = GoodTx(0);
        tx.data = ConvertCall(KeyHash(API_KEY), named);
        CPPUNIT_ASSERT(AskTx(tx) == KeydFailure::Refused);  // no consent
        tx.consent = Consent(admin, named, NOW - 100);
        CPPUNIT_ASSERT(AskTx(tx) == KeydFailure{0});
        // The consent of another wallet (a captured signature) never converts to a wallet that did not sign.
        const Address20 victim = AdminKey(7)->Address();
        PayerTxRequest squat = GoodTx(0);
        squat.data = ConvertCall(KeyHash(API_KEY), victim);
        squat.consent = Consent(admin, named, NOW);
        CPPUNIT_ASSERT(AskTx(squat) == KeydFailure::Refused);
        squat.consent = Consent(admin, victim, NOW);  // signed over the victim's address by another key
        CPPUNIT_ASSERT(AskTx(squat) == KeydFailure::Refused);
        // Outside the window.
        tx.consent = Consent(admin, named, NOW - 301);
        CPPUNIT_ASSERT(AskTx(tx) == KeydFailure::Refused);
        tx.consent = Consent(admin, named, NOW + 301);
        CPPUNIT_ASSERT(AskTx(tx) == KeydFailure::Refused);
        // The master key must be the converted account's own.
        PayerTxRequest foreign = GoodTx(0);
        foreign.data = ConvertCall(KeyHash("another account's key"), named);
        foreign.consent = Consent(admin, named, NOW);
        CPPUNIT_ASSERT(AskTx(foreign) == KeydFailure::Refused);
    }
    void tearDown() override { m_service.reset(); }

    void testPingAnswersPong() { CPPUNIT_ASSERT(DecodePongReply(Payload(Ask(EncodePingRequest()))).ok()); }

    void testMintPathIsFresh32Bytes() {
        std::set<Hash32> seen;
        for (int i = 0; i < 50; ++i) {
            auto path = DecodePathReply(Payload(Ask(EncodeMintPathRequest())));
            CPPUNIT_ASSERT(path.ok());
            CPPUNIT_ASSERT(*path != Hash32{});
            seen.insert(*path);
        }
        CPPUNIT_ASSERT_EQUAL(std::size_t{50}, seen.size());
    }

    void testPublicDataMatchesSigningKey() {
        const PkpRef ref{Filled(0xa1), Filled(0x01)};
        auto pub = DecodePublicKeyReply(Payload(Ask(EncodePkpRequest(KeydMessage::GetPkpPublic, ref))));
        auto keys = DecodePkpKeysReply(Payload(Ask(EncodePkpRequest(KeydMessage::GetPkpKeys, ref))));
        CPPUNIT_ASSERT(pub.ok() && keys.ok());
        auto key = PrivateKey::FromBytes(keys->signing_key.view());
        CPPUNIT_ASSERT(key.ok());
        CPPUNIT_ASSERT(key->Address() == pub->address);
        CPPUNIT_ASSERT(key->PublicKey().Uncompressed() == pub->public_key);
        CPPUNIT_ASSERT(!ConstantTimeEqual(keys->signing_key.view(), keys->encryption_key.view()));
    }

    void testKeysAreBoundToTheAccount() {
        // The same path asked for under two accounts gives unrelated keys and addresses.
        const Hash32 path = Filled(0x42);
        const PkpRef alice{Filled(0xa1), path}, mallory{Filled(0xb2), path};
        auto a = DecodePkpKeysReply(Payload(Ask(EncodePkpRequest(KeydMessage::GetPkpKeys, alice))));
        auto m = DecodePkpKeysReply(Payload(Ask(EncodePkpRequest(KeydMessage::GetPkpKeys, mallory))));
        CPPUNIT_ASSERT(a.ok() && m.ok());
        CPPUNIT_ASSERT(!ConstantTimeEqual(a->signing_key.view(), m->signing_key.view()));
        CPPUNIT_ASSERT(!ConstantTimeEqual(a->encryption_key.view(), m->encryption_key.view()));
        auto pa = DecodePublicKeyReply(Payload(Ask(EncodePkpRequest(KeydMessage::GetPkpPublic, alice))));
        auto pm = DecodePublicKeyReply(Payload(Ask(EncodePkpRequest(KeydMessage::GetPkpPublic, mallory))));
        CPPUNIT_ASSERT(pa->address != pm->address);
        // And the owner gets the same keys every time.
        auto again = DecodePkpKeysReply(Payload(Ask(EncodePkpRequest(KeydMessage::GetPkpKeys, alice))));
        CPPUNIT_ASSERT(ConstantTimeEqual(a->signing_key.view(), again->signing_key.view()));
    }

    void testKeysFollowTheDerivationRules() {
        // keyd adds nothing of its own: the keys are exactly common/key_derivation's.
        const Hash32 account = Filled(0x0a), path = Filled(0x0b);
        auto keys = DecodePkpKeysReply(Payload(Ask(EncodePkpRequest(KeydMessage::GetPkpKeys, PkpRef{account, path}))));
        const SecretBytes root = TestRoot();
        CPPUNIT_ASSERT(ConstantTimeEqual(keys->signing_key.view(), DerivePkpSigningKey(root, account, path)->view()));
        CPPUNIT_ASSERT(ConstantTimeEqual(keys->encryption_key.view(), DerivePkpEncryptionKey(root, account, path)->view()));
        auto admin = PrivateKey::FromBytes(DeriveAdminPayerKey(root)->view());
        auto payer1 = PrivateKey::FromBytes(DerivePayerKey(root, 1)->view());
        CPPUNIT_ASSERT(PayerAddress(IPC_ADMIN_PAYER) == admin->Address());
        CPPUNIT_ASSERT(PayerAddress(1) == payer1->Address());
    }

    void testRefusesZeroAccountHashOrPath() {
        for (const PkpRef& ref : {PkpRef{Hash32{}, Filled(1)}, PkpRef{Filled(1), Hash32{}}}) {
            for (KeydMessage t : {KeydMessage::GetPkpKeys, KeydMessage::GetPkpPublic}) {
                CPPUNIT_ASSERT(FailureCode(Ask(EncodePkpRequest(t, ref))) == KeydFailure::InvalidInput);
            }
        }
    }

    void testActionKeyAndPublicAgree() {
        const std::string cid = "QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL";
        auto secret = DecodeSecretKeyReply(Payload(Ask(*EncodeActionRequest(KeydMessage::GetActionKey, cid))));
        auto pub = DecodePublicKeyReply(Payload(Ask(*EncodeActionRequest(KeydMessage::GetActionPublic, cid))));
        CPPUNIT_ASSERT(secret.ok() && pub.ok());
        CPPUNIT_ASSERT(PrivateKey::FromBytes(secret->view())->Address() == pub->address);
        CPPUNIT_ASSERT(ConstantTimeEqual(secret->view(), DeriveActionKey(TestRoot(), cid)->view()));
        auto other = DecodePublicKeyReply(
            Payload(Ask(*EncodeActionRequest(KeydMessage::GetActionPublic, "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH"))));
        CPPUNIT_ASSERT(other->address != pub->address);
    }

    void testPayersAndRange() {
        auto list = DecodePayersReply(Payload(Ask(EncodeGetPayersRequest(4))));
        CPPUNIT_ASSERT(list.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{4}, list->payers.size());
        std::set<Address20> distinct(list->payers.begin(), list->payers.end());
        distinct.insert(list->admin);
        CPPUNIT_ASSERT_EQUAL(std::size_t{5}, distinct.size());
        auto none = DecodePayersReply(Payload(Ask(EncodeGetPayersRequest(0))));
        CPPUNIT_ASSERT(none.ok() && none->payers.empty() && none->admin == list->admin);
        CPPUNIT_ASSERT(FailureCode(Ask(EncodeGetPayersRequest(5))) == KeydFailure::OutOfRange);
        CPPUNIT_ASSERT(FailureCode(Ask(EncodeGetPayersRequest(~0ull))) == KeydFailure::OutOfRange);
    }

    void testSignsPayerTxRecoverableToThePayer() {
        for (std::uint64_t payer : {std::uint64_t{0}, std::uint64_t{3}, IPC_ADMIN_PAYER}) {
            const PayerTxRequest req = GoodTx(payer);
            auto raw = DecodeSignedTxReply(Payload(Ask(*EncodeSignPayerTxRequest(req))));
            CPPUNIT_ASSERT(raw.ok());
            CPPUNIT_ASSERT_EQUAL(EIP1559_TX_TYPE, (*raw)[0]);
            auto item = RlpDecode(ByteView(*raw).subspan(1));
            CPPUNIT_ASSERT(item.ok() && item->is_list && item->items.size() == 12);
            // The signed fields are the requested ones, value 0, no access list.
            Eip1559Tx tx;
            tx.chain_id = req.chain_id;
            tx.nonce = req.nonce;
            tx.max_priority_fee_per_gas = Uint256::FromUint64(req.max_priority_fee_per_gas);
            tx.max_fee_per_gas = Uint256::FromUint64(req.max_fee_per_gas);
            tx.gas_limit = req.gas_limit;
            tx.to = req.to;
            tx.data = req.data;
            const Bytes payload = SigningPayload(tx);
            CPPUNIT_ASSERT(RlpEncode(RlpItem::List({item->items.begin(), item->items.begin() + 9})) ==
                           Bytes(payload.begin() + 1, payload.end()));
            Bytes sig(65, 0);
            const Bytes& r = item->items[10].bytes;
            const Bytes& s = item->items[11].bytes;
            std::memcpy(sig.data() + 32 - r.size(), r.data(), r.size());
            std::memcpy(sig.data() + 64 - s.size(), s.data(), s.size());
            sig[64] = static_cast<std::uint8_t>(*RlpToUint64(item->items[9]));
            auto signer = RecoverAddress(SigningHash(tx), sig);
            CPPUNIT_ASSERT(signer.ok());
            CPPUNIT_ASSERT(*signer == PayerAddress(payer));
        }
    }

    void testRefusesWrongChainId() {
        PayerTxRequest tx = GoodTx(0);
        tx.chain_id = 1;
        const SecretBuffer reply = Ask(*EncodeSignPayerTxRequest(tx));
        CPPUNIT_ASSERT(FailureCode(reply) == KeydFailure::Refused);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_refused"), DecodeSignedTxReply(Payload(reply)).error().code);
    }

    void testRefusesWrongRecipient() {
        PayerTxRequest tx = GoodTx(0);
        tx.to->at(19) ^= 1;
        CPPUNIT_ASSERT(FailureCode(Ask(*EncodeSignPayerTxRequest(tx))) == KeydFailure::Refused);
        tx = GoodTx(IPC_ADMIN_PAYER);
        tx.to = Address20{};
        CPPUNIT_ASSERT(FailureCode(Ask(*EncodeSignPayerTxRequest(tx))) == KeydFailure::Refused);
    }

    void testRefusesContractCreation() {
        PayerTxRequest tx = GoodTx(0);
        tx.to.reset();
        CPPUNIT_ASSERT(FailureCode(Ask(*EncodeSignPayerTxRequest(tx))) == KeydFailure::Refused);
    }

    void testRefusesUnknownPayer() {
        CPPUNIT_ASSERT(FailureCode(Ask(*EncodeSignPayerTxRequest(GoodTx(4)))) == KeydFailure::OutOfRange);
        CPPUNIT_ASSERT(FailureCode(Ask(*EncodeSignPayerTxRequest(GoodTx(IPC_ADMIN_PAYER - 1)))) ==
                       KeydFailure::OutOfRange);
    }

    void testRefusesFeesAndGasOverTheCaps() {
        KeyPolicy policy = Policy();
        policy.max_fee_per_gas = 3'000'000'000;
        policy.max_priority_fee_per_gas = 1'000'000'000;
        policy.max_gas_limit = 200'000;
        auto capped = KeyService::Create(TestRoot(), policy);
        CPPUNIT_ASSERT(capped.ok());
        auto ask = [&](const PayerTxRequest& tx) { return capped->Handle(Payload(*EncodeSignPayerTxRequest(tx))); };
        // Exactly at every cap: signed.
        CPPUNIT_ASSERT(DecodeSignedTxReply(Payload(ask(GoodTx(0)))).ok());
        PayerTxRequest tx = GoodTx(0);
        tx.max_fee_per_gas += 1;
        CPPUNIT_ASSERT(FailureCode(ask(tx)) == KeydFailure::Refused);
        tx = GoodTx(IPC_ADMIN_PAYER);
        tx.max_priority_fee_per_gas += 1;
        CPPUNIT_ASSERT(FailureCode(ask(tx)) == KeydFailure::Refused);
        tx = GoodTx(0);
        tx.gas_limit += 1;
        CPPUNIT_ASSERT(FailureCode(ask(tx)) == KeydFailure::Refused);
        // A tip above the max fee is malformed under EIP-1559 whatever the caps.
        tx = GoodTx(0);
        tx.max_fee_per_gas = 500'000'000;
        CPPUNIT_ASSERT(FailureCode(ask(tx)) == KeydFailure::Refused);
        // The defaults cap a worker asking for absurd fees.
        tx = GoodTx(0);
        tx.max_fee_per_gas = KeyPolicy::DEFAULT_MAX_FEE_PER_GAS + 1;
        CPPUNIT_ASSERT(FailureCode(Ask(*EncodeSignPayerTxRequest(tx))) == KeydFailure::Refused);
        tx = GoodTx(0);
        tx.gas_limit = KeyPolicy::DEFAULT_MAX_GAS_LIMIT + 1;
        CPPUNIT_ASSERT(FailureCode(Ask(*EncodeSignPayerTxRequest(tx))) == KeydFailure::Refused);
        policy.max_fee_per_gas = 0;
        CPPUNIT_ASSERT(!KeyService::Create(TestRoot(), policy).ok());
    }

    void testUnknownTypeGetsFailure() {
        for (std::uint8_t type : {0x00, 0x09, 0x42, 0x80, 0x81, 0xff}) {
            MessageWriter w(type);
            CPPUNIT_ASSERT(FailureCode(Ask(*std::move(w).Finish())) == KeydFailure::UnknownRequest);
        }
    }

    void testMalformedRequestGetsFailure() {
        MessageWriter w(static_cast<std::uint8_t>(KeydMessage::GetPkpKeys));
        w.PutBytes(Filled(1));  // the path is missing
        CPPUNIT_ASSERT(FailureCode(Ask(*std::move(w).Finish())) == KeydFailure::MalformedRequest);
        MessageWriter bad_cid(static_cast<std::uint8_t>(KeydMessage::GetActionKey));
        bad_cid.PutBytes(AsBytes("../etc"));
        CPPUNIT_ASSERT(FailureCode(Ask(*std::move(bad_cid).Finish())) == KeydFailure::InvalidInput);
        CPPUNIT_ASSERT(FailureCode(m_service->Handle({})) == KeydFailure::MalformedRequest);
    }

    void testCreateRefusesBadPolicyOrRoot() {
        CPPUNIT_ASSERT(!KeyService::Create(TestRoot(), KeyPolicy{0, Contract(), 1}).ok());
        CPPUNIT_ASSERT(!KeyService::Create(TestRoot(), KeyPolicy{1, Address20{}, 1}).ok());
        CPPUNIT_ASSERT(!KeyService::Create(TestRoot(), KeyPolicy{1, Contract(), IPC_MAX_PAYERS + 1}).ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_root_key"),
                             KeyService::Create(SecretBytes(31), Policy()).error().code);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(KeyServiceTests);
