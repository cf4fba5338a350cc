// Accounts and usage keys: new_account, account_exists, add/update/remove usage keys, list_api_keys.
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "common/base64.h"
#include "common/json.h"
#include "common/hex.h"
#include "common/random.h"
#include "common/secp256k1.h"
#include "common/secret.h"
#include "workers/api/api.h"
#include "workers/api/json_input.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Uint256;


// A freshly drawn key: its text goes to the client once (in the response body); only its
// keccak256 is kept on chain. The worker's copy wipes itself.
struct DrawnKey {
    common::SecretBytes text;  // base64 of the 32 secret bytes
    Uint256 hash;
};

DrawnKey KeyFor(const common::SecretBytes& secret) {
    std::string encoded = common::Base64Encode(secret.view());
    DrawnKey drawn{common::SecretBytes(common::AsBytes(encoded)), ApiKeyHash(encoded)};
    common::Wipe(encoded.data(), encoded.size());
    return drawn;
}

// An account master key: S is also the owner wallet's private key, so S must be a valid scalar
// (it is not with probability ~2^-128; drawing again keeps S uniform over the valid keys).
DrawnKey DrawAccountKey(common::Address20* wallet) {
    for (;;) {
        common::SecretBytes s = common::RandomSecret(common::API_KEY_SECRET_SIZE);
        auto key = common::PrivateKey::FromBytes(s.view());
        if (!key.ok()) continue;
        *wallet = key->Address();
        return KeyFor(s);
    }
}

DrawnKey DrawUsageKey() { return KeyFor(common::RandomSecret(common::API_KEY_SECRET_SIZE)); }

std::string IdArray(const std::vector<std::uint64_t>& ids) {
    std::string out = "[";
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i != 0) out += ',';
        out += std::to_string(ids[i]);
    }
    return out + "]";
}

// The seven permission fields of an add/update body; absent bools are false, absent lists empty,
// so an update replaces every permission the way the spec says.
Result<Permissions> ReadPermissions(const JsonBody& body) {
    Permissions p;
    SIGIL_TRY(create_groups, body.Bool("can_create_groups", false));
    SIGIL_TRY(delete_groups, body.Bool("can_delete_groups", false));
    SIGIL_TRY(create_pkps, body.Bool("can_create_pkps", false));
    SIGIL_TRY(manage, body.GroupIdList("manage_ipfs_ids_in_groups"));
    SIGIL_TRY(add_pkp, body.GroupIdList("add_pkp_to_groups"));
    SIGIL_TRY(remove_pkp, body.GroupIdList("remove_pkp_from_groups"));
    SIGIL_TRY(execute, body.GroupIdList("execute_in_groups"));
    p.can_create_groups = *create_groups;
    p.can_delete_groups = *delete_groups;
    p.can_create_pkps = *create_pkps;
    p.manage_ipfs_ids_in_groups = std::move(manage).value();
    p.add_pkp_to_groups = std::move(add_pkp).value();
    p.remove_pkp_from_groups = std::move(remove_pkp).value();
    p.execute_in_groups = std::move(execute).value();
    return p;
}

