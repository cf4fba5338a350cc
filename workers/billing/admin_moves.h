// Credit follows the account (DESIGN.md section 9: the customer is the admin wallet): when the chain
// reports that an account's admin changed (an accepted ownership transfer, or a conversion, direct
// path or relayed), the balance moves from the old admin's customer to the new one's, once per event.
#pragma once

#include <optional>

#include "common/bytes.h"
#include "common/result.h"
#include "workers/billing/ledger.h"
#include "workers/chain/eth_client.h"

namespace sigil::workers::billing {

struct AdminChange {
    common::Address20 previous{};
    common::Address20 next{};
};

// The admin change a log announces (OwnershipTransferred or AccountConverted of AccountConfig, whose
// second and third indexed topics are the previous and the new admin), or nullopt for any other log.
std::optional<AdminChange> AdminChangeOf(const LogEntry& log);

// Moves the previous admin's balance to the new admin's customer, keyed by the log's transaction
// hash and index (Ledger::MoveBalanceOnce), so every worker that hears the event may call this and
// the balance moves once. Other logs, and a conversion that keeps its admin, change nothing.
// Errors: the ledger's (the watcher then hears the log again on its next poll); Internal
// "log_without_id" for a log the node gave no transaction hash.
common::Status FollowAdminChange(Ledger& ledger, const LogEntry& log);

}  // namespace sigil::workers::billing
