// workers/api/typed_data_auth: the ChainSecured EIP-712 envelope, one test per refusal, plus the
// ethers-signed known-answer vector of tests/data/eip712_chainsecured.json.
#include <cppunit/extensions/HelperMacros.h>

#include <functional>
#include <string>

#include <rapidjson/document.h>

#include "common/eip712.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/secp256k1.h"
#include "tests/test_support.h"
#include "workers/api/typed_data_auth.h"

using namespace sigil;
using namespace sigil::workers;

namespace {

constexpr std::uint64_t CHAIN_ID = 31337;
constexpr std::int64_t NOW = 1700000000;

const common::PrivateKey& Key() {
    static const common::PrivateKey key = common::PrivateKey::Generate();
    return key;
}

// A canonical document for `primary`, as ethers' TypedDataEncoder.getPayload writes it.
rapidjson::Document Canonical(const std::string& primary = "CreateWallet", std::int64_t issued_at = NOW) {
    const std::string text = R"({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},)"
                             R"({"name":"chainId","type":"uint256"}],")" + primary +
                             R"(":[{"name":"address","type":"address"},{"name":"issuedAt","type":"uint256"}]},)"
                             R"("primaryType":")" + primary + R"(","domain":{"name":"Sigil ChainSecured","version":"1","chainId":31337},)"
                             R"("message":{"address":")" + common::ChecksumAddress(Key().Address()) +
                             R"(","issuedAt":)" + std::to_string(issued_at) + "}}";
    rapidjson::Document d;
    d.Parse(text.c_str());
    return d;
}

std::string Text(const rapidjson::Value& v) { return common::JsonSerialize(v); }

// Signs whatever the document hashes to (even a non-canonical one), so that each test isolates the
// one check it is about.
std::string Sign(const std::string& text, const common::PrivateKey& key = Key()) {
    auto digest = common::HashTypedDataJson(text);
    CPPUNIT_ASSERT_MESSAGE(digest.ok() ? "" : digest.error().message, digest.ok());
    auto sig = common::SignDigest(key, *digest);
    sig[64] += 27;
    return common::HexEncode(sig, true);
}

TypedDataPolicy Policy(SignatureFlow flow = SignatureFlow::CreateWallet) {
    TypedDataPolicy p;
    p.flow = flow;
    p.chain_id = CHAIN_ID;
    p.now = NOW;
    return p;
}

void ExpectError(const common::Result<VerifiedTypedData>& r, common::ErrorKind kind, const std::string& code) {
    CPPUNIT_ASSERT_MESSAGE("expected " + code + ", got success", !r.ok());
    CPPUNIT_ASSERT_EQUAL_MESSAGE(r.error().message, code, r.error().code);
    CPPUNIT_ASSERT_MESSAGE(code, r.error().kind == kind);
    CPPUNIT_ASSERT(!r.error().message.empty());
}

// Applies `edit` to a canonical document, signs the result, and expects `code`.
void ExpectEdited(const std::function<void(rapidjson::Document&)>& edit, const std::string& code,
                  common::ErrorKind kind = common::ErrorKind::InvalidInput) {
    auto d = Canonical();
    edit(d);
    const std::string text = Text(d);
    auto digest = common::HashTypedDataJson(text);
    const std::string sig = digest.ok() ? Sign(text) : "0x" + std::string(130, '1');
    ExpectError(VerifyTypedDataSignature(text, sig, Policy()), kind, code);
}

rapidjson::Value Str(const char* s, rapidjson::Document& d) { return rapidjson::Value(s, d.GetAllocator()); }

}  // namespace

class TypedDataAuthTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TypedDataAuthTests);
    CPPUNIT_TEST(testAcceptsEthersSignedVector);
    CPPUNIT_TEST(testAcceptsEachFlowWithItsOwnPrimaryType);
    CPPUNIT_TEST(testAcceptsStringIssuedAtAndChainId);
    CPPUNIT_TEST(testRejectsOversizedTypedData);
    CPPUNIT_TEST(testRejectsNonObjectTypedData);
    CPPUNIT_TEST(testRejectsWrongPrimaryType);
    CPPUNIT_TEST(testRejectsFieldAddedToTypes);
    CPPUNIT_TEST(testRejectsFieldRemovedFromTypes);
    CPPUNIT_TEST(testRejectsFieldRenamed);
    CPPUNIT_TEST(testRejectsFieldRetyped);
    CPPUNIT_TEST(testRejectsFieldsReordered);
    CPPUNIT_TEST(testRejectsExtraStructOrMember);
    CPPUNIT_TEST(testRejectsExtraValueInDomainOrMessage);
    CPPUNIT_TEST(testRejectsInvalidValues);
    CPPUNIT_TEST(testRejectsWrongDomain);
    CPPUNIT_TEST(testRejectsWrongChainId);
    CPPUNIT_TEST(testRejectsIssuedAtOutsideWindow);
    CPPUNIT_TEST(testRejectsSignatureOfAnotherSigner);
    CPPUNIT_TEST(testRejectsSignatureOverOtherData);
    CPPUNIT_TEST(testRejectsMalformedSignature);
    CPPUNIT_TEST(testRejectsSignerOtherThanExpected);
    CPPUNIT_TEST_SUITE_END();

