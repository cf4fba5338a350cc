#include "workers/chain/service.h"

#include "common/payer_range.h"
#include "common/scoreboard.h"
#include "common/secp256k1.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

// How long a write waits for a payer wallet to come free before 503 overloaded: brief, since every
// payer busy means the instance is at its write capacity and the client should come back later.
constexpr std::chrono::milliseconds PAYER_WAIT{100};

common::Error NoChain() {
    return MakeError(ErrorKind::Unavailable, "chain_not_configured", "this instance has no chain configured");
}

}  // namespace

common::Result<std::unique_ptr<Service>> Service::Create(const common::Config& config, KeydClient* keyd,
                                                         std::uint32_t slot, std::atomic<std::uint64_t>* shared_epoch,
                                                         common::SharedCircuit* shared_circuit,
                                                         std::atomic<std::uint32_t>* payer_owners,
                                                         common::SharedChainArea* shared_reads) {
    std::unique_ptr<Service> s(new Service());
    s->m_keyd = keyd;
    s->m_slot = slot;
    const std::string rpc_url = config.GetString("chain", "rpc_url");
    if (rpc_url.empty()) return s;

    auto contract = common::ParseAddress(config.GetString("chain", "contract_address"));
    if (!contract.ok()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config",
                         "[chain] contract_address: " + contract.error().message);
    }
    s->m_contract = *contract;
    s->m_chain_id = static_cast<std::uint64_t>(config.GetInt("chain", "chain_id"));
    if (s->m_chain_id == 0) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config", "[chain] chain_id is required with rpc_url");
    }
    s->m_send_options.chain_id = s->m_chain_id;
    s->m_send_options.receipt_timeout = std::chrono::milliseconds(config.GetInt("chain", "receipt_timeout_ms"));
    s->m_send_options.replace_after = std::chrono::milliseconds(config.GetInt("chain", "tx_replace_after_ms"));
    const auto payers = static_cast<std::uint32_t>(config.GetInt("chain", "payers"));
    if (payers == 0 || payers > common::Scoreboard::MAX_PAYERS) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config", "[chain] payers must be 1.." +
                                                                        std::to_string(common::Scoreboard::MAX_PAYERS));
    }
    // Only this instance's share of the payers is leased here; the lease table indexes the share.
    auto share = common::PayerRangeFromConfig(config);
    if (!share.ok()) return share.error();
    s->m_payer_first = share->first;
    s->m_leases = std::make_unique<PayerLeases>(payer_owners, share->count, slot + 1);

    RpcOptions rpc;
    rpc.url = rpc_url;
    rpc.total_timeout = std::chrono::milliseconds(config.GetInt("chain", "rpc_timeout_ms"));
    rpc.connect_timeout = std::min(rpc.total_timeout, std::chrono::milliseconds(2000));
    s->m_request_budget = std::chrono::milliseconds(config.GetInt("chain", "request_timeout_ms"));
    CircuitOptions circuit;
    circuit.failure_threshold = static_cast<std::uint32_t>(config.GetInt("chain", "circuit_failures"));
    circuit.open_for = std::chrono::milliseconds(config.GetInt("chain", "circuit_open_ms"));
    circuit.slow_call = std::chrono::milliseconds(config.GetInt("chain", "circuit_slow_ms"));
    s->m_circuit = std::make_unique<ChainCircuit>(circuit, shared_circuit);
    s->m_rpc = std::make_unique<RpcClient>(MakeCurlTransport(rpc), rpc, s->m_circuit.get());
    s->m_eth = std::make_unique<EthClient>(*s->m_rpc);
    s->m_cache = std::make_unique<ReadCache>(std::chrono::milliseconds(config.GetInt("chain", "cache_ttl_ms")), 4096);
    s->m_cache->ShareEpoch(shared_epoch);
    if (shared_reads != nullptr && shared_epoch != nullptr) s->m_cache->ShareTable(shared_reads);
    s->m_watcher = std::make_unique<ContractWatcher>(
        *s->m_eth, s->m_contract, *s->m_cache, std::chrono::milliseconds(config.GetInt("chain", "event_poll_ms")),
        shared_reads != nullptr && shared_epoch != nullptr ? &shared_reads->watch : nullptr);
    s->m_reader = std::make_unique<CachedReader>(*s->m_eth, *s->m_cache, s->m_watcher.get());
    s->m_read_client = std::make_unique<AccountConfigClient>(s->m_contract, *s->m_reader, *s->m_cache, nullptr);
    return s;
}

bool Service::ChainCircuitOpen() const { return m_circuit && m_circuit->IsOpen(common::MonotonicMs()); }

common::Result<EthClient*> Service::Eth() {
    if (!m_eth) return NoChain();
    return m_eth.get();
}

common::Result<AccountConfigClient*> Service::Reader() {
    if (!m_read_client) return NoChain();
    return m_read_client.get();
}

common::Result<AccountConfigClient*> Service::Contract() {
    if (!m_read_client) return NoChain();
    if (m_write_client) return m_write_client.get();
    if (m_keyd == nullptr) {
        return MakeError(ErrorKind::Unavailable, "keyd_not_configured", "this instance has no keyd to sign writes");
    }
    m_payers = std::make_unique<KeydPayers>(*m_keyd, *m_leases, m_payer_first, m_credential, PAYER_WAIT);
    m_sender = std::make_unique<TxSender>(*m_eth, *m_payers, m_send_options);
    m_write_client = std::make_unique<AccountConfigClient>(m_contract, *m_reader, *m_cache, m_sender.get());
    return m_write_client.get();
}

}  // namespace sigil::workers
