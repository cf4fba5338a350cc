#include <cppunit/extensions/HelperMacros.h>

#include <sstream>
#include <string>

#include "common/aes_gcm.h"
#include "common/hex.h"
#include "common/random.h"
#include "tests/test_support.h"

using namespace sigil::common;

class AesGcmTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(AesGcmTests);
    CPPUNIT_TEST(testMcGrewViegaVectors);
    CPPUNIT_TEST(testHexRoundTrip);
    CPPUNIT_TEST(testHexFormat);
    CPPUNIT_TEST(testFreshNonceEachTime);
    CPPUNIT_TEST(testDecryptRefusesTampering);
    CPPUNIT_TEST(testDecryptRefusesMalformedHex);
    CPPUNIT_TEST(testDecryptRefusesWrongKey);
    CPPUNIT_TEST(testRejectsBadKeyAndNonceSizes);
    CPPUNIT_TEST(testOpenChecksAad);
    CPPUNIT_TEST_SUITE_END();

    static Bytes Field(const std::string& s) { return s == "-" ? Bytes{} : *HexDecode(s); }
    static SecretBytes Key(std::uint8_t fill = 0x42) { return SecretBytes(Bytes(AES_GCM_KEY_SIZE, fill)); }

    static void AssertDecryptFailed(const Result<SecretBytes>& r) {
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("decrypt_failed"), r.error().code);
        CPPUNIT_ASSERT(r.error().kind == ErrorKind::InvalidInput);
    }

