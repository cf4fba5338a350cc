// Which URLs and addresses fetch may reach (DESIGN.md section 5, "fetch is the sharpest edge"):
// the URL parser and the address classification, sans-IO (no sockets, no DNS, no libcurl), so unit
// tests and a fuzzer drive them directly. fetch.cpp applies them before every hop and again in
// libcurl's open-socket hook, after DNS.
//
// The parser is deliberately narrower than the WHATWG URL standard: wherever two readers of a URL
// could disagree about its host (a browser, libcurl, glibc's resolver), the URL is refused or
// rewritten into one spelling that all of them read alike. What libcurl receives is Serialize()'s
// output, never the action's text.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sigil::workers {

// The marker every fetch made by the worker carries (loop protection): the run endpoint refuses
// a request that has it, so an action cannot make this service run an action, whatever name or
// address it reached the service by.
inline constexpr const char* RUN_MARKER_HEADER = "X-Sigil-Run";

// One IP address in one spelling: the IPv4-mapped IPv6 form ::ffff:a.b.c.d becomes IPv4, so an
// allowed 127.0.0.1 also matches a socket to ::ffff:127.0.0.1.
struct IpAddress {
    int family = AF_UNSPEC;                // AF_INET or AF_INET6
    std::array<unsigned char, 16> bytes{};  // network order; IPv4 uses the first 4
    bool operator==(const IpAddress&) const = default;
    std::string ToString() const;           // "127.0.0.1", "fe80::1"
};

// A strict textual address: dotted-quad IPv4 with four decimal parts, or IPv6 as inet_pton reads
// it (no brackets, no zone). nullopt otherwise (names, "127.1", "2130706433").
std::optional<IpAddress> ParseIpAddress(std::string_view text);

// The address of an AF_INET or AF_INET6 socket address; nullopt for other families or null.
std::optional<IpAddress> IpAddressOf(const sockaddr* addr);

// Why an address is (not) globally reachable unicast. IPv6 forms that embed an IPv4 address
// (::ffff:a.b.c.d mapped, ::a.b.c.d compatible, 64:ff9b::/96 NAT64, 2002::/16 6to4) are classified
// by that IPv4 address.
enum class AddressClass {
    Public,
    Unspecified,          // 0.0.0.0/8, ::
    Loopback,             // 127/8, ::1
    Private,              // 10/8, 172.16/12, 192.168/16
    SharedNat,            // 100.64/10 (carrier-grade NAT)
    LinkLocal,            // 169.254/16 (the cloud metadata service 169.254.169.254), fe80::/10
    UniqueLocal,          // fc00::/7
    SiteLocal,            // fec0::/10 (deprecated, still routed inside some sites)
    Multicast,            // 224/4, ff00::/8
    Reserved,             // 240/4 and 255.255.255.255, 192.0.0/24, 100::/64, 64:ff9b:1::/48
    Documentation,        // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32
    Benchmarking,         // 198.18/15
    Teredo,               // 2001::/32 (tunnels to an address it does not show)
};

AddressClass ClassifyAddress(const IpAddress& address);

// "public", "loopback", "private", "link-local (cloud metadata)", ... for messages.
const char* AddressClassName(AddressClass c);

// True when `addr` is a globally reachable unicast address (ClassifyAddress says Public).
bool IsPublicAddress(const sockaddr* addr);
// The same for text as ParseIpAddress reads it; false when `text` is not an address.
bool IsPublicAddress(std::string_view text);

enum class HostKind { Name, Ipv4, Ipv6 };

// A URL fetch will request, in the one spelling it is sent in.
struct FetchUrl {
    std::string scheme;                // "http" or "https"
    std::string host;                  // lowercase; a name without a trailing dot, or the address in
                                       // canonical text (IPv6 without brackets)
    HostKind host_kind = HostKind::Name;
    std::optional<IpAddress> address;  // set for Ipv4 and Ipv6 hosts
    std::uint16_t port = 0;            // the explicit port or the scheme's default (80, 443)
    std::string target;                // path and query, starting with '/'; the fragment is dropped

    // scheme://host[:port]target, the port only when it is not the scheme's default; IPv6 in [].
    std::string Serialize() const;
    // scheme, host and port: two URLs of one origin share credentials (Authorization, Cookie).
    std::string Origin() const;
};

// Parses an absolute http(s) URL from an action (or a Location header). Accepted:
// scheme "http" or "https" in any case, then "//"; no userinfo (user@, user:password@); a host that is
//   * a bracketed IPv6 address without a zone ([::1], [::ffff:127.0.0.1]),
//   * an IPv4 address in any form the WHATWG URL standard and glibc's inet_aton read (1 to 4 parts,
//     each decimal, 0-prefixed octal or 0x-prefixed hex, the last filling the remaining bytes:
//     "2130706433", "0x7f.1", "0177.0.0.01" are all 127.0.0.1): rewritten as dotted decimal, or
//   * a DNS name of ASCII letters, digits, '-', '_' and '.', labels of 1..63, at most 253 in all;
// an optional port 1..65535; then path, query and fragment.
// Refused, each with a message that says why (InvalidInput "fetch_bad_request"): anything above
// 64 KiB, whitespace and control characters anywhere, a backslash or '%' in the authority
// (percent-encoded hosts), non-ASCII hosts (write them in their ASCII "xn--" form), a host ending
// in a number that is no valid IPv4 address ("1.2.3.4.5", "0x100000000"), empty labels, other schemes.
// Non-ASCII bytes and " < > \ ^ ` { | } in the path and query are percent-encoded.
common::Result<FetchUrl> ParseFetchUrl(std::string_view text);

// Where fetch may go, beyond public addresses.
struct FetchPolicy {
    // Exact addresses reachable although not public: an operator's internal API, or 127.0.0.1 in
    // tests. An IPv4 entry also allows its IPv4-mapped IPv6 form (IpAddress has one spelling).
    std::vector<IpAddress> allowed_addresses;
    // Host names refused before any DNS lookup: this service's own public names (an action must
    // not call the service that runs it). "*.example.com" also refuses every name under it.
    // Lowercase, no trailing dot.
    std::vector<std::string> refused_hosts;
};

// Builds a policy from configuration text. Errors (Internal "fetch_bad_limits", an operator
// mistake): an allowed address that is not an IP address, a refused host that is not a name.
common::Result<FetchPolicy> MakeFetchPolicy(const std::vector<std::string>& allowed_addresses,
                                            const std::vector<std::string>& refused_hosts);

// Whether a connection to `address` is allowed: public, or listed.
bool AddressAllowed(const IpAddress& address, const FetchPolicy& policy);

// The checks that need no DNS, made before each hop connects: a refused name, or an IP-literal
// host that AddressAllowed refuses. Errors: Forbidden "fetch_address_refused" naming the host
// and the reason (for example "127.0.0.1, a loopback address").
common::Status CheckFetchHost(const FetchUrl& url, const FetchPolicy& policy);

}  // namespace sigil::workers
