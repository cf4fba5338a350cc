// Billing as the API uses it (DESIGN.md section 9): the ledger (opened on first use, so a database
// that is down fails the requests that need it, never the worker's start), the processor, the prices,
// and the customer of an account (its current admin wallet).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "common/uint256.h"
#include "workers/billing/backoff.h"
#include "workers/billing/ledger.h"
#include "workers/billing/processor.h"
#include "workers/billing/settings.h"
#include "workers/chain/service.h"

namespace sigil::workers::billing {

class Billing {
public:
    // Errors: InvalidInput "invalid_config" (the stripe key file cannot be read).
    // When billing is on, it listens to the contract's logs (Service::SetLogListener) so that credit
    // follows every admin change on chain (admin_moves.h); the destructor stops listening.
    static common::Result<std::unique_ptr<Billing>> Create(BillingSettings settings, Service& service);
    ~Billing();
    Billing(const Billing&) = delete;
    Billing& operator=(const Billing&) = delete;

    bool enabled() const { return m_settings.enabled; }
    const BillingSettings& settings() const { return m_settings; }
    PaymentProcessor& processor() { return *m_processor; }

    // The ledger, opened (and its schema created) on first use. Errors: Unavailable "ledger_unavailable".
    common::Result<Ledger*> Store();

    // The customer of an account: its admin wallet, 0x + 40 lower-case hex. Errors: the chain's.
    common::Result<std::string> CustomerOf(const common::Uint256& account_hash);

    // "12.34" for 1234 cents.
    static std::string Display(Cents cents);

private:
    Billing(BillingSettings settings, Service& service) : m_settings(std::move(settings)), m_service(service) {}

    BillingSettings m_settings;
    Service& m_service;
    std::unique_ptr<PaymentProcessor> m_processor;
    std::unique_ptr<Ledger> m_ledger;
    ConnectBackoff m_open_backoff;  // Store(): opening a ledger that did not answer
};

}  // namespace sigil::workers::billing
