#include "workers/actions/fetch_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>

namespace sigil::workers {
namespace {

using common::Error;
using common::ErrorKind;
using common::MakeError;

constexpr std::size_t MAX_URL_BYTES = 64u << 10;
constexpr std::size_t MAX_NAME_BYTES = 253;
constexpr std::size_t MAX_LABEL_BYTES = 63;

Error BadRequest(std::string message) { return MakeError(ErrorKind::InvalidInput, "fetch_bad_request", std::move(message)); }

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

std::string ToLower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = Lower(c);
    return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// ---- classification ----

struct V4Net {
    std::uint32_t net;
    int prefix;
    AddressClass why;
};

constexpr V4Net V4_NON_PUBLIC[] = {
    {0x00000000, 8, AddressClass::Unspecified},     // "this network"
    {0x0A000000, 8, AddressClass::Private},
    {0x64400000, 10, AddressClass::SharedNat},
    {0x7F000000, 8, AddressClass::Loopback},
    {0xA9FE0000, 16, AddressClass::LinkLocal},      // cloud metadata (169.254.169.254)
    {0xAC100000, 12, AddressClass::Private},
    {0xC0000000, 24, AddressClass::Reserved},       // IETF protocol assignments
    {0xC0000200, 24, AddressClass::Documentation},  // TEST-NET-1
    {0xC0A80000, 16, AddressClass::Private},
    {0xC6120000, 15, AddressClass::Benchmarking},
    {0xC6336400, 24, AddressClass::Documentation},  // TEST-NET-2
    {0xCB007100, 24, AddressClass::Documentation},  // TEST-NET-3
    {0xE0000000, 4, AddressClass::Multicast},
    {0xF0000000, 4, AddressClass::Reserved},        // and the limited broadcast address
};

AddressClass ClassifyV4(std::uint32_t a) {  // host byte order
    for (const V4Net& n : V4_NON_PUBLIC) {
        const std::uint32_t mask = ~std::uint32_t{0} << (32 - n.prefix);
        if ((a & mask) == n.net) return n.why;
    }
    return AddressClass::Public;
}

std::uint32_t V4At(const unsigned char* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | std::uint32_t{p[3]};
}

bool HasPrefix(const unsigned char* b, std::initializer_list<unsigned char> prefix) {
    return std::equal(prefix.begin(), prefix.end(), b);
}

AddressClass ClassifyV6(const unsigned char* b) {
    static constexpr unsigned char ZERO[10] = {};
    // ::ffff:a.b.c.d (mapped) reaches the IPv4 host; ::a.b.c.d (compatible, which includes :: and ::1)
    // is judged the same way so that no spelling of a private IPv4 address passes.
    if (std::equal(ZERO, ZERO + 10, b)) {
        const bool mapped = b[10] == 0xff && b[11] == 0xff;
        const bool compatible = b[10] == 0 && b[11] == 0;
        if (compatible && V4At(b + 12) == 1) return AddressClass::Loopback;  // ::1, not 0.0.0.1
        if (mapped || compatible) return ClassifyV4(V4At(b + 12));
    }
    if (HasPrefix(b, {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0})) return ClassifyV4(V4At(b + 12));  // NAT64
    if (HasPrefix(b, {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01})) return AddressClass::Reserved;  // local-use NAT64
    if (HasPrefix(b, {0x20, 0x02})) return ClassifyV4(V4At(b + 2));                        // 6to4
    if (HasPrefix(b, {0x01, 0x00, 0, 0, 0, 0, 0, 0})) return AddressClass::Reserved;        // discard-only
    if (HasPrefix(b, {0x20, 0x01, 0x00, 0x00})) return AddressClass::Teredo;
    if (HasPrefix(b, {0x20, 0x01, 0x0d, 0xb8})) return AddressClass::Documentation;
    if ((b[0] & 0xfe) == 0xfc) return AddressClass::UniqueLocal;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressClass::LinkLocal;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressClass::SiteLocal;
    if (b[0] == 0xff) return AddressClass::Multicast;
    return AddressClass::Public;
}

IpAddress Canonical(int family, const unsigned char* raw) {
    IpAddress ip;
    ip.family = family;
    static constexpr unsigned char MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (family == AF_INET) {
        std::memcpy(ip.bytes.data(), raw, 4);
    } else if (std::equal(MAPPED, MAPPED + 12, raw)) {
        ip.family = AF_INET;
        std::memcpy(ip.bytes.data(), raw + 12, 4);
    } else {
        std::memcpy(ip.bytes.data(), raw, 16);
    }
    return ip;
}

// ---- URL parsing ----

// One part of an IPv4 number form: decimal, 0-prefixed octal, or 0x-prefixed hex ("0x" alone is
// 0, as in WHATWG). nullopt when a digit does not belong to the base or the value passes 2^32.
std::optional<std::uint64_t> ParseIpv4Part(std::string_view part) {
    int base = 10;
    if (part.size() >= 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
        base = 16;
        part.remove_prefix(2);
    } else if (part.size() >= 2 && part[0] == '0') {
        base = 8;
        part.remove_prefix(1);
    }
    std::uint64_t value = 0;
    for (char c : part) {
        int d;
        if (IsDigit(c)) d = c - '0';
        else if (base == 16 && IsHexDigit(c)) d = Lower(c) - 'a' + 10;
        else return std::nullopt;
        if (d >= base) return std::nullopt;
        value = value * base + static_cast<unsigned>(d);
        if (value > 0xFFFFFFFFull) return std::nullopt;
    }
    return value;
}

// WHATWG's "ends in a number": the last label is all digits, or 0x followed by hex digits. Such
// a host is an IPv4 address or nothing (glibc's resolver would read "0x7f.1" as 127.0.0.1).
bool EndsInNumber(const std::vector<std::string_view>& labels) {
    const std::string_view last = labels.back();
    if (!last.empty() && std::all_of(last.begin(), last.end(), IsDigit)) return true;
    return last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') &&
           std::all_of(last.begin() + 2, last.end(), IsHexDigit);
}

std::optional<IpAddress> ParseIpv4NumberForm(const std::vector<std::string_view>& labels) {
    if (labels.size() > 4) return std::nullopt;
    std::uint64_t address = 0;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i].empty()) return std::nullopt;
        auto part = ParseIpv4Part(labels[i]);
        if (!part) return std::nullopt;
        const bool last = i + 1 == labels.size();
        if (!last) {
            if (*part > 255) return std::nullopt;
            address |= *part << (8 * (3 - i));
        } else {
            const int rest_bits = 8 * static_cast<int>(4 - i);
            if (rest_bits < 64 && *part >> rest_bits != 0) return std::nullopt;
            address |= *part;
        }
    }
    IpAddress ip;
    ip.family = AF_INET;
    for (int i = 0; i < 4; ++i) ip.bytes[i] = static_cast<unsigned char>(address >> (8 * (3 - i)));
    return ip;
}

