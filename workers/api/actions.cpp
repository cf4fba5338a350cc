// Actions: standalone metadata (add, update, delete, list), CIDs in groups, and the CID of given code.
// CID rule (spec "Action"): creation endpoints take the raw CID and the server hashes it; update and
// delete endpoints take the hashed CID (0x + keccak256(utf8(CID))).
#include <string>

#include "common/cid.h"
#include "common/json.h"
#include "common/hex.h"
#include "workers/api/api.h"
#include "workers/api/json_input.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

// The largest action source (DESIGN.md section 5); nginx's body limit is usually lower still.
constexpr std::size_t MAX_ACTION_CODE_BYTES = 16u << 20;

std::string HashJson(const common::Hash32& h) { return "\"" + common::HexEncode(h, true) + "\""; }

HttpResponse SuccessWithHash(const common::Hash32& h) {
    return JsonResponse(200, "{\"success\":true,\"hashed_cid\":" + HashJson(h) + "}");
}

common::Result<HttpResponse> AddAction(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(cid, body->RawCid("action_ipfs_cid"));
    SIGIL_TRY(name, body->String("name", MAX_NAME_BYTES));
    SIGIL_TRY(description, body->String("description", MAX_DESCRIPTION_BYTES));

    SIGIL_TRY(contract, service.Contract());
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY_STATUS((*contract)->AddAction(caller.account_hash, caller.key_hash, cid->second, *name, *description));
    return SuccessWithHash(cid->second);
}

common::Result<HttpResponse> UpdateActionMetadata(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(hash, body->HashedCid("hashed_cid"));
    SIGIL_TRY(name, body->String("name", MAX_NAME_BYTES));
    SIGIL_TRY(description, body->String("description", MAX_DESCRIPTION_BYTES));

    SIGIL_TRY(contract, service.Contract());
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY_STATUS(
        (*contract)->UpdateActionMetadata(caller.account_hash, caller.key_hash, *hash, *name, *description));
    return SuccessResponse();
}

common::Result<HttpResponse> DeleteAction(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(hash, body->HashedCid("hashed_cid"));

    SIGIL_TRY(contract, service.Contract());
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY_STATUS((*contract)->DeleteAction(caller.account_hash, caller.key_hash, *hash));
    return SuccessResponse();
}

common::Result<HttpResponse> AddActionToGroup(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(group_id, body->GroupId("group_id"));
    SIGIL_TRY(cid, body->RawCid("action_ipfs_cid"));

    SIGIL_TRY(contract, service.Contract());
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY_STATUS((*contract)->AddActionToGroup(caller.account_hash, caller.key_hash, *group_id, cid->second));
    return SuccessWithHash(cid->second);
}

common::Result<HttpResponse> RemoveActionFromGroup(Service& service, RequestContext& ctx) {
    SIGIL_TRY(body, JsonBody::From(ctx.json));
    SIGIL_TRY(group_id, body->GroupId("group_id"));
    SIGIL_TRY(hash, body->HashedCid("hashed_cid"));

    SIGIL_TRY(contract, service.Contract());
    const Caller& caller = CallerOf(ctx);
    SIGIL_TRY_STATUS((*contract)->RemoveActionFromGroup(caller.account_hash, caller.key_hash, *group_id, *hash));
    return SuccessResponse();
}

common::Result<HttpResponse> ListActions(Service& service, RequestContext& ctx) {
    SIGIL_TRY(group_id, QueryGroupId(ctx.request, false));
    SIGIL_TRY(page, ParsePage(ctx.request));
    SIGIL_TRY(reader, service.Reader());
    const auto& account = CallerOf(ctx).account_hash;
    auto actions = group_id->has_value() ? (*reader)->ListActionsInGroup(account, **group_id, *page)
                                         : (*reader)->ListActions(account, *page);
    if (!actions.ok()) return actions.error();
    std::string out = "[";
    for (std::size_t i = 0; i < actions->size(); ++i) {
        const auto& a = (*actions)[i];
        out += (i ? "," : "");
        out += "{\"id\":" + HashJson(a.cid_hash) + ",\"name\":" + common::JsonQuote(a.name) +
               ",\"description\":" + common::JsonQuote(a.description) + "}";
    }
    return JsonResponse(200, out + "]");
}

