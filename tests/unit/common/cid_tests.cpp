#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/base58.h"
#include "common/cid.h"
#include "common/hex.h"
#include "common/sha256.h"
#include "tests/test_support.h"

using namespace sigil::common;

namespace {

struct Vector {
    CidV0Layout layout;
    std::string cid;
};

// "<chunk> <links> <spec>" -> expected CID, from tests/data/cid_vectors.txt.
const std::map<std::string, Vector>& Vectors() {
    static const std::map<std::string, Vector> vectors = [] {
        std::map<std::string, Vector> out;
        sigil::test::ForEachVectorLine("cid_vectors.txt", [&](const std::string& line) {
            std::istringstream fields(line);
            Vector v;
            std::string spec;
            fields >> v.layout.chunk_size >> v.layout.max_links >> spec >> v.cid;
            out[std::to_string(v.layout.chunk_size) + " " + std::to_string(v.layout.max_links) + " " + spec] = v;
        });
        return out;
    }();
    return vectors;
}

std::uint8_t PatternByte(std::uint64_t i) { return static_cast<std::uint8_t>((i * 31 + 7) % 251); }

// Feed the input a spec describes to `builder` in pieces of odd sizes, never holding more than
// one piece, so 50 MiB vectors also exercise streaming.
void Feed(CidV0Builder& builder, const std::string& spec) {
    if (spec.rfind("hex:", 0) == 0) return builder.Update(*HexDecode(spec.substr(4)));
    if (spec.rfind("utf8:", 0) == 0) return builder.Update(AsBytes(std::string_view(spec).substr(5)));
    const bool repeat = spec.rfind("repeat:", 0) == 0;
    CPPUNIT_ASSERT_MESSAGE(spec, repeat || spec.rfind("pattern:", 0) == 0);
    const auto colon = spec.rfind(':');
    const std::uint64_t count = std::stoull(spec.substr(colon + 1));
    const auto fill = repeat ? static_cast<std::uint8_t>(std::stoul(spec.substr(7, 2), nullptr, 16)) : 0;
    Bytes piece;
    for (std::uint64_t off = 0; off < count; off += piece.size()) {
        piece.resize(std::min<std::uint64_t>(count - off, 65521));
        for (std::size_t i = 0; i < piece.size(); ++i) piece[i] = repeat ? fill : PatternByte(off + i);
        builder.Update(piece);
    }
}

std::set<std::string>& Checked() {
    static std::set<std::string> checked;
    return checked;
}

void CheckVector(const std::string& key) {
    const auto it = Vectors().find(key);
    CPPUNIT_ASSERT_MESSAGE("missing vector " + key, it != Vectors().end());
    CidV0Builder builder(it->second.layout);
    Feed(builder, key.substr(key.find(' ', key.find(' ') + 1) + 1));
    CPPUNIT_ASSERT_EQUAL_MESSAGE(key, it->second.cid, builder.Final());
    Checked().insert(key);
}

Bytes Pattern(std::size_t n) {
    Bytes out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = PatternByte(i);
    return out;
}

}  // namespace

class CidTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(CidTests);
    CPPUNIT_TEST(testPublishedVectors);
    CPPUNIT_TEST(testOneByte);
    CPPUNIT_TEST(testOneChunkBoundary);
    CPPUNIT_TEST(testTwoChunks);
    CPPUNIT_TEST(testFullParentAndDepthTwo);
    CPPUNIT_TEST(testDeepTreesWithSmallLayouts);
    CPPUNIT_TEST(testEveryVectorChecked);
    CPPUNIT_TEST(testLeafBlockBytesMatchRustIpfs);
    CPPUNIT_TEST(testIncrementalMatchesOneShot);
    CPPUNIT_TEST(testParseRoundTrip);
    CPPUNIT_TEST(testParseRefusesWrongLengthAndPrefix);
    CPPUNIT_TEST(testParseRefusesCharactersOutsideAlphabet);
    CPPUNIT_TEST(testParseRefusesOtherMultihash);
    CPPUNIT_TEST(testIsValidCidAcceptsV0AndBase32V1);
    CPPUNIT_TEST(testIsValidCidRefusesMalformedV1);
    CPPUNIT_TEST_SUITE_END();

