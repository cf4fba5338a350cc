// The management API under /core/v1 (spec "Endpoints", DESIGN.md section 4): one Add*Routes per
// resource file, all registered on the router by AddApiRoutes, which also installs API-key auth.
#pragma once

#include <string>

#include "common/hex.h"
#include "common/result.h"
#include "common/uint256.h"
#include "workers/api/auth.h"
#include "workers/api/billing.h"
#include "workers/http/router.h"
#include "workers/chain/service.h"

namespace sigil::workers {

class ActionRunner;

// `runner` may be null (no sandbox: runs answer 503 sandbox_unavailable). `billing` empty: nothing
// is charged and /billing/* answers 503 billing_disabled.
void AddApiRoutes(Router& router, Service& service, ActionRunner* runner = nullptr, BillingContext billing = {});

void AddAccountRoutes(Router& router, Service& service);  // api_accounts.cpp: accounts and usage keys
void AddWalletRoutes(Router& router, Service& service);   // api_wallets.cpp: PKPs and group membership
void AddGroupRoutes(Router& router, Service& service);    // api_groups.cpp: groups
void AddActionRoutes(Router& router, Service& service);   // api_actions.cpp: actions and CIDs
void AddConfigRoutes(Router& router, Service& service);   // api_config.cpp: public configuration, OpenAPI
// chain_secured.cpp: the EIP-712 signature endpoints and the conversion to ChainSecured mode.
void AddChainSecuredRoutes(Router& router, Service& service);
// api_run.cpp: POST sigil_action and GET get_action_client_config.
void AddRunRoutes(Router& router, Service& service, ActionRunner* runner, BillingContext billing);
// runs.cpp: GET list_runs, get_run and the account's run history settings (issue 26).
void AddRunHistoryRoutes(Router& router, Service& service, BillingContext billing);

// The caller an authenticated route's handler runs for.
inline const Caller& CallerOf(const RequestContext& ctx) { return std::any_cast<const Caller&>(ctx.auth); }

// 0x + 64 lower-case hex of a uint256 (ids, key and account hashes on the wire).
inline std::string WordHex(const common::Uint256& v) { return common::HexEncode(v.Word(), true); }
// 0x + 40 lower-case hex of an address.
inline std::string AddressHex(const common::Address20& a) { return common::HexEncode(a, true); }

// {"success":true}: the answer of every write without other data.
HttpResponse SuccessResponse();

// The answer of a write that mints something the client must keep (a secret, a wallet): 200 with
// the JSON object members `members` when its transaction is mined; when the transaction was
// broadcast but its outcome is unknown (the receipt timed out, the node went away), 202 with the
// same members plus "pending":true and "tx_hash", so nothing minted is ever lost: it takes effect
// once that transaction is mined (a retry with the same Idempotency-Key then answers 200, or 409
// tx_reverted). Any other failure passes through.
common::Result<HttpResponse> MintedAnswer(const common::Status& write, const std::string& members);

}  // namespace sigil::workers
