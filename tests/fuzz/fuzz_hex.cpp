// Fuzz common/hex: decoding arbitrary text never crashes, and whatever decodes re-encodes to
// the input itself (lowercased, prefix kept as given), under every prefix policy.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/hex.h"

using namespace sigil::common;

namespace {

std::string Lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

void Check(std::string_view text, HexPrefix policy) {
    auto r = HexDecode(text, policy);
    if (!r.ok()) {
        if (r.error().code != "invalid_hex") std::abort();
        return;
    }
    const bool prefixed = text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (prefixed && policy == HexPrefix::Forbidden) std::abort();
    if (!prefixed && policy == HexPrefix::Required) std::abort();
    // Re-encoding gives back the canonical (lowercase, "0x"-normalised) input.
    if (HexEncode(*r, prefixed) != Lower(text)) std::abort();
    auto exact = HexDecodeExact(text, r->size(), policy);
    if (!exact.ok() || *exact != *r) std::abort();
    if (HexDecodeExact(text, r->size() + 1, policy).ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    Check(text, HexPrefix::Optional);
    Check(text, HexPrefix::Required);
    Check(text, HexPrefix::Forbidden);
    return 0;
}
