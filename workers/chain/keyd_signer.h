// The TxSigner of the service: an API payer wallet whose key stays in keyd; keyd signs each
// transaction after checking its chain id and recipient, and that the call names the key of the
// request's caller (the WriteCredential sent along).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/secret.h"
#include "keyd/client/keyd_client.h"
#include "workers/chain/payer_leases.h"
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
    // `payer_index` is a payer leased for this write (or keyd::IPC_ADMIN_PAYER); `address` is that
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

// The service's PayerSource: keyd's API payer wallets first..first+leases.Payers()-1 (this instance's
// share, common/payer_range.h), one leased per write from the pool-wide table, signed for by keyd
// under the request's credential.
class KeydPayers final : public PayerSource {
public:
    // `wait`: how long a write waits for a free payer before 503 overloaded. All references outlive this.
    // `first`: keyd's index of the share's first wallet (lease i signs as keyd's payer first + i).
    KeydPayers(KeydClient& keyd, PayerLeases& leases, std::uint32_t first, const WriteCredential& credential,
               std::chrono::milliseconds wait)
        : m_keyd(keyd), m_leases(leases), m_first(first), m_credential(credential), m_wait(wait) {}

    common::Result<std::unique_ptr<Held>> Acquire() override {
        // The addresses come from keyd once; keyd refuses more payers than it was started with.
        if (m_addresses.empty()) {
            const std::uint32_t needed = m_first + m_leases.Payers();
            auto list = m_keyd.GetPayers(needed);
            if (!list.ok()) return list.error();
            if (list->payers.size() < needed) {
                return common::MakeError(common::ErrorKind::Internal, "keyd_payers_short",
                                         "keyd has fewer API payers than [chain] payers");
            }
            m_addresses.assign(list->payers.begin() + m_first, list->payers.begin() + needed);
        }
        auto lease = m_leases.Acquire(m_wait);
        if (!lease.ok()) return lease.error();
        const std::uint32_t index = lease->Index();
        return std::unique_ptr<Held>(new Payer(std::move(lease).value(),
                                               KeydPayerSigner(m_keyd, m_first + index, m_addresses.at(index), m_credential)));
    }

private:
    class Payer final : public Held {
    public:
        Payer(PayerLeases::Lease lease, KeydPayerSigner signer) : m_lease(std::move(lease)), m_signer(std::move(signer)) {}
        TxSigner& Signer() override { return m_signer; }

    private:
        PayerLeases::Lease m_lease;
        KeydPayerSigner m_signer;
    };

    KeydClient& m_keyd;
    PayerLeases& m_leases;
    std::uint32_t m_first;
    const WriteCredential& m_credential;
    std::chrono::milliseconds m_wait;
    std::vector<common::Address20> m_addresses;
};

}  // namespace sigil::workers
