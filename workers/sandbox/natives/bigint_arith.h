// BigInt natives for the BigInt runtime (js/lower_runtime.js): multiplication, division,
// remainder, exponentiation, addition, subtraction, shifts, bitwise and/or/xor of non-negative
// values, modular exponentiation, modular inverse and text conversion of JSBI values through OpenSSL's BN. JSBI's own arithmetic runs in Duktape's
// interpreter about 1000x slower than V8 at 256 bits; these run in microseconds.
//
// Representation across the boundary: the JSBI objects themselves. A JSBI value is an Array
// (its prototype JSBI.prototype) of 30-bit digits, least significant first, with a boolean
// `sign` (true when negative; zero is never negative). The natives read the digits directly and
// build their answer the same way, so no text conversion runs in the interpreter.
#pragma once

#include <cstddef>

struct duk_hthread;

namespace sigil::workers {

// Largest operand, in bits, any of these natives takes (64 Ki bits, as the decimal native, counted
// in whole 30-bit digits: 2,185 digits, up to 65,550 bits); a power's result is held to 64 Ki bits.
// One call is bounded in time (a multiplication of two such operands takes well under a
// millisecond). Larger operands stay with JSBI in the interpreter, which the run's deadline can
// interrupt.
constexpr std::size_t MAX_BIGINT_NATIVE_BITS = 65536;
// Modular exponentiation and inverse cost about bits^3 and bits^2, so their operands are held
// to fewer bits to keep one call within milliseconds.
constexpr std::size_t MAX_BIGINT_NATIVE_MODEXP_BITS = 4096;
constexpr std::size_t MAX_BIGINT_NATIVE_MODINV_BITS = 8192;
// Text conversion is linear (hex) or about bits^2 with a small constant (decimal, a few ms here),
// and a product of two largest operands must still print natively: four times the operand limit.
constexpr std::size_t MAX_BIGINT_NATIVE_TEXT_BITS = 4 * MAX_BIGINT_NATIVE_BITS;

// Registers the global native `__sigil_bigint_arith(proto)` in `ctx`. The runtime calls it once
// with JSBI.prototype and removes the global; it answers an object of functions, each taking
// JSBI values and answering a new one (prototype `proto`) or undefined when the operation is not
// theirs to do (an operand too large, a result over MAX_BIGINT_NATIVE_BITS, a divisor of zero, a
// negative exponent, a modulus of zero or no inverse): the runtime then falls back to JSBI,
// which throws V8's error where there is one. So these never throw for a value's reasons; they
// throw a TypeError only when handed something that is not a well-formed JSBI value.
//   mul(a, b)  a * b          div(a, b)  a / b (truncated)   mod(a, b)  a % b (sign of a)
//   add(a, b)  a + b          sub(a, b)  a - b               pow(a, b)  a ** b
//   mulmod(a, b, m)  a * b % m (the remainder's sign is the product's), m not zero
//   shl(a, k)  a << k         sar(a, k)  a >> k (floor)      for 0 <= k < 2^17
//   and(a, b)  a & b          or(a, b)   a | b               xor(a, b)  a ^ b   (a, b >= 0)
//   modpow(a, e, m)  a ** e mod m in [0, m) for m > 0 and e >= 0
//   modinv(a, m)     the inverse of a mod m in [0, m) for m > 0
//   text(a, radix)   a's digits in radix 16 or 10 (lowercase, '-' when negative): a string
//   parse(s, radix)  the value of digits only (no sign, prefix or space) in radix 16 or 10
// (modpow and modinv are not reached from action code yet: no operator maps to them.)
// A second call of __sigil_bigint_arith throws a TypeError. Must run inside a protected call.
void InstallBigIntArithNatives(duk_hthread* ctx);

}  // namespace sigil::workers
