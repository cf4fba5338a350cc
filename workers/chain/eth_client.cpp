#include "workers/chain/eth_client.h"

#include <rapidjson/document.h>

#include <thread>

#include "common/hex.h"
#include "common/json.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::HexEncode;
using common::MakeError;

common::Error Malformed(const char* what) {
    return MakeError(ErrorKind::Unavailable, "rpc_bad_response", std::string("chain node sent a malformed ") + what);
}

std::string CallObject(const std::optional<common::Address20>& from, const common::Address20& to,
                       common::ByteView data) {
    std::string o = "{";
    if (from) o += "\"from\":\"" + HexEncode(*from, true) + "\",";
    o += "\"to\":\"" + HexEncode(to, true) + "\",\"data\":\"" + HexEncode(data, true) + "\"}";
    return o;
}

// Anvil and geth report reverts as code 3 (or -32000/-32015 with "revert" in the text) and put the
// payload in error.data.
bool IsRevert(const RpcReply& r) {
    if (!r.is_error) return false;
    if (r.error_code == 3 || r.revert_data.has_value()) return true;
    return r.error_message.find("revert") != std::string::npos;
}

const rapidjson::Value* Member(const rapidjson::Value& o, const char* name) {
    if (!o.IsObject()) return nullptr;
    auto it = o.FindMember(name);
    return it == o.MemberEnd() ? nullptr : &it->value;
}

common::Result<std::uint64_t> QuantityMember(const rapidjson::Value& o, const char* name) {
    const auto* v = Member(o, name);
    if (v == nullptr || !v->IsString()) return Malformed(name);
    return ParseQuantity(v->GetString());
}

common::Result<LogEntry> ParseLog(const rapidjson::Value& item) {
    LogEntry e;
    const auto* addr = Member(item, "address");
    const auto* topics = Member(item, "topics");
    const auto* data = Member(item, "data");
    auto block = QuantityMember(item, "blockNumber");
    if (addr == nullptr || !addr->IsString() || topics == nullptr || !topics->IsArray() || data == nullptr ||
        !data->IsString() || !block.ok()) {
        return Malformed("log entry");
    }
    e.address = addr->GetString();
    for (const auto& t : topics->GetArray()) {
        if (!t.IsString()) return Malformed("topic");
        auto bytes = common::HexDecodeExact(t.GetString(), 32, common::HexPrefix::Required);
        if (!bytes.ok()) return Malformed("topic");
        common::Hash32 h;
        std::copy(bytes->begin(), bytes->end(), h.begin());
        e.topics.push_back(h);
    }
    auto d = common::HexDecode(data->GetString(), common::HexPrefix::Required);
    if (!d.ok()) return Malformed("log data");
    e.data = std::move(d).value();
    e.block_number = *block;
    if (const auto* tx = Member(item, "transactionHash"); tx != nullptr && tx->IsString()) e.tx_hash = tx->GetString();
    if (auto index = QuantityMember(item, "logIndex"); index.ok()) e.log_index = *index;
    return e;
}

}  // namespace

common::Result<std::uint64_t> EthClient::QuantityCall(std::string_view method, std::string_view params) {
    auto r = m_rpc.CallForResult(method, params);
    if (!r.ok()) return r.error();
    auto s = ResultString(*r);
    if (!s.ok()) return s.error();
    return ParseQuantity(*s);
}

common::Result<std::uint64_t> EthClient::ChainId() { return QuantityCall("eth_chainId", "[]"); }
common::Result<std::uint64_t> EthClient::BlockNumber() { return QuantityCall("eth_blockNumber", "[]"); }

common::Result<CallOutcome> EthClient::Call(const common::Address20& to, common::ByteView data,
                                            const std::optional<common::Address20>& from) {
    auto reply = m_rpc.Call("eth_call", "[" + CallObject(from, to, data) + ",\"latest\"]");
    if (!reply.ok()) return reply.error();
    CallOutcome out;
    if (reply->is_error) {
        if (!IsRevert(*reply)) {
            return MakeError(ErrorKind::Unavailable, "rpc_error", "eth_call failed: " + reply->error_message);
        }
        out.reverted = true;
        out.data = reply->revert_data.value_or(common::Bytes{});
        return out;
    }
    auto s = ResultString(reply->result_json);
    if (!s.ok()) return s.error();
    auto bytes = common::HexDecode(*s, common::HexPrefix::Required);
    if (!bytes.ok()) return Malformed("eth_call result");
    out.data = std::move(bytes).value();
    return out;
}

common::Result<std::uint64_t> EthClient::EstimateGas(const common::Address20& from, const common::Address20& to,
                                                     common::ByteView data, CallOutcome* revert) {
    auto reply = m_rpc.Call("eth_estimateGas", "[" + CallObject(from, to, data) + "]");
    if (!reply.ok()) return reply.error();
    if (reply->is_error) {
        if (IsRevert(*reply) && revert != nullptr) {
            revert->reverted = true;
            revert->data = reply->revert_data.value_or(common::Bytes{});
            return MakeError(ErrorKind::InvalidInput, "execution_reverted", "the transaction would revert");
        }
        return MakeError(ErrorKind::Unavailable, "rpc_error", "eth_estimateGas failed: " + reply->error_message);
    }
    auto s = ResultString(reply->result_json);
    if (!s.ok()) return s.error();
    return ParseQuantity(*s);
}

common::Result<std::uint64_t> EthClient::PendingNonce(const common::Address20& address) {
    return QuantityCall("eth_getTransactionCount", "[\"" + HexEncode(address, true) + "\",\"pending\"]");
}

common::Result<std::uint64_t> EthClient::LatestNonce(const common::Address20& address) {
    return QuantityCall("eth_getTransactionCount", "[\"" + HexEncode(address, true) + "\",\"latest\"]");
}

