// Solidity contract ABI: type strings, sans-IO encode/strict decode, selectors, calls and revert data.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "common/uint256.h"

namespace sigil::common {

// All errors below are ErrorKind::InvalidInput with one of these codes:
//   "abi_bad_type"       a type or signature string that does not parse, or exceeds the limits below
//   "abi_value_mismatch" a value whose shape or range does not fit its type (Encode)
//   "abi_malformed"      encoded data that is short, non-canonical or inconsistent (Decode)

enum class AbiKind { Uint, Int, Address, Bool, FixedBytes, DynamicBytes, String, Array, FixedArray, Tuple };

// A parsed ABI type (DynamicBytes is `bytes`). `size` is bits for Uint/Int (8..256, step 8), bytes for FixedBytes (1..32), the
// element count for FixedArray (>= 1); `members` holds the element type (arrays) or the members (tuples).
struct AbiType {
    AbiKind kind = AbiKind::Uint;
    std::size_t size = 256;
    std::vector<AbiType> members;

    // bytes, string, T[], and any tuple or T[k] containing one of those.
    bool IsDynamic() const;
    // Bytes this type occupies in a head: 32 for dynamic types, the full inline size for static ones.
    std::size_t HeadSize() const;
    // Canonical spelling used in selectors: "uint256", "(address,bytes32)[]", ...
    std::string Canonical() const;

    friend bool operator==(const AbiType&, const AbiType&) = default;
};

// Parser limits: they bound recursion and the static size of a type, which is what makes Decode's
// up-front length checks overflow-free. Solidity code never comes near them.
inline constexpr std::size_t ABI_MAX_TYPE_STRING = 4096;
inline constexpr std::size_t ABI_MAX_TYPE_DEPTH = 16;
inline constexpr std::size_t ABI_MAX_STATIC_SIZE = 1 << 20;

// Parse one type: uint<N>, int<N>, uint/int (= 256), address, bool, bytes<N>, bytes, string,
// T[], T[k] (k >= 1), and tuples "(T1,...,Tn)" with n >= 1, nested. No spaces.
Result<AbiType> ParseAbiType(std::string_view text);
// Parse a comma-separated list of types, e.g. "address,uint256"; the empty string is the empty list.
Result<std::vector<AbiType>> ParseAbiTypeList(std::string_view text);

// A value tree mirroring AbiType. Integers are stored as 256-bit words: plain for Uint, two's
// complement for Int. FixedBytes/Bytes/String keep their bytes in `bytes` (String as UTF-8, not validated).
struct AbiValue {
    AbiKind kind = AbiKind::Uint;
    Uint256 word;
    Address20 address{};
    bool boolean = false;
    Bytes bytes;
    std::vector<AbiValue> items;  // arrays and tuples

    static AbiValue Uint(const Uint256& v);
    static AbiValue Uint(std::uint64_t v);
    static AbiValue Int(std::int64_t v);
    static AbiValue IntWord(const Uint256& twos_complement);
    static AbiValue Address(const Address20& a);
    static AbiValue Bool(bool b);
    static AbiValue FixedBytes(ByteView b);  // length must equal the type's N when encoding
    static AbiValue DynBytes(ByteView b);
    static AbiValue String(std::string_view s);
    static AbiValue Array(std::vector<AbiValue> items);       // for T[]
    static AbiValue FixedArray(std::vector<AbiValue> items);  // for T[k]
    static AbiValue Tuple(std::vector<AbiValue> items);

    std::string AsString() const { return std::string(bytes.begin(), bytes.end()); }

    friend bool operator==(const AbiValue&, const AbiValue&) = default;
};

// Encode `values` as the tuple of `types` (function arguments, return data, error arguments).
// Errors: "abi_value_mismatch" when counts, kinds, lengths or integer ranges disagree with the types.
Result<Bytes> AbiEncode(std::span<const AbiType> types, std::span<const AbiValue> values);

// Decode `data` as the tuple of `types`. Strict: accepts only the canonical layout Solidity produces:
// every offset must point exactly where the next tail begins (so offsets can neither overlap nor loop),
// every count and length is checked against the remaining bytes before anything is allocated, padding
// bytes must be zero (uintN/intN sign extension, address, bool, bytesN, bytes/string tails), bool is 0
// or 1, and no bytes may follow the encoding. Errors: "abi_malformed".
Result<std::vector<AbiValue>> AbiDecode(std::span<const AbiType> types, ByteView data);

using Selector = std::array<std::uint8_t, 4>;

// First 4 bytes of keccak256(signature). The signature is hashed as given, so pass the canonical
// form ("transfer(address,uint256)"); ParseSignature produces it from looser spellings ("uint").
Selector FunctionSelector(std::string_view canonical_signature);

// A function or error signature "name(T1,...,Tn)".
struct AbiSignature {
    std::string name;
    std::vector<AbiType> inputs;
    std::string canonical;  // "name(canonical types)"
    Selector selector{};
};
// Errors: "abi_bad_type" (name not [A-Za-z_$][A-Za-z0-9_$]*, missing parentheses, bad types).
Result<AbiSignature> ParseSignature(std::string_view signature);

// selector || AbiEncode(inputs, args). Errors: as ParseSignature and AbiEncode.
Result<Bytes> EncodeCall(std::string_view signature, std::span<const AbiValue> args);

// Revert data returned by eth_call / eth_estimateGas.
enum class RevertKind {
    Empty,        // no data: revert() / require(cond) without message, or out of gas
    ErrorString,  // Error(string): `message` is the reason
    Panic,        // Panic(uint256): `panic_code`, and `message` explains it
    Custom,       // a selector found in the caller's error table: `name`, `args`
    Unknown,      // a selector nobody declared: only `selector` and `data` are meaningful
};

struct RevertInfo {
    RevertKind kind = RevertKind::Empty;
    Selector selector{};
    std::string name;     // "Error", "Panic", or the custom error's name
    std::string message;  // Error(string) text, or the Panic meaning
    Uint256 panic_code;
    std::vector<AbiValue> args;
    Bytes data;  // the full revert data
};

// Meaning of a Solidity panic code (0x01 assert, 0x11 overflow, 0x12 division by zero, ...);
// "unknown panic code" otherwise.
std::string PanicMeaning(const Uint256& code);

// Classify revert data against `custom_errors` (parsed error signatures, e.g. "NotAuthorized(uint256)").
// Errors: "abi_malformed" when the data is 1..3 bytes long, or a known selector's arguments do not decode.
Result<RevertInfo> DecodeRevert(ByteView data, std::span<const AbiSignature> custom_errors);

}  // namespace sigil::common
