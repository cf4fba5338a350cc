// A TxSigner holding its key in this process: for tests and tools only. The service's API payer
// wallets are signed for by keyd, which never hands the key out.
#pragma once

#include "common/eth_tx.h"
#include "common/secp256k1.h"
#include "workers/chain/tx_sender.h"

namespace sigil::workers {

class LocalKeySigner final : public TxSigner {
public:
    explicit LocalKeySigner(common::PrivateKey key) : m_key(std::move(key)), m_address(m_key.Address()) {}

    common::Address20 Address() const override { return m_address; }
    common::Result<common::Bytes> SignTransaction(const Fields& fields) override;

private:
    common::PrivateKey m_key;
    common::Address20 m_address;
};

// Builds the EIP-1559 transaction for `fields` (shared with keyd's signer so both sign the same thing).
common::Eip1559Tx MakeEip1559Tx(const TxSigner::Fields& fields);

// Signs `tx` with `key`: the raw bytes for eth_sendRawTransaction.
common::Result<common::Bytes> SignEip1559(const common::PrivateKey& key, const common::Eip1559Tx& tx);

}  // namespace sigil::workers
