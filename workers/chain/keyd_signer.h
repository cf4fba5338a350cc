// The TxSigner of the service: an API payer wallet whose key stays in keyd; keyd signs each
// transaction after checking its chain id and recipient.
#pragma once

#include <cstdint>

#include "keyd/client/keyd_client.h"
#include "workers/chain/tx_sender.h"

namespace sigil::workers {

class KeydPayerSigner final : public TxSigner {
public:
    // `payer_index` is the worker slot's own payer (or keyd::IPC_ADMIN_PAYER); `address` is that
    // payer's address as GetPayers reported it.
    KeydPayerSigner(KeydClient& keyd, std::uint64_t payer_index, const common::Address20& address)
        : m_keyd(keyd), m_payer_index(payer_index), m_address(address) {}

    common::Address20 Address() const override { return m_address; }

    common::Result<common::Bytes> SignTransaction(const Fields& f) override {
        keyd::PayerTxRequest request;
        request.payer = m_payer_index;
        request.chain_id = f.chain_id;
        request.nonce = f.nonce;
        request.max_priority_fee_per_gas = f.max_priority_fee_per_gas;
        request.max_fee_per_gas = f.max_fee_per_gas;
        request.gas_limit = f.gas_limit;
        request.to = f.to;
        request.data = f.data;
        return m_keyd.SignPayerTx(request);
    }

private:
    KeydClient& m_keyd;
    std::uint64_t m_payer_index;
    common::Address20 m_address;
};

}  // namespace sigil::workers
