#include "workers/sandbox/natives/web_crypto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <climits>
#include <cstring>
#include <string_view>

#include "common/handles.h"
#include "workers/sandbox/natives/web_crypto_ec.h"

namespace sigil::workers {

namespace {

struct Algorithms {
    const EVP_MD* sha1 = nullptr;
    const EVP_MD* sha256 = nullptr;
    const EVP_MD* sha384 = nullptr;
    const EVP_MD* sha512 = nullptr;
    const EVP_CIPHER* aes128_gcm = nullptr;
    const EVP_CIPHER* aes192_gcm = nullptr;
    const EVP_CIPHER* aes256_gcm = nullptr;
    EVP_KDF* hkdf = nullptr;
};

using KdfCtx = common::CHandle<EVP_KDF_CTX, EVP_KDF_CTX_free>;

// Fetched in the zygote (InstallWebCryptoNatives) and inherited by every child.
Algorithms g_algorithms;

// PBKDF2's output bound (Web Crypto gives none; the run's memory limit would): 64 KiB.
constexpr std::size_t MAX_PBKDF2_OUTPUT = 65536;

// OpenSSL's name for a Web Crypto hash (EVP_KDF takes names, not EVP_MD pointers).
const char* DigestName(std::string_view name) {
    if (name == "SHA-1") return "SHA1";
    if (name == "SHA-256") return "SHA256";
    if (name == "SHA-384") return "SHA384";
    if (name == "SHA-512") return "SHA512";
    return nullptr;
}

const EVP_MD* Digest(std::string_view name) {
    if (name == "SHA-1") return g_algorithms.sha1;
    if (name == "SHA-256") return g_algorithms.sha256;
    if (name == "SHA-384") return g_algorithms.sha384;
    if (name == "SHA-512") return g_algorithms.sha512;
    return nullptr;
}

const unsigned char* BufferArg(duk_context* ctx, duk_idx_t index, duk_size_t& size) {
    if (duk_is_null_or_undefined(ctx, index)) {
        size = 0;
        return reinterpret_cast<const unsigned char*>("");
    }
    return static_cast<const unsigned char*>(duk_require_buffer_data(ctx, index, &size));
}

void PushArrayBuffer(duk_context* ctx, const unsigned char* data, std::size_t size) {
    void* out = duk_push_fixed_buffer(ctx, size);
    if (size > 0) std::memcpy(out, data, size);
    duk_push_buffer_object(ctx, -1, 0, size, DUK_BUFOBJ_ARRAYBUFFER);
}

const EVP_MD* RequireDigest(duk_context* ctx, duk_idx_t index) {
    const EVP_MD* md = Digest(duk_require_string(ctx, index));
    if (md == nullptr) (void)duk_error(ctx, DUK_ERR_TYPE_ERROR, "unknown digest %s", duk_safe_to_string(ctx, index));
    return md;
}

duk_ret_t NativeDigest(duk_context* ctx) {
    const EVP_MD* md = RequireDigest(ctx, 0);
    duk_size_t size = 0;
    const unsigned char* data = BufferArg(ctx, 1, size);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(data, size, out, &len, md, nullptr) != 1) return duk_error(ctx, DUK_ERR_ERROR, "digest failed");
    PushArrayBuffer(ctx, out, len);
    return 1;
}

duk_ret_t NativeHmac(duk_context* ctx) {
    const EVP_MD* md = RequireDigest(ctx, 0);
    duk_size_t key_size = 0, size = 0;
    const unsigned char* key = BufferArg(ctx, 1, key_size);
    const unsigned char* data = BufferArg(ctx, 2, size);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (HMAC(md, key, static_cast<int>(key_size), data, size, out, &len) == nullptr) {
        return duk_error(ctx, DUK_ERR_ERROR, "HMAC failed");
    }
    PushArrayBuffer(ctx, out, len);
    return 1;
}

// The output length of HKDF and PBKDF2, in bytes: globals.js has already refused what the Web
// Crypto API refuses (OperationError); this is the native's own bound.
std::size_t RequireOutputLength(duk_context* ctx, duk_idx_t index, std::size_t max) {
    const duk_uint_t length = duk_require_uint(ctx, index);
    if (length > max) (void)duk_error(ctx, DUK_ERR_RANGE_ERROR, "derived length of %u bytes", static_cast<unsigned>(length));
    return length;
}

// HKDF (RFC 5869) extract-then-expand through EVP_KDF "HKDF": (hash, ikm, salt, info, length in
// bytes) -> ArrayBuffer. An empty salt is HashLen zero bytes, as the RFC says; an empty ikm is
// allowed, as in Node and browsers. Up to 255 hash lengths.
duk_ret_t NativeHkdf(duk_context* ctx) {
    const EVP_MD* md = RequireDigest(ctx, 0);
    const char* md_name = DigestName(duk_get_string(ctx, 0));
    duk_size_t ikm_size = 0, salt_size = 0, info_size = 0;
    const unsigned char* ikm = BufferArg(ctx, 1, ikm_size);
    const unsigned char* salt = BufferArg(ctx, 2, salt_size);
    const unsigned char* info = BufferArg(ctx, 3, info_size);
    const std::size_t length = RequireOutputLength(ctx, 4, 255u * static_cast<std::size_t>(EVP_MD_get_size(md)));
    auto* out = static_cast<unsigned char*>(duk_push_fixed_buffer(ctx, length));
    if (length > 0) {
        KdfCtx kdf(EVP_KDF_CTX_new(g_algorithms.hkdf));
        const OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>(md_name), 0),
            OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<unsigned char*>(ikm), ikm_size),
            OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<unsigned char*>(salt), salt_size),
            OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<unsigned char*>(info), info_size),
            OSSL_PARAM_construct_end()};
        if (kdf == nullptr || EVP_KDF_derive(kdf.get(), out, length, params) != 1) {
            return duk_error(ctx, DUK_ERR_ERROR, "HKDF failed");
        }
    }
    duk_push_buffer_object(ctx, -1, 0, length, DUK_BUFOBJ_ARRAYBUFFER);
    return 1;
}

