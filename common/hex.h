// Hex encoding and strict decoding (lowercase out; either case in).
#pragma once

#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::common {

// Lowercase hex of `data`, with a "0x" prefix when `prefixed`.
std::string HexEncode(ByteView data, bool prefixed = false);

enum class HexPrefix { Optional, Required, Forbidden };

// Decode hex. Refuses odd length, any non-hex character, and a prefix contrary to `prefix`.
// Errors: InvalidInput "invalid_hex".
Result<Bytes> HexDecode(std::string_view text, HexPrefix prefix = HexPrefix::Optional);

// Decode hex that must be exactly N bytes (e.g. 32 for a hash). Errors: InvalidInput "invalid_hex".
Result<Bytes> HexDecodeExact(std::string_view text, std::size_t n, HexPrefix prefix = HexPrefix::Optional);

}  // namespace sigil::common
