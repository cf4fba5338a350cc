// Fuzz the CID-string parsers (ParseCidV0, IsValidCid) and the base58 decoder with round-trip
// invariants, plus the CIDv0 builder's streaming against its one-shot answer on a small layout.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/base58.h"
#include "common/cid.h"

using namespace sigil::common;

namespace {

void Require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz_cid: invariant broken: %s\n", what);
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    // Base58 is a bijection: whatever decodes must encode back to the same text.
    if (auto decoded = Base58Decode(text)) Require(Base58Encode(*decoded) == text, "base58 round trip");

    auto parsed = ParseCidV0(text);
    if (parsed) Require(CidV0FromDigest(*parsed) == text, "CIDv0 round trip");
    if (parsed) Require(IsValidCid(text), "a parsed CIDv0 is a valid CID");
    (void)IsValidCid(text);

    // Streaming in two pieces must equal one shot; a tiny layout reaches deep trees quickly.
    if (size > 0) {
        const ByteView all(data, size);
        const std::size_t split = data[0] % size;
        CidV0Builder one_shot({7, 2}), streamed({7, 2});
        one_shot.Update(all);
        streamed.Update(all.first(split));
        streamed.Update(all.subspan(split));
        Require(one_shot.Final() == streamed.Final(), "streamed CID equals one-shot CID");
    }
    return 0;
}
