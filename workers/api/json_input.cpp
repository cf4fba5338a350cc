#include "workers/api/json_input.h"

#include <charconv>
#include <set>

#include "common/cid.h"
#include "common/hex.h"
#include "common/keccak.h"
#include "common/secp256k1.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

common::Error InvalidField(const char* field, const std::string& why) {
    return MakeError(ErrorKind::InvalidInput, std::string("invalid_") + field, std::string(field) + " " + why);
}
common::Error MissingField(const char* field) {
    return MakeError(ErrorKind::InvalidInput, std::string("missing_") + field, std::string(field) + " is required");
}

// Decimal digits only, no sign, no leading '+', fits in 63 bits.
std::optional<std::uint64_t> ParseDecimal(std::string_view s) {
    if (s.empty() || s.size() > 19) return std::nullopt;
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v > (std::uint64_t{1} << 63)) return std::nullopt;
    return v;
}

std::optional<std::uint64_t> IdValue(const rapidjson::Value& v) {
    if (v.IsUint64()) return v.GetUint64() <= (std::uint64_t{1} << 63) ? std::optional(v.GetUint64()) : std::nullopt;
    if (v.IsString()) return ParseDecimal(std::string_view(v.GetString(), v.GetStringLength()));
    return std::nullopt;
}

template <typename T, typename F>
common::Result<std::vector<T>> List(const rapidjson::Value* v, const char* field, bool required, F item) {
    if (v == nullptr) {
        if (required) return MissingField(field);
        return std::vector<T>{};
    }
    if (!v->IsArray()) return InvalidField(field, "must be an array");
    if (v->Size() > MAX_LIST_ITEMS) {
        return InvalidField(field, "has more than " + std::to_string(MAX_LIST_ITEMS) + " items");
    }
    std::vector<T> out;
    for (const auto& e : v->GetArray()) {
        auto r = item(e);
        if (!r.ok()) return r.error();
        out.push_back(std::move(r).value());
    }
    return out;
}

common::Result<common::Address20> AddressValue(const rapidjson::Value& v, const char* field) {
    if (!v.IsString()) return InvalidField(field, "must be a 0x-prefixed address string");
    auto a = common::ParseAddress(std::string_view(v.GetString(), v.GetStringLength()));
    if (!a.ok()) return InvalidField(field, "is not a valid address: " + a.error().message);
    return a;
}

common::Result<common::Hash32> HashValue(const rapidjson::Value& v, const char* field,
                                        common::HexPrefix prefix = common::HexPrefix::Required) {
    if (!v.IsString()) return InvalidField(field, "must be a 0x-prefixed 32-byte hex string");
    auto b = common::HexDecodeExact(std::string_view(v.GetString(), v.GetStringLength()), 32, prefix);
    if (!b.ok()) {
        return InvalidField(field, prefix == common::HexPrefix::Required ? "must be 0x followed by 64 hex digits"
                                                                          : "must hold 64 hex digits (0x optional)");
    }
    common::Hash32 h;
    std::copy(b->begin(), b->end(), h.begin());
    return h;
}

}  // namespace

common::Result<JsonBody> JsonBody::From(const rapidjson::Document* doc) {
    if (doc == nullptr || !doc->IsObject()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_body", "the request body must be a JSON object");
    }
    return JsonBody(doc);
}

const rapidjson::Value* JsonBody::Field(const char* field) const {
    auto it = m_obj->FindMember(field);
    if (it == m_obj->MemberEnd() || it->value.IsNull()) return nullptr;
    return &it->value;
}

bool JsonBody::Has(const char* field) const { return Field(field) != nullptr; }

common::Result<std::string> JsonBody::String(const char* field, std::size_t max_bytes, bool required,
                                             std::string fallback) const {
    const auto* v = Field(field);
    if (v == nullptr) {
        if (required) return MissingField(field);
        return fallback;
    }
    if (!v->IsString()) return InvalidField(field, "must be a string");
    if (v->GetStringLength() > max_bytes) {
        return InvalidField(field, "is longer than " + std::to_string(max_bytes) + " bytes");
    }
    return std::string(v->GetString(), v->GetStringLength());
}

common::Result<bool> JsonBody::Bool(const char* field, bool required, bool fallback) const {
    const auto* v = Field(field);
    if (v == nullptr) {
        if (required) return MissingField(field);
        return fallback;
    }
    if (!v->IsBool()) return InvalidField(field, "must be true or false");
    return v->GetBool();
}