std::vector<std::string_view> SplitLabels(std::string_view host) {
    std::vector<std::string_view> labels;
    std::size_t start = 0;
    for (;;) {
        const auto dot = host.find('.', start);
        labels.push_back(host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) return labels;
        start = dot + 1;
    }
}

bool IsNameChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '-' || c == '_'; }

// A host that is not bracketed: an IPv4 number form or a DNS name. `raw` is not empty.
common::Status ParseHost(std::string_view raw, FetchUrl& out) {
    for (char c : raw) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x80) {
            return BadRequest("fetch URL host is not ASCII; write an internationalized name in its ASCII form (xn--...)");
        }
        if (c == '%') return BadRequest("fetch URL host contains '%': percent-encoded hosts are not accepted");
        if (c != '.' && !IsNameChar(c)) {
            return BadRequest(std::string("fetch URL host contains '") + c + "', which no host name has");
        }
    }
    std::string host = ToLower(raw);
    if (host.size() > 1 && host.back() == '.') host.pop_back();  // "example.com." is example.com
    const auto labels = SplitLabels(host);
    if (EndsInNumber(labels)) {
        auto ip = ParseIpv4NumberForm(labels);
        if (!ip) return BadRequest("fetch URL host " + host + " ends in a number but is not an IPv4 address");
        out.host_kind = HostKind::Ipv4;
        out.address = ip;
        out.host = ip->ToString();
        return common::Success();
    }
    if (host.size() > MAX_NAME_BYTES) return BadRequest("fetch URL host name is longer than 253 characters");
    for (std::string_view label : labels) {
        if (label.empty()) return BadRequest("fetch URL host " + host + " has an empty label");
        if (label.size() > MAX_LABEL_BYTES) return BadRequest("fetch URL host has a label longer than 63 characters");
    }
    out.host_kind = HostKind::Name;
    out.host = std::move(host);
    return common::Success();
}

common::Status ParseBracketedHost(std::string_view inside, FetchUrl& out) {
    if (inside.find('%') != std::string_view::npos) return BadRequest("fetch URL IPv6 host carries a zone (%), which is not accepted");
    auto ip = ParseIpAddress(inside);
    if (!ip || inside.find(':') == std::string_view::npos) return BadRequest("fetch URL host [" + std::string(inside) + "] is not an IPv6 address");
    out.host_kind = ip->family == AF_INET6 ? HostKind::Ipv6 : HostKind::Ipv4;  // [::ffff:a.b.c.d] is IPv4
    out.address = ip;
    out.host = ip->ToString();
    return common::Success();
}

