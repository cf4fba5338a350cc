#include <cppunit/extensions/HelperMacros.h>

#include <cstring>
#include <string>

#include "workers/fcgi/server.h"
#include "workers/http/http.h"

using namespace sigil;
using namespace sigil::workers;

namespace {

// A reader over a fixed string that counts how much was asked for.
struct FakeBody {
    std::string data;
    std::size_t pos = 0;
    std::size_t handed_out = 0;
    std::size_t operator()(char* buf, std::size_t n) {
        const std::size_t k = std::min(n, data.size() - pos);
        std::memcpy(buf, data.data() + pos, k);
        pos += k;
        handed_out += k;
        return k;
    }
};

}  // namespace

class HttpTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(HttpTests);
    CPPUNIT_TEST(testRequestFromParams);
    CPPUNIT_TEST(testPathFromRequestUriWhenNoDocumentUri);
    CPPUNIT_TEST(testQueryParams);
    CPPUNIT_TEST(testSanitizeCorrelationId);
    CPPUNIT_TEST(testJsonContentType);
    CPPUNIT_TEST(testStatusMapping);
    CPPUNIT_TEST(testErrorBodyIsEscapedJson);
    CPPUNIT_TEST(testFinalizeAddsHeaders);
    CPPUNIT_TEST(testSerializeDropsInjectedHeaders);
    CPPUNIT_TEST(testBodyWithinLimit);
    CPPUNIT_TEST(testBodyDeclaredTooLargeIsNotRead);
    CPPUNIT_TEST(testBodyLongerThanDeclaredStopsAtLimit);
    CPPUNIT_TEST(testBodyWithoutLengthIsBounded);
    CPPUNIT_TEST(testBadContentLength);
    CPPUNIT_TEST_SUITE_END();

