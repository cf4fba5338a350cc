#include "workers/billing/chain_processor.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "common/hex.h"
#include "common/keccak.h"
#include "common/log.h"
#include "common/random.h"
#include "common/secp256k1.h"
#include "common/uint256.h"

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;

ChainProcessor::ChainProcessor(const BillingSettings& settings, std::uint64_t chain_id,
                               std::function<common::Result<EthClient*>()> eth)
    : m_confirmations(settings.confirmations), m_from_block(settings.payments_from_block), m_chain_id(chain_id),
      m_eth(std::move(eth)) {
    // BillingSettings::FromConfig checked both addresses.
    if (auto a = common::ParseAddress(settings.token_address); a.ok()) m_token = *a;
    if (auto a = common::ParseAddress(settings.payments_address); a.ok()) m_payments = *a;
}

common::Hash32 ChainProcessor::PaidTopic() { return common::Keccak256Hash(std::string_view("Paid(bytes32,address,uint256)")); }

std::string ChainProcessor::ConfigMembers() const {
    return "\"chain_id\":" + std::to_string(m_chain_id) + ",\"token\":\"" + common::ChecksumAddress(m_token) +
           "\",\"token_decimals\":" + std::to_string(TOKEN_DECIMALS) + ",\"payments_contract\":\"" +
           common::ChecksumAddress(m_payments) + "\"";
}

common::Status ChainProcessor::CheckToken() {
    if (m_token_checked) return common::Success();
    SIGIL_TRY(eth, m_eth());
    static constexpr std::uint8_t DECIMALS_SELECTOR[4] = {0x31, 0x3c, 0xe5, 0x67};  // decimals()
    SIGIL_TRY(answer, (*eth)->Call(m_token, common::ByteView(DECIMALS_SELECTOR, sizeof DECIMALS_SELECTOR)));
    std::optional<std::uint64_t> decimals;
    if (!answer->reverted && answer->data.size() == 32) {
        if (auto v = common::Uint256::FromBigEndian(common::ByteView(answer->data.data(), 32)); v.ok()) decimals = v->ToUint64();
    }
    if (decimals != TOKEN_DECIMALS) {
        auto e = MakeError(ErrorKind::Suspended, "payments_misconfigured",
                           "the payment token " + common::ChecksumAddress(m_token) + " answers decimals() " +
                               (decimals ? std::to_string(*decimals) : std::string("with no number")) + ", not " +
                               std::to_string(TOKEN_DECIMALS) + " ([billing] token_address): payments are refused");
        // The operator's mistake, not the client's: said in the log once per worker.
        if (!m_misconfig_logged) common::LogError(e.message);
        m_misconfig_logged = true;
        return e;
    }
    m_token_checked = true;
    return common::Success();
}

common::Result<PaymentIntent> ChainProcessor::Create(const std::string& customer, Cents cents) {
    SIGIL_TRY_STATUS(CheckToken());
    SIGIL_TRY(eth, m_eth());
    // The reference is drawn below, so no transaction mined up to the current head can carry it: a
    // payment for this intent is in a later block, and the search starts there.
    SIGIL_TRY(head, (*eth)->BlockNumber());
    std::array<std::uint8_t, 16> id{};
    std::array<std::uint8_t, 32> reference{};
    common::RandomFill(id.data(), id.size());
    common::RandomFill(reference.data(), reference.size());
    PaymentIntent intent;
    intent.id = "pi_" + common::HexEncode(id);
    intent.customer = customer;
    intent.amount_cents = cents;
    intent.processor = "chain";
    intent.reference = common::HexEncode(reference, true);
    intent.client_secret = intent.reference;  // what the client passes to pay()
    intent.from_block = std::max(*head + 1, m_from_block);
    intent.created_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    return intent;
}

std::string ChainProcessor::AnswerMembers(const PaymentIntent& intent) const {
    const std::uint64_t amount = static_cast<std::uint64_t>(intent.amount_cents) * TOKEN_UNITS_PER_CENT;
    return "\"pay\":{\"chain_id\":" + std::to_string(m_chain_id) + ",\"token\":\"" + common::ChecksumAddress(m_token) +
           "\",\"payments_contract\":\"" + common::ChecksumAddress(m_payments) + "\",\"amount\":\"" +
           std::to_string(amount) + "\",\"reference\":\"" + intent.reference + "\"}";
}

common::Result<bool> ChainProcessor::IsPaid(const PaymentIntent& intent) {
    SIGIL_TRY_STATUS(CheckToken());
    SIGIL_TRY(eth, m_eth());
    auto reference = common::HexDecodeExact(intent.reference, 32, common::HexPrefix::Required);
    if (!reference.ok()) return MakeError(ErrorKind::Internal, "invalid_reference", "the intent's reference is not 32 bytes");
    SIGIL_TRY(head, (*eth)->BlockNumber());
    if (*head + 1 < m_confirmations) return false;
    const std::uint64_t deepest = *head + 1 - m_confirmations;  // a log in this block has `confirmations` blocks
    // Intents stored before they carried their block have 0 here: searched from the configured start.
    const std::uint64_t from = std::max(intent.from_block, m_from_block);
    if (deepest < from) return false;
    common::Hash32 ref{};
    std::copy(reference->begin(), reference->end(), ref.begin());
    SIGIL_TRY(logs, (*eth)->GetLogs(m_payments, from, deepest, {PaidTopic(), ref}));
    // Several payments with one reference add up; the service credits the intent once (the ledger).
    const auto want = common::Uint256::FromUint64(static_cast<std::uint64_t>(intent.amount_cents) * TOKEN_UNITS_PER_CENT);
    common::Uint256 paid;
    for (const auto& log : *logs) {
        if (log.data.size() != 32 || log.topics.size() != 3) continue;
        auto amount = common::Uint256::FromBigEndian(common::ByteView(log.data.data(), 32));
        if (!amount.ok()) continue;
        auto sum = paid.CheckedAdd(*amount);
        if (!sum) return true;  // more than 2^256 units: certainly enough
        paid = *sum;
    }
    return paid >= want;
}

}  // namespace sigil::workers::billing
