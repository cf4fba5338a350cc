// EIP-712 typed structured data: strict parsing of eth_signTypedData_v4 documents and hashing.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::common {

// Hard limits on untrusted input, checked before any hashing work.
constexpr std::size_t EIP712_MAX_DOCUMENT_BYTES = 1 << 20;  // per call, all JSON inputs together
constexpr int EIP712_MAX_NESTING = 32;                      // JSON object/array depth of each input
constexpr std::size_t EIP712_MAX_STRUCT_TYPES = 128;        // keeps encodeType work bounded
constexpr std::size_t EIP712_MAX_FIELDS_PER_STRUCT = 256;

struct TypedDataField {
    std::string name;
    std::string type;  // e.g. "uint256", "Person", "bytes32[2][]"
    bool operator==(const TypedDataField&) const = default;
};

// Struct name -> fields in declaration order (the order matters for hashing).
using TypedDataTypes = std::map<std::string, std::vector<TypedDataField>, std::less<>>;

// A validated typed-data document. Construction checks the type graph (every referenced struct
// defined, no cycles, only known atomic types), and the domain and message values against it,
// and computes both hashes, so the accessors below cannot fail on a constructed object.
//
// Value rules (the same for domain, message and HashStruct values):
//   uintN / intN (N = 8..256, step 8): a JSON integer (no fraction, no exponent, within 64 bits),
//       or a string: decimal digits or "0x" + hex digits, optionally preceded by "-"; the value
//       must fit the type (intN as two's complement).
//   address: "0x" + 40 hex, mixed case only with a valid EIP-55 checksum.
//   bool: JSON true/false.    bytesN: "0x" + exactly 2N hex.    bytes: "0x" + even hex.
//   string: a JSON string (valid UTF-8, hashed as its UTF-8 bytes).
//   T[] / T[k]: a JSON array (exactly k elements for T[k]).
//   struct: a JSON object with every declared field and no other key.
// Objects with a repeated key are refused anywhere, since parsers disagree on which copy wins.
// Every error is code "invalid_typed_data", kind InvalidInput, except: kind MalformedJson for
// text that is not JSON, kind TooLarge for input above EIP712_MAX_DOCUMENT_BYTES.
class TypedData {
public:
    // A full eth_signTypedData_v4 document: an object with exactly the keys "types",
    // "primaryType", "domain" and "message". "types" must define "EIP712Domain" (the domain is
    // hashed as that struct); primaryType must name another struct defined in "types".
    static Result<TypedData> Parse(std::string_view json);

    // The ethers form signTypedData(domain, types, value), each argument a JSON text:
    //  * domain: an object whose keys are among name (string), version (string), chainId
    //    (uint256), verifyingContract (address), salt (bytes32); null members count as absent.
    //    The EIP712Domain type is derived from the keys present, in that order, as ethers does.
    //  * types: struct definitions; may contain "EIP712Domain" only if it equals the derived type.
    //  * value: the message. The primary type is the one struct no other struct references;
    //    zero or several candidates (e.g. an unused type) are refused, as ethers refuses them.
    static Result<TypedData> FromParts(std::string_view domain_json, std::string_view types_json,
                                       std::string_view value_json);

    const std::string& PrimaryType() const { return m_primary_type; }
    // All struct definitions, including EIP712Domain.
    const TypedDataTypes& Types() const { return m_types; }

    // encodeType(name): "Name(type1 field1,...)" followed by every struct it references
    // (directly or not), sorted by name. Errors: "invalid_typed_data" for an unknown struct.
    Result<std::string> EncodeType(std::string_view type_name) const;
    // keccak256(EncodeType(type_name)), with the same error.
    Result<Hash32> TypeHash(std::string_view type_name) const;

    // hashStruct(type_name, value) for any struct of this document and a JSON value (for
    // example a nested struct, or another message of the same schema). Same value rules/errors.
    Result<Hash32> HashStruct(std::string_view type_name, std::string_view value_json) const;

    // hashStruct("EIP712Domain", domain).
    const Hash32& DomainSeparator() const { return m_domain_separator; }
    // hashStruct(primaryType, message).
    const Hash32& MessageHash() const { return m_message_hash; }
    // keccak256(0x19 0x01 || DomainSeparator() || MessageHash()): the digest that gets signed.
    Hash32 Digest() const;

private:
    TypedData() = default;
    TypedDataTypes m_types;
    std::string m_primary_type;
    Hash32 m_domain_separator{};
    Hash32 m_message_hash{};
};

// TypedData::Parse(json).Digest(), with Parse's errors.
Result<Hash32> HashTypedDataJson(std::string_view json);

// TypedData::FromParts(domain_json, types_json, value_json).Digest(), with FromParts' errors.
Result<Hash32> HashTypedDataJson(std::string_view domain_json, std::string_view types_json,
                                 std::string_view value_json);

}  // namespace sigil::common
