#include "workers/api/typed_data_auth.h"

#include <array>
#include <cstdint>
#include <string>

#include <rapidjson/document.h>

#include "common/eip712.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/secp256k1.h"
#include "common/uint256.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

struct Field {
    std::string_view name;
    std::string_view type;
};

// The only accepted types object (DESIGN.md section 4), field for field and in this order.
constexpr std::array<Field, 3> DOMAIN_FIELDS = {{{"name", "string"}, {"version", "string"}, {"chainId", "uint256"}}};
constexpr std::array<Field, 2> MESSAGE_FIELDS = {{{"address", "address"}, {"issuedAt", "uint256"}}};
constexpr std::array<std::string_view, 4> DOCUMENT_KEYS = {"types", "primaryType", "domain", "message"};

common::Error Invalid(std::string code, std::string message) {
    return MakeError(ErrorKind::InvalidInput, std::move(code), std::move(message));
}
common::Error Refused(std::string code, std::string message) {
    return MakeError(ErrorKind::Unauthenticated, std::move(code), std::move(message));
}
common::Error Mismatch(const std::string& what) {
    return Invalid("typed_data_schema_mismatch", "typed_data differs from the canonical ChainSecured schema: " + what);
}

std::string_view View(const rapidjson::Value& v) { return common::JsonView(v); }

// An object whose member names are exactly `keys`, in any order, each once.
template <std::size_t N>
bool HasExactKeys(const rapidjson::Value& obj, const std::array<std::string_view, N>& keys) {
    if (!obj.IsObject() || obj.MemberCount() != N) return false;
    for (const auto& key : keys) {
        std::size_t seen = 0;
        for (const auto& m : obj.GetObject()) seen += View(m.name) == key ? 1 : 0;
        if (seen != 1) return false;
    }
    return true;
}

template <std::size_t N>
std::array<std::string_view, N> NamesOf(const std::array<Field, N>& fields) {
    std::array<std::string_view, N> names{};
    for (std::size_t i = 0; i < N; ++i) names[i] = fields[i].name;
    return names;
}

// [{"name": ..., "type": ...}, ...] equal to `fields`, in order, with no other member anywhere.
template <std::size_t N>
bool IsFieldList(const rapidjson::Value& list, const std::array<Field, N>& fields) {
    static constexpr std::array<std::string_view, 2> ENTRY_KEYS = {"name", "type"};
    if (!list.IsArray() || list.Size() != N) return false;
    for (std::size_t i = 0; i < N; ++i) {
        const auto& entry = list[static_cast<rapidjson::SizeType>(i)];
        if (!HasExactKeys(entry, ENTRY_KEYS) || !entry["name"].IsString() || !entry["type"].IsString()) return false;
        if (View(entry["name"]) != fields[i].name || View(entry["type"]) != fields[i].type) return false;
    }
    return true;
}

common::Status CheckSchema(const rapidjson::Value& doc, std::string_view primary) {
    if (!HasExactKeys(doc, DOCUMENT_KEYS)) {
        return Mismatch("the document must have exactly the keys types, primaryType, domain and message");
    }
    const auto& types = doc["types"];
    const std::array<std::string_view, 2> type_names = {"EIP712Domain", primary};
    if (!HasExactKeys(types, type_names)) {
        return Mismatch("types must define exactly EIP712Domain and " + std::string(primary));
    }
    if (!IsFieldList(types["EIP712Domain"], DOMAIN_FIELDS)) {
        return Mismatch("EIP712Domain must be [name string, version string, chainId uint256]");
    }
    if (!IsFieldList(types.FindMember(rapidjson::StringRef(primary.data(), static_cast<rapidjson::SizeType>(primary.size())))->value,
                     MESSAGE_FIELDS)) {
        return Mismatch(std::string(primary) + " must be [address address, issuedAt uint256]");
    }
    if (!HasExactKeys(doc["domain"], NamesOf(DOMAIN_FIELDS))) {
        return Mismatch("domain must have exactly the members name, version and chainId");
    }
    if (!HasExactKeys(doc["message"], NamesOf(MESSAGE_FIELDS))) {
        return Mismatch("message must have exactly the members address and issuedAt");
    }
    return common::Success();
}

// A uint256 value as common::TypedData accepted it: a JSON integer, or a decimal or 0x-hex string.
std::optional<common::Uint256> UintValue(const rapidjson::Value& v) {
    if (v.IsUint64()) return common::Uint256::FromUint64(v.GetUint64());
    if (!v.IsString()) return std::nullopt;
    const std::string_view s = View(v);
    auto parsed = s.starts_with("0x") || s.starts_with("0X") ? common::Uint256::FromHex(s) : common::Uint256::FromDecimal(s);
    if (!parsed.ok()) return std::nullopt;
    return *parsed;
}

// |a - b| <= ISSUED_AT_WINDOW_SECONDS, without overflow for any two values (the distance of two
// int64 values always fits in uint64).
bool WithinWindow(std::int64_t a, std::int64_t b) {
    const std::uint64_t distance = a >= b ? static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b)
                                          : static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a);
    return distance <= static_cast<std::uint64_t>(ISSUED_AT_WINDOW_SECONDS);
}

