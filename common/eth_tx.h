// Ethereum transactions: EIP-1559 (type 0x02), legacy (Homestead and EIP-155) and EIP-2930 (type
// 0x01, empty access list) signing payloads, hashes and signed encodings.
// Signing itself (secp256k1) lives elsewhere: these functions take and produce bytes only.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/uint256.h"

namespace sigil::common {

inline constexpr std::uint8_t EIP1559_TX_TYPE = 0x02;
inline constexpr std::uint8_t EIP2930_TX_TYPE = 0x01;

struct AccessListEntry {
    Address20 address{};
    std::vector<Hash32> storage_keys;
    friend bool operator==(const AccessListEntry&, const AccessListEntry&) = default;
};

struct Eip1559Tx {
    std::uint64_t chain_id = 0;
    std::uint64_t nonce = 0;
    Uint256 max_priority_fee_per_gas;
    Uint256 max_fee_per_gas;
    std::uint64_t gas_limit = 0;
    std::optional<Address20> to;  // nullopt: contract creation (encoded as the empty string)
    Uint256 value;
    Bytes data;
    std::vector<AccessListEntry> access_list;
    friend bool operator==(const Eip1559Tx&, const Eip1559Tx&) = default;
};

// 0x02 || rlp([chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value, data, accessList]).
Bytes SigningPayload(const Eip1559Tx& tx);
// keccak256(SigningPayload(tx)): the digest the sender signs.
Hash32 SigningHash(const Eip1559Tx& tx);

// The raw signed transaction for eth_sendRawTransaction:
// 0x02 || rlp([...the nine fields..., yParity, r, s]); r and s are 32-byte big-endian and are written
// as minimal integers. Errors: InvalidInput "tx_bad_signature" when y_parity > 1 or r or s is zero.
Result<Bytes> EncodeSigned(const Eip1559Tx& tx, std::uint8_t y_parity, const Hash32& r, const Hash32& s);

// keccak256 of the raw signed bytes: the transaction hash nodes report.
Hash32 TxHash(ByteView raw_signed);

// Parse an unsigned EIP-1559 payload (as produced by SigningPayload), so a signer can check what it
// signs (e.g. the `to` address) instead of trusting a separate description.
// Errors: InvalidInput "tx_malformed" (wrong type byte, not canonical RLP, wrong field count or shapes,
// integers out of range, `to` neither empty nor 20 bytes).
Result<Eip1559Tx> DecodeSigningPayload(ByteView payload);

// Pre-EIP-1559 transaction (legacy, and EIP-2930 with an empty access list), as actions sign them
// with ethers.
struct LegacyTx {
    std::uint64_t nonce = 0;
    Uint256 gas_price;
    std::uint64_t gas_limit = 0;
    std::optional<Address20> to;
    Uint256 value;
    Bytes data;
};

// keccak256(rlp([nonce, gasPrice, gas, to, value, data, chainId, 0, 0])) per EIP-155.
Hash32 LegacyEip155SigningHash(const LegacyTx& tx, std::uint64_t chain_id);

// The digest a legacy transaction's sender signs: LegacyEip155SigningHash when chain_id != 0, else
// the Homestead form keccak256(rlp([nonce, gasPrice, gas, to, value, data])).
Hash32 LegacySigningHash(const LegacyTx& tx, std::uint64_t chain_id);

// The raw signed legacy transaction rlp([nonce, gasPrice, gas, to, value, data, v, r, s]) with
// v = chainId * 2 + 35 + yParity (EIP-155), or 27 + yParity when chain_id is 0, as ethers writes it.
// Errors: InvalidInput "tx_bad_signature" when y_parity > 1 or r or s is zero.
Result<Bytes> EncodeSignedLegacy(const LegacyTx& tx, std::uint64_t chain_id, std::uint8_t y_parity, const Hash32& r,
                                 const Hash32& s);

// EIP-2930 with an empty access list (what ethers picks for a gasPrice without a type):
// 0x01 || rlp([chainId, nonce, gasPrice, gas, to, value, data, []]); its keccak256 is signed.
Bytes Eip2930SigningPayload(const LegacyTx& tx, std::uint64_t chain_id);
// 0x01 || rlp([...the eight fields..., yParity, r, s]). Errors: as EncodeSignedLegacy.
Result<Bytes> EncodeSignedEip2930(const LegacyTx& tx, std::uint64_t chain_id, std::uint8_t y_parity, const Hash32& r,
                                  const Hash32& s);

}  // namespace sigil::common
