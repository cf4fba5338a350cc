// Key guardrails in the API (issue 26; the limits and their arithmetic are workers/billing/guardrails.h,
// enforced by the ledger when a run is admitted, RunCharge::Begin): the endpoints an account's admin
// sets, reads and clears a usage key's guardrails with, the Origin check on requests made with a key
// that lists allowed Origins, and the answers to browsers' CORS preflights.
#pragma once

#include "workers/api/billing.h"
#include "workers/chain/service.h"
#include "workers/http/router.h"

namespace sigil::workers {

//   POST /core/v1/set_usage_api_key_guardrails {usage_api_key, requests_per_second?, burst?,
//        requests_per_second_per_address?, burst_per_address?, max_runs_in_flight?, spend_cap_cents?,
//        spend_window_seconds?, allowed_origins?}: replaces every guardrail of the key (an absent field is
//        not set) and answers {success, guardrails}
//   GET  /core/v1/get_usage_api_key_guardrails?usage_api_key=  the key's guardrails (all null when none)
//   POST /core/v1/clear_usage_api_key_guardrails {usage_api_key}  {success, cleared}
// usage_api_key is the key's value or its hash (0x + 64 hex). Auth: the account's master key, or
// X-Wallet-Auth (BillingAuth) signed by a ChainSecured account's admin wallet; a usage key never sets
// its own (403 owner_only), and another account's key is 404. Without a ledger database
// ([billing] database) there is nowhere to keep them: 503 guardrails_unavailable.
void AddGuardrailRoutes(Router& router, Service& service, BillingContext context);

// Wraps every authenticated route added so far (install it last, outermost): a request carrying an
// Origin header, made with a usage key whose guardrails list allowed Origins, is refused with 403
// origin_not_allowed before its handler runs unless its Origin is listed; a listed one gets
// Access-Control-Allow-Origin on its answer. Also answers CORS preflights (OPTIONS) on every known
// path: a preflight carries no key, so it grants nothing by itself, and every actual request is
// checked against its own key's list.
void ApplyOriginLayer(Router& router, BillingContext context);

}  // namespace sigil::workers
