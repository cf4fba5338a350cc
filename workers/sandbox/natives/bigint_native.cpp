// __sigil_bigint_hex_to_dec over OpenSSL's BN (see bigint_native.h).
#include "workers/sandbox/natives/bigint_native.h"

#include "workers/sandbox/natives/bigint_arith.h"

#include <duktape.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>

#include <memory>
#include <string>

namespace sigil::workers {

namespace {

struct BnFree {
    void operator()(BIGNUM* bn) const { BN_free(bn); }
};
struct OpenSslFree {
    void operator()(char* text) const { OPENSSL_free(text); }
};

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

duk_ret_t NativeHexToDec(duk_context* ctx) {
    duk_size_t len = 0;
    const char* hex = duk_require_lstring(ctx, 0, &len);
    if (len == 0) return DUK_RET_TYPE_ERROR;
    if (len > MAX_BIGINT_NATIVE_HEX_DIGITS) return DUK_RET_RANGE_ERROR;
    for (duk_size_t i = 0; i < len; ++i) {
        if (!IsHexDigit(hex[i])) return DUK_RET_TYPE_ERROR;
    }
    std::string digits(hex, len);  // BN_hex2bn wants a NUL-terminated string
    BIGNUM* raw = nullptr;
    if (BN_hex2bn(&raw, digits.c_str()) != static_cast<int>(len) || raw == nullptr) {
        BN_free(raw);
        return DUK_RET_ERROR;
    }
    std::unique_ptr<BIGNUM, BnFree> bn(raw);
    std::unique_ptr<char, OpenSslFree> dec(BN_bn2dec(bn.get()));
    if (!dec) return DUK_RET_ERROR;
    duk_push_string(ctx, dec.get());
    return 1;
}

}  // namespace

void InstallBigIntNatives(duk_context* ctx) {
    duk_push_c_function(ctx, NativeHexToDec, 1);
    duk_put_global_string(ctx, "__sigil_bigint_hex_to_dec");
    InstallBigIntArithNatives(ctx);
}

}  // namespace sigil::workers
