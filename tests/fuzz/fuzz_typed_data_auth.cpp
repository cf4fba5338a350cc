// Fuzz workers/api/typed_data_auth: arbitrary typed data and signature text never crash, never pass
// unless the signature recovers to message.address, and every refusal is a 400/401 with one of the
// documented codes. Input: one byte picking the flow and the clock, then typed data, a 0x01 byte,
// and the signature text (0x01 is invalid anywhere in JSON, so it is a safe separator).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "workers/api/typed_data_auth.h"

using namespace sigil;
using namespace sigil::workers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const std::set<std::string> kCodes = {
        "typed_data_too_large", "invalid_typed_data", "wrong_primary_type", "typed_data_schema_mismatch",
        "wrong_domain", "wrong_chain_id", "invalid_signature", "issued_at_out_of_window", "signature_mismatch",
        "signer_mismatch"};
    TypedDataPolicy policy;
    policy.flow = static_cast<SignatureFlow>(data[0] & 3);
    policy.chain_id = 31337;
    // The seed corpus is signed at issuedAt 1700000000; other clocks exercise the window.
    policy.now = (data[0] & 4) ? 1700000000 : (data[0] & 8) ? -1 : 1700000301;
    const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    const auto cut = rest.find('\x01');
    const std::string_view typed = rest.substr(0, cut);
    const std::string_view signature = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);

    auto r = VerifyTypedDataSignature(typed, signature, policy);
    if (!r.ok()) {
        const auto& e = r.error();
        if (!kCodes.count(e.code) || e.message.empty()) std::abort();
        if (e.kind != common::ErrorKind::InvalidInput && e.kind != common::ErrorKind::Unauthenticated) std::abort();
        return 0;
    }
    // Accepted: the same input gives the same answer, and the window held.
    auto again = VerifyTypedDataSignature(typed, signature, policy);
    if (!again.ok() || again->signer != r->signer || again->digest != r->digest) std::abort();
    const auto skew = static_cast<std::int64_t>(r->issued_at) - policy.now;
    if (skew > ISSUED_AT_WINDOW_SECONDS || skew < -ISSUED_AT_WINDOW_SECONDS) std::abort();
    return 0;
}
