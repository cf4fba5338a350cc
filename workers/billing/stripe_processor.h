// The `stripe` payment processor: PaymentIntents over Stripe's REST API (libcurl), the customer
// found (or created) by metadata.wallet_address = the account's admin wallet. The secret key is
// read once from [billing] stripe_secret_key_file, kept in a wiping buffer, never logged and never
// part of an error message.
#pragma once

#include <memory>

#include "common/secret.h"
#include "workers/billing/processor.h"
#include "workers/billing/settings.h"

namespace sigil::workers::billing {

class StripeProcessor : public PaymentProcessor {
public:
    // Errors: InvalidInput "invalid_config" (the key file is missing, unreadable, group/world
    // readable, or does not hold an sk_... key on its first line).
    static common::Result<std::unique_ptr<StripeProcessor>> Create(const BillingSettings& settings);

    std::string Name() const override { return "stripe"; }
    std::string ConfigMembers() const override;  // "publishable_key"
    std::string StripePublishableKey() const override { return m_publishable_key; }
    // POST /v1/customers/search (or create) then POST /v1/payment_intents (amount, currency usd,
    // customer, metadata[wallet_address], automatic_payment_methods[enabled]); id and client_secret
    // are Stripe's. Errors: Unavailable "payment_processor_unavailable" (Stripe unreachable or an
    // unexpected answer), Timeout "payment_processor_timeout", InvalidInput "payment_refused" (Stripe's 4xx).
    common::Result<PaymentIntent> Create(const std::string& customer, Cents cents) override;
    std::string AnswerMembers(const PaymentIntent&) const override { return ""; }
    // GET /v1/payment_intents/{id}: paid when status is "succeeded", amount_received >= the amount,
    // currency usd and metadata.wallet_address is the intent's customer.
    common::Result<bool> IsPaid(const PaymentIntent& intent) override;

private:
    StripeProcessor(const BillingSettings& settings, common::SecretBytes key);

    std::string m_api_base;
    std::string m_publishable_key;
    int m_timeout_ms;
    common::SecretBytes m_secret_key;
};

}  // namespace sigil::workers::billing
