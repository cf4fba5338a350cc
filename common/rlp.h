// RLP (Ethereum's Recursive Length Prefix): sans-IO encoder and strict canonical decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/uint256.h"

namespace sigil::common {

// One RLP item: a byte string or a list of items.
struct RlpItem {
    bool is_list = false;
    Bytes bytes;                 // the string's bytes when !is_list
    std::vector<RlpItem> items;  // the list's members when is_list

    static RlpItem String(ByteView b);
    static RlpItem List(std::vector<RlpItem> members);
    // Integers are big-endian strings without leading zeros; zero is the empty string.
    static RlpItem Uint(std::uint64_t v);
    static RlpItem Uint(const Uint256& v);

    friend bool operator==(const RlpItem&, const RlpItem&) = default;
};

// Nesting deeper than this is refused by RlpDecode (guards the recursion, not a protocol rule).
inline constexpr std::size_t RLP_MAX_DEPTH = 32;

// Canonical encoding of `item` (single bytes < 0x80 stand for themselves; minimal length prefixes).
Bytes RlpEncode(const RlpItem& item);
// Encoding of one byte string.
Bytes RlpEncodeString(ByteView b);
// Wrap already-encoded members (their concatenation) in a list header.
Bytes RlpEncodeListPayload(ByteView concatenated_members);

// Decode exactly one item spanning all of `data`.
// Refuses (InvalidInput): "rlp_truncated" (a length runs past the end), "rlp_trailing_bytes" (bytes after
// the item, or after a list's members within its declared length), "rlp_non_canonical" (a single byte
// < 0x80 wrapped as 0x81xx, a long-form length under 56, a length with leading zero bytes),
// "rlp_length_overflow" (a length that does not fit in 64 bits), "rlp_too_deep" (more than `max_depth`
// nested lists).
Result<RlpItem> RlpDecode(ByteView data, std::size_t max_depth = RLP_MAX_DEPTH);

// Read a canonical integer string (no leading zero byte) as 64 or 256 bits.
// Errors: InvalidInput "rlp_not_integer" (a list, leading zero, or too wide).
Result<std::uint64_t> RlpToUint64(const RlpItem& item);
Result<Uint256> RlpToUint256(const RlpItem& item);

}  // namespace sigil::common
