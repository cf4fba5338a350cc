// Fuzz fetch's URL parser and address policy (workers/actions/fetch_policy.h) with the invariants
// that keep libcurl and the policy reading the same host: a parsed URL's Serialize() parses back to
// the same URL, the host is in one canonical spelling, and an IP host is judged as its address.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "workers/actions/fetch_policy.h"

using namespace sigil::workers;

namespace {

void Require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz_fetch_policy: invariant broken: %s\n", what);
        std::abort();
    }
}

bool IsHostChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == ':';
}

const FetchPolicy& Policy() {
    static const FetchPolicy policy = [] {
        auto p = MakeFetchPolicy({"127.0.0.1", "::1"}, {"localhost", "*.localhost", "sigil.example.com"});
        Require(p.ok(), "fixed policy builds");
        return std::move(p).value();
    }();
    return policy;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    if (auto ip = ParseIpAddress(text)) {
        const auto again = ParseIpAddress(ip->ToString());
        Require(again && *again == *ip, "IP address text round trip");
        (void)ClassifyAddress(*ip);
    }
    (void)IsPublicAddress(text);

    auto url = ParseFetchUrl(text);
    if (!url.ok()) {
        Require(url.error().code == "fetch_bad_request", "parse errors are fetch_bad_request");
        return 0;
    }
    Require(url->scheme == "http" || url->scheme == "https", "scheme is http or https");
    Require(!url->host.empty(), "host is not empty");
    for (char c : url->host) Require(IsHostChar(c), "host is lowercase ASCII host characters");
    Require(!url->target.empty() && url->target[0] == '/', "target starts with /");
    for (char c : url->target) {
        const auto u = static_cast<unsigned char>(c);
        Require(u > 0x20 && u < 0x7f && c != '#' && c != '\\', "target is printable ASCII without # or \\");
    }
    Require(url->port != 0, "port is not 0");
    Require((url->host_kind == HostKind::Name) != url->address.has_value(), "IP hosts carry their address");
    if (url->address) Require(url->address->ToString() == url->host, "IP host is the canonical address text");
    if (url->host_kind == HostKind::Name) {
        Require(!ParseIpAddress(url->host), "a name is not an address");
        Require(url->host.find(':') == std::string::npos, "a name has no colon");
    }

    const std::string wire = url->Serialize();
    auto again = ParseFetchUrl(wire);
    Require(again.ok(), "Serialize() parses");
    Require(again->Serialize() == wire, "Serialize() is a fixed point");
    Require(again->host == url->host && again->port == url->port && again->address == url->address &&
                again->host_kind == url->host_kind && again->target == url->target,
            "Serialize() keeps every part");

    const auto checked = CheckFetchHost(*url, Policy());
    if (url->address) {
        Require(checked.ok() == AddressAllowed(*url->address, Policy()), "IP hosts are judged by their address");
    }
    return 0;
}
