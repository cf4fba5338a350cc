#include "workers/api/receipt.h"

#include <ctime>

#include <rapidjson/document.h>

#include "common/hex.h"
#include "common/json.h"
#include "common/receipt.h"
#include "common/secp256k1.h"
#include "common/sha256.h"
#include "evidence/agent/agent_client.h"
#include "keyd/receipt_protocol.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

// Per worker process (single-threaded): the settings, and what never changes once learned.
struct ReceiptState {
    ReceiptSettings settings;
    std::optional<common::Address20> app_id;
    std::optional<common::Address20> signer;
};

ReceiptState& State() {
    static ReceiptState state;
    return state;
}

common::Error Unavailable(const std::string& why) {
    return MakeError(ErrorKind::Unavailable, "receipt_unavailable", "cannot sign a receipt: " + why);
}

// The app id from the agent's Info ({"app_id": "<40 hex>"}); zero without an agent.
common::Result<common::Address20> AskAppId(const ReceiptSettings& settings) {
    if (settings.agent_socket.empty()) return common::Address20{};
    evidence::AgentClient agent({settings.agent_socket, settings.timeout_ms});
    auto info = agent.Info();
    if (!info.ok()) return Unavailable("the TEE agent: " + info.error().message);
    rapidjson::Document doc;
    doc.Parse(info->data(), info->size());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("app_id") || !doc["app_id"].IsString()) {
        return Unavailable("the TEE agent's Info has no app_id");
    }
    std::string text(common::JsonView(doc["app_id"]));
    if (text.rfind("0x", 0) != 0) text = "0x" + text;
    auto address = common::ParseAddress(text, /*require_checksum_if_mixed_case=*/false);
    if (!address.ok()) return Unavailable("the TEE agent's app_id is not 20 bytes of hex");
    return *address;
}

std::string ErrorMembers(const common::Error& e) {
    return ",\"receipt_error\":{\"code\":" + common::JsonQuote(e.code) + ",\"message\":" + common::JsonQuote(e.message) +
           "}";
}

}  // namespace

void ConfigureReceipts(ReceiptSettings settings) { State().settings = std::move(settings); }

common::Status PrepareReceipt(Service& service) {
    ReceiptState& state = State();
    if (service.Keyd() == nullptr) return Unavailable("no keyd is configured");
    if (!state.signer) {
        auto key = service.Keyd()->GetReceiptPublic();
        if (!key.ok()) return Unavailable("keyd: " + key.error().message);
        state.signer = key->address;
    }
    if (!state.app_id) {
        SIGIL_TRY(app_id, AskAppId(state.settings));
        state.app_id = *app_id;
    }
    return common::Success();
}

std::string ReceiptMembers(Service& service, const Caller& caller, const std::string& request_id,
                           const ActionRequest& request, const ActionResult& result) {
    ReceiptState& state = State();
    if (auto ready = PrepareReceipt(service); !ready.ok()) return ErrorMembers(ready.error());
    keyd::ReceiptSignRequest sign;
    common::ReceiptFields& f = sign.fields;
    f.cid = result.cid;
    f.params_hash = common::Sha256Hash(request.params_json);
    f.response_hash = common::Sha256Hash(result.ResponseMember());
    if (request.pkp) f.pkp = *request.pkp;
    f.api_key_hash = caller.key_hash.Word();
    f.request_id = request_id;
    f.issued_at = static_cast<std::uint64_t>(std::time(nullptr));
    f.app_id = *state.app_id;
    f.ending = result.outcome.end == RunEnd::Completed ? "completed" : result.ErrorCode();
    sign.api_key = common::SecretBytes(service.Credential().api_key.view());
    auto signature = service.Keyd()->SignReceipt(sign);
    if (!signature.ok()) return ErrorMembers(signature.error());
    // keyd hashes the key it was sent; a mismatch would be a receipt for another key than the caller's.
    if (signature->api_key_hash != f.api_key_hash) {
        return ErrorMembers(MakeError(ErrorKind::Internal, "receipt_key_mismatch", "keyd bound another key hash"));
    }
    const common::ReceiptDomain domain{service.ChainId(), service.ContractAddress()};
    return ",\"receipt\":{\"domain\":" + common::ReceiptDomainJson(domain) + ",\"types\":" + common::ReceiptTypesJson() +
           ",\"primaryType\":" + common::JsonQuote(common::RECEIPT_PRIMARY_TYPE) +
           ",\"message\":" + common::ReceiptMessageJson(f) +
           ",\"signature\":" + common::JsonQuote(common::HexEncode(signature->signature, true)) +
           ",\"signer\":" + common::JsonQuote(common::HexEncode(*state.signer, true)) + "}";
}

}  // namespace sigil::workers
