#include "workers/api/auth.h"

#include <algorithm>
#include <cctype>

#include "common/keccak.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

std::string Trim(std::string s) {
    const auto not_space = [](unsigned char c) { return c != ' ' && c != '\t'; };
    s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
    s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
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

common::Result<std::string> ExtractApiKey(const HttpRequest& request) {
    std::string key;
    const auto x_api_key = request.Header("x-api-key");
    // A key never holds ',' (keys are base64); one here means the header came twice.
    if (x_api_key && x_api_key->find(',') != std::string::npos) return Ambiguous("X-Api-Key was sent more than once");
    if (x_api_key && !Trim(*x_api_key).empty()) {
        key = Trim(*x_api_key);
    } else if (auto a = request.Header("authorization")) {
        if (a->find(',') != std::string::npos) return Ambiguous("Authorization was sent more than once");
        const std::string v = Trim(*a);
        if (v.size() < 7) return Missing();
        std::string scheme = v.substr(0, 6);
        std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
        if (scheme != "bearer" || (v[6] != ' ' && v[6] != '\t')) return Missing();
        key = Trim(v.substr(7));
    }
    if (key.empty()) return Missing();
    if (key.size() > MAX_API_KEY_LENGTH) return Invalid();
    for (unsigned char c : key) {
        if (c < 0x21 || c == 0x7f) return Invalid();
    }
    return key;
}

common::Uint256 ApiKeyHash(const std::string& api_key) {
    return common::Uint256::FromWord(common::Keccak256Hash(std::string_view(api_key)));
}

common::Result<Caller> Authenticate(Service& service, const HttpRequest& request, AuthRequirement requirement) {
    auto key = ExtractApiKey(request);
    if (!key.ok()) return key.error();
    auto reader = service.Reader();
    if (!reader.ok()) return reader.error();
    const common::Uint256 key_hash = ApiKeyHash(*key);
    auto info = (*reader)->ResolveKey(key_hash);
    if (!info.ok()) return info.error();
    if (!info->valid) return Invalid();
    if (requirement == AuthRequirement::AccountOwner && !info->is_owner) {
        return MakeError(ErrorKind::Forbidden, "owner_only", "only the account's master key may do this");
    }
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
