// The SQLite ledger store: one file in WAL mode shared by every worker process of the machine.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "workers/billing/ledger.h"
#include "workers/billing/store.h"
#include "workers/billing/wal_checkpointer.h"

namespace sigil::workers::billing {

struct SqliteLedgerOptions {
    // How long a writer waits for another process's transaction before answering
    // Unavailable "ledger_unavailable".
    int busy_timeout_ms = 5000;
    NowMsFn now_ms;  // unset: the wall clock
    // When the log is checkpointed, on a thread of the ledger's own (wal_checkpointer.h).
    WalCheckpointOptions checkpoint;
};

// Opens (creating file and schema when missing) the ledger at `path`; its folder must exist.
// Every read-then-write runs under BEGIN IMMEDIATE, which holds the database's single write lock,
// so concurrent charges from any number of processes never overdraw. One Ledger is one connection:
// open one per process (never use one across fork()); calls from several threads are serialized.
// Each Ledger also runs one thread that checkpoints the log, so commits never do.
// Errors: Unavailable "ledger_unavailable".
common::Result<std::unique_ptr<Ledger>> OpenSqliteLedger(const std::string& path, const SqliteLedgerOptions& options = {});

}  // namespace sigil::workers::billing
