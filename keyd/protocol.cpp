#include "keyd/protocol.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/metrics.h"
#include "keyd/receipt_protocol.h"

namespace sigil::keyd {
namespace {

using common::Error;
using common::ErrorKind;
using common::MakeError;
using common::MessageReader;
using common::MessageWriter;
using common::AsBytes;
using common::IPC_MAX_PAYLOAD;
using common::Success;

Error Malformed(std::string_view what) {
    return MakeError(ErrorKind::InvalidInput, "malformed_message", std::string(what));
}

Error ProtocolError(std::string_view what) {
    return MakeError(ErrorKind::Internal, "keyd_protocol_error", "keyd reply: " + std::string(what));
}

Error InvalidCid() {
    return MakeError(ErrorKind::InvalidInput, "invalid_cid", "CID must be 1..128 characters of [A-Za-z0-9]");
}

bool IsCidText(ByteView cid) {
    if (cid.empty() || cid.size() > IPC_MAX_CID) return false;
    return std::all_of(cid.begin(), cid.end(), [](std::uint8_t c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    });
}

// Opens a payload and checks its type; a reply decoder's errors become protocol errors later.
Result<MessageReader> OpenAs(ByteView payload, KeydMessage type) {
    auto r = MessageReader::Open(payload);
    if (!r.ok()) return r.error();
    if (r->Type() != static_cast<std::uint8_t>(type)) return Malformed("unexpected message type");
    return r;
}

template <std::size_t N>
std::array<std::uint8_t, N> ToArray(ByteView v) {
    std::array<std::uint8_t, N> out{};
    std::memcpy(out.data(), v.data(), N);
    return out;
}

SecretBuffer MustFinish(MessageWriter&& w) {
    auto frame = std::move(w).Finish();
    // Only called for messages whose size is bounded far below the cap.
    if (!frame.ok()) std::abort();
    return std::move(frame).value();
}

// Common start of every reply decoder: Failure -> its error, wrong type -> protocol error.
Result<MessageReader> OpenReply(ByteView payload, KeydMessage expected) {
    auto r = MessageReader::Open(payload);
    if (!r.ok()) return ProtocolError("empty payload");
    if (r->Type() == static_cast<std::uint8_t>(KeydMessage::Failure)) {
        auto failure = DecodeFailureReply(payload);
        if (!failure.ok()) return failure.error();
        return KeydFailureToError(failure->code, failure->message);
    }
    if (r->Type() != static_cast<std::uint8_t>(expected)) return ProtocolError("unexpected reply type");
    return r;
}

}  // namespace

// Failures ----------------------------------------------------------------------------------------

Error KeydFailureToError(KeydFailure code, std::string_view message) {
    const std::string text = "keyd: " + std::string(message);
    switch (code) {
        case KeydFailure::MalformedRequest: return MakeError(ErrorKind::Internal, "keyd_malformed_request", text);
        case KeydFailure::UnknownRequest: return MakeError(ErrorKind::Internal, "keyd_unknown_request", text);
        case KeydFailure::InvalidInput: return MakeError(ErrorKind::InvalidInput, "keyd_invalid_input", text);
        case KeydFailure::Refused: return MakeError(ErrorKind::Forbidden, "keyd_refused", text);
        case KeydFailure::OutOfRange: return MakeError(ErrorKind::InvalidInput, "keyd_out_of_range", text);
        case KeydFailure::Internal: break;
    }
    return MakeError(ErrorKind::Internal, "keyd_internal", text);
}

// Request encoders ------------------------------------------------------------------------------

SecretBuffer EncodePingRequest() { return MustFinish(MessageWriter(static_cast<std::uint8_t>(KeydMessage::Ping))); }

SecretBuffer EncodeMintPathRequest() {
    return MustFinish(MessageWriter(static_cast<std::uint8_t>(KeydMessage::MintPath)));
}

SecretBuffer EncodePkpRequest(KeydMessage type, const PkpRef& ref) {
    MessageWriter w(static_cast<std::uint8_t>(type));
    w.PutBytes(ref.account_hash);
    w.PutBytes(ref.path);
    return MustFinish(std::move(w));
}

Result<SecretBuffer> EncodeActionRequest(KeydMessage type, std::string_view cid) {
    if (!IsCidText(AsBytes(cid))) return InvalidCid();
    MessageWriter w(static_cast<std::uint8_t>(type));
    w.PutBytes(AsBytes(cid));
    return std::move(w).Finish();
}

SecretBuffer EncodeStatsRequest() { return MustFinish(MessageWriter(static_cast<std::uint8_t>(KeydMessage::Stats))); }

SecretBuffer EncodeGetPayersRequest(std::uint64_t count) {
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::GetPayers));
    w.PutU64(count);
    return MustFinish(std::move(w));
}