public:
    void testPublishedVectors() {
        CheckVector("262144 174 hex:");
        CheckVector("262144 174 hex:666f6f6261720a");
        CheckVector("262144 174 utf8:console.log(\"hello\")");
        CheckVector("262144 174 repeat:78:307200");
        CheckVector("262144 174 repeat:61:300000");
        CPPUNIT_ASSERT_EQUAL(std::string("QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH"), ComputeCidV0(""));
        CPPUNIT_ASSERT_EQUAL(std::string("QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL"),
                             ComputeCidV0("console.log(\"hello\")"));
    }
    void testOneByte() {
        CheckVector("262144 174 repeat:61:1");
        CheckVector("262144 174 pattern:1");
    }
    void testOneChunkBoundary() {
        CheckVector("262144 174 pattern:262143");
        CheckVector("262144 174 pattern:262144");  // exactly one chunk: a leaf root, no empty second chunk
    }
    void testTwoChunks() {
        CheckVector("262144 174 pattern:262145");  // chunk + 1 byte: parent with a 1-byte second leaf
        CheckVector("262144 174 pattern:524288");
    }
    void testFullParentAndDepthTwo() {
        CheckVector("262144 174 pattern:45613056");  // 174 chunks: one full parent
        CheckVector("262144 174 pattern:45613057");  // 175 chunks: depth 2, second subtree wraps one leaf
        CheckVector("262144 174 pattern:52428800");  // 50 MiB, 200 chunks
        CheckVector("262144 174 pattern:52441145");  // 200 chunks and a partial one
    }
    void testDeepTreesWithSmallLayouts() {
        for (const auto& [key, v] : Vectors()) {
            if (v.layout.chunk_size != CIDV0_CHUNK_SIZE) CheckVector(key);
        }
    }
    // Runs last: every line of the data file went through one of the tests above.
    void testEveryVectorChecked() {
        for (const auto& [key, v] : Vectors()) CPPUNIT_ASSERT_MESSAGE("unchecked " + key, Checked().count(key));
        CPPUNIT_ASSERT(Vectors().size() >= 25);
    }

    // rust-ipfs's unixfs tests give the block of "foobar\n": Links none, Data = UnixFS{File, "foobar\n", 7}.
    void testLeafBlockBytesMatchRustIpfs() {
        const Bytes block = *HexDecode("0a0d08021207666f6f6261720a1807");
        CPPUNIT_ASSERT_EQUAL(ComputeCidV0("foobar\n"), CidV0FromDigest(Sha256Hash(block)));
        CPPUNIT_ASSERT_EQUAL(std::string("QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH"),
                             CidV0FromDigest(Sha256Hash(*HexDecode("0a0408021800"))));
    }

    void testIncrementalMatchesOneShot() {
        const Bytes data = Pattern(2 * CIDV0_CHUNK_SIZE + 12345);
        const std::string whole = ComputeCidV0(data);
        for (std::size_t step : {1000u, 4096u, 262143u, 262144u, 262145u, 600000u}) {
            CidV0Builder builder;
            for (std::size_t off = 0; off < data.size(); off += step) {
                builder.Update(ByteView(data).subspan(off, std::min(step, data.size() - off)));
            }
            CPPUNIT_ASSERT_EQUAL(whole, builder.Final());
        }
        // Byte-at-a-time and empty updates across small-layout boundaries (depth 3 at 16/3).
        const Bytes small = Pattern(433);
        CidV0Builder one_shot({16, 3}), bytewise({16, 3});
        one_shot.Update(small);
        for (std::uint8_t b : small) {
            bytewise.Update(ByteView(&b, 1));
            bytewise.Update(ByteView());
        }
        CPPUNIT_ASSERT_EQUAL(one_shot.Final(), bytewise.Final());
    }

    void testParseRoundTrip() {
        CidV0Builder builder;
        builder.Update(AsBytes(std::string_view("console.log(\"hello\")")));
        const Hash32 digest = builder.FinalDigest();
        auto parsed = ParseCidV0("QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL");
        CPPUNIT_ASSERT(parsed.ok());
        CPPUNIT_ASSERT(*parsed == digest);
        for (const auto& [key, v] : Vectors()) {
            auto p = ParseCidV0(v.cid);
            CPPUNIT_ASSERT_MESSAGE(v.cid, p.ok());
            CPPUNIT_ASSERT_EQUAL(v.cid, CidV0FromDigest(*p));
        }
    }

    static void AssertRefused(const std::string& text) {
        auto r = ParseCidV0(text);
        CPPUNIT_ASSERT_MESSAGE(text, !r.ok());
        CPPUNIT_ASSERT_EQUAL(ErrorKind::InvalidInput, r.error().kind);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_cid"), r.error().code);
        CPPUNIT_ASSERT_MESSAGE(text, !IsValidCid(text));
    }

    void testParseRefusesWrongLengthAndPrefix() {
        const std::string good = "QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL";
        AssertRefused("");
        AssertRefused("Qm");
        AssertRefused(good.substr(0, 45));
        AssertRefused(good + "1");
        AssertRefused(good + "\n");
        AssertRefused(" " + good);
        AssertRefused("qm" + good.substr(2));
        AssertRefused("Qn" + good.substr(2));
        AssertRefused("zQ" + good.substr(2));  // no multibase prefix on CIDv0
        AssertRefused("/ipfs/" + good);
    }

    void testParseRefusesCharactersOutsideAlphabet() {
        const std::string good = "QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL";
        for (char bad : {'0', 'O', 'I', 'l', '+', '/', ' ', '\0', '\xff'}) {
            std::string text = good;
            text[20] = bad;
            AssertRefused(text);
        }
    }

    void testParseRefusesOtherMultihash() {
        // "Qm" + 44 '1's is the smallest Qm string: it decodes to 12 1e ..., a 30-byte length
        // byte; "Qm" + 44 'z's is 12 22 ...; both are 34 bytes but not sha2-256/32.
        AssertRefused("Qm" + std::string(44, '1'));
        AssertRefused("Qm" + std::string(44, 'z'));
        // sha1 (0x11) or sha2-512 (0x13) multihashes of 32 bytes: not "Qm" at all.
        for (std::uint8_t code : {0x11, 0x13}) {
            Bytes mh{code, 0x20};
            mh.resize(34, 0xab);
            AssertRefused(Base58Encode(mh));
        }
        // The right header with a 33-byte digest is 47 characters.
        Bytes longer{0x12, 0x20};
        longer.resize(35, 0xcd);
        AssertRefused(Base58Encode(longer));
    }

    void testIsValidCidAcceptsV0AndBase32V1() {
        CPPUNIT_ASSERT(IsValidCid("QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH"));
        // The same multihashes as CIDv1 (dag-pb and raw codecs), converted with the npm cids
        // package 1.1.9: new CID(v0).toV1().toString('base32') / new CID(1, 'raw', mh).
        CPPUNIT_ASSERT(IsValidCid("bafybeif7ztnhq65lumvvtr4ekcwd2ifwgm3awq4zfr3srh462rwyinlb4y"));
        CPPUNIT_ASSERT(IsValidCid("bafybeibrypkxbagyiy5dyy5ssi67lioubll2opvolikk6wcccps7kbfmgm"));
        CPPUNIT_ASSERT(IsValidCid("bafkreif7ztnhq65lumvvtr4ekcwd2ifwgm3awq4zfr3srh462rwyinlb4y"));
    }

    void testIsValidCidRefusesMalformedV1() {
        const std::string v1 = "bafybeif7ztnhq65lumvvtr4ekcwd2ifwgm3awq4zfr3srh462rwyinlb4y";
        CPPUNIT_ASSERT(!IsValidCid("b"));
        CPPUNIT_ASSERT(!IsValidCid("B" + v1.substr(1)));                          // uppercase multibase
        CPPUNIT_ASSERT(!IsValidCid("BAFYBEIF7ZTNHQ65LUMVVTR4EKCWD2IFWGM3AWQ4ZFR3SRH462RWYINLB4Y"));
        CPPUNIT_ASSERT(!IsValidCid(v1.substr(0, v1.size() - 1)));                // digest cut short
        CPPUNIT_ASSERT(!IsValidCid(v1 + "a"));                                     // extra byte/bits
        CPPUNIT_ASSERT(!IsValidCid(v1 + "="));                                     // padding
        CPPUNIT_ASSERT(!IsValidCid(v1.substr(0, 20) + "1" + v1.substr(21)));     // '1' is not base32
        CPPUNIT_ASSERT(!IsValidCid("zdj7WYnAFc2UcMifz4NVouPXH2XtJYWjV2bk7W9aPcJELU8qG"));  // base58 v1: not accepted
        CPPUNIT_ASSERT(!IsValidCid("b" + std::string(300, 'a')));
        // Version byte 0 or 2 in base32 ("aa..." starts with 0x00; "ae" with 0x02... ).
        CPPUNIT_ASSERT(!IsValidCid("baasaaaaa"));
        CPPUNIT_ASSERT(!IsValidCid("beasaaaaa"));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(CidTests);
