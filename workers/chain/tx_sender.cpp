#include "workers/chain/tx_sender.h"

#include "common/activity.h"

namespace sigil::workers {

TxSender::TxSender(EthClient& eth, TxSigner& signer, TxSenderOptions options)
    : m_eth(eth), m_signer(signer), m_options(options) {}

common::Result<std::uint64_t> TxSender::NextNonce() {
    if (!m_next_nonce) {
        auto n = m_eth.PendingNonce(m_signer.Address());
        if (!n.ok()) return n.error();
        m_next_nonce = *n;
    }
    return *m_next_nonce;
}

common::Result<Receipt> TxSender::Send(const common::Address20& to, common::ByteView data, CallOutcome* revert) {
    auto r = TrySend(to, data, revert);
    // Any failure, even before broadcasting (node down, a refusal to sign), may mean the node's view
    // has changed (a restarted node, a dropped pool): the next send asks the node for the nonce.
    if (!r.ok()) Resync();
    return r;
}

common::Result<Receipt> TxSender::TrySend(const common::Address20& to, common::ByteView data, CallOutcome* revert) {
    CallOutcome local_revert;
    CallOutcome* rv = revert != nullptr ? revert : &local_revert;
    auto gas = m_eth.EstimateGas(m_signer.Address(), to, data, rv);
    if (!gas.ok()) return gas.error();
    auto fees = m_eth.QuoteFees();
    if (!fees.ok()) return fees.error();
    auto nonce = NextNonce();
    if (!nonce.ok()) return nonce.error();

    TxSigner::Fields f;
    f.chain_id = m_options.chain_id;
    f.nonce = *nonce;
    f.max_priority_fee_per_gas = fees->max_priority_fee_per_gas;
    f.max_fee_per_gas = fees->max_fee_per_gas;
    f.gas_limit = *gas + *gas * m_options.gas_margin_percent / 100;
    f.to = to;
    f.data.assign(data.begin(), data.end());
    auto raw = m_signer.SignTransaction(f);
    if (!raw.ok()) return raw.error();

    auto hash = m_eth.SendRawTransaction(*raw);
    if (!hash.ok()) return hash.error();
    m_next_nonce = *nonce + 1;
    const common::ActivityScope activity(common::Activity::Receipt);
    auto receipt = m_eth.WaitForReceipt(*hash, m_options.receipt_timeout);
    if (!receipt.ok()) {
        // Broadcast, outcome unknown: the hash lets the caller (and a retry) follow it up.
        common::Error e = receipt.error();
        e.tx_hash = *hash;
        return e;
    }
    if (!receipt->success) {
        return common::MakeError(common::ErrorKind::Conflict, "tx_reverted",
                                 "the transaction was mined but reverted: " + receipt->tx_hash);
    }
    return receipt;
}

common::Result<TxSender::Outcome> TxSender::Lookup(const std::string& tx_hash) {
    auto receipt = m_eth.WaitForReceipt(tx_hash, std::chrono::milliseconds(0));
    if (receipt.ok()) return Outcome{Outcome::State::Mined, std::move(receipt).value()};
    if (receipt.error().code != "tx_receipt_timeout") return receipt.error();
    SIGIL_TRY(known, m_eth.TransactionKnown(tx_hash));
    return Outcome{*known ? Outcome::State::Pending : Outcome::State::Unknown, {}};
}

}  // namespace sigil::workers
