// A string response holding JSON is answered parsed (issue 28, DESIGN.md section 4); every other
// response is answered as the action gave it.
#include <cppunit/extensions/HelperMacros.h>

#include <string>

#include "workers/actions/string_response.h"

using namespace sigil::workers;

class StringResponseTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(StringResponseTests);
    CPPUNIT_TEST(testStringHoldingJsonIsParsed);
    CPPUNIT_TEST(testStringNotHoldingJsonStaysAString);
    CPPUNIT_TEST(testOtherValuesAreUntouched);
    CPPUNIT_TEST(testDeepNestingDoesNotCrash);
    CPPUNIT_TEST_SUITE_END();

public:
    void testStringHoldingJsonIsParsed() {
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"a":1,"b":[true,null]})"),
                             ParsedStringResponse(R"("{\"a\":1,\"b\":[true,null]}")"));
        CPPUNIT_ASSERT_EQUAL(std::string("42"), ParsedStringResponse(R"("42")"));
        CPPUNIT_ASSERT_EQUAL(std::string("true"), ParsedStringResponse(R"("true")"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"("quoted")"), ParsedStringResponse(R"("\"quoted\"")"));
        CPPUNIT_ASSERT_EQUAL(std::string("[1, 2]"), ParsedStringResponse(R"(" \n[1, 2]\t ")"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"t":"é"})"), ParsedStringResponse(R"("{\"t\":\"\u00e9\"}")"));
    }

    void testStringNotHoldingJsonStaysAString() {
        for (const std::string text : {R"("hello")", R"("")", R"("  ")", R"("{\"a\":1")", R"("[1,2] x")", R"("NaN")",
                                       R"("'single'")", R"("{a:1}")", R"("1 2")"}) {
            CPPUNIT_ASSERT_EQUAL(text, ParsedStringResponse(text));
        }
        // A lone surrogate escaped inside the string is not valid UTF-8 once unescaped: kept as is.
        const std::string lone = R"("\"\ud800\"")";
        CPPUNIT_ASSERT_EQUAL(lone, ParsedStringResponse(lone));
    }

    void testOtherValuesAreUntouched() {
        for (const std::string text : {R"({"response":"{\"a\":1}"})", "[\"1\"]", "7", "null", "", "false"}) {
            CPPUNIT_ASSERT_EQUAL(text, ParsedStringResponse(text));
        }
    }

    void testDeepNestingDoesNotCrash() {
        const std::string deep = "\"" + std::string(200000, '[') + std::string(200000, ']') + "\"";
        CPPUNIT_ASSERT_EQUAL(std::string(200000, '[') + std::string(200000, ']'), ParsedStringResponse(deep));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StringResponseTests);
