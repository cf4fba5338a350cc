#include "common/abi.h"

#include <algorithm>

#include "common/keccak.h"

namespace sigil::common {
namespace {

constexpr std::size_t WORD = 32;

Error BadType(const std::string& why) { return MakeError(ErrorKind::InvalidInput, "abi_bad_type", why); }
Error Mismatch(const std::string& why) { return MakeError(ErrorKind::InvalidInput, "abi_value_mismatch", why); }
Error Malformed(const std::string& why) { return MakeError(ErrorKind::InvalidInput, "abi_malformed", why); }

// ---------------------------------------------------------------------------------------------
// Type parsing: a recursive-descent parser over the type string, depth-limited.

class TypeParser {
public:
    explicit TypeParser(std::string_view text) : m_text(text) {}

    bool AtEnd() const { return m_pos == m_text.size(); }
    bool Peek(char c) const { return m_pos < m_text.size() && m_text[m_pos] == c; }
    void Skip() { ++m_pos; }

    Result<AbiType> ParseType(std::size_t depth) {
        if (depth > ABI_MAX_TYPE_DEPTH) return BadType("type nested too deeply");
        AbiType type;
        if (Peek('(')) {
            Skip();
            auto members = ParseList(depth + 1, ')');
            if (!members) return members.error();
            if (members->empty()) return BadType("empty tuple");
            type.kind = AbiKind::Tuple;
            type.size = 0;
            type.members = std::move(*members);
            auto checked = CheckStaticSize(type);
            if (!checked) return checked.error();
        } else {
            auto base = ParseBase();
            if (!base) return base.error();
            type = std::move(*base);
        }
        while (Peek('[')) {
            Skip();
            if (++depth > ABI_MAX_TYPE_DEPTH) return BadType("type nested too deeply");
            AbiType array;
            array.members.push_back(std::move(type));
            if (Peek(']')) {
                Skip();
                array.kind = AbiKind::Array;
                array.size = 0;
            } else {
                auto count = ParseCount();
                if (!count) return count.error();
                if (!Peek(']')) return BadType("expected ']' in array type");
                Skip();
                array.kind = AbiKind::FixedArray;
                array.size = *count;
                auto checked = CheckStaticSize(array);
                if (!checked) return checked.error();
            }
            type = std::move(array);
        }
        return type;
    }

    // Types separated by commas up to `close` (consumed), or to the end of input when close == 0.
    Result<std::vector<AbiType>> ParseList(std::size_t depth, char close) {
        std::vector<AbiType> list;
        if (close != 0 && Peek(close)) {
            Skip();
            return list;
        }
        if (close == 0 && AtEnd()) return list;
        for (;;) {
            auto t = ParseType(depth);
            if (!t) return t.error();
            list.push_back(std::move(*t));
            if (Peek(',')) {
                Skip();
                continue;
            }
            if (close == 0) {
                if (!AtEnd()) return BadType("unexpected character in type list");
                return list;
            }
            if (!Peek(close)) return BadType("expected ',' or ')' in tuple");
            Skip();
            return list;
        }
    }

private:
    // A head that would exceed the limit is refused here, so later size arithmetic cannot overflow.
    static Status CheckStaticSize(const AbiType& type) {
        std::size_t total = 0;
        if (type.kind == AbiKind::Tuple) {
            for (const auto& m : type.members) total += m.HeadSize();  // each member already <= limit
        } else {
            const std::size_t elem = type.members[0].HeadSize();
            if (type.size > ABI_MAX_STATIC_SIZE / elem) return BadType("fixed array too large");
            total = type.size * elem;
        }
        if (total > ABI_MAX_STATIC_SIZE) return BadType("type too large");
        return Success();
    }

    Result<std::size_t> ParseCount() {
        const std::size_t start = m_pos;
        std::size_t value = 0;
        while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9') {
            if (m_pos - start >= 7) return BadType("array length too large");
            value = value * 10 + static_cast<std::size_t>(m_text[m_pos] - '0');
            ++m_pos;
        }
        if (m_pos == start) return BadType("expected array length");
        if (m_text[start] == '0') return BadType("array length must be a positive number without leading zeros");
        return value;
    }

    // Optional decimal suffix of an elementary name ("256" in "uint256"); 0 when absent.
    static Result<std::size_t> Suffix(std::string_view digits) {
        if (digits.empty()) return std::size_t{0};
        if (digits.size() > 3 || digits[0] == '0') return BadType("bad size suffix");
        std::size_t v = 0;
        for (char c : digits) {
            if (c < '0' || c > '9') return BadType("bad size suffix");
            v = v * 10 + static_cast<std::size_t>(c - '0');
        }
        return v;
    }