common::Result<std::uint64_t> JsonBody::GroupId(const char* field) const {
    const auto* v = Field(field);
    if (v == nullptr) return MissingField(field);
    auto id = IdValue(*v);
    if (!id || *id == 0) return InvalidField(field, "must be a positive group id (number or decimal string)");
    return *id;
}

common::Result<std::vector<std::uint64_t>> JsonBody::GroupIdList(const char* field, bool required) const {
    return List<std::uint64_t>(Field(field), field, required, [&](const rapidjson::Value& e) -> common::Result<std::uint64_t> {
        auto id = IdValue(e);
        if (!id) return InvalidField(field, "must hold group ids (numbers or decimal strings; 0 = all groups)");
        return *id;
    });
}

common::Result<common::Address20> JsonBody::Address(const char* field) const {
    const auto* v = Field(field);
    if (v == nullptr) return MissingField(field);
    return AddressValue(*v, field);
}

common::Result<std::vector<common::Address20>> JsonBody::AddressList(const char* field, bool required) const {
    return List<common::Address20>(Field(field), field, required,
                                   [&](const rapidjson::Value& e) { return AddressValue(e, field); });
}

common::Result<common::Hash32> JsonBody::HashedCid(const char* field) const {
    const auto* v = Field(field);
    if (v == nullptr) return MissingField(field);
    return HashValue(*v, field);
}

common::Result<std::vector<common::Hash32>> JsonBody::HashedCidList(const char* field, bool required) const {
    // With or without 0x, as the deployed implementation takes a group's hash list.
    return List<common::Hash32>(Field(field), field, required,
                                [&](const rapidjson::Value& e) { return HashValue(e, field, common::HexPrefix::Optional); });
}

bool JsonBody::HasZeroEntry(const char* field) const {
    const auto* v = Field(field);
    if (v == nullptr || !v->IsArray()) return false;
    for (const auto& e : v->GetArray()) {
        if (e.IsNumber() && e.IsUint64() && e.GetUint64() == 0) return true;
        if (!e.IsString()) continue;
        std::string_view text(e.GetString(), e.GetStringLength());
        if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
        if (!text.empty() && text.find_first_not_of('0') == std::string_view::npos) return true;
    }
    return false;
}

common::Result<std::pair<std::string, common::Hash32>> JsonBody::RawCid(const char* field) const {
    auto s = String(field, 256);
    if (!s.ok()) return s.error();
    if (!common::IsValidCid(*s)) return InvalidField(field, "is not a valid IPFS CID");
    return std::pair{*s, common::CidHash(*s)};
}

common::Result<std::uint64_t> JsonBody::U64(const char* field, bool required, std::uint64_t fallback) const {
    const auto* v = Field(field);
    if (v == nullptr) {
        if (required) return MissingField(field);
        return fallback;
    }
    auto n = IdValue(*v);
    if (!n) return InvalidField(field, "must be a non-negative integer");
    return *n;
}

common::Result<Page> ParsePage(const HttpRequest& request) {
    Page page{0, DEFAULT_PAGE_SIZE};
    if (auto n = request.QueryParam("page_number")) {
        auto v = ParseDecimal(*n);
        if (!v || *v > (std::uint64_t{1} << 32)) {
            return MakeError(ErrorKind::InvalidInput, "invalid_page_number", "page_number must be an integer >= 0");
        }
        page.number = *v;
    }
    if (auto s = request.QueryParam("page_size")) {
        auto v = ParseDecimal(*s);
        if (!v || *v < 1 || *v > MAX_PAGE_SIZE) {
            return MakeError(ErrorKind::InvalidInput, "invalid_page_size", "page_size must be an integer from 1 to 100");
        }
        page.size = *v;
    }
    return page;
}

common::Result<std::optional<std::uint64_t>> QueryGroupId(const HttpRequest& request, bool required) {
    auto g = request.QueryParam("group_id");
    if (!g || g->empty()) {
        if (required) return MissingField("group_id");
        return std::optional<std::uint64_t>{};
    }
    auto v = ParseDecimal(*g);
    if (!v || *v == 0) return InvalidField("group_id", "must be a positive integer");
    return std::optional<std::uint64_t>(*v);
}

}  // namespace sigil::workers
