// Ledger::Open: the store the configured database names (a PostgreSQL URL, else a SQLite file).
#include "workers/billing/ledger.h"

#include "workers/billing/postgres_ledger.h"
#include "workers/billing/sqlite_ledger.h"

namespace sigil::workers::billing {

common::Result<std::unique_ptr<Ledger>> Ledger::Open(const std::string& database) {
    if (database.rfind("postgresql://", 0) == 0 || database.rfind("postgres://", 0) == 0) {
        return OpenPostgresLedger(database);
    }
    return OpenSqliteLedger(database);
}

}  // namespace sigil::workers::billing