    Result<AbiType> ParseBase() {
        const std::size_t start = m_pos;
        while (m_pos < m_text.size() &&
               ((m_text[m_pos] >= 'a' && m_text[m_pos] <= 'z') || (m_text[m_pos] >= '0' && m_text[m_pos] <= '9'))) {
            ++m_pos;
        }
        const std::string_view name = m_text.substr(start, m_pos - start);
        if (name.empty()) return BadType("expected a type name");
        AbiType t;
        auto with_suffix = [&](std::string_view prefix, AbiKind kind) -> Result<AbiType> {
            auto n = Suffix(name.substr(prefix.size()));
            if (!n) return n.error();
            t.kind = kind;
            if (kind == AbiKind::FixedBytes) {
                if (*n < 1 || *n > 32) return BadType("bytesN needs 1 <= N <= 32");
                t.size = *n;
            } else {
                t.size = *n == 0 ? 256 : *n;
                if (t.size % 8 != 0 || t.size > 256) return BadType("integer width must be 8..256 in steps of 8");
            }
            return t;
        };
        if (name == "address") { t.kind = AbiKind::Address; t.size = 0; return t; }
        if (name == "bool") { t.kind = AbiKind::Bool; t.size = 0; return t; }
        if (name == "string") { t.kind = AbiKind::String; t.size = 0; return t; }
        if (name == "bytes") { t.kind = AbiKind::DynamicBytes; t.size = 0; return t; }
        if (name.starts_with("bytes")) return with_suffix("bytes", AbiKind::FixedBytes);
        if (name.starts_with("uint")) return with_suffix("uint", AbiKind::Uint);
        if (name.starts_with("int")) return with_suffix("int", AbiKind::Int);
        return BadType("unknown type '" + std::string(name) + "'");
    }

