// The EIP-712 envelope of the ChainSecured flows (DESIGN.md section 4), checked as pure code: typed
// data and signature in, the verified signer or the one error that refused them out.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::workers {

inline constexpr std::size_t MAX_TYPED_DATA_BYTES = 4096;   // serialized typed data (the spec's limit)
inline constexpr std::int64_t ISSUED_AT_WINDOW_SECONDS = 300;  // issuedAt tolerance, every flow
inline constexpr std::string_view CHAIN_SECURED_DOMAIN_NAME = "Sigil ChainSecured";
inline constexpr std::string_view CHAIN_SECURED_DOMAIN_VERSION = "1";

// One signature-authorized flow; each pins its own primaryType.
enum class SignatureFlow { CreateWallet, ConvertAccount, AddUsageApiKey, BillingAuth };

// "CreateWallet", "ConvertAccount", "AddUsageApiKey", "BillingAuth".
std::string_view PrimaryTypeOf(SignatureFlow flow);

struct TypedDataPolicy {
    SignatureFlow flow = SignatureFlow::CreateWallet;
    std::uint64_t chain_id = 0;   // the node's chain id
    std::int64_t now = 0;         // the worker's clock, unix seconds
    // When set (conversion: new_admin_wallet_address), the signer must also be this address.
    std::optional<common::Address20> expected_signer;
};

struct VerifiedTypedData {
    common::Address20 signer{};   // recovered, equal to message.address
    std::uint64_t issued_at = 0;
    common::Hash32 digest{};
};

// Checks, in this order, each failure its own error (kind InvalidInput = 400, Unauthenticated = 401):
//  1. typed_data_json longer than MAX_TYPED_DATA_BYTES:            400 "typed_data_too_large"
//  2. not a JSON object with string primaryType:                   400 "invalid_typed_data"
//  3. primaryType is not the flow's:                               400 "wrong_primary_type"
//  4. the document's keys, "types", or the key sets of "domain" and "message" differ from the
//     canonical ones in any way (a field added, removed, renamed, retyped or reordered; an extra
//     member anywhere):                                             400 "typed_data_schema_mismatch"
//  5. a value the types refuse (common::TypedData's rules):        400 "invalid_typed_data"
//  6. domain name or version not "Sigil ChainSecured" / "1":       400 "wrong_domain"
//  7. domain chainId is not policy.chain_id:                       400 "wrong_chain_id"
//  8. signature not 0x + 130 hex, or a bad v, high s, r/s range:   400 "invalid_signature"
//  9. issuedAt outside now +- ISSUED_AT_WINDOW_SECONDS:            401 "issued_at_out_of_window"
// 10. the digest does not recover to message.address:              401 "signature_mismatch"
// 11. the signer is not policy.expected_signer:                    401 "signer_mismatch"
// Only plain ECDSA recovery (the spec's rule 8): a contract wallet's (ERC-1271) signature fails at 8
// or 10. Never throws; never an Internal error for any input.
common::Result<VerifiedTypedData> VerifyTypedDataSignature(std::string_view typed_data_json,
                                                           std::string_view signature_hex,
                                                           const TypedDataPolicy& policy);

}  // namespace sigil::workers
