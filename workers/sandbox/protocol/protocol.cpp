#include "workers/sandbox/protocol/protocol.h"

#include "common/ipc_frame.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <type_traits>

namespace sigil::workers {

using common::ByteView;
using common::Bytes;
using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Status;

namespace {

// Appends fields to a payload (common/ipc_frame's writer with the sandbox's cap).
class Writer {
public:
    Writer(SandboxMessageType type, std::size_t max_payload) : m_w(static_cast<std::uint8_t>(type), max_payload) {}
    void Field(std::string_view bytes) {
        m_w.PutBytes(ByteView(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
    }
    void U64(std::uint64_t v) { m_w.PutU64(v); }
    void Bool(bool v) {
        const std::uint8_t b = v ? 1 : 0;
        m_w.PutBytes(ByteView(&b, 1));
    }
    Result<Bytes> Finish() && {
        auto frame = std::move(m_w).Finish();
        if (!frame.ok()) return MakeError(ErrorKind::TooLarge, "frame_too_large", "sandbox message exceeds the frame cap");
        return Bytes(frame->begin(), frame->end());
    }

private:
    common::MessageWriter m_w;
};

// Reads fields in order (common/ipc_frame's reader); any shortfall is a malformed message.
class Reader {
public:
    explicit Reader(common::MessageReader r) : m_r(std::move(r)) {}
    bool Field(std::string& out) {
        auto f = m_r.GetBytes(std::numeric_limits<std::size_t>::max());
        if (!f.ok()) return false;
        out.assign(reinterpret_cast<const char*>(f->data()), f->size());
        return true;
    }
    bool U64(std::uint64_t& out) {
        auto v = m_r.GetU64();
        if (!v.ok()) return false;
        out = *v;
        return true;
    }
    bool Bool(bool& out) {
        auto f = m_r.GetFixed(1);
        if (!f.ok() || (*f)[0] > 1) return false;
        out = (*f)[0] == 1;
        return true;
    }
    bool AtEnd() const { return m_r.Finish().ok(); }

private:
    common::MessageReader m_r;
};

common::Error Malformed() {
    return MakeError(ErrorKind::InvalidInput, "malformed_message", "malformed sandbox message");
}

}  // namespace

Result<Bytes> EncodeSandboxMessage(const SandboxMessage& message, std::size_t max_payload) {
    return std::visit(
        [max_payload](const auto& m) -> Result<Bytes> {
            using T = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<T, SandboxRun>) {
                Writer w(SandboxMessageType::Run, max_payload);
                w.Field(m.code);
                w.Field(m.params_json);
                w.U64(m.time_ms);
                w.U64(m.memory_bytes);
                w.Bool(m.lower);
                w.Field(m.cid);
                w.Field(m.caller_json);
                w.U64(m.modules.size());
                for (const auto& module : m.modules) {
                    w.Field(module.cid);
                    w.Field(module.code);
                    w.Bool(module.lower);
                }
                return std::move(w).Finish();
            } else if constexpr (std::is_same_v<T, SandboxModuleLowered>) {
                Writer w(SandboxMessageType::ModuleLowered, max_payload);
                w.Field(m.cid);
                w.Field(m.code);
                return std::move(w).Finish();
            } else if constexpr (std::is_same_v<T, SandboxOp>) {
                Writer w(SandboxMessageType::Op, max_payload);
                w.Field(m.name);
                w.Field(m.args_json);
                return std::move(w).Finish();
            } else if constexpr (std::is_same_v<T, SandboxOpResult>) {
                Writer w(SandboxMessageType::OpResult, max_payload);
                w.Bool(m.ok);
                w.Field(m.value);
                return std::move(w).Finish();
            } else if constexpr (std::is_same_v<T, SandboxLog>) {
                Writer w(SandboxMessageType::Log, max_payload);
                w.Field(m.text);
                return std::move(w).Finish();
            } else if constexpr (std::is_same_v<T, SandboxLowered>) {
                Writer w(SandboxMessageType::Lowered, max_payload);
                w.Field(m.code);
                return std::move(w).Finish();
            } else {
                Writer w(SandboxMessageType::Done, max_payload);
                w.Bool(m.ok);
                w.Field(m.response_json);
                w.Field(m.error.code);
                w.Field(m.error.message);
                w.Field(m.error.stack);
                return std::move(w).Finish();
            }
        },
        message);
}

Result<SandboxMessage> DecodeSandboxPayload(ByteView payload) {
    auto opened = common::MessageReader::Open(payload);
    if (!opened.ok()) return Malformed();
    Reader r(std::move(opened).value());
    bool fields_ok = false;
    SandboxMessage out;
    switch (static_cast<SandboxMessageType>(payload[0])) {
    case SandboxMessageType::Run: {
        SandboxRun m;
        fields_ok = r.Field(m.code) && r.Field(m.params_json) && r.U64(m.time_ms) && r.U64(m.memory_bytes) &&
                    r.Bool(m.lower) && r.Field(m.cid) && r.Field(m.caller_json);
        std::uint64_t count = 0;
        fields_ok = fields_ok && r.U64(count) && count <= SANDBOX_MAX_MODULES;
        for (std::uint64_t i = 0; fields_ok && i < count; ++i) {
            SandboxModule module;
            fields_ok = r.Field(module.cid) && r.Field(module.code) && r.Bool(module.lower);
            m.modules.push_back(std::move(module));
        }
        out = std::move(m);
        break;
    }
    case SandboxMessageType::ModuleLowered: {
        SandboxModuleLowered m;
        fields_ok = r.Field(m.cid) && r.Field(m.code);
        out = std::move(m);
        break;
    }
    case SandboxMessageType::Op: {
        SandboxOp m;
        fields_ok = r.Field(m.name) && r.Field(m.args_json);
        out = std::move(m);
        break;
    }
    case SandboxMessageType::OpResult: {
        SandboxOpResult m;
        fields_ok = r.Bool(m.ok) && r.Field(m.value);
        out = std::move(m);
        break;
    }
    case SandboxMessageType::Log: {
        SandboxLog m;
        fields_ok = r.Field(m.text);
        out = std::move(m);
        break;
    }
    case SandboxMessageType::Done: {
        SandboxDone m;
        fields_ok = r.Bool(m.ok) && r.Field(m.response_json) && r.Field(m.error.code) && r.Field(m.error.message) &&
                    r.Field(m.error.stack);
        out = std::move(m);
        break;
    }
    case SandboxMessageType::Lowered: {
        SandboxLowered m;
        fields_ok = r.Field(m.code);
        out = std::move(m);
        break;
    }
    default:
        return Malformed();
    }
    if (!fields_ok || !r.AtEnd()) return Malformed();
    return out;
}

Status SandboxFrameReader::Feed(ByteView data) { return m_decoder.Feed(data); }

Result<std::optional<SandboxMessage>> SandboxFrameReader::Next() {
    if (m_failed) return *m_failed;
    if (m_decoder.Failed()) return m_decoder.failure();
    const auto payload = m_decoder.Front();
    if (!payload) return std::optional<SandboxMessage>();
    auto decoded = DecodeSandboxPayload(*payload);
    m_decoder.Pop();
    if (!decoded.ok()) {
        m_failed = decoded.error();
        return *m_failed;
    }
    return std::optional<SandboxMessage>(std::move(decoded).value());
}

}  // namespace sigil::workers
