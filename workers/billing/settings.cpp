#include "workers/billing/settings.h"

#include "common/secp256k1.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;

namespace {

// Past the hard timeout the supervisor still has to notice and kill the worker (it checks about
// once a second); a claim is taken over only once its worker is certainly gone.
constexpr std::int64_t IDEMPOTENCY_LEASE_MARGIN_MS = 2000;

common::Error Bad(const std::string& key, const std::string& why) {
    return MakeError(ErrorKind::InvalidInput, "invalid_config", "[billing] " + key + ": " + why);
}

}  // namespace

common::Result<BillingSettings> BillingSettings::FromConfig(const common::Config& config) {
    BillingSettings s;
    auto i = [&config](const char* key) { return config.GetInt("billing", key); };
    auto str = [&config](const char* key) { return config.GetString("billing", key); };
    s.enabled = config.GetBool("billing", "enabled");
    s.database = str("database");
    s.write_price_cents = i("write_price_cents");
    s.run_second_price_cents = i("run_second_price_cents");
    s.starter_credit_cents = i("starter_credit_cents");
    s.starter_credit_budget_cents = i("starter_credit_budget_cents");
    s.idempotency_keys_per_account = i("idempotency_keys_per_account");
    s.idempotency_lease_ms = config.GetInt("supervisor", "request_hard_timeout_s") * 1000 + IDEMPOTENCY_LEASE_MARGIN_MS;
    s.min_payment_cents = i("min_payment_cents");
    s.max_payment_cents = i("max_payment_cents");
    s.max_concurrent_runs_per_key = static_cast<std::uint32_t>(i("max_concurrent_runs_per_key"));
    s.processor = str("processor");
    s.token_address = str("token_address");
    s.payments_address = str("payments_address");
    s.confirmations = static_cast<std::uint32_t>(i("confirmations"));
    s.payments_from_block = static_cast<std::uint64_t>(i("payments_from_block"));
    s.stripe_api_base = str("stripe_api_base");
    s.stripe_secret_key_file = str("stripe_secret_key_file");
    s.stripe_publishable_key = str("stripe_publishable_key");
    s.stripe_timeout_ms = static_cast<int>(i("stripe_timeout_ms"));
    if (!s.enabled) return s;
    if (s.database.empty()) return Bad("database", "required when billing is enabled");
    if (s.min_payment_cents > s.max_payment_cents) return Bad("min_payment_cents", "is above max_payment_cents");
    if (s.processor == "chain") {
        for (const auto& [key, value] : {std::pair{"token_address", s.token_address}, {"payments_address", s.payments_address}}) {
            if (!common::ParseAddress(value).ok()) return Bad(key, "the chain processor needs a contract address (0x + 40 hex)");
        }
    } else if (s.processor == "stripe") {
        if (s.stripe_secret_key_file.empty()) return Bad("stripe_secret_key_file", "the stripe processor needs its secret key file");
        const std::string& base = s.stripe_api_base;
        const bool loopback = base.rfind("http://127.0.0.1", 0) == 0 &&
                              (base.size() == 16 || base[16] == ':' || base[16] == '/');
        if (base.rfind("https://", 0) != 0 && !loopback) {
            return Bad("stripe_api_base", "must be https:// (or http://127.0.0.1 for tests)");
        }
    } else {
        return Bad("processor", "'" + s.processor + "' is neither chain nor stripe");
    }
    return s;
}

}  // namespace sigil::workers::billing