Result<SecretBuffer> EncodeSignPayerTxRequest(const PayerTxRequest& tx) {
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::SignPayerTx));
    w.PutU64(tx.payer);
    w.PutU64(tx.chain_id);
    w.PutU64(tx.nonce);
    w.PutU64(tx.max_priority_fee_per_gas);
    w.PutU64(tx.max_fee_per_gas);
    w.PutU64(tx.gas_limit);
    if (tx.to) {
        w.PutBytes(*tx.to);
    } else {
        w.PutBytes({});
    }
    w.PutBytes(tx.data);
    w.PutBytes(tx.api_key.view());
    w.PutU64(tx.consent ? tx.consent->issued_at : 0);
    if (tx.consent) {
        w.PutBytes(tx.consent->signature);
    } else {
        w.PutBytes({});
    }
    return std::move(w).Finish();
}

// Request decoders --------------------------------------------------------------------------------

Status DecodeEmptyRequest(ByteView payload) {
    auto r = MessageReader::Open(payload);
    if (!r.ok()) return r.error();
    const std::uint8_t t = r->Type();
    if (t != static_cast<std::uint8_t>(KeydMessage::Ping) && t != static_cast<std::uint8_t>(KeydMessage::MintPath) &&
        t != static_cast<std::uint8_t>(KeydMessage::Stats)) {
        return Malformed("unexpected message type");
    }
    return r->Finish();
}

Result<PkpRef> DecodePkpRequest(ByteView payload) {
    auto r = MessageReader::Open(payload);
    if (!r.ok()) return r.error();
    const std::uint8_t t = r->Type();
    if (t != static_cast<std::uint8_t>(KeydMessage::GetPkpPublic) &&
        t != static_cast<std::uint8_t>(KeydMessage::GetPkpKeys)) {
        return Malformed("unexpected message type");
    }
    auto account = r->GetFixed(32);
    if (!account.ok()) return account.error();
    auto path = r->GetFixed(32);
    if (!path.ok()) return path.error();
    SIGIL_TRY_STATUS(r->Finish());
    return PkpRef{ToArray<32>(*account), ToArray<32>(*path)};
}

Result<std::string> DecodeActionRequest(ByteView payload) {
    auto r = MessageReader::Open(payload);
    if (!r.ok()) return r.error();
    const std::uint8_t t = r->Type();
    if (t != static_cast<std::uint8_t>(KeydMessage::GetActionKey) &&
        t != static_cast<std::uint8_t>(KeydMessage::GetActionPublic)) {
        return Malformed("unexpected message type");
    }
    auto cid = r->GetBytes(IPC_MAX_PAYLOAD);
    if (!cid.ok()) return cid.error();
    SIGIL_TRY_STATUS(r->Finish());
    if (!IsCidText(*cid)) return InvalidCid();
    return std::string(cid->begin(), cid->end());
}

Result<std::uint64_t> DecodeGetPayersRequest(ByteView payload) {
    auto r = OpenAs(payload, KeydMessage::GetPayers);
    if (!r.ok()) return r.error();
    auto count = r->GetU64();
    if (!count.ok()) return count;
    SIGIL_TRY_STATUS(r->Finish());
    return count;
}

