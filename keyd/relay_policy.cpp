#include "keyd/relay_policy.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/keccak.h"
#include "common/secp256k1.h"

namespace sigil::keyd {
namespace {

using common::Address20;
using common::ByteView;
using common::Hash32;

constexpr std::size_t SELECTOR_SIZE = 4;
constexpr std::size_t WORD = 32;

// The relayed functions the worker sends (workers/chain/account_config.cpp) and the argument index
// of the word naming the caller's key: 0 where the account's own hash is the caller's (the master
// key creates or converts its account), 1 for every (accountHash, callerKeyHash, ...) write.
struct RelayedCall {
    std::string_view signature;
    std::size_t key_word;
    bool needs_consent;
};
constexpr RelayedCall RELAYED[] = {
    {"newAccount(uint256,address)", 0, false},
    {"convertToChainSecuredAccount(uint256,address)", 0, true},
    {"relaySetUsageApiKey(uint256,uint256,uint256,uint256,uint256,string,string,bool,bool,bool,"
     "uint256[],uint256[],uint256[],uint256[])", 1, false},
    {"updateUsageApiKeyMetadata(uint256,uint256,uint256,string,string)", 1, false},
    {"removeUsageApiKey(uint256,uint256,uint256)", 1, false},
    {"addGroup(uint256,uint256,string,string,address[],bytes32[])", 1, false},
    {"updateGroup(uint256,uint256,uint256,string,string,address[],bytes32[])", 1, false},
    {"removeGroup(uint256,uint256,uint256)", 1, false},
    {"addActionToGroup(uint256,uint256,uint256,bytes32)", 1, false},
    {"removeActionFromGroup(uint256,uint256,uint256,bytes32)", 1, false},
    {"addPkpToGroup(uint256,uint256,uint256,address)", 1, false},
    {"removePkpFromGroup(uint256,uint256,uint256,address)", 1, false},
    {"relayRegisterWalletDerivation(uint256,uint256,address,uint256,string,string)", 1, false},
    {"addAction(uint256,uint256,bytes32,string,string)", 1, false},
    {"updateActionMetadata(uint256,uint256,bytes32,string,string)", 1, false},
    {"deleteAction(uint256,uint256,bytes32)", 1, false},
};

common::Error Refused(std::string what) {
    return common::MakeError(common::ErrorKind::Forbidden, "relay_refused", std::move(what));
}

const RelayedCall* Lookup(ByteView data) {
    if (data.size() < SELECTOR_SIZE) return nullptr;
    for (const RelayedCall& call : RELAYED) {
        const Hash32 h = common::Keccak256Hash(call.signature);
        if (std::equal(h.begin(), h.begin() + SELECTOR_SIZE, data.begin())) return &call;
    }
    return nullptr;
}

// The static argument `index` (one 32-byte word after the selector), or empty if the data is short.
ByteView Word(ByteView data, std::size_t index) {
    const std::size_t at = SELECTOR_SIZE + index * WORD;
    if (data.size() < at + WORD) return {};
    return data.subspan(at, WORD);
}

void PutU64Word(std::uint8_t* word, std::uint64_t v) {
    std::memset(word, 0, WORD);
    for (int i = 0; i < 8; ++i) word[WORD - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
}

common::Status CheckConsent(ByteView data, const std::optional<PayerTxRequest::Consent>& consent,
                            std::uint64_t chain_id, std::int64_t now_unix) {
    if (!consent) return Refused("conversion without the new admin's ConvertAccount signature");
    const ByteView admin_word = Word(data, 1);
    if (admin_word.empty() || !std::all_of(admin_word.begin(), admin_word.begin() + 12, [](std::uint8_t b) { return b == 0; })) {
        return Refused("conversion calldata without a newAdmin address");
    }
    Address20 new_admin{};
    std::memcpy(new_admin.data(), admin_word.data() + 12, new_admin.size());
    const auto issued = static_cast<std::int64_t>(std::min<std::uint64_t>(consent->issued_at, INT64_MAX / 2));
    if (issued < now_unix - CONSENT_WINDOW_SECONDS || issued > now_unix + CONSENT_WINDOW_SECONDS) {
        return Refused("ConvertAccount issuedAt is outside +-300 s of keyd's clock");
    }
    auto signer = common::RecoverAddress(ConvertAccountDigest(chain_id, new_admin, consent->issued_at), consent->signature);
    if (!signer.ok() || *signer != new_admin) return Refused("the ConvertAccount signature is not the new admin's");
    return common::Success();
}

}  // namespace

Hash32 ConvertAccountDigest(std::uint64_t chain_id, const Address20& new_admin, std::uint64_t issued_at) {
    static const Hash32 DOMAIN_TYPE = common::Keccak256Hash(std::string_view("EIP712Domain(string name,string version,uint256 chainId)"));
    static const Hash32 CONVERT_TYPE = common::Keccak256Hash(std::string_view("ConvertAccount(address address,uint256 issuedAt)"));
    std::uint8_t domain[4 * WORD];
    std::memcpy(domain, DOMAIN_TYPE.data(), WORD);
    const Hash32 name = common::Keccak256Hash(std::string_view("Sigil ChainSecured"));
    const Hash32 version = common::Keccak256Hash(std::string_view("1"));
    std::memcpy(domain + WORD, name.data(), WORD);
    std::memcpy(domain + 2 * WORD, version.data(), WORD);
    PutU64Word(domain + 3 * WORD, chain_id);
    const Hash32 separator = common::Keccak256Hash(ByteView(domain, sizeof domain));

    std::uint8_t message[3 * WORD] = {};
    std::memcpy(message, CONVERT_TYPE.data(), WORD);
    std::memcpy(message + WORD + 12, new_admin.data(), new_admin.size());
    PutU64Word(message + 2 * WORD, issued_at);
    const Hash32 struct_hash = common::Keccak256Hash(ByteView(message, sizeof message));

    std::uint8_t digest_input[2 + 2 * WORD] = {0x19, 0x01};
    std::memcpy(digest_input + 2, separator.data(), WORD);
    std::memcpy(digest_input + 2 + WORD, struct_hash.data(), WORD);
    return common::Keccak256Hash(ByteView(digest_input, sizeof digest_input));
}

common::Status CheckRelayedCall(ByteView data, const common::SecretBytes& api_key,
                                const std::optional<PayerTxRequest::Consent>& consent, std::uint64_t chain_id,
                                std::int64_t now_unix) {
    const RelayedCall* call = Lookup(data);
    if (call == nullptr) return Refused("not a relayed AccountConfig call");
    const ByteView named = Word(data, call->key_word);
    if (named.empty()) return Refused("calldata too short for its key hash");
    if (api_key.empty()) return Refused("no API key came with the relayed write");
    const Hash32 hashed = common::Keccak256Hash(api_key.view());
    if (!common::ConstantTimeEqual(ByteView(hashed), named)) {
        return Refused("the call's key hash is not keccak256 of the caller's API key");
    }
    if (call->needs_consent) return CheckConsent(data, consent, chain_id, now_unix);
    if (consent) return Refused("a consent signature only goes with a conversion");
    return common::Success();
}

}  // namespace sigil::keyd
