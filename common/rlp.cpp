#include "common/rlp.h"

namespace sigil::common {
namespace {

constexpr std::uint8_t STRING_SHORT = 0x80;
constexpr std::uint8_t STRING_LONG = 0xb7;
constexpr std::uint8_t LIST_SHORT = 0xc0;
constexpr std::uint8_t LIST_LONG = 0xf7;

Error Fail(const char* code, const char* message) { return MakeError(ErrorKind::InvalidInput, code, message); }

void AppendHeader(Bytes& out, std::uint8_t short_base, std::uint8_t long_base, std::size_t len) {
    if (len < 56) {
        out.push_back(static_cast<std::uint8_t>(short_base + len));
        return;
    }
    std::uint8_t len_be[8];
    std::size_t n = 0;
    for (std::size_t v = len; v != 0; v >>= 8) len_be[n++] = static_cast<std::uint8_t>(v & 0xff);
    out.push_back(static_cast<std::uint8_t>(long_base + n));
    while (n > 0) out.push_back(len_be[--n]);
}

void EncodeInto(Bytes& out, const RlpItem& item) {
    if (!item.is_list) {
        if (item.bytes.size() == 1 && item.bytes[0] < STRING_SHORT) {
            out.push_back(item.bytes[0]);
            return;
        }
        AppendHeader(out, STRING_SHORT, STRING_LONG, item.bytes.size());
        out.insert(out.end(), item.bytes.begin(), item.bytes.end());
        return;
    }
    Bytes payload;
    for (const auto& member : item.items) EncodeInto(payload, member);
    AppendHeader(out, LIST_SHORT, LIST_LONG, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
}

struct Header {
    bool is_list = false;
    std::size_t header_len = 0;
    std::size_t payload_len = 0;
};

// Parse the header at data[0..]; checks that the payload lies within `data` and is canonical.
Result<Header> ParseHeader(ByteView data) {
    if (data.empty()) return Fail("rlp_truncated", "RLP item expected but input ended");
    const std::uint8_t b = data[0];
    Header h;
    if (b < STRING_SHORT) {
        h.header_len = 0;
        h.payload_len = 1;
        return h;
    }
    h.is_list = b >= LIST_SHORT;
    const std::uint8_t short_base = h.is_list ? LIST_SHORT : STRING_SHORT;
    const std::uint8_t long_base = h.is_list ? LIST_LONG : STRING_LONG;
    if (b <= long_base) {
        h.header_len = 1;
        h.payload_len = b - short_base;
        if (!h.is_list && h.payload_len == 1) {
            if (data.size() < 2) return Fail("rlp_truncated", "RLP string runs past the end");
            if (data[1] < STRING_SHORT) return Fail("rlp_non_canonical", "single byte below 0x80 must encode itself");
        }
    } else {
        const std::size_t len_of_len = b - long_base;
        if (data.size() < 1 + len_of_len) return Fail("rlp_truncated", "RLP length runs past the end");
        if (data[1] == 0) return Fail("rlp_non_canonical", "RLP length has leading zero bytes");
        if (len_of_len > sizeof(std::size_t)) return Fail("rlp_length_overflow", "RLP length does not fit in 64 bits");
        std::size_t len = 0;
        for (std::size_t i = 0; i < len_of_len; ++i) len = (len << 8) | data[1 + i];
        if (len < 56) return Fail("rlp_non_canonical", "RLP long-form length below 56");
        h.header_len = 1 + len_of_len;
        h.payload_len = len;
    }
    // Compare without forming header_len + payload_len, which could overflow.
    if (h.payload_len > data.size() - h.header_len) return Fail("rlp_truncated", "RLP payload runs past the end");
    return h;
}

// Decode one item at the start of `data`; `consumed` receives its full encoded length.
Result<RlpItem> DecodeOne(ByteView data, std::size_t depth_left, std::size_t& consumed) {
    auto header = ParseHeader(data);
    if (!header) return header.error();
    const Header& h = *header;
    consumed = h.header_len + h.payload_len;
    const ByteView payload = data.subspan(h.header_len, h.payload_len);
    RlpItem item;
    item.is_list = h.is_list;
    if (!h.is_list) {
        item.bytes.assign(payload.begin(), payload.end());
        return item;
    }
    if (depth_left == 0) return Fail("rlp_too_deep", "RLP lists nested too deeply");
    std::size_t pos = 0;
    while (pos < payload.size()) {
        std::size_t used = 0;
        auto member = DecodeOne(payload.subspan(pos), depth_left - 1, used);
        if (!member) return member.error();
        item.items.push_back(std::move(*member));
        pos += used;
    }
    return item;
}

}  // namespace

RlpItem RlpItem::String(ByteView b) {
    RlpItem item;
    item.bytes.assign(b.begin(), b.end());
    return item;
}

RlpItem RlpItem::List(std::vector<RlpItem> members) {
    RlpItem item;
    item.is_list = true;
    item.items = std::move(members);
    return item;
}

RlpItem RlpItem::Uint(std::uint64_t v) { return Uint(Uint256::FromUint64(v)); }

RlpItem RlpItem::Uint(const Uint256& v) {
    RlpItem item;
    item.bytes = v.MinimalBytes();
    return item;
}

Bytes RlpEncode(const RlpItem& item) {
    Bytes out;
    EncodeInto(out, item);
    return out;
}

Bytes RlpEncodeString(ByteView b) { return RlpEncode(RlpItem::String(b)); }

Bytes RlpEncodeListPayload(ByteView concatenated_members) {
    Bytes out;
    AppendHeader(out, LIST_SHORT, LIST_LONG, concatenated_members.size());
    out.insert(out.end(), concatenated_members.begin(), concatenated_members.end());
    return out;
}

Result<RlpItem> RlpDecode(ByteView data, std::size_t max_depth) {
    std::size_t used = 0;
    auto item = DecodeOne(data, max_depth, used);
    if (!item) return item.error();
    if (used != data.size()) return Fail("rlp_trailing_bytes", "bytes follow the RLP item");
    return item;
}

Result<Uint256> RlpToUint256(const RlpItem& item) {
    if (item.is_list) return Fail("rlp_not_integer", "RLP integer expected, found a list");
    if (!item.bytes.empty() && item.bytes[0] == 0) return Fail("rlp_not_integer", "RLP integer has a leading zero");
    auto v = Uint256::FromBigEndian(item.bytes);
    if (!v) return Fail("rlp_not_integer", "RLP integer wider than 256 bits");
    return v;
}

Result<std::uint64_t> RlpToUint64(const RlpItem& item) {
    auto v = RlpToUint256(item);
    if (!v) return v.error();
    auto small = v->ToUint64();
    if (!small) return Fail("rlp_not_integer", "RLP integer wider than 64 bits");
    return *small;
}

}  // namespace sigil::common