Result<PayerTxRequest> DecodeSignPayerTxRequest(ByteView payload) {
    auto r = OpenAs(payload, KeydMessage::SignPayerTx);
    if (!r.ok()) return r.error();
    PayerTxRequest tx;
    for (std::uint64_t* field : {&tx.payer, &tx.chain_id, &tx.nonce, &tx.max_priority_fee_per_gas,
                                 &tx.max_fee_per_gas, &tx.gas_limit}) {
        auto v = r->GetU64();
        if (!v.ok()) return v.error();
        *field = *v;
    }
    auto to = r->GetBytes(20);
    if (!to.ok()) return to.error();
    if (to->size() == 20) {
        tx.to = ToArray<20>(*to);
    } else if (!to->empty()) {
        return Malformed("recipient must be 0 or 20 bytes");
    }
    auto data = r->GetBytes(IPC_MAX_PAYLOAD);
    if (!data.ok()) return data.error();
    tx.data.assign(data->begin(), data->end());
    auto key = r->GetBytes(IPC_MAX_API_KEY);
    if (!key.ok()) return key.error();
    tx.api_key = SecretBytes(*key);
    auto issued_at = r->GetU64();
    if (!issued_at.ok()) return issued_at.error();
    auto signature = r->GetBytes(65);
    if (!signature.ok()) return signature.error();
    if (signature->size() == 65) {
        tx.consent = PayerTxRequest::Consent{*issued_at, ToArray<65>(*signature)};
    } else if (!signature->empty() || *issued_at != 0) {
        return Malformed("consent signature must be 0 or 65 bytes, issued_at 0 without one");
    }
    SIGIL_TRY_STATUS(r->Finish());
    return tx;
}

// Reply encoders ----------------------------------------------------------------------------------

SecretBuffer EncodeFailureReply(KeydFailure code, std::string_view message) {
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::Failure));
    const std::uint8_t c = static_cast<std::uint8_t>(code);
    w.PutBytes(ByteView(&c, 1));
    w.PutBytes(AsBytes(message.substr(0, IPC_MAX_FAILURE_MESSAGE)));
    return MustFinish(std::move(w));
}

SecretBuffer EncodePongReply() {
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::Pong));
    w.PutU64(IPC_PROTOCOL_VERSION);
    return MustFinish(std::move(w));
}

SecretBuffer EncodePathReply(const Hash32& path) {
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::Path));
    w.PutBytes(path);
    return MustFinish(std::move(w));
}

SecretBuffer EncodePublicKeyReply(const PublicKeyInfo& info) {
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::PublicKey));
    w.PutBytes(info.address);
    w.PutBytes(info.public_key);
    return MustFinish(std::move(w));
}

SecretBuffer EncodePkpKeysReply(const SecretBytes& signing_key, const SecretBytes& encryption_key) {
    if (signing_key.size() != 32 || encryption_key.size() != 32) std::abort();
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::PkpKeys));
    w.PutBytes(signing_key.view());
    w.PutBytes(encryption_key.view());
    return MustFinish(std::move(w));
}

SecretBuffer EncodeSecretKeyReply(const SecretBytes& key) {
    if (key.size() != 32) std::abort();
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::SecretKey));
    w.PutBytes(key.view());
    return MustFinish(std::move(w));
}

SecretBuffer EncodePayersReply(const PayerList& payers) {
    if (payers.payers.size() > IPC_MAX_PAYERS) std::abort();
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::Payers));
    w.PutBytes(payers.admin);
    Bytes joined;
    joined.reserve(payers.payers.size() * 20);
    for (const Address20& a : payers.payers) joined.insert(joined.end(), a.begin(), a.end());
    w.PutBytes(joined);
    return MustFinish(std::move(w));
}

Result<SecretBuffer> EncodeSignedTxReply(ByteView raw_tx) {
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::SignedTx));
    w.PutBytes(raw_tx);
    return std::move(w).Finish();
}

// STATS ------------------------------------------------------------------------------------------

