#include "common/receipt.h"

#include <algorithm>

#include "common/eip712.h"
#include "common/hex.h"
#include "common/json.h"

namespace sigil::common {
namespace {

Error Invalid(std::string_view what) {
    return MakeError(ErrorKind::InvalidInput, "invalid_receipt", "receipt field " + std::string(what));
}

bool AllOf(std::string_view s, std::size_t max, bool (*ok)(char)) {
    return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), ok);
}

bool CidChar(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool RequestIdChar(char c) { return c > 0x20 && c < 0x7f && c != '"' && c != '\\'; }
bool EndingChar(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_'; }

}  // namespace

const std::string& ReceiptTypesJson() {
    // Field order is part of the signature (encodeType); never reorder, add a version instead.
    static const std::string TYPES =
        R"({"Receipt":[{"name":"cid","type":"string"},{"name":"paramsHash","type":"bytes32"},)"
        R"({"name":"responseHash","type":"bytes32"},{"name":"pkp","type":"address"},)"
        R"({"name":"apiKeyHash","type":"bytes32"},{"name":"requestId","type":"string"},)"
        R"({"name":"issuedAt","type":"uint64"},{"name":"appId","type":"address"},)"
        R"({"name":"ending","type":"string"}]})";
    return TYPES;
}

std::string ReceiptDomainJson(const ReceiptDomain& domain) {
    return "{\"name\":" + JsonQuote(RECEIPT_DOMAIN_NAME) + ",\"version\":" + JsonQuote(RECEIPT_DOMAIN_VERSION) +
           ",\"chainId\":" + std::to_string(domain.chain_id) +
           ",\"verifyingContract\":" + JsonQuote(HexEncode(domain.verifying_contract, true)) + "}";
}

std::string ReceiptMessageJson(const ReceiptFields& f) {
    return "{\"cid\":" + JsonQuote(f.cid) + ",\"paramsHash\":" + JsonQuote(HexEncode(f.params_hash, true)) +
           ",\"responseHash\":" + JsonQuote(HexEncode(f.response_hash, true)) +
           ",\"pkp\":" + JsonQuote(HexEncode(f.pkp, true)) +
           ",\"apiKeyHash\":" + JsonQuote(HexEncode(f.api_key_hash, true)) +
           ",\"requestId\":" + JsonQuote(f.request_id) + ",\"issuedAt\":" + std::to_string(f.issued_at) +
           ",\"appId\":" + JsonQuote(HexEncode(f.app_id, true)) + ",\"ending\":" + JsonQuote(f.ending) + "}";
}

Status ValidateReceiptFields(const ReceiptFields& f) {
    if (!AllOf(f.cid, RECEIPT_MAX_CID, &CidChar)) return Invalid("cid: 1..128 characters of [A-Za-z0-9]");
    if (!AllOf(f.request_id, RECEIPT_MAX_REQUEST_ID, &RequestIdChar)) {
        return Invalid("requestId: 1..128 printable ASCII characters");
    }
    if (!AllOf(f.ending, RECEIPT_MAX_ENDING, &EndingChar)) return Invalid("ending: 1..64 characters of [a-z0-9_]");
    if (f.issued_at == 0) return Invalid("issuedAt: must be set");
    return Success();
}

Result<Hash32> ReceiptDigest(const ReceiptDomain& domain, const ReceiptFields& fields) {
    SIGIL_TRY_STATUS(ValidateReceiptFields(fields));
    if (domain.chain_id == 0) return Invalid("chainId: must be non-zero");
    return HashTypedDataJson(ReceiptDomainJson(domain), ReceiptTypesJson(), ReceiptMessageJson(fields));
}

}  // namespace sigil::common
