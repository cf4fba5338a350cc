// Keccak-256 as Ethereum uses it (original Keccak padding 0x01, not FIPS-202 SHA3-256's 0x06).
#pragma once

#include <string_view>

#include "common/bytes.h"

namespace sigil::common {

// Incremental hasher: Update any number of times, then Final once.
class Keccak256 {
public:
    Keccak256();
    void Update(ByteView data);
    Hash32 Final();

private:
    std::uint64_t m_state[25];
    std::uint8_t m_buf[136];
    std::size_t m_len = 0;
};

Hash32 Keccak256Hash(ByteView data);
inline Hash32 Keccak256Hash(std::string_view s) { return Keccak256Hash(AsBytes(s)); }

}  // namespace sigil::common