// PBKDF2 (RFC 8018) with HMAC: (hash, password, salt, iterations, length in bytes) -> ArrayBuffer.
// The iterations run here, in native code: the run's CPU limit bounds them.
duk_ret_t NativePbkdf2(duk_context* ctx) {
    const EVP_MD* md = RequireDigest(ctx, 0);
    duk_size_t password_size = 0, salt_size = 0;
    const unsigned char* password = BufferArg(ctx, 1, password_size);
    const unsigned char* salt = BufferArg(ctx, 2, salt_size);
    const duk_uint_t iterations = duk_require_uint(ctx, 3);
    if (iterations == 0 || iterations > INT_MAX) return duk_error(ctx, DUK_ERR_RANGE_ERROR, "PBKDF2 iterations out of range");
    const std::size_t length = RequireOutputLength(ctx, 4, MAX_PBKDF2_OUTPUT);
    auto* out = static_cast<unsigned char*>(duk_push_fixed_buffer(ctx, length));
    if (length > 0 &&
        PKCS5_PBKDF2_HMAC(reinterpret_cast<const char*>(password), static_cast<int>(password_size), salt,
                          static_cast<int>(salt_size), static_cast<int>(iterations), md, static_cast<int>(length), out) != 1) {
        return duk_error(ctx, DUK_ERR_ERROR, "PBKDF2 failed");
    }
    duk_push_buffer_object(ctx, -1, 0, length, DUK_BUFOBJ_ARRAYBUFFER);
    return 1;
}

struct CipherCtx {
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    ~CipherCtx() { EVP_CIPHER_CTX_free(ctx); }
};

