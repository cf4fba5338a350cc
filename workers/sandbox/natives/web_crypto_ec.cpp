#include "workers/sandbox/natives/web_crypto_ec.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/params.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <sys/random.h>

#include "common/handles.h"
#include "workers/sandbox/embedded_scripts.h"

namespace sigil::workers {

namespace {

using BnCtx = common::CHandle<BN_CTX, BN_CTX_free>;
using Bignum = common::CHandle<BIGNUM, BN_clear_free>;
using EcPoint = common::CHandle<EC_POINT, EC_POINT_free>;
using PKey = common::CHandle<EVP_PKEY, EVP_PKEY_free>;
using PKeyCtx = common::CHandle<EVP_PKEY_CTX, EVP_PKEY_CTX_free>;
using Pkcs8Info = common::CHandle<PKCS8_PRIV_KEY_INFO, PKCS8_PRIV_KEY_INFO_free>;

constexpr std::size_t P256_SCALAR = 32;
constexpr std::size_t P256_POINT = 65;  // 0x04 || x || y
constexpr std::size_t X25519_KEY = 32;

enum class Curve { P256, X25519 };

// P-256's group, made in the zygote (InstallWebCryptoEcNatives) and only read afterwards.
const EC_GROUP* g_p256 = nullptr;

Curve RequireCurve(duk_context* ctx, duk_idx_t index) {
    const std::string_view name = duk_require_string(ctx, index);
    if (name == "P-256") return Curve::P256;
    if (name == "X25519") return Curve::X25519;
    (void)duk_error(ctx, DUK_ERR_TYPE_ERROR, "unknown curve %s", duk_safe_to_string(ctx, index));
    return Curve::P256;
}

std::string_view RequireBytes(duk_context* ctx, duk_idx_t index) {
    duk_size_t size = 0;
    const void* data = duk_require_buffer_data(ctx, index, &size);
    return {static_cast<const char*>(data), size};
}

const unsigned char* Data(std::string_view bytes) { return reinterpret_cast<const unsigned char*>(bytes.data()); }

// Pushes one value, a new ArrayBuffer holding a copy of the bytes.
void PushArrayBuffer(duk_context* ctx, const unsigned char* data, std::size_t size) {
    void* out = duk_push_fixed_buffer(ctx, size);
    if (size > 0) std::memcpy(out, data, size);
    duk_push_buffer_object(ctx, -1, 0, size, DUK_BUFOBJ_ARRAYBUFFER);
    duk_remove(ctx, -2);
}

// The kernel's getrandom, as crypto.getRandomValues reads it (OpenSSL's generator is out of
// reach in a child: see the header).
bool FillRandom(unsigned char* out, std::size_t size) {
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::getrandom(out + done, size - done, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// --- P-256 ------------------------------------------------------------------------------------

// A point of P-256 from its SEC1 encoding (uncompressed or compressed); null when the bytes are
// not one or it is the point at infinity. oct2point checks that the point is on the curve.
EcPoint P256Point(std::string_view bytes, BN_CTX* bn) {
    EcPoint point(EC_POINT_new(g_p256));
    if (point == nullptr || (bytes.size() != P256_POINT && bytes.size() != 33) ||
        EC_POINT_oct2point(g_p256, point.get(), Data(bytes), bytes.size(), bn) != 1 ||
        EC_POINT_is_at_infinity(g_p256, point.get()) == 1) {
        return nullptr;
    }
    return point;
}

// The scalar of a private key: exactly 32 bytes, 1 <= d < n; null otherwise.
Bignum P256Scalar(std::string_view bytes) {
    if (bytes.size() != P256_SCALAR) return nullptr;
    Bignum d(BN_secure_new());
    if (d == nullptr || BN_bin2bn(Data(bytes), static_cast<int>(bytes.size()), d.get()) == nullptr) return nullptr;
    BN_set_flags(d.get(), BN_FLG_CONSTTIME);
    if (BN_is_zero(d.get()) || BN_cmp(d.get(), EC_GROUP_get0_order(g_p256)) >= 0) return nullptr;
    return d;
}

bool PushP256Point(duk_context* ctx, const EC_POINT* point, BN_CTX* bn) {
    unsigned char out[P256_POINT];
    if (EC_POINT_point2oct(g_p256, point, POINT_CONVERSION_UNCOMPRESSED, out, sizeof out, bn) != sizeof out) return false;
    PushArrayBuffer(ctx, out, sizeof out);
    return true;
}

// d * G, pushed as an uncompressed point.
bool PushP256PublicOf(duk_context* ctx, const BIGNUM* d, BN_CTX* bn) {
    EcPoint q(EC_POINT_new(g_p256));
    return q != nullptr && EC_POINT_mul(g_p256, q.get(), d, nullptr, nullptr, bn) == 1 && PushP256Point(ctx, q.get(), bn);
}

// --- X25519 -----------------------------------------------------------------------------------

PKey X25519Private(std::string_view bytes) {
    if (bytes.size() != X25519_KEY) return nullptr;
    return PKey(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, Data(bytes), bytes.size()));
}

PKey X25519Public(std::string_view bytes) {
    if (bytes.size() != X25519_KEY) return nullptr;
    return PKey(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, Data(bytes), bytes.size()));
}

bool PushX25519Public(duk_context* ctx, const EVP_PKEY* key) {
    unsigned char out[X25519_KEY];
    std::size_t len = sizeof out;
    if (EVP_PKEY_get_raw_public_key(key, out, &len) != 1 || len != sizeof out) return false;
    PushArrayBuffer(ctx, out, len);
    return true;
}

// --- the natives ------------------------------------------------------------------------------

duk_ret_t NativeGenerate(duk_context* ctx) {
    const Curve curve = RequireCurve(ctx, 0);
    duk_push_array(ctx);
    unsigned char secret[P256_SCALAR];
    bool ok = false;
    if (curve == Curve::P256) {
        BnCtx bn(BN_CTX_new());
        // Rejection sampling: a draw of n or more (about 2^-32 of them) is drawn again.
        for (int attempt = 0; attempt < 64 && !ok && bn != nullptr; ++attempt) {
            if (!FillRandom(secret, sizeof secret)) break;
            Bignum d = P256Scalar({reinterpret_cast<const char*>(secret), sizeof secret});
            if (d == nullptr) continue;
            PushArrayBuffer(ctx, secret, sizeof secret);
            duk_put_prop_index(ctx, -2, 0);
            ok = PushP256PublicOf(ctx, d.get(), bn.get());
        }
    } else if (FillRandom(secret, sizeof secret)) {
        PKey key = X25519Private({reinterpret_cast<const char*>(secret), sizeof secret});
        PushArrayBuffer(ctx, secret, sizeof secret);
        duk_put_prop_index(ctx, -2, 0);
        ok = key != nullptr && PushX25519Public(ctx, key.get());
    }
    OPENSSL_cleanse(secret, sizeof secret);
    if (!ok) return duk_error(ctx, DUK_ERR_ERROR, "key generation failed");
    duk_put_prop_index(ctx, -2, 1);
    return 1;
}

duk_ret_t NativePublic(duk_context* ctx) {
    const Curve curve = RequireCurve(ctx, 0);
    const std::string_view raw = RequireBytes(ctx, 1);
    bool ok = false;
    if (curve == Curve::P256) {
        BnCtx bn(BN_CTX_new());
        EcPoint point = bn != nullptr ? P256Point(raw, bn.get()) : nullptr;
        ok = point != nullptr && PushP256Point(ctx, point.get(), bn.get());
    } else {
        PKey key = X25519Public(raw);
        ok = key != nullptr && PushX25519Public(ctx, key.get());
    }
    if (!ok) duk_push_null(ctx);
    return 1;
}

duk_ret_t NativePublicOf(duk_context* ctx) {
    const Curve curve = RequireCurve(ctx, 0);
    const std::string_view secret = RequireBytes(ctx, 1);
    bool ok = false;
    if (curve == Curve::P256) {
        BnCtx bn(BN_CTX_new());
        Bignum d = P256Scalar(secret);
        ok = bn != nullptr && d != nullptr && PushP256PublicOf(ctx, d.get(), bn.get());
    } else {
        PKey key = X25519Private(secret);
        ok = key != nullptr && PushX25519Public(ctx, key.get());
    }
    if (!ok) duk_push_null(ctx);
    return 1;
}

duk_ret_t NativeDerive(duk_context* ctx) {
    const Curve curve = RequireCurve(ctx, 0);
    const std::string_view secret = RequireBytes(ctx, 1);
    const std::string_view peer = RequireBytes(ctx, 2);
    unsigned char out[X25519_KEY];  // both curves' secrets are 32 bytes
    static_assert(P256_SCALAR == X25519_KEY);
    bool ok = false;
    if (curve == Curve::P256) {
        BnCtx bn(BN_CTX_new());
        Bignum d = P256Scalar(secret);
        EcPoint q = bn != nullptr ? P256Point(peer, bn.get()) : nullptr;
        EcPoint shared(EC_POINT_new(g_p256));
        Bignum x(BN_new());
        ok = d != nullptr && q != nullptr && shared != nullptr && x != nullptr &&
             EC_POINT_mul(g_p256, shared.get(), nullptr, q.get(), d.get(), bn.get()) == 1 &&
             EC_POINT_is_at_infinity(g_p256, shared.get()) == 0 &&
             EC_POINT_get_affine_coordinates(g_p256, shared.get(), x.get(), nullptr, bn.get()) == 1 &&
             BN_bn2binpad(x.get(), out, sizeof out) == static_cast<int>(sizeof out);
    } else {
        PKey own = X25519Private(secret);
        PKey other = X25519Public(peer);
        PKeyCtx derive(own != nullptr ? EVP_PKEY_CTX_new(own.get(), nullptr) : nullptr);
        std::size_t len = sizeof out;
        // OpenSSL refuses the all-zero result of a small-order peer key, as Web Crypto requires.
        ok = derive != nullptr && other != nullptr && EVP_PKEY_derive_init(derive.get()) == 1 &&
             EVP_PKEY_derive_set_peer(derive.get(), other.get()) == 1 &&
             EVP_PKEY_derive(derive.get(), out, &len) == 1 && len == sizeof out;
    }
    if (ok) PushArrayBuffer(ctx, out, sizeof out);
    else duk_push_null(ctx);
    OPENSSL_cleanse(out, sizeof out);
    return 1;
}

// An EVP_PKEY of `curve` from raw keys (the private one may be empty), for the DER encoders.
PKey KeyFromRaw(Curve curve, std::string_view secret, std::string_view point) {
    if (curve == Curve::X25519) return secret.empty() ? X25519Public(point) : X25519Private(secret);
    PKeyCtx from(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
    if (from == nullptr || EVP_PKEY_fromdata_init(from.get()) != 1) return nullptr;
    // OSSL_PARAM integers are native-endian; this copy is wiped below.
    unsigned char scalar[P256_SCALAR] = {};
    if (!secret.empty()) {
        if (secret.size() != sizeof scalar) return nullptr;
        for (std::size_t i = 0; i < sizeof scalar; ++i) scalar[i] = Data(secret)[sizeof scalar - 1 - i];
    }
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>("P-256"), 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, const_cast<unsigned char*>(Data(point)), point.size()),
        OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, scalar, sizeof scalar),
        OSSL_PARAM_construct_end()};
    if (secret.empty()) params[2] = OSSL_PARAM_construct_end();
    EVP_PKEY* key = nullptr;
    const int selection = secret.empty() ? EVP_PKEY_PUBLIC_KEY : EVP_PKEY_KEYPAIR;
    const bool ok = EVP_PKEY_fromdata(from.get(), &key, selection, params) == 1;
    OPENSSL_cleanse(scalar, sizeof scalar);
    return ok ? PKey(key) : nullptr;
}

