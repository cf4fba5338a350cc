// The signature-authorized ChainSecured endpoints (spec "ChainSecured endpoints", DESIGN.md section
// 4): create_wallet_with_signature, add_usage_api_key_with_signature, convert_to_chain_secured_account.
// Every check of the EIP-712 envelope and of the signer's account runs before keyd derives anything.
#include <ctime>
#include <string>

#include "common/base64.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/random.h"
#include "common/secret.h"
#include "workers/api/api.h"
#include "workers/api/json_input.h"
#include "workers/api/schemas.h"
#include "workers/api/typed_data_auth.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Uint256;


// A signature is 0x + 130 hex; anything far longer is refused here before it is copied around.
constexpr std::size_t MAX_SIGNATURE_CHARS = 256;

// The envelope of a body {typed_data, signature, ...}, verified for `flow`. typed_data is the
// eth_signTypedData_v4 document, as a JSON object or as the string holding it; an object is measured
// against the 4 KiB limit in its compact serialization (member order kept, so a reordered types list
// stays reordered).
Result<VerifiedTypedData> VerifyEnvelope(Service& service, const JsonBody& body, const rapidjson::Document& doc,
                                         SignatureFlow flow, std::optional<common::Address20> expected_signer) {
    const auto typed = doc.FindMember("typed_data");
    if (typed == doc.MemberEnd() || typed->value.IsNull()) {
        return MakeError(ErrorKind::InvalidInput, "missing_typed_data", "typed_data (the EIP-712 document) is required");
    }
    std::string typed_json;
    if (typed->value.IsObject()) {
        typed_json = common::JsonSerialize(typed->value);
    } else if (typed->value.IsString()) {
        typed_json.assign(typed->value.GetString(), typed->value.GetStringLength());
    } else {
        return MakeError(ErrorKind::InvalidInput, "invalid_typed_data",
                         "typed_data must be the EIP-712 document (an object, or a string holding it)");
    }
    if (!body.Has("signature")) {
        return MakeError(ErrorKind::InvalidInput, "missing_signature", "signature (0x + 130 hex) is required");
    }
    auto signature = body.String("signature", MAX_SIGNATURE_CHARS);
    if (!signature.ok()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_signature", "signature must be a string of 0x + 130 hex");
    }
    TypedDataPolicy policy;
    policy.flow = flow;
    policy.chain_id = service.ChainId();
    policy.now = static_cast<std::int64_t>(std::time(nullptr));
    policy.expected_signer = expected_signer;
    return VerifyTypedDataSignature(typed_json, *signature, policy);
}

// The account the verified signer administers. Errors: NotFound "unknown_account".
Result<Uint256> SignerAccount(Service& service, const common::Address20& signer) {
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(account, (*reader)->AccountOfAdmin(signer));
    if (account->IsZero()) {
        return MakeError(ErrorKind::NotFound, "unknown_account",
                         "the signer " + AddressHex(signer) + " administers no account");
    }
    return *account;
}

// A fresh path in keyd and the PKP address derived for (account, path): what the client registers.
struct MintedWallet {
    common::Address20 address{};
    Uint256 path;
};

Result<MintedWallet> MintWallet(Service& service, const Uint256& account) {
    KeydClient* keyd = service.Keyd();
    if (keyd == nullptr) {
        return MakeError(ErrorKind::Unavailable, "keyd_not_configured", "this instance has no key service");
    }
    SIGIL_TRY(path, keyd->MintPath());
    SIGIL_TRY(pub, keyd->GetPkpPublic(keyd::PkpRef{account.Word(), *path}));
    return MintedWallet{pub->address, Uint256::FromWord(*path)};
}

// ---- handlers ----

Result<HttpResponse> CreateWalletWithSignature(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(verified, VerifyEnvelope(service, *body, *ctx.json, SignatureFlow::CreateWallet, std::nullopt));
    SIGIL_TRY(account, SignerAccount(service, verified->signer));
    SIGIL_TRY(wallet, MintWallet(service, *account));
    return JsonResponse(200, "{\"wallet_address\":" + common::JsonQuote(AddressHex(wallet->address)) +
                                 ",\"derivation_path\":" + common::JsonQuote(WordHex(wallet->path)) + "}");
}

