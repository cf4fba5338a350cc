#include "workers/billing/billing.h"

#include <chrono>
#include <cstdio>

#include "common/hex.h"
#include "common/log.h"
#include "workers/billing/admin_moves.h"
#include "workers/billing/chain_processor.h"
#include "workers/billing/stripe_processor.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;

common::Result<std::unique_ptr<Billing>> Billing::Create(BillingSettings settings, Service& service) {
    std::unique_ptr<Billing> b(new Billing(std::move(settings), service));
    if (b->m_settings.processor == "stripe") {
        SIGIL_TRY(stripe, StripeProcessor::Create(b->m_settings));
        b->m_processor = std::move(stripe).value();
    } else {
        Service* s = &service;
        // The token is checked on the first payment call, not here: a worker's start never waits on
        // the chain (the pool starts workers as load grows, and a chain outage must not slow that).
        b->m_processor = std::make_unique<ChainProcessor>(b->m_settings, service.ChainId(), [s] { return s->Eth(); });
    }
    if (b->m_settings.enabled) {
        Billing* self = b.get();
        service.SetLogListener([self](const LogEntry& log) -> common::Status {
            SIGIL_TRY(ledger, self->Store());
            return FollowAdminChange(**ledger, log);
        });
    }
    return b;
}

Billing::~Billing() {
    if (m_settings.enabled) m_service.SetLogListener(nullptr);
}

common::Result<Ledger*> Billing::Store() {
    if (!m_ledger) {
        SIGIL_TRY_STATUS(m_open_backoff.Admit());
        auto ledger = Ledger::Open(m_settings.database);
        m_open_backoff.Record(ledger.ok());
        if (!ledger.ok()) return ledger.error();
        m_ledger = std::move(ledger).value();
    }
    return m_ledger.get();
}

common::Result<std::string> Billing::CustomerOf(const common::Uint256& account_hash) {
    SIGIL_TRY(reader, m_service.Reader());
    SIGIL_TRY(account, (*reader)->GetAccount(account_hash));
    if (!account->exists) return MakeError(ErrorKind::NotFound, "unknown_account", "the account does not exist");
    return common::HexEncode(account->admin, true);
}

std::string Billing::Display(Cents cents) {
    char buf[32];
    const bool negative = cents < 0;
    const unsigned long long abs = negative ? static_cast<unsigned long long>(-cents) : static_cast<unsigned long long>(cents);
    std::snprintf(buf, sizeof buf, "%s%llu.%02llu", negative ? "-" : "", abs / 100, abs % 100);
    return buf;
}

}  // namespace sigil::workers::billing
