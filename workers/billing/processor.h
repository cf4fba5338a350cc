// Payment processors behind one interface (DESIGN.md section 9): `chain` (an ERC-20 paid through the
// payments contract, real on the dev chain) and `stripe` (PaymentIntents over Stripe's REST API).
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "workers/billing/ledger.h"

namespace sigil::workers::billing {

class PaymentProcessor {
public:
    virtual ~PaymentProcessor() = default;

    // "chain" or "stripe".
    virtual std::string Name() const = 0;

    // The members GET /billing/payments_config answers besides "processor" (a JSON object's inner
    // text, "" for none), e.g. "\"publishable_key\":\"pk_...\"".
    virtual std::string ConfigMembers() const = 0;

    // The key a browser gives Stripe's client library, "" when payments do not go through Stripe
    // (GET /billing/stripe_config, the deployed implementation's billing check, answers it).
    virtual std::string StripePublishableKey() const { return ""; }

    // A new intent for `customer` to pay `cents`: id, reference and client_secret filled in (not yet
    // stored). Errors: the processor's Unavailable/Timeout errors.
    virtual common::Result<PaymentIntent> Create(const std::string& customer, Cents cents) = 0;

    // Extra members of create_payment_intent's answer (chain: "\"pay\":{...}"; "" for none).
    virtual std::string AnswerMembers(const PaymentIntent& intent) const = 0;

    // Whether the processor holds a completed payment of the intent's full amount, for its customer.
    // Errors: Unavailable/Timeout (the processor or the chain could not be asked: try again later).
    virtual common::Result<bool> IsPaid(const PaymentIntent& intent) = 0;
};

}  // namespace sigil::workers::billing
