// Base58btc (the Bitcoin alphabet) encoding and strict decoding, as used by IPFS CIDv0 strings.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::common {

// Largest decoded size Base58Decode accepts unless told otherwise. Base58 conversion is
// quadratic in the length, so untrusted text is capped before any arithmetic runs.
constexpr std::size_t BASE58_DEFAULT_MAX_DECODED = 1024;

// Base58btc of `data`: each leading zero byte becomes one '1', the rest is the big-endian
// number in base 58. Empty input gives "". Never fails.
std::string Base58Encode(ByteView data);

// Decode base58btc text. Strict: every character must be in the Bitcoin alphabet (no
// whitespace, no '0', 'O', 'I', 'l', no prefix). Empty text decodes to no bytes.
// Refuses text whose decoded form would exceed `max_decoded` bytes before doing the
// quadratic work.
// Errors: InvalidInput "invalid_base58" (bad character, or longer than allowed).
Result<Bytes> Base58Decode(std::string_view text, std::size_t max_decoded = BASE58_DEFAULT_MAX_DECODED);

}  // namespace sigil::common
