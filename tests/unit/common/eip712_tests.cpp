#include <cppunit/extensions/HelperMacros.h>

#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "common/eip712.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/keccak.h"
#include "common/secp256k1.h"
#include "tests/test_support.h"

using namespace sigil::common;

namespace {

std::string Serialize(const rapidjson::Value& v) { return JsonSerialize(v); }

rapidjson::Document LoadVector(const std::string& name) {
    rapidjson::Document d;
    d.Parse(sigil::test::ReadDataFile(name).c_str());
    CPPUNIT_ASSERT_MESSAGE(name, !d.HasParseError() && d.IsObject());
    return d;
}

std::string Hex32(const Hash32& h) { return HexEncode(h, true); }

std::string Replace(std::string s, const std::string& from, const std::string& to) {
    const auto pos = s.find(from);
    CPPUNIT_ASSERT_MESSAGE("mutation anchor not found: " + from, pos != std::string::npos);
    return s.replace(pos, from.size(), to);
}

// A compact Mail document (the EIP-712 spec example) that the refusal cases mutate.
const std::string MAIL =
    R"({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},)"
    R"({"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],)"
    R"("Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}],)"
    R"("Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Person"},{"name":"contents","type":"string"}]},)"
    R"("primaryType":"Mail","domain":{"name":"Ether Mail","version":"1","chainId":1,)"
    R"("verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},)"
    R"("message":{"from":{"name":"Cow","wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},)"
    R"("to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}})";

const std::string MAIL_DIGEST = "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2";

// A one-field document whose field type and value the numeric tests vary.
std::string OneField(const std::string& type, const std::string& value_json) {
    return R"({"types":{"EIP712Domain":[{"name":"name","type":"string"}],"T":[{"name":"v","type":")" + type +
           R"("}]},"primaryType":"T","domain":{"name":"n"},"message":{"v":)" + value_json + "}}";
}

void AssertRefused(const std::string& label, const Result<Hash32>& r, ErrorKind kind = ErrorKind::InvalidInput) {
    CPPUNIT_ASSERT_MESSAGE(label + " was accepted", !r.ok());
    CPPUNIT_ASSERT_EQUAL_MESSAGE(label, std::string("invalid_typed_data"), r.error().code);
    CPPUNIT_ASSERT_MESSAGE(label + ": wrong kind, message: " + r.error().message, r.error().kind == kind);
    CPPUNIT_ASSERT_MESSAGE(label, !r.error().message.empty());
}

}  // namespace

class Eip712Tests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(Eip712Tests);
    CPPUNIT_TEST(testSpecMailExample);
    CPPUNIT_TEST(testEthersVectors);
    CPPUNIT_TEST(testPartsFormMatchesFullDocuments);
    CPPUNIT_TEST(testPartsVectors);
    CPPUNIT_TEST(testPartsRefusals);
    CPPUNIT_TEST(testHashStructOfNestedType);
    CPPUNIT_TEST(testNumberFormsAgree);
    CPPUNIT_TEST(testIntegerBounds);
    CPPUNIT_TEST(testRefusesBadTypes);
    CPPUNIT_TEST(testRefusesBadValues);
    CPPUNIT_TEST(testRefusesBadDocuments);
    CPPUNIT_TEST(testSizeAndDepthLimits);
    CPPUNIT_TEST_SUITE_END();

