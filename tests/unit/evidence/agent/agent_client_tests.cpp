// The guest agent's client under the faults the real agent (and sigil-tee-sim, which the API tests
// use) never shows on purpose: nothing configured, no socket, an agent that never answers, an
// answer that is not JSON or not 200.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "common/handles.h"
#include "evidence/agent/agent_client.h"

using namespace sigil;
using namespace sigil::evidence;

namespace {

// A unix-socket listener answering each connection with `answer` (after reading the request), or
// never answering when `answer` is empty.
class FakeAgent {
public:
    FakeAgent(std::string path, std::string answer) : m_path(std::move(path)), m_answer(std::move(answer)) {
        m_fd = common::UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, m_path.c_str(), sizeof(addr.sun_path) - 1);
        ::unlink(m_path.c_str());
        CPPUNIT_ASSERT(::bind(m_fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
        CPPUNIT_ASSERT(::listen(m_fd.get(), 4) == 0);
        m_thread = std::thread([this] { Serve(); });
    }
    ~FakeAgent() {
        m_stop = true;
        ::shutdown(m_fd.get(), SHUT_RDWR);
        m_thread.join();
        ::unlink(m_path.c_str());
    }
    std::string last_request;

private:
    void Serve() {
        while (!m_stop) {
            common::UniqueFd c(::accept(m_fd.get(), nullptr, nullptr));
            if (!c.valid()) return;
            char buf[4096];
            const ssize_t n = ::read(c.get(), buf, sizeof buf);
            if (n > 0) last_request.assign(buf, static_cast<std::size_t>(n));
            if (m_answer.empty()) {
                while (!m_stop) std::this_thread::sleep_for(std::chrono::milliseconds(10));
                return;
            }
            (void)!::write(c.get(), m_answer.data(), m_answer.size());
        }
    }
    std::string m_path, m_answer;
    common::UniqueFd m_fd;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

std::string Http(int status, const std::string& body) {
    return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

class AgentClientTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(AgentClientTests);
    CPPUNIT_TEST(testNoAgentConfiguredOrNoSocket);
    CPPUNIT_TEST(testRelaysAJsonObjectAndSendsTheReportData);
    CPPUNIT_TEST(testNonJsonOrFailureIsUnavailable);
    CPPUNIT_TEST(testSilentAgentTimesOutOnBudget);
    CPPUNIT_TEST(testReportDataOver64BytesIsRefused);
    CPPUNIT_TEST_SUITE_END();

    std::string m_socket;

public:
    void setUp() override {
        m_socket = (std::filesystem::temp_directory_path() / ("sigil-agent-test-" + std::to_string(::getpid()) + ".sock")).string();
    }

    void testNoAgentConfiguredOrNoSocket() {
        auto none = AgentClient({}).Info();
        CPPUNIT_ASSERT(!none.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("attestation_unavailable"), none.error().code);
        auto missing = AgentClient({m_socket + ".missing", 500}).Info();
        CPPUNIT_ASSERT(!missing.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("attestation_unavailable"), missing.error().code);
    }

    void testRelaysAJsonObjectAndSendsTheReportData() {
        FakeAgent agent(m_socket, Http(200, "{\"quote\":\"abcd\",\"event_log\":\"[]\"}"));
        const common::Bytes rd{0x01, 0x02, 0xff};
        auto quote = AgentClient({m_socket, 2000}).GetQuote(rd);
        CPPUNIT_ASSERT(quote.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("{\"quote\":\"abcd\",\"event_log\":\"[]\"}"), *quote);
        CPPUNIT_ASSERT(agent.last_request.rfind("POST /GetQuote HTTP/1.1", 0) == 0);
        CPPUNIT_ASSERT(agent.last_request.find("{\"report_data\":\"0102ff\"}") != std::string::npos);
    }

    void testNonJsonOrFailureIsUnavailable() {
        {
            FakeAgent agent(m_socket, Http(200, "<html>"));
            auto r = AgentClient({m_socket, 2000}).Info();
            CPPUNIT_ASSERT(!r.ok() && r.error().code == "attestation_unavailable");
        }
        {
            FakeAgent agent(m_socket, Http(500, "{\"error\":\"boom\"}"));
            auto r = AgentClient({m_socket, 2000}).Info();
            CPPUNIT_ASSERT(!r.ok() && r.error().code == "attestation_unavailable");
        }
        {
            FakeAgent agent(m_socket, Http(200, "[1,2]"));
            auto r = AgentClient({m_socket, 2000}).Info();
            CPPUNIT_ASSERT(!r.ok() && r.error().code == "attestation_unavailable");
        }
    }

    void testSilentAgentTimesOutOnBudget() {
        FakeAgent agent(m_socket, "");
        const auto t0 = std::chrono::steady_clock::now();
        auto r = AgentClient({m_socket, 300}).Info();
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("attestation_timeout"), r.error().code);
        CPPUNIT_ASSERT_MESSAGE(std::to_string(ms) + " ms", ms >= 250 && ms < 2000);
    }

    void testReportDataOver64BytesIsRefused() {
        auto r = AgentClient({m_socket, 500}).GetQuote(common::Bytes(65, 0));
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_report_data"), r.error().code);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(AgentClientTests);
