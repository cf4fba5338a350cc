#include "common/eip712.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "common/hex.h"
#include "common/json.h"
#include "common/keccak.h"
#include "common/secp256k1.h"

namespace sigil::common {
namespace {

using Json = rapidjson::Value;

constexpr std::string_view DOMAIN_TYPE = "EIP712Domain";
constexpr std::size_t MAX_FIXED_ARRAY_LENGTH = 1'000'000;

Error Bad(std::string message) {
    return MakeError(ErrorKind::InvalidInput, "invalid_typed_data", std::move(message));
}

std::string Quote(std::string_view s) {
    // Error messages echo names; cap them so a huge name cannot bloat a response or log line.
    constexpr std::size_t MAX = 64;
    std::string out = "\"";
    out.append(s.substr(0, MAX));
    if (s.size() > MAX) out.append("...");
    out.push_back('"');
    return out;
}

// JSON parsing ------------------------------------------------------------------------------

Result<rapidjson::Document> ParseJson(std::string_view text, const char* what) {
    if (!JsonNestingWithin(text, EIP712_MAX_NESTING)) {
        return Bad(std::string(what) + " nests deeper than " + std::to_string(EIP712_MAX_NESTING) + " levels");
    }
    rapidjson::Document doc;
    constexpr unsigned FLAGS = rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag;
    doc.Parse<FLAGS>(text.data(), text.size());
    if (doc.HasParseError()) {
        return MakeError(ErrorKind::MalformedJson, "invalid_typed_data",
                         std::string(what) + " is not valid JSON: " + rapidjson::GetParseError_En(doc.GetParseError()) +
                             " at offset " + std::to_string(doc.GetErrorOffset()));
    }
    if (JsonHasDuplicateKeys(doc)) return Bad(std::string(what) + " has an object with a repeated key");
    return doc;
}

Error TooLarge() {
    return MakeError(ErrorKind::TooLarge, "invalid_typed_data",
                     "typed data is larger than " + std::to_string(EIP712_MAX_DOCUMENT_BYTES) + " bytes");
}

// Type names --------------------------------------------------------------------------------

bool IsIdentifier(std::string_view s) {
    if (s.empty()) return false;
    auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; };
    if (!start(s[0])) return false;
    return std::all_of(s.begin() + 1, s.end(), [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

// Parses a decimal with no sign and no leading zero, in [lo, hi].
std::optional<std::size_t> SmallNumber(std::string_view s, std::size_t lo, std::size_t hi) {
    if (s.empty() || s.size() > 9 || (s[0] == '0' && s.size() > 1)) return std::nullopt;
    std::size_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::size_t>(c - '0');
    }
    if (v < lo || v > hi) return std::nullopt;
    return v;
}

enum class AtomKind { None, Uint, Int, Address, Bool, FixedBytes, Bytes, String };

struct Atom {
    AtomKind kind = AtomKind::None;
    std::size_t size = 0;  // bits for Uint/Int, bytes for FixedBytes
};

Atom ParseAtom(std::string_view t) {
    if (t == "address") return {AtomKind::Address, 20};
    if (t == "bool") return {AtomKind::Bool, 1};
    if (t == "string") return {AtomKind::String, 0};
    if (t == "bytes") return {AtomKind::Bytes, 0};
    if (t.starts_with("uint")) {
        auto n = SmallNumber(t.substr(4), 8, 256);
        if (n && *n % 8 == 0) return {AtomKind::Uint, *n};
    } else if (t.starts_with("int")) {
        auto n = SmallNumber(t.substr(3), 8, 256);
        if (n && *n % 8 == 0) return {AtomKind::Int, *n};
    } else if (t.starts_with("bytes")) {
        if (auto n = SmallNumber(t.substr(5), 1, 32)) return {AtomKind::FixedBytes, *n};
    }
    return {};
}

// Names that look like atomic types but are not valid ones ("uint7", "bytes33", "uint") must
// not be definable as structs either, or "uint7" could silently mean a struct.
bool ReservedName(std::string_view t) {
    return ParseAtom(t).kind != AtomKind::None || t.starts_with("uint") || t.starts_with("int") ||
           t.starts_with("bytes") || t == "address" || t == "bool" || t == "string";
}

// "T[2][]" -> element "T[2]", length nullopt (dynamic). Returns false when `t` is not an array.
struct ArraySplit {
    std::string_view element;
    std::optional<std::size_t> length;
};

std::optional<ArraySplit> SplitArray(std::string_view t) {
    if (t.empty() || t.back() != ']') return std::nullopt;
    const auto open = t.rfind('[');
    if (open == std::string_view::npos || open == 0) return std::nullopt;
    const std::string_view inside = t.substr(open + 1, t.size() - open - 2);
    ArraySplit s{t.substr(0, open), std::nullopt};
    if (!inside.empty()) {
        auto n = SmallNumber(inside, 1, MAX_FIXED_ARRAY_LENGTH);
        if (!n) return std::nullopt;
        s.length = *n;
    }
    return s;
}

// The base type once every array suffix is removed, or an error for a malformed suffix.
Result<std::string_view> BaseType(std::string_view t) {
    while (!t.empty() && t.back() == ']') {
        auto split = SplitArray(t);
        if (!split) return Bad("malformed array type " + Quote(t));
        t = split->element;
    }
    return t;
}

// Type graph --------------------------------------------------------------------------------

Result<TypedDataTypes> ReadTypes(const Json& types) {
    if (!types.IsObject()) return Bad("\"types\" must be an object");
    if (types.MemberCount() > EIP712_MAX_STRUCT_TYPES) {
        return Bad("more than " + std::to_string(EIP712_MAX_STRUCT_TYPES) + " struct types");
    }
    TypedDataTypes out;
    for (const auto& m : types.GetObject()) {
        const std::string name(JsonView(m.name));
        if (!IsIdentifier(name) || ReservedName(name)) return Bad("invalid struct name " + Quote(name));
        if (!m.value.IsArray()) return Bad("fields of struct " + Quote(name) + " must be an array");
        if (m.value.Size() > EIP712_MAX_FIELDS_PER_STRUCT) return Bad("struct " + Quote(name) + " has too many fields");
        std::vector<TypedDataField> fields;
        std::set<std::string, std::less<>> field_names;
        for (const auto& f : m.value.GetArray()) {
            if (!f.IsObject() || f.MemberCount() != 2 || !f.HasMember("name") || !f.HasMember("type") ||
                !f["name"].IsString() || !f["type"].IsString()) {
                return Bad("each field of struct " + Quote(name) + " must be {\"name\": string, \"type\": string}");
            }
            TypedDataField field{std::string(JsonView(f["name"])), std::string(JsonView(f["type"]))};
            if (!IsIdentifier(field.name)) return Bad("invalid field name " + Quote(field.name) + " in " + Quote(name));
            if (!field_names.insert(field.name).second) {
                return Bad("field " + Quote(field.name) + " repeated in struct " + Quote(name));
            }
            fields.push_back(std::move(field));
        }
        out.emplace(name, std::move(fields));
    }
    return out;
}

// Every field type must resolve, and the struct graph must be acyclic (as ethers requires), so
// every later walk over it terminates.
Status CheckTypeGraph(const TypedDataTypes& types) {
    for (const auto& [name, fields] : types) {
        for (const auto& f : fields) {
            auto base = BaseType(f.type);
            if (!base) return base.error();
            if (ParseAtom(*base).kind == AtomKind::None && types.find(*base) == types.end()) {
                return Bad("unknown type " + Quote(f.type) + " for field " + Quote(f.name) + " of " + Quote(name));
            }
        }
    }
    // Iterative three-colour DFS: recursion depth would otherwise follow the type chain length.
    enum Colour { White, Grey, Black };
    std::map<std::string_view, Colour> colour;
    for (const auto& [name, fields] : types) colour[name] = White;
    for (const auto& [root, root_fields] : types) {
        if (colour[root] != White) continue;
        std::vector<std::pair<std::string_view, std::size_t>> stack{{root, 0}};
        colour[root] = Grey;
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            const auto& fields = types.find(node)->second;
            if (next == fields.size()) {
                colour[node] = Black;
                stack.pop_back();
                continue;
            }
            const std::string_view child = *BaseType(fields[next++].type);
            auto it = colour.find(child);
            if (it == colour.end()) continue;  // atomic
            if (it->second == Grey) return Bad("circular type reference through " + Quote(child));
            if (it->second == White) {
                it->second = Grey;
                stack.emplace_back(it->first, 0);
            }
        }
    }
    return Success();
}

// Structs reachable from `primary`, not including it, sorted by name (std::set order).
std::set<std::string_view> Dependencies(const TypedDataTypes& types, std::string_view primary) {
    std::set<std::string_view> seen;
    std::vector<std::string_view> todo{primary};
    while (!todo.empty()) {
        const std::string_view t = todo.back();
        todo.pop_back();
        for (const auto& f : types.find(t)->second) {
            const std::string_view base = *BaseType(f.type);
            auto it = types.find(base);
            if (it != types.end() && it->first != primary && seen.insert(it->first).second) todo.push_back(it->first);
        }
    }
    return seen;
}

std::string EncodeTypeUnchecked(const TypedDataTypes& types, std::string_view primary) {
    auto append = [&](std::string& out, std::string_view name) {
        out.append(name);
        out.push_back('(');
        bool first = true;
        for (const auto& f : types.find(name)->second) {
            if (!first) out.push_back(',');
            first = false;
            out.append(f.type).append(" ").append(f.name);
        }
        out.push_back(')');
    };
    std::string out;
    append(out, primary);
    for (std::string_view dep : Dependencies(types, primary)) append(out, dep);
    return out;
}

// Values ------------------------------------------------------------------------------------

using Word = Hash32;

// 32-byte big-endian unsigned magnitude; false on overflow above 2^256 - 1.
bool MulAdd(Word& w, unsigned mul, unsigned add) {
    unsigned carry = add;
    for (int i = 31; i >= 0; --i) {
        const unsigned v = w[i] * mul + carry;
        w[i] = static_cast<std::uint8_t>(v & 0xff);
        carry = v >> 8;
    }
    return carry == 0;
}

int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::size_t BitLength(const Word& w) {
    for (std::size_t i = 0; i < 32; ++i) {
        if (w[i] != 0) {
            std::size_t bits = 8;
            while (!(w[i] & (1u << (bits - 1)))) --bits;
            return (31 - i) * 8 + bits;
        }
    }
    return 0;
}

bool IsPowerOfTwo(const Word& w) {
    int bits = 0;
    for (std::uint8_t b : w) bits += __builtin_popcount(b);
    return bits == 1;
}

Result<Word> EncodeInteger(const Json& v, const Atom& atom, std::string_view type) {
    Word magnitude{};
    bool negative = false;
    if (v.IsUint64()) {
        std::uint64_t u = v.GetUint64();
        for (int i = 31; i >= 24; --i, u >>= 8) magnitude[i] = static_cast<std::uint8_t>(u & 0xff);
    } else if (v.IsInt64()) {
        negative = true;
        // Negate in unsigned arithmetic: INT64_MIN has no positive int64.
        std::uint64_t u = 0 - static_cast<std::uint64_t>(v.GetInt64());
        for (int i = 31; i >= 24; --i, u >>= 8) magnitude[i] = static_cast<std::uint8_t>(u & 0xff);
    } else if (v.IsString()) {
        std::string_view s = JsonView(v);
        if (!s.empty() && s[0] == '-') {
            negative = true;
            s.remove_prefix(1);
        }
        const bool hex = s.starts_with("0x");
        if (hex) s.remove_prefix(2);
        if (s.empty()) return Bad("empty number for " + Quote(type));
        for (char c : s) {
            const int d = hex ? HexDigit(c) : (c >= '0' && c <= '9' ? c - '0' : -1);
            if (d < 0) return Bad("invalid number " + Quote(JsonView(v)) + " for " + Quote(type));
            if (!MulAdd(magnitude, hex ? 16 : 10, static_cast<unsigned>(d))) {
                return Bad("number " + Quote(JsonView(v)) + " does not fit " + Quote(type));
            }
        }
    } else if (v.IsNumber()) {
        return Bad("number for " + Quote(type) +
                   " must be an integer within 64 bits; pass larger values as decimal or 0x strings");
    } else {
        return Bad("expected a number or numeric string for " + Quote(type));
    }
    const std::size_t bits = BitLength(magnitude);
    if (negative && bits == 0) negative = false;  // "-0"
    bool fits;
    if (atom.kind == AtomKind::Uint) {
        fits = !negative && bits <= atom.size;
    } else {
        fits = negative ? (bits < atom.size || (bits == atom.size && IsPowerOfTwo(magnitude)))
                        : bits < atom.size;
    }
    if (!fits) return Bad("value " + (v.IsString() ? Quote(JsonView(v)) : std::string("number")) + " is out of range for " + Quote(type));
    if (negative) {
        for (auto& b : magnitude) b = static_cast<std::uint8_t>(~b);
        MulAdd(magnitude, 1, 1);  // ~x + 1; wraps for x = 0, which cannot happen here
    }
    return magnitude;
}

Result<Word> EncodeAtom(const Json& v, const Atom& atom, std::string_view type) {
    Word w{};
    switch (atom.kind) {
        case AtomKind::Uint:
        case AtomKind::Int:
            return EncodeInteger(v, atom, type);
        case AtomKind::Bool:
            if (!v.IsBool()) return Bad("expected true or false for bool");
            w[31] = v.GetBool() ? 1 : 0;
            return w;
        case AtomKind::Address: {
            if (!v.IsString()) return Bad("expected an address string");
            auto a = ParseAddress(JsonView(v));
            if (!a) return Bad("invalid address " + Quote(JsonView(v)) + ": " + a.error().message);
            std::copy(a->begin(), a->end(), w.begin() + 12);
            return w;
        }
        case AtomKind::FixedBytes: {
            if (!v.IsString()) return Bad("expected a 0x hex string for " + Quote(type));
            auto b = HexDecodeExact(JsonView(v), atom.size, HexPrefix::Required);
            if (!b) return Bad("expected 0x + " + std::to_string(atom.size * 2) + " hex characters for " + Quote(type));
            std::copy(b->begin(), b->end(), w.begin());
            return w;
        }
        case AtomKind::Bytes: {
            if (!v.IsString()) return Bad("expected a 0x hex string for bytes");
            auto b = HexDecode(JsonView(v), HexPrefix::Required);
            if (!b) return Bad("invalid hex " + Quote(JsonView(v)) + " for bytes");
            return Keccak256Hash(*b);
        }
        case AtomKind::String:
            if (!v.IsString()) return Bad("expected a string");
            return Keccak256Hash(JsonView(v));
        case AtomKind::None:
            break;
    }
    return Bad("unknown type " + Quote(type));
}

// Encodes values against a checked type graph, caching type hashes.
class Encoder {
public:
    explicit Encoder(const TypedDataTypes& types) : m_types(types) {}

