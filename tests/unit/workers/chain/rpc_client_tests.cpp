// RpcClient's time budget and circuit over real loopback sockets: a node that accepts and never
// answers (a paused process) and a port where nothing listens.
#include <cppunit/extensions/HelperMacros.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <thread>

#include "common/clock.h"
#include "common/handles.h"
#include "workers/chain/rpc_client.h"

using namespace sigil::workers;
using sigil::common::ErrorKind;
using sigil::common::UniqueFd;
using namespace std::chrono_literals;

namespace {

// A TCP listener on 127.0.0.1 that never accepts: the kernel completes the handshake, the request
// is sent, no answer ever comes (what a SIGSTOPped node looks like).
struct SilentNode {
    UniqueFd fd;
    int port = 0;

    SilentNode() : fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd.get(), 64) != 0 ||
            ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            throw std::runtime_error("cannot listen on loopback");
        }
        port = ntohs(a.sin_port);
        ::fcntl(fd.get(), F_SETFL, O_NONBLOCK);
    }
    std::string Url() const { return "http://127.0.0.1:" + std::to_string(port); }
    // Takes one queued connection; false when none ever reached us.
    bool TakeConnection() {
        UniqueFd c(::accept(fd.get(), nullptr, nullptr));
        return c.get() >= 0;
    }
};

// A loopback port with nothing listening (bound, then closed).
int ClosedPort() {
    SilentNode n;
    return n.port;
}

double MsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

RpcClient MakeClient(const std::string& url, ChainCircuit* circuit = nullptr) {
    RpcOptions o;
    o.url = url;
    o.total_timeout = 10000ms;  // per attempt: far beyond the budgets below
    o.read_retries = 3;
    o.retry_backoff = 20ms;
    return RpcClient(MakeCurlTransport(o), o, circuit);
}

// A node that answers every call correctly, after `delay` (one stalling under load).
class SlowTransport final : public RpcTransport {
public:
    explicit SlowTransport(std::chrono::milliseconds delay) : m_delay(delay) {}
    sigil::common::Result<std::string> Post(std::string_view body, std::chrono::milliseconds) override {
        std::this_thread::sleep_for(m_delay);
        const auto at = body.find("\"id\":") + 5;
        const auto id = body.substr(at, body.find(',', at) - at);
        return std::string(R"({"jsonrpc":"2.0","id":)") + std::string(id) + R"(,"result":"0x10"})";
    }

private:
    std::chrono::milliseconds m_delay;
};

}  // namespace

class RpcClientTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(RpcClientTests);
    CPPUNIT_TEST(testBudgetBoundsEveryAttemptTogether);
    CPPUNIT_TEST(testSpentBudgetFailsWithoutCalling);
    CPPUNIT_TEST(testExtendedDeadlineOutlivesTheBudgetThenRestores);
    CPPUNIT_TEST(testDeadNodeFailsFastAsUnavailable);
    CPPUNIT_TEST(testSlowAnswersOpenTheCircuit);
    CPPUNIT_TEST(testOpenCircuitRefusesWithoutTouchingTheNetwork);
    CPPUNIT_TEST(testStarvedAttemptsNeverCountInTheCircuit);
    CPPUNIT_TEST_SUITE_END();

