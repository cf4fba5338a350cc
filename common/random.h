// Cryptographically secure random bytes from OpenSSL's DRBG, for secrets, nonces and ids.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/bytes.h"
#include "common/secret.h"

namespace sigil::common {

// Fill p[0..n) with random bytes from RAND_bytes. n may be 0.
// Aborts the process if the generator fails: there is no weaker fallback, because a
// predictable key or nonce is worse than no service at all.
void RandomFill(std::uint8_t* p, std::size_t n);

// n random bytes in locked, self-wiping memory (keys, API-key secrets, derivation paths).
// Aborts on generator failure (see RandomFill).
SecretBytes RandomSecret(std::size_t n);

// n random bytes for values that are not secret once used (nonces, ids).
// Aborts on generator failure (see RandomFill).
Bytes RandomBytes(std::size_t n);

}  // namespace sigil::common
