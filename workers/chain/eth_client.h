// Typed Ethereum JSON-RPC methods over RpcClient: calls, gas, fees, nonces, sends, receipts, logs.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "workers/chain/rpc_client.h"

namespace sigil::workers {

// What eth_call / eth_estimateGas produced: return data, or the contract's revert payload.
struct CallOutcome {
    bool reverted = false;
    common::Bytes data;  // return data, or revert data (may be empty for a bare revert)
};

struct LogEntry {
    std::string address;                 // 0x-hex, lowercase
    std::vector<common::Hash32> topics;
    common::Bytes data;
    std::uint64_t block_number = 0;
    std::string tx_hash;          // 0x-hex of the emitting transaction ("" if the node left it out)
    std::uint64_t log_index = 0;  // position in the block: (tx_hash, log_index) names one event
};

struct Receipt {
    std::string tx_hash;       // 0x-hex
    bool success = false;      // status == 0x1
    std::uint64_t block_number = 0;
    std::uint64_t gas_used = 0;
    std::vector<LogEntry> logs;  // the events the transaction emitted
};

struct FeeQuote {
    std::uint64_t max_fee_per_gas = 0;
    std::uint64_t max_priority_fee_per_gas = 0;
};

class EthClient {
public:
    explicit EthClient(RpcClient& rpc) : m_rpc(rpc) {}
    // The transport under these methods (a write waiting for its receipt extends its deadline).
    RpcClient& Rpc() { return m_rpc; }

    common::Result<std::uint64_t> ChainId();
    common::Result<std::uint64_t> BlockNumber();

    // eth_call at "latest". A revert is a successful outcome with reverted = true; errors are
    // transport or node failures only.
    common::Result<CallOutcome> Call(const common::Address20& to, common::ByteView data,
                                     const std::optional<common::Address20>& from = std::nullopt);

    // eth_estimateGas; a revert comes back as CallOutcome-like error data in `revert`.
    common::Result<std::uint64_t> EstimateGas(const common::Address20& from, const common::Address20& to,
                                              common::ByteView data, CallOutcome* revert);

    // Pending nonce of `address` (counts transactions in the node's pool).
    common::Result<std::uint64_t> PendingNonce(const common::Address20& address);
    // Nonce of `address` at the latest block (mined transactions only): below PendingNonce while a
    // transaction of the wallet waits in the pool.
    common::Result<std::uint64_t> LatestNonce(const common::Address20& address);

    // maxFeePerGas = 2 * latest base fee + priority fee; priority from eth_maxPriorityFeePerGas.
    common::Result<FeeQuote> QuoteFees();

    // eth_sendRawTransaction; returns the transaction hash. A node refusal (nonce too low, underpriced,
    // insufficient funds) is Unavailable "tx_rejected" with the node's message.
    common::Result<std::string> SendRawTransaction(common::ByteView raw);

    // Polls for the receipt until `timeout` (first after 2 ms, backing off to `poll`); Timeout
    // "tx_receipt_timeout" if none.
    common::Result<Receipt> WaitForReceipt(const std::string& tx_hash, std::chrono::milliseconds timeout,
                                           std::chrono::milliseconds poll = std::chrono::milliseconds(50));
    // The same for several transactions of which at most one can be mined (a write and its
    // replacements, one nonce): the first receipt found, its tx_hash saying whose. The timeout
    // error names the last hash.
    common::Result<Receipt> WaitForAnyReceipt(const std::vector<std::string>& tx_hashes,
                                              std::chrono::milliseconds timeout,
                                              std::chrono::milliseconds poll = std::chrono::milliseconds(50));

    // Whether the node knows the transaction at all (eth_getTransactionByHash: in its pool or mined).
    common::Result<bool> TransactionKnown(const std::string& tx_hash);

    // eth_getLogs for `address` over [from_block, to_block]; with `topics`, only logs whose first
    // topics equal them (topic 0 = the event's signature hash, then the indexed arguments).
    common::Result<std::vector<LogEntry>> GetLogs(const common::Address20& address, std::uint64_t from_block,
                                                  std::uint64_t to_block, const std::vector<common::Hash32>& topics = {});

private:
    // One eth_getTransactionReceipt: the receipt, or nullopt while there is none.
    common::Result<std::optional<Receipt>> ReceiptOf(const std::string& tx_hash);
    common::Result<std::uint64_t> QuantityCall(std::string_view method, std::string_view params);
    RpcClient& m_rpc;
};

}  // namespace sigil::workers
