#include <cppunit/extensions/HelperMacros.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "common/config.h"

using namespace sigil::common;

class ConfigTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ConfigTests);
    CPPUNIT_TEST(testDefaultsWhenEmpty);
    CPPUNIT_TEST(testParsesValuesCommentsAndWhitespace);
    CPPUNIT_TEST(testValueMayContainHashAndEquals);
    CPPUNIT_TEST(testRejectsUnknownSection);
    CPPUNIT_TEST(testRejectsUnknownKey);
    CPPUNIT_TEST(testRejectsDuplicateKey);
    CPPUNIT_TEST(testRejectsKeyBeforeSection);
    CPPUNIT_TEST(testRejectsMalformedLines);
    CPPUNIT_TEST(testRejectsBadIntegers);
    CPPUNIT_TEST(testRejectsOutOfRange);
    CPPUNIT_TEST(testOctal);
    CPPUNIT_TEST(testBool);
    CPPUNIT_TEST(testRejectsEmptyPathAndControlCharacters);
    CPPUNIT_TEST(testLoadFileReportsMissingFile);
    CPPUNIT_TEST(testCustomSchemaAndBadDefault);
    CPPUNIT_TEST(testExampleFileDocumentsEverySchemaKey);
    CPPUNIT_TEST_SUITE_END();

    static std::string ErrorOf(const std::string& text) {
        auto r = Config::Parse(text);
        CPPUNIT_ASSERT_MESSAGE("expected refusal of: " + text, !r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("config_invalid"), r.error().code);
        CPPUNIT_ASSERT(r.error().kind == ErrorKind::InvalidInput);
        return r.error().message;
    }
    static bool Contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