// [curve, private or null, public] of a decoded key; false when it is neither a P-256 nor an
// X25519 key.
bool PushRawKeys(duk_context* ctx, const EVP_PKEY* key, bool with_private) {
    duk_push_array(ctx);
    if (EVP_PKEY_get_base_id(key) == EVP_PKEY_X25519) {
        duk_push_string(ctx, "X25519");
        duk_put_prop_index(ctx, -2, 0);
        if (with_private) {
            unsigned char secret[X25519_KEY];
            std::size_t len = sizeof secret;
            if (EVP_PKEY_get_raw_private_key(key, secret, &len) != 1 || len != sizeof secret) return false;
            PushArrayBuffer(ctx, secret, len);
            OPENSSL_cleanse(secret, sizeof secret);
            duk_put_prop_index(ctx, -2, 1);
        }
        if (!PushX25519Public(ctx, key)) return false;
        duk_put_prop_index(ctx, -2, 2);
        return true;
    }
    char group[32];
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC ||
        EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, nullptr) != 1 ||
        std::string_view(group) != "prime256v1") {
        return false;
    }
    duk_push_string(ctx, "P-256");
    duk_put_prop_index(ctx, -2, 0);
    BnCtx bn(BN_CTX_new());
    if (bn == nullptr) return false;
    if (with_private) {
        BIGNUM* got = nullptr;
        if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PRIV_KEY, &got) != 1) return false;
        Bignum d(got);
        BN_set_flags(d.get(), BN_FLG_CONSTTIME);
        unsigned char secret[P256_SCALAR];
        if (BN_is_zero(d.get()) || BN_cmp(d.get(), EC_GROUP_get0_order(g_p256)) >= 0 ||
            BN_bn2binpad(d.get(), secret, sizeof secret) != static_cast<int>(sizeof secret)) {
            return false;
        }
        PushArrayBuffer(ctx, secret, sizeof secret);
        OPENSSL_cleanse(secret, sizeof secret);
        duk_put_prop_index(ctx, -2, 1);
        // The public key is the scalar's, whatever the encoding carried beside it.
        if (!PushP256PublicOf(ctx, d.get(), bn.get())) return false;
    } else {
        unsigned char encoded[P256_POINT];
        std::size_t len = 0;
        if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, encoded, sizeof encoded, &len) != 1) return false;
        EcPoint point = P256Point({reinterpret_cast<const char*>(encoded), len}, bn.get());
        if (point == nullptr || !PushP256Point(ctx, point.get(), bn.get())) return false;
    }
    duk_put_prop_index(ctx, -2, 2);
    return true;
}

