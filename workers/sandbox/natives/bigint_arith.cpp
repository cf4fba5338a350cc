// BigInt arithmetic natives over OpenSSL's BN (see bigint_arith.h).
#include "workers/sandbox/natives/bigint_arith.h"

#include <duktape.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

namespace sigil::workers {

namespace {

constexpr unsigned DIGIT_BITS = 30;  // JSBI's digit width
constexpr std::uint32_t DIGIT_MASK = (1u << DIGIT_BITS) - 1;
// Keys in the global stash (literals, for Duktape's literal cache): JSBI.prototype and the
// Array constructor as they were when the runtime bound the natives.
#define PROTO_KEY "sigil_jsbi_prototype"
#define ARRAY_KEY "sigil_array_constructor"

struct OpenSslFree {
    void operator()(char* text) const { OPENSSL_free(text); }
};
struct BnCtxFree {
    void operator()(BN_CTX* bn_ctx) const { BN_CTX_free(bn_ctx); }
};

// Scratch for BN's intermediate values, kept for the process (one BN_CTX_new per call would
// cost as much as a small multiplication). Used only while no JavaScript can run (between
// reading the operands and building the answer), so a getter calling a native again cannot
// reach it mid-use.
BN_CTX* Scratch() {
    thread_local std::unique_ptr<BN_CTX, BnCtxFree> scratch(BN_CTX_new());
    return scratch.get();
}

// Operands of up to SMALL_BYTES bytes (1,920 bits: every curve's field) are read into the
// native's stack frame; larger ones into a Duktape buffer. Either way nothing C++ owns is alive
// while Duktape calls run, which may throw (see ReadBig).
constexpr std::size_t SMALL_BYTES = 64 * DIGIT_BITS / 8;

// BN_CTX_start .. BN_CTX_end: the BIGNUMs a native takes from the scratch context.
class BnFrame {
public:
    explicit BnFrame(BN_CTX* scratch) : m_scratch(scratch) { BN_CTX_start(scratch); }
    ~BnFrame() { BN_CTX_end(m_scratch); }
    BnFrame(const BnFrame&) = delete;
    BnFrame& operator=(const BnFrame&) = delete;

private:
    BN_CTX* m_scratch;
};

// A magnitude read from a JSBI value: little-endian bytes.
struct Magnitude {
    unsigned char small[SMALL_BYTES + 1];
    const unsigned char* bytes = nullptr;
    std::size_t size = 0;
    bool negative = false;
};

enum class Read { Ok, TooLarge, Malformed };

// Reads the JSBI value at `idx` when it has at most `max_bits` bits. Reading a property can run a
// getter (code may hand over an array of its own), which may throw: so nothing C++ owns is alive
// here, and large magnitudes go into a buffer Duktape owns (pushed on the value stack).
Read ReadBig(duk_context* ctx, duk_idx_t idx, std::size_t max_bits, Magnitude& out) {
    if (!duk_is_array(ctx, idx)) return Read::Malformed;
    duk_size_t length = duk_get_length(ctx, idx);
    if (length > (max_bits + DIGIT_BITS - 1) / DIGIT_BITS) return Read::TooLarge;
    std::size_t capacity = length * DIGIT_BITS / 8 + 1;
    auto* bytes = capacity <= sizeof out.small ? out.small
                                               : static_cast<unsigned char*>(duk_push_buffer(ctx, capacity, 0));
    std::size_t used = 0;
    std::uint64_t acc = 0;
    unsigned acc_bits = 0;
    for (duk_size_t i = 0; i < length; ++i) {
        duk_get_prop_index(ctx, idx, static_cast<duk_uarridx_t>(i));
        double d = duk_is_number(ctx, -1) ? duk_get_number(ctx, -1) : -1;
        duk_pop(ctx);
        if (!(d >= 0 && d <= DIGIT_MASK) || static_cast<double>(static_cast<std::uint32_t>(d)) != d) {
            return Read::Malformed;
        }
        acc |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(d)) << acc_bits;
        acc_bits += DIGIT_BITS;
        while (acc_bits >= 8) {
            bytes[used++] = static_cast<unsigned char>(acc);
            acc >>= 8;
            acc_bits -= 8;
        }
    }
    if (acc_bits > 0) bytes[used++] = static_cast<unsigned char>(acc);
    duk_get_prop_literal(ctx, idx, "sign");
    out.bytes = bytes;
    out.size = used;
    out.negative = duk_to_boolean(ctx, -1) != 0;
    duk_pop(ctx);
    return Read::Ok;
}

// Bits of the little-endian magnitude `bytes` (its top byte not zero).
std::size_t BitLength(const unsigned char* bytes, std::size_t size) {
    if (size == 0) return 0;
    unsigned top = bytes[size - 1];
    std::size_t bits = (size - 1) * 8;
    while (top != 0) {
        ++bits;
        top >>= 1;
    }
    return bits;
}

// Pushes a new JSBI value of the minimal little-endian magnitude `bytes`: its 30-bit digits
// and its sign (zero is never negative). The array comes from the Array constructor given its
// length, which allocates the dense part once (appending index by index regrows it).
void PushBig(duk_context* ctx, const unsigned char* bytes, std::size_t size, bool negative) {
    // Digits the value needs: the whole ones below read from whole bytes, then the top one
    // when bits are left (never more: the magnitude is minimal, its top byte not zero).
    auto count = static_cast<duk_uint_t>((BitLength(bytes, size) + DIGIT_BITS - 1) / DIGIT_BITS);
    duk_push_global_stash(ctx);
    duk_get_prop_literal(ctx, -1, ARRAY_KEY);
    duk_push_uint(ctx, count);
    duk_new(ctx, 1);
    std::uint64_t acc = 0;
    unsigned acc_bits = 0;
    duk_uarridx_t index = 0;
    for (std::size_t i = 0; i < size; ++i) {
        acc |= static_cast<std::uint64_t>(bytes[i]) << acc_bits;
        acc_bits += 8;
        if (acc_bits >= DIGIT_BITS) {
            duk_push_uint(ctx, static_cast<duk_uint_t>(acc & DIGIT_MASK));
            duk_put_prop_index(ctx, -2, index++);
            acc >>= DIGIT_BITS;
            acc_bits -= DIGIT_BITS;
        }
    }
    if (index < count) {
        duk_push_uint(ctx, static_cast<duk_uint_t>(acc));
        duk_put_prop_index(ctx, -2, index++);
    }
    duk_push_boolean(ctx, negative && count > 0);
    duk_put_prop_literal(ctx, -2, "sign");
    duk_get_prop_literal(ctx, -2, PROTO_KEY);
    duk_set_prototype(ctx, -2);
    duk_remove(ctx, -2);  // the stash
}

// The outcome of the BN part of a native, with no JavaScript running: the answer's bytes went
// into the buffer pushed before it.
enum class Outcome { Done, Declined, Failed };

// Reads N operands (arguments 0..N-1, each of at most `max_bits`), runs `op(result, operands,
// scratch)` over BIGNUMs and pushes the answer, or undefined when an operand is too large or `op`
// declines (answers false). A malformed operand is a TypeError.
template <std::size_t N, bool Wide = false, typename Op>
duk_ret_t Native(duk_context* ctx, std::size_t max_bits, Op op) {
    std::array<Magnitude, N> in;
    std::size_t total = 0;
    for (std::size_t i = 0; i < N; ++i) {
        Read read = ReadBig(ctx, static_cast<duk_idx_t>(i), max_bits, in[i]);
        if (read == Read::Malformed) return DUK_RET_TYPE_ERROR;
        if (read == Read::TooLarge) return 0;  // undefined: JSBI's to do
        total += in[i].size;
    }
    // Every answer fits: a product has at most the operands' bytes, a power at most
    // MAX_BIGINT_NATIVE_BITS, the rest at most their largest operand's.
    std::size_t capacity = (Wide ? MAX_BIGINT_NATIVE_BITS / 8 : total) + 8;
    unsigned char small[2 * SMALL_BYTES + 8];
    auto* out = capacity <= sizeof small ? small : static_cast<unsigned char*>(duk_push_buffer(ctx, capacity, 0));
    std::size_t out_size = 0;
    bool out_negative = false;
    // No Duktape call from here to the end of the lambda: the BIGNUMs live in the scratch
    // context, released on every path.
    Outcome outcome = [&] {
        BN_CTX* scratch = Scratch();
        if (scratch == nullptr) return Outcome::Failed;
        BnFrame frame(scratch);
        std::array<BIGNUM*, N> bn;
        for (std::size_t i = 0; i < N; ++i) {
            bn[i] = BN_CTX_get(scratch);
            if (bn[i] == nullptr || BN_lebin2bn(in[i].bytes, static_cast<int>(in[i].size), bn[i]) == nullptr) {
                return Outcome::Failed;
            }
            BN_set_negative(bn[i], in[i].negative ? 1 : 0);
        }
        BIGNUM* result = BN_CTX_get(scratch);
        if (result == nullptr) return Outcome::Failed;
        if (!op(result, bn, scratch)) {
            ERR_clear_error();  // BN_mod_inverse reports "no inverse" on the error queue
            return Outcome::Declined;
        }
        int size = BN_num_bytes(result);
        if (size < 0 || static_cast<std::size_t>(size) > capacity || BN_bn2lebinpad(result, out, size) != size) {
            return Outcome::Failed;
        }
        out_size = static_cast<std::size_t>(size);
        out_negative = BN_is_negative(result) != 0;
        return Outcome::Done;
    }();
    if (outcome == Outcome::Failed) return DUK_RET_ERROR;
    if (outcome == Outcome::Declined) return 0;
    PushBig(ctx, out, out_size, out_negative);
    return 1;
}

using Two = std::array<BIGNUM*, 2>;
using Three = std::array<BIGNUM*, 3>;

duk_ret_t Mul(duk_context* ctx) {
    return Native<2>(ctx, MAX_BIGINT_NATIVE_BITS,
                     [](BIGNUM* r, Two& in, BN_CTX* s) { return BN_mul(r, in[0], in[1], s) == 1; });
}

duk_ret_t Add(duk_context* ctx) {
    return Native<2>(ctx, MAX_BIGINT_NATIVE_BITS,
                     [](BIGNUM* r, Two& in, BN_CTX*) { return BN_add(r, in[0], in[1]) == 1; });
}

duk_ret_t Sub(duk_context* ctx) {
    return Native<2>(ctx, MAX_BIGINT_NATIVE_BITS,
                     [](BIGNUM* r, Two& in, BN_CTX*) { return BN_sub(r, in[0], in[1]) == 1; });
}

// BN_div truncates toward zero and gives the remainder the dividend's sign, as BigInt's / and
// % do. A zero divisor is JSBI's to refuse (V8's RangeError).
duk_ret_t Div(duk_context* ctx) {
    return Native<2>(ctx, MAX_BIGINT_NATIVE_BITS, [](BIGNUM* r, Two& in, BN_CTX* s) {
        return !BN_is_zero(in[1]) && BN_div(r, nullptr, in[0], in[1], s) == 1;
    });
}

duk_ret_t Mod(duk_context* ctx) {
    return Native<2>(ctx, MAX_BIGINT_NATIVE_BITS, [](BIGNUM* r, Two& in, BN_CTX* s) {
        return !BN_is_zero(in[1]) && BN_div(nullptr, r, in[0], in[1], s) == 1;
    });
}

// a * b % m in one call (lower.js fuses the expression): the remainder of the product, with its
// sign, as the two operators give it. A zero m is JSBI's (the runtime runs the two operators).
duk_ret_t MulMod(duk_context* ctx) {
    return Native<3>(ctx, MAX_BIGINT_NATIVE_BITS, [](BIGNUM* r, Three& in, BN_CTX* s) {
        if (BN_is_zero(in[2])) return false;
        BIGNUM* product = BN_CTX_get(s);
        return product != nullptr && BN_mul(product, in[0], in[1], s) == 1 &&
               BN_div(nullptr, r, product, in[2], s) == 1;
    });
}

// a ** e when the result has at most MAX_BIGINT_NATIVE_BITS bits; a negative exponent and
// larger results are JSBI's (its RangeErrors, or its own loop, which the deadline interrupts).
duk_ret_t Pow(duk_context* ctx) {
    return Native<2, true>(ctx, MAX_BIGINT_NATIVE_BITS, [](BIGNUM* r, Two& in, BN_CTX* s) {
        BIGNUM* base = in[0];
        const BIGNUM* exponent = in[1];
        if (BN_is_negative(exponent)) return false;
        if (BN_is_zero(exponent)) return BN_one(r) == 1;
        if (BN_is_zero(base)) return BN_zero(r), true;
        // |base| ** e has floor(e * log2|base|) + 1 bits; log2 from the top 53 bits as a double,
        // rounded up, so the bound holds (3n ** 41000n is native; bits(3) * e would double it).
        if (BN_num_bits(exponent) > 17) return false;
        BN_ULONG e = BN_get_word(exponent);
        bool negative = BN_is_negative(base) && (e & 1) != 0;
        BN_set_negative(base, 0);
        int bits = BN_num_bits(base);
        int shift = bits > 53 ? bits - 53 : 0;
        BIGNUM* top = BN_CTX_get(s);
        if (top == nullptr || BN_rshift(top, base, shift) != 1) return false;
        double log2_base = std::log2(static_cast<double>(BN_get_word(top))) + shift;
        if (static_cast<double>(e) * log2_base * (1 + 1e-12) >= static_cast<double>(MAX_BIGINT_NATIVE_BITS)) {
            return false;
        }
        if (BN_exp(r, base, exponent, s) != 1) return false;
        BN_set_negative(r, negative ? 1 : 0);
        return true;
    });
}

duk_ret_t ModPow(duk_context* ctx) {
    return Native<3>(ctx, MAX_BIGINT_NATIVE_MODEXP_BITS, [](BIGNUM* r, Three& in, BN_CTX* s) {
        const BIGNUM* m = in[2];
        if (BN_is_negative(m) || BN_is_zero(m) || BN_is_negative(in[1])) return false;
        BIGNUM* base = BN_CTX_get(s);  // BN_nnmod's result must not alias its input
        if (base == nullptr || BN_nnmod(base, in[0], m, s) != 1) return false;
        return BN_mod_exp(r, base, in[1], m, s) == 1;
    });
}

duk_ret_t ModInv(duk_context* ctx) {
    return Native<2>(ctx, MAX_BIGINT_NATIVE_MODINV_BITS, [](BIGNUM* r, Two& in, BN_CTX* s) {
        const BIGNUM* m = in[1];
        if (BN_is_negative(m) || BN_is_zero(m)) return false;
        if (BN_is_one(m)) return BN_zero(r), true;  // everything is 0 mod 1, its own inverse
        BIGNUM* a = BN_CTX_get(s);  // BN_nnmod's result must not alias its input
        if (a == nullptr || BN_nnmod(a, in[0], m, s) != 1) return false;
        return BN_mod_inverse(r, a, m, s) != nullptr;
    });
}

// a << k and a >> k for 0 <= k < 2^17 (the result within MAX_BIGINT_NATIVE_BITS): BN shifts the
// magnitude, which is << for either sign; >> of a negative a is floor(a / 2^k), that is
// -((|a| - 1) >> k) - 1. A negative or larger k (a shift the other way, or one JSBI refuses or
// runs itself) is JSBI's. noble's field and scalar code shifts in every loop step.
bool ShiftCount(const BIGNUM* k, int& out) {
    if (BN_is_negative(k) || BN_num_bits(k) > 17) return false;
    out = static_cast<int>(BN_get_word(k));
    return true;
}

duk_ret_t Shl(duk_context* ctx) {
    return Native<2, true>(ctx, MAX_BIGINT_NATIVE_BITS, [](BIGNUM* r, Two& in, BN_CTX*) {
        int k = 0;
        if (!ShiftCount(in[1], k) || static_cast<std::size_t>(BN_num_bits(in[0])) + k > MAX_BIGINT_NATIVE_BITS) return false;
        return BN_lshift(r, in[0], k) == 1;
    });
}

duk_ret_t Sar(duk_context* ctx) {
    return Native<2>(ctx, MAX_BIGINT_NATIVE_BITS, [](BIGNUM* r, Two& in, BN_CTX*) {
        int k = 0;
        if (!ShiftCount(in[1], k)) return false;
        if (!BN_is_negative(in[0])) return BN_rshift(r, in[0], k) == 1;
        BN_set_negative(in[0], 0);
        if (BN_sub_word(in[0], 1) != 1 || BN_rshift(r, in[0], k) != 1 || BN_add_word(r, 1) != 1) return false;
        BN_set_negative(r, 1);
        return true;
    });
}

// a & b, a | b, a ^ b of two non-negative values, byte by byte over the magnitudes (BN has no
// bitwise operators). Negative operands (two's complement semantics) are JSBI's.
template <typename Op>
duk_ret_t Bitwise(duk_context* ctx, Op op) {
    Magnitude a, b;
    for (int i = 0; i < 2; ++i) {
        Read read = ReadBig(ctx, i, MAX_BIGINT_NATIVE_BITS, i == 0 ? a : b);
        if (read == Read::Malformed) return DUK_RET_TYPE_ERROR;
        if (read == Read::TooLarge) return 0;
    }
    if (a.negative || b.negative) return 0;
    std::size_t size = std::max(a.size, b.size);
    unsigned char small[SMALL_BYTES + 1];
    auto* out = size <= sizeof small ? small : static_cast<unsigned char*>(duk_push_buffer(ctx, size, 0));
    for (std::size_t i = 0; i < size; ++i) {
        out[i] = op(i < a.size ? a.bytes[i] : 0, i < b.size ? b.bytes[i] : 0);
    }
    while (size > 0 && out[size - 1] == 0) --size;
    PushBig(ctx, out, size, false);
    return 1;
}

duk_ret_t And(duk_context* ctx) {
    return Bitwise(ctx, [](unsigned char x, unsigned char y) { return static_cast<unsigned char>(x & y); });
}
duk_ret_t Or(duk_context* ctx) {
    return Bitwise(ctx, [](unsigned char x, unsigned char y) { return static_cast<unsigned char>(x | y); });
}
duk_ret_t Xor(duk_context* ctx) {
    return Bitwise(ctx, [](unsigned char x, unsigned char y) { return static_cast<unsigned char>(x ^ y); });
}

// text(a, radix): a's digits in radix 16 or 10, with a '-' when negative. JSBI builds its text a
// character at a time, and every concatenation copies the string in Duktape: 300 ms for 64 Ki
// bits. Hex is written from the bytes here; decimal through BN_bn2dec.
duk_ret_t ToText(duk_context* ctx) {
    duk_int_t radix = duk_require_int(ctx, 1);
    if (radix != 16 && radix != 10) return 0;
    Magnitude a;
    Read read = ReadBig(ctx, 0, MAX_BIGINT_NATIVE_TEXT_BITS, a);
    if (read == Read::Malformed) return DUK_RET_TYPE_ERROR;
    if (read == Read::TooLarge) return 0;
    std::size_t size = a.size;
    while (size > 0 && a.bytes[size - 1] == 0) --size;
    // A byte is two hex digits and at most 2.41 decimal ones; one more for the sign.
    std::size_t capacity = 3 * size + 2;
    auto* text = static_cast<char*>(duk_push_buffer(ctx, capacity, 0));
    std::size_t length = 0;
    bool negative = a.negative && size > 0;
    if (negative) text[length++] = '-';
    if (size == 0) {
        text[length++] = '0';
    } else if (radix == 16) {
        static constexpr char HEX[] = "0123456789abcdef";
        std::size_t i = size;
        unsigned top = a.bytes[--i];
        if (top >= 16) text[length++] = HEX[top >> 4];
        text[length++] = HEX[top & 15];
        while (i > 0) {
            unsigned byte = a.bytes[--i];
            text[length++] = HEX[byte >> 4];
            text[length++] = HEX[byte & 15];
        }
    } else {
        // No Duktape call in here: the BIGNUM and OpenSSL's string are freed on every path.
        bool ok = [&] {
            BN_CTX* scratch = Scratch();
            if (scratch == nullptr) return false;
            BnFrame frame(scratch);
            BIGNUM* bn = BN_CTX_get(scratch);
            if (bn == nullptr || BN_lebin2bn(a.bytes, static_cast<int>(size), bn) == nullptr) return false;
            std::unique_ptr<char, OpenSslFree> dec(BN_bn2dec(bn));
            if (!dec) return false;
            std::size_t n = std::strlen(dec.get());
            if (length + n > capacity) return false;
            std::memcpy(text + length, dec.get(), n);
            length += n;
            return true;
        }();
        if (!ok) return DUK_RET_ERROR;
    }
    duk_push_lstring(ctx, text, length);
    return 1;
}

// parse(digits, radix): the JSBI value of `digits` (radix 16 or 10, digits only: no sign, prefix
// or space, which the runtime handles), or undefined when it is not that (JSBI then parses).
duk_ret_t Parse(duk_context* ctx) {
    duk_size_t length = 0;
    const char* digits = duk_require_lstring(ctx, 0, &length);
    duk_int_t radix = duk_require_int(ctx, 1);
    if ((radix != 16 && radix != 10) || length == 0) return 0;
    // MAX_BIGINT_NATIVE_TEXT_BITS of either radix (log10(2) = 0.30103 decimal digits a bit).
    if (length > (radix == 16 ? MAX_BIGINT_NATIVE_TEXT_BITS / 4 : MAX_BIGINT_NATIVE_TEXT_BITS * 30103 / 100000 + 1)) {
        return 0;
    }
    for (duk_size_t i = 0; i < length; ++i) {
        char c = digits[i];
        bool ok = (c >= '0' && c <= '9') ||
                  (radix == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
        if (!ok) return 0;
    }
    std::size_t capacity = length / 2 + 8;
    auto* bytes = static_cast<unsigned char*>(duk_push_buffer(ctx, capacity, 0));
    std::size_t size = 0;
    if (radix == 16) {
        auto nibble = [](char c) -> unsigned {
            return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
        };
        for (std::size_t i = length; i > 0;) {
            unsigned low = nibble(digits[--i]);
            unsigned high = i > 0 ? nibble(digits[--i]) : 0;
            bytes[size++] = static_cast<unsigned char>(high << 4 | low);
        }
        while (size > 0 && bytes[size - 1] == 0) --size;
    } else {
        // No Duktape call in here (see ToText). BN_dec2bn wants a NUL-terminated string, which
        // Duktape's strings are.
        bool ok = [&] {
            BN_CTX* scratch = Scratch();
            if (scratch == nullptr) return false;
            BnFrame frame(scratch);
            BIGNUM* bn = BN_CTX_get(scratch);
            if (bn == nullptr || BN_dec2bn(&bn, digits) != static_cast<int>(length)) return false;
            int n = BN_num_bytes(bn);
            if (n < 0 || static_cast<std::size_t>(n) > capacity || BN_bn2lebinpad(bn, bytes, n) != n) return false;
            size = static_cast<std::size_t>(n);
            return true;
        }();
        if (!ok) return DUK_RET_ERROR;
    }
    PushBig(ctx, bytes, size, false);
    return 1;
}

// __sigil_bigint_arith(proto): keeps JSBI.prototype for the answers and hands out the natives.
duk_ret_t Bind(duk_context* ctx) {
    if (!duk_is_object(ctx, 0)) return DUK_RET_TYPE_ERROR;
    duk_push_global_stash(ctx);
    if (duk_has_prop_string(ctx, -1, PROTO_KEY)) return duk_type_error(ctx, "already bound");
    duk_dup(ctx, 0);
    duk_put_prop_string(ctx, -2, PROTO_KEY);
    duk_get_global_string(ctx, "Array");
    duk_put_prop_string(ctx, -2, ARRAY_KEY);
    duk_pop(ctx);
    struct Entry {
        const char* name;
        duk_c_function fn;
        duk_idx_t nargs;
    };
    static constexpr Entry entries[] = {{"mul", Mul, 2}, {"div", Div, 2},       {"mod", Mod, 2},
                                        {"add", Add, 2}, {"sub", Sub, 2},       {"pow", Pow, 2},
                                        {"modpow", ModPow, 3}, {"modinv", ModInv, 2},
                                        {"text", ToText, 2}, {"parse", Parse, 2}, {"mulmod", MulMod, 3},
                                        {"shl", Shl, 2}, {"sar", Sar, 2}, {"and", And, 2}, {"or", Or, 2},
                                        {"xor", Xor, 2}};
    duk_push_object(ctx);
    for (const Entry& entry : entries) {
        duk_push_c_function(ctx, entry.fn, entry.nargs);
        duk_put_prop_string(ctx, -2, entry.name);
    }
    return 1;
}

}  // namespace

void InstallBigIntArithNatives(duk_context* ctx) {
    duk_push_c_function(ctx, Bind, 1);
    duk_put_global_string(ctx, "__sigil_bigint_arith");
}

}  // namespace sigil::workers
