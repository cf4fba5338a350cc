#include "tests/support/local_signer.h"

#include <algorithm>

namespace sigil::workers {

common::Eip1559Tx MakeEip1559Tx(const TxSigner::Fields& f) {
    common::Eip1559Tx tx;
    tx.chain_id = f.chain_id;
    tx.nonce = f.nonce;
    tx.max_priority_fee_per_gas = common::Uint256::FromUint64(f.max_priority_fee_per_gas);
    tx.max_fee_per_gas = common::Uint256::FromUint64(f.max_fee_per_gas);
    tx.gas_limit = f.gas_limit;
    tx.to = f.to;
    tx.data = f.data;
    return tx;
}

common::Result<common::Bytes> SignEip1559(const common::PrivateKey& key, const common::Eip1559Tx& tx) {
    const common::Signature65 sig = common::SignDigest(key, common::SigningHash(tx));
    common::Hash32 r, s;
    std::copy_n(sig.begin(), 32, r.begin());
    std::copy_n(sig.begin() + 32, 32, s.begin());
    return common::EncodeSigned(tx, sig[64], r, s);
}

common::Result<common::Bytes> LocalKeySigner::SignTransaction(const Fields& fields) {
    return SignEip1559(m_key, MakeEip1559Tx(fields));
}

}  // namespace sigil::workers
