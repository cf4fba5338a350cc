// The pool's shared event watch and read cache (issue 23): one worker polls for all, a new log or
// a write drops every worker's cached reads, and key validity comes from the cache only while the
// watch is current. The node is scripted (a transport answering eth_blockNumber, eth_getLogs and
// eth_call), so the test can count what each worker asks.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/mman.h>

#include <map>
#include <memory>
#include <string>

#include "workers/chain/cache.h"
#include "workers/chain/rpc_client.h"

using namespace sigil::workers;
using namespace std::chrono_literals;
using sigil::common::Bytes;

namespace {

struct Node {
    std::uint64_t head = 100;
    bool log_in_next_range = false;  // eth_getLogs answers one log of the contract
    bool down = false;
    std::map<std::string, int> calls;  // by method
};

class ScriptedTransport final : public RpcTransport {
public:
    explicit ScriptedTransport(Node& node) : m_node(node) {}
    sigil::common::Result<std::string> Post(std::string_view body, std::chrono::milliseconds) override {
        if (m_node.down) return sigil::common::MakeError(sigil::common::ErrorKind::Suspended, "chain_unavailable", "down");
        const auto m = body.find("\"method\":\"") + 10;
        const std::string method(body.substr(m, body.find('"', m) - m));
        m_node.calls[method]++;
        const auto at = body.find("\"id\":") + 5;
        const std::string id(body.substr(at, body.find_first_of(",}", at) - at));
        std::string result;
        if (method == "eth_blockNumber") {
            char buf[32];
            std::snprintf(buf, sizeof buf, "\"0x%llx\"", static_cast<unsigned long long>(m_node.head));
            result = buf;
        } else if (method == "eth_getLogs") {
            result = "[]";
            if (m_node.log_in_next_range) {
                result = R"([{"address":"0x00000000000000000000000000000000000000aa","topics":[],"data":"0x","blockNumber":"0x65",)"
                         R"("transactionHash":"0x01","logIndex":"0x0"}])";
                m_node.log_in_next_range = false;
            }
        } else {  // eth_call: a valid key's resolveKey answer (accountHash, isOwner, valid)
            result = "\"0x" + std::string(128, '0') + std::string(63, '0') + "1\"";
        }
        return R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":)" + result + "}";
    }

private:
    Node& m_node;
};

// One worker's chain stack over the shared node and pool memory.
struct Worker {
    Worker(Node& node, sigil::common::SharedChainArea* area, std::atomic<std::uint64_t>* epoch, bool shared = true)
        : rpc(std::make_unique<ScriptedTransport>(node), Options()), eth(rpc), cache(2000ms, 100),
          watcher(eth, contract, cache, 250ms, shared ? &area->watch : nullptr), reader(eth, cache, &watcher) {
        cache.ShareEpoch(epoch);
        if (shared) cache.ShareTable(area);
    }
    static RpcOptions Options() {
        RpcOptions o;
        o.read_retries = 0;
        return o;
    }
    sigil::common::Address20 contract{};
    RpcClient rpc;
    EthClient eth;
    ReadCache cache;
    ContractWatcher watcher;
    CachedReader reader;
};

bool Valid(sigil::common::ByteView answer) { return answer.size() == 96 && answer[95] == 1; }
bool Never(sigil::common::ByteView) { return false; }

}  // namespace

class SharedWatchTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SharedWatchTests);
    CPPUNIT_TEST(testOneWorkersReadServesTheOthers);
    CPPUNIT_TEST(testOneWorkerPollsForThePool);
    CPPUNIT_TEST(testALogDropsEveryWorkersCache);
    CPPUNIT_TEST(testWatchedReadsNeedACurrentWatch);
    CPPUNIT_TEST(testWatchedAnswerKeptOnlyWhenAccepted);
    CPPUNIT_TEST(testFailedPollDropsThePoolsCache);
    CPPUNIT_TEST_SUITE_END();

    sigil::common::SharedChainArea* m_area = nullptr;
    std::atomic<std::uint64_t> m_epoch{0};
    const Bytes m_data{0x12, 0x34};