// Whether `text` is a key's hash as listings show it (api_key_hash): 0x + 64 hex digits, either
// case. No key value has that shape (a key is base64 of 32 bytes: 44 characters ending in '='), so
// the form alone says which of the two a client sent.
bool IsKeyHashForm(std::string_view text) {
    if (text.size() != 66 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return false;
    for (std::size_t i = 2; i < text.size(); ++i) {
        if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
    }
    return true;
}

// The usage key named in a body, as its on-chain hash: the key's value (hashed here), or its hash
// itself (0x + 64 hex, as list_api_keys answers it), since listings never return key values and
// the deployed implementation accepts both. The master key is refused here in either form: the
// contract would treat its hash as "owner" and never as a usage key, so no request on it can mean
// anything sensible (and a 400 is clearer than the contract's conflict).
Result<Uint256> ReadUsageKeyHash(const JsonBody& body, const Caller& caller) {
    SIGIL_TRY(key, body.String("usage_api_key", MAX_API_KEY_LENGTH));
    if (key->empty()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_usage_api_key", "usage_api_key must not be empty");
    }
    Uint256 hash;
    if (IsKeyHashForm(*key)) {
        SIGIL_TRY(parsed, Uint256::FromHex(*key));
        hash = *parsed;
    } else {
        hash = ApiKeyHash(*key);
    }
    common::Wipe(key->data(), key->size());
    if (hash == caller.account_hash) {
        return MakeError(ErrorKind::InvalidInput, "master_key_not_usage_key",
                         "usage_api_key is the account's master key, which cannot be updated or removed");
    }
    return hash;
}

std::string UsageKeyItem(const UsageKeyRecord& k) {
    const std::string id = common::JsonQuote(WordHex(k.key_hash));
    const Permissions& p = k.permissions;
    return "{\"id\":" + id + ",\"api_key_hash\":" + id + ",\"name\":" + common::JsonQuote(k.name) +
           ",\"description\":" + common::JsonQuote(k.description) + ",\"expiration\":\"" + std::to_string(k.expiration) +
           "\",\"balance\":" + k.balance.ToDecimal() +
           ",\"can_create_groups\":" + (p.can_create_groups ? "true" : "false") +
           ",\"can_delete_groups\":" + (p.can_delete_groups ? "true" : "false") +
           ",\"can_create_pkps\":" + (p.can_create_pkps ? "true" : "false") +
           ",\"can_manage_ipfs_ids_in_groups\":" + IdArray(p.manage_ipfs_ids_in_groups) +
           ",\"can_add_pkp_to_groups\":" + IdArray(p.add_pkp_to_groups) +
           ",\"can_remove_pkp_from_groups\":" + IdArray(p.remove_pkp_from_groups) +
           ",\"can_execute_in_groups\":" + IdArray(p.execute_in_groups) + "}";
}

// ---- handlers ----

Result<HttpResponse> NewAccount(Service& service, RequestContext& ctx) {
    if (ctx.json != nullptr) {
        // The contract keeps no account metadata: the fields are checked, then dropped.
        SIGIL_TRY(body, JsonBody::From(ctx.json));
        if (auto r = body->String("account_name", MAX_NAME_BYTES, false); !r.ok()) return r.error();
        if (auto r = body->String("account_description", MAX_DESCRIPTION_BYTES, false); !r.ok()) return r.error();
        if (auto r = body->String("email", MAX_NAME_BYTES, false); !r.ok()) return r.error();
    }
    SIGIL_TRY(contract, service.Contract());
    common::Address20 wallet{};
    const DrawnKey key = DrawAccountKey(&wallet);
    ctx.new_customer = common::HexEncode(wallet, true);  // the account's customer (Charge::StarterCredit)
    // The account's hash is keccak256 of this key: keyd checks it before the payer signs.
    service.Credential().api_key = key.text.Clone();
    return MintedAnswer((*contract)->NewAccount(key.hash, wallet),
                        "\"api_key\":" + common::JsonQuote(key.text.text()) +
                            ",\"wallet_address\":" + common::JsonQuote(common::HexEncode(wallet, true)));
}

Result<HttpResponse> AccountExists(Service& service, RequestContext& ctx) {
    auto key = ExtractApiKey(ctx.request);
    if (!key.ok()) {
        // A key too long or with control characters can belong to no account: that is a "no".
        if (key.error().code == "invalid_api_key") return JsonResponse(200, "false");
        return key.error();
    }
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(info, (*reader)->ResolveKey(ApiKeyHash(key->text())));
    return JsonResponse(200, info->valid ? "true" : "false");
}

Result<HttpResponse> AddUsageKey(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(name, body->String("name", MAX_NAME_BYTES, false));
    SIGIL_TRY(description, body->String("description", MAX_DESCRIPTION_BYTES, false));
    SIGIL_TRY(expiration, body->U64("expiration"));
    SIGIL_TRY(balance, body->U64("balance"));
    SIGIL_TRY(permissions, ReadPermissions(*body));

    SIGIL_TRY(contract, service.Contract());
    const DrawnKey key = DrawUsageKey();
    auto st = (*contract)->SetUsageApiKey(caller.account_hash, caller.key_hash, key.hash, *expiration,
                                          Uint256::FromUint64(*balance), *name, *description, *permissions);
    return MintedAnswer(st, "\"success\":true,\"usage_api_key\":" + common::JsonQuote(key.text.text()));
}

Result<HttpResponse> UpdateUsageKey(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(key_hash, ReadUsageKeyHash(*body, caller));
    SIGIL_TRY(permissions, ReadPermissions(*body));
    // Validated now, applied below only when sent (the rest comes from the current record).
    SIGIL_TRY(name, body->String("name", MAX_NAME_BYTES, false));
    SIGIL_TRY(description, body->String("description", MAX_DESCRIPTION_BYTES, false));
    SIGIL_TRY(expiration, body->U64("expiration"));
    SIGIL_TRY(balance, body->U64("balance"));

    SIGIL_TRY(contract, service.Contract());
    // setUsageApiKey would create an unknown key: read it first so an update never adds one
    // (404 unknown_key for keys of other accounts too, without saying they exist).
    SIGIL_TRY(current, (*contract)->GetUsageKey(caller.account_hash, *key_hash, AccountConfigClient::Freshness::Fresh));
    auto st = (*contract)->SetUsageApiKey(
        caller.account_hash, caller.key_hash, *key_hash, body->Has("expiration") ? *expiration : current->expiration,
        body->Has("balance") ? Uint256::FromUint64(*balance) : current->balance,
        body->Has("name") ? *name : current->name, body->Has("description") ? *description : current->description,
        *permissions);
    if (!st.ok()) return st.error();
    return SuccessResponse();
}

Result<HttpResponse> UpdateUsageKeyMetadata(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(key_hash, ReadUsageKeyHash(*body, caller));
    SIGIL_TRY(name, body->String("name", MAX_NAME_BYTES));
    SIGIL_TRY(description, body->String("description", MAX_DESCRIPTION_BYTES));
    SIGIL_TRY(contract, service.Contract());
    auto st = (*contract)->UpdateUsageApiKeyMetadata(caller.account_hash, caller.key_hash, *key_hash, *name,
                                                     *description);
    if (!st.ok()) return st.error();
    return SuccessResponse();
}

Result<HttpResponse> RemoveUsageKey(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(key_hash, ReadUsageKeyHash(*body, caller));
    SIGIL_TRY(contract, service.Contract());
    SIGIL_TRY(st, (*contract)->RemoveUsageApiKey(caller.account_hash, caller.key_hash, *key_hash));
    return SuccessResponse();
}

Result<HttpResponse> ListApiKeys(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(page, ParsePage(ctx.request));
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(keys, (*reader)->ListUsageKeys(caller.account_hash, *page));
    std::string out = "[";
    for (std::size_t i = 0; i < keys->size(); ++i) {
        if (i != 0) out += ',';
        out += UsageKeyItem((*keys)[i]);
    }
    return JsonResponse(200, out + "]");
}

}  // namespace