common::Status ParsePort(std::string_view text, FetchUrl& out) {
    if (text.empty()) return common::Success();  // "http://host:/" has the default port
    std::uint32_t port = 0;
    for (char c : text) {
        if (!IsDigit(c)) return BadRequest("fetch URL port is not a number");
        port = port * 10 + static_cast<std::uint32_t>(c - '0');
        if (port > 65535) return BadRequest("fetch URL port is above 65535");
    }
    if (port == 0) return BadRequest("fetch URL port 0 is not a port");
    out.port = static_cast<std::uint16_t>(port);
    return common::Success();
}

// Path and query as sent: bytes a server or libcurl could read differently are percent-encoded.
std::string NormalizeTarget(std::string_view rest) {
    static constexpr char HEX[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(rest.size() + 1);
    if (rest.empty() || rest[0] != '/') out.push_back('/');
    for (char c : rest) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x80 || std::strchr("\"<>\\^`{|}", c) != nullptr) {
            out.push_back('%');
            out.push_back(HEX[u >> 4]);
            out.push_back(HEX[u & 15]);
        } else {
            out.push_back(c);
        }
    }
    return out;
}

bool IsRefusedName(const std::string& host, const std::vector<std::string>& refused) {
    for (const std::string& entry : refused) {
        if (entry.rfind("*.", 0) == 0) {
            const std::string_view suffix = std::string_view(entry).substr(1);  // ".example.com"
            if (host.size() > suffix.size() && host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0) {
                return true;
            }
        } else if (host == entry) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::string IpAddress::ToString() const {
    char text[INET6_ADDRSTRLEN] = {};
    if (family != AF_INET && family != AF_INET6) return "";
    inet_ntop(family, bytes.data(), text, sizeof text);
    return text;
}

std::optional<IpAddress> ParseIpAddress(std::string_view text) {
    if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
    char buf[INET6_ADDRSTRLEN] = {};
    std::memcpy(buf, text.data(), text.size());
    if (std::strlen(buf) != text.size()) return std::nullopt;  // an embedded NUL
    unsigned char raw[16];
    if (inet_pton(AF_INET, buf, raw) == 1) return Canonical(AF_INET, raw);
    if (inet_pton(AF_INET6, buf, raw) == 1) return Canonical(AF_INET6, raw);
    return std::nullopt;
}

std::optional<IpAddress> IpAddressOf(const sockaddr* addr) {
    if (addr == nullptr) return std::nullopt;
    if (addr->sa_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
        return Canonical(AF_INET, reinterpret_cast<const unsigned char*>(&in->sin_addr));
    }
    if (addr->sa_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
        return Canonical(AF_INET6, in6->sin6_addr.s6_addr);
    }
    return std::nullopt;
}

AddressClass ClassifyAddress(const IpAddress& address) {
    if (address.family == AF_INET) return ClassifyV4(V4At(address.bytes.data()));
    if (address.family == AF_INET6) return ClassifyV6(address.bytes.data());
    return AddressClass::Reserved;
}

const char* AddressClassName(AddressClass c) {
    switch (c) {
        case AddressClass::Public: return "public";
        case AddressClass::Unspecified: return "unspecified (this host)";
        case AddressClass::Loopback: return "loopback";
        case AddressClass::Private: return "private";
        case AddressClass::SharedNat: return "shared (carrier-grade NAT)";
        case AddressClass::LinkLocal: return "link-local, where cloud metadata services answer";
        case AddressClass::UniqueLocal: return "unique-local";
        case AddressClass::SiteLocal: return "site-local";
        case AddressClass::Multicast: return "multicast";
        case AddressClass::Reserved: return "reserved";
        case AddressClass::Documentation: return "documentation";
        case AddressClass::Benchmarking: return "benchmarking";
        case AddressClass::Teredo: return "Teredo tunnel";
    }
    return "reserved";
}

bool IsPublicAddress(const sockaddr* addr) {
    const auto ip = IpAddressOf(addr);
    return ip && ClassifyAddress(*ip) == AddressClass::Public;
}

bool IsPublicAddress(std::string_view text) {
    const auto ip = ParseIpAddress(text);
    return ip && ClassifyAddress(*ip) == AddressClass::Public;
}

std::string FetchUrl::Serialize() const {
    std::string out = scheme + "://";
    out += host_kind == HostKind::Ipv6 ? "[" + host + "]" : host;
    const std::uint16_t default_port = scheme == "https" ? 443 : 80;
    if (port != default_port) out += ":" + std::to_string(port);
    out += target;
    return out;
}

std::string FetchUrl::Origin() const { return scheme + "://" + host + ":" + std::to_string(port); }

common::Result<FetchUrl> ParseFetchUrl(std::string_view text) {
    if (text.size() > MAX_URL_BYTES) return BadRequest("fetch URL is longer than 64 KiB");
    for (unsigned char c : text) {
        if (c <= 0x20 || c == 0x7f) return BadRequest("fetch URL contains whitespace or control characters");
    }
    const auto colon = text.find(':');
    const std::string_view scheme_text = text.substr(0, colon);
    if (colon == std::string_view::npos || scheme_text.empty() || !IsAlpha(scheme_text[0]) ||
        !std::all_of(scheme_text.begin(), scheme_text.end(),
                     [](char c) { return IsAlpha(c) || IsDigit(c) || c == '+' || c == '-' || c == '.'; })) {
        return BadRequest("fetch URL is not an absolute URL");
    }
    FetchUrl url;
    url.scheme = ToLower(scheme_text);
    if (url.scheme != "http" && url.scheme != "https") {
        return BadRequest("fetch supports only http and https, not " + url.scheme.substr(0, 32));
    }
    std::string_view rest = text.substr(colon + 1);
    if (rest.substr(0, 2) != "//") return BadRequest("fetch URL must start with " + url.scheme + "://");
    rest.remove_prefix(2);
    const auto authority_end = rest.find_first_of("/?#");
    const std::string_view authority = rest.substr(0, authority_end);
    rest = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
    if (authority.find('\\') != std::string_view::npos) return BadRequest("fetch URL host contains a backslash");
    if (authority.find('@') != std::string_view::npos) {
        return BadRequest("fetch URL carries credentials (user@ or user:password@); send an Authorization header");
    }
    url.port = url.scheme == "https" ? 443 : 80;
    std::string_view host_text, port_text;
    if (!authority.empty() && authority[0] == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return BadRequest("fetch URL has an unclosed [ in its host");
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty() && after[0] != ':') return BadRequest("fetch URL has text after its [IPv6] host");
        port_text = after.empty() ? after : after.substr(1);
        SIGIL_TRY_STATUS(ParseBracketedHost(authority.substr(1, close - 1), url));
    } else {
        const auto port_at = authority.rfind(':');
        host_text = authority.substr(0, port_at);
        if (port_at != std::string_view::npos) port_text = authority.substr(port_at + 1);
        if (host_text.empty()) return BadRequest("fetch URL has no host");
        SIGIL_TRY_STATUS(ParseHost(host_text, url));
    }
    SIGIL_TRY_STATUS(ParsePort(port_text, url));
    const auto fragment = rest.find('#');
    url.target = NormalizeTarget(rest.substr(0, fragment));
    return url;
}

common::Result<FetchPolicy> MakeFetchPolicy(const std::vector<std::string>& allowed_addresses,
                                            const std::vector<std::string>& refused_hosts) {
    FetchPolicy policy;
    for (const auto& text : allowed_addresses) {
        auto ip = ParseIpAddress(text);
        if (!ip) return MakeError(ErrorKind::Internal, "fetch_bad_limits", "allowed fetch address is not an IP: " + text);
        policy.allowed_addresses.push_back(*ip);
    }
    for (const auto& text : refused_hosts) {
        std::string name = ToLower(text);
        if (name.size() > 1 && name.back() == '.') name.pop_back();
        const std::string_view bare = name.rfind("*.", 0) == 0 ? std::string_view(name).substr(2) : std::string_view(name);
        if (bare.empty() || !std::all_of(bare.begin(), bare.end(), [](char c) { return c == '.' || IsNameChar(c); })) {
            return MakeError(ErrorKind::Internal, "fetch_bad_limits", "refused fetch host is not a host name: " + text);
        }
        policy.refused_hosts.push_back(std::move(name));
    }
    return policy;
}

bool AddressAllowed(const IpAddress& address, const FetchPolicy& policy) {
    return ClassifyAddress(address) == AddressClass::Public ||
           std::find(policy.allowed_addresses.begin(), policy.allowed_addresses.end(), address) !=
               policy.allowed_addresses.end();
}

common::Status CheckFetchHost(const FetchUrl& url, const FetchPolicy& policy) {
    if (url.host_kind == HostKind::Name) {
        if (IsRefusedName(url.host, policy.refused_hosts)) {
            return MakeError(ErrorKind::Forbidden, "fetch_address_refused",
                             "fetch to " + url.host + " refused: it is a name of this service, which actions may not call");
        }
        return common::Success();
    }
    if (!url.address || !AddressAllowed(*url.address, policy)) {
        const AddressClass c = url.address ? ClassifyAddress(*url.address) : AddressClass::Reserved;
        return MakeError(ErrorKind::Forbidden, "fetch_address_refused",
                         "fetch to " + url.host + " refused: it is not a public address (" + AddressClassName(c) + ")");
    }
    return common::Success();
}

}  // namespace sigil::workers