    std::string_view m_text;
    std::size_t m_pos = 0;
};

// ---------------------------------------------------------------------------------------------
// Integer range helpers over 32-byte big-endian words.

bool Bit(const Hash32& w, std::size_t bit) { return (w[31 - bit / 8] >> (bit % 8)) & 1; }

// True when bits [bits-1, 255] all equal bit 255: the word is a valid intN in two's complement.
bool FitsSigned(const Hash32& w, std::size_t bits) {
    const bool sign = Bit(w, 255);
    for (std::size_t b = bits - 1; b < 256; ++b) {
        if (Bit(w, b) != sign) return false;
    }
    return true;
}

bool AllZero(ByteView b) {
    return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

// ---------------------------------------------------------------------------------------------
// Encoding.

Status CheckShape(const AbiType& type, const AbiValue& value) {
    if (type.kind != value.kind) return Mismatch("value kind does not match type " + type.Canonical());
    switch (type.kind) {
        case AbiKind::Uint:
            if (value.word.BitLength() > type.size) return Mismatch("value out of range for " + type.Canonical());
            break;
        case AbiKind::Int:
            if (!FitsSigned(value.word.Word(), type.size)) return Mismatch("value out of range for " + type.Canonical());
            break;
        case AbiKind::FixedBytes:
            if (value.bytes.size() != type.size) return Mismatch("wrong length for " + type.Canonical());
            break;
        case AbiKind::FixedArray:
            if (value.items.size() != type.size) return Mismatch("wrong element count for " + type.Canonical());
            break;
        case AbiKind::Tuple:
            if (value.items.size() != type.members.size()) return Mismatch("wrong member count for " + type.Canonical());
            break;
        default:
            break;
    }
    return Success();
}

void AppendWord(Bytes& out, const Hash32& w) { out.insert(out.end(), w.begin(), w.end()); }
void AppendUint(Bytes& out, std::size_t v) { AppendWord(out, Uint256::FromUint64(v).Word()); }
void AppendPadded(Bytes& out, ByteView b) {
    out.insert(out.end(), b.begin(), b.end());
    out.insert(out.end(), (WORD - b.size() % WORD) % WORD, 0);
}

Status EncodeValue(const AbiType& type, const AbiValue& value, Bytes& out);

// The head/tail layout shared by tuples and arrays; `type_of(i)` gives the i-th member's type.
template <typename TypeOf>
Status EncodeSequence(std::size_t count, TypeOf type_of, std::span<const AbiValue> values, Bytes& out) {
    std::size_t head_size = 0;
    for (std::size_t i = 0; i < count; ++i) head_size += type_of(i).HeadSize();
    Bytes head, tail;
    head.reserve(head_size);
    for (std::size_t i = 0; i < count; ++i) {
        const AbiType& t = type_of(i);
        if (t.IsDynamic()) {
            AppendUint(head, head_size + tail.size());
            SIGIL_TRY_STATUS(EncodeValue(t, values[i], tail));
        } else {
            SIGIL_TRY_STATUS(EncodeValue(t, values[i], head));
        }
    }
    out.insert(out.end(), head.begin(), head.end());
    out.insert(out.end(), tail.begin(), tail.end());
    return Success();
}

Status EncodeValue(const AbiType& type, const AbiValue& value, Bytes& out) {
    SIGIL_TRY_STATUS(CheckShape(type, value));
    switch (type.kind) {
        case AbiKind::Uint:
        case AbiKind::Int:
            AppendWord(out, value.word.Word());
            return Success();
        case AbiKind::Address:
            out.insert(out.end(), WORD - value.address.size(), 0);
            out.insert(out.end(), value.address.begin(), value.address.end());
            return Success();
        case AbiKind::Bool:
            AppendUint(out, value.boolean ? 1 : 0);
            return Success();
        case AbiKind::FixedBytes:
            AppendPadded(out, value.bytes);
            return Success();
        case AbiKind::DynamicBytes:
        case AbiKind::String:
            AppendUint(out, value.bytes.size());
            AppendPadded(out, value.bytes);
            return Success();
        case AbiKind::Array:
            AppendUint(out, value.items.size());
            [[fallthrough]];
        case AbiKind::FixedArray: {
            const AbiType& elem = type.members[0];
            return EncodeSequence(value.items.size(), [&](std::size_t) -> const AbiType& { return elem; },
                                  value.items, out);
        }
        case AbiKind::Tuple:
            return EncodeSequence(type.members.size(), [&](std::size_t i) -> const AbiType& { return type.members[i]; },
                                  value.items, out);
    }
    return Mismatch("unknown type kind");
}

// ---------------------------------------------------------------------------------------------
// Decoding (canonical layout only; see abi.h).

class Decoder {
public:
    explicit Decoder(ByteView data) : m_data(data) {}

    template <typename TypeOf>
    Result<std::vector<AbiValue>> Sequence(std::size_t count, TypeOf type_of, std::size_t base, std::size_t& end) {
        // Every head is at least one word, so this bound is checked before reserving `count` values.
        if (base > m_data.size() || count > (m_data.size() - base) / WORD) return Malformed("sequence runs past the end");
        std::size_t head_size = 0;
        for (std::size_t i = 0; i < count; ++i) {
            head_size += type_of(i).HeadSize();
            if (head_size > m_data.size() - base) return Malformed("head runs past the end");
        }
        std::vector<AbiValue> values;
        values.reserve(count);
        std::size_t head = base;
        std::size_t tail = base + head_size;
        for (std::size_t i = 0; i < count; ++i) {
            const AbiType& t = type_of(i);
            std::size_t value_end = 0;
            if (t.IsDynamic()) {
                auto offset = ReadSize(head);
                if (!offset) return offset.error();
                if (*offset != tail - base) return Malformed("offset does not point at the next tail");
                auto v = Value(t, tail, value_end);
                if (!v) return v.error();
                values.push_back(std::move(*v));
                tail = value_end;
            } else {
                auto v = Value(t, head, value_end);
                if (!v) return v.error();
                values.push_back(std::move(*v));
            }
            head += t.HeadSize();
        }
        end = tail;
        return values;
    }

private:
    Result<Hash32> ReadWord(std::size_t pos) const {
        if (pos > m_data.size() || m_data.size() - pos < WORD) return Malformed("word runs past the end");
        Hash32 w{};
        std::copy_n(m_data.begin() + static_cast<std::ptrdiff_t>(pos), WORD, w.begin());
        return w;
    }

    // An offset or length: must fit comfortably (64 bits) and is then range-checked by the caller.
    Result<std::size_t> ReadSize(std::size_t pos) const {
        auto w = ReadWord(pos);
        if (!w) return w.error();
        auto v = Uint256::FromWord(*w).ToUint64();
        if (!v) return Malformed("offset or length too large");
        return static_cast<std::size_t>(*v);
    }

    Result<AbiValue> Value(const AbiType& type, std::size_t pos, std::size_t& end) {
        AbiValue value;
        value.kind = type.kind;
        switch (type.kind) {
            case AbiKind::Uint:
            case AbiKind::Int:
            case AbiKind::Address:
            case AbiKind::Bool:
            case AbiKind::FixedBytes: {
                auto w = ReadWord(pos);
                if (!w) return w.error();
                SIGIL_TRY_STATUS(Elementary(type, *w, value));
                end = pos + WORD;
                return value;
            }
            case AbiKind::DynamicBytes:
            case AbiKind::String: {
                auto len = ReadSize(pos);
                if (!len) return len.error();
                const std::size_t start = pos + WORD;
                const std::size_t avail = m_data.size() - start;  // ReadSize proved start <= size
                if (*len > avail) return Malformed("byte string runs past the end");
                const std::size_t padded = *len + (WORD - *len % WORD) % WORD;
                if (padded > avail) return Malformed("byte string padding runs past the end");
                const ByteView content = m_data.subspan(start, *len);
                if (!AllZero(m_data.subspan(start + *len, padded - *len))) return Malformed("nonzero padding");
                value.bytes.assign(content.begin(), content.end());
                end = start + padded;
                return value;
            }
            case AbiKind::Array: {
                auto count = ReadSize(pos);
                if (!count) return count.error();
                const AbiType& elem = type.members[0];
                auto items = Sequence(*count, [&](std::size_t) -> const AbiType& { return elem; }, pos + WORD, end);
                if (!items) return items.error();
                value.items = std::move(*items);
                return value;
            }
            case AbiKind::FixedArray: {
                const AbiType& elem = type.members[0];
                auto items = Sequence(type.size, [&](std::size_t) -> const AbiType& { return elem; }, pos, end);
                if (!items) return items.error();
                value.items = std::move(*items);
                return value;
            }
            case AbiKind::Tuple: {
                auto items = Sequence(type.members.size(),
                                      [&](std::size_t i) -> const AbiType& { return type.members[i]; }, pos, end);
                if (!items) return items.error();
                value.items = std::move(*items);
                return value;
            }
        }
        return Malformed("unknown type kind");
    }

    static Status Elementary(const AbiType& type, const Hash32& w, AbiValue& value) {
        const ByteView word(w);
        switch (type.kind) {
            case AbiKind::Uint:
                value.word = Uint256::FromWord(w);
                if (value.word.BitLength() > type.size) return Malformed("dirty high bits in " + type.Canonical());
                return Success();
            case AbiKind::Int:
                if (!FitsSigned(w, type.size)) return Malformed("bad sign extension in " + type.Canonical());
                value.word = Uint256::FromWord(w);
                return Success();
            case AbiKind::Address:
                if (!AllZero(word.first(12))) return Malformed("dirty high bytes in address");
                std::copy_n(w.begin() + 12, 20, value.address.begin());
                return Success();
            case AbiKind::Bool:
                if (!AllZero(word.first(31)) || w[31] > 1) return Malformed("bool must be 0 or 1");
                value.boolean = w[31] == 1;
                return Success();
            case AbiKind::FixedBytes:
                if (!AllZero(word.subspan(type.size))) return Malformed("dirty low bytes in " + type.Canonical());
                value.bytes.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(type.size));
                return Success();
            default:
                return Malformed("not an elementary type");
        }
    }

    ByteView m_data;
};

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

constexpr Selector ERROR_STRING_SELECTOR{0x08, 0xc3, 0x79, 0xa0};
constexpr Selector PANIC_SELECTOR{0x4e, 0x48, 0x7b, 0x71};

}  // namespace