public:
    void testSpecMailExample() {
        const auto v = LoadVector("eip712_mail.json");
        const std::string doc = Serialize(v["typed_data"]);
        auto td = TypedData::Parse(doc);
        CPPUNIT_ASSERT_MESSAGE(td.ok() ? "" : td.error().message, td.ok());
        // Values stated in the EIP-712 specification.
        CPPUNIT_ASSERT_EQUAL(std::string("0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f"),
                             Hex32(td->DomainSeparator()));
        CPPUNIT_ASSERT_EQUAL(std::string("0xc52c0ee5d84264471806290a3f2c4cecfc5490626bf912d01f240d7a274b371e"),
                             Hex32(td->MessageHash()));
        CPPUNIT_ASSERT_EQUAL(MAIL_DIGEST, Hex32(td->Digest()));
        CPPUNIT_ASSERT_EQUAL(std::string("Mail(Person from,Person to,string contents)Person(string name,address wallet)"),
                             *td->EncodeType("Mail"));
        CPPUNIT_ASSERT_EQUAL(std::string("Mail"), td->PrimaryType());
        CPPUNIT_ASSERT(*td->TypeHash("Mail") == Keccak256Hash(std::string_view(*td->EncodeType("Mail"))));
        CPPUNIT_ASSERT(!td->EncodeType("Nope").ok());

        // The spec signs with keccak256("cow"): v = 28, r = 0x4355c47d..., s = 0x07299936...
        auto key = PrivateKey::FromBytes(Keccak256Hash(std::string_view("cow")));
        CPPUNIT_ASSERT(key.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"), ChecksumAddress(key->Address()));
        Signature65 sig = SignDigest(*key, td->Digest());
        sig[64] = static_cast<std::uint8_t>(sig[64] + 27);
        CPPUNIT_ASSERT_EQUAL(std::string(v["signature"].GetString()), HexEncode(sig, true));
        CPPUNIT_ASSERT_EQUAL(std::string("0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d"),
                             HexEncode(ByteView(sig).first(32), true));
        CPPUNIT_ASSERT_EQUAL(28, static_cast<int>(sig[64]));
        CPPUNIT_ASSERT(*RecoverAddress(td->Digest(), sig) == key->Address());

        auto direct = HashTypedDataJson(MAIL);
        CPPUNIT_ASSERT(direct.ok());
        CPPUNIT_ASSERT_EQUAL(MAIL_DIGEST, Hex32(*direct));
    }

    void testEthersVectors() {
        for (const char* name : {"eip712_mail.json", "eip712_arrays.json", "eip712_chainsecured.json"}) {
            const auto v = LoadVector(name);
            auto td = TypedData::Parse(Serialize(v["typed_data"]));
            CPPUNIT_ASSERT_MESSAGE(std::string(name) + ": " + (td.ok() ? "" : td.error().message), td.ok());
            CPPUNIT_ASSERT_EQUAL(std::string(v["encode_type"].GetString()), *td->EncodeType(td->PrimaryType()));
            CPPUNIT_ASSERT_EQUAL(std::string(v["domain_separator"].GetString()), Hex32(td->DomainSeparator()));
            CPPUNIT_ASSERT_EQUAL(std::string(v["message_hash"].GetString()), Hex32(td->MessageHash()));
            CPPUNIT_ASSERT_EQUAL(std::string(v["digest"].GetString()), Hex32(td->Digest()));
            auto key = PrivateKey::FromBytes(*HexDecode(v["private_key"].GetString()));
            CPPUNIT_ASSERT(key.ok());
            Signature65 sig = SignDigest(*key, td->Digest());
            sig[64] = static_cast<std::uint8_t>(sig[64] + 27);  // ethers serializes v as 27/28
            CPPUNIT_ASSERT_EQUAL(std::string(v["signature"].GetString()), HexEncode(sig, true));
        }
    }

    void testPartsFormMatchesFullDocuments() {
        for (const char* name : {"eip712_mail.json", "eip712_arrays.json", "eip712_chainsecured.json"}) {
            auto v = LoadVector(name);
            auto& d = v["typed_data"];
            const std::string with_domain_type = Serialize(d["types"]);
            d["types"].RemoveMember("EIP712Domain");
            const std::string domain = Serialize(d["domain"]), types = Serialize(d["types"]),
                              value = Serialize(d["message"]);
            auto r = HashTypedDataJson(domain, types, value);
            CPPUNIT_ASSERT_MESSAGE(std::string(name) + ": " + (r.ok() ? "" : r.error().message), r.ok());
            CPPUNIT_ASSERT_EQUAL(std::string(v["digest"].GetString()), Hex32(*r));
            // An EIP712Domain entry equal to the derived one is tolerated.
            auto r2 = HashTypedDataJson(domain, with_domain_type, value);
            CPPUNIT_ASSERT(r2.ok() && *r2 == *r);
            auto td = TypedData::FromParts(domain, types, value);
            CPPUNIT_ASSERT_EQUAL(std::string(d["primaryType"].GetString()), td->PrimaryType());
        }
    }

    void testPartsVectors() {
        const auto v = LoadVector("eip712_parts.json");
        int checked = 0;
        for (const auto& c : v["cases"].GetArray()) {
            auto r = HashTypedDataJson(Serialize(c["domain"]), Serialize(c["types"]), Serialize(c["value"]));
            CPPUNIT_ASSERT_MESSAGE(Serialize(c) + ": " + (r.ok() ? "" : r.error().message), r.ok());
            CPPUNIT_ASSERT_EQUAL(std::string(c["digest"].GetString()), Hex32(*r));
            ++checked;
        }
        CPPUNIT_ASSERT_EQUAL(4, checked);
    }

    void testPartsRefusals() {
        const std::string types = R"({"Ping":[{"name":"n","type":"uint8"}]})";
        const std::string value = R"({"n":1})";
        const std::vector<std::pair<std::string, Result<Hash32>>> cases = {
            {"unknown domain key", HashTypedDataJson(R"({"name":"x","foo":1})", types, value)},
            {"domain not object", HashTypedDataJson(R"(["x"])", types, value)},
            {"domain chainId bad", HashTypedDataJson(R"({"chainId":"abc"})", types, value)},
            {"domain salt short", HashTypedDataJson(R"({"salt":"0x01"})", types, value)},
            {"domain name number", HashTypedDataJson(R"({"name":5})", types, value)},
            {"two roots", HashTypedDataJson(R"({"name":"x"})", R"({"A":[{"name":"n","type":"uint8"}],"B":[]})", R"({"n":1})")},
            {"no types", HashTypedDataJson(R"({"name":"x"})", "{}", "{}")},
            {"mismatched EIP712Domain",
             HashTypedDataJson(R"({"name":"x"})", R"({"EIP712Domain":[{"name":"version","type":"string"}],"Ping":[{"name":"n","type":"uint8"}]})", value)},
            {"value extra key", HashTypedDataJson(R"({"name":"x"})", types, R"({"n":1,"m":2})")},
            {"value malformed", HashTypedDataJson(R"({"name":"x"})", types, R"({"n":)")},
        };
        for (const auto& [label, r] : cases) {
            AssertRefused(label, r, label == "value malformed" ? ErrorKind::MalformedJson : ErrorKind::InvalidInput);
        }
        const std::string big(EIP712_MAX_DOCUMENT_BYTES, ' ');
        AssertRefused("oversized parts", HashTypedDataJson("{}", types, big + value), ErrorKind::TooLarge);
    }

    void testHashStructOfNestedType() {
        auto td = TypedData::Parse(MAIL);
        CPPUNIT_ASSERT(td.ok());
        const std::string cow = R"({"name":"Cow","wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"})";
        auto person = td->HashStruct("Person", cow);
        CPPUNIT_ASSERT(person.ok());
        // hashStruct(Person) = keccak256(typeHash || keccak256(name) || address word).
        Bytes enc;
        const Hash32 type_hash = Keccak256Hash(std::string_view("Person(string name,address wallet)"));
        const Hash32 name_hash = Keccak256Hash(std::string_view("Cow"));
        enc.insert(enc.end(), type_hash.begin(), type_hash.end());
        enc.insert(enc.end(), name_hash.begin(), name_hash.end());
        enc.insert(enc.end(), 12, 0);
        const Bytes addr = *HexDecode("0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826");
        enc.insert(enc.end(), addr.begin(), addr.end());
        CPPUNIT_ASSERT(*person == Keccak256Hash(enc));
        auto msg = td->HashStruct("Mail", Serialize(LoadVector("eip712_mail.json")["typed_data"]["message"]));
        CPPUNIT_ASSERT(msg.ok() && *msg == td->MessageHash());
        CPPUNIT_ASSERT(!td->HashStruct("Nobody", cow).ok());
        CPPUNIT_ASSERT(!td->HashStruct("Person", R"({"name":"Cow"})").ok());
    }

    void testNumberFormsAgree() {
        const auto base = HashTypedDataJson(OneField("uint256", "1"));
        CPPUNIT_ASSERT(base.ok());
        for (const char* form : {R"("1")", R"("0x1")", R"("0x01")", R"("0x0000000000000000001")", R"("01")"}) {
            auto r = HashTypedDataJson(OneField("uint256", form));
            CPPUNIT_ASSERT_MESSAGE(form, r.ok() && *r == *base);
        }
        const auto neg = HashTypedDataJson(OneField("int256", "-16"));
        CPPUNIT_ASSERT(neg.ok());
        for (const char* form : {R"("-16")", R"("-0x10")", R"("-0x10")"}) {
            auto r = HashTypedDataJson(OneField("int256", form));
            CPPUNIT_ASSERT_MESSAGE(form, r.ok() && *r == *neg);
        }
        // Sign matters: -1 is the all-ones word, 1 is not.
        CPPUNIT_ASSERT(*HashTypedDataJson(OneField("int8", "-1")) != *HashTypedDataJson(OneField("int8", "1")));
        const auto zero = HashTypedDataJson(OneField("int64", "0"));
        CPPUNIT_ASSERT(*HashTypedDataJson(OneField("int64", R"("-0")")) == *zero);
    }

    void testIntegerBounds() {
        const std::vector<std::pair<std::string, std::string>> accepted = {
            {"uint8", "255"}, {"uint8", "0"}, {"int8", "-128"}, {"int8", "127"}, {"uint64", "18446744073709551615"},
            {"int64", "-9223372036854775808"}, {"uint256", R"("0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")"},
            {"int256", R"("-57896044618658097711785492504343953926634992332820282019728792003956564819968")"},
            {"int256", R"("57896044618658097711785492504343953926634992332820282019728792003956564819967")"},
            {"uint24", R"("16777215")"}, {"int16", R"("-0x8000")"},
        };
        for (const auto& [type, value] : accepted) {
            auto r = HashTypedDataJson(OneField(type, value));
            CPPUNIT_ASSERT_MESSAGE(type + " " + value + (r.ok() ? "" : ": " + r.error().message), r.ok());
        }
        const std::vector<std::pair<std::string, std::string>> refused = {
            {"uint8", "256"}, {"uint8", "-1"}, {"int8", "-129"}, {"int8", "128"}, {"uint64", "18446744073709551616"},
            {"uint256", R"("0x1ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")"},
            {"uint256", R"("115792089237316195423570985008687907853269984665640564039457584007913129639936")"},
            {"int256", R"("-57896044618658097711785492504343953926634992332820282019728792003956564819969")"},
            {"int256", R"("57896044618658097711785492504343953926634992332820282019728792003956564819968")"},
            {"int16", R"("-0x8001")"}, {"uint32", R"("-0x1")"},
            {"uint8", "1.5"}, {"uint8", "1.0"}, {"uint8", "1e2"}, {"uint8", "true"}, {"uint8", "null"},
            {"uint8", R"("")"}, {"uint8", R"("-")"}, {"uint8", R"("0x")"}, {"uint8", R"("0xg1")"}, {"uint8", R"(" 1")"},
            {"uint8", R"("1 ")"}, {"uint8", R"("+1")"}, {"uint8", R"("--1")"}, {"uint8", R"("0X1")"}, {"uint8", "[1]"},
        };
        for (const auto& [type, value] : refused) AssertRefused(type + " " + value, HashTypedDataJson(OneField(type, value)));
    }

    void testRefusesBadTypes() {
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"unknown atomic type", Replace(MAIL, R"("type":"string"}]},)", R"("type":"strin"}]},)")},
            {"missing struct", Replace(MAIL, R"("Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}],)", "")},
            {"cycle", Replace(MAIL, R"({"name":"wallet","type":"address"}])", R"({"name":"wallet","type":"address"},{"name":"m","type":"Mail"}])")},
            {"self cycle via array", Replace(MAIL, R"({"name":"wallet","type":"address"}])", R"({"name":"wallet","type":"address"},{"name":"kids","type":"Person[]"}])")},
            {"uint7", OneField("uint7", "1")}, {"uint", OneField("uint", "1")}, {"int264", OneField("int264", "1")},
            {"uint08", OneField("uint08", "1")}, {"bytes0", OneField("bytes0", R"("0x")")},
            {"bytes33", OneField("bytes33", R"("0x00")")}, {"zero-length array", OneField("uint8[0]", "[]")},
            {"leading zero length", OneField("uint8[01]", "[1]")}, {"bare brackets", OneField("[]", "[]")},
            {"open bracket", OneField("uint8[", "[]")}, {"junk suffix", OneField("uint8[]x", "[]")},
            {"negative length", OneField("uint8[-1]", "[]")}, {"space in type", OneField("uint8 ", "1")},
            {"struct named uint256", Replace(MAIL, R"("Person":[)", R"("uint256":[{"name":"x","type":"bool"}],"Person":[)")},
            {"struct named bytes33", Replace(MAIL, R"("Person":[)", R"("bytes33":[{"name":"x","type":"bool"}],"Person":[)")},
            {"struct name with space", Replace(MAIL, R"("Person":[)", R"("Pers on":[],"Person":[)")},
            {"duplicate field", Replace(MAIL, R"({"name":"wallet","type":"address"}])", R"({"name":"wallet","type":"address"},{"name":"wallet","type":"bool"}])")},
            {"field extra key", Replace(MAIL, R"({"name":"wallet","type":"address"}])", R"({"name":"wallet","type":"address","x":1}])")},
            {"field missing type", Replace(MAIL, R"({"name":"wallet","type":"address"}])", R"({"name":"wallet"}])")},
            {"field name invalid", Replace(MAIL, R"({"name":"wallet","type":"address"}])", R"({"name":"wal let","type":"address"}])")},
            {"fields not array", Replace(MAIL, R"("Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}])", R"("Person":{})")},
            {"types not object", R"({"types":[],"primaryType":"T","domain":{},"message":{}})"},
            {"missing EIP712Domain", Replace(MAIL, R"("EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},)"
                                                   R"({"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],)", "")},
            {"primaryType EIP712Domain", Replace(MAIL, R"("primaryType":"Mail")", R"("primaryType":"EIP712Domain")")},
            {"primaryType unknown", Replace(MAIL, R"("primaryType":"Mail")", R"("primaryType":"Letter")")},
            {"primaryType number", Replace(MAIL, R"("primaryType":"Mail")", R"("primaryType":1)")},
        };
        for (const auto& [label, doc] : cases) AssertRefused(label, HashTypedDataJson(doc));
        std::string many = R"({"types":{"EIP712Domain":[],)";
        for (std::size_t i = 0; i < EIP712_MAX_STRUCT_TYPES; ++i) many += "\"S" + std::to_string(i) + "\":[],";
        many += R"("T":[]},"primaryType":"T","domain":{},"message":{}})";
        AssertRefused("too many struct types", HashTypedDataJson(many));
    }

    void testRefusesBadValues() {
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"missing field", Replace(MAIL, R"(,"contents":"Hello, Bob!")", "")},
            {"extra message field", Replace(MAIL, R"("contents":"Hello, Bob!")", R"("contents":"Hello, Bob!","bcc":"x")")},
            {"extra nested field", Replace(MAIL, R"({"name":"Bob",)", R"({"name":"Bob","age":3,)")},
            {"extra domain field", Replace(MAIL, R"("chainId":1,)", R"("chainId":1,"salt":"0x00",)")},
            {"missing domain field", Replace(MAIL, R"("version":"1",)", "")},
            {"duplicate message key", Replace(MAIL, R"("contents":"Hello, Bob!")", R"("contents":"Hello, Bob!","contents":"x")")},
            {"string as number", Replace(MAIL, R"("contents":"Hello, Bob!")", R"("contents":5)")},
            {"string as null", Replace(MAIL, R"("contents":"Hello, Bob!")", R"("contents":null)")},
            {"struct as string", Replace(MAIL, R"("to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"})", R"("to":"Bob")")},
            {"struct as array", Replace(MAIL, R"("to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"})", R"("to":[])")},
            {"message not object", R"({"types":{"EIP712Domain":[],"T":[]},"primaryType":"T","domain":{},"message":[]})"},
            {"domain not object", R"({"types":{"EIP712Domain":[],"T":[]},"primaryType":"T","domain":"x","message":{}})"},
            {"bad checksum address", Replace(MAIL, "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB", "0xBBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB")},
            {"short address", Replace(MAIL, "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB", "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBb")},
            {"address without 0x", Replace(MAIL, "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB", "bBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB")},
            {"address as number", Replace(MAIL, R"("0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB")", "12")},
            {"bool as string", OneField("bool", R"("true")")},
            {"bool as number", OneField("bool", "1")},
            {"bytes odd hex", OneField("bytes", R"("0xabc")")},
            {"bytes no prefix", OneField("bytes", R"("deadbeef")")},
            {"bytes non-hex", OneField("bytes", R"("0xzz")")},
            {"bytes as array", OneField("bytes", "[1,2]")},
            {"bytes4 short", OneField("bytes4", R"("0x010203")")},
            {"bytes4 long", OneField("bytes4", R"("0x0102030405")")},
            {"bytes32 empty", OneField("bytes32", R"("0x")")},
            {"fixed array too short", OneField("uint8[3]", "[1,2]")},
            {"fixed array too long", OneField("uint8[1]", "[1,2]")},
            {"nested fixed wrong", OneField("uint8[2][]", "[[1,2],[3]]")},
            {"array as object", OneField("uint8[]", R"({"0":1})")},
            {"array element wrong", OneField("string[]", R"(["a",1])")},
        };
        for (const auto& [label, doc] : cases) AssertRefused(label, HashTypedDataJson(doc));
        // The accepting twins of a few of the above, so the refusals are about the value alone.
        CPPUNIT_ASSERT(HashTypedDataJson(OneField("uint8[3]", "[1,2,3]")).ok());
        CPPUNIT_ASSERT(HashTypedDataJson(OneField("bytes4", R"("0x01020304")")).ok());
        CPPUNIT_ASSERT(HashTypedDataJson(OneField("bytes", R"("0x")")).ok());
        CPPUNIT_ASSERT(HashTypedDataJson(OneField("bool", "true")).ok());
        CPPUNIT_ASSERT(HashTypedDataJson(OneField("uint8[2][]", "[[1,2],[3,4]]")).ok());
    }

    void testRefusesBadDocuments() {
        const std::vector<std::pair<std::string, std::string>> malformed = {
            {"empty", ""}, {"truncated", MAIL.substr(0, MAIL.size() - 1)}, {"trailing garbage", MAIL + "x"},
            {"two documents", MAIL + MAIL}, {"NaN", OneField("uint8", "NaN")}, {"single quotes", "{'types':{}}"},
            {"embedded NUL", std::string("{\"types\"\0:{}}", 13)},
            {"invalid utf-8 string", OneField("string", "\"\xff\xfe\"")},
        };
        for (const auto& [label, doc] : malformed) AssertRefused(label, HashTypedDataJson(doc), ErrorKind::MalformedJson);
        const std::vector<std::pair<std::string, std::string>> invalid = {
            {"array root", "[]"}, {"string root", R"("x")"}, {"empty object", "{}"},
            {"missing message", Replace(MAIL, R"(,"message":)", R"(,"msg":)")},
            {"extra top-level key", Replace(MAIL, R"("primaryType":"Mail",)", R"("primaryType":"Mail","x":1,)")},
            {"duplicate top-level key", Replace(MAIL, R"("primaryType":"Mail",)", R"("primaryType":"Mail","primaryType":"Person",)")},
        };
        for (const auto& [label, doc] : invalid) AssertRefused(label, HashTypedDataJson(doc));
    }

    void testSizeAndDepthLimits() {
        // Whitespace keeps the document valid JSON, so only the size check can refuse it.
        AssertRefused("oversized", HashTypedDataJson(MAIL + std::string(EIP712_MAX_DOCUMENT_BYTES, ' ')), ErrorKind::TooLarge);
        CPPUNIT_ASSERT(HashTypedDataJson(MAIL + std::string(1000, ' ')).ok());

        // Depth: root(1) + message(2) + k arrays for "uint8[]...[]" (k suffixes).
        auto nested = [](int k) {
            std::string type = "uint8", value;
            for (int i = 0; i < k; ++i) type += "[]";
            value = std::string(k, '[') + std::string(k, ']');
            return OneField(type, value);
        };
        CPPUNIT_ASSERT(HashTypedDataJson(nested(30)).ok());
        AssertRefused("nesting 33", HashTypedDataJson(nested(31)));
        AssertRefused("deep garbage", HashTypedDataJson(std::string(100000, '[')));
        // Brackets inside strings do not count as nesting.
        CPPUNIT_ASSERT(HashTypedDataJson(OneField("string", "\"" + std::string(100, '[') + "\\\"" + "\"")).ok());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(Eip712Tests);
