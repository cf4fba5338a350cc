#include <cppunit/extensions/HelperMacros.h>

#include <string>

#include "common/utf8.h"

using namespace sigil::common;

class Utf8Tests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(Utf8Tests);
    CPPUNIT_TEST(testAcceptsWellFormedText);
    CPPUNIT_TEST(testRefusesWhatRfc3629Forbids);
    CPPUNIT_TEST(testReplacesEachBadByteOnce);
    CPPUNIT_TEST_SUITE_END();

public:
    void testAcceptsWellFormedText() {
        for (const std::string& s : {std::string(), std::string("plain"), std::string("\xC3\xA9t\xC3\xA9"),
                                    std::string("\xE2\x82\xAC"), std::string("\xF0\x9F\x94\x91"),
                                    std::string("\xEF\xBF\xBF"), std::string("\xF4\x8F\xBF\xBF"),
                                    std::string("a\0b", 3)}) {
            CPPUNIT_ASSERT_MESSAGE(s, IsUtf8(s));
            CPPUNIT_ASSERT_EQUAL(s, ReplaceInvalidUtf8(s));
        }
    }

    // The malformed forms of Markus Kuhn's UTF-8 decoder stress test, one of each kind.
    void testRefusesWhatRfc3629Forbids() {
        for (const char* s : {"\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xE0\x9F\xBF",
                              "\xF0\x80\x80\xAF", "\xF0\x8F\xBF\xBF", "\xED\xA0\x80", "\xED\xBF\xBF",
                              "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xF8\x88\x80\x80\x80", "\xFE", "\xFF",
                              "\xC3", "\xE2\x82", "\xF0\x9F\x94", "\xC3\x28", "\xE2\x28\xA1"}) {
            CPPUNIT_ASSERT_MESSAGE(s, !IsUtf8(s));
            CPPUNIT_ASSERT_MESSAGE(s, IsUtf8(ReplaceInvalidUtf8(s)));
        }
    }

    void testReplacesEachBadByteOnce() {
        const std::string fffd = "\xEF\xBF\xBD";
        CPPUNIT_ASSERT_EQUAL("a" + fffd + "b", ReplaceInvalidUtf8("a\xFF" "b"));
        CPPUNIT_ASSERT_EQUAL(fffd + fffd, ReplaceInvalidUtf8("\xC0\xAF"));
        CPPUNIT_ASSERT_EQUAL(fffd + "(", ReplaceInvalidUtf8("\xC3("));
        CPPUNIT_ASSERT_EQUAL("\xC3\xA9" + fffd + fffd, ReplaceInvalidUtf8("\xC3\xA9\xE2\x82"));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(Utf8Tests);
