// A native for the BigInt runtime (js/lower_runtime.js): decimal text of a BigInt through
// OpenSSL's BN. JSBI's own decimal conversion runs in the interpreter at about 2 ms for a
// 300-bit value; this one takes microseconds. Exactness is OpenSSL's: hex in, decimal out.
#pragma once

#include <cstddef>

struct duk_hthread;

namespace sigil::workers {

// Longest hex magnitude __sigil_bigint_hex_to_dec converts (64 Ki bits); longer values stay
// with JSBI's conversion in the interpreter, which the run's deadline can interrupt.
constexpr std::size_t MAX_BIGINT_NATIVE_HEX_DIGITS = 16384;

// Registers the global native `__sigil_bigint_hex_to_dec(hex) -> decimal string` in `ctx`:
// `hex` is lowercase hex digits of a magnitude (no sign, no prefix). Throws a RangeError when
// it is longer than MAX_BIGINT_NATIVE_HEX_DIGITS and a TypeError when it is not hex digits.
// lower_runtime.js captures it when present. Also registers the arithmetic natives of
// bigint_arith.h (`__sigil_bigint_arith`). Must run inside a protected call.
void InstallBigIntNatives(duk_hthread* ctx);

}  // namespace sigil::workers