bool IsSpki(duk_context* ctx, duk_idx_t index) {
    const std::string_view format = duk_require_string(ctx, index);
    if (format == "spki") return true;
    if (format != "pkcs8") (void)duk_error(ctx, DUK_ERR_TYPE_ERROR, "unknown key format %s", duk_safe_to_string(ctx, index));
    return false;
}

duk_ret_t NativeImportDer(duk_context* ctx) {
    const bool spki = IsSpki(ctx, 0);
    const std::string_view der = RequireBytes(ctx, 1);
    const unsigned char* p = Data(der);
    PKey key;
    if (spki) {
        key.reset(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
    } else {
        Pkcs8Info info(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der.size())));
        if (info != nullptr) key.reset(EVP_PKCS82PKEY(info.get()));
    }
    // Bytes after the encoding make it malformed, as in Node.
    const bool whole = p == Data(der) + der.size();
    const duk_idx_t top = duk_get_top(ctx);
    if (key == nullptr || !whole || !PushRawKeys(ctx, key.get(), !spki)) {
        duk_set_top(ctx, top);
        duk_push_null(ctx);
    }
    return 1;
}

duk_ret_t NativeExportDer(duk_context* ctx) {
    const bool spki = IsSpki(ctx, 0);
    const Curve curve = RequireCurve(ctx, 1);
    const std::string_view secret = duk_is_null_or_undefined(ctx, 2) ? std::string_view() : RequireBytes(ctx, 2);
    const std::string_view point = RequireBytes(ctx, 3);
    if (!spki && secret.empty()) return duk_error(ctx, DUK_ERR_TYPE_ERROR, "PKCS #8 needs the private key");
    PKey key = KeyFromRaw(curve, spki ? std::string_view() : secret, point);
    if (key == nullptr) return duk_error(ctx, DUK_ERR_ERROR, "key encoding failed");
    unsigned char* der = nullptr;
    int len = -1;
    if (spki) {
        len = i2d_PUBKEY(key.get(), &der);
    } else {
        Pkcs8Info info(EVP_PKEY2PKCS8(key.get()));
        if (info != nullptr) len = i2d_PKCS8_PRIV_KEY_INFO(info.get(), &der);
    }
    if (len <= 0 || der == nullptr) return duk_error(ctx, DUK_ERR_ERROR, "key encoding failed");
    PushArrayBuffer(ctx, der, static_cast<std::size_t>(len));
    OPENSSL_clear_free(der, static_cast<std::size_t>(len));
    return 1;
}

