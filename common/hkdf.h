// HKDF-SHA256 (RFC 5869) through OpenSSL's EVP_KDF "HKDF", output in self-wiping memory.
#pragma once

#include <cstddef>

#include "common/bytes.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::common {

// RFC 5869 caps the output at 255 hash lengths.
constexpr std::size_t HKDF_SHA256_MAX_OUTPUT = 255 * 32;
// Our own cap on `info`, well inside what every OpenSSL 3 release accepts.
constexpr std::size_t HKDF_MAX_INFO = 1024;

// HKDF-SHA256 extract-then-expand: OKM = HKDF-Expand(HKDF-Extract(salt, ikm), info, length).
// In:  ikm     input keying material, 1 or more bytes (the root key, usually).
//      salt    may be empty; RFC 5869 then uses 32 zero bytes, which is what an empty
//              HMAC key amounts to.
//      info    context and purpose, 0..HKDF_MAX_INFO bytes.
//      length  1..HKDF_SHA256_MAX_OUTPUT output bytes.
// Out: `length` bytes of output keying material.
// Errors: InvalidInput "invalid_hkdf_input" for an empty ikm, an oversized info or a length
//         out of range; Internal "hkdf_failed" if OpenSSL fails (not expected).
Result<SecretBytes> HkdfSha256(ByteView ikm, ByteView salt, ByteView info, std::size_t length);

}  // namespace sigil::common
