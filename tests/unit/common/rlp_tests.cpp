#include <cppunit/extensions/HelperMacros.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "common/hex.h"
#include "common/rlp.h"
#include "tests/test_support.h"

using namespace sigil::common;

namespace {

// Big-endian minimal bytes of a decimal string of any length (the vectors include 2^256).
Bytes DecimalToBytes(const std::string& digits) {
    Bytes be;  // little-endian while building
    for (char c : digits) {
        unsigned carry = static_cast<unsigned>(c - '0');
        for (auto& b : be) {
            const unsigned v = b * 10u + carry;
            b = static_cast<std::uint8_t>(v & 0xff);
            carry = v >> 8;
        }
        while (carry) {
            be.push_back(static_cast<std::uint8_t>(carry & 0xff));
            carry >>= 8;
        }
    }
    std::reverse(be.begin(), be.end());
    return be;
}

// ethereum/tests conventions: numbers are integers, "#digits" big integers, "0x.." hex, other strings literal.
RlpItem FromJson(const rapidjson::Value& v) {
    if (v.IsArray()) {
        std::vector<RlpItem> items;
        for (const auto& m : v.GetArray()) items.push_back(FromJson(m));
        return RlpItem::List(std::move(items));
    }
    if (v.IsUint64()) return RlpItem::Uint(v.GetUint64());
    const std::string s(v.GetString(), v.GetStringLength());
    if (!s.empty() && s[0] == '#') return RlpItem::String(DecimalToBytes(s.substr(1)));
    return RlpItem::String(AsBytes(s));
}

Bytes Hex(const std::string& s) { return HexDecode(s).value(); }

// The header alone of a list whose payload is `len` bytes.
Bytes ListHeader(std::size_t len) {
    if (len < 56) return {static_cast<std::uint8_t>(0xc0 + len)};
    Bytes be;
    for (std::size_t v = len; v != 0; v >>= 8) be.insert(be.begin(), static_cast<std::uint8_t>(v & 0xff));
    be.insert(be.begin(), static_cast<std::uint8_t>(0xf7 + be.size()));
    return be;
}

RlpItem Nested(std::size_t depth) {
    RlpItem item = RlpItem::List({});
    for (std::size_t i = 1; i < depth; ++i) item = RlpItem::List({item});
    return item;
}

}  // namespace

class RlpTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(RlpTests);
    CPPUNIT_TEST(testEthereumTestsVectors);
    CPPUNIT_TEST(testWikiExamples);
    CPPUNIT_TEST(testEthereumTestsInvalidRefused);
    CPPUNIT_TEST(testRejectsNonCanonicalForms);
    CPPUNIT_TEST(testRejectsTruncationAndTrailingBytes);
    CPPUNIT_TEST(testDepthLimit);
    CPPUNIT_TEST(testIntegerReaders);
    CPPUNIT_TEST(testListPayloadHelper);
    CPPUNIT_TEST_SUITE_END();

    rapidjson::Document m_doc;

    int CheckValid(const char* section) {
        int checked = 0;
        for (const auto& t : m_doc[section].GetObject()) {
            const std::string name = t.name.GetString();
            const RlpItem item = FromJson(t.value["in"]);
            const Bytes out = Hex(t.value["out"].GetString());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(name, HexEncode(out), HexEncode(RlpEncode(item)));
            auto decoded = RlpDecode(out);
            CPPUNIT_ASSERT_MESSAGE(name, decoded.ok());
            CPPUNIT_ASSERT_MESSAGE(name, *decoded == item);
            ++checked;
        }
        return checked;
    }

    static std::string Code(const std::string& hex) {
        auto r = RlpDecode(Hex(hex));
        return r.ok() ? "ok" : r.error().code;
    }

