#include <cppunit/extensions/HelperMacros.h>

#include <set>
#include <sstream>
#include <string>

#include "common/hex.h"
#include "common/hkdf.h"
#include "common/key_derivation.h"
#include "tests/test_support.h"

using namespace sigil::common;

namespace {

Hash32 H(std::uint8_t fill) {
    Hash32 h;
    h.fill(fill);
    return h;
}

Hash32 HashFromHex(const std::string& hex) {
    const Bytes b = *HexDecodeExact(hex, 32);
    Hash32 h;
    std::copy(b.begin(), b.end(), h.begin());
    return h;
}

std::string Hex(const Result<SecretBytes>& r) {
    CPPUNIT_ASSERT(r.ok());
    return HexEncode(r->view());
}

// Acceptance test that refuses the first two candidates, to drive the counter rule.
int g_refusals_left = 0;
bool RefuseTwice(ByteView) { return g_refusals_left-- <= 0; }
bool RefuseAll(ByteView) { return false; }

}  // namespace

class KeyDerivationTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(KeyDerivationTests);
    CPPUNIT_TEST(testFrozenKnownAnswers);
    CPPUNIT_TEST(testDeterministic);
    CPPUNIT_TEST(testDistinctInputsGiveDistinctKeys);
    CPPUNIT_TEST(testSigningKeysAreValidScalars);
    CPPUNIT_TEST(testScalarRange);
    CPPUNIT_TEST(testCounterRule);
    CPPUNIT_TEST(testRejectsBadRoot);
    CPPUNIT_TEST_SUITE_END();

    SecretBytes m_root;

