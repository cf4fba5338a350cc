#include <cppunit/extensions/HelperMacros.h>
#include <rapidjson/document.h>

#include "common/abi.h"
#include "common/hex.h"
#include "tests/test_support.h"

using namespace sigil::common;

namespace {

Bytes Hex(const std::string& s) { return HexDecode(s).value(); }

Uint256 Negate(const Uint256& m) {
    Hash32 w = m.Word();
    for (auto& b : w) b = static_cast<std::uint8_t>(~b);
    return Uint256::FromWord(w).CheckedAdd(Uint256::FromUint64(1)).value_or(Uint256());
}

// Type-directed JSON -> AbiValue: integers as decimal strings or numbers, bytes/address as 0x-hex,
// strings as text, arrays and tuples as JSON arrays (the vector files' convention).
AbiValue FromJson(const AbiType& t, const rapidjson::Value& v) {
    auto text = [&] { return std::string(v.GetString(), v.GetStringLength()); };
    switch (t.kind) {
        case AbiKind::Uint:
            return AbiValue::Uint(v.IsString() ? Uint256::FromDecimal(text()).value() : Uint256::FromUint64(v.GetUint64()));
        case AbiKind::Int: {
            const std::string s = text();
            if (s[0] == '-') return AbiValue::IntWord(Negate(Uint256::FromDecimal(s.substr(1)).value()));
            return AbiValue::IntWord(Uint256::FromDecimal(s).value());
        }
        case AbiKind::Address: {
            Address20 a{};
            const Bytes b = HexDecodeExact(text(), 20).value();
            std::copy(b.begin(), b.end(), a.begin());
            return AbiValue::Address(a);
        }
        case AbiKind::Bool: return AbiValue::Bool(v.GetBool());
        case AbiKind::FixedBytes: return AbiValue::FixedBytes(Hex(text()));
        case AbiKind::DynamicBytes: return AbiValue::DynBytes(Hex(text()));
        case AbiKind::String: return AbiValue::String(text());
        case AbiKind::Array:
        case AbiKind::FixedArray:
        case AbiKind::Tuple: {
            std::vector<AbiValue> items;
            std::size_t i = 0;
            for (const auto& m : v.GetArray()) {
                items.push_back(FromJson(t.kind == AbiKind::Tuple ? t.members[i] : t.members[0], m));
                ++i;
            }
            if (t.kind == AbiKind::Array) return AbiValue::Array(std::move(items));
            if (t.kind == AbiKind::FixedArray) return AbiValue::FixedArray(std::move(items));
            return AbiValue::Tuple(std::move(items));
        }
    }
    return {};
}

std::vector<AbiValue> ValuesFromJson(const std::vector<AbiType>& types, const rapidjson::Value& v) {
    std::vector<AbiValue> out;
    for (std::size_t i = 0; i < types.size(); ++i) out.push_back(FromJson(types[i], v[static_cast<rapidjson::SizeType>(i)]));
    return out;
}

std::vector<AbiType> Types(const std::string& s) { return ParseAbiTypeList(s).value(); }

std::string DecodeCode(const std::string& types, const Bytes& data) {
    auto r = AbiDecode(Types(types), data);
    return r.ok() ? "ok" : r.error().code;
}

std::string Word(const std::string& hex_tail) { return std::string(64 - hex_tail.size(), '0') + hex_tail; }

// sam(bytes,bool,uint256[]) arguments from the spec, without the selector.
const std::string SAM_ARGS = Word("60") + Word("1") + Word("a0") + Word("4") + "64617665" + std::string(56, '0') +
                             Word("3") + Word("1") + Word("2") + Word("3");

}  // namespace

class AbiTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(AbiTests);
    CPPUNIT_TEST(testParsesTypes);
    CPPUNIT_TEST(testRejectsBadTypes);
    CPPUNIT_TEST(testSelectors);
    CPPUNIT_TEST(testSpecExamples);
    CPPUNIT_TEST(testEthersVectors);
    CPPUNIT_TEST(testEncodeRejectsMismatchedValues);
    CPPUNIT_TEST(testDecodeRejectsBadOffsets);
    CPPUNIT_TEST(testDecodeRejectsBadLengthsAndTruncation);
    CPPUNIT_TEST(testDecodeRejectsDirtyPadding);
    CPPUNIT_TEST(testRevertErrorString);
    CPPUNIT_TEST(testRevertPanic);
    CPPUNIT_TEST(testRevertCustomUnknownAndEmpty);
    CPPUNIT_TEST(testRevertMalformed);
    CPPUNIT_TEST_SUITE_END();

    static rapidjson::Document Load(const char* name) {
        rapidjson::Document doc;
        const std::string text = sigil::test::ReadDataFile(name);
        doc.Parse(text.c_str());
        CPPUNIT_ASSERT(!doc.HasParseError());
        return doc;
    }

