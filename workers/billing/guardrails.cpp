#include "workers/billing/guardrails.h"

#include <algorithm>
#include <cctype>

namespace sigil::workers::billing {

using common::ErrorKind;
using common::MakeError;

std::int64_t RefilledTokens(std::int64_t tokens, std::int64_t elapsed_ms, std::int64_t rate_milli, std::int64_t burst) {
    const std::int64_t elapsed = std::clamp<std::int64_t>(elapsed_ms, 0, MAX_REFILL_MS);
    return std::min(burst * MICRO_TOKENS, tokens + elapsed * rate_milli);
}

int RetryAfterSeconds(std::int64_t tokens, std::int64_t rate_milli) {
    if (rate_milli <= 0) return 1;
    const std::int64_t missing = std::max<std::int64_t>(0, MICRO_TOKENS - tokens);
    const std::int64_t ms = (missing + rate_milli - 1) / rate_milli;
    return static_cast<int>(std::clamp<std::int64_t>((ms + 999) / 1000, 1, MAX_WINDOW_SECONDS));
}

std::int64_t WindowStartMs(std::int64_t now_ms, std::int64_t window_seconds) {
    return now_ms - window_seconds * 1000 + 1;
}

common::Result<std::string> CanonicalOrigin(const std::string& origin) {
    auto bad = [&origin](const std::string& why) {
        return MakeError(ErrorKind::InvalidInput, "invalid_origin",
                         "origin '" + origin.substr(0, MAX_ORIGIN_BYTES) + "' " + why);
    };
    if (origin.empty() || origin.size() > MAX_ORIGIN_BYTES) return bad("must be 1 to 200 bytes");
    std::string s;
    for (unsigned char c : origin) {
        if (c <= 0x20 || c >= 0x7f) return bad("must be printable ASCII without spaces");
        s += static_cast<char>(std::tolower(c));
    }
    std::string scheme;
    if (s.rfind("https://", 0) == 0) scheme = "https";
    else if (s.rfind("http://", 0) == 0) scheme = "http";
    else return bad("must start with https:// or http://");
    std::string rest = s.substr(scheme.size() + 3);
    if (!rest.empty() && rest.back() == '/') rest.pop_back();  // what some clients write; an Origin never has it
    if (rest.empty() || rest.find_first_of("/?#@\\") != std::string::npos) {
        return bad("must be scheme://host[:port] with no path, query or user");
    }
    std::string host = rest;
    std::string port;
    const auto colon = rest.rfind(':');
    if (colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
        host = rest.substr(0, colon);
        port = rest.substr(colon + 1);
        if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit) ||
            std::stoi(port) == 0 || std::stoi(port) > 65535) {
            return bad("has an invalid port");
        }
        port = std::to_string(std::stoi(port));
        if ((scheme == "https" && port == "443") || (scheme == "http" && port == "80")) port.clear();
    }
    if (host.empty()) return bad("has no host");
    for (char c : host) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '[' || c == ']' || c == ':' ||
              c == '_')) {
            return bad("has an invalid host");
        }
    }
    return scheme + "://" + host + (port.empty() ? "" : ":" + port);
}

bool OriginAllowed(const std::vector<std::string>& allowed, const std::string& origin) {
    auto canonical = CanonicalOrigin(origin);
    if (!canonical.ok()) return false;  // "null" (a sandboxed page, a file) and anything odd: never listed
    return std::find(allowed.begin(), allowed.end(), *canonical) != allowed.end();
}

common::Status ValidateGuardrails(const KeyGuardrails& g) {
    auto bad = [](const std::string& field, const std::string& why) {
        return MakeError(ErrorKind::InvalidInput, "invalid_guardrails", field + " " + why);
    };
    auto rate = [&](const char* rate_field, std::int64_t r, const char* burst_field, std::int64_t b) -> common::Status {
        if (r == 0 && b == 0) return common::Success();
        if (r < MIN_RATE_MILLI || r > MAX_RATE_MILLI) return bad(rate_field, "must be 0.001 to 10000 per second");
        if (b < 1 || b > MAX_BURST) return bad(burst_field, "must be 1 to 100000");
        return common::Success();
    };
    SIGIL_TRY_STATUS(rate("requests_per_second", g.rate_milli, "burst", g.burst));
    SIGIL_TRY_STATUS(rate("requests_per_second_per_address", g.address_rate_milli, "burst_per_address", g.address_burst));
    if (g.max_runs_in_flight < -1 || g.max_runs_in_flight > MAX_RUNS_IN_FLIGHT) {
        return bad("max_runs_in_flight", "must be 0 (no cap) to 100000");
    }
    if (g.window_cap_cents != 0 || g.window_seconds != 0) {
        if (g.window_cap_cents < 1 || g.window_cap_cents > 1'000'000'000'000) {
            return bad("spend_cap_cents", "must be 1 to 10^12 cents");
        }
        if (g.window_seconds < 1 || g.window_seconds > MAX_WINDOW_SECONDS) {
            return bad("spend_window_seconds", "must be 1 to 31622400 (366 days)");
        }
    }
    if (g.allowed_origins.size() > MAX_ORIGINS) return bad("allowed_origins", "holds at most 32 origins");
    for (const auto& o : g.allowed_origins) {
        auto canonical = CanonicalOrigin(o);
        if (!canonical.ok()) return bad("allowed_origins", canonical.error().message);
        if (*canonical != o) return bad("allowed_origins", "entry '" + o + "' is not canonical (" + *canonical + ")");
    }
    return common::Success();
}

std::string JoinOrigins(const std::vector<std::string>& origins) {
    std::string out;
    for (const auto& o : origins) out += (out.empty() ? "" : "\n") + o;
    return out;
}

std::vector<std::string> SplitOrigins(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto end = text.find('\n', start);
        out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

}  // namespace sigil::workers::billing
