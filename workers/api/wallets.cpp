// PKPs (wallets) and their group membership: create_wallet, add/remove_pkp_from_group, list_wallets(_in_group).
#include <string>
#include <vector>

#include "common/hex.h"
#include "common/json.h"
#include "workers/api/api.h"
#include "workers/api/json_input.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::Uint256;


// The derivation path doubles as the item id: it is the wallet's 32-byte on-chain key.
std::string WalletItem(const WalletRecord& w) {
    const std::string path = common::JsonQuote(WordHex(w.derivation_path));
    return "{\"id\":" + path + ",\"name\":" + common::JsonQuote(w.name) + ",\"description\":" + common::JsonQuote(w.description) +
           ",\"wallet_address\":" + common::JsonQuote(AddressHex(w.address)) + ",\"pkp_id\":" + common::JsonQuote(AddressHex(w.address)) +
           ",\"derivation_path\":" + path + "}";
}

HttpResponse WalletArray(const std::vector<WalletRecord>& wallets) {
    std::string out = "[";
    for (std::size_t i = 0; i < wallets.size(); ++i) {
        if (i != 0) out += ',';
        out += WalletItem(wallets[i]);
    }
    return JsonResponse(200, out + "]");
}

// ---- handlers ----

Result<HttpResponse> CreateWallet(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    std::string name;
    std::string description;
    if (ctx.json != nullptr) {
        SIGIL_TRY(body, JsonBody::From(ctx.json));
        SIGIL_TRY(n, body->String("name", MAX_NAME_BYTES, false));
        SIGIL_TRY(d, body->String("description", MAX_DESCRIPTION_BYTES, false));
        name = std::move(n).value();
        description = std::move(d).value();
    }
    KeydClient* keyd = service.Keyd();
    if (keyd == nullptr) {
        return MakeError(ErrorKind::Unavailable, "keyd_not_configured", "this instance has no key service");
    }
    SIGIL_TRY(contract, service.Contract());
    // The contract enforces pkp:create at registration; asking first spares keyd a derivation (and
    // the key space an orphan path) for every refused usage key.
    if (!caller.is_owner) {
        SIGIL_TRY(allowed, (*contract)->KeyHasScope(caller.key_hash, Scope::CreatePkps, 0));
        if (!*allowed) return MakeError(ErrorKind::Forbidden, "missing_scope", "the key lacks the pkp:create scope");
    }
    SIGIL_TRY(path, keyd->MintPath());
    SIGIL_TRY(pub, keyd->GetPkpPublic(keyd::PkpRef{caller.account_hash.Word(), *path}));
    const Uint256 path_value = Uint256::FromWord(*path);
    auto st = (*contract)->RegisterWalletDerivation(caller.account_hash, caller.key_hash, pub->address, path_value,
                                                    name, description);
    return MintedAnswer(st, "\"wallet_address\":" + common::JsonQuote(AddressHex(pub->address)) +
                                ",\"derivation_path\":" + common::JsonQuote(WordHex(path_value)));
}

// add_pkp_to_group and remove_pkp_from_group share their body {group_id, pkp_id}.
template <bool kAdd>
Result<HttpResponse> ChangeMembership(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(group_id, body->GroupId("group_id"));
    SIGIL_TRY(pkp, body->Address("pkp_id"));
    SIGIL_TRY(contract, service.Contract());
    auto st = kAdd ? (*contract)->AddPkpToGroup(caller.account_hash, caller.key_hash, *group_id, *pkp)
                   : (*contract)->RemovePkpFromGroup(caller.account_hash, caller.key_hash, *group_id, *pkp);
    if (!st.ok()) return st.error();
    return SuccessResponse();
}

Result<HttpResponse> ListWallets(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(page, ParsePage(ctx.request));
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(wallets, (*reader)->ListWallets(caller.account_hash, *page));
    return WalletArray(*wallets);
}

Result<HttpResponse> ListWalletsInGroup(Service& service, RequestContext& ctx) {
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(group_id, QueryGroupId(ctx.request, true));
    SIGIL_TRY(page, ParsePage(ctx.request));
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(wallets, (*reader)->ListWalletsInGroup(caller.account_hash, **group_id, *page));
    return WalletArray(*wallets);
}

}  // namespace

void AddWalletRoutes(Router& router, Service& service) {
    Service* s = &service;
    const auto bind = [s](Result<HttpResponse> (*f)(Service&, RequestContext&)) {
        return [s, f](RequestContext& ctx) { return f(*s, ctx); };
    };
    const std::string tag = "wallets";
    const std::string create_summary = "Create a wallet (PKP) and register it to the account (scope pkp:create)";
    router.Add({"GET", "/core/v1/create_wallet", AuthRequirement::ApiKey, BodyKind::None, bind(CreateWallet),
                create_summary, tag, "", ApiSchema("wallets.json#/CreateWalletResponse"), /*may_answer_pending=*/true,
                Charge::Write});
    router.Add({"POST", "/core/v1/create_wallet", AuthRequirement::ApiKey, BodyKind::OptionalJson, bind(CreateWallet),
                create_summary, tag, ApiSchema("wallets.json#/CreateWalletRequest"), ApiSchema("wallets.json#/CreateWalletResponse"),
                /*may_answer_pending=*/true, Charge::Write});
    router.Add({"POST", "/core/v1/add_pkp_to_group", AuthRequirement::ApiKey, BodyKind::Json,
                bind(ChangeMembership<true>), "Add one of the account's PKPs to a group (scope group:addPkp)", tag,
                ApiSchema("wallets.json#/MembershipRequest"), ApiSchema("common.json#/Success"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/remove_pkp_from_group", AuthRequirement::ApiKey, BodyKind::Json,
                bind(ChangeMembership<false>), "Remove a PKP from a group (scope group:removePkp)", tag,
                ApiSchema("wallets.json#/MembershipRequest"), ApiSchema("common.json#/Success"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"GET", "/core/v1/list_wallets", AuthRequirement::ApiKey, BodyKind::None, bind(ListWallets),
                "Page of the account's wallets (PKPs)", tag, ApiSchema("common.json#/PageQuery"), ApiSchema("wallets.json#/WalletListResponse")});
    router.Add({"GET", "/core/v1/list_wallets_in_group", AuthRequirement::ApiKey, BodyKind::None,
                bind(ListWalletsInGroup), "Page of the wallets in one of the account's groups", tag, ApiSchema("wallets.json#/GroupPageQuery"),
                ApiSchema("wallets.json#/WalletListResponse")});
}

}  // namespace sigil::workers
