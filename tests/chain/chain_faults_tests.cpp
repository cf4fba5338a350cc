// The chain client under faults, against real anvil processes: a node that dies and returns, a
// reverted write, a dropped transaction, concurrent writer processes, and keyd-signed relays.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/wait.h>

#include <cstdio>
#include <optional>
#include <thread>

#include <boost/process.hpp>

#include "common/keccak.h"
#include "common/random.h"
#include "common/scoreboard.h"
#include "tests/chain/chain_fixture.h"
#include "workers/chain/keyd_signer.h"
#include "workers/chain/payer_leases.h"

using namespace sigil;
using namespace sigil::workers;
using common::ErrorKind;
using common::Uint256;
using namespace std::chrono_literals;

namespace {

Uint256 RandomKeyHash() { return Uint256::FromWord(common::Keccak256Hash(common::RandomBytes(32))); }
common::Address20 RandomAddress() { return common::PrivateKey::Generate().Address(); }

double SecondsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The service's PayerSource with local keys in place of keyd's: dev wallets leased per write.
class LocalPayers final : public PayerSource {
public:
    LocalPayers(PayerLeases& leases, std::vector<LocalKeySigner>& signers) : m_leases(leases), m_signers(signers) {}
    common::Result<std::unique_ptr<Held>> Acquire() override {
        auto lease = m_leases.Acquire(100ms);
        if (!lease.ok()) return lease.error();
        TxSigner* signer = &m_signers.at(lease->Index());
        return std::unique_ptr<Held>(new Payer(std::move(lease).value(), signer));
    }

private:
    class Payer final : public Held {
    public:
        Payer(PayerLeases::Lease lease, TxSigner* signer) : m_lease(std::move(lease)), m_signer(signer) {}
        TxSigner& Signer() override { return *m_signer; }

    private:
        PayerLeases::Lease m_lease;
        TxSigner* m_signer;
    };
    PayerLeases& m_leases;
    std::vector<LocalKeySigner>& m_signers;
};

}  // namespace

class ChainFaultsTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ChainFaultsTests);
    CPPUNIT_TEST(testNodeDownGivesClearErrorThenRecovers);
    CPPUNIT_TEST(testRevertedWriteDoesNotPoisonLaterSends);
    CPPUNIT_TEST(testDroppedTransactionTimesOutThenResyncs);
    CPPUNIT_TEST(testConcurrentProcessesNeverCollideOnNonces);
    CPPUNIT_TEST(testKeydSignsRelayedWrites);
    CPPUNIT_TEST(testLeasedWritersNeverShareANonce);
    CPPUNIT_TEST(testStuckTransactionIsReplacedAndMinedOnce);
    CPPUNIT_TEST_SUITE_END();

    std::unique_ptr<test::Anvil> m_anvil;
    test::Deployment m_chain;

