// API-key authentication: X-Api-Key or Authorization: Bearer, hashed and resolved on chain.
#pragma once

#include <any>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/secret.h"
#include "common/uint256.h"
#include "workers/http/http.h"
#include "workers/http/router.h"
#include "workers/chain/caller.h"
#include "workers/chain/service.h"

namespace sigil::workers {

inline constexpr std::size_t MAX_API_KEY_LENGTH = 256;

// The key from X-Api-Key, else from "Authorization: Bearer <key>" (scheme case-insensitive, value
// trimmed), in a wiping buffer: an account's master key is the owner wallet's private key, so the
// worker's own copy never lives in a std::string (the header text itself belongs to the request).
// Errors: Unauthenticated "missing_api_key" (neither header, empty value, another scheme),
// "invalid_api_key" (longer than MAX_API_KEY_LENGTH or with control characters).
common::Result<common::SecretBytes> ExtractApiKey(const HttpRequest& request);

// keccak256 of the key's UTF-8 bytes, as the contract stores it.
common::Uint256 ApiKeyHash(std::string_view api_key);

// Resolves the caller on chain. Errors: Unauthenticated "invalid_api_key" (unknown, revoked or
// expired key, or the master key of a ChainSecured account), Forbidden "owner_only" when
// `requirement` is AccountOwner and the key is a usage key, the chain's Unavailable/Timeout errors.
common::Result<Caller> Authenticate(Service& service, const HttpRequest& request, AuthRequirement requirement);

// The Authenticator to install on the router (wraps Authenticate; handlers read
// std::any_cast<Caller>(ctx.auth)).
Authenticator MakeAuthenticator(Service& service);

}  // namespace sigil::workers
