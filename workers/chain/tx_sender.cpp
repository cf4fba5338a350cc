#include "workers/chain/tx_sender.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/activity.h"
#include "common/log.h"

namespace sigil::workers {
namespace {

// `v` raised by `percent` (never under the 10% nodes require to replace), rounded up.
std::uint64_t Raise(std::uint64_t v, unsigned percent) {
    const std::uint64_t factor = 100 + std::min(std::max(percent, 10u), 1000u);
    if (v > (UINT64_MAX - 99) / factor) return UINT64_MAX;
    return std::max((v * factor + 99) / 100, v + 1);
}

// Wallets passed over because an earlier write's transaction still waits in the pool, before the
// write takes one of them anyway.
constexpr int MAX_PASSED = 3;

}  // namespace

TxSigner::Fields BumpedFees(const TxSigner::Fields& sent, const FeeQuote& now, unsigned bump_percent) {
    TxSigner::Fields f = sent;
    f.max_fee_per_gas = std::max(Raise(sent.max_fee_per_gas, bump_percent), now.max_fee_per_gas);
    f.max_priority_fee_per_gas = std::max(Raise(sent.max_priority_fee_per_gas, bump_percent), now.max_priority_fee_per_gas);
    f.max_fee_per_gas = std::max(f.max_fee_per_gas, f.max_priority_fee_per_gas);
    return f;
}

TxSender::TxSender(EthClient& eth, TxSigner& signer, TxSenderOptions options)
    : m_eth(eth), m_signer(&signer), m_options(options) {}

TxSender::TxSender(EthClient& eth, PayerSource& payers, TxSenderOptions options)
    : m_eth(eth), m_payers(&payers), m_options(options) {}

common::Result<std::uint64_t> TxSender::NextNonce() {
    if (!m_next_nonce) {
        auto n = m_eth.PendingNonce(m_signer->Address());
        if (!n.ok()) return n.error();
        m_next_nonce = *n;
    }
    return *m_next_nonce;
}

common::Result<Receipt> TxSender::Send(const common::Address20& to, common::ByteView data, CallOutcome* revert) {
    if (m_payers != nullptr) return SendLeased(to, data, revert);
    auto nonce = NextNonce();
    auto r = nonce.ok() ? TrySend(*m_signer, *nonce, to, data, revert) : common::Result<Receipt>(nonce.error());
    // Any failure, even before broadcasting (node down, a refusal to sign), may mean the node's view
    // has changed (a restarted node, a dropped pool): the next send asks the node for the nonce.
    if (r.ok()) {
        m_next_nonce = *nonce + 1;
    } else {
        Resync();
    }
    return r;
}

common::Result<Receipt> TxSender::SendLeased(const common::Address20& to, common::ByteView data, CallOutcome* revert) {
    // The nonce is the node's pending count read while the wallet is held: the node knows every
    // transaction of the wallet in its pool, including one a worker killed mid-write sent, or one
    // dropped since, which a nonce kept in shared memory could not. A wallet with a transaction
    // still pending from an earlier write (one that timed out) is passed over while another is free,
    // so the new write does not queue behind it.
    struct Candidate {
        std::unique_ptr<PayerSource::Held> held;
        std::uint64_t nonce;
    };
    std::vector<Candidate> passed;
    std::optional<Candidate> chosen;
    for (int tries = 0; tries <= MAX_PASSED && !chosen; ++tries) {
        auto next = m_payers->Acquire();
        if (!next.ok()) {
            if (passed.empty()) return next.error();
            break;
        }
        const common::Address20 from = (*next)->Signer().Address();
        SIGIL_TRY(pending, m_eth.PendingNonce(from));
        SIGIL_TRY(latest, m_eth.LatestNonce(from));
        Candidate c{std::move(next).value(), *pending};
        if (*pending <= *latest) {
            chosen = std::move(c);
        } else {
            passed.push_back(std::move(c));
        }
    }
    if (!chosen) chosen = std::move(passed.front());
    passed.clear();  // the others go back before the write waits for its receipt
    return TrySend(chosen->held->Signer(), chosen->nonce, to, data, revert);
}

common::Result<Receipt> TxSender::TrySend(TxSigner& signer, std::uint64_t nonce, const common::Address20& to,
                                          common::ByteView data, CallOutcome* revert) {
    CallOutcome local_revert;
    CallOutcome* rv = revert != nullptr ? revert : &local_revert;
    auto gas = m_eth.EstimateGas(signer.Address(), to, data, rv);
    if (!gas.ok()) return gas.error();
    auto fees = m_eth.QuoteFees();
    if (!fees.ok()) return fees.error();

    TxSigner::Fields f;
    f.chain_id = m_options.chain_id;
    f.nonce = nonce;
    f.max_priority_fee_per_gas = fees->max_priority_fee_per_gas;
    f.max_fee_per_gas = fees->max_fee_per_gas;
    f.gas_limit = *gas + *gas * m_options.gas_margin_percent / 100;
    f.to = to;
    f.data.assign(data.begin(), data.end());
    auto raw = signer.SignTransaction(f);
    if (!raw.ok()) return raw.error();

    auto hash = m_eth.SendRawTransaction(*raw);
    if (!hash.ok()) return hash.error();
    const common::ActivityScope activity(common::Activity::Receipt);
    auto receipt = AwaitMined(signer, std::move(f), *hash);
    if (!receipt.ok()) return receipt.error();
    if (!receipt->success) {
        return common::MakeError(common::ErrorKind::Conflict, "tx_reverted",
                                 "the transaction was mined but reverted: " + receipt->tx_hash);
    }
    return receipt;
}

common::Result<Receipt> TxSender::AwaitMined(TxSigner& signer, TxSigner::Fields fields, std::string hash) {
    using std::chrono::milliseconds;
    const auto deadline = std::chrono::steady_clock::now() + m_options.receipt_timeout;
    // The transaction is out: waiting and replacing get the write's own timeout, not the request's
    // chain budget (a real chain's block time is seconds).
    RpcClient::ExtendedDeadline extended(m_eth.Rpc(), deadline);
    std::vector<std::string> hashes{std::move(hash)};
    for (;;) {
        const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
        const auto slice = m_options.replace_after.count() > 0 ? std::min(left, m_options.replace_after) : left;
        auto receipt = m_eth.WaitForAnyReceipt(hashes, std::max(slice, milliseconds(0)));
        if (receipt.ok()) return receipt;
        if (receipt.error().code != "tx_receipt_timeout" || std::chrono::steady_clock::now() >= deadline) {
            // Broadcast, outcome unknown: the hash lets the caller (and a retry) follow it up.
            common::Error e = receipt.error();
            e.tx_hash = hashes.back();
            return e;
        }
        // Not mined in replace_after (fees below what blocks take now, or a node that lost it): the
        // same nonce again with raised fees; whichever of the hashes is mined settles the write.
        auto quote = m_eth.QuoteFees();
        fields = BumpedFees(fields, quote.ok() ? *quote : FeeQuote{}, m_options.replace_bump_percent);
        auto raw = signer.SignTransaction(fields);
        auto sent = raw.ok() ? m_eth.SendRawTransaction(*raw) : common::Result<std::string>(raw.error());
        if (sent.ok()) {
            ++m_replacements;
            common::LogWarn("relayed write " + hashes.back() + " not mined after " +
                            std::to_string(m_options.replace_after.count()) + " ms: replaced by " + *sent +
                            " (nonce " + std::to_string(fields.nonce) + ", max fee " +
                            std::to_string(fields.max_fee_per_gas) + ")");
            hashes.push_back(std::move(sent).value());
        } else {
            // Refused (e.g. "nonce too low": the earlier one was just mined): keep waiting for those sent.
            common::LogWarn("relayed write " + hashes.back() + " not replaced: " + sent.error().message);
        }
    }
}

common::Result<TxSender::Outcome> TxSender::Lookup(const std::string& tx_hash) {
    auto receipt = m_eth.WaitForReceipt(tx_hash, std::chrono::milliseconds(0));
    if (receipt.ok()) return Outcome{Outcome::State::Mined, std::move(receipt).value()};
    if (receipt.error().code != "tx_receipt_timeout") return receipt.error();
    SIGIL_TRY(known, m_eth.TransactionKnown(tx_hash));
    return Outcome{*known ? Outcome::State::Pending : Outcome::State::Unknown, {}};
}

}  // namespace sigil::workers
