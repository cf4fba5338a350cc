// A real anvil node on a free loopback port with AccountConfig deployed, for chain client tests.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "common/hex.h"
#include "common/secp256k1.h"
#include "tests/test_support.h"
#include "workers/chain/account_config.h"
#include "workers/chain/eth_client.h"
#include "tests/support/local_signer.h"
#include "workers/chain/rpc_client.h"

namespace sigil::test {

// anvil's well-known development keys (mnemonic "test test ... junk"): 0 deploys, 1..4 are API payers.
inline const char* const ANVIL_DEV_KEYS[] = {
    "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    "5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    "7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    "47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
    "8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
    "92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
};

inline common::PrivateKey DevKey(int i) {
    return std::move(common::PrivateKey::FromBytes(*common::HexDecode(ANVIL_DEV_KEYS[i]))).value();
}

inline int FreePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("bind");
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

inline std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// One anvil process. Stop() kills it; Start() again on the same port brings back an empty chain.
class Anvil {
public:
    explicit Anvil(int port) : m_port(port) {}
    ~Anvil() { Stop(); }

    std::string Url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    void Start(const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args = {"--host", "127.0.0.1", "--port", std::to_string(m_port), "--silent"};
        args.insert(args.end(), extra.begin(), extra.end());
        m_child = std::make_unique<boost::process::child>(
            std::string(SIGIL_SOURCE_DIR) + "/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil", args,
            boost::process::std_out > boost::process::null, boost::process::std_err > boost::process::null);
        workers::RpcOptions o;
        o.url = Url();
        o.read_retries = 0;
        workers::RpcClient rpc(workers::MakeCurlTransport(o), o);
        for (int i = 0; i < 200; ++i) {
            if (rpc.CallForResult("eth_chainId", "[]").ok()) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
        throw std::runtime_error("anvil did not start on " + Url());
    }

    void Stop() {
        if (m_child && m_child->running()) {
            m_child->terminate();  // SIGKILL: the node vanishes mid-sequence, as in a crash
            m_child->wait();
        }
        m_child.reset();
    }

private:
    int m_port;
    std::unique_ptr<boost::process::child> m_child;
};

struct Deployment {
    std::string rpc_url;
    std::uint64_t chain_id = 0;
    common::Address20 contract{};
};

// Deploys AccountConfig with scripts/devchain.mjs (the same path the start command uses).
inline Deployment Deploy(const std::string& rpc_url) {
    char tmpl[] = "/tmp/sigil-chain-XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);
    const std::string config = dir + "/chain.json";
    const int rc = boost::process::system(boost::process::search_path("node"),
                                          std::string(SIGIL_SOURCE_DIR) + "/scripts/devchain.mjs", "deploy",
                                          "--config", config, "--rpc-url", rpc_url, "--build-dir",
                                          std::string(SIGIL_BINARY_DIR), boost::process::std_out > boost::process::null);
    if (rc != 0) throw std::runtime_error("devchain deploy failed");
    rapidjson::Document doc;
    const std::string text = ReadFile(config);
    doc.Parse(text.c_str());
    Deployment d;
    d.rpc_url = rpc_url;
    d.chain_id = doc["chain_id"].GetUint64();
    d.contract = *common::ParseAddress(doc["contract_address"].GetString(), false).operator->();
    std::remove(config.c_str());
    ::rmdir(dir.c_str());
    return d;
}

// The client stack a worker builds: transport, eth methods, cache, sender, contract client.
struct ChainStack {
    ChainStack(const Deployment& d, common::PrivateKey payer_key, std::chrono::milliseconds cache_ttl,
               std::chrono::milliseconds receipt_timeout = std::chrono::milliseconds(10000))
        : options(MakeOptions(d.rpc_url)),
          rpc(workers::MakeCurlTransport(options), options),
          eth(rpc),
          cache(cache_ttl, 1024),
          watcher(eth, d.contract, cache, std::chrono::milliseconds(200)),
          reader(eth, cache, &watcher),
          signer(std::move(payer_key)),
          sender(eth, signer, workers::TxSenderOptions{d.chain_id, receipt_timeout, 25}),
          client(d.contract, reader, cache, &sender) {}

    static workers::RpcOptions MakeOptions(const std::string& url) {
        workers::RpcOptions o;
        o.url = url;
        o.connect_timeout = std::chrono::milliseconds(500);
        o.total_timeout = std::chrono::milliseconds(3000);
        o.read_retries = 2;
        o.retry_backoff = std::chrono::milliseconds(50);
        return o;
    }

    workers::RpcOptions options;
    workers::RpcClient rpc;
    workers::EthClient eth;
    workers::ReadCache cache;
    workers::ContractWatcher watcher;
    workers::CachedReader reader;
    workers::LocalKeySigner signer;
    workers::TxSender sender;
    workers::AccountConfigClient client;
};

}  // namespace sigil::test