public:
    void setUp() override {
        void* p = mmap(nullptr, sizeof(sigil::common::SharedChainArea), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        CPPUNIT_ASSERT(p != MAP_FAILED);
        m_area = static_cast<sigil::common::SharedChainArea*>(p);
        m_epoch = 0;
    }
    void tearDown() override { munmap(m_area, sizeof(sigil::common::SharedChainArea)); }

    void testOneWorkersReadServesTheOthers() {
        Node node;
        Worker a(node, m_area, &m_epoch), b(node, m_area, &m_epoch), c(node, m_area, &m_epoch);
        CPPUNIT_ASSERT(a.reader.Call(a.contract, m_data).ok());
        CPPUNIT_ASSERT(b.reader.Call(b.contract, m_data).ok());
        CPPUNIT_ASSERT(c.reader.Call(c.contract, m_data).ok());
        CPPUNIT_ASSERT_EQUAL(1, node.calls["eth_call"]);
    }
    void testOneWorkerPollsForThePool() {
        Node node;
        std::vector<std::unique_ptr<Worker>> pool;
        for (int i = 0; i < 20; ++i) pool.push_back(std::make_unique<Worker>(node, m_area, &m_epoch));
        for (auto& w : pool) CPPUNIT_ASSERT(w->reader.Call(w->contract, m_data).ok());
        CPPUNIT_ASSERT_EQUAL(1, node.calls["eth_blockNumber"]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, m_area->watch.polls.load());
        // Unshared, every worker polls for itself.
        Node alone;
        std::atomic<std::uint64_t> epoch{0};
        std::vector<std::unique_ptr<Worker>> own;
        for (int i = 0; i < 20; ++i) own.push_back(std::make_unique<Worker>(alone, m_area, &epoch, false));
        for (auto& w : own) CPPUNIT_ASSERT(w->reader.Call(w->contract, m_data).ok());
        CPPUNIT_ASSERT_EQUAL(20, alone.calls["eth_blockNumber"]);
    }
    void testALogDropsEveryWorkersCache() {
        Node node;
        Worker a(node, m_area, &m_epoch), b(node, m_area, &m_epoch);
        CPPUNIT_ASSERT(a.reader.Call(a.contract, m_data).ok());  // first poll learns the head; cached
        CPPUNIT_ASSERT(b.reader.Call(b.contract, m_data).ok());
        CPPUNIT_ASSERT_EQUAL(1, node.calls["eth_call"]);
        // A direct-path write is mined; the next poll (after the interval) sees its log.
        node.head = 101;
        node.log_in_next_range = true;
        m_area->watch.polled_ok_ms.store(m_area->watch.polled_ok_ms.load() - 300);
        CPPUNIT_ASSERT(a.reader.Call(a.contract, m_data).ok());
        CPPUNIT_ASSERT_EQUAL(1, node.calls["eth_getLogs"]);
        CPPUNIT_ASSERT_EQUAL(2, node.calls["eth_call"]);  // a's read after the flush
        CPPUNIT_ASSERT(b.reader.Call(b.contract, m_data).ok());  // b had it cached: dropped too, then shared
        CPPUNIT_ASSERT_EQUAL(2, node.calls["eth_call"]);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{102}, m_area->watch.next_block.load());
    }
    void testWatchedReadsNeedACurrentWatch() {
        Node node;
        Worker a(node, m_area, &m_epoch), b(node, m_area, &m_epoch);
        CPPUNIT_ASSERT(a.reader.CallWatched(a.contract, m_data, Valid).ok());
        CPPUNIT_ASSERT(b.reader.CallWatched(b.contract, m_data, Valid).ok());
        CPPUNIT_ASSERT_EQUAL(1, node.calls["eth_call"]);
        // The watch falls behind (a poll in flight elsewhere, holding the lease): validity goes to the node.
        m_area->watch.polled_ok_ms.store(m_area->watch.polled_ok_ms.load() - 600);
        m_area->watch.lease_until_ms.store(INT64_MAX);
        CPPUNIT_ASSERT(b.reader.CallWatched(b.contract, m_data, Valid).ok());
        CPPUNIT_ASSERT_EQUAL(2, node.calls["eth_call"]);
        // An ordinary read is still served from the cache meanwhile.
        CPPUNIT_ASSERT(b.reader.Call(b.contract, Bytes{0x99}).ok());
        CPPUNIT_ASSERT(a.reader.Call(a.contract, Bytes{0x99}).ok());
        CPPUNIT_ASSERT_EQUAL(3, node.calls["eth_call"]);
        // The node down and the watch stale: the validity read fails closed.
        node.down = true;
        CPPUNIT_ASSERT(!b.reader.CallWatched(b.contract, m_data, Valid).ok());
    }
    void testWatchedAnswerKeptOnlyWhenAccepted() {
        Node node;
        Worker a(node, m_area, &m_epoch);
        CPPUNIT_ASSERT(a.reader.CallWatched(a.contract, m_data, Never).ok());
        CPPUNIT_ASSERT(a.reader.CallWatched(a.contract, m_data, Never).ok());
        CPPUNIT_ASSERT_EQUAL(2, node.calls["eth_call"]);
    }
    void testFailedPollDropsThePoolsCache() {
        Node node;
        Worker a(node, m_area, &m_epoch), b(node, m_area, &m_epoch);
        CPPUNIT_ASSERT(b.reader.Call(b.contract, m_data).ok());
        const std::uint64_t before = m_epoch.load();
        node.down = true;
        m_area->watch.polled_ok_ms.store(m_area->watch.polled_ok_ms.load() - 300);
        CPPUNIT_ASSERT(!a.reader.Call(a.contract, m_data).ok());  // the poll fails, then the read
        CPPUNIT_ASSERT(m_epoch.load() > before);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{0}, m_area->watch.lease_until_ms.load());  // released
        node.down = false;
        CPPUNIT_ASSERT(b.reader.Call(b.contract, m_data).ok());
        CPPUNIT_ASSERT_EQUAL(2, node.calls["eth_call"]);  // b's entry went with the epoch
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(SharedWatchTests);