common::Result<common::Bytes> ParseSignature(std::string_view hex) {
    auto bytes = common::HexDecodeExact(hex, 65, common::HexPrefix::Required);
    if (!bytes.ok()) return Invalid("invalid_signature", "signature must be 0x followed by 130 hex characters (65 bytes)");
    return bytes;
}

}  // namespace

std::string_view PrimaryTypeOf(SignatureFlow flow) {
    switch (flow) {
        case SignatureFlow::CreateWallet: return "CreateWallet";
        case SignatureFlow::ConvertAccount: return "ConvertAccount";
        case SignatureFlow::AddUsageApiKey: return "AddUsageApiKey";
        case SignatureFlow::BillingAuth: return "BillingAuth";
    }
    return "";
}

common::Result<VerifiedTypedData> VerifyTypedDataSignature(std::string_view typed_data_json,
                                                           std::string_view signature_hex,
                                                           const TypedDataPolicy& policy) {
    if (typed_data_json.size() > MAX_TYPED_DATA_BYTES) {
        return Invalid("typed_data_too_large", "serialized typed_data is " + std::to_string(typed_data_json.size()) +
                                                   " bytes, more than " + std::to_string(MAX_TYPED_DATA_BYTES));
    }
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(typed_data_json.data(),
                                                                                       typed_data_json.size());
    if (doc.HasParseError() || !doc.IsObject()) return Invalid("invalid_typed_data", "typed_data must be a JSON object");
    const auto primary_it = doc.FindMember("primaryType");
    if (primary_it == doc.MemberEnd() || !primary_it->value.IsString()) {
        return Invalid("invalid_typed_data", "typed_data.primaryType must be a string");
    }
    const std::string_view expected_primary = PrimaryTypeOf(policy.flow);
    if (View(primary_it->value) != expected_primary) {
        return Invalid("wrong_primary_type", "typed_data.primaryType must be " + std::string(expected_primary) +
                                                 " for this endpoint");
    }
    SIGIL_TRY_STATUS(CheckSchema(doc, expected_primary));

    // The values, by the EIP-712 rules (address form, integer ranges, repeated keys); this also
    // computes the digest that was signed.
    auto typed = common::TypedData::Parse(typed_data_json);
    if (!typed.ok()) return Invalid("invalid_typed_data", typed.error().message);

    const auto& domain = doc["domain"];
    if (!domain["name"].IsString() || View(domain["name"]) != CHAIN_SECURED_DOMAIN_NAME ||
        !domain["version"].IsString() || View(domain["version"]) != CHAIN_SECURED_DOMAIN_VERSION) {
        return Invalid("wrong_domain", "typed_data.domain must have name \"" + std::string(CHAIN_SECURED_DOMAIN_NAME) +
                                           "\" and version \"" + std::string(CHAIN_SECURED_DOMAIN_VERSION) + "\"");
    }
    const auto chain_id = UintValue(domain["chainId"]);
    if (!chain_id || *chain_id != common::Uint256::FromUint64(policy.chain_id)) {
        return Invalid("wrong_chain_id", "typed_data.domain.chainId must be this node's chain id " +
                                             std::to_string(policy.chain_id));
    }

    SIGIL_TRY(signature, ParseSignature(signature_hex));

    const auto& message = doc["message"];
    const auto issued = UintValue(message["issuedAt"]);
    const auto issued_at = issued ? issued->ToUint64() : std::nullopt;
    if (!issued_at || *issued_at > static_cast<std::uint64_t>(INT64_MAX) ||
        !WithinWindow(static_cast<std::int64_t>(*issued_at), policy.now)) {
        return Refused("issued_at_out_of_window", "typed_data.message.issuedAt must be within " +
                                                      std::to_string(ISSUED_AT_WINDOW_SECONDS) +
                                                      " seconds of the server time " + std::to_string(policy.now));
    }

    const common::Hash32 digest = typed->Digest();
    auto recovered = common::RecoverAddress(digest, *signature);
    if (!recovered.ok()) {
        if (recovered.error().code == "invalid_signature") {
            return Invalid("invalid_signature", recovered.error().message);
        }
        return Refused("signature_mismatch", "the signature does not recover to typed_data.message.address");
    }
    auto claimed = common::ParseAddress(View(message["address"]));
    if (!claimed.ok() || *claimed != *recovered) {
        return Refused("signature_mismatch", "the signature does not recover to typed_data.message.address");
    }
    if (policy.expected_signer && *policy.expected_signer != *recovered) {
        return Refused("signer_mismatch", "the typed data was signed by " + common::ChecksumAddress(*recovered) +
                                              ", not by " + common::ChecksumAddress(*policy.expected_signer));
    }
    return VerifiedTypedData{*recovered, *issued_at, digest};
}

}  // namespace sigil::workers