public:
    void setUp() override {
        const std::string text = sigil::test::ReadDataFile("rlp_vectors.json");
        m_doc.Parse(text.c_str());
        CPPUNIT_ASSERT(!m_doc.HasParseError());
    }
    void testEthereumTestsVectors() { CPPUNIT_ASSERT(CheckValid("valid") >= 28); }
    void testWikiExamples() { CPPUNIT_ASSERT_EQUAL(10, CheckValid("wiki")); }
    void testEthereumTestsInvalidRefused() {
        int checked = 0;
        for (const auto& t : m_doc["invalid"].GetObject()) {
            auto r = RlpDecode(Hex(t.value.GetString()));
            CPPUNIT_ASSERT_MESSAGE(t.name.GetString(), !r.ok());
            CPPUNIT_ASSERT_EQUAL(ErrorKind::InvalidInput, r.error().kind);
            ++checked;
        }
        CPPUNIT_ASSERT_EQUAL(17, checked);
    }
    void testRejectsNonCanonicalForms() {
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_non_canonical"), Code("8100"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_non_canonical"), Code("817f"));
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), Code("8180"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_non_canonical"), Code("b801ff"));   // long form for a short string
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_non_canonical"), Code("b800"));     // length with a leading zero
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_non_canonical"), Code("f803112233"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_non_canonical"), Code("c3c28100"));  // nested non-canonical member
        // 56 bytes is the first length that takes the long form.
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), Code("b838" + std::string(112, 'a')));
    }
    void testRejectsTruncationAndTrailingBytes() {
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_truncated"), Code(""));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_truncated"), Code("83646f"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_truncated"), Code("81"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_truncated"), Code("b9"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_truncated"), Code("c283646f67"));  // member runs past its list
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_truncated"), Code("bfffffffffffffffff"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_truncated"), Code("bb7fffffff00"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_trailing_bytes"), Code("8000"));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_trailing_bytes"), Code("c0c0"));
    }
    void testDepthLimit() {
        CPPUNIT_ASSERT(RlpDecode(RlpEncode(Nested(RLP_MAX_DEPTH))).ok());
        auto deep = RlpDecode(RlpEncode(Nested(RLP_MAX_DEPTH + 1)));
        CPPUNIT_ASSERT(!deep.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_too_deep"), deep.error().code);
        // A hostile 100k-deep nesting must be refused without exhausting the stack.
        std::vector<Bytes> headers;  // innermost first
        std::size_t len = 1;         // the innermost empty list, 0xc0
        for (int i = 0; i < 100000; ++i) {
            headers.push_back(ListHeader(len));
            len += headers.back().size();
        }
        Bytes hostile;
        for (auto it = headers.rbegin(); it != headers.rend(); ++it) hostile.insert(hostile.end(), it->begin(), it->end());
        hostile.push_back(0xc0);
        CPPUNIT_ASSERT_EQUAL(len, hostile.size());
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_too_deep"), RlpDecode(hostile).error().code);
        CPPUNIT_ASSERT(RlpDecode(RlpEncode(Nested(3)), 2).error().code == "rlp_too_deep");
    }
    void testIntegerReaders() {
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1024}, *RlpToUint64(*RlpDecode(Hex("820400"))));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, *RlpToUint64(*RlpDecode(Hex("80"))));
        CPPUNIT_ASSERT_EQUAL(std::string("rlp_not_integer"), RlpToUint64(*RlpDecode(Hex("820004"))).error().code);
        CPPUNIT_ASSERT(!RlpToUint64(*RlpDecode(Hex("c0"))).ok());
        CPPUNIT_ASSERT(!RlpToUint64(*RlpDecode(Hex("89010000000000000000"))).ok());  // 2^64
        CPPUNIT_ASSERT(RlpToUint256(*RlpDecode(Hex("89010000000000000000"))).ok());
        CPPUNIT_ASSERT(!RlpToUint256(*RlpDecode(Hex("a1010000000000000000000000000000000000000000000000000000000000000000"))).ok());
        CPPUNIT_ASSERT_EQUAL(std::string("80"), HexEncode(RlpEncode(RlpItem::Uint(0))));
        CPPUNIT_ASSERT_EQUAL(std::string("0f"), HexEncode(RlpEncode(RlpItem::Uint(15))));
        CPPUNIT_ASSERT_EQUAL(std::string("820400"), HexEncode(RlpEncode(RlpItem::Uint(1024))));
    }
    void testListPayloadHelper() {
        const Bytes members = [] {
            Bytes b = RlpEncodeString(AsBytes("cat"));
            const Bytes d = RlpEncodeString(AsBytes("dog"));
            b.insert(b.end(), d.begin(), d.end());
            return b;
        }();
        CPPUNIT_ASSERT_EQUAL(std::string("c88363617483646f67"), HexEncode(RlpEncodeListPayload(members)));
        const Bytes big(1000, 0x80);  // 1000 empty strings: needs a two-byte long-form length
        CPPUNIT_ASSERT_EQUAL(std::string("f903e8"), HexEncode(RlpEncodeListPayload(big)).substr(0, 6));
        auto decoded = RlpDecode(RlpEncodeListPayload(big));
        CPPUNIT_ASSERT(decoded.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{1000}, decoded->items.size());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(RlpTests);
