// The stripe processor against recorded Stripe answers (tests/data/stripe/) served by a loopback HTTP
// server inside the test: the requests it makes (headers, form body, idempotency), how it reads each
// PaymentIntent status, how it maps Stripe's errors, and that the secret key never leaks.
#include <cppunit/extensions/HelperMacros.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_support.h"
#include "workers/billing/stripe_processor.h"

using sigil::common::Error;
using sigil::common::ErrorKind;
using sigil::workers::billing::BillingSettings;
using sigil::workers::billing::PaymentIntent;
using sigil::workers::billing::StripeProcessor;

namespace {

using Clock = std::chrono::steady_clock;

const std::string TEST_KEY = "sk_test_51Sigil0TestOnlyKeyNotReal0AbCdXyZ9";
const std::string WALLET = "0x8ba1f109551bd432803012645ac136ddd64dba72";
const std::string SEARCH_TARGET =
    "/v1/customers/search?query=metadata%5B%27wallet_address%27%5D%3A%270x8ba1f109551bd432803012645ac136ddd64dba72%27";

// Every error message any test saw, checked once more at the end for the key.
std::vector<std::string>& SeenMessages() {
    static std::vector<std::string> messages;
    return messages;
}

std::string PercentDecode(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
            i += 2;
        } else if (s[i] == '+') {
            out.push_back(' ');
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

// application/x-www-form-urlencoded, decoded; a repeated name would show as a count mismatch.
std::vector<std::pair<std::string, std::string>> DecodeForm(const std::string& body) {
    std::vector<std::pair<std::string, std::string>> fields;
    std::size_t start = 0;
    while (start < body.size()) {
        const std::size_t end = std::min(body.find('&', start), body.size());
        const std::string pair = body.substr(start, end - start);
        const std::size_t eq = pair.find('=');
        fields.emplace_back(PercentDecode(pair.substr(0, eq)), eq == std::string::npos ? "" : PercentDecode(pair.substr(eq + 1)));
        start = end + 1;
    }
    return fields;
}

std::string FormValue(const std::vector<std::pair<std::string, std::string>>& fields, const std::string& name) {
    for (const auto& [k, v] : fields) {
        if (k == name) return v;
    }
    return "<absent>";
}

// ---- the recorded-answer server ----

struct Received {
    std::string method;
    std::string target;  // path and query, as sent
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
};

struct Route {
    std::string method;
    std::string target;
    int status = 200;
    std::string body;
    bool hang = false;  // read the request, then never answer
};

// One thread, one connection at a time: reads a request, records it, answers the matching route
// (method + exact target) or 404. Stopped and joined by the destructor.
class FakeStripe {
public:
    FakeStripe() {
        m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        socklen_t len = sizeof addr;
        if (m_listen < 0 || ::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(m_listen, 16) != 0 || ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            throw std::runtime_error("cannot listen on loopback");
        }
        m_port = ntohs(addr.sin_port);
        m_thread = std::thread([this] { Serve(); });
    }
    ~FakeStripe() {
        m_stop = true;
        m_thread.join();
        ::close(m_listen);
    }
    FakeStripe(const FakeStripe&) = delete;
    FakeStripe& operator=(const FakeStripe&) = delete;

    std::string Base() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    void AnswerFile(const std::string& method, const std::string& target, int status, const std::string& file) {
        AnswerText(method, target, status, sigil::test::ReadDataFile("stripe/" + file));
    }
    void AnswerText(const std::string& method, const std::string& target, int status, const std::string& body) {
        std::lock_guard lock(m_mutex);
        m_routes.push_back(Route{method, target, status, body, false});
    }
    void Hang(const std::string& method, const std::string& target) {
        std::lock_guard lock(m_mutex);
        m_routes.push_back(Route{method, target, 200, "", true});
    }
    std::vector<Received> Requests() {
        std::lock_guard lock(m_mutex);
        return m_received;
    }

private:
    void Serve() {
        while (!m_stop) {
            pollfd p{m_listen, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) continue;
            Handle(fd);
            ::close(fd);
        }
    }

    // Reads into `buffer` until `done` says so, the peer closes, or 5 s pass.
    template <typename Done>
    bool ReadUntil(int fd, std::string& buffer, Done done) {
        const auto start = Clock::now();
        while (!done() && !m_stop && Clock::now() - start < std::chrono::seconds(5)) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            char chunk[4096];
            const ssize_t n = ::read(fd, chunk, sizeof chunk);
            if (n <= 0) return false;
            buffer.append(chunk, static_cast<std::size_t>(n));
        }
        return done();
    }

    void Handle(int fd) {
        std::string raw;
        if (!ReadUntil(fd, raw, [&] { return raw.find("\r\n\r\n") != std::string::npos; })) return;
        const std::size_t head_end = raw.find("\r\n\r\n");
        Received r;
        std::size_t line_end = raw.find("\r\n");
        const std::string request_line = raw.substr(0, line_end);
        const std::size_t sp1 = request_line.find(' ');
        const std::size_t sp2 = request_line.find(' ', sp1 + 1);
        r.method = request_line.substr(0, sp1);
        r.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
        std::size_t at = line_end + 2;
        while (at < head_end) {
            line_end = raw.find("\r\n", at);
            const std::string line = raw.substr(at, line_end - at);
            const std::size_t colon = line.find(':');
            std::string name = line.substr(0, colon);
            for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
            while (!value.empty() && value.front() == ' ') value.erase(0, 1);
            r.headers[name] = value;
            at = line_end + 2;
        }
        const std::size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
        ReadUntil(fd, raw, [&] { return raw.size() >= head_end + 4 + length; });
        r.body = raw.substr(head_end + 4, length);

        Route route{r.method, r.target, 404, "{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Unrecognized request URL\"}}", false};
        {
            std::lock_guard lock(m_mutex);
            m_received.push_back(r);
            for (const Route& candidate : m_routes) {
                if (candidate.method == r.method && candidate.target == r.target) route = candidate;
            }
        }
        if (route.hang) {
            std::string ignored;
            ReadUntil(fd, ignored, [] { return false; });  // until the client gives up and closes
            return;
        }
        std::string answer = "HTTP/1.1 " + std::to_string(route.status) + " Recorded\r\nContent-Type: application/json\r\n" +
                             "Request-Id: req_RecordedAnswer01\r\nContent-Length: " + std::to_string(route.body.size()) +
                             "\r\nConnection: close\r\n\r\n" + route.body;
        std::size_t sent = 0;
        while (sent < answer.size()) {
            // MSG_NOSIGNAL: the client hangs up mid-answer when it is over the cap.
            const ssize_t n = ::send(fd, answer.data() + sent, answer.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return;
            sent += static_cast<std::size_t>(n);
        }
    }

    int m_listen = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    std::vector<Route> m_routes;
    std::vector<Received> m_received;
    std::thread m_thread;
};

// Captures what the process writes to stderr (the log) while it lives.
class StderrCapture {
public:
    StderrCapture() : m_path(std::filesystem::temp_directory_path() / ("stripe-stderr-" + std::to_string(::getpid()))) {
        std::fflush(stderr);
        m_saved = ::dup(STDERR_FILENO);
        const int fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ::dup2(fd, STDERR_FILENO);
        ::close(fd);
    }
    ~StderrCapture() { Restore(); std::filesystem::remove(m_path); }
    std::string Text() {
        Restore();
        std::ifstream in(m_path);
        return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }

private:
    void Restore() {
        if (m_saved < 0) return;
        std::fflush(stderr);
        ::dup2(m_saved, STDERR_FILENO);
        ::close(m_saved);
        m_saved = -1;
    }
    std::filesystem::path m_path;
    int m_saved = -1;
};

}  // namespace

class StripeProcessorTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(StripeProcessorTests);
    CPPUNIT_TEST(testCreateFindsCustomerAndCreatesIntent);
    CPPUNIT_TEST(testIdempotencyKeyIsFreshPerIntent);
    CPPUNIT_TEST(testCreatesCustomerWhenSearchFindsNone);
    CPPUNIT_TEST(testPaidWhenSucceeded);
    CPPUNIT_TEST(testNotPaidWhileUnfinished);
    CPPUNIT_TEST(testNotPaidForAnotherWallet);
    CPPUNIT_TEST(testNotPaidForSmallerAmountReceived);
    CPPUNIT_TEST(testNotPaidInAnotherCurrency);
    CPPUNIT_TEST(testWalletComparedIgnoringCase);
    CPPUNIT_TEST(testInvalidIntentIdRefusedWithoutRequest);
    CPPUNIT_TEST(testStripeRefusalPassesItsMessage);
    CPPUNIT_TEST(testRejectedCredentialsAreUnavailableWithoutTheKey);
    CPPUNIT_TEST(testSilentServerTimesOut);
    CPPUNIT_TEST(testGarbageAnswersAreUnavailable);
    CPPUNIT_TEST(testServerErrorAndUnreachableAreUnavailable);
    CPPUNIT_TEST(testKeyFileRefusedWhenGroupReadable);
    CPPUNIT_TEST(testKeyFileRefusedWhenMissingEmptyOrNotAFile);
    CPPUNIT_TEST(testKeyFileRefusedWithoutSecretKeyPrefix);
    CPPUNIT_TEST(testApiBaseMustBeHttpsOrLoopback);
    CPPUNIT_TEST(testConfigMembersNamePublishableKey);
    CPPUNIT_TEST(testKeyNeverInAnyErrorMessage);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override {
        char dir[] = "/tmp/stripe-tests-XXXXXX";
        if (::mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp");
        m_dir = dir;
        m_key_file = m_dir + "/stripe.key";
        WriteFile(m_key_file, TEST_KEY + "\n", 0600);
        m_server = std::make_unique<FakeStripe>();
        m_settings.processor = "stripe";
        m_settings.stripe_api_base = m_server->Base();
        m_settings.stripe_secret_key_file = m_key_file;
        m_settings.stripe_publishable_key = "pk_test_51Sigil0PublishableKeyForTests";
        m_settings.stripe_timeout_ms = 3000;
    }
    void tearDown() override {
        m_server.reset();
        std::filesystem::remove_all(m_dir);
    }

    void testCreateFindsCustomerAndCreatesIntent() {
        m_server->AnswerFile("GET", SEARCH_TARGET, 200, "customer_search_found.json");
        m_server->AnswerFile("POST", "/v1/payment_intents", 200, "payment_intent_created.json");
        auto processor = MakeProcessor();
        auto intent = processor->Create(WALLET, 2500);
        CPPUNIT_ASSERT_MESSAGE(intent.ok() ? "" : intent.error().message, intent.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("pi_3PiQhA2eZvKYlo2C1x9Wn0Jd"), intent->id);
        CPPUNIT_ASSERT_EQUAL(std::string("pi_3PiQhA2eZvKYlo2C1x9Wn0Jd_secret_Lq4mZbVn0XkPyT2sR8wHcJfEa"), intent->client_secret);
        CPPUNIT_ASSERT_EQUAL(std::string("stripe"), intent->processor);
        CPPUNIT_ASSERT_EQUAL(WALLET, intent->customer);
        CPPUNIT_ASSERT_EQUAL(std::int64_t{2500}, intent->amount_cents);
        CPPUNIT_ASSERT_EQUAL(std::string(""), intent->reference);
        CPPUNIT_ASSERT(!intent->credited);
        const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch()).count();
        CPPUNIT_ASSERT(intent->created_ms <= now_ms && intent->created_ms > now_ms - 60000);

        const auto requests = m_server->Requests();
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, requests.size());
        const Received& search = requests[0];
        CPPUNIT_ASSERT_EQUAL(std::string("GET"), search.method);
        CPPUNIT_ASSERT_EQUAL(SEARCH_TARGET, search.target);
        CPPUNIT_ASSERT_EQUAL("/v1/customers/search?query=metadata['wallet_address']:'" + WALLET + "'", PercentDecode(search.target));
        CPPUNIT_ASSERT_EQUAL(std::string(""), search.body);
        CPPUNIT_ASSERT(search.headers.count("idempotency-key") == 0);
        for (const Received& r : requests) {
            // The key file's trailing newline is not part of the key.
            CPPUNIT_ASSERT_EQUAL("Bearer " + TEST_KEY, r.headers.at("authorization"));
            CPPUNIT_ASSERT_EQUAL(std::string("2024-06-20"), r.headers.at("stripe-version"));
        }

