// Fuzz common/base64: decoding arbitrary text never crashes; whatever decodes re-encodes to
// exactly the input (strict decoding accepts only canonical text), and the secret decoder
// agrees with the plain one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/base64.h"

using namespace sigil::common;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = Base64Decode(text);
    if (!r.ok()) {
        if (r.error().code != "invalid_base64") std::abort();
    } else if (Base64Encode(*r) != text) {
        std::abort();
    }
    // The secret decoder accepts exactly the same texts (asked for the length they decode to).
    const std::size_t want = r.ok() ? r->size() : API_KEY_SECRET_SIZE;
    auto s = Base64DecodeSecret(text, want);
    if (s.ok() != r.ok()) std::abort();
    if (s.ok() && !ConstantTimeEqual(s->view(), *r)) std::abort();
    if (r.ok() && Base64DecodeSecret(text, want + 1).ok()) std::abort();
    // Encoding arbitrary bytes always decodes back.
    const ByteView raw(data, size);
    auto back = Base64Decode(Base64Encode(raw));
    if (!back.ok() || *back != Bytes(raw.begin(), raw.end())) std::abort();
    return 0;
}
