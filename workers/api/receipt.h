// Run receipts on the run's answer path (docs/receipts.md): a run asked with `receipt: true`
// answers, beside its response, the receipt key's EIP-712 signature (made by keyd, which builds
// the digest itself) over the run's CID, params, response, PKP, key, request id, time and app id.
#pragma once

#include <optional>
#include <string>

#include "common/bytes.h"
#include "common/result.h"
#include "workers/actions/runner.h"
#include "workers/chain/caller.h"
#include "workers/chain/service.h"

namespace sigil::workers {

struct ReceiptSettings {
    std::string agent_socket;  // [worker] dstack_socket: the app id comes from its Info; empty = no TEE
    int timeout_ms = 5000;
};

// Set once by worker_main before serving (the app id's source is the worker's TEE agent, which
// the API routes are not otherwise given). Without it, receipts carry app id zero.
void ConfigureReceipts(ReceiptSettings settings);

// Before a run asked with a receipt, so one that cannot be signed never runs (and costs nothing):
// the app id (the agent's Info, once per worker) and the receipt key's address (keyd, once).
// Errors: Unavailable "receipt_unavailable" (502: no keyd, the agent or keyd failed), with the cause.
common::Status PrepareReceipt(Service& service);

// The JSON members to append to the run's answer: `,"receipt":{domain, types, primaryType,
// message, signature, signer}`, or, when keyd fails after the run (its result is never withheld),
// `,"receipt_error":{"code","message"}`.
std::string ReceiptMembers(Service& service, const Caller& caller, const std::string& request_id,
                           const ActionRequest& request, const ActionResult& result);

}  // namespace sigil::workers