// One of each operation on fixed keys, in the zygote: OpenSSL fetches the EC and X25519 key
// management, key exchange, encoders and decoders lazily, and a child cannot (it may not open
// files, nor call getpid).
void WarmUp(duk_context* ctx) {
    // js/ec_warmup.js; eval code, as the C++ string it was before.
    if (duk_peval_lstring(ctx, reinterpret_cast<const char*>(embedded::EC_WARMUP_JS), embedded::EC_WARMUP_JS_SIZE) != 0) {
        (void)duk_throw(ctx);
    }
    duk_pop(ctx);
}

}  // namespace

void InstallWebCryptoEcNatives(duk_context* ctx) {
    if (g_p256 == nullptr) g_p256 = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    if (g_p256 == nullptr) (void)duk_error(ctx, DUK_ERR_ERROR, "P-256 is not available");
    const struct {
        const char* name;
        duk_c_function fn;
        duk_idx_t nargs;
    } natives[] = {
        {"__sigil_ec_generate", NativeGenerate, 1},     {"__sigil_ec_public", NativePublic, 2},
        {"__sigil_ec_public_of", NativePublicOf, 2},    {"__sigil_ec_derive", NativeDerive, 3},
        {"__sigil_ec_import_der", NativeImportDer, 2},  {"__sigil_ec_export_der", NativeExportDer, 4},
    };
    for (const auto& native : natives) {
        duk_push_c_function(ctx, native.fn, native.nargs);
        duk_put_global_string(ctx, native.name);
    }
    static bool warmed = false;
    if (!warmed) {
        WarmUp(ctx);
        warmed = true;
    }
}

}  // namespace sigil::workers