        const Received& create = requests[1];
        CPPUNIT_ASSERT_EQUAL(std::string("POST"), create.method);
        CPPUNIT_ASSERT_EQUAL(std::string("/v1/payment_intents"), create.target);
        CPPUNIT_ASSERT_EQUAL(std::string("application/x-www-form-urlencoded"), create.headers.at("content-type"));
        const std::string key = create.headers.count("idempotency-key") ? create.headers.at("idempotency-key") : "";
        CPPUNIT_ASSERT_EQUAL(std::size_t{32}, key.size());
        CPPUNIT_ASSERT(key.find_first_not_of("0123456789abcdef") == std::string::npos);
        // Brackets are percent-encoded on the wire, as a form encoder must.
        CPPUNIT_ASSERT(create.body.find("metadata%5Bwallet_address%5D=" + WALLET) != std::string::npos);
        const auto form = DecodeForm(create.body);
        CPPUNIT_ASSERT_EQUAL(std::size_t{5}, form.size());
        CPPUNIT_ASSERT_EQUAL(std::string("2500"), FormValue(form, "amount"));
        CPPUNIT_ASSERT_EQUAL(std::string("usd"), FormValue(form, "currency"));
        CPPUNIT_ASSERT_EQUAL(std::string("cus_QZr8uJ0bNw3XkE"), FormValue(form, "customer"));
        CPPUNIT_ASSERT_EQUAL(WALLET, FormValue(form, "metadata[wallet_address]"));
        CPPUNIT_ASSERT_EQUAL(std::string("true"), FormValue(form, "automatic_payment_methods[enabled]"));
    }

    void testIdempotencyKeyIsFreshPerIntent() {
        m_server->AnswerFile("GET", SEARCH_TARGET, 200, "customer_search_found.json");
        m_server->AnswerFile("POST", "/v1/payment_intents", 200, "payment_intent_created.json");
        auto processor = MakeProcessor();
        CPPUNIT_ASSERT(processor->Create(WALLET, 2500).ok());
        CPPUNIT_ASSERT(processor->Create(WALLET, 2500).ok());
        const auto requests = m_server->Requests();
        CPPUNIT_ASSERT_EQUAL(std::size_t{4}, requests.size());
        CPPUNIT_ASSERT(requests[1].headers.at("idempotency-key") != requests[3].headers.at("idempotency-key"));
    }

    void testCreatesCustomerWhenSearchFindsNone() {
        m_server->AnswerFile("GET", SEARCH_TARGET, 200, "customer_search_empty.json");
        m_server->AnswerFile("POST", "/v1/customers", 200, "customer_created.json");
        m_server->AnswerFile("POST", "/v1/payment_intents", 200, "payment_intent_created.json");
        auto processor = MakeProcessor();
        auto intent = processor->Create(WALLET, 2500);
        CPPUNIT_ASSERT_MESSAGE(intent.ok() ? "" : intent.error().message, intent.ok());
        const auto requests = m_server->Requests();
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, requests.size());
        const Received& customer = requests[1];
        CPPUNIT_ASSERT_EQUAL(std::string("POST"), customer.method);
        CPPUNIT_ASSERT_EQUAL(std::string("/v1/customers"), customer.target);
        CPPUNIT_ASSERT_EQUAL(std::string("application/x-www-form-urlencoded"), customer.headers.at("content-type"));
        const auto customer_form = DecodeForm(customer.body);
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, customer_form.size());
        CPPUNIT_ASSERT_EQUAL(WALLET, FormValue(customer_form, "metadata[wallet_address]"));
        // Search lags behind writes: the creation is keyed by the wallet, so a second one meanwhile finds the first.
        CPPUNIT_ASSERT_EQUAL("sigil-customer-" + WALLET, customer.headers.at("idempotency-key"));
        const auto intent_form = DecodeForm(requests[2].body);
        CPPUNIT_ASSERT_EQUAL(std::string("cus_QZrAx1mT4hPq9L"), FormValue(intent_form, "customer"));
    }

    void testPaidWhenSucceeded() {
        m_server->AnswerFile("GET", "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M", 200, "payment_intent_succeeded.json");
        auto paid = MakeProcessor()->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M"));
        CPPUNIT_ASSERT_MESSAGE(paid.ok() ? "" : paid.error().message, paid.ok());
        CPPUNIT_ASSERT(*paid);
        const auto requests = m_server->Requests();
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, requests.size());
        CPPUNIT_ASSERT_EQUAL(std::string("GET"), requests[0].method);
        CPPUNIT_ASSERT_EQUAL("Bearer " + TEST_KEY, requests[0].headers.at("authorization"));
    }

    void testNotPaidWhileUnfinished() {
        const std::pair<const char*, const char*> cases[] = {
            {"pi_3PiQhA2eZvKYlo2C1x9Wn0Jd", "payment_intent_created.json"},  // requires_payment_method
            {"pi_3PiQmB2eZvKYlo2C1aD8Kx4N", "payment_intent_processing.json"},
            {"pi_3PiQnC2eZvKYlo2C0bE9Ly5P", "payment_intent_canceled.json"},
        };
        for (const auto& [id, file] : cases) m_server->AnswerFile("GET", std::string("/v1/payment_intents/") + id, 200, file);
        auto processor = MakeProcessor();
        for (const auto& [id, file] : cases) {
            auto paid = processor->IsPaid(Intent(id));
            CPPUNIT_ASSERT_MESSAGE(std::string(file) + ": " + (paid.ok() ? "" : paid.error().message), paid.ok());
            CPPUNIT_ASSERT_MESSAGE(file, !*paid);
        }
        // The status alone decides: the succeeded document with only its status changed is not paid.
        const std::string succeeded = sigil::test::ReadDataFile("stripe/payment_intent_succeeded.json");
        const std::string status = "\"status\": \"succeeded\"";
        CPPUNIT_ASSERT(succeeded.find(status) != std::string::npos);
        for (const char* other : {"requires_payment_method", "requires_action", "requires_capture", "processing", "canceled"}) {
            std::string text = succeeded;
            text.replace(text.find(status), status.size(), std::string("\"status\": \"") + other + "\"");
            FakeStripe server;
            server.AnswerText("GET", "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M", 200, text);
            m_settings.stripe_api_base = server.Base();
            auto paid = MakeProcessor()->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M"));
            CPPUNIT_ASSERT_MESSAGE(other, paid.ok());
            CPPUNIT_ASSERT_MESSAGE(other, !*paid);
        }
    }

    void testNotPaidForAnotherWallet() {
        m_server->AnswerFile("GET", "/v1/payment_intents/pi_3PiQpD2eZvKYlo2C1cF0Mz6Q", 200,
                             "payment_intent_succeeded_other_wallet.json");
        auto paid = MakeProcessor()->IsPaid(Intent("pi_3PiQpD2eZvKYlo2C1cF0Mz6Q"));
        CPPUNIT_ASSERT(paid.ok());
        CPPUNIT_ASSERT(!*paid);
    }

    void testNotPaidForSmallerAmountReceived() {
        m_server->AnswerFile("GET", "/v1/payment_intents/pi_3PiQqE2eZvKYlo2C0dG1Na7R", 200,
                             "payment_intent_succeeded_partial.json");
        auto processor = MakeProcessor();
        auto paid = processor->IsPaid(Intent("pi_3PiQqE2eZvKYlo2C0dG1Na7R"));
        CPPUNIT_ASSERT(paid.ok());
        CPPUNIT_ASSERT(!*paid);
        // Control: the 1000 cents received do pay an intent of 1000.
        auto smaller = Intent("pi_3PiQqE2eZvKYlo2C0dG1Na7R");
        smaller.amount_cents = 1000;
        auto paid_smaller = processor->IsPaid(smaller);
        CPPUNIT_ASSERT(paid_smaller.ok());
        CPPUNIT_ASSERT(*paid_smaller);
    }

    void testNotPaidInAnotherCurrency() {
        // 2500 of a currency other than usd is not 2500 cents.
        std::string text = sigil::test::ReadDataFile("stripe/payment_intent_succeeded.json");
        const std::string usd = "\"currency\": \"usd\"";
        CPPUNIT_ASSERT(text.find(usd) != std::string::npos);
        text.replace(text.find(usd), usd.size(), "\"currency\": \"jpy\"");
        m_server->AnswerText("GET", "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M", 200, text);
        auto paid = MakeProcessor()->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M"));
        CPPUNIT_ASSERT(paid.ok());
        CPPUNIT_ASSERT(!*paid);
    }

    void testWalletComparedIgnoringCase() {
        m_server->AnswerFile("GET", "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M", 200, "payment_intent_succeeded.json");
        auto intent = Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M");
        intent.customer = "0x8BA1F109551BD432803012645AC136DDD64DBA72";
        auto paid = MakeProcessor()->IsPaid(intent);
        CPPUNIT_ASSERT(paid.ok());
        CPPUNIT_ASSERT(*paid);
    }

    void testInvalidIntentIdRefusedWithoutRequest() {
        auto processor = MakeProcessor();
        for (const char* id : {"", "pi_", "ch_3PiQkF2eZvKYlo2C0rT5Uy7M", "pi_abc/../../v1/customers", "pi_abc?x=1", "pi_ab c",
                               "PI_abc"}) {
            auto paid = processor->IsPaid(Intent(id));
            ExpectError(paid, ErrorKind::InvalidInput, "invalid_payment_intent_id");
        }
        CPPUNIT_ASSERT(m_server->Requests().empty());
    }

    void testStripeRefusalPassesItsMessage() {
        m_server->AnswerFile("GET", SEARCH_TARGET, 200, "customer_search_found.json");
        m_server->AnswerFile("POST", "/v1/payment_intents", 400, "error_invalid_request_400.json");
        auto intent = MakeProcessor()->Create(WALLET, 100000000);
        ExpectError(intent, ErrorKind::InvalidInput, "payment_refused");
        CPPUNIT_ASSERT_MESSAGE(intent.error().message,
                               intent.error().message.find("Amount must be no more than $999,999.99") != std::string::npos);
    }

    void testRejectedCredentialsAreUnavailableWithoutTheKey() {
        m_server->AnswerFile("GET", SEARCH_TARGET, 401, "error_authentication_401.json");
        m_server->AnswerFile("GET", "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M", 401, "error_authentication_401.json");
        auto processor = MakeProcessor();
        StderrCapture log;
        auto intent = processor->Create(WALLET, 2500);
        auto paid = processor->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M"));
        const std::string logged = log.Text();
        for (const Error& e : {intent.error(), paid.error()}) {
            CPPUNIT_ASSERT(e.kind == ErrorKind::Unavailable);
            CPPUNIT_ASSERT_EQUAL(std::string("payment_processor_unavailable"), e.code);
            CPPUNIT_ASSERT_EQUAL(std::string("the payment processor refused our credentials"), e.message);
            Record(e);
        }
        // Stripe's answer quotes part of the key: neither it nor the key reaches the log.
        CPPUNIT_ASSERT(logged.find("HTTP 401") != std::string::npos);
        CPPUNIT_ASSERT(logged.find(TEST_KEY) == std::string::npos);
        CPPUNIT_ASSERT(logged.find("sk_") == std::string::npos);
        CPPUNIT_ASSERT(logged.find("Bearer") == std::string::npos);
    }

    void testSilentServerTimesOut() {
        m_server->Hang("GET", "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M");
        m_settings.stripe_timeout_ms = 400;
        auto processor = MakeProcessor();
        const auto start = Clock::now();
        auto paid = processor->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M"));
        const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
        ExpectError(paid, ErrorKind::Timeout, "payment_processor_timeout");
        CPPUNIT_ASSERT_MESSAGE(std::to_string(elapsed) + " ms", elapsed >= 350 && elapsed < 2000);
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, m_server->Requests().size());  // it did ask
    }

    void testGarbageAnswersAreUnavailable() {
        const std::string pi = "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M";
        auto ask = [&](int status, const std::string& body) {
            auto server = std::make_unique<FakeStripe>();
            server->AnswerText("GET", pi, status, body);
            server->AnswerText("GET", SEARCH_TARGET, status, body);
            m_settings.stripe_api_base = server->Base();
            auto p = MakeProcessor();
            auto paid = p->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M"));
            ExpectError(paid, ErrorKind::Unavailable, "payment_processor_unavailable");
            auto intent = p->Create(WALLET, 2500);
            ExpectError(intent, ErrorKind::Unavailable, "payment_processor_unavailable");
        };
        ask(200, "this is not json {");
        ask(200, "");
        ask(200, "[1,2,3]");
        ask(200, std::string(100000, '['));                             // deep nesting: refused, no stack overflow
        ask(200, "{\"id\":5,\"status\":[\"succeeded\"],\"data\":{}}");  // wrong types everywhere
        ask(200, "{\"id\":\"pi_3PiQkF2eZvKYlo2C0rT5Uy7M\",\"data\":[{\"id\":7}]}");  // no status; customer id not text
        ask(200, "{" + std::string(1100000, ' ') + "}");                 // over the 1 MiB cap
        // A succeeded intent whose fields have the wrong types.
        std::string wrong = sigil::test::ReadDataFile("stripe/payment_intent_succeeded.json");
        const std::string received = "\"amount_received\": 2500";
        CPPUNIT_ASSERT(wrong.find(received) != std::string::npos);
        wrong.replace(wrong.find(received), received.size(), "\"amount_received\": \"2500\"");
        auto server = std::make_unique<FakeStripe>();
        server->AnswerText("GET", pi, 200, wrong);
        m_settings.stripe_api_base = server->Base();
        ExpectError(MakeProcessor()->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M")), ErrorKind::Unavailable,
                    "payment_processor_unavailable");
        // An answer about another intent than the one asked for.
        server->AnswerFile("GET", "/v1/payment_intents/pi_3PiQhA2eZvKYlo2C1x9Wn0Jd", 200, "payment_intent_succeeded.json");
        ExpectError(MakeProcessor()->IsPaid(Intent("pi_3PiQhA2eZvKYlo2C1x9Wn0Jd")), ErrorKind::Unavailable,
                    "payment_processor_unavailable");
    }

    void testServerErrorAndUnreachableAreUnavailable() {
        m_server->AnswerText("GET", SEARCH_TARGET, 500,
                             "{\"error\":{\"type\":\"api_error\",\"message\":\"An unknown error occurred\"}}");
        m_server->AnswerText("GET", "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M", 503, "<html>Service Unavailable</html>");
        auto processor = MakeProcessor();
        ExpectError(processor->Create(WALLET, 2500), ErrorKind::Unavailable, "payment_processor_unavailable");
        ExpectError(processor->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M")), ErrorKind::Unavailable,
                    "payment_processor_unavailable");
        // Nothing listens on a port we bound and released.
        std::string base;
        {
            FakeStripe gone;
            base = gone.Base();
        }
        m_settings.stripe_api_base = base;
        ExpectError(MakeProcessor()->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M")), ErrorKind::Unavailable,
                    "payment_processor_unavailable");
    }

    void testKeyFileRefusedWhenGroupReadable() {
        for (const mode_t mode : {0644, 0640, 0604, 0660}) {
            ::chmod(m_key_file.c_str(), mode);
            ExpectError(StripeProcessor::Create(m_settings), ErrorKind::InvalidInput, "invalid_config");
        }
        ::chmod(m_key_file.c_str(), 0400);
        CPPUNIT_ASSERT(StripeProcessor::Create(m_settings).ok());
    }

    void testKeyFileRefusedWhenMissingEmptyOrNotAFile() {
        m_settings.stripe_secret_key_file = m_dir + "/missing.key";
        ExpectError(StripeProcessor::Create(m_settings), ErrorKind::InvalidInput, "invalid_config");
        m_settings.stripe_secret_key_file = "";
        ExpectError(StripeProcessor::Create(m_settings), ErrorKind::InvalidInput, "invalid_config");
        m_settings.stripe_secret_key_file = m_dir;  // a directory
        ExpectError(StripeProcessor::Create(m_settings), ErrorKind::InvalidInput, "invalid_config");
        for (const char* content : {"", "\n", "\r\n"}) {
            WriteFile(m_key_file, content, 0600);
            m_settings.stripe_secret_key_file = m_key_file;
            ExpectError(StripeProcessor::Create(m_settings), ErrorKind::InvalidInput, "invalid_config");
        }
        // A FIFO is not a regular file, and opening it must not block.
        const std::string fifo = m_dir + "/fifo.key";
        CPPUNIT_ASSERT_EQUAL(0, ::mkfifo(fifo.c_str(), 0600));
        m_settings.stripe_secret_key_file = fifo;
        ExpectError(StripeProcessor::Create(m_settings), ErrorKind::InvalidInput, "invalid_config");
    }

    void testKeyFileRefusedWithoutSecretKeyPrefix() {
        for (const std::string& content : {std::string("pk_test_51Sigil0PublishableKeyForTests\n"), std::string("rk_test_abc\n"),
                                           std::string(" sk_test_leadingspace\n"), std::string("sk_\n"),
                                           std::string("sk_test_has space\n"), "\n" + TEST_KEY + "\n"}) {
            WriteFile(m_key_file, content, 0600);
            ExpectError(StripeProcessor::Create(m_settings), ErrorKind::InvalidInput, "invalid_config");
        }
        // CRLF line ends are stripped like LF; later lines are ignored.
        WriteFile(m_key_file, TEST_KEY + "\r\nsecond line\n", 0600);
        m_server->AnswerFile("GET", "/v1/payment_intents/pi_3PiQkF2eZvKYlo2C0rT5Uy7M", 200, "payment_intent_succeeded.json");
        auto processor = StripeProcessor::Create(m_settings);
        CPPUNIT_ASSERT(processor.ok());
        CPPUNIT_ASSERT((*processor)->IsPaid(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M")).ok());
        CPPUNIT_ASSERT_EQUAL("Bearer " + TEST_KEY, m_server->Requests().at(0).headers.at("authorization"));
    }

    void testApiBaseMustBeHttpsOrLoopback() {
        for (const char* base : {"http://api.stripe.com", "http://127.0.0.1.attacker.example", "http://127.0.0.1:80x",
                                 "http://127.0.0.1@attacker.example", "ftp://127.0.0.1", "https://", ""}) {
            m_settings.stripe_api_base = base;
            ExpectError(StripeProcessor::Create(m_settings), ErrorKind::InvalidInput, "invalid_config");
        }
        for (const char* base : {"https://api.stripe.com", "https://api.stripe.com/", "http://127.0.0.1:12111"}) {
            m_settings.stripe_api_base = base;
            CPPUNIT_ASSERT_MESSAGE(base, StripeProcessor::Create(m_settings).ok());
        }
    }

    void testConfigMembersNamePublishableKey() {
        auto processor = MakeProcessor();
        CPPUNIT_ASSERT_EQUAL(std::string("stripe"), processor->Name());
        CPPUNIT_ASSERT_EQUAL(std::string("\"publishable_key\":\"pk_test_51Sigil0PublishableKeyForTests\""),
                             processor->ConfigMembers());
        CPPUNIT_ASSERT_EQUAL(std::string(""), processor->AnswerMembers(Intent("pi_3PiQkF2eZvKYlo2C0rT5Uy7M")));
        m_settings.stripe_publishable_key = "pk_\"quoted\"";
        CPPUNIT_ASSERT_EQUAL(std::string("\"publishable_key\":\"pk_\\\"quoted\\\"\""), MakeProcessor()->ConfigMembers());
        m_settings.stripe_publishable_key = "";
        CPPUNIT_ASSERT_EQUAL(std::string(""), MakeProcessor()->ConfigMembers());
    }

    // Runs last: every error message the suite produced (refusals, credentials, timeouts, garbage,
    // key files holding the key itself) is free of the key and of the Authorization header.
    void testKeyNeverInAnyErrorMessage() {
        const auto& messages = SeenMessages();
        CPPUNIT_ASSERT_MESSAGE(std::to_string(messages.size()), messages.size() >= 40);
        for (const std::string& m : messages) {
            CPPUNIT_ASSERT_MESSAGE(m, m.find(TEST_KEY) == std::string::npos);
            CPPUNIT_ASSERT_MESSAGE(m, m.find("Bearer") == std::string::npos);
            CPPUNIT_ASSERT_MESSAGE(m, m.find("sk_test_") == std::string::npos);
            CPPUNIT_ASSERT_MESSAGE(m, m.find("XyZ9") == std::string::npos);
        }
    }

private:
    static void WriteFile(const std::string& path, const std::string& content, mode_t mode) {
        ::unlink(path.c_str());
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0) throw std::runtime_error("cannot write " + path);
        const bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
        ::close(fd);
        ::chmod(path.c_str(), mode);  // despite the umask
        if (!ok) throw std::runtime_error("short write to " + path);
    }

    std::unique_ptr<StripeProcessor> MakeProcessor() {
        auto processor = StripeProcessor::Create(m_settings);
        if (!processor.ok()) throw std::runtime_error("StripeProcessor::Create: " + processor.error().message);
        return std::move(*processor);
    }

    static PaymentIntent Intent(const std::string& id) {
        PaymentIntent intent;
        intent.id = id;
        intent.customer = WALLET;
        intent.amount_cents = 2500;
        intent.processor = "stripe";
        return intent;
    }

    static void Record(const Error& e) {
        CPPUNIT_ASSERT_MESSAGE(e.message, e.message.find(TEST_KEY) == std::string::npos);
        SeenMessages().push_back(e.message);
    }

    template <typename T>
    static void ExpectError(const sigil::common::Result<T>& result, ErrorKind kind, const std::string& code) {
        CPPUNIT_ASSERT_MESSAGE("expected " + code + ", got success", !result.ok());
        CPPUNIT_ASSERT_EQUAL_MESSAGE(result.error().message, code, result.error().code);
        CPPUNIT_ASSERT_MESSAGE(result.error().message, result.error().kind == kind);
        Record(result.error());
    }

    std::string m_dir;
    std::string m_key_file;
    std::unique_ptr<FakeStripe> m_server;
    BillingSettings m_settings;
};

CPPUNIT_TEST_SUITE_REGISTRATION(StripeProcessorTests);
