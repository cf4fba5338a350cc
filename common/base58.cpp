#include "common/base58.h"

#include <algorithm>

namespace sigil::common {
namespace {

constexpr char kAlphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

int DigitValue(char c) {
    // The alphabet is short; a linear search keeps the table obviously right.
    for (int i = 0; i < 58; ++i) {
        if (kAlphabet[i] == c) return i;
    }
    return -1;
}

Error BadBase58(std::string message) {
    return MakeError(ErrorKind::InvalidInput, "invalid_base58", std::move(message));
}

}  // namespace

std::string Base58Encode(ByteView data) {
    std::size_t zeros = 0;
    while (zeros < data.size() && data[zeros] == 0) ++zeros;
    // log(256)/log(58) < 1.38, so this many base-58 digits always suffice.
    std::vector<std::uint8_t> digits((data.size() - zeros) * 138 / 100 + 1);
    std::size_t used = 0;  // significant digits so far, at the end of `digits`, most significant first
    for (std::size_t i = zeros; i < data.size(); ++i) {
        unsigned carry = data[i];
        std::size_t j = 0;
        for (auto it = digits.rbegin(); (carry != 0 || j < used) && it != digits.rend(); ++it, ++j) {
            carry += 256u * *it;
            *it = static_cast<std::uint8_t>(carry % 58);
            carry /= 58;
        }
        used = j;
    }
    std::string out(zeros, '1');
    out.reserve(zeros + used);
    for (std::size_t k = digits.size() - used; k < digits.size(); ++k) out += kAlphabet[digits[k]];
    return out;
}

Result<Bytes> Base58Decode(std::string_view text, std::size_t max_decoded) {
    // A valid encoding of n bytes is at most n*138/100 + 1 characters (leading '1's count one each).
    if (text.size() > max_decoded * 138 / 100 + 1) return BadBase58("base58 text is too long");
    std::size_t ones = 0;
    while (ones < text.size() && text[ones] == '1') ++ones;
    // log(58)/log(256) < 0.733, so this many bytes always suffice.
    std::vector<std::uint8_t> bytes((text.size() - ones) * 733 / 1000 + 1);
    std::size_t used = 0;
    for (std::size_t i = ones; i < text.size(); ++i) {
        const int value = DigitValue(text[i]);
        if (value < 0) return BadBase58("base58 text contains a character outside the alphabet");
        unsigned carry = static_cast<unsigned>(value);
        std::size_t j = 0;
        for (auto it = bytes.rbegin(); (carry != 0 || j < used) && it != bytes.rend(); ++it, ++j) {
            carry += 58u * *it;
            *it = static_cast<std::uint8_t>(carry & 0xff);
            carry >>= 8;
        }
        used = j;
    }
    if (ones + used > max_decoded) return BadBase58("base58 text decodes to too many bytes");
    Bytes out(ones, 0);
    out.insert(out.end(), bytes.end() - static_cast<std::ptrdiff_t>(used), bytes.end());
    return out;
}

}  // namespace sigil::common