namespace {

static_assert(STATS_LATENCY_BUCKETS == common::HISTOGRAM_BOUNDS + 1, "STATS carries common/metrics.h's buckets");

// The kinds in StatsKindOf's order: the request types 0x01..0x08, STATS, the receipt requests
// (receipt_protocol.h's 0x30 and 0x31), anything else.
constexpr const char* kStatsKinds[STATS_KINDS] = {"ping", "mint_path", "get_pkp_public", "get_pkp_keys", "get_action_key",
                                                  "get_action_public", "get_payers", "sign_payer_tx", "stats",
                                                  "sign_receipt", "get_receipt_public", "unknown"};

template <std::size_t N>
void PutTable(MessageWriter& w, const std::array<std::uint64_t, N>& table) {
    std::array<std::uint8_t, N * 8> bytes{};
    for (std::size_t i = 0; i < N; ++i) {
        for (std::size_t b = 0; b < 8; ++b) bytes[i * 8 + b] = static_cast<std::uint8_t>(table[i] >> (56 - 8 * b));
    }
    w.PutBytes(bytes);
}

template <std::size_t N>
bool GetTable(MessageReader& r, std::array<std::uint64_t, N>* table) {
    auto bytes = r.GetFixed(N * 8);
    if (!bytes.ok()) return false;
    for (std::size_t i = 0; i < N; ++i) {
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < 8; ++b) v = v << 8 | (*bytes)[i * 8 + b];
        (*table)[i] = v;
    }
    return true;
}

}  // namespace

const char* StatsKindName(std::size_t kind) { return kind < STATS_KINDS ? kStatsKinds[kind] : "unknown"; }

std::size_t StatsKindOf(std::uint8_t type) {
    if (type >= static_cast<std::uint8_t>(KeydMessage::Ping) && type <= static_cast<std::uint8_t>(KeydMessage::SignPayerTx)) {
        return type - 1;
    }
    if (type == static_cast<std::uint8_t>(KeydMessage::Stats)) return 8;
    if (type == IPC_SIGN_RECEIPT) return 9;
    if (type == IPC_GET_RECEIPT_PUBLIC) return 10;
    return STATS_KINDS - 1;
}

SecretBuffer EncodeStatsReply(const KeydStats& s) {
    MessageWriter w(static_cast<std::uint8_t>(KeydMessage::StatsReply));
    w.PutU64(s.uptime_ms);
    w.PutU64(static_cast<std::uint64_t>(s.key_source));
    PutTable(w, s.requests);
    PutTable(w, s.failures);
    PutTable(w, s.latency_buckets);
    w.PutU64(s.latency_sum_us);
    w.PutU64(s.latency_count);
    w.PutU64(s.connections_open);
    w.PutU64(s.connections_refused);
    return MustFinish(std::move(w));
}

Result<KeydStats> DecodeStatsReply(ByteView payload) {
    auto r = OpenReply(payload, KeydMessage::StatsReply);
    if (!r.ok()) return r.error();
    KeydStats s;
    auto uptime = r->GetU64();
    auto source = r->GetU64();
    if (!uptime.ok() || !source.ok() || (*source != 1 && *source != 2)) return ProtocolError("malformed stats");
    s.uptime_ms = *uptime;
    s.key_source = static_cast<KeySourceKind>(*source);
    if (!GetTable(*r, &s.requests) || !GetTable(*r, &s.failures) || !GetTable(*r, &s.latency_buckets)) {
        return ProtocolError("malformed stats");
    }
    for (std::uint64_t* field : {&s.latency_sum_us, &s.latency_count, &s.connections_open, &s.connections_refused}) {
        auto v = r->GetU64();
        if (!v.ok()) return ProtocolError("malformed stats");
        *field = *v;
    }
    if (!r->Finish().ok()) return ProtocolError("malformed stats");
    return s;
}

// Reply decoders ----------------------------------------------------------------------------------

