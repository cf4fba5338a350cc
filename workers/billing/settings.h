// The [billing] section: prices, the ledger's store, the payment processor and the abuse limits
// (DESIGN.md section 9). Credits are cents.
#pragma once

#include <cstdint>
#include <string>

#include "common/bytes.h"
#include "common/config.h"
#include "common/result.h"

namespace sigil::workers::billing {

struct BillingSettings {
    bool enabled = false;                 // off: nothing is charged, the billing endpoints answer 503 billing_disabled
    std::string database;                 // SQLite file path, or postgresql://... (several instances)
    std::int64_t write_price_cents = 1;   // per successful relayed write
    std::int64_t run_second_price_cents = 1;  // per started second of a run
    std::int64_t starter_credit_cents = 0;    // granted once to each new account's customer
    std::int64_t starter_credit_budget_cents = 10000;  // the most starter credit granted per UTC day (all instances)
    std::int64_t idempotency_keys_per_account = 10000;  // Idempotency-Key answers an account may hold at once
    // A claimed Idempotency-Key whose request never finished is taken over after this: the worker's
    // hard timeout ([supervisor] request_hard_timeout_s, past which the supervisor kills it) and a margin.
    std::int64_t idempotency_lease_ms = 62000;
    std::int64_t min_payment_cents = 500;
    std::int64_t max_payment_cents = 1000000;
    std::uint32_t max_concurrent_runs_per_key = 8;  // 0 = no cap

    std::string processor = "chain";      // "chain" | "stripe"
    // chain: an ERC-20 (6 decimals) paid through the payments contract's pay(reference, amount).
    std::string token_address;            // 0x + 40 hex
    std::string payments_address;         // 0x + 40 hex
    std::uint32_t confirmations = 12;     // blocks, the Paid event's own included
    std::uint64_t payments_from_block = 0;  // where confirm_payment starts looking for Paid events
    // stripe: PaymentIntents over its REST API.
    std::string stripe_api_base = "https://api.stripe.com";
    std::string stripe_secret_key_file;   // the secret key is read from this file, never from sigil.conf
    std::string stripe_publishable_key;
    int stripe_timeout_ms = 10000;

    // Errors: InvalidInput "invalid_config" naming the key (an unknown processor, a chain processor
    // without addresses, a stripe processor without its key file, prices below 0).
    static common::Result<BillingSettings> FromConfig(const common::Config& config);
};

}  // namespace sigil::workers::billing
