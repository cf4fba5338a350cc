#include "common/key_derivation.h"

#include <secp256k1.h>

#include "common/hkdf.h"
#include "common/keccak.h"

namespace sigil::common {
namespace {

// Attempt 0 plus one per counter byte value.
constexpr int MAX_ATTEMPTS = 257;

Error InvalidRoot() { return MakeError(ErrorKind::Internal, "invalid_root_key", "root key must be 32 bytes"); }
Error DerivationFailed() {
    return MakeError(ErrorKind::Internal, "key_derivation_failed", "key derivation failed");
}

// Labels and fields concatenated; the buffer holds no secret (only public ids and hashes).
Bytes Info(std::string_view label, ByteView a = {}, ByteView b = {}) {
    Bytes info = ToBytes(label);
    info.insert(info.end(), a.begin(), a.end());
    info.insert(info.end(), b.begin(), b.end());
    return info;
}

Result<SecretBytes> DeriveOnce(const SecretBytes& root, ByteView info) {
    auto key = HkdfSha256(root.view(), AsBytes(KEY_DERIVATION_SALT), info, DERIVED_KEY_SIZE);
    if (!key.ok()) return DerivationFailed();
    return key;
}

Result<SecretBytes> DeriveScalar(const SecretBytes& root, ByteView info) {
    return detail::DeriveReduced(root, info, &IsValidSecp256k1Scalar);
}

// The receipt key's reduction, under its own salt (the counter rule as DeriveReduced's).
Result<SecretBytes> DeriveReceiptScalar(const SecretBytes& root) {
    if (root.size() != ROOT_KEY_SIZE) return InvalidRoot();
    Bytes info = ToBytes(std::string_view("receipt"));
    for (int attempt = 0; attempt < MAX_ATTEMPTS; ++attempt) {
        if (attempt > 0) {
            if (attempt > 1) info.pop_back();
            info.push_back(static_cast<std::uint8_t>(attempt - 1));
        }
        auto key = HkdfSha256(root.view(), AsBytes(RECEIPT_KEY_SALT), info, DERIVED_KEY_SIZE);
        if (!key.ok()) return DerivationFailed();
        if (IsValidSecp256k1Scalar(key->view())) return key;
    }
    return DerivationFailed();
}

}  // namespace

bool IsValidSecp256k1Scalar(ByteView key) {
    if (key.size() != 32) return false;
    // The static context suffices: seckey_verify needs no precomputed tables.
    return secp256k1_ec_seckey_verify(secp256k1_context_static, key.data()) == 1;
}

namespace detail {

Result<SecretBytes> DeriveReduced(const SecretBytes& root, ByteView info, ScalarAcceptFn accept) {
    if (root.size() != ROOT_KEY_SIZE) return InvalidRoot();
    Bytes attempt_info(info.begin(), info.end());
    for (int attempt = 0; attempt < MAX_ATTEMPTS; ++attempt) {
        if (attempt > 0) {
            if (attempt > 1) attempt_info.pop_back();
            attempt_info.push_back(static_cast<std::uint8_t>(attempt - 1));
        }
        auto key = DeriveOnce(root, attempt_info);
        if (!key.ok()) return key;
        if (accept(key->view())) return key;
    }
    return DerivationFailed();
}

}  // namespace detail

Result<SecretBytes> DerivePkpSigningKey(const SecretBytes& root, const Hash32& account_hash, const Hash32& path) {
    return DeriveScalar(root, Info("sign", account_hash, path));
}

Result<SecretBytes> DerivePkpEncryptionKey(const SecretBytes& root, const Hash32& account_hash, const Hash32& path) {
    if (root.size() != ROOT_KEY_SIZE) return InvalidRoot();
    return DeriveOnce(root, Info("encrypt", account_hash, path));
}

Result<SecretBytes> DeriveActionKey(const SecretBytes& root, std::string_view cid) {
    const Hash32 cid_hash = Keccak256Hash(cid);
    return DeriveScalar(root, Info("action", cid_hash));
}

Result<SecretBytes> DerivePayerKey(const SecretBytes& root, std::uint32_t index) {
    const std::uint8_t be[4] = {static_cast<std::uint8_t>(index >> 24), static_cast<std::uint8_t>(index >> 16),
                                static_cast<std::uint8_t>(index >> 8), static_cast<std::uint8_t>(index)};
    return DeriveScalar(root, Info("payer", be));
}

Result<SecretBytes> DeriveAdminPayerKey(const SecretBytes& root) { return DeriveScalar(root, Info("admin-payer")); }

Result<SecretBytes> DeriveReceiptKey(const SecretBytes& root) { return DeriveReceiptScalar(root); }

}  // namespace sigil::common
