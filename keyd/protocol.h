// keyd's messages (keyd/protocol.md has the table): the request and reply encodings shared by
// sigil-keyd and keyd/client, sans-IO over common/ipc_frame's frames and fields. Decoded secrets
// land in SecretBytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/ipc_frame.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::keyd {

using common::ByteView;
using common::Bytes;
using common::Address20;
using common::Hash32;
using common::Result;
using common::SecretBuffer;
using common::SecretBytes;
using common::Status;

// 2: SIGN_PAYER_TX carries the caller's API key and the ConvertAccount consent.
// 3: STATS (keyd's own counters for /metrics). A client and a keyd of different versions see it in
// PONG ("protocol version mismatch"); a version-2 keyd answers STATS with FAILURE UnknownRequest.
constexpr std::uint64_t IPC_PROTOCOL_VERSION = 3;
// Longest API key a SIGN_PAYER_TX may carry (the worker's own limit, MAX_API_KEY_LENGTH).
constexpr std::size_t IPC_MAX_API_KEY = 256;
// Largest CID text keyd accepts (CIDv0 is 46 characters, CIDv1 base32 of sha256 is 59).
constexpr std::size_t IPC_MAX_CID = 128;
// Most payer addresses one GET_PAYERS may ask for (keeps the reply far below the frame cap).
constexpr std::uint32_t IPC_MAX_PAYERS = 1024;
// Payer index meaning "the admin payer" in SIGN_PAYER_TX.
constexpr std::uint64_t IPC_ADMIN_PAYER = std::numeric_limits<std::uint64_t>::max();

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
                           //  max_fee u64, gas_limit u64, to 0|20, data 0.., api_key 0..256,
                           //  consent_issued_at u64, consent_signature 0|65)  -> SignedTx
    // Operational requests (0x20..): about keyd itself, no key material.
    Stats = 0x20,          // ()                                   -> StatsReply
    // Replies (keyd -> worker).
    Failure = 0x80,        // (code 1, message 0..256)
    Pong = 0x81,           // (protocol_version u64)
    Path = 0x82,           // (path 32)
    PublicKey = 0x83,      // (address 20, uncompressed public key 65)
    PkpKeys = 0x84,        // (signing key 32, encryption key 32)
    SecretKey = 0x85,      // (key 32)
    Payers = 0x86,         // (admin address 20, payer addresses 20 * count)
    SignedTx = 0x87,       // (raw signed EIP-1559 transaction)
    StatsReply = 0xA0,     // (KeydStats's fields, protocol.md)
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
common::Error KeydFailureToError(KeydFailure code, std::string_view message);

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
    // The HTTP caller's API key, exactly as sent (for newAccount: the key just drawn). keyd signs
    // only if the call's key-hash argument is keccak256 of it (keyd/protocol.md).
    SecretBytes api_key;
    // For convertToChainSecuredAccount only: the new admin's EIP-712 ConvertAccount signature,
    // which keyd rebuilds from the call's newAdmin and verifies itself.
    struct Consent {
        std::uint64_t issued_at = 0;
        std::array<std::uint8_t, 65> signature{};
    };
    std::optional<Consent> consent;
};

// keyd's own counters (STATS), for /metrics. Requests are counted by kind: each request type
// keyd knows, then "unknown" for any other type byte.
constexpr std::size_t STATS_KINDS = 12;
// The kind label of index i ("ping", "mint_path", ..., "stats", "unknown").
const char* StatsKindName(std::size_t kind);
// The index a request type byte is counted under.
std::size_t StatsKindOf(std::uint8_t type);
// Buckets of the latency histogram: common/metrics.h's HISTOGRAM_BOUNDS_S bounds and +Inf.
constexpr std::size_t STATS_LATENCY_BUCKETS = 15;

enum class KeySourceKind : std::uint8_t { File = 1, Tee = 2 };

struct KeydStats {
    std::uint64_t uptime_ms = 0;
    KeySourceKind key_source = KeySourceKind::File;
    std::array<std::uint64_t, STATS_KINDS> requests{};  // answered, by kind
    std::array<std::uint64_t, STATS_KINDS> failures{};  // answered with FAILURE, by kind
    // Time keyd spent answering each request (decode, derive, sign, encode), per bucket (not
    // cumulative), their sum in microseconds and their number.
    std::array<std::uint64_t, STATS_LATENCY_BUCKETS> latency_buckets{};
    std::uint64_t latency_sum_us = 0;
    std::uint64_t latency_count = 0;
    std::uint64_t connections_open = 0;
    std::uint64_t connections_refused = 0;  // peer uid not allowed, or --max-connections reached
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
SecretBuffer EncodeStatsRequest();
// Errors: TooLarge "frame_too_large" when data does not fit in one frame.
Result<SecretBuffer> EncodeSignPayerTxRequest(const PayerTxRequest& tx);

// Request decoders (keyd side). `payload` is a whole payload (type byte first) whose type the
// caller dispatched on. Errors: InvalidInput "malformed_message" for a wrong type, a missing,
// extra or wrongly sized field; InvalidInput "invalid_cid" for a CID outside 1..IPC_MAX_CID bytes
// or with characters outside [A-Za-z0-9]. All-zero hashes are left to keyd's policy.
Status DecodeEmptyRequest(ByteView payload);  // Ping, MintPath, Stats
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
SecretBuffer EncodeStatsReply(const KeydStats& stats);

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
Result<KeydStats> DecodeStatsReply(ByteView payload);

}  // namespace sigil::keyd
