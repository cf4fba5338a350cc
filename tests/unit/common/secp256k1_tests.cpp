#include <cppunit/extensions/HelperMacros.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/hex.h"
#include "common/keccak.h"
#include "common/secp256k1.h"
#include "tests/test_support.h"

using namespace sigil::common;

namespace {

// secp256k1 group order n.
const std::string ORDER_HEX = "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";

std::vector<std::vector<std::string>> VectorLines(const std::string& kind) {
    std::vector<std::vector<std::string>> out;
    sigil::test::ForEachVectorLine("secp256k1_vectors.txt", [&](const std::string& line) {
        std::istringstream fields(line);
        std::vector<std::string> row;
        std::string f;
        while (fields >> f) row.push_back(f);
        if (!row.empty() && row[0] == kind) out.push_back(row);
    });
    return out;
}

Bytes Hex(const std::string& s) {
    auto r = HexDecode(s);
    CPPUNIT_ASSERT_MESSAGE(s, r.ok());
    return *r;
}

Hash32 Hash(const std::string& s) {
    const Bytes b = Hex(s);
    CPPUNIT_ASSERT_EQUAL(std::size_t{32}, b.size());
    Hash32 h;
    std::copy(b.begin(), b.end(), h.begin());
    return h;
}

PrivateKey Key(const std::string& hex) {
    auto k = PrivateKey::FromBytes(Hex(hex));
    CPPUNIT_ASSERT_MESSAGE(hex, k.ok());
    return std::move(k).value();
}

// Flip s to n - s (and the recovery id), producing the malleated high-s twin.
Signature65 HighSTwin(const Signature65& sig) {
    const Bytes n = Hex(ORDER_HEX);
    Signature65 out = sig;
    int borrow = 0;
    for (int i = 31; i >= 0; --i) {
        int d = n[i] - sig[32 + i] - borrow;
        borrow = d < 0 ? 1 : 0;
        out[32 + i] = static_cast<std::uint8_t>(d + (borrow ? 256 : 0));
    }
    out[64] = static_cast<std::uint8_t>(sig[64] ^ 1);
    return out;
}

}  // namespace

class Secp256k1Tests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(Secp256k1Tests);
    CPPUNIT_TEST(testEip55Vectors);
    CPPUNIT_TEST(testRefusesBadAddresses);
    CPPUNIT_TEST(testMixedCaseWithoutChecksumWhenAllowed);
    CPPUNIT_TEST(testKnownKeysToAddresses);
    CPPUNIT_TEST(testRefusesInvalidPrivateKeys);
    CPPUNIT_TEST(testPublicKeyParsing);
    CPPUNIT_TEST(testRefusesInvalidPublicKeys);
    CPPUNIT_TEST(testDigestSignatureVector);
    CPPUNIT_TEST(testPersonalMessageVectors);
    CPPUNIT_TEST(testGeneratedKeysSignAndRecover);
    CPPUNIT_TEST(testRecoverAcceptsBothVForms);
    CPPUNIT_TEST(testRefusesBadV);
    CPPUNIT_TEST(testRefusesHighS);
    CPPUNIT_TEST(testRefusesGarbageSignatures);
    CPPUNIT_TEST_SUITE_END();