// ---------------------------------------------------------------------------------------------

bool AbiType::IsDynamic() const {
    switch (kind) {
        case AbiKind::DynamicBytes:
        case AbiKind::String:
        case AbiKind::Array:
            return true;
        case AbiKind::FixedArray:
            return members[0].IsDynamic();
        case AbiKind::Tuple:
            return std::any_of(members.begin(), members.end(), [](const AbiType& m) { return m.IsDynamic(); });
        default:
            return false;
    }
}

std::size_t AbiType::HeadSize() const {
    if (IsDynamic()) return WORD;
    if (kind == AbiKind::FixedArray) return size * members[0].HeadSize();
    if (kind == AbiKind::Tuple) {
        std::size_t total = 0;
        for (const auto& m : members) total += m.HeadSize();
        return total;
    }
    return WORD;
}

std::string AbiType::Canonical() const {
    switch (kind) {
        case AbiKind::Uint: return "uint" + std::to_string(size);
        case AbiKind::Int: return "int" + std::to_string(size);
        case AbiKind::Address: return "address";
        case AbiKind::Bool: return "bool";
        case AbiKind::FixedBytes: return "bytes" + std::to_string(size);
        case AbiKind::DynamicBytes: return "bytes";
        case AbiKind::String: return "string";
        case AbiKind::Array: return members[0].Canonical() + "[]";
        case AbiKind::FixedArray: return members[0].Canonical() + "[" + std::to_string(size) + "]";
        case AbiKind::Tuple: {
            std::string s = "(";
            for (std::size_t i = 0; i < members.size(); ++i) {
                if (i > 0) s += ",";
                s += members[i].Canonical();
            }
            return s + ")";
        }
    }
    return "?";
}

