#include "common/aes_gcm.h"

#include <climits>

#include <openssl/evp.h>

#include "common/handles.h"
#include "common/hex.h"
#include "common/random.h"

namespace sigil::common {
namespace {

using CipherCtx = CHandle<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>;

Error InvalidKey() { return MakeError(ErrorKind::Internal, "invalid_key", "AES-256-GCM key must be 32 bytes"); }
Error InvalidNonce() { return MakeError(ErrorKind::Internal, "invalid_nonce", "AES-GCM nonce must be 12 bytes"); }
Error EncryptFailed() { return MakeError(ErrorKind::Internal, "encrypt_failed", "AES-GCM encryption failed"); }
Error TooLarge() {
    return MakeError(ErrorKind::TooLarge, "plaintext_too_large", "plaintext is too large to encrypt");
}
// One message for every decryption failure: saying which check failed would help an attacker.
Error DecryptFailed() {
    return MakeError(ErrorKind::InvalidInput, "decrypt_failed", "ciphertext could not be decrypted");
}

// Set up ctx for AES-256-GCM with a 12-byte nonce; encrypt selects the direction.
bool Init(EVP_CIPHER_CTX* ctx, const SecretBytes& key, ByteView nonce, bool encrypt) {
    const int enc = encrypt ? 1 : 0;
    return EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr, enc) == 1 &&
           EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce.size()), nullptr) == 1 &&
           EVP_CipherInit_ex(ctx, nullptr, nullptr, key.data(), nonce.data(), enc) == 1;
}

// Feed the AAD (no output). Empty AAD needs no call.
bool AddAad(EVP_CIPHER_CTX* ctx, ByteView aad) {
    if (aad.empty()) return true;
    int len = 0;
    return EVP_CipherUpdate(ctx, nullptr, &len, aad.data(), static_cast<int>(aad.size())) == 1;
}

}  // namespace

Result<Bytes> AesGcmSeal(const SecretBytes& key, ByteView nonce, ByteView aad, ByteView plaintext) {
    if (key.size() != AES_GCM_KEY_SIZE) return InvalidKey();
    if (nonce.size() != AES_GCM_NONCE_SIZE) return InvalidNonce();
    if (plaintext.size() > AES_GCM_MAX_PLAINTEXT || aad.size() > AES_GCM_MAX_PLAINTEXT) return TooLarge();

    CipherCtx ctx(EVP_CIPHER_CTX_new());
    if (!ctx || !Init(ctx.get(), key, nonce, true) || !AddAad(ctx.get(), aad)) return EncryptFailed();

    Bytes out(plaintext.size() + AES_GCM_TAG_SIZE);
    int len = 0;
    if (!plaintext.empty() &&
        EVP_CipherUpdate(ctx.get(), out.data(), &len, plaintext.data(), static_cast<int>(plaintext.size())) != 1) {
        return EncryptFailed();
    }
    int final_len = 0;
    if (EVP_CipherFinal_ex(ctx.get(), out.data() + len, &final_len) != 1 ||
        static_cast<std::size_t>(len + final_len) != plaintext.size()) {
        return EncryptFailed();
    }
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(AES_GCM_TAG_SIZE),
                            out.data() + plaintext.size()) != 1) {
        return EncryptFailed();
    }
    return out;
}

Result<SecretBytes> AesGcmOpen(const SecretBytes& key, ByteView nonce, ByteView aad, ByteView sealed) {
    if (key.size() != AES_GCM_KEY_SIZE) return InvalidKey();
    if (nonce.size() != AES_GCM_NONCE_SIZE) return InvalidNonce();
    if (sealed.size() < AES_GCM_TAG_SIZE) return DecryptFailed();
    const std::size_t ct_size = sealed.size() - AES_GCM_TAG_SIZE;
    if (ct_size > AES_GCM_MAX_PLAINTEXT || aad.size() > AES_GCM_MAX_PLAINTEXT) return DecryptFailed();

    CipherCtx ctx(EVP_CIPHER_CTX_new());
    if (!ctx || !Init(ctx.get(), key, nonce, false) || !AddAad(ctx.get(), aad)) return DecryptFailed();

    // Decrypt into wiped memory; it is only handed out once the tag has verified.
    SecretBytes out(ct_size);
    int len = 0;
    if (ct_size > 0 &&
        EVP_CipherUpdate(ctx.get(), out.data(), &len, sealed.data(), static_cast<int>(ct_size)) != 1) {
        return DecryptFailed();
    }
    // OpenSSL only reads the expected tag, but its API takes a non-const pointer.
    std::uint8_t tag[AES_GCM_TAG_SIZE];
    for (std::size_t i = 0; i < AES_GCM_TAG_SIZE; ++i) tag[i] = sealed[ct_size + i];
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(AES_GCM_TAG_SIZE), tag) != 1) {
        return DecryptFailed();
    }
    int final_len = 0;
    // EVP_CipherFinal_ex compares the tag in constant time.
    if (EVP_CipherFinal_ex(ctx.get(), out.data() + len, &final_len) != 1 ||
        static_cast<std::size_t>(len + final_len) != ct_size) {
        return DecryptFailed();
    }
    return out;
}

Result<std::string> EncryptToHex(const SecretBytes& key, ByteView plaintext) {
    if (key.size() != AES_GCM_KEY_SIZE) return InvalidKey();
    const Bytes nonce = RandomBytes(AES_GCM_NONCE_SIZE);
    auto sealed = AesGcmSeal(key, nonce, {}, plaintext);
    if (!sealed.ok()) return sealed.error();
    std::string out = HexEncode(nonce);
    out += HexEncode(*sealed);
    return out;
}

Result<SecretBytes> DecryptFromHex(const SecretBytes& key, std::string_view hex) {
    if (key.size() != AES_GCM_KEY_SIZE) return InvalidKey();
    auto raw = HexDecode(hex, HexPrefix::Optional);
    if (!raw.ok() || raw->size() < AES_GCM_NONCE_SIZE + AES_GCM_TAG_SIZE) return DecryptFailed();
    const ByteView all(*raw);
    return AesGcmOpen(key, all.first(AES_GCM_NONCE_SIZE), {}, all.subspan(AES_GCM_NONCE_SIZE));
}

}  // namespace sigil::common