// AES-GCM seal (ciphertext || tag) or open (null when the tag does not verify), as the Web Crypto
// API defines them: any IV length from 1 byte, a tag of 4-16 bytes.
duk_ret_t NativeAesGcm(duk_context* ctx) {
    const bool encrypt = duk_require_boolean(ctx, 0) != 0;
    duk_size_t key_size = 0, iv_size = 0, aad_size = 0, size = 0;
    const unsigned char* key = BufferArg(ctx, 1, key_size);
    const unsigned char* iv = BufferArg(ctx, 2, iv_size);
    const unsigned char* aad = BufferArg(ctx, 3, aad_size);
    const unsigned char* data = BufferArg(ctx, 4, size);
    const int tag_bytes = duk_require_int(ctx, 5);
    const EVP_CIPHER* cipher = key_size == 16 ? g_algorithms.aes128_gcm
                               : key_size == 24 ? g_algorithms.aes192_gcm
                               : key_size == 32 ? g_algorithms.aes256_gcm
                                                : nullptr;
    if (cipher == nullptr) return duk_error(ctx, DUK_ERR_TYPE_ERROR, "AES key of %d bytes", static_cast<int>(key_size));
    if (iv_size == 0 || tag_bytes < 4 || tag_bytes > 16) return duk_error(ctx, DUK_ERR_TYPE_ERROR, "bad AES-GCM parameters");
    if (!encrypt && size < static_cast<duk_size_t>(tag_bytes)) {
        duk_push_null(ctx);
        return 1;
    }
    const std::size_t body = encrypt ? size : size - static_cast<std::size_t>(tag_bytes);
    CipherCtx c;
    int n = 0;
    bool ok = c.ctx != nullptr && EVP_CipherInit_ex(c.ctx, cipher, nullptr, nullptr, nullptr, encrypt ? 1 : 0) == 1 &&
              EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv_size), nullptr) == 1 &&
              EVP_CipherInit_ex(c.ctx, nullptr, nullptr, key, iv, encrypt ? 1 : 0) == 1 &&
              (aad_size == 0 || EVP_CipherUpdate(c.ctx, nullptr, &n, aad, static_cast<int>(aad_size)) == 1);
    if (!ok) return duk_error(ctx, DUK_ERR_ERROR, "AES-GCM setup failed");
    auto* out = static_cast<unsigned char*>(duk_push_fixed_buffer(ctx, body + (encrypt ? tag_bytes : 0)));
    int written = 0;
    if (body > 0 && EVP_CipherUpdate(c.ctx, out, &written, data, static_cast<int>(body)) != 1) {
        return duk_error(ctx, DUK_ERR_ERROR, "AES-GCM failed");
    }
    if (!encrypt) {
        // The tag is the input's last tag_bytes bytes.
        if (EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, tag_bytes, const_cast<unsigned char*>(data + body)) != 1) {
            return duk_error(ctx, DUK_ERR_ERROR, "AES-GCM failed");
        }
    }
    int final_len = 0;
    if (EVP_CipherFinal_ex(c.ctx, out + written, &final_len) != 1) {
        if (encrypt) return duk_error(ctx, DUK_ERR_ERROR, "AES-GCM failed");
        std::memset(out, 0, body);  // nothing of an unauthenticated plaintext stays behind
        duk_push_null(ctx);
        return 1;
    }
    if (encrypt && EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, tag_bytes, out + body) != 1) {
        return duk_error(ctx, DUK_ERR_ERROR, "AES-GCM failed");
    }
    duk_push_buffer_object(ctx, -1, 0, body + (encrypt ? tag_bytes : 0), DUK_BUFOBJ_ARRAYBUFFER);
    return 1;
}

}  // namespace

void InstallWebCryptoNatives(duk_context* ctx) {
    if (g_algorithms.sha256 == nullptr) {
        g_algorithms.sha1 = EVP_sha1();
        g_algorithms.sha256 = EVP_sha256();
        g_algorithms.sha384 = EVP_sha384();
        g_algorithms.sha512 = EVP_sha512();
        g_algorithms.aes128_gcm = EVP_aes_128_gcm();
        g_algorithms.aes192_gcm = EVP_aes_192_gcm();
        g_algorithms.aes256_gcm = EVP_aes_256_gcm();
        g_algorithms.hkdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
        // One use of each here loads whatever OpenSSL loads lazily (configuration, the default
        // provider's implementations), before any fork.
        static const unsigned char zero[32] = {};
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        for (const EVP_MD* md : {g_algorithms.sha1, g_algorithms.sha256, g_algorithms.sha384, g_algorithms.sha512}) {
            EVP_Digest(zero, sizeof zero, out, &len, md, nullptr);
            HMAC(md, zero, sizeof zero, zero, sizeof zero, out, &len);
            PKCS5_PBKDF2_HMAC("", 0, zero, sizeof zero, 1, md, 16, out);
        }
        if (g_algorithms.hkdf != nullptr) {
            KdfCtx kdf(EVP_KDF_CTX_new(g_algorithms.hkdf));
            const OSSL_PARAM params[] = {
                OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
                OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<unsigned char*>(zero), sizeof zero),
                OSSL_PARAM_construct_end()};
            if (kdf != nullptr) EVP_KDF_derive(kdf.get(), out, 32, params);
        }
        for (const EVP_CIPHER* cipher : {g_algorithms.aes128_gcm, g_algorithms.aes192_gcm, g_algorithms.aes256_gcm}) {
            CipherCtx c;
            int n = 0;
            EVP_EncryptInit_ex(c.ctx, cipher, nullptr, zero, zero);
            EVP_EncryptUpdate(c.ctx, out, &n, zero, 16);
            EVP_EncryptFinal_ex(c.ctx, out, &n);
        }
    }
    duk_push_c_function(ctx, NativeDigest, 2);
    duk_put_global_string(ctx, "__sigil_digest");
    duk_push_c_function(ctx, NativeHmac, 3);
    duk_put_global_string(ctx, "__sigil_hmac");
    duk_push_c_function(ctx, NativeAesGcm, 6);
    duk_put_global_string(ctx, "__sigil_aes_gcm");
    duk_push_c_function(ctx, NativeHkdf, 5);
    duk_put_global_string(ctx, "__sigil_hkdf");
    duk_push_c_function(ctx, NativePbkdf2, 5);
    duk_put_global_string(ctx, "__sigil_pbkdf2");
    InstallWebCryptoEcNatives(ctx);
}

}  // namespace sigil::workers