Result<AbiType> ParseAbiType(std::string_view text) {
    if (text.size() > ABI_MAX_TYPE_STRING) return BadType("type string too long");
    TypeParser parser(text);
    auto t = parser.ParseType(0);
    if (!t) return t.error();
    if (!parser.AtEnd()) return BadType("unexpected characters after type");
    return t;
}

Result<std::vector<AbiType>> ParseAbiTypeList(std::string_view text) {
    if (text.size() > ABI_MAX_TYPE_STRING) return BadType("type string too long");
    TypeParser parser(text);
    return parser.ParseList(0, 0);
}

AbiValue AbiValue::Uint(const Uint256& v) {
    AbiValue a;
    a.kind = AbiKind::Uint;
    a.word = v;
    return a;
}
AbiValue AbiValue::Uint(std::uint64_t v) { return Uint(Uint256::FromUint64(v)); }
AbiValue AbiValue::Int(std::int64_t v) {
    Hash32 w{};
    w.fill(v < 0 ? 0xff : 0x00);
    const auto u = static_cast<std::uint64_t>(v);
    for (std::size_t i = 0; i < 8; ++i) w[31 - i] = static_cast<std::uint8_t>(u >> (8 * i));
    return IntWord(Uint256::FromWord(w));
}
AbiValue AbiValue::IntWord(const Uint256& twos_complement) {
    AbiValue a;
    a.kind = AbiKind::Int;
    a.word = twos_complement;
    return a;
}
AbiValue AbiValue::Address(const Address20& addr) {
    AbiValue a;
    a.kind = AbiKind::Address;
    a.address = addr;
    return a;
}
AbiValue AbiValue::Bool(bool b) {
    AbiValue a;
    a.kind = AbiKind::Bool;
    a.boolean = b;
    return a;
}
AbiValue AbiValue::FixedBytes(ByteView b) {
    AbiValue a;
    a.kind = AbiKind::FixedBytes;
    a.bytes.assign(b.begin(), b.end());
    return a;
}
AbiValue AbiValue::DynBytes(ByteView b) {
    AbiValue a;
    a.kind = AbiKind::DynamicBytes;
    a.bytes.assign(b.begin(), b.end());
    return a;
}
AbiValue AbiValue::String(std::string_view s) {
    AbiValue a;
    a.kind = AbiKind::String;
    a.bytes = ToBytes(s);
    return a;
}
AbiValue AbiValue::Array(std::vector<AbiValue> items) {
    AbiValue a;
    a.kind = AbiKind::Array;
    a.items = std::move(items);
    return a;
}
AbiValue AbiValue::FixedArray(std::vector<AbiValue> items) {
    AbiValue a;
    a.kind = AbiKind::FixedArray;
    a.items = std::move(items);
    return a;
}
AbiValue AbiValue::Tuple(std::vector<AbiValue> items) {
    AbiValue a;
    a.kind = AbiKind::Tuple;
    a.items = std::move(items);
    return a;
}

Result<Bytes> AbiEncode(std::span<const AbiType> types, std::span<const AbiValue> values) {
    if (types.size() != values.size()) return Mismatch("argument count does not match the types");
    Bytes out;
    auto status = EncodeSequence(types.size(), [&](std::size_t i) -> const AbiType& { return types[i]; }, values, out);
    if (!status) return status.error();
    return out;
}

