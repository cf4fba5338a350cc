// sigil_vectors: a JSON-lines oracle over common/'s crypto and encodings, driven by tests/crosscheck/*.test.mjs.
//
// Protocol: one JSON object per stdin line, {"op": "<name>", ...}; one JSON object per stdout line, in
// order, flushed after each. A request that cannot be served answers {"error": "<code>: <message>"}; the
// process never exits on bad input, so a test can stream hundreds of requests through one process.
//
// Value forms (in and out):
//   hex       "0x" + hex (in: either case, prefix optional; out: lowercase, prefixed)
//   integer   in: a decimal string (intN: optional leading "-"), a "0x" hex string, or a JSON
//             non-negative integer; out: a decimal string ("-" for negative intN)
//   address   in: "0x" + 40 hex (mixed case must pass EIP-55); out: EIP-55 checksummed
//   ABI       uintN/intN integer, address, bool JSON bool, bytesN/bytes hex, string JSON string,
//             T[] / T[k] / tuples JSON arrays
//   RLP item  a hex string (byte string) or a JSON array of items (list)
//
// Ops (request fields -> response fields):
//   keccak {hex} -> {hash}                      sha256 {hex} -> {hash}
//   address {private_key} -> {address}
//   sign_digest {private_key, digest} -> {signature}            (v = recovery id 0/1)
//   sign_message {private_key, message_hex} -> {signature, hash} (EIP-191, v = 27/28)
//   recover_digest {digest, signature} -> {address}
//   recover_message {message_hex, signature} -> {address}
//   hash_typed_data {typed_data} | {domain, types, value} -> {digest, domain_separator, message_hash}
//   sign_typed_data {private_key, typed_data | domain, types, value} -> {digest, signature} (v = 27/28)
//   abi_encode {types, values} -> {hex}         abi_decode {types, hex} -> {values}
//   rlp_encode {item} -> {hex}                  rlp_decode {hex} -> {item}
//   tx1559 {chain_id, nonce, max_priority_fee_per_gas, max_fee_per_gas, gas_limit, to (address or
//          null/absent), value, data, access_list [{address, storage_keys}], private_key}
//          -> {unsigned_payload, unsigned_hash, signed_raw, tx_hash, from}
//   cid {hex} -> {cid}
//   hkdf {ikm, salt, info, length} -> {okm}
//   aes_gcm_seal {key, nonce, aad, plaintext} -> {sealed}   aes_gcm_open {key, nonce, aad, sealed} -> {plaintext}
//
// This is a test tool: private keys arrive as hex on stdin and outputs may contain derived secrets
// (hkdf, aes_gcm_open); never point it at real keys.
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/abi.h"
#include "common/aes_gcm.h"
#include "common/cid.h"
#include "common/eip712.h"
#include "common/eth_tx.h"
#include "common/hex.h"
#include "common/hkdf.h"
#include "common/keccak.h"
#include "common/rlp.h"
#include "common/secp256k1.h"
#include "common/sha256.h"