Result<HttpResponse> AddUsageApiKeyWithSignature(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(verified, VerifyEnvelope(service, *body, *ctx.json, SignatureFlow::AddUsageApiKey, std::nullopt));
    SIGIL_TRY(account, SignerAccount(service, verified->signer));
    SIGIL_TRY(wallet, MintWallet(service, *account));
    // Same form as every usage key (DESIGN.md section 2): base64 of 32 random bytes. Only the client
    // sees it; the admin wallet attaches keccak256 of it with setUsageApiKey.
    common::SecretBytes secret = common::RandomSecret(common::API_KEY_SECRET_SIZE);
    std::string key = common::Base64Encode(secret.view());
    std::string out = "{\"usage_api_key\":" + common::JsonQuote(key) + ",\"wallet_address\":" +
                      common::JsonQuote(AddressHex(wallet->address)) + ",\"derivation_path\":" +
                      common::JsonQuote(WordHex(wallet->path)) + "}";
    common::Wipe(key.data(), key.size());
    HttpResponse response = JsonResponse(200, out);
    common::Wipe(out.data(), out.size());
    return response;
}

// Rule 7 of the spec: the master key (checked by the router: valid, managed, still the owner's), then
// the envelope with primaryType ConvertAccount recovering to new_admin_wallet_address, then the API
// payer's convertToChainSecuredAccount. The contract re-checks everything it can (managed, admin free).
Result<HttpResponse> ConvertToChainSecured(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(new_admin, body->Address("new_admin_wallet_address"));
    SIGIL_TRY(verified, VerifyEnvelope(service, *body, *ctx.json, SignatureFlow::ConvertAccount, *new_admin));
    SIGIL_TRY(contract, service.Contract());
    // Asked first for a clear answer; the contract refuses it anyway (AdminTaken) if it races.
    SIGIL_TRY(held, (*contract)->AccountOfAdmin(verified->signer));
    if (!held->IsZero() && *held != caller.account_hash) {
        return MakeError(ErrorKind::Conflict, "admin_taken", "the new admin wallet already administers another account");
    }
    // keyd signs the payer's conversion only with this consent, which it verifies itself.
    SIGIL_TRY(signature_hex, body->String("signature", MAX_SIGNATURE_CHARS));
    SIGIL_TRY(signature, common::HexDecodeExact(*signature_hex, 65, common::HexPrefix::Required));
    keyd::PayerTxRequest::Consent consent;
    consent.issued_at = verified->issued_at;
    std::copy(signature->begin(), signature->end(), consent.signature.begin());
    service.Credential().consent = consent;
    auto st = (*contract)->ConvertToChainSecuredAccount(caller.account_hash, *new_admin);
    if (!st.ok()) return st.error();
    return JsonResponse(200, "{\"success\":true,\"api_key_hash\":" + common::JsonQuote(WordHex(caller.account_hash)) + "}");
}

}  // namespace

void AddChainSecuredRoutes(Router& router, Service& service) {
    Service* s = &service;
    const auto bind = [s](Result<HttpResponse> (*f)(Service&, RequestContext&)) {
        return [s, f](RequestContext& ctx) { return f(*s, ctx); };
    };
    const std::string tag = "chainsecured";
    router.Add({"POST", "/core/v1/create_wallet_with_signature", AuthRequirement::None, BodyKind::Json,
                bind(CreateWalletWithSignature),
                "Mint a PKP for the account the EIP-712 CreateWallet signer administers (no API key)", tag,
                ApiSchema("chain_secured.json#/EnvelopeRequest"), ApiSchema("chain_secured.json#/CreateWalletResponse")});
    router.Add({"POST", "/core/v1/add_usage_api_key_with_signature", AuthRequirement::None, BodyKind::Json,
                bind(AddUsageApiKeyWithSignature),
                "Mint a usage key and its wallet for the account the EIP-712 AddUsageApiKey signer administers (no API key)",
                tag, ApiSchema("chain_secured.json#/EnvelopeRequest"), ApiSchema("chain_secured.json#/AddUsageKeyResponse")});
    router.Add({"POST", "/core/v1/convert_to_chain_secured_account", AuthRequirement::AccountOwner, BodyKind::Json,
                bind(ConvertToChainSecured),
                "Convert the account to ChainSecured mode: the signer of an EIP-712 ConvertAccount becomes its admin "
                "(master key only; the old master key then authorizes nothing)",
                tag, ApiSchema("chain_secured.json#/ConvertRequest"), ApiSchema("chain_secured.json#/ConvertResponse"),
                /*may_answer_pending=*/false, Charge::WriteMovingBalance});
}

}  // namespace sigil::workers