Result<FailureReply> DecodeFailureReply(ByteView payload) {
    auto r = OpenAs(payload, KeydMessage::Failure);
    if (!r.ok()) return ProtocolError("malformed failure");
    auto code = r->GetFixed(1);
    if (!code.ok()) return ProtocolError("malformed failure");
    auto message = r->GetBytes(IPC_MAX_FAILURE_MESSAGE);
    if (!message.ok() || !r->Finish().ok()) return ProtocolError("malformed failure");
    FailureReply out;
    const std::uint8_t c = (*code)[0];
    out.code = (c >= 1 && c <= 6) ? static_cast<KeydFailure>(c) : KeydFailure::Internal;
    out.message.assign(message->begin(), message->end());
    return out;
}

Status DecodePongReply(ByteView payload) {
    auto r = OpenReply(payload, KeydMessage::Pong);
    if (!r.ok()) return r.error();
    auto version = r->GetU64();
    if (!version.ok() || !r->Finish().ok()) return ProtocolError("malformed pong");
    if (*version != IPC_PROTOCOL_VERSION) return ProtocolError("protocol version mismatch");
    return Success();
}

Result<Hash32> DecodePathReply(ByteView payload) {
    auto r = OpenReply(payload, KeydMessage::Path);
    if (!r.ok()) return r.error();
    auto path = r->GetFixed(32);
    if (!path.ok() || !r->Finish().ok()) return ProtocolError("malformed path");
    return ToArray<32>(*path);
}

Result<PublicKeyInfo> DecodePublicKeyReply(ByteView payload) {
    auto r = OpenReply(payload, KeydMessage::PublicKey);
    if (!r.ok()) return r.error();
    auto address = r->GetFixed(20);
    if (!address.ok()) return ProtocolError("malformed public key");
    auto key = r->GetFixed(65);
    if (!key.ok() || !r->Finish().ok() || (*key)[0] != 0x04) return ProtocolError("malformed public key");
    return PublicKeyInfo{ToArray<20>(*address), ToArray<65>(*key)};
}

Result<PkpKeys> DecodePkpKeysReply(ByteView payload) {
    auto r = OpenReply(payload, KeydMessage::PkpKeys);
    if (!r.ok()) return r.error();
    auto signing = r->GetFixed(32);
    if (!signing.ok()) return ProtocolError("malformed keys");
    auto encryption = r->GetFixed(32);
    if (!encryption.ok() || !r->Finish().ok()) return ProtocolError("malformed keys");
    return PkpKeys{SecretBytes(*signing), SecretBytes(*encryption)};
}

Result<SecretBytes> DecodeSecretKeyReply(ByteView payload) {
    auto r = OpenReply(payload, KeydMessage::SecretKey);
    if (!r.ok()) return r.error();
    auto key = r->GetFixed(32);
    if (!key.ok() || !r->Finish().ok()) return ProtocolError("malformed key");
    return SecretBytes(*key);
}

Result<PayerList> DecodePayersReply(ByteView payload) {
    auto r = OpenReply(payload, KeydMessage::Payers);
    if (!r.ok()) return r.error();
    auto admin = r->GetFixed(20);
    if (!admin.ok()) return ProtocolError("malformed payers");
    auto joined = r->GetBytes(std::size_t{IPC_MAX_PAYERS} * 20);
    if (!joined.ok() || !r->Finish().ok() || joined->size() % 20 != 0) return ProtocolError("malformed payers");
    PayerList out;
    out.admin = ToArray<20>(*admin);
    for (std::size_t off = 0; off < joined->size(); off += 20) out.payers.push_back(ToArray<20>(joined->subspan(off, 20)));
    return out;
}

Result<Bytes> DecodeSignedTxReply(ByteView payload) {
    auto r = OpenReply(payload, KeydMessage::SignedTx);
    if (!r.ok()) return r.error();
    auto raw = r->GetBytes(IPC_MAX_PAYLOAD);
    if (!raw.ok() || !r->Finish().ok() || raw->empty()) return ProtocolError("malformed signed transaction");
    return Bytes(raw->begin(), raw->end());
}

}  // namespace sigil::keyd
