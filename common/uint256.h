// Uint256: an unsigned 256-bit integer (wei amounts, ABI words, RLP quantities), stored big-endian.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::common {

class Uint256 {
public:
    // Zero.
    constexpr Uint256() = default;
    // The value `v`.
    static Uint256 FromUint64(std::uint64_t v);

    // Big-endian bytes, at most 32 (shorter input is left-padded with zeros; leading zeros allowed).
    // Errors: InvalidInput "uint256_overflow" when more than 32 bytes.
    static Result<Uint256> FromBigEndian(ByteView be);
    // Exactly 32 big-endian bytes (an ABI word); infallible.
    static Uint256 FromWord(const Hash32& word);

    // Decimal digits only (no sign, no spaces, no "0x"; leading zeros allowed; at most 78 digits).
    // Errors: InvalidInput "invalid_number" for empty/non-digit input, "uint256_overflow" above 2^256-1.
    static Result<Uint256> FromDecimal(std::string_view text);
    // Hex digits with an optional "0x" prefix (either case); "0x" alone is refused. At most 64 significant digits.
    // Errors: InvalidInput "invalid_number" for empty/non-hex input, "uint256_overflow" above 2^256-1.
    static Result<Uint256> FromHex(std::string_view text);

    // The 32-byte big-endian word.
    const Hash32& Word() const { return m_be; }
    // Big-endian bytes without leading zeros (empty for zero): the RLP integer form.
    Bytes MinimalBytes() const;
    // Base-10 digits, "0" for zero.
    std::string ToDecimal() const;
    // "0x"-prefixed lowercase hex without leading zeros ("0x0" for zero): the JSON-RPC quantity form.
    std::string ToQuantityHex() const;

    bool IsZero() const;
    // Number of significant bits (0 for zero, 256 when the top bit is set).
    unsigned BitLength() const;
    // The value if it fits in 64 bits.
    std::optional<std::uint64_t> ToUint64() const;

    // Arithmetic that reports overflow instead of wrapping: nullopt on overflow/underflow.
    std::optional<Uint256> CheckedAdd(const Uint256& other) const;
    std::optional<Uint256> CheckedSub(const Uint256& other) const;
    std::optional<Uint256> CheckedMul(std::uint64_t factor) const;

    friend bool operator==(const Uint256& a, const Uint256& b) = default;
    friend std::strong_ordering operator<=>(const Uint256& a, const Uint256& b) { return a.m_be <=> b.m_be; }

private:
    Hash32 m_be{};
};

}  // namespace sigil::common
