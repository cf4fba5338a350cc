#include "common/uint256.h"

#include <algorithm>

namespace sigil::common {
namespace {

Error Overflow() { return MakeError(ErrorKind::InvalidInput, "uint256_overflow", "number does not fit in 256 bits"); }
Error BadNumber(std::string_view what) {
    return MakeError(ErrorKind::InvalidInput, "invalid_number", std::string("not a ") + std::string(what) + " number");
}

int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// value = value * mul + add over the big-endian array; returns the carry out of the top byte.
unsigned MulAddSmall(Hash32& be, unsigned mul, unsigned add) {
    unsigned carry = add;
    for (std::size_t i = be.size(); i-- > 0;) {
        const unsigned v = be[i] * mul + carry;
        be[i] = static_cast<std::uint8_t>(v & 0xff);
        carry = v >> 8;
    }
    return carry;
}

}  // namespace

Uint256 Uint256::FromUint64(std::uint64_t v) {
    Uint256 r;
    for (std::size_t i = 0; i < 8; ++i) r.m_be[31 - i] = static_cast<std::uint8_t>(v >> (8 * i));
    return r;
}

Result<Uint256> Uint256::FromBigEndian(ByteView be) {
    if (be.size() > 32) {
        // Leading zero bytes beyond 32 still denote a 256-bit value, but no caller needs that; refuse.
        return Overflow();
    }
    Uint256 r;
    std::copy(be.begin(), be.end(), r.m_be.begin() + (32 - be.size()));
    return r;
}

Uint256 Uint256::FromWord(const Hash32& word) {
    Uint256 r;
    r.m_be = word;
    return r;
}

Result<Uint256> Uint256::FromDecimal(std::string_view text) {
    if (text.empty() || text.size() > 100) return BadNumber("decimal");
    Uint256 r;
    for (char c : text) {
        if (c < '0' || c > '9') return BadNumber("decimal");
        if (MulAddSmall(r.m_be, 10, static_cast<unsigned>(c - '0')) != 0) return Overflow();
    }
    return r;
}

Result<Uint256> Uint256::FromHex(std::string_view text) {
    if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
    if (text.empty() || text.size() > 100) return BadNumber("hex");
    Uint256 r;
    for (char c : text) {
        const int d = HexDigit(c);
        if (d < 0) return BadNumber("hex");
        if (MulAddSmall(r.m_be, 16, static_cast<unsigned>(d)) != 0) return Overflow();
    }
    return r;
}

Bytes Uint256::MinimalBytes() const {
    auto first = std::find_if(m_be.begin(), m_be.end(), [](std::uint8_t b) { return b != 0; });
    return Bytes(first, m_be.end());
}

std::string Uint256::ToDecimal() const {
    if (IsZero()) return "0";
    Hash32 n = m_be;
    std::string digits;
    bool nonzero = true;
    while (nonzero) {
        // Long division by 10, most significant byte first.
        unsigned rem = 0;
        nonzero = false;
        for (auto& b : n) {
            const unsigned cur = (rem << 8) | b;
            b = static_cast<std::uint8_t>(cur / 10);
            rem = cur % 10;
            if (b != 0) nonzero = true;
        }
        digits.push_back(static_cast<char>('0' + rem));
    }
    std::reverse(digits.begin(), digits.end());
    return digits;
}

std::string Uint256::ToQuantityHex() const {
    static constexpr char HEX[] = "0123456789abcdef";
    std::string out = "0x";
    bool started = false;
    for (std::uint8_t b : m_be) {
        for (unsigned nib : {static_cast<unsigned>(b >> 4), static_cast<unsigned>(b & 0x0f)}) {
            if (!started && nib == 0) continue;
            started = true;
            out.push_back(HEX[nib]);
        }
    }
    if (!started) out.push_back('0');
    return out;
}

bool Uint256::IsZero() const {
    return std::all_of(m_be.begin(), m_be.end(), [](std::uint8_t b) { return b == 0; });
}

unsigned Uint256::BitLength() const {
    for (std::size_t i = 0; i < 32; ++i) {
        if (m_be[i] == 0) continue;
        unsigned bits = 0;
        for (unsigned v = m_be[i]; v != 0; v >>= 1) ++bits;
        return static_cast<unsigned>((31 - i) * 8) + bits;
    }
    return 0;
}

std::optional<std::uint64_t> Uint256::ToUint64() const {
    if (BitLength() > 64) return std::nullopt;
    std::uint64_t v = 0;
    for (std::size_t i = 24; i < 32; ++i) v = (v << 8) | m_be[i];
    return v;
}

std::optional<Uint256> Uint256::CheckedAdd(const Uint256& other) const {
    Uint256 r;
    unsigned carry = 0;
    for (std::size_t i = 32; i-- > 0;) {
        const unsigned v = m_be[i] + other.m_be[i] + carry;
        r.m_be[i] = static_cast<std::uint8_t>(v & 0xff);
        carry = v >> 8;
    }
    if (carry != 0) return std::nullopt;
    return r;
}

std::optional<Uint256> Uint256::CheckedSub(const Uint256& other) const {
    if (*this < other) return std::nullopt;
    Uint256 r;
    int borrow = 0;
    for (std::size_t i = 32; i-- > 0;) {
        int v = static_cast<int>(m_be[i]) - other.m_be[i] - borrow;
        borrow = v < 0 ? 1 : 0;
        if (v < 0) v += 256;
        r.m_be[i] = static_cast<std::uint8_t>(v);
    }
    return r;
}

std::optional<Uint256> Uint256::CheckedMul(std::uint64_t factor) const {
    // Multiply by each 32-bit half separately so every byte product plus carry fits in 64 bits.
    auto mul32 = [](const Hash32& a, std::uint32_t f, std::size_t shift_bytes) -> std::optional<Uint256> {
        Uint256 r;
        std::uint64_t carry = 0;
        for (std::size_t i = 32; i-- > 0;) {
            const std::uint64_t v = static_cast<std::uint64_t>(a[i]) * f + carry;
            carry = v >> 8;
            if (i < shift_bytes) {
                if ((v & 0xff) != 0) return std::nullopt;
                continue;
            }
            r.m_be[i - shift_bytes] = static_cast<std::uint8_t>(v & 0xff);
        }
        if (carry != 0) return std::nullopt;
        return r;
    };
    auto low = mul32(m_be, static_cast<std::uint32_t>(factor), 0);
    auto high = mul32(m_be, static_cast<std::uint32_t>(factor >> 32), 4);
    if (!low || !high) return std::nullopt;
    return low->CheckedAdd(*high);
}

}  // namespace sigil::common