Result<std::vector<AbiValue>> AbiDecode(std::span<const AbiType> types, ByteView data) {
    Decoder decoder(data);
    std::size_t end = 0;
    auto values = decoder.Sequence(types.size(), [&](std::size_t i) -> const AbiType& { return types[i]; }, 0, end);
    if (!values) return values.error();
    if (end != data.size()) return Malformed("bytes follow the encoding");
    return values;
}

Selector FunctionSelector(std::string_view canonical_signature) {
    const Hash32 h = Keccak256Hash(canonical_signature);
    return {h[0], h[1], h[2], h[3]};
}

Result<AbiSignature> ParseSignature(std::string_view signature) {
    const auto open = signature.find('(');
    if (open == std::string_view::npos || signature.empty() || signature.back() != ')') {
        return BadType("signature must look like name(types)");
    }
    const std::string_view name = signature.substr(0, open);
    if (name.empty() || !IsIdentStart(name[0]) || !std::all_of(name.begin(), name.end(), IsIdentChar)) {
        return BadType("bad function or error name");
    }
    auto inputs = ParseAbiTypeList(signature.substr(open + 1, signature.size() - open - 2));
    if (!inputs) return inputs.error();
    AbiSignature sig;
    sig.name = std::string(name);
    sig.inputs = std::move(*inputs);
    sig.canonical = sig.name + "(";
    for (std::size_t i = 0; i < sig.inputs.size(); ++i) {
        if (i > 0) sig.canonical += ",";
        sig.canonical += sig.inputs[i].Canonical();
    }
    sig.canonical += ")";
    sig.selector = FunctionSelector(sig.canonical);
    return sig;
}

Result<Bytes> EncodeCall(std::string_view signature, std::span<const AbiValue> args) {
    auto sig = ParseSignature(signature);
    if (!sig) return sig.error();
    auto body = AbiEncode(sig->inputs, args);
    if (!body) return body.error();
    Bytes out(sig->selector.begin(), sig->selector.end());
    out.insert(out.end(), body->begin(), body->end());
    return out;
}

std::string PanicMeaning(const Uint256& code) {
    const auto small = code.ToUint64();
    switch (small.value_or(~std::uint64_t{0})) {
        case 0x00: return "generic compiler panic";
        case 0x01: return "assertion failed";
        case 0x11: return "arithmetic overflow or underflow";
        case 0x12: return "division or modulo by zero";
        case 0x21: return "invalid enum value";
        case 0x22: return "incorrectly encoded storage byte array";
        case 0x31: return "pop() on an empty array";
        case 0x32: return "array index out of bounds";
        case 0x41: return "out of memory (allocation too large)";
        case 0x51: return "call to a zero-initialized internal function";
        default: return "unknown panic code";
    }
}

Result<RevertInfo> DecodeRevert(ByteView data, std::span<const AbiSignature> custom_errors) {
    RevertInfo info;
    info.data.assign(data.begin(), data.end());
    if (data.empty()) {
        info.kind = RevertKind::Empty;
        return info;
    }
    if (data.size() < 4) return Malformed("revert data shorter than a selector");
    std::copy_n(data.begin(), 4, info.selector.begin());
    const ByteView args = data.subspan(4);

    auto decode_as = [&](std::span<const AbiType> types, const std::string& name) -> Status {
        auto values = AbiDecode(types, args);
        if (!values) return Malformed("revert " + name + ": " + values.error().message);
        info.args = std::move(*values);
        info.name = name;
        return Success();
    };

    if (info.selector == ERROR_STRING_SELECTOR) {
        const AbiType t{AbiKind::String, 0, {}};
        SIGIL_TRY_STATUS(decode_as({&t, 1}, "Error"));
        info.kind = RevertKind::ErrorString;
        info.message = info.args[0].AsString();
        return info;
    }
    if (info.selector == PANIC_SELECTOR) {
        const AbiType t{AbiKind::Uint, 256, {}};
        SIGIL_TRY_STATUS(decode_as({&t, 1}, "Panic"));
        info.kind = RevertKind::Panic;
        info.panic_code = info.args[0].word;
        info.message = PanicMeaning(info.panic_code);
        return info;
    }
    for (const auto& err : custom_errors) {
        if (err.selector != info.selector) continue;
        SIGIL_TRY_STATUS(decode_as(err.inputs, err.name));
        info.kind = RevertKind::Custom;
        return info;
    }
    info.kind = RevertKind::Unknown;
    return info;
}

}  // namespace sigil::common
