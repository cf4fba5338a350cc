#include "common/base64.h"

#include <cstdint>
#include <string>
#include <utility>

namespace sigil::common {
namespace {

constexpr char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Value of one alphabet character, or -1. Arithmetic rather than a table indexed by the
// character, so decoding a secret makes no secret-dependent memory accesses.
int SextetOf(unsigned char c) {
    int v = -1;
    v += (((0x40 - c) & (c - 0x5b)) >> 8) & (c - 64);       // 'A'..'Z' -> 0..25  (+1 offset)
    v += (((0x60 - c) & (c - 0x7b)) >> 8) & (c - 70);       // 'a'..'z' -> 26..51
    v += (((0x2f - c) & (c - 0x3a)) >> 8) & (c + 5);        // '0'..'9' -> 52..61
    v += (((0x2a - c) & (c - 0x2c)) >> 8) & 63;             // '+'      -> 62
    v += (((0x2e - c) & (c - 0x30)) >> 8) & 64;             // '/'      -> 63
    return v;
}

Error BadBase64(std::string message) {
    return MakeError(ErrorKind::InvalidInput, "invalid_base64", std::move(message));
}

// Validate the shape of `text` and return how many bytes it decodes to, or an error.
Result<std::size_t> DecodedSize(std::string_view text) {
    if (text.size() % 4 != 0) return BadBase64("base64 length must be a multiple of 4");
    std::size_t pad = 0;
    if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
    return text.size() / 4 * 3 - pad;
}

// Decode `text` (already shape-checked, decoding to `out_size` bytes) into out.
Status DecodeInto(std::string_view text, std::uint8_t* out, std::size_t out_size) {
    const std::size_t data_chars = text.size() - (text.size() / 4 * 3 - out_size);
    int bad = 0;
    std::uint32_t acc = 0;
    int bits = 0;
    std::size_t o = 0;
    for (std::size_t i = 0; i < data_chars; ++i) {
        const int v = SextetOf(static_cast<unsigned char>(text[i]));
        bad |= v;  // negative (sign bit set) iff some character was outside the alphabet
        acc = (acc << 6) | static_cast<std::uint32_t>(v & 63);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = static_cast<std::uint8_t>(acc >> bits);
        }
    }
    if (bad < 0) return BadBase64("base64 contains a character outside the standard alphabet");
    // The bits left over in a padded group must be zero, or "QR==" and "QQ==" would both mean "A".
    if ((acc & ((1u << bits) - 1)) != 0) return BadBase64("base64 is not canonical: unused bits are not zero");
    return Success();
}

}  // namespace

std::string Base64Encode(ByteView data) {
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= data.size(); i += 3) {
        const std::uint32_t g = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) | data[i + 2];
        out += ALPHABET[(g >> 18) & 63];
        out += ALPHABET[(g >> 12) & 63];
        out += ALPHABET[(g >> 6) & 63];
        out += ALPHABET[g & 63];
    }
    const std::size_t rest = data.size() - i;
    if (rest > 0) {
        std::uint32_t g = std::uint32_t{data[i]} << 16;
        if (rest == 2) g |= std::uint32_t{data[i + 1]} << 8;
        out += ALPHABET[(g >> 18) & 63];
        out += ALPHABET[(g >> 12) & 63];
        out += rest == 2 ? ALPHABET[(g >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

Result<Bytes> Base64Decode(std::string_view text) {
    auto size = DecodedSize(text);
    if (!size.ok()) return size.error();
    Bytes out(*size);
    auto st = DecodeInto(text, out.data(), out.size());
    if (!st.ok()) return st.error();
    return out;
}

Result<SecretBytes> Base64DecodeSecret(std::string_view text, std::size_t expected_size) {
    auto size = DecodedSize(text);
    if (!size.ok()) return size.error();
    if (*size != expected_size) {
        return BadBase64("base64 must encode exactly " + std::to_string(expected_size) + " bytes");
    }
    SecretBytes out(expected_size);
    auto st = DecodeInto(text, out.data(), out.size());
    if (!st.ok()) return st.error();  // `out` wipes itself
    return out;
}

}  // namespace sigil::common
