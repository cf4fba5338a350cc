// fetch's address policy without a socket: the URL parser on tricky spellings (IPv4 number forms,
// IPv4-mapped IPv6, userinfo, ports, percent and IDNA tricks), the address classification table,
// and the checks made before a hop connects (IP literals, this service's own names).
#include <cppunit/extensions/HelperMacros.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "workers/actions/fetch_policy.h"

using namespace sigil::workers;

namespace {

FetchUrl MustParse(const std::string& text) {
    auto r = ParseFetchUrl(text);
    CPPUNIT_ASSERT_MESSAGE(text + ": " + (r.ok() ? "" : r.error().message), r.ok());
    return std::move(r).value();
}

FetchPolicy Policy(const std::vector<std::string>& allowed, const std::vector<std::string>& refused = {}) {
    auto p = MakeFetchPolicy(allowed, refused);
    CPPUNIT_ASSERT_MESSAGE(p.ok() ? "" : p.error().message, p.ok());
    return std::move(p).value();
}

}  // namespace

class FetchPolicyTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(FetchPolicyTests);
    CPPUNIT_TEST(testParsesAndNormalizes);
    CPPUNIT_TEST(testIpv4NumberFormsBecomeDottedDecimal);
    CPPUNIT_TEST(testBracketedIpv6);
    CPPUNIT_TEST(testRefusesCredentialsAndBackslashes);
    CPPUNIT_TEST(testRefusesPercentAndNonAsciiHosts);
    CPPUNIT_TEST(testRefusesHostsEndingInABadNumber);
    CPPUNIT_TEST(testRefusesMalformedUrls);
    CPPUNIT_TEST(testPortRules);
    CPPUNIT_TEST(testTargetIsPercentEncoded);
    CPPUNIT_TEST(testSerializeRoundTrips);
    CPPUNIT_TEST(testIsPublicAddressTable);
    CPPUNIT_TEST(testClassNames);
    CPPUNIT_TEST(testIsPublicAddressOnSockaddr);
    CPPUNIT_TEST(testCheckFetchHostJudgesLiteralsBeforeDns);
    CPPUNIT_TEST(testRefusedNames);
    CPPUNIT_TEST(testBadPolicies);
    CPPUNIT_TEST_SUITE_END();