public:
    void testParsesTypes() {
        const std::pair<const char*, const char*> cases[] = {
            {"uint", "uint256"}, {"int", "int256"}, {"uint8", "uint8"}, {"bytes32", "bytes32"}, {"bytes", "bytes"},
            {"address[]", "address[]"}, {"uint[2][]", "uint256[2][]"},
            {"(uint256,address[],(string,bytes32)[])", "(uint256,address[],(string,bytes32)[])"},
            {"(int,(bool))[3]", "(int256,(bool))[3]"}};
        for (const auto& [in, canonical] : cases) {
            auto t = ParseAbiType(in);
            CPPUNIT_ASSERT_MESSAGE(in, t.ok());
            CPPUNIT_ASSERT_EQUAL(std::string(canonical), t->Canonical());
        }
        CPPUNIT_ASSERT(!ParseAbiType("bytes32[2]")->IsDynamic());
        CPPUNIT_ASSERT_EQUAL(std::size_t{64}, ParseAbiType("bytes32[2]")->HeadSize());
        CPPUNIT_ASSERT(ParseAbiType("(uint8,string)")->IsDynamic());
        CPPUNIT_ASSERT(ParseAbiType("string[2]")->IsDynamic());
        CPPUNIT_ASSERT_EQUAL(std::size_t{96}, ParseAbiType("(uint8,(bool,address))")->HeadSize());
        CPPUNIT_ASSERT(ParseAbiTypeList("")->empty());
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, ParseAbiTypeList("uint8,(bool,bytes),string[]")->size());
    }
    void testRejectsBadTypes() {
        for (const char* bad : {"", "uint7", "uint264", "uint0", "uint08", "int1024", "bytes0", "bytes33", "bytes01",
                                "uint256[0]", "uint256[01]", "()", "(uint256", "(uint256,)", "(,)", "uint256[", "uint256]",
                                "foo", "Uint256", "uint 256", "uint256 ", "address payable", "function", "fixed128x18",
                                "uint256[1000000][1000000]", "bytes32[99999999]", "tuple(uint256)"}) {
            auto t = ParseAbiType(bad);
            CPPUNIT_ASSERT_MESSAGE(bad, !t.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("abi_bad_type"), t.error().code);
        }
        std::string deep = "uint8";
        for (int i = 0; i < 40; ++i) deep += "[]";
        CPPUNIT_ASSERT(!ParseAbiType(deep).ok());
        CPPUNIT_ASSERT(!ParseAbiType(std::string(5000, '(')).ok());
        CPPUNIT_ASSERT(!ParseAbiTypeList("uint8,").ok());
        CPPUNIT_ASSERT(!ParseSignature("transfer").ok());
        CPPUNIT_ASSERT(!ParseSignature("(uint256)").ok());
        CPPUNIT_ASSERT(!ParseSignature("1abc(uint256)").ok());
        CPPUNIT_ASSERT(!ParseSignature("f(uint256").ok());
    }
    void testSelectors() {
        CPPUNIT_ASSERT_EQUAL(std::string("a9059cbb"), HexEncode(FunctionSelector("transfer(address,uint256)")));
        CPPUNIT_ASSERT_EQUAL(std::string("08c379a0"), HexEncode(FunctionSelector("Error(string)")));
        CPPUNIT_ASSERT_EQUAL(std::string("4e487b71"), HexEncode(FunctionSelector("Panic(uint256)")));
        auto sig = ParseSignature("transfer(address,uint)");
        CPPUNIT_ASSERT(sig.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("transfer(address,uint256)"), sig->canonical);
        CPPUNIT_ASSERT_EQUAL(std::string("a9059cbb"), HexEncode(sig->selector));
        CPPUNIT_ASSERT(ParseSignature("noArgs()")->inputs.empty());
    }
    void testSpecExamples() {
        const auto doc = Load("abi_spec_examples.json");
        int checked = 0;
        for (const auto& v : doc["vectors"].GetArray()) {
            const std::string signature = v["signature"].GetString();
            const auto sig = ParseSignature(signature).value();
            const auto values = ValuesFromJson(sig.inputs, v["values"]);
            const Bytes calldata = Hex(v["calldata"].GetString());
            auto encoded = EncodeCall(signature, values);
            CPPUNIT_ASSERT_MESSAGE(signature, encoded.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(signature, HexEncode(calldata), HexEncode(*encoded));
            auto decoded = AbiDecode(sig.inputs, ByteView(calldata).subspan(4));
            CPPUNIT_ASSERT_MESSAGE(signature, decoded.ok());
            CPPUNIT_ASSERT_MESSAGE(signature, *decoded == values);
            ++checked;
        }
        CPPUNIT_ASSERT_EQUAL(5, checked);
    }
    void testEthersVectors() {
        const auto doc = Load("abi_ethers_vectors.json");
        int checked = 0;
        for (const auto& v : doc["vectors"].GetArray()) {
            const std::string types_text = v["types"].GetString();
            const auto types = Types(types_text);
            const auto values = ValuesFromJson(types, v["values"]);
            const Bytes expected = Hex(v["encoded"].GetString());
            auto encoded = AbiEncode(types, values);
            CPPUNIT_ASSERT_MESSAGE(types_text, encoded.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(types_text, HexEncode(expected), HexEncode(*encoded));
            auto decoded = AbiDecode(types, expected);
            CPPUNIT_ASSERT_MESSAGE(types_text, decoded.ok());
            CPPUNIT_ASSERT_MESSAGE(types_text, *decoded == values);
            ++checked;
        }
        CPPUNIT_ASSERT_EQUAL(7, checked);
    }
    void testEncodeRejectsMismatchedValues() {
        auto code = [](const std::string& types, std::vector<AbiValue> values) {
            auto r = AbiEncode(Types(types), values);
            return r.ok() ? std::string("ok") : r.error().code;
        };
        const std::string mismatch = "abi_value_mismatch";
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), code("uint8", {AbiValue::Uint(255)}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("uint8", {AbiValue::Uint(256)}));
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), code("int8", {AbiValue::Int(-128)}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("int8", {AbiValue::Int(-129)}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("int8", {AbiValue::Int(128)}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("bytes3", {AbiValue::FixedBytes(Bytes{1, 2})}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("uint8[2]", {AbiValue::FixedArray({AbiValue::Uint(1)})}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("uint8[2]", {AbiValue::Array({AbiValue::Uint(1), AbiValue::Uint(2)})}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("(uint8,bool)", {AbiValue::Tuple({AbiValue::Uint(1)})}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("string", {AbiValue::DynBytes(Bytes{})}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("uint256,bool", {AbiValue::Uint(1)}));
        CPPUNIT_ASSERT_EQUAL(mismatch, code("address[]", {AbiValue::Array({AbiValue::Bool(true)})}));
    }
    void testDecodeRejectsBadOffsets() {
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), DecodeCode("bytes,bool,uint256[]", Hex(SAM_ARGS)));
        auto with_word = [](std::size_t index, const std::string& word) {
            std::string s = SAM_ARGS;
            s.replace(index * 64, 64, Word(word));
            return Hex(s);
        };
        const std::string malformed = "abi_malformed";
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes,bool,uint256[]", with_word(0, "0")));     // points into the head
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes,bool,uint256[]", with_word(0, "80")));    // skips a word
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes,bool,uint256[]", with_word(2, "60")));    // overlaps the first
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes,bool,uint256[]", with_word(2, "1000")));  // past the end
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes,bool,uint256[]", with_word(0, std::string(64, 'f'))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes,bool,uint256[]", with_word(0, "61")));    // unaligned
    }
    void testDecodeRejectsBadLengthsAndTruncation() {
        const std::string malformed = "abi_malformed";
        // An array count of 2^64-1 with no data behind it must be refused before allocating.
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("uint256[]", Hex(Word("20") + Word(std::string(16, 'f')))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("uint256[]", Hex(Word("20") + Word(std::string(64, 'f')))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("string[]", Hex(Word("20") + Word("4") + Word("80"))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes", Hex(Word("20") + Word("21") + Word("0"))));  // 33 bytes claimed
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes", Hex(Word("20") + Word("1"))));               // padding missing
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("uint256,uint256", Hex(Word("1"))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("uint256", Hex(Word("1") + "00")));                   // trailing byte
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("uint256", Hex(Word("1") + Word("0"))));              // trailing word
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes,bool,uint256[]", Hex(SAM_ARGS.substr(0, SAM_ARGS.size() - 64))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("uint256[3]", Hex(Word("1") + Word("2"))));
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), DecodeCode("", {}));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("", Bytes{0}));
    }
    void testDecodeRejectsDirtyPadding() {
        const std::string malformed = "abi_malformed";
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), DecodeCode("bool", Hex(Word("1"))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bool", Hex(Word("2"))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bool", Hex(Word("100"))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("uint32", Hex(Word("100000000"))));
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("address", Hex(Word("1" + std::string(40, '0')))));
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), DecodeCode("int8", Hex(std::string(62, 'f') + "80")));   // -128
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("int8", Hex(std::string(62, 'f') + "7f")));           // not sign-extended
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("int8", Hex(Word("80"))));                            // +128
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes10", Hex("31323334353637383930" + std::string(42, '0') + "01")));
        std::string sam = SAM_ARGS;
        sam[4 * 64 + 10] = '1';  // a bit inside the padding after "dave"
        CPPUNIT_ASSERT_EQUAL(malformed, DecodeCode("bytes,bool,uint256[]", Hex(sam)));
    }
    void testRevertErrorString() {
        // Solidity docs (control-structures, "Error(string)"): revert("Not enough Ether provided.")
        const Bytes data = Hex("08c379a0" + Word("20") + Word("1a") +
                               "4e6f7420656e6f7567682045746865722070726f76696465642e000000000000");
        auto r = DecodeRevert(data, {});
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(r->kind == RevertKind::ErrorString);
        CPPUNIT_ASSERT_EQUAL(std::string("Error"), r->name);
        CPPUNIT_ASSERT_EQUAL(std::string("Not enough Ether provided."), r->message);
        CPPUNIT_ASSERT(r->data == data);
    }
    void testRevertPanic() {
        const std::pair<unsigned, const char*> cases[] = {{0x01, "assertion failed"},
                                                          {0x11, "arithmetic overflow or underflow"},
                                                          {0x12, "division or modulo by zero"},
                                                          {0x32, "array index out of bounds"},
                                                          {0x99, "unknown panic code"}};
        for (const auto& [code, meaning] : cases) {
            const AbiValue arg = AbiValue::Uint(code);
            auto data = EncodeCall("Panic(uint256)", {&arg, 1});
            auto r = DecodeRevert(*data, {});
            CPPUNIT_ASSERT(r.ok());
            CPPUNIT_ASSERT(r->kind == RevertKind::Panic);
            CPPUNIT_ASSERT(r->panic_code == Uint256::FromUint64(code));
            CPPUNIT_ASSERT_EQUAL(std::string(meaning), r->message);
        }
    }
    void testRevertCustomUnknownAndEmpty() {
        const std::vector<AbiSignature> table = {ParseSignature("NotAuthorized(uint256)").value(),
                                                 ParseSignature("UnknownGroup(uint256,string)").value()};
        const std::vector<AbiValue> args = {AbiValue::Uint(7), AbiValue::String("ops")};
        auto data = EncodeCall("UnknownGroup(uint256,string)", args);
        auto r = DecodeRevert(*data, table);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(r->kind == RevertKind::Custom);
        CPPUNIT_ASSERT_EQUAL(std::string("UnknownGroup"), r->name);
        CPPUNIT_ASSERT(r->args == args);

        auto unknown = DecodeRevert(*EncodeCall("Other(uint256)", {&args[0], 1}), table);
        CPPUNIT_ASSERT(unknown.ok());
        CPPUNIT_ASSERT(unknown->kind == RevertKind::Unknown);
        CPPUNIT_ASSERT_EQUAL(HexEncode(FunctionSelector("Other(uint256)")), HexEncode(unknown->selector));

        auto empty = DecodeRevert({}, table);
        CPPUNIT_ASSERT(empty.ok());
        CPPUNIT_ASSERT(empty->kind == RevertKind::Empty);
        // A selector alone for an error without arguments.
        const std::vector<AbiSignature> no_args = {ParseSignature("Paused()").value()};
        const Selector paused_selector = FunctionSelector("Paused()");
        auto paused = DecodeRevert(Bytes(paused_selector.begin(), paused_selector.end()), no_args);
        CPPUNIT_ASSERT(paused.ok() && paused->kind == RevertKind::Custom && paused->args.empty());
    }
    void testRevertMalformed() {
        CPPUNIT_ASSERT_EQUAL(std::string("abi_malformed"), DecodeRevert(Bytes{0x08, 0xc3}, {}).error().code);
        // Error(string) whose string length runs past the data.
        CPPUNIT_ASSERT(!DecodeRevert(Hex("08c379a0" + Word("20") + Word("ff")), {}).ok());
        CPPUNIT_ASSERT(!DecodeRevert(Hex("4e487b71"), {}).ok());
        const std::vector<AbiSignature> table = {ParseSignature("NotAuthorized(uint256)").value()};
        Bytes truncated(table[0].selector.begin(), table[0].selector.end());
        truncated.push_back(1);
        CPPUNIT_ASSERT(!DecodeRevert(truncated, table).ok());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(AbiTests);
