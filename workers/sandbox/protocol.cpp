#include "workers/sandbox/protocol.h"

#include <algorithm>
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

void PutU32(Bytes& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

std::uint32_t GetU32(const std::uint8_t* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// Appends fields to a payload; remembers overflow instead of failing each call.
class Writer {
public:
    Writer(SandboxMessageType type, std::size_t max_payload) : m_max(max_payload) {
        m_out.resize(SANDBOX_HEADER_SIZE);
        m_out.push_back(static_cast<std::uint8_t>(type));
    }
    void Field(std::string_view bytes) {
        if (m_too_large || bytes.size() > m_max || m_out.size() - SANDBOX_HEADER_SIZE + 4 + bytes.size() > m_max) {
            m_too_large = true;
            return;
        }
        PutU32(m_out, static_cast<std::uint32_t>(bytes.size()));
        m_out.insert(m_out.end(), bytes.begin(), bytes.end());
    }
    void U64(std::uint64_t v) {
        char b[8];
        for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (56 - 8 * i));
        Field(std::string_view(b, 8));
    }
    void Bool(bool v) { Field(v ? std::string_view("\x01", 1) : std::string_view("\x00", 1)); }
    Result<Bytes> Finish() && {
        if (m_too_large) return MakeError(ErrorKind::TooLarge, "frame_too_large", "sandbox message exceeds the frame cap");
        const auto len = static_cast<std::uint32_t>(m_out.size() - SANDBOX_HEADER_SIZE);
        for (int i = 0; i < 4; ++i) m_out[i] = static_cast<std::uint8_t>(len >> (24 - 8 * i));
        return std::move(m_out);
    }

private:
    std::size_t m_max;
    Bytes m_out;
    bool m_too_large = false;
};

// Reads fields in order; any shortfall is a malformed message.
class Reader {
public:
    explicit Reader(ByteView payload) : m_p(payload) {}
    bool Field(std::string& out) {
        if (m_p.size() - m_pos < 4) return false;
        const std::uint32_t n = GetU32(m_p.data() + m_pos);
        m_pos += 4;
        if (m_p.size() - m_pos < n) return false;
        out.assign(reinterpret_cast<const char*>(m_p.data() + m_pos), n);
        m_pos += n;
        return true;
    }
    bool U64(std::uint64_t& out) {
        std::string b;
        if (!Field(b) || b.size() != 8) return false;
        out = 0;
        for (unsigned char c : b) out = (out << 8) | c;
        return true;
    }
    bool Bool(bool& out) {
        std::string b;
        if (!Field(b) || b.size() != 1 || static_cast<unsigned char>(b[0]) > 1) return false;
        out = b[0] == 1;
        return true;
    }
    bool AtEnd() const { return m_pos == m_p.size(); }

private:
    ByteView m_p;
    std::size_t m_pos = 1;  // past the type byte
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
    if (payload.empty()) return Malformed();
    Reader r(payload);
    bool fields_ok = false;
    SandboxMessage out;
    switch (static_cast<SandboxMessageType>(payload[0])) {
    case SandboxMessageType::Run: {
        SandboxRun m;
        fields_ok = r.Field(m.code) && r.Field(m.params_json) && r.U64(m.time_ms) && r.U64(m.memory_bytes) &&
                    r.Bool(m.lower);
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

Status SandboxFrameReader::CheckHeader() {
    if (Pending() < SANDBOX_HEADER_SIZE) return common::Success();
    const std::uint32_t len = GetU32(m_buf.data() + m_pos);
    if (len == 0) m_failed = MakeError(ErrorKind::InvalidInput, "frame_empty", "sandbox frame of length 0");
    else if (len > m_max_payload)
        m_failed = MakeError(ErrorKind::TooLarge, "frame_too_large", "sandbox frame exceeds the cap");
    if (m_failed) return *m_failed;
    return common::Success();
}

Status SandboxFrameReader::Feed(ByteView data) {
    if (m_failed) return *m_failed;
    // Drop consumed bytes first so the buffer never holds more than one frame plus one read.
    if (m_pos > 0) {
        m_buf.erase(m_buf.begin(), m_buf.begin() + static_cast<std::ptrdiff_t>(m_pos));
        m_pos = 0;
    }
    // Check a header completed by this feed before buffering what follows it.
    const std::size_t before = m_buf.size();
    if (before < SANDBOX_HEADER_SIZE) {
        const std::size_t take = std::min(SANDBOX_HEADER_SIZE - before, data.size());
        m_buf.insert(m_buf.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
        data = data.subspan(take);
        SIGIL_TRY_STATUS(CheckHeader());
    }
    m_buf.insert(m_buf.end(), data.begin(), data.end());
    return common::Success();
}

Result<std::optional<SandboxMessage>> SandboxFrameReader::Next() {
    if (m_failed) return *m_failed;
    SIGIL_TRY_STATUS(CheckHeader());
    if (Pending() < SANDBOX_HEADER_SIZE) return std::optional<SandboxMessage>();
    const std::uint32_t len = GetU32(m_buf.data() + m_pos);
    if (Pending() - SANDBOX_HEADER_SIZE < len) return std::optional<SandboxMessage>();
    auto decoded = DecodeSandboxPayload(ByteView(m_buf.data() + m_pos + SANDBOX_HEADER_SIZE, len));
    m_pos += SANDBOX_HEADER_SIZE + len;
    if (!decoded.ok()) {
        m_failed = decoded.error();
        return *m_failed;
    }
    return std::optional<SandboxMessage>(std::move(decoded).value());
}

}  // namespace sigil::workers
