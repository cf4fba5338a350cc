// The TxSigner of the service: an API payer wallet whose key stays in keyd; keyd signs each
// transaction after checking its chain id and recipient, and that the call names the key of the
// request's caller (the WriteCredential sent along).
#pragma once

#include <cstdint>
#include <optional>

#include "common/secret.h"
#include "keyd/client/keyd_client.h"
#include "workers/chain/tx_sender.h"

namespace sigil::workers {

// What the current request lets this worker write for: the caller's API key exactly as sent (for
// new_account, the key just drawn) and, for a conversion, the new admin's ConvertAccount signature.
// keyd re-checks both against each transaction's calldata (keyd/protocol.md). One request at a time:
// set by authentication, cleared when the next request starts.
struct WriteCredential {
    common::SecretBytes api_key;
    std::optional<keyd::PayerTxRequest::Consent> consent;

    void Clear() {
        api_key = common::SecretBytes();
        consent.reset();
    }
};

class KeydPayerSigner final : public TxSigner {
public:
    // `payer_index` is the worker slot's own payer (or keyd::IPC_ADMIN_PAYER); `address` is that
    // payer's address as GetPayers reported it; `credential` outlives the signer.
    KeydPayerSigner(KeydClient& keyd, std::uint64_t payer_index, const common::Address20& address,
                    const WriteCredential& credential)
        : m_keyd(keyd), m_payer_index(payer_index), m_address(address), m_credential(credential) {}

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
        request.api_key = m_credential.api_key.Clone();
        request.consent = m_credential.consent;
        return m_keyd.SignPayerTx(request);
    }

private:
    KeydClient& m_keyd;
    std::uint64_t m_payer_index;
    common::Address20 m_address;
    const WriteCredential& m_credential;
};

}  // namespace sigil::workers
