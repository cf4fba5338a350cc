#include "workers/sandbox/protocol/control.h"

#include <cerrno>
#include <cstring>
#include <limits>

#include "common/fd_passing.h"
#include "common/ipc_frame.h"

namespace sigil::workers {

using common::ByteView;
using common::ErrorKind;
using common::MakeError;
using common::Result;

namespace {

// Largest control packet: header, type and two 8-byte fields with their sizes.
constexpr std::size_t MAX_PACKET = 64;

common::Error Malformed() {
    return MakeError(ErrorKind::InvalidInput, "malformed_message", "malformed zygote control message");
}

bool ReadPid(common::MessageReader& r, std::int32_t& out, bool allow_minus_one) {
    auto v = r.GetU64();
    if (!v.ok()) return false;
    const auto pid = static_cast<std::int64_t>(*v);
    if (pid > std::numeric_limits<std::int32_t>::max()) return false;
    if (!(pid > 0 || (allow_minus_one && pid == -1))) return false;
    out = static_cast<std::int32_t>(pid);
    return true;
}

}  // namespace

common::Bytes EncodeZygoteControl(const ZygoteControl& message) {
    common::MessageWriter w(static_cast<std::uint8_t>(message.type));
    switch (message.type) {
    case ZygoteControlType::Spawn: break;
    case ZygoteControlType::Spawned:
    case ZygoteControlType::Kill: w.PutU64(static_cast<std::uint64_t>(std::int64_t{message.pid})); break;
    case ZygoteControlType::Exited:
        w.PutU64(static_cast<std::uint64_t>(std::int64_t{message.pid}));
        w.PutU64(static_cast<std::uint32_t>(message.status));
        w.PutU64(message.cpu_us);
        break;
    }
    auto frame = std::move(w).Finish();  // a few dozen bytes: far below the cap
    return common::Bytes(frame->begin(), frame->end());
}

Result<ZygoteControl> DecodeZygoteControl(ByteView packet) {
    if (packet.size() < common::IPC_HEADER_SIZE) return Malformed();
    const std::uint32_t length = (std::uint32_t{packet[0]} << 24) | (std::uint32_t{packet[1]} << 16) |
                                 (std::uint32_t{packet[2]} << 8) | packet[3];
    if (length != packet.size() - common::IPC_HEADER_SIZE) return Malformed();
    auto r = common::MessageReader::Open(packet.subspan(common::IPC_HEADER_SIZE));
    if (!r.ok()) return Malformed();
    ZygoteControl out;
    bool ok = false;
    switch (static_cast<ZygoteControlType>(r->Type())) {
    case ZygoteControlType::Spawn:
        out.type = ZygoteControlType::Spawn;
        ok = true;
        break;
    case ZygoteControlType::Spawned:
        out.type = ZygoteControlType::Spawned;
        ok = ReadPid(*r, out.pid, true);
        break;
    case ZygoteControlType::Kill:
        out.type = ZygoteControlType::Kill;
        ok = ReadPid(*r, out.pid, false);
        break;
    case ZygoteControlType::Exited: {
        out.type = ZygoteControlType::Exited;
        ok = ReadPid(*r, out.pid, false);
        auto status = ok ? r->GetU64() : Result<std::uint64_t>(Malformed());
        ok = ok && status.ok() && *status <= std::numeric_limits<std::uint32_t>::max();
        if (ok) out.status = static_cast<std::int32_t>(static_cast<std::uint32_t>(*status));
        auto cpu = ok ? r->GetU64() : Result<std::uint64_t>(Malformed());
        ok = ok && cpu.ok();
        if (ok) out.cpu_us = *cpu;
        break;
    }
    default: return Malformed();
    }
    if (!ok || !r->Finish().ok()) return Malformed();
    return out;
}

bool SendZygoteControl(int control_fd, const ZygoteControl& message, int pass_fd) {
    const common::Bytes frame = EncodeZygoteControl(message);
    return common::SendWithDescriptors(control_fd, frame, &pass_fd, pass_fd >= 0 ? 1 : 0);
}

Result<std::optional<ReceivedControl>> ReceiveZygoteControl(int control_fd) {
    std::uint8_t buf[MAX_PACKET];
    common::ReceivedMessage got;
    if (!common::ReceiveWithDescriptors(control_fd, buf, got)) {
        return MakeError(ErrorKind::Unavailable, "control_failed", std::string("zygote control: ") + std::strerror(errno));
    }
    if (got.eof) return std::optional<ReceivedControl>();
    if (got.truncated) return Malformed();
    auto message = DecodeZygoteControl(ByteView(buf, got.size));
    if (!message.ok()) return message.error();
    const std::size_t want_fds = message->type == ZygoteControlType::Spawn ? 1 : 0;
    if (got.fds.size() != want_fds) return Malformed();
    ReceivedControl out{*message, {}};
    if (want_fds == 1) out.passed = std::move(got.fds[0]);
    return std::optional<ReceivedControl>(std::move(out));
}

}  // namespace sigil::workers
