// The `chain` payment processor: the client pays an ERC-20 stablecoin (6 decimals) through the
// payments contract's pay(bytes32 reference, uint256 amount); confirm_payment finds the Paid event
// with the intent's reference and at least its amount, `confirmations` blocks deep, searching from the
// block the intent was made at. The token's decimals() must answer 6 (TOKEN_UNITS_PER_CENT assumes it):
// checked before every intent and confirmation until it has answered so (never at a worker's start,
// which must not wait on the chain).
#pragma once

#include <functional>

#include "common/bytes.h"
#include "workers/billing/processor.h"
#include "workers/billing/settings.h"
#include "workers/chain/eth_client.h"

namespace sigil::workers::billing {

// The token's decimals, and one cent in its smallest units (1.00 = 1,000,000; 0.01 = 10,000).
inline constexpr std::uint64_t TOKEN_DECIMALS = 6;
inline constexpr std::uint64_t TOKEN_UNITS_PER_CENT = 10000;

class ChainProcessor : public PaymentProcessor {
public:
    // `eth` answers the chain client of the current request (it may fail: no chain configured).
    ChainProcessor(const BillingSettings& settings, std::uint64_t chain_id, std::function<common::Result<EthClient*>()> eth);

    std::string Name() const override { return "chain"; }
    std::string ConfigMembers() const override;
    common::Result<PaymentIntent> Create(const std::string& customer, Cents cents) override;
    std::string AnswerMembers(const PaymentIntent& intent) const override;
    common::Result<bool> IsPaid(const PaymentIntent& intent) override;

    // keccak256("Paid(bytes32,address,uint256)"): the Paid event's topic 0.
    static common::Hash32 PaidTopic();

    // Asks the token for its decimals() once it has answered 6, never again. Errors: Suspended
    // "payments_misconfigured" (another answer, or the call reverts: the address is no such token;
    // payments are refused rather than credited at the wrong scale; logged once), the chain's errors.
    common::Status CheckToken();

private:
    common::Address20 m_token{};
    common::Address20 m_payments{};
    std::uint32_t m_confirmations = 1;
    std::uint64_t m_from_block = 0;
    std::uint64_t m_chain_id = 0;
    bool m_token_checked = false;
    bool m_misconfig_logged = false;
    std::function<common::Result<EthClient*>()> m_eth;
};

}  // namespace sigil::workers::billing
