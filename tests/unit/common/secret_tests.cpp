#include <cppunit/extensions/HelperMacros.h>

#include <utility>

#include "common/bytes.h"
#include "common/secret.h"

using namespace sigil::common;

class SecretTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SecretTests);
    CPPUNIT_TEST(testConstructionZeroesAndCopies);
    CPPUNIT_TEST(testMoveConstructLeavesSourceEmpty);
    CPPUNIT_TEST(testMoveAssignReplacesAndEmptiesSource);
    CPPUNIT_TEST(testSelfMoveAssignKeepsContents);
    CPPUNIT_TEST(testCloneIsIndependent);
    CPPUNIT_TEST(testWipeZeroes);
    CPPUNIT_TEST(testConstantTimeEqual);
    CPPUNIT_TEST_SUITE_END();

    static Bytes Pattern(std::size_t n) {
        Bytes b(n);
        for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i + 1);
        return b;
    }

public:
    void testConstructionZeroesAndCopies() {
        SecretBytes zero(32);
        CPPUNIT_ASSERT_EQUAL(std::size_t{32}, zero.size());
        CPPUNIT_ASSERT(ConstantTimeEqual(zero.view(), Bytes(32, 0)));
        const Bytes p = Pattern(20);
        SecretBytes copy(p);
        CPPUNIT_ASSERT(ConstantTimeEqual(copy.view(), p));
        CPPUNIT_ASSERT(copy.data() != p.data());
        SecretBytes none;
        CPPUNIT_ASSERT(none.empty());
        CPPUNIT_ASSERT(SecretBytes(std::size_t{0}).empty());
    }

    void testMoveConstructLeavesSourceEmpty() {
        SecretBytes a(Pattern(32));
        const std::uint8_t* storage = a.data();
        SecretBytes b(std::move(a));
        // The storage changes hands; the source keeps no pointer to (or copy of) the secret.
        CPPUNIT_ASSERT(b.data() == storage);
        CPPUNIT_ASSERT(ConstantTimeEqual(b.view(), Pattern(32)));
        CPPUNIT_ASSERT(a.empty());                // NOLINT(bugprone-use-after-move)
        CPPUNIT_ASSERT(a.data() == nullptr);      // NOLINT(bugprone-use-after-move)
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, a.view().size());
    }

    void testMoveAssignReplacesAndEmptiesSource() {
        SecretBytes a(Pattern(16));
        SecretBytes b(Bytes(8, 0xee));
        b = std::move(a);
        CPPUNIT_ASSERT(ConstantTimeEqual(b.view(), Pattern(16)));
        CPPUNIT_ASSERT(a.empty());  // NOLINT(bugprone-use-after-move)
        // Assigning an empty secret over a full one releases (and wipes) the old contents.
        b = SecretBytes();
        CPPUNIT_ASSERT(b.empty());
        CPPUNIT_ASSERT(b.data() == nullptr);
    }

    void testSelfMoveAssignKeepsContents() {
        SecretBytes a(Pattern(12));
        SecretBytes& alias = a;
        a = std::move(alias);
        CPPUNIT_ASSERT(ConstantTimeEqual(a.view(), Pattern(12)));
    }

    void testCloneIsIndependent() {
        SecretBytes a(Pattern(32));
        SecretBytes c = a.Clone();
        CPPUNIT_ASSERT(c.data() != a.data());
        CPPUNIT_ASSERT(ConstantTimeEqual(c.view(), a.view()));
        c.data()[0] ^= 0xff;
        CPPUNIT_ASSERT(!ConstantTimeEqual(c.view(), a.view()));
        CPPUNIT_ASSERT(ConstantTimeEqual(a.view(), Pattern(32)));
        CPPUNIT_ASSERT(SecretBytes().Clone().empty());
    }

    void testWipeZeroes() {
        Bytes b = Pattern(64);
        Wipe(b.data(), b.size());
        CPPUNIT_ASSERT(b == Bytes(64, 0));
        Wipe(nullptr, 10);  // tolerated
        Wipe(b.data(), 0);
    }

    void testConstantTimeEqual() {
        const Bytes a = Pattern(32);
        Bytes b = a;
        CPPUNIT_ASSERT(ConstantTimeEqual(a, b));
        b[31] ^= 1;
        CPPUNIT_ASSERT(!ConstantTimeEqual(a, b));
        b = a;
        b[0] ^= 0x80;
        CPPUNIT_ASSERT(!ConstantTimeEqual(a, b));
        CPPUNIT_ASSERT(!ConstantTimeEqual(a, ByteView(a).first(31)));  // prefix, different length
        CPPUNIT_ASSERT(!ConstantTimeEqual(ByteView(a).first(31), a));
        CPPUNIT_ASSERT(ConstantTimeEqual(ByteView{}, ByteView{}));
        CPPUNIT_ASSERT(ConstantTimeEqual(Bytes{}, ByteView(a).first(0)));
        CPPUNIT_ASSERT(!ConstantTimeEqual(ByteView{}, a));
        CPPUNIT_ASSERT(!ConstantTimeEqual(a, ByteView{}));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(SecretTests);
