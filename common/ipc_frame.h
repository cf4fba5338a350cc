// keyd wire protocol: a sans-IO length-prefixed frame codec and the message encodings shared by
// sigil-keyd and its clients (bytes in, values out; no sockets here, so tests and fuzzers drive it).
//
// Wire format (keyd/protocol.md has the full message table):
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
// wipes itself (SecretBuffer, FrameDecoder), and decoded secrets land in SecretBytes.
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

constexpr std::uint64_t IPC_PROTOCOL_VERSION = 1;
constexpr std::size_t IPC_HEADER_SIZE = 4;
// Largest payload (type byte included). Checked from the 4-byte header, before any allocation.
constexpr std::size_t IPC_MAX_PAYLOAD = 64 * 1024;
// Largest CID text keyd accepts (CIDv0 is 46 characters, CIDv1 base32 of sha256 is 59).
constexpr std::size_t IPC_MAX_CID = 128;
// Most payer addresses one GET_PAYERS may ask for (keeps the reply far below the frame cap).
constexpr std::uint32_t IPC_MAX_PAYERS = 1024;
// Payer index meaning "the admin payer" in SIGN_PAYER_TX.
constexpr std::uint64_t IPC_ADMIN_PAYER = std::numeric_limits<std::uint64_t>::max();

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

// keyd messages -----------------------------------------------------------------------------

enum class KeydMessage : std::uint8_t {
    // Requests (worker -> keyd).
    Ping = 0x01,           // ()                                   -> Pong
    MintPath = 0x02,       // ()                                   -> Path
    GetPkpPublic = 0x03,   // (account_hash 32, path 32)           -> PublicKey
    GetPkpKeys = 0x04,     // (account_hash 32, path 32)           -> PkpKeys
    GetActionKey = 0x05,   // (cid 1..128)                         -> SecretKey
    GetActionPublic = 0x06,// (cid 1..128)                         -> PublicKey
    GetPayers = 0x07,      // (count u64)                          -> Payers
    SignPayerTx = 0x08,    // (payer u64, chain_id u64, nonce u64, max_priority_fee u64,
                           //  max_fee u64, gas_limit u64, to 0|20, data 0..)  -> SignedTx
    // Replies (keyd -> worker).
    Failure = 0x80,        // (code 1, message 0..256)
    Pong = 0x81,           // (protocol_version u64)
    Path = 0x82,           // (path 32)
    PublicKey = 0x83,      // (address 20, uncompressed public key 65)
    PkpKeys = 0x84,        // (signing key 32, encryption key 32)
    SecretKey = 0x85,      // (key 32)
    Payers = 0x86,         // (admin address 20, payer addresses 20 * count)
    SignedTx = 0x87,       // (raw signed EIP-1559 transaction)
};

// The code carried by a Failure reply.
enum class KeydFailure : std::uint8_t {
    MalformedRequest = 1,  // known type, fields missing, extra or of the wrong size
    UnknownRequest = 2,    // a type not in keyd's message table
    InvalidInput = 3,      // well-formed but invalid values (zero hash, bad CID)
    Refused = 4,           // policy: wrong chain id, wrong recipient, contract creation
    OutOfRange = 5,        // payer index or count beyond the configured payers
    Internal = 6,          // keyd failed (derivation, signing)
};
constexpr std::size_t IPC_MAX_FAILURE_MESSAGE = 256;

// The Error a client reports for a Failure reply:
//   MalformedRequest -> Internal "keyd_malformed_request", UnknownRequest -> Internal
//   "keyd_unknown_request", InvalidInput -> InvalidInput "keyd_invalid_input", Refused ->
//   Forbidden "keyd_refused", OutOfRange -> InvalidInput "keyd_out_of_range", anything else ->
//   Internal "keyd_internal". The message is keyd's text.
Error KeydFailureToError(KeydFailure code, std::string_view message);

struct PkpRef {
    Hash32 account_hash{};  // the owning account's apiKeyHash; never all zero
    Hash32 path{};          // the derivation path; never all zero
};

struct PublicKeyInfo {
    Address20 address{};
    std::array<std::uint8_t, 65> public_key{};  // 0x04 || X || Y
};

