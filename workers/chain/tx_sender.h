// Relayed writes: estimates gas, prices, signs through a TxSigner, sends and awaits the receipt,
// replacing a transaction that is not mined in time; the sender wallet is fixed (its nonce sequence
// cached, resynced from the node after any failure) or leased per write from a PayerSource.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
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

// Hands each relayed write the wallet it sends from, held from the nonce it reads to its receipt
// (or its timeout), so no two writes in flight share a nonce sequence (DESIGN.md section 7).
class PayerSource {
public:
    virtual ~PayerSource() = default;
    // A wallet held by one write; destroying it gives the wallet back.
    class Held {
    public:
        virtual ~Held() = default;
        virtual TxSigner& Signer() = 0;
    };
    // A free wallet, held until the returned object is destroyed.
    // Errors: Suspended "overloaded" (every wallet busy), or the source's own (keyd unreachable).
    virtual common::Result<std::unique_ptr<Held>> Acquire() = 0;
};

struct TxSenderOptions {
    std::uint64_t chain_id = 0;
    std::chrono::milliseconds receipt_timeout{30000};
    unsigned gas_margin_percent = 25;  // headroom over eth_estimateGas
    // A sent transaction with no receipt after this is re-sent with the same nonce and its fees
    // raised by replace_bump_percent (nodes want at least 10% to replace), again after each period.
    std::chrono::milliseconds replace_after{6000};
    unsigned replace_bump_percent = 25;
};

// The fees of a replacement for `sent`: each raised by `bump_percent` (at least the 10% nodes
// require, rounded up), or the node's current quote where that is higher; the tip never above the cap.
TxSigner::Fields BumpedFees(const TxSigner::Fields& sent, const FeeQuote& now, unsigned bump_percent);

// The write path. Not thread-safe: a worker process sends one write at a time.
class TxSender {
public:
    // One fixed wallet (tests, tools): the caller guarantees nobody else sends from it.
    TxSender(EthClient& eth, TxSigner& signer, TxSenderOptions options);
    // A wallet leased per write from `payers` (the service: the pool's API payers).
    TxSender(EthClient& eth, PayerSource& payers, TxSenderOptions options);

    // Sends `data` to `to` and waits for the receipt. A call that would revert is not sent: the
    // error is InvalidInput "execution_reverted" and *revert holds the revert data for decoding.
    // A mined transaction with status 0 is Conflict "tx_reverted". After any failure (before or
    // after broadcasting) the next send re-reads the nonce from the node, so a failed or dropped
    // send never poisons later ones; a leased wallet's nonce is read from the node on every write.
    // No receipt within receipt_timeout: Timeout "tx_receipt_timeout" with the latest hash sent.
    // No wallet free: Suspended "overloaded".
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

    // Transactions re-sent with raised fees since this sender was made (tests, logs).
    std::uint64_t Replacements() const { return m_replacements; }

private:
    common::Result<Receipt> TrySend(TxSigner& signer, std::uint64_t nonce, const common::Address20& to,
                                    common::ByteView data, CallOutcome* revert);
    common::Result<Receipt> AwaitMined(TxSigner& signer, TxSigner::Fields fields, std::string hash);
    common::Result<Receipt> SendLeased(const common::Address20& to, common::ByteView data, CallOutcome* revert);
    common::Result<std::uint64_t> NextNonce();

    EthClient& m_eth;
    TxSigner* m_signer = nullptr;   // fixed wallet, or
    PayerSource* m_payers = nullptr;  // leased per write
    TxSenderOptions m_options;
    std::uint64_t m_replacements = 0;
    std::optional<std::uint64_t> m_next_nonce;
};

}  // namespace sigil::workers