void AddAccountRoutes(Router& router, Service& service) {
    Service* s = &service;
    const auto bind = [s](Result<HttpResponse> (*f)(Service&, RequestContext&)) {
        return [s, f](RequestContext& ctx) { return f(*s, ctx); };
    };
    const std::string tag = "accounts";
    router.Add({"POST", "/core/v1/new_account", AuthRequirement::None, BodyKind::OptionalJson, bind(NewAccount),
                "Create an account: a new master API key (returned once) and its owner wallet", tag, ApiSchema("accounts.json#/NewAccountRequest"),
                ApiSchema("accounts.json#/NewAccountResponse"), /*may_answer_pending=*/true, Charge::StarterCredit});
    router.Add({"GET", "/core/v1/account_exists", AuthRequirement::None, BodyKind::None, bind(AccountExists),
                "Whether the API key sent in the header belongs to an account (401 only when none is sent)", tag, "",
                ApiSchema("accounts.json#/AccountExistsResponse")});
    router.Add({"POST", "/core/v1/add_usage_api_key", AuthRequirement::AccountOwner, BodyKind::Json, bind(AddUsageKey),
                "Create a usage API key with the given permissions (master key only; the value is returned once)", tag,
                ApiSchema("accounts.json#/AddUsageKeyRequest"), ApiSchema("accounts.json#/AddUsageKeyResponse"),
                /*may_answer_pending=*/true, Charge::Write});
    router.Add({"POST", "/core/v1/update_usage_api_key", AuthRequirement::AccountOwner, BodyKind::Json,
                bind(UpdateUsageKey), "Replace every permission of a usage API key (master key only)", tag,
                ApiSchema("accounts.json#/UpdateUsageKeyRequest"), ApiSchema("common.json#/Success"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/update_usage_api_key_metadata", AuthRequirement::AccountOwner, BodyKind::Json,
                bind(UpdateUsageKeyMetadata), "Rename or redescribe a usage API key (master key only)", tag,
                ApiSchema("accounts.json#/UpdateMetadataRequest"), ApiSchema("common.json#/Success"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/remove_usage_api_key", AuthRequirement::AccountOwner, BodyKind::Json,
                bind(RemoveUsageKey), "Revoke a usage API key (master key only)", tag, ApiSchema("accounts.json#/RemoveUsageKeyRequest"),
                ApiSchema("common.json#/Success"), /*may_answer_pending=*/false, Charge::Write});
    router.Add({"GET", "/core/v1/list_api_keys", AuthRequirement::ApiKey, BodyKind::None, bind(ListApiKeys),
                "Page of the account's usage keys: metadata and permissions, never key values", tag, ApiSchema("common.json#/PageQuery"),
                ApiSchema("accounts.json#/ListApiKeysResponse")});
}

}  // namespace sigil::workers