public:
    void setUp() override {
        Bytes r(32);
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::uint8_t>(i);
        m_root = SecretBytes(r);
    }

    void testFrozenKnownAnswers() {
        const int checked = sigil::test::ForEachVectorLine("hkdf_key_derivation.txt", [&](const std::string& line) {
            std::istringstream f(line);
            std::string kind, a, b, expected;
            f >> kind;
            if (kind == "root") {
                f >> a;
                CPPUNIT_ASSERT_EQUAL(HexEncode(m_root.view()), a);
                return;
            }
            std::string got;
            if (kind == "sign") {
                f >> a >> b >> expected;
                got = Hex(DerivePkpSigningKey(m_root, HashFromHex(a), HashFromHex(b)));
            } else if (kind == "encrypt") {
                f >> a >> b >> expected;
                got = Hex(DerivePkpEncryptionKey(m_root, HashFromHex(a), HashFromHex(b)));
            } else if (kind == "action") {
                f >> a >> expected;
                got = Hex(DeriveActionKey(m_root, a));
            } else if (kind == "payer") {
                f >> a >> expected;
                got = Hex(DerivePayerKey(m_root, static_cast<std::uint32_t>(std::stoul(a))));
            } else if (kind == "admin-payer") {
                f >> expected;
                got = Hex(DeriveAdminPayerKey(m_root));
            } else if (kind == "sign-third-attempt") {
                f >> a >> b >> expected;
                const Hash32 acct = HashFromHex(a), path = HashFromHex(b);
                Bytes info = ToBytes("sign");
                info.insert(info.end(), acct.begin(), acct.end());
                info.insert(info.end(), path.begin(), path.end());
                g_refusals_left = 2;
                got = Hex(detail::DeriveReduced(m_root, info, &RefuseTwice));
            } else {
                CPPUNIT_FAIL("unknown line kind " + kind);
            }
            CPPUNIT_ASSERT_EQUAL_MESSAGE(line.substr(0, 40), expected, got);
        });
        CPPUNIT_ASSERT_EQUAL(12, checked);  // the root line and 11 derivations
    }

    void testDeterministic() {
        CPPUNIT_ASSERT_EQUAL(Hex(DerivePkpSigningKey(m_root, H(1), H(2))), Hex(DerivePkpSigningKey(m_root, H(1), H(2))));
        CPPUNIT_ASSERT_EQUAL(Hex(DerivePkpEncryptionKey(m_root, H(1), H(2))),
                             Hex(DerivePkpEncryptionKey(m_root, H(1), H(2))));
        CPPUNIT_ASSERT_EQUAL(Hex(DeriveActionKey(m_root, "QmX")), Hex(DeriveActionKey(m_root, "QmX")));
        CPPUNIT_ASSERT_EQUAL(Hex(DerivePayerKey(m_root, 7)), Hex(DerivePayerKey(m_root, 7)));
        CPPUNIT_ASSERT_EQUAL(Hex(DeriveAdminPayerKey(m_root)), Hex(DeriveAdminPayerKey(m_root)));
    }

    void testDistinctInputsGiveDistinctKeys() {
        std::set<std::string> keys;
        auto add = [&](const Result<SecretBytes>& r) { CPPUNIT_ASSERT(keys.insert(Hex(r)).second); };
        add(DerivePkpSigningKey(m_root, H(1), H(2)));
        add(DerivePkpSigningKey(m_root, H(3), H(2)));   // another account, same path
        add(DerivePkpSigningKey(m_root, H(1), H(4)));   // another path
        add(DerivePkpSigningKey(m_root, H(2), H(1)));   // fields swapped
        add(DerivePkpEncryptionKey(m_root, H(1), H(2)));  // another purpose
        add(DerivePkpEncryptionKey(m_root, H(3), H(2)));
        add(DeriveActionKey(m_root, "QmA"));
        add(DeriveActionKey(m_root, "QmB"));
        add(DerivePayerKey(m_root, 0));
        add(DerivePayerKey(m_root, 1));
        add(DerivePayerKey(m_root, 0x01000000));  // byte order matters
        add(DeriveAdminPayerKey(m_root));
        SecretBytes other_root(Bytes(32, 0x99));
        add(DerivePkpSigningKey(other_root, H(1), H(2)));
        add(DeriveAdminPayerKey(other_root));
    }

    void testSigningKeysAreValidScalars() {
        for (std::uint8_t i = 0; i < 50; ++i) {
            CPPUNIT_ASSERT(IsValidSecp256k1Scalar(DerivePkpSigningKey(m_root, H(i), H(i + 1))->view()));
            CPPUNIT_ASSERT(IsValidSecp256k1Scalar(DerivePayerKey(m_root, i)->view()));
        }
        CPPUNIT_ASSERT(IsValidSecp256k1Scalar(DeriveActionKey(m_root, "QmA")->view()));
        CPPUNIT_ASSERT(IsValidSecp256k1Scalar(DeriveAdminPayerKey(m_root)->view()));
    }

    void testScalarRange() {
        const std::string n = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";
        const std::string n_minus_1 = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140";
        const std::string n_plus_1 = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364142";
        CPPUNIT_ASSERT(!IsValidSecp256k1Scalar(Bytes(32, 0)));
        CPPUNIT_ASSERT(!IsValidSecp256k1Scalar(*HexDecode(n)));
        CPPUNIT_ASSERT(!IsValidSecp256k1Scalar(*HexDecode(n_plus_1)));
        CPPUNIT_ASSERT(!IsValidSecp256k1Scalar(Bytes(32, 0xff)));
        CPPUNIT_ASSERT(IsValidSecp256k1Scalar(*HexDecode(n_minus_1)));
        Bytes one(32, 0);
        one[31] = 1;
        CPPUNIT_ASSERT(IsValidSecp256k1Scalar(one));
        CPPUNIT_ASSERT(!IsValidSecp256k1Scalar(Bytes(31, 1)));
        CPPUNIT_ASSERT(!IsValidSecp256k1Scalar(Bytes(33, 1)));
    }

    void testCounterRule() {
        const Bytes info = ToBytes("admin-payer");
        auto hkdf = [&](const Bytes& i) { return Hex(HkdfSha256(m_root.view(), AsBytes(KEY_DERIVATION_SALT), i, 32)); };
        // Attempt 0 uses info unchanged...
        CPPUNIT_ASSERT_EQUAL(hkdf(info), Hex(DeriveAdminPayerKey(m_root)));
        // ...attempt 1 appends 0x00, attempt 2 appends 0x01 (not 0x00 0x01).
        Bytes info0 = info, info1 = info;
        info0.push_back(0);
        info1.push_back(1);
        g_refusals_left = 1;
        CPPUNIT_ASSERT_EQUAL(hkdf(info0), Hex(detail::DeriveReduced(m_root, info, &RefuseTwice)));
        g_refusals_left = 2;
        CPPUNIT_ASSERT_EQUAL(hkdf(info1), Hex(detail::DeriveReduced(m_root, info, &RefuseTwice)));
        // Exhausting every attempt is an error, not a weak key.
        auto none = detail::DeriveReduced(m_root, info, &RefuseAll);
        CPPUNIT_ASSERT(!none.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("key_derivation_failed"), none.error().code);
    }

    void testRejectsBadRoot() {
        for (std::size_t n : {0u, 16u, 31u, 33u, 64u}) {
            const SecretBytes root(Bytes(n, 1));
            std::vector<Result<SecretBytes>> results;
            results.push_back(DerivePkpSigningKey(root, H(1), H(2)));
            results.push_back(DerivePkpEncryptionKey(root, H(1), H(2)));
            results.push_back(DeriveActionKey(root, "QmA"));
            results.push_back(DerivePayerKey(root, 0));
            results.push_back(DeriveAdminPayerKey(root));
            for (const auto& r : results) {
                CPPUNIT_ASSERT(!r.ok());
                CPPUNIT_ASSERT_EQUAL(std::string("invalid_root_key"), r.error().code);
            }
        }
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(KeyDerivationTests);
