// Which AccountConfig calls keyd signs for the API payers, and what each must carry: keyd checks the
// calldata against the caller's API key and, for conversion, the new admin's consent (sans-IO).
//
// A worker is the most exposed process (it parses every request and hosts the sandbox host), so keyd
// does not take its word for who is calling. Every relayed write names the HTTP caller's key hash
// (`callerKeyHash`, or the account's own hash for newAccount and convertToChainSecuredAccount); keyd
// signs only if that word is keccak256 of the API key the worker sent with the request. A worker
// therefore signs only for keys it has actually been shown, never for a hash it read on chain.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"
#include "common/secret.h"
#include "keyd/protocol.h"

namespace sigil::keyd {

// The EIP-712 window of the ConvertAccount consent (DESIGN.md section 4: +-300 s of keyd's clock).
constexpr std::int64_t CONSENT_WINDOW_SECONDS = 300;

// keccak256(0x19 0x01 || domainSeparator || hashStruct(ConvertAccount{address, issuedAt})) with the
// domain {name: "Sigil ChainSecured", version: "1", chainId}: the digest the new admin signed.
common::Hash32 ConvertAccountDigest(std::uint64_t chain_id, const common::Address20& new_admin, std::uint64_t issued_at);

// Checks one relayed write's calldata `data`:
//   * its selector is one of the relayed AccountConfig functions (keyd knows each one's key-hash
//     position); any other selector is refused, so a payer never signs a direct-path or admin call;
//   * the key-hash word equals keccak256(api_key), compared in constant time (an empty key never
//     matches);
//   * convertToChainSecuredAccount also needs `consent`: issuedAt within CONSENT_WINDOW_SECONDS of
//     `now_unix`, and the signature recovers (plain ECDSA) to the call's newAdmin on `chain_id`.
// Errors: Forbidden "relay_refused" with the reason (no key material in it).
common::Status CheckRelayedCall(common::ByteView data, const common::SecretBytes& api_key,
                                const std::optional<PayerTxRequest::Consent>& consent, std::uint64_t chain_id,
                                std::int64_t now_unix);

}  // namespace sigil::keyd
