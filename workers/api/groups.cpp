// Groups: add, update, remove, list (spec "Wallets, groups, actions"; DESIGN.md section 4).
// Every write is relayed with the caller's key hash; the contract decides scopes and answers with
// the mapped 403/404/409/400.
#include <string>
#include <vector>

#include "common/hex.h"
#include "common/json.h"
#include "workers/api/api.h"
#include "workers/api/json_input.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

std::string AddressList(const std::vector<common::Address20>& pkps) {
    std::string out = "[";
    for (std::size_t i = 0; i < pkps.size(); ++i) out += (i ? ",\"" : "\"") + common::HexEncode(pkps[i], true) + "\"";
    return out + "]";
}

std::string HashList(const std::vector<common::Hash32>& hashes) {
    std::string out = "[";
    for (std::size_t i = 0; i < hashes.size(); ++i) {
        out += (i ? ",\"" : "\"") + common::HexEncode(hashes[i], true) + "\"";
    }
    return out + "]";
}

// The deployed implementation's group wildcards (an all-zero PKP id for "every PKP of the account",
// a zero CID hash for "every action") are refused by name, with the way to list every PKP or action
// instead: a CID wildcard would let any key that may execute on the group run code of its own with
// the group's PKPs (and so read their private keys), which voids the group's binding of keys to
// actions; and Sigil's contract lists each PKP of a group, checked against the account's registry.
common::Status RefuseGroupWildcards(const JsonBody& body) {
    if (body.HasZeroEntry("pkp_ids_permitted")) {
        return common::MakeError(
            common::ErrorKind::InvalidInput, "group_wildcard_not_supported",
            "pkp_ids_permitted holds the zero PKP id, which the deployed implementation reads as every PKP of the "
            "account; Sigil has no group wildcard: list the PKPs (GET /core/v1/list_wallets, paged) and send their "
            "wallet addresses, or add each with add_pkp_to_group");
    }
    if (body.HasZeroEntry("cid_hashes_permitted")) {
        return common::MakeError(
            common::ErrorKind::InvalidInput, "group_wildcard_not_supported",
            "cid_hashes_permitted holds the zero hash, which the deployed implementation reads as every action; Sigil "
            "has no group wildcard, since any key that may execute on the group could then run code of its own with "
            "the group's PKPs: list the actions (GET /core/v1/list_actions, paged) and send their hashed CIDs, or add "
            "each with add_action_to_group");
    }
    return common::Success();
}

common::Result<HttpResponse> AddGroup(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY_STATUS(RefuseGroupWildcards(*body));
    SIGIL_TRY(name, body->String("group_name", MAX_NAME_BYTES));
    SIGIL_TRY(description, body->String("group_description", MAX_DESCRIPTION_BYTES));
    SIGIL_TRY(pkps, body->AddressList("pkp_ids_permitted"));
    SIGIL_TRY(cids, body->HashedCidList("cid_hashes_permitted"));

    SIGIL_TRY(contract, service.Contract());
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY(id, (*contract)->AddGroup(caller.account_hash, caller.key_hash, *name, *description, *pkps, *cids));
    return JsonResponse(200, "{\"success\":true,\"group_id\":\"" + std::to_string(*id) + "\"}");
}

common::Result<HttpResponse> UpdateGroup(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY_STATUS(RefuseGroupWildcards(*body));
    SIGIL_TRY(group_id, body->GroupId("group_id"));
    SIGIL_TRY(name, body->String("name", MAX_NAME_BYTES));
    SIGIL_TRY(description, body->String("description", MAX_DESCRIPTION_BYTES));
    const bool has_pkps = body->Has("pkp_ids_permitted");
    const bool has_cids = body->Has("cid_hashes_permitted");
    SIGIL_TRY(pkps, body->AddressList("pkp_ids_permitted"));
    SIGIL_TRY(cids, body->HashedCidList("cid_hashes_permitted"));

    SIGIL_TRY(contract, service.Contract());
    const Caller& caller = CallerOf(ctx);
    // The contract replaces both sets. An omitted list means "unchanged", never "empty": a client
    // renaming a group must not silently strip its PKPs and actions. Sending [] empties it.
    if (!has_pkps || !has_cids) {
        SIGIL_TRY(current, (*contract)->GetGroup(caller.account_hash, *group_id, AccountConfigClient::Freshness::Fresh));
        if (!has_pkps) *pkps = current->pkps;
        if (!has_cids) *cids = current->cid_hashes;
    }
    SIGIL_TRY_STATUS(
        (*contract)->UpdateGroup(caller.account_hash, caller.key_hash, *group_id, *name, *description, *pkps, *cids));
    return SuccessResponse();
}

common::Result<HttpResponse> RemoveGroup(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(group_id, body->GroupId("group_id"));

    SIGIL_TRY(contract, service.Contract());
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY_STATUS((*contract)->RemoveGroup(caller.account_hash, caller.key_hash, *group_id));
    return SuccessResponse();
}

common::Result<HttpResponse> ListGroups(Service& service, RequestContext& ctx) {
    SIGIL_TRY(page, ParsePage(ctx.request));
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(groups, (*reader)->ListGroups(CallerOf(ctx).account_hash, *page));
    std::string out = "[";
    for (std::size_t i = 0; i < groups->size(); ++i) {
        const auto& g = (*groups)[i];
        out += (i ? "," : "");
        out += "{\"id\":\"" + std::to_string(g.id) + "\",\"name\":" + common::JsonQuote(g.name) +
               ",\"description\":" + common::JsonQuote(g.description) + ",\"pkp_ids_permitted\":" + AddressList(g.pkps) +
               ",\"cid_hashes_permitted\":" + HashList(g.cid_hashes) + "}";
    }
    return JsonResponse(200, out + "]");
}

}  // namespace

void AddGroupRoutes(Router& router, Service& service) {
    router.Add({"POST", "/core/v1/add_group", AuthRequirement::ApiKey, BodyKind::Json,
                [&service](RequestContext& ctx) { return AddGroup(service, ctx); },
                "Create a group (owner, or a key with group:create)", "groups", ApiSchema("groups.json#/AddGroupRequest"), ApiSchema("groups.json#/AddGroupResponse"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/update_group", AuthRequirement::ApiKey, BodyKind::Json,
                [&service](RequestContext& ctx) { return UpdateGroup(service, ctx); },
                "Rename a group and replace its PKP and CID sets", "groups", ApiSchema("groups.json#/UpdateGroupRequest"), ApiSchema("common.json#/Success"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/remove_group", AuthRequirement::ApiKey, BodyKind::Json,
                [&service](RequestContext& ctx) { return RemoveGroup(service, ctx); },
                "Delete a group (owner, or a key with group:delete)", "groups", ApiSchema("groups.json#/RemoveGroupRequest"), ApiSchema("common.json#/Success"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"GET", "/core/v1/list_groups", AuthRequirement::ApiKey, BodyKind::None,
                [&service](RequestContext& ctx) { return ListGroups(service, ctx); },
                "A page of the account's groups", "groups", ApiSchema("groups.json#/ListGroupsQuery"), ApiSchema("groups.json#/ListGroupsResponse")});
}

}  // namespace sigil::workers