public:
    void testRequestFromParams() {
        auto r = RequestFromParams({{"REQUEST_METHOD", "POST"},
                                    {"REQUEST_URI", "/core/v1/x?a=1"},
                                    {"DOCUMENT_URI", "/core/v1/x"},
                                    {"QUERY_STRING", "a=1"},
                                    {"CONTENT_TYPE", "application/json"},
                                    {"REMOTE_ADDR", "127.0.0.1"},
                                    {"HTTP_X_API_KEY", "k"},
                                    {"HTTP_X_CORRELATION_ID", "  corr-1 "},
                                    {"HTTP_", "ignored"}},
                                   "{}");
        CPPUNIT_ASSERT_EQUAL(std::string("POST"), r.method);
        CPPUNIT_ASSERT_EQUAL(std::string("/core/v1/x"), r.path);
        CPPUNIT_ASSERT_EQUAL(std::string("a=1"), r.query);
        CPPUNIT_ASSERT_EQUAL(std::string("k"), *r.Header("x-api-key"));
        CPPUNIT_ASSERT_EQUAL(std::string("application/json"), *r.Header("content-type"));
        CPPUNIT_ASSERT_EQUAL(std::string("corr-1"), r.correlation_id);
        CPPUNIT_ASSERT_EQUAL(std::string("{}"), r.body);
        CPPUNIT_ASSERT(!r.Header("x-missing"));
        CPPUNIT_ASSERT(r.request_id.empty());
    }
    void testPathFromRequestUriWhenNoDocumentUri() {
        auto r = RequestFromParams({{"REQUEST_METHOD", "GET"}, {"REQUEST_URI", "/health?x=y"}}, "");
        CPPUNIT_ASSERT_EQUAL(std::string("/health"), r.path);
        CPPUNIT_ASSERT_EQUAL(std::string("x=y"), r.query);
    }
    void testQueryParams() {
        HttpRequest r;
        r.query = "page_size=10&name=a%20b+c&empty=&flag&bad=%zz&page_size=99";
        CPPUNIT_ASSERT_EQUAL(std::string("10"), *r.QueryParam("page_size"));
        CPPUNIT_ASSERT_EQUAL(std::string("a b c"), *r.QueryParam("name"));
        CPPUNIT_ASSERT_EQUAL(std::string(""), *r.QueryParam("empty"));
        CPPUNIT_ASSERT_EQUAL(std::string(""), *r.QueryParam("flag"));
        CPPUNIT_ASSERT(!r.QueryParam("bad"));
        CPPUNIT_ASSERT(!r.QueryParam("missing"));
        r.query = "t=%4";
        CPPUNIT_ASSERT(!r.QueryParam("t"));
        r.query = "t=%";
        CPPUNIT_ASSERT(!r.QueryParam("t"));
    }
    void testSanitizeCorrelationId() {
        CPPUNIT_ASSERT_EQUAL(std::string("abc"), SanitizeCorrelationId("abc"));
        CPPUNIT_ASSERT_EQUAL(std::string("ab"), SanitizeCorrelationId("a\r\nb"));
        CPPUNIT_ASSERT_EQUAL(std::string(""), SanitizeCorrelationId("   "));
        CPPUNIT_ASSERT_EQUAL(std::string(""), SanitizeCorrelationId("\x01\x7f\xff"));
        CPPUNIT_ASSERT_EQUAL(std::size_t{128}, SanitizeCorrelationId(std::string(500, 'x')).size());
    }
    void testJsonContentType() {
        CPPUNIT_ASSERT(IsJsonContentType("application/json"));
        CPPUNIT_ASSERT(IsJsonContentType("Application/JSON; charset=utf-8"));
        CPPUNIT_ASSERT(IsJsonContentType(" application/json ;charset=UTF-8"));
        CPPUNIT_ASSERT(!IsJsonContentType(""));
        CPPUNIT_ASSERT(!IsJsonContentType("text/plain"));
        CPPUNIT_ASSERT(!IsJsonContentType("application/jsonx"));
        CPPUNIT_ASSERT(!IsJsonContentType("application/x-www-form-urlencoded"));
    }
    void testStatusMapping() {
        using K = common::ErrorKind;
        CPPUNIT_ASSERT_EQUAL(400, HttpStatusFor(K::InvalidInput));
        CPPUNIT_ASSERT_EQUAL(401, HttpStatusFor(K::Unauthenticated));
        CPPUNIT_ASSERT_EQUAL(402, HttpStatusFor(K::PaymentRequired));
        CPPUNIT_ASSERT_EQUAL(403, HttpStatusFor(K::Forbidden));
        CPPUNIT_ASSERT_EQUAL(404, HttpStatusFor(K::NotFound));
        CPPUNIT_ASSERT_EQUAL(409, HttpStatusFor(K::Conflict));
        CPPUNIT_ASSERT_EQUAL(413, HttpStatusFor(K::TooLarge));
        CPPUNIT_ASSERT_EQUAL(422, HttpStatusFor(K::MalformedJson));
        CPPUNIT_ASSERT_EQUAL(429, HttpStatusFor(K::Overloaded));
        CPPUNIT_ASSERT_EQUAL(500, HttpStatusFor(K::Internal));
        CPPUNIT_ASSERT_EQUAL(502, HttpStatusFor(K::Unavailable));
        CPPUNIT_ASSERT_EQUAL(504, HttpStatusFor(K::Timeout));
        CPPUNIT_ASSERT_EQUAL(503, HttpStatusFor(K::Suspended));
        auto r = ErrorResponse(common::MakeError(K::Suspended, "chain_unavailable", "circuit open"));
        CPPUNIT_ASSERT_EQUAL(503, r.status);
        CPPUNIT_ASSERT((r.headers == std::vector<std::pair<std::string, std::string>>{{"Retry-After", "1"}}));
    }
    void testErrorBodyIsEscapedJson() {
        auto r = ErrorResponse(common::MakeError(common::ErrorKind::NotFound, "no_group", "group \"7\"\n missing"));
        CPPUNIT_ASSERT_EQUAL(404, r.status);
        // The message twice: nested, and at the top level for the deployed implementation's clients.
        CPPUNIT_ASSERT_EQUAL(
            std::string(R"({"error":{"code":"no_group","message":"group \"7\"\n missing"},"message":"group \"7\"\n missing"})"),
            r.body);
        auto pending = common::MakeError(common::ErrorKind::Timeout, "receipt_timeout", "not mined yet");
        pending.tx_hash = "0xab";
        CPPUNIT_ASSERT_EQUAL(
            std::string(R"({"error":{"code":"receipt_timeout","message":"not mined yet","tx_hash":"0xab"},"message":"not mined yet"})"),
            ErrorResponse(pending).body);
    }
    void testFinalizeAddsHeaders() {
        HttpRequest req;
        req.request_id = "11111111-2222-4333-8444-555555555555";
        req.correlation_id = "corr";
        auto resp = JsonResponse(200, "{}");
        FinalizeResponse(resp, req);
        const std::string text = SerializeCgiResponse(resp);
        CPPUNIT_ASSERT(text.rfind("Status: 200 OK\r\n", 0) == 0);
        CPPUNIT_ASSERT(text.find("Content-Type: application/json\r\n") != std::string::npos);
        CPPUNIT_ASSERT(text.find("X-Request-Id: 11111111-2222-4333-8444-555555555555\r\n") != std::string::npos);
        CPPUNIT_ASSERT(text.find("X-Correlation-Id: corr\r\n") != std::string::npos);
        CPPUNIT_ASSERT(text.size() >= 6 && text.substr(text.size() - 6) == "\r\n\r\n{}");
        // No correlation id in, none out; a handler's own Content-Type is kept.
        req.correlation_id.clear();
        auto text_resp = JsonResponse(200, "x");
        text_resp.SetHeader("content-type", "text/plain");
        FinalizeResponse(text_resp, req);
        const std::string t2 = SerializeCgiResponse(text_resp);
        CPPUNIT_ASSERT(t2.find("X-Correlation-Id") == std::string::npos);
        CPPUNIT_ASSERT(t2.find("content-type: text/plain\r\n") != std::string::npos);
        CPPUNIT_ASSERT(t2.find("application/json") == std::string::npos);
    }
    void testSerializeDropsInjectedHeaders() {
        HttpResponse r;
        r.status = 418;
        r.headers = {{"X-Ok", "1"}, {"X-Bad", "a\r\nSet-Cookie: x"}, {"X\nBad", "1"}, {"X:Bad", "1"}, {"", "1"}};
        const std::string text = SerializeCgiResponse(r);
        CPPUNIT_ASSERT(text.rfind("Status: 418 Unknown\r\nX-Ok: 1\r\n\r\n", 0) == 0);
        CPPUNIT_ASSERT(text.find("Set-Cookie") == std::string::npos);
    }
    void testBodyWithinLimit() {
        FakeBody src{"hello"};
        auto b = ReadBoundedBody(std::ref(src), std::string_view("5"), 5);
        CPPUNIT_ASSERT(b.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("hello"), *b);
        FakeBody empty{""};
        CPPUNIT_ASSERT(ReadBoundedBody(std::ref(empty), std::nullopt, 5).ok());
    }
    void testBodyDeclaredTooLargeIsNotRead() {
        FakeBody src{std::string(100, 'x')};
        auto b = ReadBoundedBody(std::ref(src), std::string_view("100"), 10);
        CPPUNIT_ASSERT(!b.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("body_too_large"), b.error().code);
        CPPUNIT_ASSERT(b.error().kind == common::ErrorKind::TooLarge);
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, src.handed_out);
        FakeBody huge{""};
        CPPUNIT_ASSERT(!ReadBoundedBody(std::ref(huge), std::string_view("99999999999999999999999"), 10).ok());
    }
    void testBodyLongerThanDeclaredStopsAtLimit() {
        FakeBody src{std::string(1 << 20, 'x')};
        auto b = ReadBoundedBody(std::ref(src), std::string_view("3"), 10);
        CPPUNIT_ASSERT(!b.ok());
        CPPUNIT_ASSERT(src.handed_out <= 11);
    }
    void testBodyWithoutLengthIsBounded() {
        FakeBody src{std::string(1 << 20, 'x')};
        auto b = ReadBoundedBody(std::ref(src), std::nullopt, 1000);
        CPPUNIT_ASSERT(!b.ok());
        CPPUNIT_ASSERT(src.handed_out <= 1001);
        FakeBody exact{std::string(1000, 'y')};
        CPPUNIT_ASSERT(ReadBoundedBody(std::ref(exact), std::string_view(""), 1000).ok());
    }
    void testBadContentLength() {
        for (const char* v : {"-1", "1e3", "abc", "12 "}) {
            FakeBody src{"x"};
            auto b = ReadBoundedBody(std::ref(src), std::string_view(v), 10);
            CPPUNIT_ASSERT_MESSAGE(v, !b.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("bad_content_length"), b.error().code);
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(HttpTests);
