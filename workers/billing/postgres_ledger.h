// The PostgreSQL ledger store: several Sigil instances share one database.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "workers/billing/ledger.h"
#include "workers/billing/store.h"

namespace sigil::workers::billing {

struct PostgresLedgerOptions {
    // libpq's connect_timeout (it takes whole seconds, at least 2): a host that never answers.
    int connect_timeout_s = 2;
    // The server cancels a statement after this long (statement_timeout), e.g. a lock wait.
    int statement_timeout_ms = 5000;
    // The client gives up on an answer after this long and drops the connection: a server that
    // accepted the query and hangs (statement_timeout needs a live server).
    int query_timeout_ms = 7000;
    NowMsFn now_ms;  // unset: the wall clock
};

// Opens a connection to `url` ("postgresql://user@host:port/db?..."; libpq's URI rules, whose query
// parameters override the options above) and creates the schema when missing. One connection per
// Ledger, calls serialized; a connection found broken is replaced once per call (never after COMMIT
// was sent, whose outcome is then unknown and answered as an error). Every read-then-write holds a
// transaction-scoped advisory lock on a hash of the customer, so concurrent charges from any number
// of processes and hosts never overdraw. Never use one Ledger across fork().
// Errors: Unavailable "ledger_unavailable".
common::Result<std::unique_ptr<Ledger>> OpenPostgresLedger(const std::string& url,
                                                           const PostgresLedgerOptions& options = {});

}  // namespace sigil::workers::billing