public:
    void testMcGrewViegaVectors() {
        const int checked = sigil::test::ForEachVectorLine("aes_gcm_mcgrew_viega.txt", [&](const std::string& line) {
            std::istringstream fields(line);
            std::string name, key, iv, aad, pt, ct, tag;
            fields >> name >> key >> iv >> aad >> pt >> ct >> tag;
            const SecretBytes k(Field(key));
            const Bytes nonce = Field(iv), a = Field(aad), p = Field(pt);
            auto sealed = AesGcmSeal(k, nonce, a, p);
            CPPUNIT_ASSERT_MESSAGE(name, sealed.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE("case " + name, (ct == "-" ? "" : ct) + tag, HexEncode(*sealed));
            auto opened = AesGcmOpen(k, nonce, a, *sealed);
            CPPUNIT_ASSERT_MESSAGE(name, opened.ok());
            CPPUNIT_ASSERT_MESSAGE(name, ConstantTimeEqual(opened->view(), p));
            // The same vector through the hex format: nonce || ciphertext || tag.
            if (a.empty()) {
                auto from_hex = DecryptFromHex(k, iv + (ct == "-" ? "" : ct) + tag);
                CPPUNIT_ASSERT_MESSAGE(name, from_hex.ok());
                CPPUNIT_ASSERT(ConstantTimeEqual(from_hex->view(), p));
            }
        });
        CPPUNIT_ASSERT_EQUAL(4, checked);
    }

    void testHexRoundTrip() {
        const SecretBytes key = Key();
        for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 1000u}) {
            const Bytes plain(n, static_cast<std::uint8_t>(n));
            auto hex = EncryptToHex(key, plain);
            CPPUNIT_ASSERT(hex.ok());
            auto back = DecryptFromHex(key, *hex);
            CPPUNIT_ASSERT(back.ok());
            CPPUNIT_ASSERT(ConstantTimeEqual(back->view(), plain));
        }
    }

    void testHexFormat() {
        const SecretBytes key = Key();
        auto hex = EncryptToHex(key, ToBytes("hello"));
        CPPUNIT_ASSERT(hex.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{2 * (12 + 5 + 16)}, hex->size());
        CPPUNIT_ASSERT(hex->find_first_not_of("0123456789abcdef") == std::string::npos);
        // Interpreted as nonce || ciphertext || tag, it opens with the low-level API.
        const Bytes raw = *HexDecode(*hex);
        auto opened = AesGcmOpen(key, ByteView(raw).first(12), {}, ByteView(raw).subspan(12));
        CPPUNIT_ASSERT(opened.ok());
        CPPUNIT_ASSERT(ConstantTimeEqual(opened->view(), ToBytes("hello")));
        // Uppercase and a 0x prefix are tolerated on input.
        std::string upper = *hex;
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        CPPUNIT_ASSERT(DecryptFromHex(key, upper).ok());
        CPPUNIT_ASSERT(DecryptFromHex(key, "0x" + *hex).ok());
    }

    void testFreshNonceEachTime() {
        const SecretBytes key = Key();
        const std::string a = *EncryptToHex(key, ToBytes("same"));
        const std::string b = *EncryptToHex(key, ToBytes("same"));
        CPPUNIT_ASSERT(a.substr(0, 24) != b.substr(0, 24));
        CPPUNIT_ASSERT(a != b);
    }

    void testDecryptRefusesTampering() {
        const SecretBytes key = Key();
        const std::string hex = *EncryptToHex(key, ToBytes("attack at dawn"));
        // Flip one bit in each position class: nonce, ciphertext, tag.
        for (std::size_t pos : {std::size_t{0}, std::size_t{23}, std::size_t{24}, std::size_t{30}, hex.size() - 1}) {
            std::string t = hex;
            t[pos] = t[pos] == '0' ? '1' : '0';
            AssertDecryptFailed(DecryptFromHex(key, t));
        }
        // Truncated tag, appended byte, dropped ciphertext byte.
        AssertDecryptFailed(DecryptFromHex(key, hex.substr(0, hex.size() - 2)));
        AssertDecryptFailed(DecryptFromHex(key, hex + "00"));
        AssertDecryptFailed(DecryptFromHex(key, hex.substr(0, 24) + hex.substr(26)));
    }

    void testDecryptRefusesMalformedHex() {
        const SecretBytes key = Key();
        const std::string hex = *EncryptToHex(key, ToBytes("x"));
        AssertDecryptFailed(DecryptFromHex(key, ""));
        AssertDecryptFailed(DecryptFromHex(key, "zz"));
        AssertDecryptFailed(DecryptFromHex(key, hex.substr(1)));             // odd length
        AssertDecryptFailed(DecryptFromHex(key, hex.substr(0, 10) + "g" + hex.substr(11)));
        AssertDecryptFailed(DecryptFromHex(key, std::string(55, '0')));
        AssertDecryptFailed(DecryptFromHex(key, std::string(54, '0')));      // 27 bytes: too short
        AssertDecryptFailed(DecryptFromHex(key, std::string(56, '0')));      // nonce+tag, bad tag
        AssertDecryptFailed(DecryptFromHex(key, " " + hex));
        // Every failure says the same thing.
        CPPUNIT_ASSERT_EQUAL(DecryptFromHex(key, "zz").error().message,
                             DecryptFromHex(key, std::string(56, '0')).error().message);
    }

    void testDecryptRefusesWrongKey() {
        const std::string hex = *EncryptToHex(Key(1), ToBytes("secret"));
        AssertDecryptFailed(DecryptFromHex(Key(2), hex));
    }

    void testRejectsBadKeyAndNonceSizes() {
        const SecretBytes short_key(Bytes(16, 1));
        auto e = EncryptToHex(short_key, ToBytes("x"));
        CPPUNIT_ASSERT(!e.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_key"), e.error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_key"), DecryptFromHex(SecretBytes(), std::string(60, '0')).error().code);
        const SecretBytes key = Key();
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_nonce"), AesGcmSeal(key, Bytes(8, 0), {}, {}).error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_nonce"), AesGcmOpen(key, Bytes(16, 0), {}, Bytes(16, 0)).error().code);
        AssertDecryptFailed(AesGcmOpen(key, Bytes(12, 0), {}, Bytes(15, 0)));
    }

    void testOpenChecksAad() {
        const SecretBytes key = Key();
        const Bytes nonce = RandomBytes(AES_GCM_NONCE_SIZE);
        auto sealed = AesGcmSeal(key, nonce, ToBytes("header"), ToBytes("body"));
        CPPUNIT_ASSERT(sealed.ok());
        CPPUNIT_ASSERT(AesGcmOpen(key, nonce, ToBytes("header"), *sealed).ok());
        AssertDecryptFailed(AesGcmOpen(key, nonce, ToBytes("headex"), *sealed));
        AssertDecryptFailed(AesGcmOpen(key, nonce, {}, *sealed));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(AesGcmTests);