public:
    void testEip55Vectors() {
        const auto rows = VectorLines("addr");
        CPPUNIT_ASSERT(rows.size() >= 8);
        for (const auto& row : rows) {
            auto a = ParseAddress(row[1]);
            CPPUNIT_ASSERT_MESSAGE(row[1], a.ok());
            CPPUNIT_ASSERT_EQUAL(row[2], ChecksumAddress(*a));
            CPPUNIT_ASSERT(ParseAddress(row[2]).ok());
        }
    }

    void testRefusesBadAddresses() {
        const std::vector<std::string> bad = {
            "",
            "0x",
            "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",    // no prefix
            "0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",  // upper-case prefix
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe",   // 39 hex
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd", // 41 hex
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg",  // non-hex
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD",  // last letter case flipped: bad checksum
            "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",  // second letter case flipped
            " 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe",
        };
        for (const auto& s : bad) {
            auto r = ParseAddress(s);
            CPPUNIT_ASSERT_MESSAGE(s, !r.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_address"), r.error().code);
            CPPUNIT_ASSERT(r.error().kind == ErrorKind::InvalidInput);
        }
    }

    void testMixedCaseWithoutChecksumWhenAllowed() {
        const std::string bad_sum = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD";
        CPPUNIT_ASSERT(!ParseAddress(bad_sum).ok());
        auto lax = ParseAddress(bad_sum, false);
        CPPUNIT_ASSERT(lax.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"), ChecksumAddress(*lax));
    }

    void testKnownKeysToAddresses() {
        const auto rows = VectorLines("key");
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, rows.size());
        for (const auto& row : rows) {
            const PrivateKey key = Key(row[1]);
            CPPUNIT_ASSERT_EQUAL(row[2], ChecksumAddress(key.Address()));
            const PublicKey pub = key.PublicKey();
            CPPUNIT_ASSERT_EQUAL(row[3], HexEncode(pub.Uncompressed(), true));
            CPPUNIT_ASSERT_EQUAL(row[4], HexEncode(pub.Compressed(), true));
            CPPUNIT_ASSERT(AddressFromPublicKey(pub) == key.Address());
            CPPUNIT_ASSERT_EQUAL(row[1], HexEncode(key.Secret().view(), true));
        }
    }

    void testRefusesInvalidPrivateKeys() {
        const Bytes n = Hex(ORDER_HEX);
        Bytes n_minus_1 = n, n_plus_1 = n;
        n_minus_1[31] -= 1;
        n_plus_1[31] += 1;
        const std::vector<Bytes> bad = {
            Bytes(32, 0x00),  // zero
            n,                // n
            n_plus_1,         // n + 1
            Bytes(32, 0xff),  // 2^256 - 1
            Bytes{},          // empty
            Bytes(31, 0x01),  // short
            Bytes(33, 0x01),  // long
        };
        for (const auto& b : bad) {
            auto k = PrivateKey::FromBytes(b);
            CPPUNIT_ASSERT_MESSAGE(HexEncode(b), !k.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_private_key"), k.error().code);
        }
        Bytes one(32, 0);
        one[31] = 1;
        CPPUNIT_ASSERT(PrivateKey::FromBytes(one).ok());
        CPPUNIT_ASSERT(PrivateKey::FromBytes(n_minus_1).ok());
        // Private key 1 has public key G.
        CPPUNIT_ASSERT_EQUAL(std::string("0x0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"),
                             HexEncode(PrivateKey::FromBytes(one)->PublicKey().Compressed(), true));
    }

    void testPublicKeyParsing() {
        for (const auto& row : VectorLines("key")) {
            auto from_full = PublicKey::Parse(Hex(row[3]));
            auto from_compressed = PublicKey::Parse(Hex(row[4]));
            CPPUNIT_ASSERT(from_full.ok() && from_compressed.ok());
            CPPUNIT_ASSERT(*from_full == *from_compressed);
            CPPUNIT_ASSERT_EQUAL(row[2], ChecksumAddress(from_compressed->Address()));
        }
    }

    void testRefusesInvalidPublicKeys() {
        const Bytes good = Hex(VectorLines("key")[0][3]);
        Bytes off_curve = good;
        off_curve[64] ^= 0x01;
        Bytes hybrid = good;
        hybrid[0] = 0x06;
        Bytes bad_prefix = Hex(VectorLines("key")[0][4]);
        bad_prefix[0] = 0x04;
        Bytes x_too_big(33, 0xff);
        x_too_big[0] = 0x02;
        const std::vector<Bytes> bad = {Bytes{}, Bytes(64, 0x01), Bytes(good.begin() + 1, good.end()),
                                        off_curve, hybrid, bad_prefix, x_too_big, Bytes(65, 0x00)};
        for (const auto& b : bad) {
            auto p = PublicKey::Parse(b);
            CPPUNIT_ASSERT_MESSAGE(HexEncode(b), !p.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_public_key"), p.error().code);
        }
    }

    void testDigestSignatureVector() {
        const auto rows = VectorLines("digest");
        CPPUNIT_ASSERT(!rows.empty());
        for (const auto& row : rows) {
            const PrivateKey key = Key(row[1]);
            const Hash32 digest = Hash(row[2]);
            const Signature65 sig = SignDigest(key, digest);
            CPPUNIT_ASSERT_EQUAL(row[3], HexEncode(sig, true));
            auto addr = RecoverAddress(digest, sig);
            CPPUNIT_ASSERT(addr.ok());
            CPPUNIT_ASSERT(*addr == key.Address());
        }
    }

    void testPersonalMessageVectors() {
        const auto rows = VectorLines("personal");
        CPPUNIT_ASSERT(rows.size() >= 4);
        for (const auto& row : rows) {
            const PrivateKey key = Key(row[1]);
            const Bytes message = Hex(row[2].substr(4));
            const Hash32 h = PersonalMessageHash(message);
            CPPUNIT_ASSERT_EQUAL(row[3], HexEncode(h, true));
            const Signature65 sig = SignPersonalMessage(key, message);
            CPPUNIT_ASSERT_EQUAL(row[4], HexEncode(sig, true));
            CPPUNIT_ASSERT(sig[64] == 27 || sig[64] == 28);
            auto addr = RecoverAddress(h, Hex(row[4]));
            CPPUNIT_ASSERT(addr.ok());
            CPPUNIT_ASSERT(*addr == key.Address());
        }
        CPPUNIT_ASSERT(PersonalMessageHash(std::string_view("Some data")) == Hash(rows[0][3]));
    }

    void testGeneratedKeysSignAndRecover() {
        bool seen_v[2] = {false, false};
        for (int i = 0; i < 32; ++i) {
            const PrivateKey key = PrivateKey::Generate();
            CPPUNIT_ASSERT_EQUAL(std::size_t{32}, key.Secret().size());
            const Hash32 digest = Keccak256Hash(std::to_string(i));
            const Signature65 sig = SignDigest(key, digest);
            CPPUNIT_ASSERT(sig[64] <= 1);
            seen_v[sig[64]] = true;
            // Low s: the top bit of s is never set (n/2 < 2^255).
            CPPUNIT_ASSERT((sig[32] & 0x80) == 0);
            auto pub = RecoverPublicKey(digest, sig);
            CPPUNIT_ASSERT(pub.ok());
            CPPUNIT_ASSERT(*pub == key.PublicKey());
            // A different digest recovers someone else (or fails), never this key.
            Hash32 other = digest;
            other[0] ^= 1;
            auto wrong = RecoverAddress(other, sig);
            CPPUNIT_ASSERT(!wrong.ok() || *wrong != key.Address());
        }
        CPPUNIT_ASSERT(seen_v[0] && seen_v[1]);
        CPPUNIT_ASSERT(PrivateKey::Generate().Address() != PrivateKey::Generate().Address());
    }

    void testRecoverAcceptsBothVForms() {
        const PrivateKey key = Key(VectorLines("digest")[0][1]);
        const Hash32 digest = Keccak256Hash(std::string_view("v forms"));
        Signature65 sig = SignDigest(key, digest);
        const std::uint8_t recid = sig[64];
        sig[64] = static_cast<std::uint8_t>(recid + 27);
        auto a = RecoverAddress(digest, sig);
        CPPUNIT_ASSERT(a.ok() && *a == key.Address());
        // The other recovery id gives a different (valid or invalid) key, never the signer.
        sig[64] = static_cast<std::uint8_t>((recid ^ 1) + 27);
        auto b = RecoverAddress(digest, sig);
        CPPUNIT_ASSERT(!b.ok() || *b != key.Address());
    }

    void testRefusesBadV() {
        const auto row = VectorLines("digest")[0];
        Bytes sig = Hex(row[3]);
        for (int v : {2, 3, 26, 29, 35, 36, 37, 255}) {
            sig[64] = static_cast<std::uint8_t>(v);
            auto r = RecoverPublicKey(Hash(row[2]), sig);
            CPPUNIT_ASSERT_MESSAGE(std::to_string(v), !r.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("invalid_signature"), r.error().code);
        }
    }

    void testRefusesHighS() {
        const auto row = VectorLines("digest")[0];
        const Hash32 digest = Hash(row[2]);
        Signature65 sig{};
        const Bytes low = Hex(row[3]);
        std::copy(low.begin(), low.end(), sig.begin());
        CPPUNIT_ASSERT(RecoverPublicKey(digest, sig).ok());
        const Signature65 twin = HighSTwin(sig);
        auto r = RecoverPublicKey(digest, twin);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_signature"), r.error().code);
    }

    void testRefusesGarbageSignatures() {
        const auto row = VectorLines("digest")[0];
        const Hash32 digest = Hash(row[2]);
        const Bytes good = Hex(row[3]);
        const Bytes n = Hex(ORDER_HEX);

        std::vector<Bytes> bad = {Bytes{}, Bytes(64, 0x01), Bytes(66, 0x01), Bytes(65, 0x00)};
        Bytes r_zero = good;
        std::fill(r_zero.begin(), r_zero.begin() + 32, 0);
        bad.push_back(r_zero);
        Bytes s_zero = good;
        std::fill(s_zero.begin() + 32, s_zero.begin() + 64, 0);
        bad.push_back(s_zero);
        Bytes r_is_n = good;
        std::copy(n.begin(), n.end(), r_is_n.begin());
        bad.push_back(r_is_n);
        Bytes r_max = good;
        std::fill(r_max.begin(), r_max.begin() + 32, 0xff);
        bad.push_back(r_max);
        Bytes s_max = good;
        std::fill(s_max.begin() + 32, s_max.begin() + 64, 0xff);
        bad.push_back(s_max);
        for (const auto& b : bad) {
            auto r = RecoverPublicKey(digest, b);
            CPPUNIT_ASSERT_MESSAGE(HexEncode(b), !r.ok());
            CPPUNIT_ASSERT(r.error().code == "invalid_signature" || r.error().code == "signature_recovery_failed");
        }

        // r that is not the x coordinate of any curve point: recovery itself must fail cleanly.
        // x = 5 has no y on secp256k1 (5^3 + 7 = 132 is a non-residue mod p).
        Bytes no_point = good;
        std::fill(no_point.begin(), no_point.begin() + 32, 0);
        no_point[31] = 5;
        auto r = RecoverPublicKey(digest, no_point);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("signature_recovery_failed"), r.error().code);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(Secp256k1Tests);