public:
    void testBudgetBoundsEveryAttemptTogether() {
        SilentNode node;
        auto rpc = MakeClient(node.Url());
        rpc.StartBudget(300ms);
        const auto t = std::chrono::steady_clock::now();
        auto r = rpc.Call("eth_blockNumber", "[]");
        const double ms = MsSince(t);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT(r.error().kind == ErrorKind::Timeout);
        CPPUNIT_ASSERT_EQUAL(std::string("chain_timeout"), r.error().code);
        CPPUNIT_ASSERT_MESSAGE("took " + std::to_string(ms) + " ms", ms >= 290 && ms < 1000);
    }

    void testSpentBudgetFailsWithoutCalling() {
        SilentNode node;
        auto rpc = MakeClient(node.Url());
        rpc.StartBudget(0ms);
        auto r = rpc.Call("eth_blockNumber", "[]");
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("chain_timeout"), r.error().code);
        CPPUNIT_ASSERT(!node.TakeConnection());
    }

    void testExtendedDeadlineOutlivesTheBudgetThenRestores() {
        SilentNode node;
        auto rpc = MakeClient(node.Url());
        rpc.StartBudget(100ms);
        {
            RpcClient::ExtendedDeadline longer(rpc, std::chrono::steady_clock::now() + 400ms);
            const auto t = std::chrono::steady_clock::now();
            CPPUNIT_ASSERT(!rpc.Call("eth_getTransactionReceipt", "[\"0x00\"]").ok());
            CPPUNIT_ASSERT(MsSince(t) >= 390);
        }
        // Back to the (now spent) request budget.
        const auto t = std::chrono::steady_clock::now();
        CPPUNIT_ASSERT(!rpc.Call("eth_blockNumber", "[]").ok());
        CPPUNIT_ASSERT(MsSince(t) < 50);
    }

    void testDeadNodeFailsFastAsUnavailable() {
        auto rpc = MakeClient("http://127.0.0.1:" + std::to_string(ClosedPort()));
        rpc.StartBudget(2000ms);
        const auto t = std::chrono::steady_clock::now();
        auto r = rpc.Call("eth_blockNumber", "[]");
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT(r.error().kind == ErrorKind::Suspended);
        CPPUNIT_ASSERT_EQUAL(std::string("chain_unavailable"), r.error().code);
        CPPUNIT_ASSERT(MsSince(t) < 1000);  // 4 refused connects and 20+40+80 ms of backoff
    }

    void testOpenCircuitRefusesWithoutTouchingTheNetwork() {
        ChainCircuit circuit({3, 60000ms});
        auto dead = MakeClient("http://127.0.0.1:" + std::to_string(ClosedPort()), &circuit);
        CPPUNIT_ASSERT(!dead.Call("eth_blockNumber", "[]").ok());  // 1 + 3 retries: opens at the third
        // Another client (another worker) on the same circuit, pointed at a node that would hang.
        SilentNode node;
        auto other = MakeClient(node.Url(), &circuit);
        other.StartBudget(2000ms);
        const auto t = std::chrono::steady_clock::now();
        auto r = other.Call("eth_blockNumber", "[]");
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("chain_unavailable"), r.error().code);
        CPPUNIT_ASSERT(MsSince(t) < 20);
        CPPUNIT_ASSERT(!node.TakeConnection());
    }
    // A call whose budget was below starved_below (a run's op near its deadline) times out as the
    // caller's deadline, not the node's failure: however many, they never open the pool's circuit;
    // the same silent node given a real budget does.
    void testStarvedAttemptsNeverCountInTheCircuit() {
        ChainCircuit circuit({3, 60000ms});
        SilentNode node;
        auto client = MakeClient(node.Url(), &circuit);
        for (int i = 0; i < 5; ++i) {
            client.StartBudget(60ms);
            auto r = client.Call("eth_blockNumber", "[]");
            CPPUNIT_ASSERT(!r.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("chain_timeout"), r.error().code);
        }
        CPPUNIT_ASSERT(!circuit.IsOpen(sigil::common::MonotonicMs()));
        for (int i = 0; i < 3; ++i) {
            client.StartBudget(300ms);
            CPPUNIT_ASSERT(!client.Call("eth_blockNumber", "[]").ok());
        }
        CPPUNIT_ASSERT(circuit.IsOpen(sigil::common::MonotonicMs()));
    }

    // Answers that arrive, but later than the circuit's slow_call, count as failures: the third in a
    // row opens the circuit for the pool (DESIGN.md section 10), while each caller still gets its answer.
    void testSlowAnswersOpenTheCircuit() {
        ChainCircuit circuit({3, 60000ms, 100ms});
        RpcOptions o;
        RpcClient slow(std::make_unique<SlowTransport>(150ms), o, &circuit);
        for (int i = 0; i < 3; ++i) CPPUNIT_ASSERT(slow.CallForResult("eth_blockNumber", "[]").ok());
        CPPUNIT_ASSERT(circuit.IsOpen(sigil::common::MonotonicMs()));
        auto refused = slow.Call("eth_blockNumber", "[]");
        CPPUNIT_ASSERT(!refused.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("chain_unavailable"), refused.error().code);
        // The same answers in time never open it.
        ChainCircuit healthy({3, 60000ms, 1000ms});
        RpcClient fine(std::make_unique<SlowTransport>(150ms), o, &healthy);
        for (int i = 0; i < 4; ++i) CPPUNIT_ASSERT(fine.CallForResult("eth_blockNumber", "[]").ok());
        CPPUNIT_ASSERT(!healthy.IsOpen(sigil::common::MonotonicMs()));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(RpcClientTests);
