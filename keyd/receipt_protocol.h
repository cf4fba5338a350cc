// keyd's receipt messages (keyd/protocol.md, "Receipts"): the codec of SIGN_RECEIPT and
// GET_RECEIPT_PUBLIC, sans-IO like keyd/protocol.h. SIGN_RECEIPT carries the receipt's fields,
// never a digest: keyd builds the EIP-712 digest itself (common/receipt.h), so the receipt key
// signs receipts and nothing else.
#pragma once

#include <array>
#include <cstdint>

#include "common/bytes.h"
#include "common/receipt.h"
#include "common/result.h"
#include "common/secret.h"
#include "keyd/protocol.h"

namespace sigil::keyd {

// Type numbers kept apart from the core table's (0x01.., 0x80..) and the operational ones (STATS
// 0x20, 0xA0): receipts are 0x30.. and their reply 0xB0.
constexpr std::uint8_t IPC_SIGN_RECEIPT = 0x30;        // fields below          -> RECEIPT_SIGNATURE
constexpr std::uint8_t IPC_GET_RECEIPT_PUBLIC = 0x31;  // ()                    -> PUBLIC_KEY
constexpr std::uint8_t IPC_RECEIPT_SIGNATURE = 0xB0;   // (signature 65, api_key_hash 32)

// What the worker asks keyd to sign: every field of the receipt but the key hash, which keyd
// computes from the API key the request came with (as for SIGN_PAYER_TX: a worker signs only for
// keys it was shown).
struct ReceiptSignRequest {
    common::ReceiptFields fields;  // fields.api_key_hash is ignored on the wire
    SecretBytes api_key;           // 1..IPC_MAX_API_KEY bytes
};

struct ReceiptSignature {
    std::array<std::uint8_t, 65> signature{};  // r || s || v, v = 27/28 (as ethers signTypedData)
    Hash32 api_key_hash{};                     // what keyd bound: keccak256(api_key)
};

// Wire order: cid (1..128), params_hash (32), response_hash (32), pkp (20), api_key (1..256),
// request_id (1..128), issued_at (u64), app_id (20), ending (1..64).
// Errors: InvalidInput "invalid_receipt" (ValidateReceiptFields), "malformed_message" for an
// empty API key.
Result<SecretBuffer> EncodeSignReceiptRequest(const ReceiptSignRequest& request);
SecretBuffer EncodeGetReceiptPublicRequest();

// keyd side. Errors: InvalidInput "malformed_message" (a field missing, extra or of the wrong
// size, an empty key), "invalid_receipt" (a field out of bounds).
Result<ReceiptSignRequest> DecodeSignReceiptRequest(ByteView payload);
SecretBuffer EncodeReceiptSignatureReply(const ReceiptSignature& signature);

// Client side: a Failure reply becomes KeydFailureToError(...); anything else unexpected is
// Internal "keyd_protocol_error".
Result<ReceiptSignature> DecodeReceiptSignatureReply(ByteView payload);

}  // namespace sigil::keyd
