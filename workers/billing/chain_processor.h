// The `chain` payment processor: the client pays an ERC-20 stablecoin (6 decimals) through the
// payments contract's pay(bytes32 reference, uint256 amount); confirm_payment finds the Paid event
// with the intent's reference and at least its amount, `confirmations` blocks deep.
#pragma once

#include <functional>

#include "common/bytes.h"
#include "workers/billing/processor.h"
#include "workers/billing/settings.h"
#include "workers/chain/eth_client.h"

namespace sigil::workers::billing {

// One cent in the token's smallest units (6 decimals: 1.00 = 1,000,000; 0.01 = 10,000).
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

private:
    common::Address20 m_token{};
    common::Address20 m_payments{};
    std::uint32_t m_confirmations = 1;
    std::uint64_t m_from_block = 0;
    std::uint64_t m_chain_id = 0;
    std::function<common::Result<EthClient*>()> m_eth;
};

}  // namespace sigil::workers::billing
