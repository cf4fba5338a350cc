// Relayed writes: estimates gas, prices, signs through a TxSigner, sends and awaits the receipt,
// with a nonce sequence per sender wallet that resyncs from the node after any failure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/bytes.h"
#include "common/result.h"
#include "workers/chain/eth_client.h"

namespace sigil::workers {

// Signs transaction digests for one wallet. keyd implements it for the API payer wallets; tests
// use a local key. Implementations must never expose the key.
class TxSigner {
public:
    virtual ~TxSigner() = default;
    virtual common::Address20 Address() const = 0;
    // Signs an EIP-1559 transaction with the given fields and returns the raw signed bytes ready
    // for eth_sendRawTransaction. Refusal (wrong chain, wrong recipient) is an error.
    struct Fields {
        std::uint64_t chain_id = 0;
        std::uint64_t nonce = 0;
        std::uint64_t max_priority_fee_per_gas = 0;
        std::uint64_t max_fee_per_gas = 0;
        std::uint64_t gas_limit = 0;
        common::Address20 to{};
        common::Bytes data;
    };
    virtual common::Result<common::Bytes> SignTransaction(const Fields& fields) = 0;
};

struct TxSenderOptions {
    std::uint64_t chain_id = 0;
    std::chrono::milliseconds receipt_timeout{30000};
    unsigned gas_margin_percent = 25;  // headroom over eth_estimateGas
};

// One sender wallet's write path. Not thread-safe: each worker process owns its own sender wallet,
// so no two processes ever share a nonce sequence (DESIGN.md section 7).
class TxSender {
public:
    TxSender(EthClient& eth, TxSigner& signer, TxSenderOptions options);

    // Sends `data` to `to` and waits for the receipt. A call that would revert is not sent: the
    // error is InvalidInput "execution_reverted" and *revert holds the revert data for decoding.
    // A mined transaction with status 0 is Conflict "tx_reverted". After any failure (before or
    // after broadcasting) the next send re-reads the nonce from the node, so a failed or dropped
    // send never poisons later ones.
    common::Result<Receipt> Send(const common::Address20& to, common::ByteView data, CallOutcome* revert);

    // Where a transaction sent earlier (by any worker) stands.
    struct Outcome {
        enum class State { Pending, Mined, Unknown } state = State::Pending;  // Unknown: the node
        Receipt receipt;  // when Mined (success or not)                       // has never heard of it (dropped)
    };
    common::Result<Outcome> Lookup(const std::string& tx_hash);

    // Forget the cached nonce (the next send asks the node).
    void Resync() { m_next_nonce.reset(); }
    const std::optional<std::uint64_t>& CachedNonce() const { return m_next_nonce; }

private:
    common::Result<Receipt> TrySend(const common::Address20& to, common::ByteView data, CallOutcome* revert);
    common::Result<std::uint64_t> NextNonce();

    EthClient& m_eth;
    TxSigner& m_signer;
    TxSenderOptions m_options;
    std::optional<std::uint64_t> m_next_nonce;
};

}  // namespace sigil::workers