public:
    void testAcceptsEthersSignedVector() {
        rapidjson::Document v;
        v.Parse(test::ReadDataFile("eip712_chainsecured.json").c_str());
        const std::string text = Text(v["typed_data"]);
        auto r = VerifyTypedDataSignature(text, common::JsonView(v["signature"]), Policy());
        CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().message, r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"), common::ChecksumAddress(r->signer));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1700000000}, r->issued_at);
        CPPUNIT_ASSERT_EQUAL(std::string(common::JsonView(v["digest"])), common::HexEncode(r->digest, true));
    }

    void testAcceptsEachFlowWithItsOwnPrimaryType() {
        for (auto flow : {SignatureFlow::CreateWallet, SignatureFlow::ConvertAccount, SignatureFlow::AddUsageApiKey,
                          SignatureFlow::BillingAuth}) {
            const std::string text = Text(Canonical(std::string(PrimaryTypeOf(flow))));
            auto r = VerifyTypedDataSignature(text, Sign(text), Policy(flow));
            CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().message, r.ok());
            CPPUNIT_ASSERT(r->signer == Key().Address());
            // The same signature is refused by every other flow, at the primaryType.
            for (auto other : {SignatureFlow::CreateWallet, SignatureFlow::ConvertAccount, SignatureFlow::AddUsageApiKey,
                               SignatureFlow::BillingAuth}) {
                if (other == flow) continue;
                ExpectError(VerifyTypedDataSignature(text, Sign(text), Policy(other)), common::ErrorKind::InvalidInput,
                            "wrong_primary_type");
            }
        }
    }

    void testAcceptsStringIssuedAtAndChainId() {
        auto d = Canonical();
        d["message"]["issuedAt"] = Str("1700000100", d);
        d["domain"]["chainId"] = Str("0x7a69", d);
        const std::string text = Text(d);
        auto r = VerifyTypedDataSignature(text, Sign(text), Policy());
        CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().message, r.ok());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1700000100}, r->issued_at);
    }

    void testRejectsOversizedTypedData() {
        std::string text = Text(Canonical());
        const std::string sig = Sign(text);
        // Whitespace padding keeps the same document: only the size differs.
        text.insert(1, MAX_TYPED_DATA_BYTES - text.size(), ' ');
        CPPUNIT_ASSERT(VerifyTypedDataSignature(text, sig, Policy()).ok());
        text.insert(1, " ");
        ExpectError(VerifyTypedDataSignature(text, sig, Policy()), common::ErrorKind::InvalidInput, "typed_data_too_large");
    }

    void testRejectsNonObjectTypedData() {
        const std::string sig = "0x" + std::string(130, '1');
        for (const char* text : {"", "[]", "\"x\"", "{", "{\"primaryType\":5}", "{}", "null"}) {
            ExpectError(VerifyTypedDataSignature(text, sig, Policy()), common::ErrorKind::InvalidInput, "invalid_typed_data");
        }
    }

    void testRejectsWrongPrimaryType() {
        const std::string text = Text(Canonical("Mail"));
        ExpectError(VerifyTypedDataSignature(text, Sign(text), Policy()), common::ErrorKind::InvalidInput,
                    "wrong_primary_type");
        const std::string billing = Text(Canonical("BillingAuth"));
        ExpectError(VerifyTypedDataSignature(billing, Sign(billing), Policy(SignatureFlow::ConvertAccount)),
                    common::ErrorKind::InvalidInput, "wrong_primary_type");
    }

    void testRejectsFieldAddedToTypes() {
        ExpectEdited([](rapidjson::Document& d) {
            rapidjson::Value f(rapidjson::kObjectType);
            f.AddMember("name", "nonce", d.GetAllocator());
            f.AddMember("type", "uint256", d.GetAllocator());
            d["types"]["CreateWallet"].PushBack(f, d.GetAllocator());
            d["message"].AddMember("nonce", 1, d.GetAllocator());
        }, "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) {
            rapidjson::Value f(rapidjson::kObjectType);
            f.AddMember("name", "verifyingContract", d.GetAllocator());
            f.AddMember("type", "address", d.GetAllocator());
            d["types"]["EIP712Domain"].PushBack(f, d.GetAllocator());
            d["domain"].AddMember("verifyingContract", "0x0000000000000000000000000000000000000001", d.GetAllocator());
        }, "typed_data_schema_mismatch");
    }

    void testRejectsFieldRemovedFromTypes() {
        ExpectEdited([](rapidjson::Document& d) {
            d["types"]["CreateWallet"].PopBack();
            d["message"].RemoveMember("issuedAt");
        }, "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) {
            d["types"]["EIP712Domain"].Erase(d["types"]["EIP712Domain"].Begin() + 1);
            d["domain"].RemoveMember("version");
        }, "typed_data_schema_mismatch");
    }

    void testRejectsFieldRenamed() {
        ExpectEdited([](rapidjson::Document& d) {
            d["types"]["CreateWallet"][1]["name"] = "issued_at";
            d["message"].RemoveMember("issuedAt");
            d["message"].AddMember("issued_at", NOW, d.GetAllocator());
        }, "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) {
            d["types"]["EIP712Domain"][0]["name"] = "Name";
            d["domain"].RemoveMember("name");
            d["domain"].AddMember("Name", "Sigil ChainSecured", d.GetAllocator());
        }, "typed_data_schema_mismatch");
    }

    void testRejectsFieldRetyped() {
        ExpectEdited([](rapidjson::Document& d) { d["types"]["CreateWallet"][1]["type"] = "uint64"; },
                     "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) { d["types"]["EIP712Domain"][2]["type"] = "uint32"; },
                     "typed_data_schema_mismatch");
    }

    void testRejectsFieldsReordered() {
        ExpectEdited([](rapidjson::Document& d) { d["types"]["CreateWallet"][0].Swap(d["types"]["CreateWallet"][1]); },
                     "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) { d["types"]["EIP712Domain"][0].Swap(d["types"]["EIP712Domain"][1]); },
                     "typed_data_schema_mismatch");
    }

    void testRejectsExtraStructOrMember() {
        ExpectEdited([](rapidjson::Document& d) {
            rapidjson::Value copy(d["types"]["CreateWallet"], d.GetAllocator());
            d["types"].AddMember("Unused", copy, d.GetAllocator());
        }, "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) { d["types"]["CreateWallet"][0].AddMember("x", 1, d.GetAllocator()); },
                     "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) { d.AddMember("extra", 1, d.GetAllocator()); },
                     "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) { d.RemoveMember("domain"); }, "typed_data_schema_mismatch");
    }

    void testRejectsExtraValueInDomainOrMessage() {
        ExpectEdited([](rapidjson::Document& d) { d["domain"].AddMember("salt", "0x00", d.GetAllocator()); },
                     "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) { d["message"].AddMember("nonce", 1, d.GetAllocator()); },
                     "typed_data_schema_mismatch");
        ExpectEdited([](rapidjson::Document& d) { d["message"].RemoveMember("address"); }, "typed_data_schema_mismatch");
    }

    void testRejectsInvalidValues() {
        ExpectEdited([](rapidjson::Document& d) { d["message"]["address"] = "0x1234"; }, "invalid_typed_data");
        ExpectEdited([](rapidjson::Document& d) { d["message"]["issuedAt"] = -5; }, "invalid_typed_data");
        ExpectEdited([](rapidjson::Document& d) { d["message"]["issuedAt"] = 1.5; }, "invalid_typed_data");
        ExpectEdited([](rapidjson::Document& d) { d["domain"]["chainId"] = "abc"; }, "invalid_typed_data");
        ExpectEdited([](rapidjson::Document& d) { d["domain"]["name"] = 7; }, "invalid_typed_data");
    }

    void testRejectsWrongDomain() {
        ExpectEdited([](rapidjson::Document& d) { d["domain"]["name"] = "Lit ChainSecured"; }, "wrong_domain");
        ExpectEdited([](rapidjson::Document& d) { d["domain"]["version"] = "2"; }, "wrong_domain");
    }

    void testRejectsWrongChainId() {
        ExpectEdited([](rapidjson::Document& d) { d["domain"]["chainId"] = 1; }, "wrong_chain_id");
        ExpectEdited([](rapidjson::Document& d) { d["domain"]["chainId"] = "31337000000000000000000"; }, "wrong_chain_id");
    }

    void testRejectsIssuedAtOutsideWindow() {
        for (std::int64_t skew : {std::int64_t{-300}, std::int64_t{0}, std::int64_t{300}}) {
            const std::string text = Text(Canonical("CreateWallet", NOW + skew));
            CPPUNIT_ASSERT(VerifyTypedDataSignature(text, Sign(text), Policy()).ok());
        }
        for (std::int64_t skew : {std::int64_t{-301}, std::int64_t{301}, -NOW}) {
            const std::string text = Text(Canonical("CreateWallet", NOW + skew));
            ExpectError(VerifyTypedDataSignature(text, Sign(text), Policy()), common::ErrorKind::Unauthenticated,
                        "issued_at_out_of_window");
        }
        ExpectEdited([](rapidjson::Document& d) { d["message"]["issuedAt"] = "115792089237316195423570985008687907853269984665640564039457584007913129639935"; },
                     "issued_at_out_of_window", common::ErrorKind::Unauthenticated);
    }

    void testRejectsSignatureOfAnotherSigner() {
        const std::string text = Text(Canonical());
        const auto other = common::PrivateKey::Generate();
        ExpectError(VerifyTypedDataSignature(text, Sign(text, other), Policy()), common::ErrorKind::Unauthenticated,
                    "signature_mismatch");
    }

    void testRejectsSignatureOverOtherData() {
        const std::string signed_text = Text(Canonical("CreateWallet", NOW - 1));
        const std::string sent_text = Text(Canonical("CreateWallet", NOW));
        ExpectError(VerifyTypedDataSignature(sent_text, Sign(signed_text), Policy()), common::ErrorKind::Unauthenticated,
                    "signature_mismatch");
    }

    void testRejectsMalformedSignature() {
        const std::string text = Text(Canonical());
        std::string good = Sign(text);
        for (const std::string& bad : {std::string(""), std::string("0x"), good.substr(2), good.substr(0, 130),
                                       good + "00", good.substr(0, 131) + "g", "0x" + std::string(128, 'a')}) {
            ExpectError(VerifyTypedDataSignature(text, bad, Policy()), common::ErrorKind::InvalidInput, "invalid_signature");
        }
        std::string bad_v = good;
        bad_v.replace(130, 2, "1d");  // v = 29
        ExpectError(VerifyTypedDataSignature(text, bad_v, Policy()), common::ErrorKind::InvalidInput, "invalid_signature");
        // A contract wallet's (ERC-1271) signature is arbitrary bytes of another length: refused.
        ExpectError(VerifyTypedDataSignature(text, "0x" + std::string(260, 'a'), Policy()),
                    common::ErrorKind::InvalidInput, "invalid_signature");
    }

    void testRejectsSignerOtherThanExpected() {
        const std::string text = Text(Canonical("ConvertAccount"));
        auto policy = Policy(SignatureFlow::ConvertAccount);
        policy.expected_signer = common::PrivateKey::Generate().Address();
        ExpectError(VerifyTypedDataSignature(text, Sign(text), policy), common::ErrorKind::Unauthenticated,
                    "signer_mismatch");
        policy.expected_signer = Key().Address();
        CPPUNIT_ASSERT(VerifyTypedDataSignature(text, Sign(text), policy).ok());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(TypedDataAuthTests);