struct PkpKeys {
    SecretBytes signing_key;     // 32 bytes, a valid secp256k1 scalar
    SecretBytes encryption_key;  // 32 bytes, an AES-256-GCM key
};

struct PayerList {
    Address20 admin{};
    std::vector<Address20> payers;  // payers[i] is payer index i
};

// EIP-1559 fields of a relayed write. The value is always 0 (payers only pay gas), and there is
// no access list.
struct PayerTxRequest {
    std::uint64_t payer = 0;  // payer index, or IPC_ADMIN_PAYER
    std::uint64_t chain_id = 0;
    std::uint64_t nonce = 0;
    std::uint64_t max_priority_fee_per_gas = 0;
    std::uint64_t max_fee_per_gas = 0;
    std::uint64_t gas_limit = 0;
    std::optional<Address20> to;  // nullopt = contract creation (always refused by keyd)
    Bytes data;
};

struct FailureReply {
    KeydFailure code = KeydFailure::Internal;
    std::string message;
};

// Request encoders (client side). Each returns a complete frame.
SecretBuffer EncodePingRequest();
SecretBuffer EncodeMintPathRequest();
// type must be GetPkpPublic or GetPkpKeys.
SecretBuffer EncodePkpRequest(KeydMessage type, const PkpRef& ref);
// type must be GetActionKey or GetActionPublic. Errors: InvalidInput "invalid_cid" for an empty
// CID or one longer than IPC_MAX_CID.
Result<SecretBuffer> EncodeActionRequest(KeydMessage type, std::string_view cid);
SecretBuffer EncodeGetPayersRequest(std::uint64_t count);
// Errors: TooLarge "frame_too_large" when data does not fit in one frame.
Result<SecretBuffer> EncodeSignPayerTxRequest(const PayerTxRequest& tx);

// Request decoders (keyd side). `payload` is a whole payload (type byte first) whose type the
// caller dispatched on. Errors: InvalidInput "malformed_message" for a wrong type, a missing,
// extra or wrongly sized field; InvalidInput "invalid_cid" for a CID outside 1..IPC_MAX_CID bytes
// or with characters outside [A-Za-z0-9]. All-zero hashes are left to keyd's policy.
Status DecodeEmptyRequest(ByteView payload);  // Ping, MintPath
Result<PkpRef> DecodePkpRequest(ByteView payload);
Result<std::string> DecodeActionRequest(ByteView payload);
Result<std::uint64_t> DecodeGetPayersRequest(ByteView payload);
Result<PayerTxRequest> DecodeSignPayerTxRequest(ByteView payload);

// Reply encoders (keyd side).
SecretBuffer EncodeFailureReply(KeydFailure code, std::string_view message);  // message truncated to 256
SecretBuffer EncodePongReply();
SecretBuffer EncodePathReply(const Hash32& path);
SecretBuffer EncodePublicKeyReply(const PublicKeyInfo& info);
// Both keys must be 32 bytes (a programming error otherwise: aborts).
SecretBuffer EncodePkpKeysReply(const SecretBytes& signing_key, const SecretBytes& encryption_key);
SecretBuffer EncodeSecretKeyReply(const SecretBytes& key);
// payers.size() <= IPC_MAX_PAYERS (aborts otherwise).
SecretBuffer EncodePayersReply(const PayerList& payers);
// Errors: TooLarge "frame_too_large".
Result<SecretBuffer> EncodeSignedTxReply(ByteView raw_tx);

// Reply decoders (client side). A Failure reply becomes KeydFailureToError(...); any other type
// than the expected one, or malformed fields, is Internal "keyd_protocol_error".
Result<FailureReply> DecodeFailureReply(ByteView payload);
Status DecodePongReply(ByteView payload);  // also refuses another protocol version
Result<Hash32> DecodePathReply(ByteView payload);
Result<PublicKeyInfo> DecodePublicKeyReply(ByteView payload);
Result<PkpKeys> DecodePkpKeysReply(ByteView payload);
Result<SecretBytes> DecodeSecretKeyReply(ByteView payload);
Result<PayerList> DecodePayersReply(ByteView payload);
Result<Bytes> DecodeSignedTxReply(ByteView payload);

}  // namespace sigil::common