public:
    void testParsesAndNormalizes() {
        FetchUrl u = MustParse("HTTPS://Example.COM:443/a/b?c=d#frag");
        CPPUNIT_ASSERT_EQUAL(std::string("https"), u.scheme);
        CPPUNIT_ASSERT_EQUAL(std::string("example.com"), u.host);
        CPPUNIT_ASSERT(u.host_kind == HostKind::Name);
        CPPUNIT_ASSERT(!u.address);
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(443), u.port);
        CPPUNIT_ASSERT_EQUAL(std::string("/a/b?c=d"), u.target);
        CPPUNIT_ASSERT_EQUAL(std::string("https://example.com/a/b?c=d"), u.Serialize());
        CPPUNIT_ASSERT_EQUAL(std::string("http://example.com/"), MustParse("http://example.com").Serialize());
        CPPUNIT_ASSERT_EQUAL(std::string("http://example.com/?x"), MustParse("http://example.com?x").Serialize());
        CPPUNIT_ASSERT_EQUAL(std::string("http://example.com/"), MustParse("http://example.com#top").Serialize());
        CPPUNIT_ASSERT_EQUAL(std::string("example.com"), MustParse("http://example.com./").host);  // trailing dot
        CPPUNIT_ASSERT_EQUAL(std::string("xn--bcher-kva.example"), MustParse("http://xn--bcher-kva.example/").host);
        CPPUNIT_ASSERT_EQUAL(std::string("a_b-c.example"), MustParse("http://a_b-c.example/").host);
        CPPUNIT_ASSERT_EQUAL(std::string("https://example.com:8443/"), MustParse("https://example.com:8443/").Serialize());
        CPPUNIT_ASSERT_EQUAL(std::string("http://1e100.net/"), MustParse("http://1e100.net/").Serialize());
        CPPUNIT_ASSERT(MustParse("http://1e100.net/").host_kind == HostKind::Name);
    }

    void testIpv4NumberFormsBecomeDottedDecimal() {
        struct Case {
            const char* url;
            const char* host;
        };
        static const Case CASES[] = {
            {"http://127.0.0.1/", "127.0.0.1"},       {"http://2130706433/", "127.0.0.1"},
            {"http://0x7f.1/", "127.0.0.1"},          {"http://0x7F000001/", "127.0.0.1"},
            {"http://0177.0.0.01/", "127.0.0.1"},     {"http://017700000001/", "127.0.0.1"},
            {"http://127.1/", "127.0.0.1"},           {"http://127.0.1/", "127.0.0.1"},
            {"http://127.0.0.1./", "127.0.0.1"},      {"http://0/", "0.0.0.0"},
            {"http://0x/", "0.0.0.0"},                {"http://0xA9.0xFE.0xA9.0xFE/", "169.254.169.254"},
            {"http://2852039166/", "169.254.169.254"}, {"http://025177524776/", "169.254.169.254"},
            {"http://169.254.43518/", "169.254.169.254"}, {"http://10.1/", "10.0.0.1"},
            {"http://255.255.255.255/", "255.255.255.255"}, {"http://4294967295/", "255.255.255.255"},
            {"http://000000000000000000127.0.0.1/", "87.0.0.1"},  // a leading 0 means octal, however many
        };
        for (const Case& c : CASES) {
            FetchUrl u = MustParse(c.url);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(c.url, std::string(c.host), u.host);
            CPPUNIT_ASSERT_MESSAGE(c.url, u.host_kind == HostKind::Ipv4);
            CPPUNIT_ASSERT_MESSAGE(c.url, u.address && u.address->ToString() == c.host);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(c.url, "http://" + std::string(c.host) + "/", u.Serialize());
        }
    }

    void testBracketedIpv6() {
        FetchUrl loop = MustParse("http://[0:0:0:0:0:0:0:1]:8080/x");
        CPPUNIT_ASSERT(loop.host_kind == HostKind::Ipv6);
        CPPUNIT_ASSERT_EQUAL(std::string("::1"), loop.host);
        CPPUNIT_ASSERT_EQUAL(std::string("http://[::1]:8080/x"), loop.Serialize());
        // IPv4-mapped IPv6 is IPv4: one spelling, one judgement.
        for (const char* url : {"http://[::ffff:127.0.0.1]/", "http://[::FFFF:7f00:1]/", "http://[0:0:0:0:0:ffff:127.0.0.1]/"}) {
            FetchUrl u = MustParse(url);
            CPPUNIT_ASSERT_MESSAGE(url, u.host_kind == HostKind::Ipv4);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(url, std::string("127.0.0.1"), u.host);
        }
        CPPUNIT_ASSERT_EQUAL(std::string("2001:db8::1"), MustParse("http://[2001:DB8:0::1]/").host);
        for (const char* url : {"http://[::1/", "http://[::1]x/", "http://[1.2.3.4]/", "http://[fe80::1%25eth0]/",
                                "http://[fe80::1%eth0]/", "http://::1/", "http://[]/", "http://[::1]]/", "http://[:::1]/"}) {
            CPPUNIT_ASSERT_MESSAGE(url, !ParseFetchUrl(url).ok());
        }
    }

    void testRefusesCredentialsAndBackslashes() {
        for (const char* url : {"http://user@a.com/", "http://user:pw@a.com/", "http://:@a.com/", "http://@a.com/",
                                "http://a.com@127.0.0.1/", "http://a.com:80@127.0.0.1/", "http://127.0.0.1\\@a.com/",
                                "http://a.com\\@127.0.0.1/", "http://a.com\\.127.0.0.1/", "http://a.com:pw@b.com:80@127.0.0.1/"}) {
            auto r = ParseFetchUrl(url);
            CPPUNIT_ASSERT_MESSAGE(url, !r.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(url, std::string("fetch_bad_request"), r.error().code);
        }
        CPPUNIT_ASSERT(ParseFetchUrl("http://u@a.com/").error().message.find("Authorization") != std::string::npos);
        // An @ after the authority is only path or query.
        CPPUNIT_ASSERT_EQUAL(std::string("a.com"), MustParse("http://a.com/@127.0.0.1").host);
        CPPUNIT_ASSERT_EQUAL(std::string("a.com"), MustParse("http://a.com?@127.0.0.1").host);
        CPPUNIT_ASSERT_EQUAL(std::string("a.com"), MustParse("http://a.com#@127.0.0.1").host);
    }

    void testRefusesPercentAndNonAsciiHosts() {
        for (const std::string& url : std::vector<std::string>{
              "http://127.0.0.%31/", "http://%6c%6f%63%61%6c%68%6f%73%74/", "http://a%2ecom/",
              "http://\xef\xbd\x8c\xef\xbd\x8f\xef\xbd\x83\xef\xbd\x81\xef\xbd\x8c\xef\xbd\x88\xef\xbd\x8f\xef\xbd\x93\xef\xbd\x94/",  // fullwidth localhost
              "http://\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1/",  // fullwidth 127
              "http://b\xc3\xbc" "cher.example/", "http://127\xe3\x80\x82" "0.0.1/",  // ideographic full stop
              "http://a.com\xc2\xa0/", "http://a!b.com/", "http://a$b.com/", "http://a*.com/", "http://a,b.com/"}) {
            CPPUNIT_ASSERT_MESSAGE(url, !ParseFetchUrl(url).ok());
        }
        CPPUNIT_ASSERT(ParseFetchUrl("http://b\xc3\xbc" "cher.example/").error().message.find("xn--") != std::string::npos);
    }

    void testRefusesHostsEndingInABadNumber() {
        // WHATWG: a host whose last label is a number is an IPv4 address or an error, never a name.
        for (const char* url : {"http://1.2.3.4.5/", "http://256.0.0.1/", "http://1.2.3.256/", "http://1.2.65536/",
                                "http://1.16777216/", "http://0x100000000/", "http://4294967296/", "http://08.0.0.1/",
                                "http://1.2.3.09/", "http://example.123/", "http://a.0x1/", "http://1..2.3/",
                                "http://99999999999999999999999/"}) {
            auto r = ParseFetchUrl(url);
            CPPUNIT_ASSERT_MESSAGE(url, !r.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(url, std::string("fetch_bad_request"), r.error().code);
        }
        // A last label that is not a number is a name, even with numbers before it.
        CPPUNIT_ASSERT(MustParse("http://127.0.0.1.nip.io/").host_kind == HostKind::Name);
        CPPUNIT_ASSERT(MustParse("http://0x7f.1x/").host_kind == HostKind::Name);
    }

    void testRefusesMalformedUrls() {
        for (const std::string& url : std::vector<std::string>{
              "", "example.com", "//example.com/", "/path", "http:example.com", "http:/example.com", "http:\\\\a.com/",
              "http://", "http:///x", "http://:80/", "http://a..com/", "http://.a.com/", "http://./",
              "ftp://a.com/", "file:///etc/passwd", "javascript:alert(1)", "gopher://a/", "1http://a.com/",
              " http://a.com/", "http://a.com/ ", "http://a.com/\t", "http://a.com/\r\nX: y", std::string("http://a\0.com/", 14),
              "http://" + std::string(64, 'a') + ".com/", "http://" + std::string(250, 'a') + ".com/",
              "http://a.com/" + std::string(70000, 'p')}) {
            auto r = ParseFetchUrl(url);
            CPPUNIT_ASSERT_MESSAGE(url.substr(0, 80), !r.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(url.substr(0, 80), std::string("fetch_bad_request"), r.error().code);
        }
        CPPUNIT_ASSERT(ParseFetchUrl("gopher://a/").error().message.find("gopher") != std::string::npos);
        CPPUNIT_ASSERT(MustParse("http://" + std::string(63, 'a') + ".com/").host.size() == 67);
    }

    void testPortRules() {
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(80), MustParse("http://a.com:/").port);
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(80), MustParse("http://a.com:0080/").port);
        CPPUNIT_ASSERT_EQUAL(std::string("http://a.com/"), MustParse("http://a.com:0080/").Serialize());
        CPPUNIT_ASSERT_EQUAL(std::string("http://a.com:443/"), MustParse("http://a.com:443/").Serialize());
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(65535), MustParse("http://a.com:65535/").port);
        for (const char* url : {"http://a.com:0/", "http://a.com:65536/", "http://a.com:99999/", "http://a.com:8o/",
                                "http://a.com:-1/", "http://a.com:+80/", "http://a.com:80:80/", "http://a.com:0x50/",
                                "http://a.com:123456789012345678901234567890/"}) {
            CPPUNIT_ASSERT_MESSAGE(url, !ParseFetchUrl(url).ok());
        }
    }

    void testTargetIsPercentEncoded() {
        CPPUNIT_ASSERT_EQUAL(std::string("/%C3%A9?q=%C3%A9"), MustParse("http://a.com/\xc3\xa9?q=\xc3\xa9").target);
        CPPUNIT_ASSERT_EQUAL(std::string("/a%5Cb"), MustParse("http://a.com/a\\b").target);
        CPPUNIT_ASSERT_EQUAL(std::string("/%7Bx%7D%7C%5E%60%22%3C%3E"), MustParse("http://a.com/{x}|^`\"<>").target);
        // What is already encoded stays as it is.
        CPPUNIT_ASSERT_EQUAL(std::string("/a%20b?c=%2F"), MustParse("http://a.com/a%20b?c=%2F").target);
    }

    void testSerializeRoundTrips() {
        for (const char* url : {"http://0x7f.1:81/a?b", "https://[::ffff:10.0.0.1]/", "http://[fe80::1]:8080/",
                                "HTTP://WWW.Example.Com./p/\xc3\xa9", "http://a.com?x#y"}) {
            const FetchUrl first = MustParse(url);
            const FetchUrl again = MustParse(first.Serialize());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(url, first.Serialize(), again.Serialize());
            CPPUNIT_ASSERT_MESSAGE(url, first.address == again.address && first.host == again.host &&
                                            first.port == again.port && first.target == again.target);
        }
        CPPUNIT_ASSERT_EQUAL(MustParse("http://a.com/").Origin(), MustParse("HTTP://A.COM:80/x").Origin());
        CPPUNIT_ASSERT(MustParse("http://a.com/").Origin() != MustParse("https://a.com/").Origin());
        CPPUNIT_ASSERT(MustParse("http://a.com/").Origin() != MustParse("http://a.com:81/").Origin());
    }

    void testIsPublicAddressTable() {
        struct Case {
            const char* address;
            bool is_public;
        };
        static const Case CASES[] = {
            // IPv4 edges of each refused range
            {"0.0.0.0", false}, {"0.255.255.255", false}, {"1.0.0.0", true},
            {"9.255.255.255", true}, {"10.0.0.0", false}, {"10.255.255.255", false}, {"11.0.0.0", true},
            {"100.63.255.255", true}, {"100.64.0.0", false}, {"100.127.255.255", false}, {"100.128.0.0", true},
            {"126.255.255.255", true}, {"127.0.0.1", false}, {"127.255.255.255", false}, {"128.0.0.0", true},
            {"169.253.255.255", true}, {"169.254.0.0", false}, {"169.254.169.254", false}, {"169.255.0.0", true},
            {"172.15.255.255", true}, {"172.16.0.0", false}, {"172.31.255.255", false}, {"172.32.0.0", true},
            {"192.0.0.0", false}, {"192.0.0.255", false}, {"192.0.1.0", true}, {"192.0.2.1", false},
            {"192.167.255.255", true}, {"192.168.0.0", false}, {"192.168.255.255", false}, {"192.169.0.0", true},
            {"198.17.255.255", true}, {"198.18.0.0", false}, {"198.19.255.255", false}, {"198.20.0.0", true},
            {"198.51.100.7", false}, {"203.0.113.9", false}, {"223.255.255.255", true}, {"224.0.0.0", false},
            {"239.255.255.255", false}, {"240.0.0.0", false}, {"255.255.255.255", false},
            {"8.8.8.8", true}, {"1.1.1.1", true}, {"93.184.216.34", true},
            // IPv6
            {"::", false}, {"::1", false}, {"::2", false}, {"2606:4700:4700::1111", true}, {"2001:4860:4860::8888", true},
            {"fc00::", false}, {"fdff:ffff::1", false}, {"fe80::1", false}, {"febf:ffff::1", false},
            {"fec0::1", false}, {"ff02::1", false}, {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true},
            {"2001:db8::1", false}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, {"100::1", false},
            {"64:ff9b:1::1", false},
            // IPv6 spellings of IPv4 addresses, judged by the IPv4 address
            {"::ffff:127.0.0.1", false}, {"::ffff:7f00:1", false}, {"::ffff:10.1.1.1", false},
            {"::ffff:169.254.169.254", false}, {"::ffff:8.8.8.8", true}, {"::127.0.0.1", false},
            {"::8.8.8.8", true}, {"64:ff9b::127.0.0.1", false}, {"64:ff9b::a9fe:a9fe", false},
            {"64:ff9b::8.8.8.8", true}, {"2002:7f00:1::", false}, {"2002:0a00:0001::1", false},
            {"2002:0808:0808::1", true},
            // not addresses (the strict parser: URL number forms are the URL parser's business)
            {"", false}, {"localhost", false}, {"127.1", false}, {"1.2.3.4.5", false}, {"[::1]", false},
            {"2130706433", false}, {"fe80::1%lo", false}, {"0x7f.0.0.1", false},
        };
        for (const Case& c : CASES) {
            CPPUNIT_ASSERT_EQUAL_MESSAGE(c.address, c.is_public, IsPublicAddress(std::string_view(c.address)));
        }
        CPPUNIT_ASSERT(!IsPublicAddress(std::string_view("127.0.0.1\0", 10)));
    }

    void testClassNames() {
        auto cls = [](const char* text) { return ClassifyAddress(*ParseIpAddress(text)); };
        CPPUNIT_ASSERT(cls("127.0.0.1") == AddressClass::Loopback);
        CPPUNIT_ASSERT(cls("::1") == AddressClass::Loopback);
        CPPUNIT_ASSERT(cls("::ffff:127.0.0.1") == AddressClass::Loopback);
        CPPUNIT_ASSERT(cls("169.254.169.254") == AddressClass::LinkLocal);
        CPPUNIT_ASSERT(cls("64:ff9b::a9fe:a9fe") == AddressClass::LinkLocal);
        CPPUNIT_ASSERT(cls("10.0.0.1") == AddressClass::Private);
        CPPUNIT_ASSERT(cls("100.64.0.1") == AddressClass::SharedNat);
        CPPUNIT_ASSERT(cls("fd00::1") == AddressClass::UniqueLocal);
        CPPUNIT_ASSERT(cls("0.0.0.0") == AddressClass::Unspecified);
        CPPUNIT_ASSERT(cls("::") == AddressClass::Unspecified);
        CPPUNIT_ASSERT(cls("2001::1") == AddressClass::Teredo);
        CPPUNIT_ASSERT(cls("8.8.8.8") == AddressClass::Public);
        CPPUNIT_ASSERT_EQUAL(std::string("loopback"), std::string(AddressClassName(AddressClass::Loopback)));
        CPPUNIT_ASSERT(*ParseIpAddress("::ffff:10.0.0.1") == *ParseIpAddress("10.0.0.1"));
        CPPUNIT_ASSERT_EQUAL(std::string("10.0.0.1"), ParseIpAddress("::ffff:10.0.0.1")->ToString());
    }

    void testIsPublicAddressOnSockaddr() {
        auto v4 = [](const char* text) {
            sockaddr_in sa{};
            sa.sin_family = AF_INET;
            CPPUNIT_ASSERT(inet_pton(AF_INET, text, &sa.sin_addr) == 1);
            return IsPublicAddress(reinterpret_cast<const sockaddr*>(&sa));
        };
        auto v6 = [](const char* text) {
            sockaddr_in6 sa{};
            sa.sin6_family = AF_INET6;
            CPPUNIT_ASSERT(inet_pton(AF_INET6, text, &sa.sin6_addr) == 1);
            return IsPublicAddress(reinterpret_cast<const sockaddr*>(&sa));
        };
        CPPUNIT_ASSERT(v4("8.8.8.8"));
        CPPUNIT_ASSERT(!v4("127.0.0.1"));
        CPPUNIT_ASSERT(!v4("172.16.0.0"));
        CPPUNIT_ASSERT(v4("172.15.255.255"));
        CPPUNIT_ASSERT(v6("2606:4700::1"));
        CPPUNIT_ASSERT(!v6("::ffff:192.168.0.1"));
        CPPUNIT_ASSERT(!v6("::1"));
        sockaddr unix_family{};
        unix_family.sa_family = AF_UNIX;
        CPPUNIT_ASSERT(!IsPublicAddress(&unix_family));
        CPPUNIT_ASSERT(!IsPublicAddress(static_cast<const sockaddr*>(nullptr)));
        sockaddr_in6 mapped{};
        mapped.sin6_family = AF_INET6;
        inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);
        CPPUNIT_ASSERT(*IpAddressOf(reinterpret_cast<const sockaddr*>(&mapped)) == *ParseIpAddress("127.0.0.1"));
    }

    void testCheckFetchHostJudgesLiteralsBeforeDns() {
        const FetchPolicy none = Policy({});
        for (const char* url : {"http://2130706433/", "http://0x7f.1/", "http://[::ffff:127.0.0.1]/", "http://[::1]/",
                                "http://0/", "http://169.254.169.254/", "http://0xa9fea9fe/", "http://10.1/",
                                "http://[fd00::1]/", "http://[64:ff9b::a00:1]/", "http://[2002:7f00:1::]/"}) {
            auto r = CheckFetchHost(MustParse(url), none);
            CPPUNIT_ASSERT_MESSAGE(url, !r.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(url, std::string("fetch_address_refused"), r.error().code);
            CPPUNIT_ASSERT_MESSAGE(url, r.error().kind == sigil::common::ErrorKind::Forbidden);
        }
        auto r = CheckFetchHost(MustParse("http://0x7f.1/"), none);
        CPPUNIT_ASSERT_MESSAGE(r.error().message, r.error().message.find("127.0.0.1") != std::string::npos &&
                                                      r.error().message.find("loopback") != std::string::npos);
        CPPUNIT_ASSERT(CheckFetchHost(MustParse("http://8.8.8.8/"), none).ok());
        CPPUNIT_ASSERT(CheckFetchHost(MustParse("http://example.com/"), none).ok());  // names wait for DNS
        // Allowed addresses, in either spelling.
        const FetchPolicy loop = Policy({"127.0.0.1", "::1"});
        for (const char* url : {"http://127.0.0.1/", "http://2130706433/", "http://[::ffff:127.0.0.1]/", "http://[::1]/"}) {
            CPPUNIT_ASSERT_MESSAGE(url, CheckFetchHost(MustParse(url), loop).ok());
        }
        CPPUNIT_ASSERT(!CheckFetchHost(MustParse("http://127.0.0.2/"), loop).ok());
        CPPUNIT_ASSERT(AddressAllowed(*ParseIpAddress("::ffff:127.0.0.1"), loop));
        CPPUNIT_ASSERT(!AddressAllowed(*ParseIpAddress("127.0.0.2"), loop));
        CPPUNIT_ASSERT(AddressAllowed(*ParseIpAddress("1.1.1.1"), none));
    }

    void testRefusedNames() {
        const FetchPolicy p = Policy({"127.0.0.1"}, {"Sigil.Example.com.", "*.localhost", "localhost"});
        for (const char* url : {"http://sigil.example.com/", "https://SIGIL.EXAMPLE.COM:8443/run", "http://sigil.example.com./",
                                "http://localhost/", "http://a.localhost/", "http://a.b.localhost/"}) {
            auto r = CheckFetchHost(MustParse(url), p);
            CPPUNIT_ASSERT_MESSAGE(url, !r.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(url, std::string("fetch_address_refused"), r.error().code);
        }
        for (const char* url : {"http://example.com/", "http://www.sigil.example.com/", "http://notlocalhost/",
                                "http://localhost.example/", "http://127.0.0.1/"}) {
            CPPUNIT_ASSERT_MESSAGE(url, CheckFetchHost(MustParse(url), p).ok());
        }
        // A wildcard covers the names under it, not the name itself.
        const FetchPolicy domain = Policy({}, {"*.example.org"});
        CPPUNIT_ASSERT(!CheckFetchHost(MustParse("http://api.example.org/"), domain).ok());
        CPPUNIT_ASSERT(CheckFetchHost(MustParse("http://example.org/"), domain).ok());
        CPPUNIT_ASSERT(CheckFetchHost(MustParse("http://badexample.org/"), domain).ok());
    }

    void testBadPolicies() {
        for (const std::vector<std::string>& allowed :
             {std::vector<std::string>{"internal-api"}, {"127.1"}, {""}, {"10.0.0.0/8"}, {"[::1]"}}) {
            auto p = MakeFetchPolicy(allowed, {});
            CPPUNIT_ASSERT_MESSAGE(allowed[0], !p.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("fetch_bad_limits"), p.error().code);
        }
        for (const std::vector<std::string>& refused :
             {std::vector<std::string>{""}, {"*."}, {"a b"}, {"http://a.com/"}, {"a.com:80"}}) {
            auto p = MakeFetchPolicy({}, refused);
            CPPUNIT_ASSERT_MESSAGE(refused[0], !p.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("fetch_bad_limits"), p.error().code);
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(FetchPolicyTests);
