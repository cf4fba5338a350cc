// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface.
#pragma once

#include <string_view>

#include <openssl/evp.h>

#include "common/bytes.h"
#include "common/handles.h"

namespace sigil::common {

constexpr std::size_t SHA256_SIZE = 32;

// Incremental hasher: Update any number of times, then Final once. After Final the object
// must not be used again (Update/Final abort). OpenSSL failures inside these calls mean a
// broken library or out of memory, not bad input, so they abort rather than return errors.
class Sha256 {
public:
    Sha256();
    void Update(ByteView data);
    Hash32 Final();

private:
    CHandle<EVP_MD_CTX, EVP_MD_CTX_free> m_ctx;
    bool m_finished = false;
};

// One-shot SHA-256 of `data`. Never fails (aborts on an OpenSSL failure, see Sha256).
Hash32 Sha256Hash(ByteView data);
inline Hash32 Sha256Hash(std::string_view s) { return Sha256Hash(AsBytes(s)); }

}  // namespace sigil::common
