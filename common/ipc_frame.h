// A sans-IO length-prefixed frame codec and the field reader/writer that keyd's messages
// (keyd/protocol.h) and the sandbox op channel (workers/sandbox/protocol/protocol.h) are built from: bytes
// in, values out; no sockets here, so tests and fuzzers drive it.
//
// Wire format:
//   frame   = length:u32 big-endian || payload[length]       1 <= length <= IPC_MAX_PAYLOAD
//   payload = type:u8 || field*
//   field   = size:u32 big-endian || bytes[size]
// Integers travel as 8-byte big-endian fields. Every message type has a fixed list of fields; a
// message with a field missing, an extra field, or a field of the wrong size is malformed.
//
// Two classes of error, as in OpenSSH's ssh-agent:
//   * Framing errors (a length of 0 or above the cap, announced before anything is allocated; a
//     frame cut short by EOF) mean the byte stream can no longer be trusted: close the connection.
//   * Message errors (unknown type, malformed fields, refused request) get a FAILURE reply and the
//     connection stays usable.
//
// Secrets (PKP keys, action keys) travel only inside frames. Every buffer here that may hold one
// wipes itself (SecretBuffer, FrameDecoder).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::common {

// Framing --------------------------------------------------------------------------------------

constexpr std::size_t IPC_HEADER_SIZE = 4;
// Largest payload (type byte included). Checked from the 4-byte header, before any allocation.
constexpr std::size_t IPC_MAX_PAYLOAD = 64 * 1024;

// An allocator that wipes memory before giving it back, so a growing std::vector never leaves a
// copy of a secret behind in freed heap (Bitcoin Core's zero_after_free_allocator idea).
template <typename T>
struct WipingAllocator {
    using value_type = T;
    WipingAllocator() = default;
    template <typename U>
    WipingAllocator(const WipingAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept {
        Wipe(p, n * sizeof(T));
        ::operator delete(p);
    }
    template <typename U>
    bool operator==(const WipingAllocator<U>&) const noexcept { return true; }
};

// A growable byte buffer that wipes itself: the type of every encoded frame.
using SecretBuffer = std::vector<std::uint8_t, WipingAllocator<std::uint8_t>>;

// Splits a byte stream into frames (keyd's, and the sandbox op channel's).
//
// Fixed (the default, keyd): the buffer is allocated once (header + cap) and wiped on destruction
// and as frames are consumed, so a peer can never make it grow.
// Typical loop: while (auto p = d.Front()) { handle(*p); d.Pop(); }  then read at most Space()
// bytes and Feed them. Space() is 0 only while a complete frame waits to be popped.
//
// Growing (FrameDecoder::Growing(cap), the sandbox op channel, whose cap is megabytes while most
// frames are a few bytes): the buffer starts small and grows to what a header announces (never
// past header + cap), and Feed takes any amount (the frames it completes stay buffered until
// popped). Old buffers are wiped before they are freed.
class FrameDecoder {
public:
    explicit FrameDecoder(std::size_t max_payload = IPC_MAX_PAYLOAD);
    static FrameDecoder Growing(std::size_t max_payload);

    // How many bytes Feed accepts now (fixed), or fits without growing (growing).
    std::size_t Space() const;

    // Append received bytes.
    // Errors (all mean "close the connection"; the decoder stays failed afterwards):
    //   TooLarge "frame_too_large"      a header announced more than max_payload bytes;
    //   InvalidInput "frame_empty"      a header announced 0 bytes;
    //   TooLarge "frame_buffer_full"    fixed only: data.size() > Space() (the caller ignored Space()).
    Status Feed(ByteView data);

    // The payload of the first complete frame, or nullopt. The view lives until Pop(), Feed
    // (growing only) or destruction.
    std::optional<ByteView> Front() const;

    // Drop the first complete frame (no-op if there is none) and wipe its bytes.
    void Pop();

    // Bytes received that are not yet part of a complete frame. Non-zero at EOF = truncated frame.
    std::size_t Pending() const;

    bool Failed() const { return m_failed.has_value(); }
    // The error that failed the decoder (Failed() must be true).
    const Error& failure() const { return *m_failed; }

private:
    FrameDecoder(std::size_t max_payload, std::size_t initial_size, bool growing);
    void Reserve(std::size_t size);  // growing only: at least `size` bytes of buffer

    std::size_t m_max_payload;
    bool m_growing = false;
    SecretBytes m_buf;
    std::size_t m_used = 0;
    std::optional<Error> m_failed;
};

// Builds one frame: header, type byte, fields. Fields past the cap are remembered as an error
// and reported by Finish, so callers need not check every Put.
class MessageWriter {
public:
    explicit MessageWriter(std::uint8_t type, std::size_t max_payload = IPC_MAX_PAYLOAD);
    void PutBytes(ByteView field);
    void PutU64(std::uint64_t value);
    // The complete frame (header included).
    // Errors: TooLarge "frame_too_large" when the payload exceeds max_payload.
    Result<SecretBuffer> Finish() &&;

private:
    std::size_t m_max_payload;
    SecretBuffer m_frame;
    bool m_too_large = false;
};

// Reads the fields of one payload in order. Views point into the payload.
// Every getter's error is InvalidInput "malformed_message".
class MessageReader {
public:
    // Errors: InvalidInput "malformed_message" for an empty payload (no type byte).
    static Result<MessageReader> Open(ByteView payload);

    std::uint8_t Type() const { return m_type; }
    // A field of 0..max_size bytes.
    Result<ByteView> GetBytes(std::size_t max_size);
    // A field of exactly `size` bytes.
    Result<ByteView> GetFixed(std::size_t size);
    // An 8-byte big-endian integer field.
    Result<std::uint64_t> GetU64();
    // Succeeds only if every field has been read (no trailing bytes).
    Status Finish() const;

private:
    MessageReader(std::uint8_t type, ByteView rest) : m_type(type), m_rest(rest) {}
    std::uint8_t m_type;
    ByteView m_rest;
};

}  // namespace sigil::common
