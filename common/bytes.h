// Byte containers shared by every encoding and crypto module.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace sigil::common {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;
using Hash32 = std::array<std::uint8_t, 32>;
using Address20 = std::array<std::uint8_t, 20>;

// View the characters of a string as bytes (no copy, no encoding change).
inline ByteView AsBytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

inline Bytes ToBytes(std::string_view s) {
    auto v = AsBytes(s);
    return {v.begin(), v.end()};
}

// Compare in time that depends only on the lengths, never on the contents.
bool ConstantTimeEqual(ByteView a, ByteView b);

}  // namespace sigil::common
