// AES-256-GCM sealing for PKP Encrypt/Decrypt, in the DESIGN.md section 2 ciphertext format.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::common {

constexpr std::size_t AES_GCM_KEY_SIZE = 32;
constexpr std::size_t AES_GCM_NONCE_SIZE = 12;
constexpr std::size_t AES_GCM_TAG_SIZE = 16;
// Largest plaintext Seal accepts: OpenSSL's update length is an int.
constexpr std::size_t AES_GCM_MAX_PLAINTEXT = (std::size_t{1} << 30);

// Encrypt `plaintext` under `key` (32 bytes) with a fresh random 12-byte nonce and no AAD.
// Out: lowercase hex (no 0x) of nonce(12) || ciphertext || tag(16); the ciphertext is as long
//      as the plaintext, so the text is 2 * (28 + plaintext.size()) characters.
// Random nonces are safe for this use: keys are per PKP and 2^32 messages under one key keep
// the collision chance below 2^-32 (NIST SP 800-38D section 8.3).
// Errors: Internal "invalid_key" if key is not 32 bytes; TooLarge "plaintext_too_large" above
//         AES_GCM_MAX_PLAINTEXT; Internal "encrypt_failed" if OpenSSL fails.
Result<std::string> EncryptToHex(const SecretBytes& key, ByteView plaintext);

// Decrypt text made by EncryptToHex (hex digits of either case, optional 0x prefix).
// Out: the plaintext, in self-wiping memory.
// Errors: Internal "invalid_key" if key is not 32 bytes; otherwise InvalidInput "decrypt_failed"
//         with one fixed message whether the hex is malformed, too short for nonce and tag, or
//         the tag does not verify (wrong key, tampered data), so callers cannot probe which.
Result<SecretBytes> DecryptFromHex(const SecretBytes& key, std::string_view hex);

// Low-level AES-256-GCM encryption with an explicit nonce and additional authenticated data,
// for known-answer tests and callers that manage nonces themselves. Never reuse a nonce
// under one key.
// In:  key 32 bytes, nonce exactly 12 bytes, aad and plaintext any length (plaintext up to
//      AES_GCM_MAX_PLAINTEXT, aad up to the same).
// Out: ciphertext || tag(16).
// Errors: Internal "invalid_key" / "invalid_nonce" for wrong sizes; TooLarge
//         "plaintext_too_large"; Internal "encrypt_failed" if OpenSSL fails.
Result<Bytes> AesGcmSeal(const SecretBytes& key, ByteView nonce, ByteView aad, ByteView plaintext);

// Low-level AES-256-GCM decryption: the inverse of AesGcmSeal.
// In:  key 32 bytes, nonce exactly 12 bytes, aad, sealed = ciphertext || tag(16).
// Out: the plaintext, in self-wiping memory; nothing is released unless the tag verifies.
// Errors: Internal "invalid_key" / "invalid_nonce" for wrong sizes; InvalidInput
//         "decrypt_failed" if sealed is shorter than the tag, too large, or does not verify.
Result<SecretBytes> AesGcmOpen(const SecretBytes& key, ByteView nonce, ByteView aad, ByteView sealed);

}  // namespace sigil::common