    Result<Hash32> HashStruct(std::string_view name, const Json& v) {
        auto it = m_types.find(name);
        if (it == m_types.end()) return Bad("unknown struct " + Quote(name));
        if (!v.IsObject()) return Bad("value of struct " + Quote(name) + " must be an object");
        const auto& fields = it->second;
        for (const auto& m : v.GetObject()) {
            const std::string_view key = JsonView(m.name);
            if (std::none_of(fields.begin(), fields.end(), [&](const TypedDataField& f) { return f.name == key; })) {
                return Bad("key " + Quote(key) + " is not a field of " + Quote(name));
            }
        }
        Keccak256 h;
        h.Update(TypeHash(it->first));
        for (const auto& f : fields) {
            auto m = v.FindMember(rapidjson::StringRef(f.name.data(), f.name.size()));
            if (m == v.MemberEnd()) return Bad("missing field " + Quote(f.name) + " of " + Quote(name));
            auto w = EncodeField(f.type, m->value);
            if (!w) return Bad(w.error().message + " (field " + Quote(f.name) + " of " + Quote(name) + ")");
            h.Update(*w);
        }
        return h.Final();
    }

private:
    const Hash32& TypeHash(const std::string& name) {
        auto it = m_type_hashes.find(name);
        if (it == m_type_hashes.end()) {
            it = m_type_hashes.emplace(name, Keccak256Hash(std::string_view(EncodeTypeUnchecked(m_types, name)))).first;
        }
        return it->second;
    }

