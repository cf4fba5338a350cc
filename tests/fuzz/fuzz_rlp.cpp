// libFuzzer harness: arbitrary bytes into the strict RLP decoder; a decoded item must re-encode to the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/eth_tx.h"
#include "common/rlp.h"

using namespace sigil::common;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const ByteView input(data, size);
    auto item = RlpDecode(input);
    if (item.ok()) {
        // The decoder accepts only canonical encodings, so encoding is its exact inverse.
        const Bytes again = RlpEncode(*item);
        if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
        (void)RlpToUint256(*item);
    }
    // The same bytes as an unsigned EIP-1559 payload: must parse or be refused, and round-trip when parsed.
    auto tx = DecodeSigningPayload(input);
    if (tx.ok()) {
        const Bytes again = SigningPayload(*tx);
        if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
    }
    return 0;
}
