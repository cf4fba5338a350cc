// Everything an API handler reaches: the contract client with its cache and event watcher, the
// API payer wallets leased per write (signed for by keyd), and keyd itself. One per worker process.
#pragma once

#include <algorithm>

#include <cstdint>
#include <memory>
#include <optional>

#include "common/config.h"
#include "common/result.h"
#include "workers/chain/account_config.h"
#include "workers/chain/cache.h"
#include "workers/chain/circuit.h"
#include "workers/chain/eth_client.h"
#include "keyd/client/keyd_client.h"
#include "workers/chain/keyd_signer.h"
#include "workers/chain/payer_leases.h"
#include "workers/chain/rpc_client.h"
#include "workers/chain/tx_sender.h"

namespace sigil::workers {

class Service {
public:
    // Builds the chain stack from [chain] (a missing rpc_url leaves the service without a chain:
    // Contract() then fails with Unavailable "chain_not_configured"). `keyd` may be null (no [keyd]).
    // `slot` is this worker's scoreboard slot: its leases of API payer wallets ([chain] payers of
    // them, one per write in flight, DESIGN.md section 7) are tagged with it, in `payer_owners` (the
    // scoreboard's PayerOwners(); null: a table of this process's own). Nothing here talks to the
    // network: keyd and the node may come up later. Errors: InvalidInput "invalid_config" naming the key.
    // `shared_epoch` (the scoreboard's ChainEpoch, may be null) makes a write through any worker
    // drop every worker's cached reads; `shared_circuit` (the scoreboard's ChainCircuit, may be
    // null: this worker's own) lets one worker's failed calls open the circuit for all.
    // `shared_reads` (the scoreboard's ChainArea, with `shared_epoch`) shares cached reads and the
    // event watch across the pool (common/shared_cache.h).
    static common::Result<std::unique_ptr<Service>> Create(const common::Config& config, KeydClient* keyd,
                                                           std::uint32_t slot,
                                                           std::atomic<std::uint64_t>* shared_epoch = nullptr,
                                                           common::SharedCircuit* shared_circuit = nullptr,
                                                           std::atomic<std::uint32_t>* payer_owners = nullptr,
                                                           common::SharedChainArea* shared_reads = nullptr);

    // A chain-bound step begins (an HTTP request, or one op of a run): its chain calls share one
    // budget of [chain] request_timeout_ms from now.
    void StartChainBudget() {
        if (m_rpc) m_rpc->StartBudget(m_request_budget);
    }
    // The same, but never past `cap` from now (an op of a run gets no more than the run has left).
    void StartChainBudget(std::chrono::milliseconds cap) {
        if (m_rpc) m_rpc->StartBudget(std::min(m_request_budget, cap));
    }
    // Whether the pool's chain circuit is open now (for /health).
    bool ChainCircuitOpen() const;

    // The contract client, with relayed writes from the leased payers (their addresses come from keyd
    // on the first write). Errors: Unavailable "chain_not_configured", Unavailable "keyd_not_configured".
    common::Result<AccountConfigClient*> Contract();
    // Read-only access, never needing keyd (reads work while keyd is down).
    common::Result<AccountConfigClient*> Reader();

    // The node's plain JSON-RPC methods (blocks, logs), sharing the request's budget and circuit.
    // Errors: Unavailable "chain_not_configured".
    common::Result<EthClient*> Eth();
    KeydClient* Keyd() { return m_keyd; }

    // The credential keyd checks relayed writes against (keyd_signer.h): authentication sets the
    // caller's key, the conversion handler adds the new admin's consent, and every request starts
    // with none, so a write never goes out under an earlier request's key.
    WriteCredential& Credential() { return m_credential; }
    std::uint64_t ChainId() const { return m_chain_id; }
    const common::Address20& ContractAddress() const { return m_contract; }
    bool HasChain() const { return m_rpc != nullptr; }
    // Hears the contract's logs as the event watcher polls them (ContractWatcher::SetListener); no-op
    // without a chain.
    void SetLogListener(ContractWatcher::LogListener listener) {
        if (m_watcher) m_watcher->SetListener(std::move(listener));
    }

private:
    Service() = default;

    KeydClient* m_keyd = nullptr;
    WriteCredential m_credential;
    std::uint32_t m_slot = 0;
    std::uint64_t m_chain_id = 0;
    common::Address20 m_contract{};
    std::chrono::milliseconds m_request_budget{2000};
    std::unique_ptr<ChainCircuit> m_circuit;
    std::unique_ptr<RpcClient> m_rpc;
    std::unique_ptr<EthClient> m_eth;
    std::unique_ptr<ReadCache> m_cache;
    std::unique_ptr<ContractWatcher> m_watcher;
    std::unique_ptr<CachedReader> m_reader;
    std::unique_ptr<AccountConfigClient> m_read_client;
    std::unique_ptr<PayerLeases> m_leases;
    std::uint32_t m_payer_first = 0;  // keyd's index of lease 0: this instance's share ([chain] instance_index)
    std::unique_ptr<KeydPayers> m_payers;
    TxSenderOptions m_send_options;
    std::unique_ptr<TxSender> m_sender;
    std::unique_ptr<AccountConfigClient> m_write_client;
};

}  // namespace sigil::workers