common::Result<bool> EthClient::TransactionKnown(const std::string& tx_hash) {
    auto r = m_rpc.CallForResult("eth_getTransactionByHash", "[" + common::JsonQuote(tx_hash) + "]");
    if (!r.ok()) return r.error();
    return *r != "null";
}

common::Result<FeeQuote> EthClient::QuoteFees() {
    auto block = m_rpc.CallForResult("eth_getBlockByNumber", "[\"latest\",false]");
    if (!block.ok()) return block.error();
    rapidjson::Document doc;
    doc.Parse(block->data(), block->size());
    if (doc.HasParseError() || !doc.IsObject()) return Malformed("block");
    auto base = QuantityMember(doc, "baseFeePerGas");
    if (!base.ok()) return base.error();
    auto tip = QuantityCall("eth_maxPriorityFeePerGas", "[]");
    if (!tip.ok()) return tip.error();
    FeeQuote q;
    q.max_priority_fee_per_gas = *tip;
    q.max_fee_per_gas = 2 * *base + *tip;
    return q;
}

common::Result<std::string> EthClient::SendRawTransaction(common::ByteView raw) {
    // A resend of the same bytes is harmless (same hash), so one retry on a transport failure is safe;
    // RpcClient treats this as non-idempotent and the nonce manager resyncs on any failure instead.
    auto reply = m_rpc.Call("eth_sendRawTransaction", "[\"" + HexEncode(raw, true) + "\"]", false);
    if (!reply.ok()) return reply.error();
    if (reply->is_error) {
        return MakeError(ErrorKind::Unavailable, "tx_rejected", "the chain node refused the transaction: " +
                                                                    reply->error_message);
    }
    return ResultString(reply->result_json);
}

common::Result<std::optional<Receipt>> EthClient::ReceiptOf(const std::string& tx_hash) {
    auto r = m_rpc.CallForResult("eth_getTransactionReceipt", "[" + common::JsonQuote(tx_hash) + "]");
    if (!r.ok()) return r.error();
    if (*r == "null") return std::optional<Receipt>();
    rapidjson::Document doc;
    doc.Parse(r->data(), r->size());
    if (doc.HasParseError() || !doc.IsObject()) return Malformed("receipt");
    auto status = QuantityMember(doc, "status");
    auto block = QuantityMember(doc, "blockNumber");
    auto gas = QuantityMember(doc, "gasUsed");
    if (!status.ok() || !block.ok() || !gas.ok()) return Malformed("receipt");
    Receipt receipt{tx_hash, *status == 1, *block, *gas, {}};
    if (const auto* logs = Member(doc, "logs"); logs != nullptr && logs->IsArray()) {
        for (const auto& item : logs->GetArray()) {
            auto e = ParseLog(item);
            if (!e.ok()) return e.error();
            receipt.logs.push_back(std::move(e).value());
        }
    }
    return std::optional<Receipt>(std::move(receipt));
}

common::Result<Receipt> EthClient::WaitForReceipt(const std::string& tx_hash, std::chrono::milliseconds timeout,
                                                  std::chrono::milliseconds poll) {
    return WaitForAnyReceipt({tx_hash}, timeout, poll);
}

common::Result<Receipt> EthClient::WaitForAnyReceipt(const std::vector<std::string>& tx_hashes,
                                                     std::chrono::milliseconds timeout, std::chrono::milliseconds poll) {
    if (tx_hashes.empty()) return MakeError(ErrorKind::Internal, "no_transaction", "no transaction to wait for");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // The transaction is out: its receipt gets the write's own timeout, not the request's chain
    // budget (a real chain's block time is seconds).
    RpcClient::ExtendedDeadline extended(m_rpc, deadline);
    // Start polling fast (a dev node or a fast chain mines at once) and back off to `poll`.
    auto wait = std::min(poll, std::chrono::milliseconds(2));
    for (;;) {
        // Newest first: a replacement is sent because the older one is not being mined.
        for (auto it = tx_hashes.rbegin(); it != tx_hashes.rend(); ++it) {
            auto r = ReceiptOf(*it);
            if (!r.ok()) return r.error();
            if (*r) return std::move(**r);
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return MakeError(ErrorKind::Timeout, "tx_receipt_timeout",
                             "the transaction was not mined in time: " + tx_hashes.back());
        }
        std::this_thread::sleep_for(wait);
        wait = std::min(poll, wait * 2);
    }
}

common::Result<std::vector<LogEntry>> EthClient::GetLogs(const common::Address20& address, std::uint64_t from_block,
                                                         std::uint64_t to_block, const std::vector<common::Hash32>& topics) {
    std::string filter = "[{\"address\":\"" + HexEncode(address, true) + "\",\"fromBlock\":\"" +
                         FormatQuantity(from_block) + "\",\"toBlock\":\"" + FormatQuantity(to_block) + "\"";
    if (!topics.empty()) {
        filter += ",\"topics\":[";
        for (std::size_t i = 0; i < topics.size(); ++i) filter += (i ? ",\"" : "\"") + HexEncode(topics[i], true) + "\"";
        filter += "]";
    }
    auto r = m_rpc.CallForResult("eth_getLogs", filter + "}]");
    if (!r.ok()) return r.error();
    rapidjson::Document doc;
    doc.Parse(r->data(), r->size());
    if (doc.HasParseError() || !doc.IsArray()) return Malformed("log list");
    std::vector<LogEntry> logs;
    for (const auto& item : doc.GetArray()) {
        auto e = ParseLog(item);
        if (!e.ok()) return e.error();
        logs.push_back(std::move(e).value());
    }
    return logs;
}

}  // namespace sigil::workers