common::Result<HttpResponse> ActionIpfsId(RequestContext& ctx) {
    if (ctx.json == nullptr || !ctx.json->IsString()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_body",
                         "the body must be a JSON string holding the action's JavaScript code");
    }
    if (ctx.json->GetStringLength() > MAX_ACTION_CODE_BYTES) {
        return MakeError(ErrorKind::TooLarge, "code_too_large",
                         "the code is longer than " + std::to_string(MAX_ACTION_CODE_BYTES) + " bytes");
    }
    const std::string_view code(ctx.json->GetString(), ctx.json->GetStringLength());
    return JsonResponse(200, common::JsonQuote(common::ComputeCidV0(code)));
}

}  // namespace

void AddActionRoutes(Router& router, Service& service) {
    router.Add({"POST", "/core/v1/add_action", AuthRequirement::ApiKey, BodyKind::Json,
                [&service](RequestContext& ctx) { return AddAction(service, ctx); },
                "Register metadata for an action CID", "actions", ApiSchema("actions.json#/AddActionRequest"), ApiSchema("actions.json#/SuccessWithHash"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/update_action_metadata", AuthRequirement::ApiKey, BodyKind::Json,
                [&service](RequestContext& ctx) { return UpdateActionMetadata(service, ctx); },
                "Change an action's name and description", "actions", ApiSchema("actions.json#/UpdateActionRequest"), ApiSchema("common.json#/Success"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/delete_action", AuthRequirement::ApiKey, BodyKind::Json,
                [&service](RequestContext& ctx) { return DeleteAction(service, ctx); },
                "Delete an action's metadata (groups keep the CID)", "actions", ApiSchema("actions.json#/DeleteActionRequest"), ApiSchema("common.json#/Success"),
                /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/add_action_to_group", AuthRequirement::ApiKey, BodyKind::Json,
                [&service](RequestContext& ctx) { return AddActionToGroup(service, ctx); },
                "Permit an action CID in a group (group:manageActions)", "actions", ApiSchema("actions.json#/AddToGroupRequest"),
                ApiSchema("actions.json#/SuccessWithHash"), /*may_answer_pending=*/false, Charge::Write});
    router.Add({"POST", "/core/v1/remove_action_from_group", AuthRequirement::ApiKey, BodyKind::Json,
                [&service](RequestContext& ctx) { return RemoveActionFromGroup(service, ctx); },
                "Remove an action CID from a group (group:manageActions)", "actions", ApiSchema("actions.json#/RemoveFromGroupRequest"),
                ApiSchema("common.json#/Success"), /*may_answer_pending=*/false, Charge::Write});
    router.Add({"GET", "/core/v1/list_actions", AuthRequirement::ApiKey, BodyKind::None,
                [&service](RequestContext& ctx) { return ListActions(service, ctx); },
                "A page of the account's actions, or of one group's", "actions", ApiSchema("actions.json#/ListActionsQuery"),
                ApiSchema("actions.json#/ListActionsResponse")});
    router.Add({"POST", "/core/v1/get_sigil_action_ipfs_id", AuthRequirement::None, BodyKind::Json,
                [](RequestContext& ctx) { return ActionIpfsId(ctx); },
                "The IPFS CIDv0 of JavaScript code (sent as a JSON string)", "actions", ApiSchema("actions.json#/IpfsIdRequest"),
                ApiSchema("actions.json#/IpfsIdResponse")});
    // The deployed implementation's name for the same helper, so its clients work unchanged.
    router.Add({"POST", "/core/v1/get_lit_action_ipfs_id", AuthRequirement::None, BodyKind::Json,
                [](RequestContext& ctx) { return ActionIpfsId(ctx); },
                "Compatibility alias of get_sigil_action_ipfs_id under the deployed implementation's name",
                "actions", ApiSchema("actions.json#/IpfsIdRequest"), ApiSchema("actions.json#/IpfsIdResponse")});
}

}  // namespace sigil::workers
