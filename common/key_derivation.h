// Derivation of every key keyd hands out from the 32-byte root key (DESIGN.md section 2).
// Pure functions: no IO, no randomness. Changing any byte of these rules changes every
// account's keys, so tests/data/hkdf_key_derivation.txt freezes known answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::common {

constexpr std::size_t ROOT_KEY_SIZE = 32;
constexpr std::size_t DERIVED_KEY_SIZE = 32;
// HKDF salt shared by every derivation below (ASCII, no terminator).
constexpr std::string_view KEY_DERIVATION_SALT = "sigil/pkp/v1";
// HKDF salt of the receipt key alone (DeriveReceiptKey).
constexpr std::string_view RECEIPT_KEY_SALT = "sigil/receipt/v1";

// The common rule. Every key is
//     K = HKDF-SHA256(ikm = root, salt = "sigil/pkp/v1", info, 32 bytes)
// where info is an ASCII purpose label followed by fixed-width binary fields, with no
// separators or length prefixes (each label's fields have a fixed width, so no two
// (label, fields) pairs give the same info).
// "Reduced" keys must be secp256k1 private keys, i.e. big-endian integers in [1, n-1] with
// n = FFFFFFFF FFFFFFFF FFFFFFFF FFFFFFFE BAAEDCE6 AF48A03B BFD25E8C D0364141.
// Attempt 0 uses info unchanged; if its output is 0 or >= n, attempt k (k = 1, 2, ..., 256)
// uses info || byte(k - 1), i.e. counter bytes 0x00, 0x01, ... appended, and the first valid
// output is the key. (A retry happens with probability about 2^-128 per key.)
// All functions below:
// In:     root  the root key, exactly ROOT_KEY_SIZE bytes.
// Out:    a 32-byte key in self-wiping memory.
// Errors: Internal "invalid_root_key" if root is not 32 bytes; Internal
//         "key_derivation_failed" if HKDF fails or (never in practice) all 257 attempts are
//         out of range.

// PKP signing key (secp256k1, reduced): info = "sign" || account_hash(32) || path(32).
// account_hash is the owning account's apiKeyHash, so a path registered under another
// account never yields that account's key.
Result<SecretBytes> DerivePkpSigningKey(const SecretBytes& root, const Hash32& account_hash, const Hash32& path);

// PKP encryption key (AES-256-GCM, not reduced: any 32 bytes are a valid AES key):
// info = "encrypt" || account_hash(32) || path(32).
Result<SecretBytes> DerivePkpEncryptionKey(const SecretBytes& root, const Hash32& account_hash, const Hash32& path);

// Action identity key for getActionPrivateKey (secp256k1, reduced):
// info = "action" || keccak256(utf8(cid))(32). The CID text is hashed exactly as given
// (validate and canonicalise it before calling).
Result<SecretBytes> DeriveActionKey(const SecretBytes& root, std::string_view cid);

// API payer wallet number `index` (secp256k1, reduced): info = "payer" || index as 4 bytes
// big-endian.
Result<SecretBytes> DerivePayerKey(const SecretBytes& root, std::uint32_t index);

// The admin payer wallet (secp256k1, reduced): info = "admin-payer" (no other fields).
Result<SecretBytes> DeriveAdminPayerKey(const SecretBytes& root);

// The deployment's receipt key (secp256k1, reduced), which signs run receipts and nothing else
// (common/receipt.h). Its own HKDF salt, RECEIPT_KEY_SALT, and info "receipt": every other key
// above uses KEY_DERIVATION_SALT, so no (label, fields) of theirs can yield it, and it yields none
// of theirs.
Result<SecretBytes> DeriveReceiptKey(const SecretBytes& root);

// True iff `key` is 32 bytes encoding an integer in [1, n-1] (a valid secp256k1 private key).
bool IsValidSecp256k1Scalar(ByteView key);

namespace detail {
// The reduction loop with a caller-chosen acceptance test, so tests can exercise the counter
// rule (which real roots essentially never reach). Production code uses the functions above.
using ScalarAcceptFn = bool (*)(ByteView candidate);
Result<SecretBytes> DeriveReduced(const SecretBytes& root, ByteView info, ScalarAcceptFn accept);
}  // namespace detail

}  // namespace sigil::common