namespace {

using namespace sigil::common;
using Json = rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;

// Requests are test-generated; anything bigger is a runaway test, refused before parsing.
constexpr std::size_t MAX_LINE_BYTES = 64u << 20;
// Bounds recursion over request-supplied nesting (RLP items); ABI nesting is bounded by its type parser.
constexpr int MAX_JSON_DEPTH = 64;

Error Bad(std::string code, std::string message) {
    return MakeError(ErrorKind::InvalidInput, std::move(code), std::move(message));
}

// Field access --------------------------------------------------------------------------------

const Json* Find(const Json& obj, const char* key) {
    auto it = obj.FindMember(key);
    return it == obj.MemberEnd() ? nullptr : &it->value;
}

Result<std::string_view> StringField(const Json& obj, const char* key) {
    const Json* v = Find(obj, key);
    if (v == nullptr || !v->IsString()) return Bad("missing_field", std::string("expected string field \"") + key + "\"");
    return std::string_view(v->GetString(), v->GetStringLength());
}

Result<Bytes> HexField(const Json& obj, const char* key) {
    auto s = StringField(obj, key);
    if (!s) return s.error();
    return HexDecode(*s);
}

Result<Hash32> Hash32Field(const Json& obj, const char* key) {
    auto s = StringField(obj, key);
    if (!s) return s.error();
    auto b = HexDecodeExact(*s, 32);
    if (!b) return b.error();
    Hash32 h{};
    std::copy(b->begin(), b->end(), h.begin());
    return h;
}

Result<PrivateKey> KeyField(const Json& obj) {
    auto b = HexField(obj, "private_key");
    if (!b) return b.error();
    auto key = PrivateKey::FromBytes(*b);
    Wipe(b->data(), b->size());
    return key;
}

// Integers ------------------------------------------------------------------------------------

Uint256 Negate(const Uint256& v) {
    Hash32 w = v.Word();
    unsigned carry = 1;
    for (std::size_t i = w.size(); i-- > 0;) {
        const unsigned sum = static_cast<std::uint8_t>(~w[i]) + carry;
        w[i] = static_cast<std::uint8_t>(sum);
        carry = sum >> 8;
    }
    return Uint256::FromWord(w);
}

Result<Uint256> ParseUnsigned(std::string_view text) {
    if (text.starts_with("0x") || text.starts_with("0X")) return Uint256::FromHex(text);
    return Uint256::FromDecimal(text);
}

struct SignedMagnitude {
    bool negative = false;
    Uint256 magnitude;
};

Result<SignedMagnitude> IntegerValue(const Json& v, bool allow_negative) {
    if (v.IsUint64()) return SignedMagnitude{false, Uint256::FromUint64(v.GetUint64())};
    if (!v.IsString()) return Bad("bad_integer", "expected an integer as a JSON string or non-negative number");
    std::string_view text(v.GetString(), v.GetStringLength());
    SignedMagnitude out;
    if (allow_negative && text.starts_with("-")) {
        out.negative = true;
        text.remove_prefix(1);
    }
    auto m = ParseUnsigned(text);
    if (!m) return m.error();
    out.magnitude = *m;
    if (out.magnitude.IsZero()) out.negative = false;
    return out;
}

Result<std::uint64_t> Uint64Field(const Json& obj, const char* key) {
    const Json* v = Find(obj, key);
    if (v == nullptr) return Bad("missing_field", std::string("expected integer field \"") + key + "\"");
    auto n = IntegerValue(*v, false);
    if (!n) return n.error();
    auto small = n->magnitude.ToUint64();
    if (!small) return Bad("bad_integer", std::string("field \"") + key + "\" exceeds 64 bits");
    return *small;
}

Result<Uint256> Uint256Field(const Json& obj, const char* key) {
    const Json* v = Find(obj, key);
    if (v == nullptr) return Bad("missing_field", std::string("expected integer field \"") + key + "\"");
    auto n = IntegerValue(*v, false);
    if (!n) return n.error();
    return n->magnitude;
}

// intN range: -2^(N-1) .. 2^(N-1)-1. Checked here as well as in AbiEncode, because a magnitude that
// is too large for 256 bits could otherwise wrap into a valid-looking two's complement word.
bool FitsSigned(const SignedMagnitude& v, std::size_t bits) {
    const unsigned len = v.magnitude.BitLength();
    if (len < bits) return true;
    if (!v.negative || len != bits) return false;
    // A negative magnitude of exactly `bits` bits fits only when it is 2^(bits-1) (the minimum).
    const Hash32& w = v.magnitude.Word();
    const std::size_t top_bit = bits - 1;
    for (std::size_t bit = 0; bit < 256; ++bit) {
        const bool set = (w[31 - bit / 8] >> (bit % 8)) & 1;
        if (set != (bit == top_bit)) return false;
    }
    return true;
}

std::string SignedDecimal(const Uint256& twos_complement) {
    if (twos_complement.Word()[0] & 0x80) return "-" + Negate(twos_complement).ToDecimal();
    return twos_complement.ToDecimal();
}

// JSON output helpers -----------------------------------------------------------------------

Json Str(std::string_view s, Alloc& a) {
    return Json(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

Json HexJson(ByteView b, Alloc& a) { return Str(HexEncode(b, true), a); }

// ABI -------------------------------------------------------------------------------------------

Result<AbiValue> AbiFromJson(const AbiType& t, const Json& v) {
    switch (t.kind) {
    case AbiKind::Uint: {
        auto n = IntegerValue(v, false);
        if (!n) return n.error();
        return AbiValue::Uint(n->magnitude);
    }
    case AbiKind::Int: {
        auto n = IntegerValue(v, true);
        if (!n) return n.error();
        if (!FitsSigned(*n, t.size)) return Bad("abi_value_mismatch", "integer out of range for int" + std::to_string(t.size));
        return AbiValue::IntWord(n->negative ? Negate(n->magnitude) : n->magnitude);
    }
    case AbiKind::Address: {
        if (!v.IsString()) return Bad("abi_value_mismatch", "address must be a string");
        auto a = ParseAddress(std::string_view(v.GetString(), v.GetStringLength()));
        if (!a) return a.error();
        return AbiValue::Address(*a);
    }
    case AbiKind::Bool:
        if (!v.IsBool()) return Bad("abi_value_mismatch", "bool must be true or false");
        return AbiValue::Bool(v.GetBool());
    case AbiKind::FixedBytes:
    case AbiKind::DynamicBytes: {
        if (!v.IsString()) return Bad("abi_value_mismatch", "bytes must be a hex string");
        auto b = HexDecode(std::string_view(v.GetString(), v.GetStringLength()));
        if (!b) return b.error();
        return t.kind == AbiKind::FixedBytes ? AbiValue::FixedBytes(*b) : AbiValue::DynBytes(*b);
    }
    case AbiKind::String:
        if (!v.IsString()) return Bad("abi_value_mismatch", "string must be a JSON string");
        return AbiValue::String(std::string_view(v.GetString(), v.GetStringLength()));
    case AbiKind::Array:
    case AbiKind::FixedArray:
    case AbiKind::Tuple: {
        if (!v.IsArray()) return Bad("abi_value_mismatch", "arrays and tuples must be JSON arrays");
        if (t.members.empty()) return Bad("abi_bad_type", "type without members");
        if (t.kind == AbiKind::Tuple && v.Size() != t.members.size())
            return Bad("abi_value_mismatch", "tuple needs " + std::to_string(t.members.size()) + " values");
        std::vector<AbiValue> items;
        items.reserve(v.Size());
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
            const AbiType& member = t.kind == AbiKind::Tuple ? t.members[i] : t.members[0];
            auto item = AbiFromJson(member, v[i]);
            if (!item) return item.error();
            items.push_back(std::move(*item));
        }
        if (t.kind == AbiKind::Array) return AbiValue::Array(std::move(items));
        if (t.kind == AbiKind::FixedArray) return AbiValue::FixedArray(std::move(items));
        return AbiValue::Tuple(std::move(items));
    }
    }
    return Bad("abi_bad_type", "unknown ABI kind");
}

Result<Json> AbiToJson(const AbiType& t, const AbiValue& v, Alloc& a) {
    switch (t.kind) {
    case AbiKind::Uint:
        return Str(v.word.ToDecimal(), a);
    case AbiKind::Int:
        return Str(SignedDecimal(v.word), a);
    case AbiKind::Address:
        return Str(ChecksumAddress(v.address), a);
    case AbiKind::Bool:
        return Json(v.boolean);
    case AbiKind::FixedBytes:
    case AbiKind::DynamicBytes:
        return HexJson(v.bytes, a);
    case AbiKind::String:
        return Str(v.AsString(), a);  // the writer refuses invalid UTF-8 when the line is written
    case AbiKind::Array:
    case AbiKind::FixedArray:
    case AbiKind::Tuple: {
        if (t.members.empty() || (t.kind == AbiKind::Tuple && v.items.size() != t.members.size()))
            return Bad("abi_malformed", "decoded value does not match its type");
        Json out(rapidjson::kArrayType);
        for (std::size_t i = 0; i < v.items.size(); ++i) {
            auto item = AbiToJson(t.kind == AbiKind::Tuple ? t.members[i] : t.members[0], v.items[i], a);
            if (!item) return item.error();
            out.PushBack(std::move(*item), a);
        }
        return out;
    }
    }
    return Bad("abi_bad_type", "unknown ABI kind");
}

Result<std::vector<AbiType>> TypesField(const Json& req) {
    auto s = StringField(req, "types");
    if (!s) return s.error();
    return ParseAbiTypeList(*s);
}

// RLP -------------------------------------------------------------------------------------------

Result<RlpItem> RlpFromJson(const Json& v, int depth) {
    if (depth > MAX_JSON_DEPTH) return Bad("too_deep", "RLP item nested too deeply");
    if (v.IsString()) {
        auto b = HexDecode(std::string_view(v.GetString(), v.GetStringLength()));
        if (!b) return b.error();
        return RlpItem::String(*b);
    }
    if (!v.IsArray()) return Bad("bad_rlp_item", "an RLP item is a hex string or an array");
    std::vector<RlpItem> members;
    for (const auto& m : v.GetArray()) {
        auto item = RlpFromJson(m, depth + 1);
        if (!item) return item.error();
        members.push_back(std::move(*item));
    }
    return RlpItem::List(std::move(members));
}

Json RlpToJson(const RlpItem& item, Alloc& a) {
    if (!item.is_list) return HexJson(item.bytes, a);
    Json out(rapidjson::kArrayType);
    for (const auto& m : item.items) out.PushBack(RlpToJson(m, a), a);
    return out;
}

// Typed data --------------------------------------------------------------------------------

std::string Serialize(const Json& v) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return std::string(buf.GetString(), buf.GetSize());
}

// Either a full eth_signTypedData_v4 document in "typed_data", or ethers' (domain, types, value).
Result<TypedData> TypedDataFromRequest(const Json& req) {
    if (const Json* doc = Find(req, "typed_data")) return TypedData::Parse(Serialize(*doc));
    const Json* domain = Find(req, "domain");
    const Json* types = Find(req, "types");
    const Json* value = Find(req, "value");
    if (domain == nullptr || types == nullptr || value == nullptr)
        return Bad("missing_field", "expected \"typed_data\" or \"domain\", \"types\" and \"value\"");
    return TypedData::FromParts(Serialize(*domain), Serialize(*types), Serialize(*value));
}

// Wallets emit v = 27/28 for EIP-712 signatures, as for EIP-191.
Signature65 SignWithLegacyV(const PrivateKey& key, const Hash32& digest) {
    Signature65 sig = SignDigest(key, digest);
    sig[64] = static_cast<std::uint8_t>(sig[64] + 27);
    return sig;
}

// Transactions ------------------------------------------------------------------------------

Result<Address20> AddressValue(const Json& v) {
    if (!v.IsString()) return Bad("invalid_address", "address must be a string");
    return ParseAddress(std::string_view(v.GetString(), v.GetStringLength()));
}

Result<Eip1559Tx> TxFromJson(const Json& req) {
    Eip1559Tx tx;
    auto chain_id = Uint64Field(req, "chain_id");
    if (!chain_id) return chain_id.error();
    auto nonce = Uint64Field(req, "nonce");
    if (!nonce) return nonce.error();
    auto gas_limit = Uint64Field(req, "gas_limit");
    if (!gas_limit) return gas_limit.error();
    auto tip = Uint256Field(req, "max_priority_fee_per_gas");
    if (!tip) return tip.error();
    auto max_fee = Uint256Field(req, "max_fee_per_gas");
    if (!max_fee) return max_fee.error();
    auto value = Uint256Field(req, "value");
    if (!value) return value.error();
    tx.chain_id = *chain_id;
    tx.nonce = *nonce;
    tx.gas_limit = *gas_limit;
    tx.max_priority_fee_per_gas = *tip;
    tx.max_fee_per_gas = *max_fee;
    tx.value = *value;
    if (const Json* to = Find(req, "to"); to != nullptr && !to->IsNull()) {
        auto a = AddressValue(*to);
        if (!a) return a.error();
        tx.to = *a;
    }
    if (Find(req, "data") != nullptr) {
        auto data = HexField(req, "data");
        if (!data) return data.error();
        tx.data = std::move(*data);
    }
    if (const Json* list = Find(req, "access_list"); list != nullptr && !list->IsNull()) {
        if (!list->IsArray()) return Bad("bad_access_list", "access_list must be an array");
        for (const auto& entry : list->GetArray()) {
            if (!entry.IsObject()) return Bad("bad_access_list", "access list entries are objects");
            const Json* address = Find(entry, "address");
            const Json* keys = Find(entry, "storage_keys");
            if (address == nullptr || keys == nullptr || !keys->IsArray())
                return Bad("bad_access_list", "entries need address and storage_keys");
            AccessListEntry out;
            auto a = AddressValue(*address);
            if (!a) return a.error();
            out.address = *a;
            for (const auto& k : keys->GetArray()) {
                if (!k.IsString()) return Bad("bad_access_list", "storage keys are hex strings");
                auto b = HexDecodeExact(std::string_view(k.GetString(), k.GetStringLength()), 32);
                if (!b) return b.error();
                Hash32 h{};
                std::copy(b->begin(), b->end(), h.begin());
                out.storage_keys.push_back(h);
            }
            tx.access_list.push_back(std::move(out));
        }
    }
    return tx;
}

// Dispatch --------------------------------------------------------------------------------------

Status Serve(std::string_view op, const Json& req, Json& out, Alloc& a) {
    if (op == "keccak" || op == "sha256") {
        auto data = HexField(req, "hex");
        if (!data) return data.error();
        const Hash32 h = op == "keccak" ? Keccak256Hash(ByteView(*data)) : Sha256Hash(ByteView(*data));
        out.AddMember("hash", HexJson(h, a), a);
        return Success();
    }
    if (op == "address") {
        auto key = KeyField(req);
        if (!key) return key.error();
        out.AddMember("address", Str(ChecksumAddress(key->Address()), a), a);
        return Success();
    }
    if (op == "sign_digest") {
        auto key = KeyField(req);
        if (!key) return key.error();
        auto digest = Hash32Field(req, "digest");
        if (!digest) return digest.error();
        out.AddMember("signature", HexJson(SignDigest(*key, *digest), a), a);
        return Success();
    }
    if (op == "sign_message") {
        auto key = KeyField(req);
        if (!key) return key.error();
        auto message = HexField(req, "message_hex");
        if (!message) return message.error();
        out.AddMember("signature", HexJson(SignPersonalMessage(*key, *message), a), a);
        out.AddMember("hash", HexJson(PersonalMessageHash(ByteView(*message)), a), a);
        return Success();
    }
    if (op == "recover_digest" || op == "recover_message") {
        auto signature = HexField(req, "signature");
        if (!signature) return signature.error();
        Hash32 digest{};
        if (op == "recover_digest") {
            auto d = Hash32Field(req, "digest");
            if (!d) return d.error();
            digest = *d;
        } else {
            auto message = HexField(req, "message_hex");
            if (!message) return message.error();
            digest = PersonalMessageHash(ByteView(*message));
        }
        auto address = RecoverAddress(digest, *signature);
        if (!address) return address.error();
        out.AddMember("address", Str(ChecksumAddress(*address), a), a);
        return Success();
    }
    if (op == "hash_typed_data" || op == "sign_typed_data") {
        std::optional<PrivateKey> key;
        if (op == "sign_typed_data") {
            auto k = KeyField(req);
            if (!k) return k.error();
            key.emplace(std::move(*k));
        }
        auto typed = TypedDataFromRequest(req);
        if (!typed) return typed.error();
        const Hash32 digest = typed->Digest();
        out.AddMember("digest", HexJson(digest, a), a);
        out.AddMember("domain_separator", HexJson(typed->DomainSeparator(), a), a);
        out.AddMember("message_hash", HexJson(typed->MessageHash(), a), a);
        if (key) out.AddMember("signature", HexJson(SignWithLegacyV(*key, digest), a), a);
        return Success();
    }
    if (op == "abi_encode") {
        auto types = TypesField(req);
        if (!types) return types.error();
        const Json* values = Find(req, "values");
        if (values == nullptr || !values->IsArray()) return Bad("missing_field", "expected array field \"values\"");
        if (values->Size() != types->size()) return Bad("abi_value_mismatch", "values and types differ in count");
        std::vector<AbiValue> parsed;
        for (rapidjson::SizeType i = 0; i < values->Size(); ++i) {
            auto v = AbiFromJson((*types)[i], (*values)[i]);
            if (!v) return v.error();
            parsed.push_back(std::move(*v));
        }
        auto encoded = AbiEncode(*types, parsed);
        if (!encoded) return encoded.error();
        out.AddMember("hex", HexJson(*encoded, a), a);
        return Success();
    }
    if (op == "abi_decode") {
        auto types = TypesField(req);
        if (!types) return types.error();
        auto data = HexField(req, "hex");
        if (!data) return data.error();
        auto decoded = AbiDecode(*types, *data);
        if (!decoded) return decoded.error();
        if (decoded->size() != types->size()) return MakeError(ErrorKind::Internal, "abi_count", "decoder returned wrong count");
        Json values(rapidjson::kArrayType);
        for (std::size_t i = 0; i < decoded->size(); ++i) {
            auto v = AbiToJson((*types)[i], (*decoded)[i], a);
            if (!v) return v.error();
            values.PushBack(std::move(*v), a);
        }
        out.AddMember("values", values, a);
        return Success();
    }
    if (op == "rlp_encode") {
        const Json* item = Find(req, "item");
        if (item == nullptr) return Bad("missing_field", "expected field \"item\"");
        auto parsed = RlpFromJson(*item, 0);
        if (!parsed) return parsed.error();
        out.AddMember("hex", HexJson(RlpEncode(*parsed), a), a);
        return Success();
    }
    if (op == "rlp_decode") {
        auto data = HexField(req, "hex");
        if (!data) return data.error();
        auto item = RlpDecode(*data);
        if (!item) return item.error();
        out.AddMember("item", RlpToJson(*item, a), a);
        return Success();
    }
    if (op == "tx1559") {
        auto key = KeyField(req);
        if (!key) return key.error();
        auto tx = TxFromJson(req);
        if (!tx) return tx.error();
        const Hash32 digest = SigningHash(*tx);
        const Signature65 sig = SignDigest(*key, digest);
        Hash32 r{}, s{};
        std::copy(sig.begin(), sig.begin() + 32, r.begin());
        std::copy(sig.begin() + 32, sig.begin() + 64, s.begin());
        auto raw = EncodeSigned(*tx, sig[64], r, s);
        if (!raw) return raw.error();
        out.AddMember("unsigned_payload", HexJson(SigningPayload(*tx), a), a);
        out.AddMember("unsigned_hash", HexJson(digest, a), a);
        out.AddMember("signed_raw", HexJson(*raw, a), a);
        out.AddMember("tx_hash", HexJson(TxHash(*raw), a), a);
        out.AddMember("from", Str(ChecksumAddress(key->Address()), a), a);
        return Success();
    }
    if (op == "cid") {
        auto data = HexField(req, "hex");
        if (!data) return data.error();
        out.AddMember("cid", Str(ComputeCidV0(ByteView(*data)), a), a);
        return Success();
    }
    if (op == "hkdf") {
        auto ikm = HexField(req, "ikm");
        if (!ikm) return ikm.error();
        auto salt = HexField(req, "salt");
        if (!salt) return salt.error();
        auto info = HexField(req, "info");
        if (!info) return info.error();
        auto length = Uint64Field(req, "length");
        if (!length) return length.error();
        auto okm = HkdfSha256(*ikm, *salt, *info, static_cast<std::size_t>(*length));
        if (!okm) return okm.error();
        out.AddMember("okm", HexJson(okm->view(), a), a);
        return Success();
    }
    if (op == "aes_gcm_seal" || op == "aes_gcm_open") {
        auto key_bytes = HexField(req, "key");
        if (!key_bytes) return key_bytes.error();
        const SecretBytes key{ByteView(*key_bytes)};
        auto nonce = HexField(req, "nonce");
        if (!nonce) return nonce.error();
        auto aad = HexField(req, "aad");
        if (!aad) return aad.error();
        auto input = HexField(req, op == "aes_gcm_seal" ? "plaintext" : "sealed");
        if (!input) return input.error();
        if (op == "aes_gcm_seal") {
            auto sealed = AesGcmSeal(key, *nonce, *aad, *input);
            if (!sealed) return sealed.error();
            out.AddMember("sealed", HexJson(*sealed, a), a);
        } else {
            auto plain = AesGcmOpen(key, *nonce, *aad, *input);
            if (!plain) return plain.error();
            out.AddMember("plaintext", HexJson(plain->view(), a), a);
        }
        return Success();
    }
    return Bad("unknown_op", "unknown op \"" + std::string(op) + "\"");
}

std::string ErrorLine(const std::string& text) {
    rapidjson::Document d(rapidjson::kObjectType);
    d.AddMember("error", Str(text, d.GetAllocator()), d.GetAllocator());
    return Serialize(d);
}

std::string HandleLine(const std::string& line) {
    if (line.size() > MAX_LINE_BYTES) return ErrorLine("too_large: request line exceeds the limit");
    rapidjson::Document req;
    constexpr unsigned FLAGS = rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag;
    req.Parse<FLAGS>(line.data(), line.size());
    if (req.HasParseError()) return ErrorLine(std::string("malformed_json: ") + rapidjson::GetParseError_En(req.GetParseError()));
    if (!req.IsObject()) return ErrorLine("malformed_request: a request is a JSON object");
    auto op = StringField(req, "op");
    if (!op) return ErrorLine("malformed_request: missing \"op\"");

    rapidjson::Document resp(rapidjson::kObjectType);
    const Status status = Serve(*op, req, resp, resp.GetAllocator());
    if (!status) return ErrorLine(status.error().code + ": " + status.error().message);

    // Validating the encoding turns a decoded non-UTF-8 string into an error instead of bad JSON.
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::CrtAllocator,
                      rapidjson::kWriteValidateEncodingFlag>
        writer(buf);
    if (!resp.Accept(writer)) return ErrorLine("not_utf8: the result holds a string that is not valid UTF-8");
    return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        std::string answer;
        // A test tool must answer every line: an allocation failure becomes an error reply too.
        try {
            answer = HandleLine(line);
        } catch (const std::exception& e) {
            answer = ErrorLine(std::string("internal: ") + e.what());
        }
        std::fwrite(answer.data(), 1, answer.size(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
    }
    return 0;
}
