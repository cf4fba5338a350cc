#include "common/hex.h"

namespace sigil::common {
namespace {

constexpr char kDigits[] = "0123456789abcdef";

int Nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

Error BadHex(std::string message) { return MakeError(ErrorKind::InvalidInput, "invalid_hex", std::move(message)); }

}  // namespace

std::string HexEncode(ByteView data, bool prefixed) {
    std::string out;
    out.reserve(data.size() * 2 + (prefixed ? 2 : 0));
    if (prefixed) out += "0x";
    for (std::uint8_t b : data) {
        out += kDigits[b >> 4];
        out += kDigits[b & 0x0f];
    }
    return out;
}

Result<Bytes> HexDecode(std::string_view text, HexPrefix prefix) {
    const bool has_prefix = text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (has_prefix && prefix == HexPrefix::Forbidden) return BadHex("hex must not start with 0x");
    if (!has_prefix && prefix == HexPrefix::Required) return BadHex("hex must start with 0x");
    if (has_prefix) text.remove_prefix(2);
    if (text.size() % 2 != 0) return BadHex("hex has an odd number of digits");
    Bytes out(text.size() / 2);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const int hi = Nibble(text[2 * i]);
        const int lo = Nibble(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return BadHex("hex contains a character that is not a hex digit");
        out[i] = static_cast<std::uint8_t>((hi << 4) | lo);
    }
    return out;
}

Result<Bytes> HexDecodeExact(std::string_view text, std::size_t n, HexPrefix prefix) {
    auto r = HexDecode(text, prefix);
    if (!r.ok()) return r;
    if (r->size() != n) {
        return BadHex("hex must encode exactly " + std::to_string(n) + " bytes, got " + std::to_string(r->size()));
    }
    return r;
}

}  // namespace sigil::common
