#include "common/hkdf.h"

#include <array>
#include <string>

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "common/handles.h"

namespace sigil::common {
namespace {

using KdfCtx = CHandle<EVP_KDF_CTX, EVP_KDF_CTX_free>;

Error BadInput(std::string message) {
    return MakeError(ErrorKind::InvalidInput, "invalid_hkdf_input", std::move(message));
}

// Fetched once: fetching walks the provider tables and takes a lock.
EVP_KDF* HkdfAlgorithm() {
    static CHandle<EVP_KDF, EVP_KDF_free> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
    return kdf.get();
}

}  // namespace

Result<SecretBytes> HkdfSha256(ByteView ikm, ByteView salt, ByteView info, std::size_t length) {
    if (ikm.empty()) return BadInput("HKDF input keying material must not be empty");
    if (info.size() > HKDF_MAX_INFO) return BadInput("HKDF info is too long");
    if (length == 0 || length > HKDF_SHA256_MAX_OUTPUT) return BadInput("HKDF output length out of range");

    EVP_KDF* kdf = HkdfAlgorithm();
    KdfCtx ctx(kdf != nullptr ? EVP_KDF_CTX_new(kdf) : nullptr);
    if (!ctx) return MakeError(ErrorKind::Internal, "hkdf_failed", "HKDF is unavailable in OpenSSL");

    // OpenSSL copies the parameters; the casts only drop const for its API.
    char digest[] = "SHA256";
    std::array<OSSL_PARAM, 5> params{};
    std::size_t n = 0;
    params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
    params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<std::uint8_t*>(ikm.data()),
                                                    ikm.size());
    // Empty salt and info are left unset: OpenSSL then applies RFC 5869's defaults, whereas an
    // empty octet-string parameter with a null pointer is refused by some 3.x releases.
    if (!salt.empty()) {
        params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<std::uint8_t*>(salt.data()),
                                                        salt.size());
    }
    if (!info.empty()) {
        params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<std::uint8_t*>(info.data()),
                                                        info.size());
    }
    params[n] = OSSL_PARAM_construct_end();

    SecretBytes out(length);
    if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params.data()) != 1) {
        return MakeError(ErrorKind::Internal, "hkdf_failed", "HKDF derivation failed in OpenSSL");
    }
    return out;
}

}  // namespace sigil::common
