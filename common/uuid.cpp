#include "common/uuid.h"

#include <array>
#include <cstdint>

#include "common/random.h"

namespace sigil::common {
namespace {

constexpr char DIGITS[] = "0123456789abcdef";

bool IsHyphenOffset(std::size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

}  // namespace

std::string NewUuidV4() {
    std::array<std::uint8_t, 16> b{};
    RandomFill(b.data(), b.size());
    b[6] = static_cast<std::uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
    b[8] = static_cast<std::uint8_t>((b[8] & 0x3f) | 0x80);  // variant 10xx (RFC 4122)
    std::string out;
    out.reserve(36);
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        out += DIGITS[b[i] >> 4];
        out += DIGITS[b[i] & 0x0f];
    }
    return out;
}

bool IsUuid(std::string_view text) {
    if (text.size() != 36) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (IsHyphenOffset(i)) {
            if (c != '-') return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

}  // namespace sigil::common