    // Recursion follows the value's nesting, which ParseJson bounded.
    Result<Word> EncodeField(std::string_view type, const Json& v) {
        if (auto split = SplitArray(type)) {
            if (!v.IsArray()) return Bad("expected an array for " + Quote(type));
            if (split->length && v.Size() != *split->length) {
                return Bad("expected " + std::to_string(*split->length) + " elements for " + Quote(type));
            }
            Keccak256 h;
            for (const auto& e : v.GetArray()) {
                auto w = EncodeField(split->element, e);
                if (!w) return w.error();
                h.Update(*w);
            }
            return h.Final();
        }
        const Atom atom = ParseAtom(type);
        if (atom.kind != AtomKind::None) return EncodeAtom(v, atom, type);
        return HashStruct(type, v);
    }

    const TypedDataTypes& m_types;
    std::map<std::string, Hash32, std::less<>> m_type_hashes;
};

// ethers' canonical domain fields and their order.
constexpr std::pair<std::string_view, std::string_view> DOMAIN_FIELDS[] = {
    {"name", "string"}, {"version", "string"}, {"chainId", "uint256"},
    {"verifyingContract", "address"}, {"salt", "bytes32"},
};

}  // namespace

// TypedData -----------------------------------------------------------------------------------

Result<TypedData> TypedData::Parse(std::string_view json) {
    if (json.size() > EIP712_MAX_DOCUMENT_BYTES) return TooLarge();
    auto doc = ParseJson(json, "typed data");
    if (!doc) return doc.error();
    const Json& root = *doc;
    if (!root.IsObject()) return Bad("typed data must be a JSON object");
    for (const auto& m : root.GetObject()) {
        const std::string_view key = JsonView(m.name);
        if (key != "types" && key != "primaryType" && key != "domain" && key != "message") {
            return Bad("unexpected top-level key " + Quote(key));
        }
    }
    for (const char* key : {"types", "primaryType", "domain", "message"}) {
        if (!root.HasMember(key)) return Bad(std::string("missing \"") + key + "\"");
    }
    if (!root["primaryType"].IsString()) return Bad("\"primaryType\" must be a string");

    TypedData td;
    auto types = ReadTypes(root["types"]);
    if (!types) return types.error();
    td.m_types = std::move(*types);
    SIGIL_TRY_STATUS(CheckTypeGraph(td.m_types));
    if (td.m_types.find(DOMAIN_TYPE) == td.m_types.end()) return Bad("\"types\" must define EIP712Domain");
    td.m_primary_type = std::string(JsonView(root["primaryType"]));
    if (td.m_primary_type == DOMAIN_TYPE) return Bad("primaryType must not be EIP712Domain");
    if (td.m_types.find(td.m_primary_type) == td.m_types.end()) {
        return Bad("primaryType " + Quote(td.m_primary_type) + " is not defined in \"types\"");
    }

    Encoder enc(td.m_types);
    auto domain = enc.HashStruct(DOMAIN_TYPE, root["domain"]);
    if (!domain) return Bad("domain: " + domain.error().message);
    auto message = enc.HashStruct(td.m_primary_type, root["message"]);
    if (!message) return Bad("message: " + message.error().message);
    td.m_domain_separator = *domain;
    td.m_message_hash = *message;
    return td;
}

Result<TypedData> TypedData::FromParts(std::string_view domain_json, std::string_view types_json,
                                       std::string_view value_json) {
    if (domain_json.size() + types_json.size() + value_json.size() > EIP712_MAX_DOCUMENT_BYTES) return TooLarge();
    auto domain = ParseJson(domain_json, "domain");
    if (!domain) return domain.error();
    auto types_doc = ParseJson(types_json, "types");
    if (!types_doc) return types_doc.error();
    auto value = ParseJson(value_json, "value");
    if (!value) return value.error();

    // Derive EIP712Domain from the keys present, in ethers' order; null means absent.
    // Const views: clang warns about rapidjson's non-const iterator comparisons under C++20.
    const Json& domain_obj = *domain;
    auto& allocator = domain->GetAllocator();
    if (!domain_obj.IsObject()) return Bad("domain must be an object");
    std::vector<TypedDataField> domain_fields;
    for (const auto& m : domain_obj.GetObject()) {
        const std::string_view key = JsonView(m.name);
        if (std::none_of(std::begin(DOMAIN_FIELDS), std::end(DOMAIN_FIELDS),
                         [&](const auto& f) { return f.first == key; })) {
            return Bad("invalid domain key " + Quote(key) +
                       " (allowed: name, version, chainId, verifyingContract, salt)");
        }
    }
    rapidjson::Value domain_value(rapidjson::kObjectType);
    for (const auto& [name, type] : DOMAIN_FIELDS) {
        auto m = domain_obj.FindMember(rapidjson::StringRef(name.data(), name.size()));
        if (m == domain_obj.MemberEnd() || m->value.IsNull()) continue;
        domain_fields.push_back({std::string(name), std::string(type)});
        Json copy(m->value, allocator);
        domain_value.AddMember(rapidjson::StringRef(name.data(), name.size()), copy, allocator);
    }

    TypedData td;
    auto types = ReadTypes(*types_doc);
    if (!types) return types.error();
    td.m_types = std::move(*types);
    if (auto it = td.m_types.find(DOMAIN_TYPE); it != td.m_types.end()) {
        if (it->second != domain_fields) {
            return Bad("types.EIP712Domain does not match the domain's fields; omit it and it is derived");
        }
    }
    SIGIL_TRY_STATUS(CheckTypeGraph(td.m_types));

    // The primary type is the only struct that no other struct references.
    std::set<std::string_view> referenced;
    for (const auto& [name, fields] : td.m_types) {
        for (const auto& f : fields) referenced.insert(*BaseType(f.type));
    }
    std::vector<std::string_view> roots;
    for (const auto& [name, fields] : td.m_types) {
        if (name != DOMAIN_TYPE && referenced.count(name) == 0) roots.push_back(name);
    }
    if (roots.size() != 1) {
        return Bad(roots.empty() ? "types define no struct" : "ambiguous primary types or unused types");
    }
    td.m_primary_type = std::string(roots[0]);
    td.m_types[std::string(DOMAIN_TYPE)] = domain_fields;

    Encoder enc(td.m_types);
    auto separator = enc.HashStruct(DOMAIN_TYPE, domain_value);
    if (!separator) return Bad("domain: " + separator.error().message);
    auto message = enc.HashStruct(td.m_primary_type, *value);
    if (!message) return Bad("value: " + message.error().message);
    td.m_domain_separator = *separator;
    td.m_message_hash = *message;
    return td;
}

Result<std::string> TypedData::EncodeType(std::string_view type_name) const {
    if (m_types.find(type_name) == m_types.end()) return Bad("unknown struct " + Quote(type_name));
    return EncodeTypeUnchecked(m_types, type_name);
}

Result<Hash32> TypedData::TypeHash(std::string_view type_name) const {
    auto enc = EncodeType(type_name);
    if (!enc) return enc.error();
    return Keccak256Hash(std::string_view(*enc));
}

Result<Hash32> TypedData::HashStruct(std::string_view type_name, std::string_view value_json) const {
    if (value_json.size() > EIP712_MAX_DOCUMENT_BYTES) return TooLarge();
    auto value = ParseJson(value_json, "value");
    if (!value) return value.error();
    Encoder enc(m_types);
    return enc.HashStruct(type_name, *value);
}

Hash32 TypedData::Digest() const {
    Keccak256 h;
    const std::uint8_t prefix[2] = {0x19, 0x01};
    h.Update(prefix);
    h.Update(m_domain_separator);
    h.Update(m_message_hash);
    return h.Final();
}

Result<Hash32> HashTypedDataJson(std::string_view json) {
    auto td = TypedData::Parse(json);
    if (!td) return td.error();
    return td->Digest();
}

Result<Hash32> HashTypedDataJson(std::string_view domain_json, std::string_view types_json,
                                 std::string_view value_json) {
    auto td = TypedData::FromParts(domain_json, types_json, value_json);
    if (!td) return td.error();
    return td->Digest();
}

}  // namespace sigil::common
