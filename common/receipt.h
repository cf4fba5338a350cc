// Run receipts (docs/receipts.md): the EIP-712 typed structure the deployment's receipt key signs
// over one run. One definition shared by keyd (which computes the digest itself from the fields,
// so no caller can have the receipt key sign a digest of its choosing) and the worker (which
// answers the same structure to the caller).
#pragma once

#include <cstdint>
#include <string>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::common {

// The domain: {name: RECEIPT_DOMAIN_NAME, version: RECEIPT_DOMAIN_VERSION, chainId,
// verifyingContract}. chainId and verifyingContract are the deployment's chain and AccountConfig
// contract, the frame in which the key hash and the PKP mean something; keyd takes them from its
// own command line, never from the request.
constexpr std::string_view RECEIPT_DOMAIN_NAME = "Sigil Receipt";
constexpr std::string_view RECEIPT_DOMAIN_VERSION = "1";
constexpr std::string_view RECEIPT_PRIMARY_TYPE = "Receipt";

// Bounds on the text fields (checked by ValidateReceiptFields).
constexpr std::size_t RECEIPT_MAX_CID = 128;         // [A-Za-z0-9]
constexpr std::size_t RECEIPT_MAX_REQUEST_ID = 128;  // printable ASCII without space
constexpr std::size_t RECEIPT_MAX_ENDING = 64;       // [a-z0-9_]

struct ReceiptDomain {
    std::uint64_t chain_id = 0;
    Address20 verifying_contract{};
};

// What one receipt binds (docs/receipts.md has the meaning of each field).
struct ReceiptFields {
    std::string cid;            // the CIDv0 of the code that ran
    Hash32 params_hash{};       // sha256 of js_params as the run received them (compact JSON)
    Hash32 response_hash{};     // sha256 of the `response` member's bytes exactly as answered
    Address20 pkp{};            // the run's pkp_id, zero when none
    Hash32 api_key_hash{};      // keccak256 of the caller's API key
    std::string request_id;     // the request's id (X-Request-Id)
    std::uint64_t issued_at = 0;  // unix seconds when the receipt was signed
    Address20 app_id{};         // the deployment's TEE app id, zero without a TEE
    std::string ending;         // "completed", or the run's error code (script_error, time_limit, ...)
};

// The "types" member: {"Receipt": [...]} (EIP712Domain is implied by the domain, as ethers does).
const std::string& ReceiptTypesJson();
std::string ReceiptDomainJson(const ReceiptDomain& domain);
std::string ReceiptMessageJson(const ReceiptFields& fields);

// Errors: InvalidInput "invalid_receipt" naming the field out of bounds.
Status ValidateReceiptFields(const ReceiptFields& fields);

// The EIP-712 digest keccak256(0x1901 || domainSeparator || hashStruct(Receipt)), the same digest
// ethers' TypedDataEncoder.hash(domain, types, message) gives. Errors: those of
// ValidateReceiptFields, InvalidInput "invalid_receipt" for a domain with chain id 0.
Result<Hash32> ReceiptDigest(const ReceiptDomain& domain, const ReceiptFields& fields);

}  // namespace sigil::common
