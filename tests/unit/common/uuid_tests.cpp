#include <cppunit/extensions/HelperMacros.h>

#include <set>
#include <string>

#include "common/uuid.h"

using namespace sigil::common;

class UuidTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(UuidTests);
    CPPUNIT_TEST(testFormatVersionAndVariant);
    CPPUNIT_TEST(testUniqueAndRandomBitsVary);
    CPPUNIT_TEST(testValidatorAcceptsCanonicalForm);
    CPPUNIT_TEST(testValidatorRejectsMalformed);
    CPPUNIT_TEST_SUITE_END();

public:
    void testFormatVersionAndVariant() {
        for (int i = 0; i < 200; ++i) {
            const std::string id = NewUuidV4();
            CPPUNIT_ASSERT_EQUAL(std::size_t{36}, id.size());
            CPPUNIT_ASSERT_MESSAGE(id, IsUuid(id));
            CPPUNIT_ASSERT_EQUAL('4', id[14]);
            const char variant = id[19];
            CPPUNIT_ASSERT_MESSAGE(id, variant == '8' || variant == '9' || variant == 'a' || variant == 'b');
        }
    }

    void testUniqueAndRandomBitsVary() {
        std::set<std::string> seen;
        std::set<char> variants;
        for (int i = 0; i < 1000; ++i) {
            const std::string id = NewUuidV4();
            CPPUNIT_ASSERT(seen.insert(id).second);
            variants.insert(id[19]);
        }
        // All four variant-compatible digits appear, so the two random bits there are used.
        CPPUNIT_ASSERT_EQUAL(std::size_t{4}, variants.size());
    }

    void testValidatorAcceptsCanonicalForm() {
        CPPUNIT_ASSERT(IsUuid("123e4567-e89b-12d3-a456-426614174000"));  // RFC 4122's example, v1
        CPPUNIT_ASSERT(IsUuid("00000000-0000-0000-0000-000000000000"));
        CPPUNIT_ASSERT(IsUuid("f47ac10b-58cc-4372-a567-0e02b2c3d479"));
    }

    void testValidatorRejectsMalformed() {
        CPPUNIT_ASSERT(!IsUuid(""));
        CPPUNIT_ASSERT(!IsUuid("F47AC10B-58CC-4372-A567-0E02B2C3D479"));   // uppercase
        CPPUNIT_ASSERT(!IsUuid("f47ac10b58cc4372a5670e02b2c3d479"));       // no hyphens
        CPPUNIT_ASSERT(!IsUuid("{f47ac10b-58cc-4372-a567-0e02b2c3d479}"));
        CPPUNIT_ASSERT(!IsUuid("f47ac10b-58cc-4372-a567-0e02b2c3d47"));    // short
        CPPUNIT_ASSERT(!IsUuid("f47ac10b-58cc-4372-a567-0e02b2c3d4799"));  // long
        CPPUNIT_ASSERT(!IsUuid("f47ac10b-58cc-4372-a567-0e02b2c3d47g"));
        CPPUNIT_ASSERT(!IsUuid("f47ac10b-58cc4-372-a567-0e02b2c3d479"));   // hyphen moved
        CPPUNIT_ASSERT(!IsUuid("f47ac10b-58cc-4372-a567-0e02b2c3d47 "));
        CPPUNIT_ASSERT(!IsUuid(std::string_view("f47ac10b-58cc-4372-a567-0e02b2c3d47\0", 36)));
        CPPUNIT_ASSERT(!IsUuid("f47ac10b-58cc-4372-a567-0e02b2c3d479\n"));
        CPPUNIT_ASSERT(!IsUuid("urn:uuid:f47ac10b-58cc-4372-a567-0e02b2c3d479"));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(UuidTests);
