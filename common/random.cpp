#include "common/random.h"

#include <climits>
#include <cstdio>
#include <cstdlib>

#include <openssl/rand.h>

namespace sigil::common {

void RandomFill(std::uint8_t* p, std::size_t n) {
    // RAND_bytes takes an int; feed large requests in chunks so the cast cannot wrap.
    while (n > 0) {
        const std::size_t chunk = n > static_cast<std::size_t>(INT_MAX) ? static_cast<std::size_t>(INT_MAX) : n;
        if (RAND_bytes(p, static_cast<int>(chunk)) != 1) {
            std::fputs("sigil: RAND_bytes failed; refusing to continue without a secure random source\n", stderr);
            std::abort();
        }
        p += chunk;
        n -= chunk;
    }
}

SecretBytes RandomSecret(std::size_t n) {
    SecretBytes out(n);
    RandomFill(out.data(), out.size());
    return out;
}

Bytes RandomBytes(std::size_t n) {
    Bytes out(n);
    RandomFill(out.data(), out.size());
    return out;
}

}  // namespace sigil::common
