// The shared JSON helpers: quoting, serialization, the nesting scan and the duplicate-key check.
#include <cppunit/extensions/HelperMacros.h>

#include <string>

#include <rapidjson/document.h>

#include "common/json.h"

using namespace sigil::common;

namespace {

rapidjson::Document Parse(const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    CPPUNIT_ASSERT_MESSAGE(text, !d.HasParseError());
    return d;
}

}  // namespace

class JsonTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(JsonTests);
    CPPUNIT_TEST(testQuoteEscapes);
    CPPUNIT_TEST(testSerializeIsCompact);
    CPPUNIT_TEST(testViewKeepsNuls);
    CPPUNIT_TEST(testNestingCountsObjectsAndArrays);
    CPPUNIT_TEST(testNestingSkipsStrings);
    CPPUNIT_TEST(testDuplicateKeysAtAnyDepth);
    CPPUNIT_TEST_SUITE_END();

public:
    void testQuoteEscapes() {
        CPPUNIT_ASSERT_EQUAL(std::string(R"("a\"b\\c\n")"), JsonQuote("a\"b\\c\n"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"("\u0000")"), JsonQuote(std::string_view("\0", 1)));
    }

    void testSerializeIsCompact() {
        auto d = Parse(R"({ "a" : [1, 2, {"b": null}], "c": "x" })");
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"a":[1,2,{"b":null}],"c":"x"})"), JsonSerialize(d));
    }

    void testViewKeepsNuls() {
        auto d = Parse(R"("a\u0000b")");
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), JsonView(d).size());
    }

    void testNestingCountsObjectsAndArrays() {
        CPPUNIT_ASSERT(JsonNestingWithin("1", 0));
        CPPUNIT_ASSERT(!JsonNestingWithin("[]", 0));
        CPPUNIT_ASSERT(JsonNestingWithin(R"({"a":[{}]})", 3));
        CPPUNIT_ASSERT(!JsonNestingWithin(R"({"a":[{}]})", 2));
        CPPUNIT_ASSERT(JsonNestingWithin("[][][][]", 1));  // siblings do not add up
        CPPUNIT_ASSERT(!JsonNestingWithin(std::string(100000, '['), 64));
    }

    void testNestingSkipsStrings() {
        CPPUNIT_ASSERT(JsonNestingWithin(R"(["[[[[", "{{{{"])", 1));
        CPPUNIT_ASSERT(JsonNestingWithin(R"(["\"[[[["])", 1));  // an escaped quote does not end the string
        CPPUNIT_ASSERT(!JsonNestingWithin(R"(["\\", [[]]])", 2));  // an escaped backslash does
    }

    void testDuplicateKeysAtAnyDepth() {
        CPPUNIT_ASSERT(!JsonHasDuplicateKeys(Parse(R"({"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]})")));
        CPPUNIT_ASSERT(JsonHasDuplicateKeys(Parse(R"({"a":1,"a":2})")));
        CPPUNIT_ASSERT(JsonHasDuplicateKeys(Parse(R"({"x":{"a":1,"a":2}})")));
        CPPUNIT_ASSERT(JsonHasDuplicateKeys(Parse(R"([1,[{"k":0,"k":0}]])")));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JsonTests);
