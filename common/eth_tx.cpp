#include "common/eth_tx.h"

#include <algorithm>

#include "common/keccak.h"
#include "common/rlp.h"

namespace sigil::common {
namespace {

RlpItem ToItem(const std::optional<Address20>& to) {
    if (!to) return RlpItem::String({});
    return RlpItem::String(*to);
}

RlpItem AccessListItem(const std::vector<AccessListEntry>& list) {
    std::vector<RlpItem> entries;
    entries.reserve(list.size());
    for (const auto& e : list) {
        std::vector<RlpItem> keys;
        keys.reserve(e.storage_keys.size());
        for (const auto& k : e.storage_keys) keys.push_back(RlpItem::String(k));
        entries.push_back(RlpItem::List({RlpItem::String(e.address), RlpItem::List(std::move(keys))}));
    }
    return RlpItem::List(std::move(entries));
}

std::vector<RlpItem> UnsignedFields(const Eip1559Tx& tx) {
    return {RlpItem::Uint(tx.chain_id),
            RlpItem::Uint(tx.nonce),
            RlpItem::Uint(tx.max_priority_fee_per_gas),
            RlpItem::Uint(tx.max_fee_per_gas),
            RlpItem::Uint(tx.gas_limit),
            ToItem(tx.to),
            RlpItem::Uint(tx.value),
            RlpItem::String(tx.data),
            AccessListItem(tx.access_list)};
}

Bytes Typed(const RlpItem& list) {
    Bytes out{EIP1559_TX_TYPE};
    const Bytes body = RlpEncode(list);
    out.insert(out.end(), body.begin(), body.end());
    return out;
}

bool AllZero(const Hash32& h) {
    return std::all_of(h.begin(), h.end(), [](std::uint8_t b) { return b == 0; });
}

Error Malformed(const std::string& why) {
    return MakeError(ErrorKind::InvalidInput, "tx_malformed", "EIP-1559 payload: " + why);
}

template <std::size_t N>
bool ToFixed(const RlpItem& item, std::array<std::uint8_t, N>& out) {
    if (item.is_list || item.bytes.size() != N) return false;
    std::copy(item.bytes.begin(), item.bytes.end(), out.begin());
    return true;
}

Result<std::vector<AccessListEntry>> ParseAccessList(const RlpItem& item) {
    if (!item.is_list) return Malformed("access list must be a list");
    std::vector<AccessListEntry> list;
    for (const auto& e : item.items) {
        if (!e.is_list || e.items.size() != 2 || !e.items[1].is_list) return Malformed("bad access list entry");
        AccessListEntry entry;
        if (!ToFixed(e.items[0], entry.address)) return Malformed("bad access list address");
        for (const auto& k : e.items[1].items) {
            Hash32 key{};
            if (!ToFixed(k, key)) return Malformed("bad storage key");
            entry.storage_keys.push_back(key);
        }
        list.push_back(std::move(entry));
    }
    return list;
}

}  // namespace

Bytes SigningPayload(const Eip1559Tx& tx) { return Typed(RlpItem::List(UnsignedFields(tx))); }

Hash32 SigningHash(const Eip1559Tx& tx) { return Keccak256Hash(SigningPayload(tx)); }

Result<Bytes> EncodeSigned(const Eip1559Tx& tx, std::uint8_t y_parity, const Hash32& r, const Hash32& s) {
    if (y_parity > 1 || AllZero(r) || AllZero(s)) {
        return MakeError(ErrorKind::InvalidInput, "tx_bad_signature", "y_parity must be 0 or 1 and r, s nonzero");
    }
    auto fields = UnsignedFields(tx);
    fields.push_back(RlpItem::Uint(y_parity));
    fields.push_back(RlpItem::Uint(Uint256::FromWord(r)));
    fields.push_back(RlpItem::Uint(Uint256::FromWord(s)));
    return Typed(RlpItem::List(std::move(fields)));
}

Hash32 TxHash(ByteView raw_signed) { return Keccak256Hash(raw_signed); }

Result<Eip1559Tx> DecodeSigningPayload(ByteView payload) {
    if (payload.empty() || payload[0] != EIP1559_TX_TYPE) return Malformed("type byte is not 0x02");
    auto decoded = RlpDecode(payload.subspan(1));
    if (!decoded) return Malformed(decoded.error().message);
    const RlpItem& list = *decoded;
    if (!list.is_list || list.items.size() != 9) return Malformed("expected a list of 9 fields");
    const auto& f = list.items;
    Eip1559Tx tx;
    auto chain_id = RlpToUint64(f[0]);
    auto nonce = RlpToUint64(f[1]);
    auto tip = RlpToUint256(f[2]);
    auto max_fee = RlpToUint256(f[3]);
    auto gas = RlpToUint64(f[4]);
    auto value = RlpToUint256(f[6]);
    if (!chain_id || !nonce || !tip || !max_fee || !gas || !value) return Malformed("bad integer field");
    tx.chain_id = *chain_id;
    tx.nonce = *nonce;
    tx.max_priority_fee_per_gas = *tip;
    tx.max_fee_per_gas = *max_fee;
    tx.gas_limit = *gas;
    tx.value = *value;
    if (f[5].is_list) return Malformed("`to` must be a string");
    if (!f[5].bytes.empty()) {
        Address20 to{};
        if (!ToFixed(f[5], to)) return Malformed("`to` must be empty or 20 bytes");
        tx.to = to;
    }
    if (f[7].is_list) return Malformed("`data` must be a string");
    tx.data = f[7].bytes;
    auto access = ParseAccessList(f[8]);
    if (!access) return access.error();
    tx.access_list = std::move(*access);
    return tx;
}

Hash32 LegacyEip155SigningHash(const LegacyTx& tx, std::uint64_t chain_id) {
    const RlpItem list = RlpItem::List({RlpItem::Uint(tx.nonce), RlpItem::Uint(tx.gas_price),
                                        RlpItem::Uint(tx.gas_limit), ToItem(tx.to), RlpItem::Uint(tx.value),
                                        RlpItem::String(tx.data), RlpItem::Uint(chain_id), RlpItem::Uint(0),
                                        RlpItem::Uint(0)});
    return Keccak256Hash(RlpEncode(list));
}

namespace {

std::vector<RlpItem> LegacyFields(const LegacyTx& tx) {
    return {RlpItem::Uint(tx.nonce), RlpItem::Uint(tx.gas_price), RlpItem::Uint(tx.gas_limit),
            ToItem(tx.to),           RlpItem::Uint(tx.value),     RlpItem::String(tx.data)};
}

Bytes TypedPayload(std::uint8_t type, const std::vector<RlpItem>& fields) {
    Bytes out{type};
    const Bytes body = RlpEncode(RlpItem::List(fields));
    out.insert(out.end(), body.begin(), body.end());
    return out;
}

Error BadSignature() {
    return MakeError(ErrorKind::InvalidInput, "tx_bad_signature", "y_parity must be 0 or 1 and r, s nonzero");
}

std::vector<RlpItem> Eip2930Fields(const LegacyTx& tx, std::uint64_t chain_id) {
    std::vector<RlpItem> fields = LegacyFields(tx);
    fields.insert(fields.begin(), RlpItem::Uint(chain_id));
    fields.push_back(RlpItem::List({}));
    return fields;
}

}  // namespace

Hash32 LegacySigningHash(const LegacyTx& tx, std::uint64_t chain_id) {
    if (chain_id != 0) return LegacyEip155SigningHash(tx, chain_id);
    return Keccak256Hash(RlpEncode(RlpItem::List(LegacyFields(tx))));
}

Result<Bytes> EncodeSignedLegacy(const LegacyTx& tx, std::uint64_t chain_id, std::uint8_t y_parity, const Hash32& r,
                                 const Hash32& s) {
    if (y_parity > 1 || AllZero(r) || AllZero(s)) return BadSignature();
    // chain_id * 2 + 35 + y fits easily in 256 bits for any 64-bit chain id.
    const Uint256 v = chain_id != 0 ? *Uint256::FromUint64(chain_id)
                                           .CheckedMul(2)
                                           ->CheckedAdd(Uint256::FromUint64(35u + y_parity))
                                    : Uint256::FromUint64(27u + y_parity);
    std::vector<RlpItem> fields = LegacyFields(tx);
    fields.push_back(RlpItem::Uint(v));
    fields.push_back(RlpItem::Uint(Uint256::FromWord(r)));
    fields.push_back(RlpItem::Uint(Uint256::FromWord(s)));
    return RlpEncode(RlpItem::List(std::move(fields)));
}

Bytes Eip2930SigningPayload(const LegacyTx& tx, std::uint64_t chain_id) {
    return TypedPayload(EIP2930_TX_TYPE, Eip2930Fields(tx, chain_id));
}

Result<Bytes> EncodeSignedEip2930(const LegacyTx& tx, std::uint64_t chain_id, std::uint8_t y_parity, const Hash32& r,
                                  const Hash32& s) {
    if (y_parity > 1 || AllZero(r) || AllZero(s)) return BadSignature();
    std::vector<RlpItem> fields = Eip2930Fields(tx, chain_id);
    fields.push_back(RlpItem::Uint(y_parity));
    fields.push_back(RlpItem::Uint(Uint256::FromWord(r)));
    fields.push_back(RlpItem::Uint(Uint256::FromWord(s)));
    return TypedPayload(EIP2930_TX_TYPE, fields);
}

}  // namespace sigil::common
