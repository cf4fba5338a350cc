// Fuzz common/eip712: arbitrary bytes as a typed-data document (and, split at 0x01 bytes, as the
// ethers domain/types/value triple) never crash, and every refusal carries the one error code.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/eip712.h"

using namespace sigil::common;

namespace {

void CheckError(const Error& e) {
    if (e.code != "invalid_typed_data" || e.message.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    auto td = TypedData::Parse(text);
    if (!td.ok()) {
        CheckError(td.error());
    } else {
        // A parsed document must answer every accessor, and hash the same way twice.
        auto enc = td->EncodeType(td->PrimaryType());
        if (!enc.ok() || td->Digest() != *HashTypedDataJson(text)) std::abort();
        if (!td->TypeHash("EIP712Domain").ok()) std::abort();
    }

    // A raw 0x01 byte is invalid anywhere in JSON (strings must escape it), so it is a safe separator.
    const auto a = text.find('\x01');
    const auto b = a == std::string_view::npos ? a : text.find('\x01', a + 1);
    if (b != std::string_view::npos) {
        auto parts = TypedData::FromParts(text.substr(0, a), text.substr(a + 1, b - a - 1), text.substr(b + 1));
        if (!parts.ok()) CheckError(parts.error());
    }
    return 0;
}