public:
    void setUp() override {
        m_anvil = std::make_unique<test::Anvil>(test::FreePort());
        m_anvil->Start();
        m_chain = test::Deploy(m_anvil->Url());
    }
    void tearDown() override { m_anvil.reset(); }

    void testNodeDownGivesClearErrorThenRecovers() {
        test::ChainStack s(m_chain, test::DevKey(1), 0ms, 3000ms);
        const Uint256 a = RandomKeyHash();
        CPPUNIT_ASSERT(s.client.NewAccount(a, RandomAddress()).ok());
        m_anvil->Stop();
        auto t = std::chrono::steady_clock::now();
        auto read = s.client.GetAccount(a);
        CPPUNIT_ASSERT(!read.ok());
        CPPUNIT_ASSERT(read.error().kind == ErrorKind::Suspended);
        CPPUNIT_ASSERT_EQUAL(std::string("chain_unavailable"), read.error().code);
        CPPUNIT_ASSERT_MESSAGE("a dead node must fail fast, never hang", SecondsSince(t) < 5);
        t = std::chrono::steady_clock::now();
        auto write = s.client.NewAccount(RandomKeyHash(), RandomAddress());
        CPPUNIT_ASSERT(!write.ok());
        CPPUNIT_ASSERT(write.error().kind == ErrorKind::Suspended);
        CPPUNIT_ASSERT(SecondsSince(t) < 5);
        // The node returns (a fresh dev chain on the same port, contract redeployed at the same
        // address): the same client recovers without a restart, nonces resynced from the node.
        m_anvil->Start();
        auto again = test::Deploy(m_anvil->Url());
        CPPUNIT_ASSERT(again.contract == m_chain.contract);
        auto s2 = s.client.NewAccount(RandomKeyHash(), RandomAddress());
        CPPUNIT_ASSERT_MESSAGE(s2.ok() ? "" : s2.error().message, s2.ok());
    }

    void testRevertedWriteDoesNotPoisonLaterSends() {
        test::ChainStack s(m_chain, test::DevKey(1), 0ms);
        const Uint256 a = RandomKeyHash();
        CPPUNIT_ASSERT(s.client.NewAccount(a, RandomAddress()).ok());
        auto nonce_before = s.eth.PendingNonce(s.signer.Address());
        auto dup = s.client.NewAccount(a, RandomAddress());
        CPPUNIT_ASSERT(!dup.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("key_hash_taken"), dup.error().code);
        CPPUNIT_ASSERT(*s.eth.PendingNonce(s.signer.Address()) == *nonce_before);  // nothing was sent
        for (int i = 0; i < 3; ++i) CPPUNIT_ASSERT(s.client.NewAccount(RandomKeyHash(), RandomAddress()).ok());
    }

    void testDroppedTransactionTimesOutThenResyncs() {
        test::ChainStack s(m_chain, test::DevKey(1), 0ms, 800ms);
        CPPUNIT_ASSERT(s.client.NewAccount(RandomKeyHash(), RandomAddress()).ok());
        CPPUNIT_ASSERT(s.rpc.CallForResult("evm_setAutomine", "[false]").ok());
        auto stuck = s.client.NewAccount(RandomKeyHash(), RandomAddress());
        CPPUNIT_ASSERT(!stuck.ok());
        CPPUNIT_ASSERT(stuck.error().kind == ErrorKind::Timeout);
        CPPUNIT_ASSERT(!s.sender.CachedNonce().has_value());  // forgotten: the node decides next time
        // The transaction is dropped from the pool and mining resumes: the next send reuses its nonce.
        CPPUNIT_ASSERT(s.rpc.CallForResult("anvil_dropAllTransactions", "[]").ok());
        CPPUNIT_ASSERT(s.rpc.CallForResult("evm_setAutomine", "[true]").ok());
        const Uint256 a = RandomKeyHash();
        auto ok = s.client.NewAccount(a, RandomAddress());
        CPPUNIT_ASSERT_MESSAGE(ok.ok() ? "" : ok.error().message, ok.ok());
        CPPUNIT_ASSERT(s.client.GetAccount(a)->exists);
    }

    void testConcurrentProcessesNeverCollideOnNonces() {
        // Two worker-like processes, each with its own fixed payer wallet, writing at once.
        constexpr int WRITES = 6;
        std::vector<pid_t> children;
        for (int payer : {1, 2}) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                int failures = 0;
                {
                    test::ChainStack s(m_chain, test::DevKey(payer), 0ms);
                    for (int i = 0; i < WRITES; ++i) {
                        if (!s.client.NewAccount(RandomKeyHash(), RandomAddress()).ok()) ++failures;
                    }
                }
                ::_exit(failures);
            }
            children.push_back(pid);
        }
        for (pid_t pid : children) {
            int status = 0;
            ::waitpid(pid, &status, 0);
            CPPUNIT_ASSERT(WIFEXITED(status));
            CPPUNIT_ASSERT_EQUAL(0, WEXITSTATUS(status));
        }
        test::ChainStack s(m_chain, test::DevKey(3), 0ms);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{WRITES}, *s.eth.PendingNonce(test::DevKey(1).Address()));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{WRITES}, *s.eth.PendingNonce(test::DevKey(2).Address()));
    }

    void testKeydSignsRelayedWrites() {
        char tmpl[] = "/tmp/sigil-keyd-XXXXXX";
        const std::string dir = ::mkdtemp(tmpl);
        const std::string key_file = dir + "/root.key", socket = dir + "/run/keyd.sock";
        const std::string keyd = test::BinaryPath("keyd/sigil-keyd");
        boost::process::child daemon(keyd, "--socket", socket, "--root-key-file", key_file, "--allowed-uid",
                                     std::to_string(::getuid()), "--chain-id", std::to_string(m_chain.chain_id),
                                     "--contract", common::HexEncode(m_chain.contract, true), "--payers", "2",
                                     boost::process::std_err > boost::process::null);
        KeydClient keyd_client(KeydClientOptions{socket});
        bool up = false;
        for (int i = 0; i < 100 && !up; ++i) {
            up = keyd_client.Ping().ok();
            if (!up) std::this_thread::sleep_for(20ms);
        }
        CPPUNIT_ASSERT(up);
        auto payers = keyd_client.GetPayers(2);
        CPPUNIT_ASSERT(payers.ok());
        const common::Address20 payer = payers->payers[1];
        // The contract owner (dev account 0) registers keyd's payer 1; anvil funds it.
        test::ChainStack owner(m_chain, test::DevKey(0), 0ms);
        CPPUNIT_ASSERT(owner.rpc.CallForResult("anvil_setBalance", "[\"" + common::HexEncode(payer, true) +
                                                                     "\",\"0x56bc75e2d63100000\"]").ok());
        auto call = common::EncodeCall("addApiPayer(address)", std::vector{common::AbiValue::Address(payer)});
        CPPUNIT_ASSERT(owner.sender.Send(m_chain.contract, *call, nullptr).ok());

        test::ChainStack s(m_chain, test::DevKey(3), 0ms);  // reads only; writes go through keyd below
        // The request's key: keyd signs a relayed write only if the call names keccak256 of it.
        WriteCredential credential;
        const std::string key = "chain-faults-key-" + common::HexEncode(RandomKeyHash().Word(), false);
        credential.api_key = common::SecretBytes(common::AsBytes(key));
        KeydPayerSigner signer(keyd_client, 1, payer, credential);
        TxSender sender(s.eth, signer, TxSenderOptions{m_chain.chain_id, 10000ms, 25});
        AccountConfigClient client(m_chain.contract, s.reader, s.cache, &sender);
        const Uint256 a = Uint256::FromWord(common::Keccak256Hash(key));
        auto w = client.NewAccount(a, RandomAddress());
        CPPUNIT_ASSERT_MESSAGE(w.ok() ? "" : w.error().message, w.ok());
        CPPUNIT_ASSERT(client.GetAccount(a)->exists);
        // A hash that is not the key's (a compromised worker writing for an account it never saw the
        // key of) is refused by keyd: nothing is broadcast.
        auto foreign = client.NewAccount(RandomKeyHash(), RandomAddress());
        CPPUNIT_ASSERT(!foreign.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_refused"), foreign.error().code);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, *s.eth.PendingNonce(payer));
        // keyd refuses to sign for any other chain id: the send fails and nothing is broadcast.
        TxSender wrong_chain(s.eth, signer, TxSenderOptions{m_chain.chain_id + 1, 10000ms, 25});
        AccountConfigClient wrong(m_chain.contract, s.reader, s.cache, &wrong_chain);
        auto refused = wrong.NewAccount(RandomKeyHash(), RandomAddress());
        CPPUNIT_ASSERT(!refused.ok());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, *s.eth.PendingNonce(payer));
        daemon.terminate();
        daemon.wait();
        std::remove(key_file.c_str());
        std::string cleanup = "rm -rf " + dir;
        CPPUNIT_ASSERT_EQUAL(0, std::system(cleanup.c_str()));
    }

    // Worker-like processes, more than there are payer wallets, each leasing a wallet per write from
    // one scoreboard table: every write is mined or refused as overloaded, none fails on a nonce, and
    // the wallets' nonces add up to the writes acknowledged.
    void testLeasedWritersNeverShareANonce() {
        constexpr int PROCS = 6, WRITES = 4, PAYERS = 3;
        auto sb = common::Scoreboard::Create("chain-leases", 8);
        CPPUNIT_ASSERT(sb.ok());
        test::ChainStack ctl(m_chain, test::DevKey(4), 0ms);
        std::uint64_t before = 0;
        for (int p = 1; p <= PAYERS; ++p) before += *ctl.eth.PendingNonce(test::DevKey(p).Address());
        std::vector<pid_t> children;
        for (int proc = 0; proc < PROCS; ++proc) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                int acknowledged = 0, other = 0;
                {
                    test::ChainStack s(m_chain, test::DevKey(4), 0ms);
                    std::vector<LocalKeySigner> signers;
                    for (int p = 1; p <= PAYERS; ++p) signers.emplace_back(test::DevKey(p));
                    PayerLeases leases(sb->PayerOwners(), PAYERS, static_cast<std::uint32_t>(proc) + 1);
                    LocalPayers payers(leases, signers);
                    TxSender sender(s.eth, payers, TxSenderOptions{m_chain.chain_id, 10000ms, 25});
                    AccountConfigClient client(m_chain.contract, s.reader, s.cache, &sender);
                    for (int i = 0; i < WRITES; ++i) {
                        auto w = client.NewAccount(RandomKeyHash(), RandomAddress());
                        if (w.ok()) {
                            ++acknowledged;
                        } else if (w.error().code != "overloaded") {
                            std::fprintf(stderr, "write failed: %s %s\n", w.error().code.c_str(), w.error().message.c_str());
                            ++other;
                        }
                    }
                }
                ::_exit(other > 0 ? 100 : acknowledged);
            }
            children.push_back(pid);
        }
        int acknowledged = 0;
        for (pid_t pid : children) {
            int status = 0;
            ::waitpid(pid, &status, 0);
            CPPUNIT_ASSERT(WIFEXITED(status));
            CPPUNIT_ASSERT_MESSAGE("a write failed other than overloaded", WEXITSTATUS(status) <= WRITES);
            acknowledged += WEXITSTATUS(status);
        }
        CPPUNIT_ASSERT(acknowledged >= PAYERS);
        std::uint64_t after = 0;
        for (int p = 1; p <= PAYERS; ++p) after += *ctl.eth.LatestNonce(test::DevKey(p).Address());
        CPPUNIT_ASSERT_EQUAL(static_cast<std::uint64_t>(acknowledged), after - before);
        for (std::uint32_t slot = 0; slot < 8; ++slot) CPPUNIT_ASSERT_EQUAL(0u, sb->PayersLeasedBy(slot));
    }

    // A write whose transaction the chain will not mine (its max fee is below the base fee) is
    // re-sent after replace_after with the same nonce and raised fees; the replacement is mined and
    // the write acknowledged, once.
    void testStuckTransactionIsReplacedAndMinedOnce() {
        test::ChainStack s(m_chain, test::DevKey(1), 0ms);
        TxSender sender(s.eth, s.signer, TxSenderOptions{m_chain.chain_id, 20000ms, 25, 700ms, 25});
        AccountConfigClient client(m_chain.contract, s.reader, s.cache, &sender);
        test::ChainStack ctl(m_chain, test::DevKey(4), 0ms);
        const common::Address20 payer = test::DevKey(1).Address();
        const std::uint64_t nonce_before = *ctl.eth.LatestNonce(payer);
        CPPUNIT_ASSERT(ctl.rpc.CallForResult("evm_setAutomine", "[false]").ok());
        const Uint256 a = RandomKeyHash();
        std::optional<common::Status> written;
        std::thread writer([&] { written = client.NewAccount(a, RandomAddress()); });
        bool pooled = false;
        for (int i = 0; i < 250 && !pooled; ++i) {
            pooled = *ctl.eth.PendingNonce(payer) > nonce_before;
            if (!pooled) std::this_thread::sleep_for(20ms);
        }
        CPPUNIT_ASSERT_MESSAGE("the write's transaction reached the pool", pooled);
        // The next block's base fee, 1000 gwei, is far above what the transaction offers: it is not mined.
        CPPUNIT_ASSERT(ctl.rpc.CallForResult("anvil_setNextBlockBaseFeePerGas", "[\"0xe8d4a51000\"]").ok());
        CPPUNIT_ASSERT(ctl.rpc.CallForResult("evm_mine", "[]").ok());
        CPPUNIT_ASSERT_EQUAL(nonce_before, *ctl.eth.LatestNonce(payer));
        // Blocks keep coming; the replacement, priced from the new base fee, gets in.
        for (int i = 0; i < 75 && !written; ++i) {
            std::this_thread::sleep_for(200ms);
            (void)ctl.rpc.CallForResult("evm_mine", "[]");
        }
        writer.join();
        CPPUNIT_ASSERT(ctl.rpc.CallForResult("evm_setAutomine", "[true]").ok());
        CPPUNIT_ASSERT(written.has_value());
        CPPUNIT_ASSERT_MESSAGE(written->ok() ? "" : written->error().message, written->ok());
        CPPUNIT_ASSERT(sender.Replacements() >= 1);
        CPPUNIT_ASSERT_EQUAL(nonce_before + 1, *ctl.eth.LatestNonce(payer));  // one transaction mined
        CPPUNIT_ASSERT(client.GetAccount(a)->exists);
        // The same key hash again is refused: the account was created once.
        auto again = client.NewAccount(a, RandomAddress());
        CPPUNIT_ASSERT(!again.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("key_hash_taken"), again.error().code);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(ChainFaultsTests);
