// Base64 (RFC 4648 section 4: standard alphabet, '=' padding) with strict, canonical-only decoding.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::common {

// Size of an API key or usage key secret, and of its base64 text (DESIGN.md section 2).
constexpr std::size_t API_KEY_SECRET_SIZE = 32;
constexpr std::size_t API_KEY_BASE64_SIZE = 44;

// Encode `data` with the standard alphabet and '=' padding. Never fails; "" for empty input.
std::string Base64Encode(ByteView data);

// Decode canonical base64 only, so every byte string has exactly one accepted spelling
// (an API key must not have two texts that hash to different keccak256 values).
// Refuses: a length that is not a multiple of 4, any character outside A-Z a-z 0-9 + /
// (including whitespace, '-', '_' and NUL), '=' anywhere but the last one or two positions,
// missing padding, and non-zero unused bits in the last group (e.g. "QR==" for "A").
// "" decodes to no bytes.
// Errors: InvalidInput "invalid_base64"; the message never echoes the input.
Result<Bytes> Base64Decode(std::string_view text);

// As Base64Decode, but decodes straight into self-wiping memory and requires exactly
// `expected_size` decoded bytes (use API_KEY_SECRET_SIZE for API keys). No unwiped copy of
// the decoded secret is left behind, also on failure.
// Errors: InvalidInput "invalid_base64" (also for a wrong decoded length).
Result<SecretBytes> Base64DecodeSecret(std::string_view text, std::size_t expected_size);

}  // namespace sigil::common
