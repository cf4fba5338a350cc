// secp256k1 keys, recoverable ECDSA signatures, Ethereum addresses (EIP-55) and EIP-191 messages.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::common {

// r (32, big-endian) || s (32, big-endian) || v (1).
using Signature65 = std::array<std::uint8_t, 65>;

// A valid secp256k1 public key (a point on the curve, never the point at infinity).
class PublicKey {
public:
    // Parse a SEC1 serialization: 65 bytes uncompressed (0x04 || X || Y) or 33 bytes
    // compressed (0x02/0x03 || X). Hybrid encodings (0x06/0x07) are refused.
    // Errors: InvalidInput "invalid_public_key" for any other length or a point not on the curve.
    static Result<PublicKey> Parse(ByteView serialized);

    // 65 bytes: 0x04 || X || Y.
    const std::array<std::uint8_t, 65>& Uncompressed() const { return m_uncompressed; }
    // 33 bytes: 0x02 (Y even) or 0x03 (Y odd) || X.
    std::array<std::uint8_t, 33> Compressed() const;
    // The Ethereum address: the last 20 bytes of keccak256(X || Y).
    Address20 Address() const;

    bool operator==(const PublicKey& other) const { return m_uncompressed == other.m_uncompressed; }

private:
    explicit PublicKey(const std::array<std::uint8_t, 65>& uncompressed) : m_uncompressed(uncompressed) {}
    friend class PrivateKey;
    friend Result<PublicKey> RecoverPublicKey(const Hash32& digest, ByteView signature);

    std::array<std::uint8_t, 65> m_uncompressed;
};

// A secp256k1 private key: 32 big-endian bytes encoding an integer in [1, n-1], held in
// locked, self-wiping memory. Move-only.
class PrivateKey {
public:
    // Copy 32 bytes into a key. The caller should wipe its own copy afterwards.
    // Errors: InvalidInput "invalid_private_key" when the length is not 32, or the value is 0
    // or >= the curve order n.
    static Result<PrivateKey> FromBytes(ByteView bytes);

    // A fresh key from OpenSSL's RAND_bytes (rejection-sampled, so uniform in [1, n-1]).
    // Aborts the process if the generator fails (see common/random.h).
    static PrivateKey Generate();

    // The matching public key. Infallible: the scalar was validated on construction.
    common::PublicKey PublicKey() const;
    // Shorthand for PublicKey().Address().
    Address20 Address() const;
    // The 32 secret bytes. Never copy them into a std::string or a log line.
    const SecretBytes& Secret() const { return m_secret; }

private:
    explicit PrivateKey(SecretBytes secret) : m_secret(std::move(secret)) {}
    SecretBytes m_secret;
};

// Ethereum address helpers -------------------------------------------------------------------

// The address of `key`: last 20 bytes of keccak256(uncompressed[1..64]).
Address20 AddressFromPublicKey(const PublicKey& key);

// EIP-55 mixed-case checksum form: "0x" followed by 40 hex characters, where each letter is
// upper case iff the matching nibble of keccak256(lowercase hex) is >= 8.
std::string ChecksumAddress(const Address20& address);

// Parse "0x" + 40 hex characters. All-lower and all-upper hex are accepted as they are; mixed
// case must match EIP-55 exactly when `require_checksum_if_mixed_case` (the default), because a
// mixed-case address that fails its checksum is almost always a typo.
// Errors: InvalidInput "invalid_address" (missing prefix, wrong length, non-hex, bad checksum).
Result<Address20> ParseAddress(std::string_view text, bool require_checksum_if_mixed_case = true);

// Signatures ------------------------------------------------------------------------------

// Sign a 32-byte digest (RFC 6979 nonce). The result is r || s || v with low s (s <= n/2, as
// libsecp256k1 always produces) and v = recovery id 0 or 1. Infallible for a valid key.
Signature65 SignDigest(const PrivateKey& key, const Hash32& digest);

// Recover the signer's public key from `signature` = r || s || v over `digest`. v may be 0, 1,
// 27 or 28. Refuses a high s (EIP-2: s > n/2), r or s of 0 or >= n, and any other v, so each
// (digest, signer) has one accepted signature encoding per nonce.
// Errors: InvalidInput "invalid_signature" for a wrong length, bad v, high s or out-of-range
// r/s; InvalidInput "signature_recovery_failed" when no public key matches.
Result<PublicKey> RecoverPublicKey(const Hash32& digest, ByteView signature);

// RecoverPublicKey(...).Address(), with the same errors.
Result<Address20> RecoverAddress(const Hash32& digest, ByteView signature);

// EIP-191 (version 0x45, "personal_sign") ---------------------------------------------------

// keccak256("\x19Ethereum Signed Message:\n" || decimal length of message || message).
Hash32 PersonalMessageHash(ByteView message);
inline Hash32 PersonalMessageHash(std::string_view message) { return PersonalMessageHash(AsBytes(message)); }

// SignDigest(key, PersonalMessageHash(message)) with v = 27 or 28, as wallets and ethers emit it.
Signature65 SignPersonalMessage(const PrivateKey& key, ByteView message);

}  // namespace sigil::common