public:
    void testDefaultsWhenEmpty() {
        auto r = Config::Parse("");
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("/run/sigil/fcgi.sock"), r->GetString("supervisor", "socket_path"));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0666}, r->GetInt("supervisor", "socket_mode"));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{100000}, r->GetInt("supervisor", "max_requests"));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{60}, r->GetInt("supervisor", "request_hard_timeout_s"));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{1048576}, r->GetInt("worker", "max_body_bytes"));
        CPPUNIT_ASSERT_EQUAL(false, r->GetBool("worker", "test_routes"));
        CPPUNIT_ASSERT(!r->IsSet("supervisor", "max_requests"));
        CPPUNIT_ASSERT_EQUAL(std::string(""), Config::Defaults().GetString("supervisor", "socket_group"));
    }
    void testParsesValuesCommentsAndWhitespace() {
        auto r = Config::Parse(
            "# top comment\n\n[supervisor]\r\n  workers=4  \n\tmax_requests = 7\n   # indented comment\n"
            "[ worker ]\nmax_body_bytes = 2048\n[supervisor]\nsocket_path = /tmp/x.sock");
        CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().message, r.ok());
        CPPUNIT_ASSERT_EQUAL(std::int64_t{4}, r->GetInt("supervisor", "workers"));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{7}, r->GetInt("supervisor", "max_requests"));
        CPPUNIT_ASSERT_EQUAL(std::int64_t{2048}, r->GetInt("worker", "max_body_bytes"));
        CPPUNIT_ASSERT_EQUAL(std::string("/tmp/x.sock"), r->GetString("supervisor", "socket_path"));
        CPPUNIT_ASSERT(r->IsSet("supervisor", "workers"));
    }
    void testValueMayContainHashAndEquals() {
        auto r = Config::Parse("[supervisor]\nsocket_group = a#b=c\n");
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("a#b=c"), r->GetString("supervisor", "socket_group"));
    }
    void testRejectsUnknownSection() {
        const auto m = ErrorOf("[supervisor]\nworkers = 2\n[superviser]\n");
        CPPUNIT_ASSERT_MESSAGE(m, Contains(m, "line 3") && Contains(m, "unknown section [superviser]"));
    }
    void testRejectsUnknownKey() {
        const auto m = ErrorOf("[supervisor]\nwrokers = 2\n");
        CPPUNIT_ASSERT_MESSAGE(m, Contains(m, "line 2") && Contains(m, "unknown key supervisor.wrokers"));
        // A key valid in another section is still unknown here.
        CPPUNIT_ASSERT(Contains(ErrorOf("[worker]\nworkers = 2\n"), "worker.workers"));
    }
    void testRejectsDuplicateKey() {
        const auto m = ErrorOf("[supervisor]\nworkers = 2\n[worker]\n[supervisor]\nworkers = 3\n");
        CPPUNIT_ASSERT_MESSAGE(m, Contains(m, "line 5") && Contains(m, "duplicate key supervisor.workers"));
    }
    void testRejectsKeyBeforeSection() {
        CPPUNIT_ASSERT(Contains(ErrorOf("workers = 2\n"), "before any [section]"));
    }
    void testRejectsMalformedLines() {
        CPPUNIT_ASSERT(Contains(ErrorOf("[supervisor\n"), "malformed section header"));
        CPPUNIT_ASSERT(Contains(ErrorOf("[]\n"), "malformed section name"));
        CPPUNIT_ASSERT(Contains(ErrorOf("[Supervisor]\n"), "malformed section name"));
        CPPUNIT_ASSERT(Contains(ErrorOf("[supervisor]\nworkers 2\n"), "expected 'key = value'"));
        CPPUNIT_ASSERT(Contains(ErrorOf("[supervisor]\n= 2\n"), "malformed key name"));
        CPPUNIT_ASSERT(Contains(ErrorOf("[supervisor]\nWorkers = 2\n"), "malformed key name"));
        ErrorOf(std::string("[supervisor]\nworkers\0= 2\n", sizeof("[supervisor]\nworkers\0= 2\n") - 1));
    }
    void testRejectsBadIntegers() {
        for (const char* v : {"", "two", "2.0", "0x10", "+2", " 2 2", "1e3", "99999999999999999999"}) {
            const auto m = ErrorOf(std::string("[supervisor]\nmax_requests = ") + v + "\n");
            CPPUNIT_ASSERT_MESSAGE(m, Contains(m, "supervisor.max_requests"));
        }
    }
    void testRejectsOutOfRange() {
        const auto m = ErrorOf("[supervisor]\nmax_requests = 0\n");
        CPPUNIT_ASSERT_MESSAGE(m, Contains(m, "supervisor.max_requests is out of range 1.."));
        ErrorOf("[supervisor]\nworkers = -1\n");
        ErrorOf("[supervisor]\nworkers = 257\n");
        ErrorOf("[worker]\nmax_body_bytes = 0\n");
        ErrorOf("[supervisor]\nrequest_hard_timeout_s = 0\n");
    }
    void testOctal() {
        auto r = Config::Parse("[supervisor]\nsocket_mode = 0660\n");
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0660}, r->GetInt("supervisor", "socket_mode"));
        CPPUNIT_ASSERT(Contains(ErrorOf("[supervisor]\nsocket_mode = 0668\n"), "not an octal number"));
        CPPUNIT_ASSERT(Contains(ErrorOf("[supervisor]\nsocket_mode = 01777\n"), "out of range"));
    }
    void testBool() {
        for (const char* t : {"true", "yes", "on", "1"}) {
            auto r = Config::Parse(std::string("[worker]\ntest_routes = ") + t);
            CPPUNIT_ASSERT(r.ok() && r->GetBool("worker", "test_routes"));
        }
        for (const char* f : {"false", "no", "off", "0"}) {
            auto r = Config::Parse(std::string("[worker]\ntest_routes = ") + f);
            CPPUNIT_ASSERT(r.ok() && !r->GetBool("worker", "test_routes"));
        }
        CPPUNIT_ASSERT(Contains(ErrorOf("[worker]\ntest_routes = True\n"), "not a boolean"));
        ErrorOf("[worker]\ntest_routes =\n");
    }
    void testRejectsEmptyPathAndControlCharacters() {
        CPPUNIT_ASSERT(Contains(ErrorOf("[supervisor]\nsocket_path =\n"), "supervisor.socket_path must not be empty"));
        CPPUNIT_ASSERT(Contains(ErrorOf("[supervisor]\nsocket_group = a\x01" "b\n"), "control characters"));
    }
    void testLoadFileReportsMissingFile() {
        auto r = Config::LoadFile("/nonexistent/sigil.conf");
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("config_unreadable"), r.error().code);
        CPPUNIT_ASSERT(Contains(r.error().message, "/nonexistent/sigil.conf"));
    }
    void testCustomSchemaAndBadDefault() {
        static constexpr ConfigKey good[] = {{"limits", "max_runs", ConfigType::Int, "5", 1, 10, "runs"}};
        auto r = Config::Parse("[limits]\nmax_runs = 9\n", good);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT_EQUAL(std::int64_t{9}, r->GetInt("limits", "max_runs"));
        CPPUNIT_ASSERT(!Config::Parse("[supervisor]\n", good).ok());
        static constexpr ConfigKey bad[] = {{"limits", "max_runs", ConfigType::Int, "50", 1, 10, "runs"}};
        auto b = Config::Parse("", bad);
        CPPUNIT_ASSERT(!b.ok());
        CPPUNIT_ASSERT(Contains(b.error().message, "default of limits.max_runs"));
    }
    void testExampleFileDocumentsEverySchemaKey() {
        const std::string path = std::string(SIGIL_SOURCE_DIR) + "/sigil.conf.example";
        auto r = Config::LoadFile(path);
        CPPUNIT_ASSERT_MESSAGE(r.ok() ? "" : r.error().message, r.ok());
        for (const auto& k : ConfigSchema()) {
            CPPUNIT_ASSERT_MESSAGE(std::string(k.section) + "." + std::string(k.key) + " missing from sigil.conf.example",
                                   r->IsSet(k.section, k.key) || k.default_value.empty());
            // The example shows the defaults: parsing it must give the same values as no file.
            const auto d = Config::Defaults();
            if (k.type == ConfigType::Int || k.type == ConfigType::Octal) {
                CPPUNIT_ASSERT_EQUAL(d.GetInt(k.section, k.key), r->GetInt(k.section, k.key));
            } else if (k.type == ConfigType::Bool) {
                CPPUNIT_ASSERT_EQUAL(d.GetBool(k.section, k.key), r->GetBool(k.section, k.key));
            } else {
                CPPUNIT_ASSERT_EQUAL(d.GetString(k.section, k.key), r->GetString(k.section, k.key));
            }
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ConfigTests);
