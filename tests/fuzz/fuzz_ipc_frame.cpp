// Fuzzes the keyd frame decoder and every message decoder (both directions) with arbitrary bytes.
// Input: byte 0 picks the read-chunk size (how the stream is split), the rest is the stream.
// Properties: no crash or sanitizer report; every decoded request re-encodes to the same payload.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>

#include "common/ipc_frame.h"
#include "keyd/protocol.h"

using namespace sigil::common;
using namespace sigil::keyd;

namespace {

void Check(bool ok) {
    if (!ok) std::abort();
}

ByteView Payload(const SecretBuffer& frame) { return ByteView(frame).subspan(IPC_HEADER_SIZE); }

bool Same(ByteView a, ByteView b) { return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()); }

void DecodeEverything(ByteView p) {
    if (DecodeEmptyRequest(p).ok()) Check(p.size() == 1);
    if (auto ref = DecodePkpRequest(p); ref.ok()) {
        Check(Same(Payload(EncodePkpRequest(static_cast<KeydMessage>(p[0]), *ref)), p));
    }
    if (auto cid = DecodeActionRequest(p); cid.ok()) {
        auto again = EncodeActionRequest(static_cast<KeydMessage>(p[0]), *cid);
        Check(again.ok() && Same(Payload(*again), p));
    }
    if (auto count = DecodeGetPayersRequest(p); count.ok()) Check(Same(Payload(EncodeGetPayersRequest(*count)), p));
    if (auto tx = DecodeSignPayerTxRequest(p); tx.ok()) {
        auto again = EncodeSignPayerTxRequest(*tx);
        Check(again.ok() && Same(Payload(*again), p));
    }
    (void)DecodeFailureReply(p);
    (void)DecodePongReply(p);
    (void)DecodePathReply(p);
    (void)DecodePublicKeyReply(p);
    (void)DecodePkpKeysReply(p);
    (void)DecodeSecretKeyReply(p);
    (void)DecodePayersReply(p);
    (void)DecodeSignedTxReply(p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t chunk = 1 + data[0] % 64;
    ByteView stream(data + 1, size - 1);
    // A small cap keeps the "too large" paths reachable with small inputs; the full cap is
    // exercised by the unit tests.
    FrameDecoder decoder(size % 2 == 0 ? IPC_MAX_PAYLOAD : 256);
    std::size_t off = 0;
    while (off < stream.size()) {
        while (auto payload = decoder.Front()) {
            Check(!payload->empty());
            DecodeEverything(*payload);
            decoder.Pop();
        }
        const std::size_t n = std::min({chunk, stream.size() - off, decoder.Space()});
        if (n == 0) break;
        if (!decoder.Feed(stream.subspan(off, n)).ok()) {
            Check(decoder.Failed() && !decoder.Front());
            return 0;
        }
        off += n;
    }
    while (auto payload = decoder.Front()) {
        DecodeEverything(*payload);
        decoder.Pop();
    }
    // Any payload, framed or not, must also be safe to decode directly.
    DecodeEverything(stream);
    return 0;
}
