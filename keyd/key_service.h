// keyd's request handler: the message table, the signing policy and every key derivation, sans-IO
// (one request payload in, one reply frame out), so tests drive it without a socket.
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "keyd/protocol.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::keyd {

// What keyd will sign for. Fixed at startup from the command line.
struct KeyPolicy {
    std::uint64_t chain_id = 0;          // the only chain id a payer transaction may carry
    common::Address20 contract{};        // AccountConfig: the only `to` a payer transaction may have
    std::uint32_t payer_count = 0;       // payer indices 0..payer_count-1 exist (<= IPC_MAX_PAYERS)
    // Spending caps: a compromised worker may ask for any fee, and each transaction's worst case
    // (gas_limit x max_fee_per_gas) is paid from a payer's balance. Defaults suit a busy L1.
    std::uint64_t max_fee_per_gas = DEFAULT_MAX_FEE_PER_GAS;
    std::uint64_t max_priority_fee_per_gas = DEFAULT_MAX_PRIORITY_FEE_PER_GAS;
    std::uint64_t max_gas_limit = DEFAULT_MAX_GAS_LIMIT;

    static constexpr std::uint64_t DEFAULT_MAX_FEE_PER_GAS = 500'000'000'000;         // 500 gwei
    static constexpr std::uint64_t DEFAULT_MAX_PRIORITY_FEE_PER_GAS = 50'000'000'000;  // 50 gwei
    static constexpr std::uint64_t DEFAULT_MAX_GAS_LIMIT = 15'000'000;                 // half a 30M block
};

class KeyService {
public:
    // `root` must be ROOT_KEY_SIZE bytes and payer_count <= IPC_MAX_PAYERS.
    // Errors: Internal "invalid_root_key", InvalidInput "invalid_policy" (chain id 0, contract
    // address zero, too many payers, a cap of 0), or a derivation error for the payer wallets.
    static common::Result<KeyService> Create(common::SecretBytes root, const KeyPolicy& policy);

    // Answers one request payload (type byte first) with one complete reply frame. Never fails:
    // an unknown type, a malformed body or a refused request is a Failure reply (with a code).
    // Logs one line per refusal, never key material.
    common::SecretBuffer Handle(common::ByteView payload);

    // How far a receipt's issuedAt may be from keyd's clock (a worker stamps the time; keyd checks it).
    static constexpr std::int64_t RECEIPT_CLOCK_SKEW_S = 300;

    // The wall clock (unix seconds) the ConvertAccount and receipt windows are checked against;
    // tests set their own.
    void SetClock(std::function<std::int64_t()> now) { m_now = std::move(now); }

    // The message table (OpenSSH's dispatch-table shape): the requests keyd answers at all.
    struct Dispatch {
        keyd::KeydMessage type;
        std::string_view name;
        common::SecretBuffer (KeyService::*handler)(common::ByteView payload);
    };

private:
    KeyService(common::SecretBytes root, const KeyPolicy& policy) : m_root(std::move(root)), m_policy(policy) {}

    common::SecretBuffer HandlePing(common::ByteView payload);
    common::SecretBuffer HandleMintPath(common::ByteView payload);
    common::SecretBuffer HandleGetPkpPublic(common::ByteView payload);
    common::SecretBuffer HandleGetPkpKeys(common::ByteView payload);
    common::SecretBuffer HandleGetActionKey(common::ByteView payload);
    common::SecretBuffer HandleGetActionPublic(common::ByteView payload);
    common::SecretBuffer HandleGetPayers(common::ByteView payload);
    common::SecretBuffer HandleSignPayerTx(common::ByteView payload);
    // Receipts (keyd/receipt_protocol.h): the receipt key signs only the digest keyd builds itself.
    common::SecretBuffer HandleSignReceipt(common::ByteView payload);
    common::SecretBuffer HandleGetReceiptPublic(common::ByteView payload);

    static const Dispatch* Lookup(std::uint8_t type);

    common::SecretBytes m_root;
    KeyPolicy m_policy;
    std::function<std::int64_t()> m_now = [] { return static_cast<std::int64_t>(std::time(nullptr)); };
    common::Address20 m_admin_payer{};
    std::vector<common::Address20> m_payers;  // addresses of payer 0..payer_count-1
    common::SecretBytes m_receipt_key;        // common::DeriveReceiptKey; never leaves this object
    keyd::PublicKeyInfo m_receipt_public{};
};

}  // namespace sigil::keyd
