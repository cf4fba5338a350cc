#include "workers/api/auth.h"

#include <algorithm>
#include <cctype>

#include "common/keccak.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

// A view, not a copy: the key must not be copied outside its wiping buffer.
std::string_view Trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

common::Error Missing() {
    return MakeError(ErrorKind::Unauthenticated, "missing_api_key",
                     "send an API key in X-Api-Key or Authorization: Bearer <key>");
}

common::Error Invalid() {
    return MakeError(ErrorKind::Unauthenticated, "invalid_api_key", "the API key is not valid");
}

common::Error Ambiguous(std::string why) {
    return MakeError(ErrorKind::InvalidInput, "ambiguous_api_key", std::move(why) + "; send exactly one API key");
}

}  // namespace

common::Result<common::SecretBytes> ExtractApiKey(const HttpRequest& request) {
    std::string_view key;
    const auto api_key = request.headers.find("x-api-key");
    const auto authorization = request.headers.find("authorization");
    // A key never holds ',' (keys are base64); one here means the header came twice.
    if (api_key != request.headers.end() && api_key->second.find(',') != std::string::npos) {
        return Ambiguous("X-Api-Key was sent more than once");
    }
    if (api_key != request.headers.end() && !Trim(api_key->second).empty()) {
        key = Trim(api_key->second);
    } else if (authorization != request.headers.end()) {
        if (authorization->second.find(',') != std::string::npos) return Ambiguous("Authorization was sent more than once");
        const std::string_view v = Trim(authorization->second);
        if (v.size() < 7) return Missing();
        const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
        const std::string_view bearer = "bearer";
        if (!std::equal(bearer.begin(), bearer.end(), v.begin(), [&](char a, char b) { return a == lower(b); }) ||
            (v[6] != ' ' && v[6] != '\t')) {
            return Missing();
        }
        key = Trim(v.substr(7));
    }
    if (key.empty()) return Missing();
    if (key.size() > MAX_API_KEY_LENGTH) return Invalid();
    for (unsigned char c : key) {
        if (c < 0x21 || c == 0x7f) return Invalid();
    }
    return common::SecretBytes(common::ByteView(reinterpret_cast<const std::uint8_t*>(key.data()), key.size()));
}

common::Uint256 ApiKeyHash(std::string_view api_key) {
    return common::Uint256::FromWord(common::Keccak256Hash(api_key));
}

common::Result<Caller> Authenticate(Service& service, const HttpRequest& request, AuthRequirement requirement) {
    auto key = ExtractApiKey(request);
    if (!key.ok()) return key.error();
    auto reader = service.Reader();
    if (!reader.ok()) return reader.error();
    const common::Uint256 key_hash = ApiKeyHash(key->text());
    auto info = (*reader)->ResolveKey(key_hash);
    if (!info.ok()) return info.error();
    if (!info->valid) return Invalid();
    if (requirement == AuthRequirement::AccountOwner && !info->is_owner) {
        return MakeError(ErrorKind::Forbidden, "owner_only", "only the account's master key may do this");
    }
    // keyd signs this request's relayed writes only for the key that was actually sent.
    service.Credential().api_key = std::move(key).value();
    return Caller{key_hash, info->account_hash, info->is_owner};
}

Authenticator MakeAuthenticator(Service& service) {
    return [&service](const HttpRequest& request, AuthRequirement requirement) -> common::Result<std::any> {
        auto caller = Authenticate(service, request, requirement);
        if (!caller.ok()) return caller.error();
        return std::any(*caller);
    };
}

}  // namespace sigil::workers
