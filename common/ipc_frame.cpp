#include "common/ipc_frame.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace sigil::common {
namespace {

std::uint32_t ReadU32(const std::uint8_t* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

void WriteU32(std::uint8_t* p, std::uint32_t v) {
    p[0] = static_cast<std::uint8_t>(v >> 24);
    p[1] = static_cast<std::uint8_t>(v >> 16);
    p[2] = static_cast<std::uint8_t>(v >> 8);
    p[3] = static_cast<std::uint8_t>(v);
}

Error Malformed(std::string_view what) {
    return MakeError(ErrorKind::InvalidInput, "malformed_message", std::string(what));
}

}  // namespace

// FrameDecoder ---------------------------------------------------------------------------------

FrameDecoder::FrameDecoder(std::size_t max_payload) : FrameDecoder(max_payload, IPC_HEADER_SIZE + max_payload, false) {}

FrameDecoder::FrameDecoder(std::size_t max_payload, std::size_t initial_size, bool growing)
    : m_max_payload(max_payload), m_growing(growing), m_buf(initial_size) {}

FrameDecoder FrameDecoder::Growing(std::size_t max_payload) {
    // Most op-channel frames (an op, a result, a log line) fit the first buffer.
    constexpr std::size_t INITIAL = 4096;
    return FrameDecoder(max_payload, std::min(INITIAL, IPC_HEADER_SIZE + max_payload), true);
}

void FrameDecoder::Reserve(std::size_t size) {
    if (size <= m_buf.size()) return;
    SecretBytes bigger(std::max(size, 2 * m_buf.size()));
    if (m_used > 0) std::memcpy(bigger.data(), m_buf.data(), m_used);
    m_buf = std::move(bigger);  // the old buffer wipes itself
}

std::size_t FrameDecoder::Space() const { return Failed() ? 0 : m_buf.size() - m_used; }

Status FrameDecoder::Feed(ByteView data) {
    if (m_failed) return *m_failed;
    if (m_growing) {
        Reserve(m_used + data.size());
    } else if (data.size() > Space()) {
        m_failed = MakeError(ErrorKind::TooLarge, "frame_buffer_full", "more bytes than the frame buffer holds");
        return *m_failed;
    }
    // Copy frame by frame so that every header is checked the moment its fourth byte arrives,
    // including headers of later frames pipelined behind an unpopped one.
    std::size_t offset = 0;
    while (offset < data.size()) {
        const std::size_t start = m_used - Pending();
        const std::size_t have = m_used - start;
        std::size_t want = IPC_HEADER_SIZE - have;
        if (have >= IPC_HEADER_SIZE) want = IPC_HEADER_SIZE + ReadU32(m_buf.data() + start) - have;
        const std::size_t take = std::min(want, data.size() - offset);
        std::memcpy(m_buf.data() + m_used, data.data() + offset, take);
        m_used += take;
        offset += take;
        if (have < IPC_HEADER_SIZE && have + take >= IPC_HEADER_SIZE) {
            const std::uint32_t length = ReadU32(m_buf.data() + start);
            if (length == 0) m_failed = MakeError(ErrorKind::InvalidInput, "frame_empty", "frame of length 0");
            if (length > m_max_payload) {
                m_failed = MakeError(ErrorKind::TooLarge, "frame_too_large",
                                     "frame of " + std::to_string(length) + " bytes exceeds the cap of " +
                                         std::to_string(m_max_payload));
            }
            if (m_failed) return *m_failed;
            if (m_growing) Reserve(start + IPC_HEADER_SIZE + length);
        }
    }
    return Success();
}

std::optional<ByteView> FrameDecoder::Front() const {
    if (m_failed || m_used < IPC_HEADER_SIZE) return std::nullopt;
    const std::size_t length = ReadU32(m_buf.data());
    if (m_used < IPC_HEADER_SIZE + length) return std::nullopt;
    return ByteView(m_buf.data() + IPC_HEADER_SIZE, length);
}

void FrameDecoder::Pop() {
    if (!Front()) return;
    const std::size_t total = IPC_HEADER_SIZE + ReadU32(m_buf.data());
    std::memmove(m_buf.data(), m_buf.data() + total, m_used - total);
    Wipe(m_buf.data() + (m_used - total), total);
    m_used -= total;
}

std::size_t FrameDecoder::Pending() const {
    std::size_t start = 0;
    while (start + IPC_HEADER_SIZE <= m_used) {
        const std::size_t total = IPC_HEADER_SIZE + ReadU32(m_buf.data() + start);
        if (start + total > m_used) break;
        start += total;
    }
    return m_used - start;
}

// MessageWriter / MessageReader ----------------------------------------------------------------

MessageWriter::MessageWriter(std::uint8_t type, std::size_t max_payload) : m_max_payload(max_payload) {
    m_frame.reserve(64);
    m_frame.resize(IPC_HEADER_SIZE);
    m_frame.push_back(type);
}

void MessageWriter::PutBytes(ByteView field) {
    if (m_too_large) return;
    const std::size_t payload_after = m_frame.size() - IPC_HEADER_SIZE + 4 + field.size();
    if (field.size() > m_max_payload || payload_after > m_max_payload) {
        m_too_large = true;
        return;
    }
    const std::size_t at = m_frame.size();
    m_frame.resize(at + 4 + field.size());
    WriteU32(m_frame.data() + at, static_cast<std::uint32_t>(field.size()));
    if (!field.empty()) std::memcpy(m_frame.data() + at + 4, field.data(), field.size());
}

void MessageWriter::PutU64(std::uint64_t value) {
    std::array<std::uint8_t, 8> be{};
    for (int i = 7; i >= 0; --i, value >>= 8) be[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value);
    PutBytes(be);
}

Result<SecretBuffer> MessageWriter::Finish() && {
    if (m_too_large) {
        return MakeError(ErrorKind::TooLarge, "frame_too_large",
                         "message exceeds the frame cap of " + std::to_string(m_max_payload) + " bytes");
    }
    WriteU32(m_frame.data(), static_cast<std::uint32_t>(m_frame.size() - IPC_HEADER_SIZE));
    return std::move(m_frame);
}

Result<MessageReader> MessageReader::Open(ByteView payload) {
    if (payload.empty()) return Malformed("empty payload");
    return MessageReader(payload[0], payload.subspan(1));
}

Result<ByteView> MessageReader::GetBytes(std::size_t max_size) {
    if (m_rest.size() < 4) return Malformed("field header truncated");
    const std::size_t size = ReadU32(m_rest.data());
    if (size > m_rest.size() - 4) return Malformed("field runs past the end");
    if (size > max_size) return Malformed("field too long");
    const ByteView field = m_rest.subspan(4, size);
    m_rest = m_rest.subspan(4 + size);
    return field;
}

Result<ByteView> MessageReader::GetFixed(std::size_t size) {
    auto f = GetBytes(size);
    if (!f.ok()) return f;
    if (f->size() != size) return Malformed("field has the wrong size");
    return f;
}

Result<std::uint64_t> MessageReader::GetU64() {
    auto f = GetFixed(8);
    if (!f.ok()) return f.error();
    std::uint64_t v = 0;
    for (std::uint8_t b : *f) v = (v << 8) | b;
    return v;
}

Status MessageReader::Finish() const {
    if (!m_rest.empty()) return Malformed("trailing bytes");
    return Success();
}

}  // namespace sigil::common
