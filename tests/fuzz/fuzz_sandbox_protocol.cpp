// Fuzz the sandbox protocol: the op-channel codec (frame splitting, payload decoding, and
// re-encoding of whatever decodes: a decoded message must encode to a frame that decodes to the
// same bytes) and the zygote control messages (the encoding is canonical: whatever decodes must
// encode to exactly the input packet).
//
// The codec is sans-IO in its own library (sigil_sandbox_protocol, common/ only), which the fuzz
// build compiles with the harnesses.
#include "workers/sandbox/protocol/control.h"
#include "workers/sandbox/protocol/protocol.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <algorithm>

using namespace sigil::workers;

namespace {

void CheckReencodes(const SandboxMessage& message) {
    auto frame = EncodeSandboxMessage(message);
    if (!frame.ok()) std::abort();  // anything decodable fits the cap it was decoded under
    auto again = DecodeSandboxPayload(
        sigil::common::ByteView(frame->data() + SANDBOX_HEADER_SIZE, frame->size() - SANDBOX_HEADER_SIZE));
    if (!again.ok()) std::abort();
    auto frame2 = EncodeSandboxMessage(*again);
    if (!frame2.ok() || *frame2 != *frame) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const sigil::common::ByteView input(data, size);
    if (auto direct = DecodeSandboxPayload(input); direct.ok()) CheckReencodes(*direct);
    if (auto control = DecodeZygoteControl(input); control.ok()) {
        const sigil::common::Bytes again = EncodeZygoteControl(*control);
        if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
        // SPAWN carries no pid; KILL and EXITED name a real process; SPAWNED may say -1 (fork failed).
        const bool names_process = control->type == ZygoteControlType::Kill || control->type == ZygoteControlType::Exited;
        if (names_process && control->pid <= 0) std::abort();
        if (control->type == ZygoteControlType::Spawned && control->pid == 0) std::abort();
    }

    // Stream the same bytes through the reader in chunks whose sizes come from the input.
    SandboxFrameReader reader(4096);
    std::size_t pos = 0;
    while (pos < size) {
        const std::size_t chunk = 1 + data[pos] % 64;
        const std::size_t take = chunk < size - pos ? chunk : size - pos;
        if (!reader.Feed(input.subspan(pos, take)).ok()) return 0;
        pos += take;
        for (;;) {
            auto next = reader.Next();
            if (!next.ok()) return 0;
            if (!next->has_value()) break;
            CheckReencodes(**next);
        }
    }
    return 0;
}
