#include "workers/billing/stripe_processor.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rapidjson/document.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "common/handles.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/log.h"
#include "common/random.h"

namespace sigil::workers::billing {
namespace {

using common::Error;
using common::ErrorKind;
using common::MakeError;

constexpr std::size_t MAX_ANSWER_BYTES = 1u << 20;
constexpr std::size_t MAX_KEY_FILE_BYTES = 4096;
constexpr std::size_t MAX_STRIPE_MESSAGE_BYTES = 500;
constexpr int MAX_ANSWER_DEPTH = 32;  // Stripe's objects nest a few levels
// Pinned so that a change of the account's default API version cannot change the objects we parse.
constexpr const char* STRIPE_VERSION_HEADER = "Stripe-Version: 2024-06-20";
constexpr const char* UNAVAILABLE = "payment_processor_unavailable";

// ---- the secret key file ----

Error BadKeyFile(const std::string& path, const std::string& why) {
    return MakeError(ErrorKind::InvalidInput, "invalid_config", "[billing] stripe_secret_key_file " + path + ": " + why);
}

bool IsKeyChar(std::uint8_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The key's first line, read into locked memory. Messages name the file, never its content.
common::Result<common::SecretBytes> ReadKeyFile(const std::string& path) {
    if (path.empty()) return BadKeyFile("(none)", "the stripe processor needs its secret key file");
    // O_NONBLOCK: a FIFO planted at the path must not hang the worker; fstat refuses it below.
    common::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd.valid()) return BadKeyFile(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return BadKeyFile(path, std::string("cannot stat: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return BadKeyFile(path, "is not a regular file");
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return BadKeyFile(path, std::string("has mode ") + mode + "; it must not be readable by group or others (0600)");
    }
    common::SecretBytes buffer(MAX_KEY_FILE_BYTES);
    std::size_t got = 0;
    while (got < buffer.size()) {
        const ssize_t r = ::read(fd.get(), buffer.data() + got, buffer.size() - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return BadKeyFile(path, std::string("cannot read: ") + std::strerror(errno));
        if (r == 0) break;
        got += static_cast<std::size_t>(r);
    }
    if (got == buffer.size()) return BadKeyFile(path, "is over 4 KiB; it should hold one sk_... key");
    std::size_t length = 0;
    while (length < got && buffer.data()[length] != '\n') ++length;
    if (length > 0 && buffer.data()[length - 1] == '\r') --length;
    if (length == 0) return BadKeyFile(path, "is empty");
    if (length < 4 || std::memcmp(buffer.data(), "sk_", 3) != 0) {
        return BadKeyFile(path, "does not hold a Stripe secret key (sk_...) on its first line");
    }
    for (std::size_t i = 0; i < length; ++i) {
        if (!IsKeyChar(buffer.data()[i])) return BadKeyFile(path, "the key on its first line has characters a Stripe key never has");
    }
    return common::SecretBytes(common::ByteView(buffer.data(), length));  // `buffer` wipes itself
}

// https://..., or the plain-HTTP loopback base the tests use (exactly 127.0.0.1, optional port).
std::optional<std::string> CheckedApiBase(std::string base) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    if (base.rfind("https://", 0) == 0 && base.size() > 8) return base;
    const std::string loopback = "http://127.0.0.1";
    if (base.rfind(loopback, 0) != 0) return std::nullopt;
    const std::string rest = base.substr(loopback.size());
    if (rest.empty()) return base;
    if (rest[0] != ':' || rest.size() < 2 || rest.size() > 6) return std::nullopt;
    for (std::size_t i = 1; i < rest.size(); ++i) {
        if (rest[i] < '0' || rest[i] > '9') return std::nullopt;
    }
    return base;
}

// ---- requests ----

// application/x-www-form-urlencoded and query components: everything but RFC 3986's unreserved
// characters is percent-encoded.
std::string UrlEncode(std::string_view text) {
    static constexpr char HEX[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size() * 3);
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~') {
            out.push_back(ch);
        } else {
            out.push_back('%');
            out.push_back(HEX[c >> 4]);
            out.push_back(HEX[c & 15]);
        }
    }
    return out;
}

std::string FormBody(const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string body;
    for (const auto& [name, value] : fields) {
        if (!body.empty()) body.push_back('&');
        body += UrlEncode(name) + "=" + UrlEncode(value);
    }
    return body;
}

// curl_slist_append copies each line; the Authorization line's copy is wiped before it is freed.
void WipeAndFreeList(curl_slist* list) {
    for (curl_slist* item = list; item != nullptr; item = item->next) {
        if (item->data != nullptr) common::Wipe(item->data, std::strlen(item->data));
    }
    curl_slist_free_all(list);
}

using CurlEasy = common::CHandle<CURL, curl_easy_cleanup>;
using WipedCurlList = common::CHandle<curl_slist, WipeAndFreeList>;

// A NUL-terminated text buffer wiped on destruction, for the one line that carries the key.
class WipedLine {
public:
    WipedLine() = default;
    ~WipedLine() { common::Wipe(m_bytes.data(), m_bytes.size()); }
    WipedLine(const WipedLine&) = delete;
    WipedLine& operator=(const WipedLine&) = delete;
    void Reserve(std::size_t n) { m_bytes.reserve(n); }  // no reallocation leaves an unwiped copy behind
    void Append(std::string_view s) { m_bytes.insert(m_bytes.end(), s.begin(), s.end()); }
    const char* CStr() {
        m_bytes.push_back('\0');
        return m_bytes.data();
    }

private:
    std::vector<char> m_bytes;
};

void InitCurlOnce() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
    std::string body;
    bool too_large = false;
};

// libcurl's write callback: never throws, stops the transfer past the cap.
extern "C" std::size_t CollectAnswer(char* data, std::size_t size, std::size_t n, void* user) noexcept {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t bytes = size * n;
    if (bytes > MAX_ANSWER_BYTES - sink->body.size()) {
        sink->too_large = true;
        return 0;
    }
    try {
        sink->body.append(data, bytes);
    } catch (...) {
        return 0;
    }
    return bytes;
}

Error Unavailable(const std::string& why) { return MakeError(ErrorKind::Unavailable, UNAVAILABLE, why); }

// ---- answers ----

const rapidjson::Value* Member(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject()) return nullptr;
    const auto it = object.FindMember(name);
    return it == object.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string> StringMember(const rapidjson::Value& object, const char* name) {
    const rapidjson::Value* v = Member(object, name);
    if (v == nullptr || !v->IsString()) return std::nullopt;
    return std::string(common::JsonView(*v));
}

std::optional<std::int64_t> IntMember(const rapidjson::Value& object, const char* name) {
    const rapidjson::Value* v = Member(object, name);
    if (v == nullptr || !v->IsInt64()) return std::nullopt;
    return v->GetInt64();
}

bool MatchesIdPattern(std::string_view id, std::string_view prefix) {
    if (id.size() <= prefix.size() || id.size() > 255 || id.substr(0, prefix.size()) != prefix) return false;
    for (const char c : id.substr(prefix.size())) {
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
    }
    return true;
}

bool IsWallet(std::string_view s) {
    if (s.size() != 42 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
    for (const char c : s.substr(2)) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
    }
    return true;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

std::int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// One request to Stripe.
struct Request {
    const char* method = "GET";   // GET | POST
    std::string path;             // "/v1/..." with its query, already encoded
    std::string form;             // POST body
    std::string idempotency_key;  // "" for none
};

// Stripe's own message for a refused request, when it is safe to pass on: short, and naming no key
// (Stripe's answers about keys quote part of them).
std::string RefusalMessage(const rapidjson::Document& doc, bool parsed, std::string_view secret_key, long status) {
    const std::string fallback = "the payment processor refused the request (HTTP " + std::to_string(status) + ")";
    if (!parsed) return fallback;
    const rapidjson::Value* error = Member(doc, "error");
    if (error == nullptr) return fallback;
    const auto message = StringMember(*error, "message");
    if (!message || message->empty() || message->size() > MAX_STRIPE_MESSAGE_BYTES) return fallback;
    for (const std::string_view marker : {std::string_view("sk_live_"), std::string_view("sk_test_"),
                                          std::string_view("rk_live_"), std::string_view("rk_test_"), secret_key}) {
        if (!marker.empty() && message->find(marker) != std::string::npos) return fallback;
    }
    for (const char c : *message) {
        if (static_cast<unsigned char>(c) < 0x20) return fallback;
    }
    return "the payment processor refused the request: " + *message;
}

// Sends `request`; answers the parsed JSON object of a 2xx answer, or the mapped error.
common::Result<rapidjson::Document> Send(const std::string& base, int timeout_ms, const common::SecretBytes& key,
                                         const Request& request) {
    CurlEasy curl(curl_easy_init());
    if (!curl) return Unavailable("cannot set up a request to the payment processor");
    WipedCurlList headers;
    {
        WipedLine authorization;
        authorization.Reserve(32 + key.size());
        authorization.Append("Authorization: Bearer ");
        authorization.Append(key.text());
        headers.reset(curl_slist_append(nullptr, authorization.CStr()));
    }  // our copy is wiped here; curl's copy when `headers` is freed
    auto append = [&headers](const std::string& line) {
        if (!headers) return;
        curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
        if (grown == nullptr) {
            headers.reset();  // an incomplete request is never sent
            return;
        }
        headers.release();
        headers.reset(grown);
    };
    append(STRIPE_VERSION_HEADER);
    append("Accept: application/json");
    append("Expect:");  // no 100-continue round trip
    const bool post = std::strcmp(request.method, "POST") == 0;
    if (post) append("Content-Type: application/x-www-form-urlencoded");
    if (!request.idempotency_key.empty()) append("Idempotency-Key: " + request.idempotency_key);
    if (!headers) return Unavailable("cannot set up a request to the payment processor");

    Sink sink;
    const std::string url = base + request.path;
    CURL* h = curl.get();
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_VERBOSE, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
    // The loopback test base is the only plain-HTTP one Create accepts; no redirect is followed.
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, base.rfind("https://", 0) == 0 ? "https" : "http");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "sigil-billing");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, CollectAnswer);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    if (post) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.form.c_str());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.form.size()));
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    const CURLcode rc = curl_easy_perform(h);

    if (rc == CURLE_OPERATION_TIMEDOUT) {
        return MakeError(ErrorKind::Timeout, "payment_processor_timeout",
                         "the payment processor did not answer within " + std::to_string(timeout_ms) + " ms");
    }
    if (sink.too_large) return Unavailable("the payment processor's answer is over 1 MiB");
    if (rc != CURLE_OK) {
        // curl_easy_strerror is a fixed text per code: it never holds the request or its headers.
        return Unavailable(std::string("the payment processor cannot be reached: ") + curl_easy_strerror(rc));
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    // Bounded nesting first: RapidJSON's parser recurses, and 1 MiB of '[' would exhaust the stack.
    rapidjson::Document doc;
    bool parsed = false;
    if (common::JsonNestingWithin(sink.body, MAX_ANSWER_DEPTH)) {
        doc.Parse<rapidjson::kParseValidateEncodingFlag>(sink.body.data(), sink.body.size());
        parsed = !doc.HasParseError() && doc.IsObject();
    }
    if (status == 401 || status == 403) {
        common::LogWarn("billing: Stripe answered HTTP " + std::to_string(status) +
                        " to our secret key; check [billing] stripe_secret_key_file");
        return Unavailable("the payment processor refused our credentials");
    }
    if (status == 429) return Unavailable("the payment processor is rate limiting us; try again shortly");
    if (status >= 400 && status < 500) {
        return MakeError(ErrorKind::InvalidInput, "payment_refused", RefusalMessage(doc, parsed, key.text(), status));
    }
    if (status < 200 || status >= 300) return Unavailable("the payment processor answered HTTP " + std::to_string(status));
    if (!parsed) return Unavailable("the payment processor's answer is not a JSON object");
    return doc;
}

}  // namespace

// ---- StripeProcessor ----

StripeProcessor::StripeProcessor(const BillingSettings& settings, common::SecretBytes key)
    : m_api_base(settings.stripe_api_base),
      m_publishable_key(settings.stripe_publishable_key),
      m_timeout_ms(settings.stripe_timeout_ms),
      m_secret_key(std::move(key)) {}

common::Result<std::unique_ptr<StripeProcessor>> StripeProcessor::Create(const BillingSettings& settings) {
    const auto base = CheckedApiBase(settings.stripe_api_base);
    if (!base) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config",
                         "[billing] stripe_api_base: must be https:// (or http://127.0.0.1[:port] for tests)");
    }
    if (settings.stripe_timeout_ms <= 0) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config", "[billing] stripe_timeout_ms: must be above 0");
    }
    SIGIL_TRY(key, ReadKeyFile(settings.stripe_secret_key_file));
    InitCurlOnce();
    BillingSettings checked = settings;
    checked.stripe_api_base = *base;
    return std::unique_ptr<StripeProcessor>(new StripeProcessor(checked, std::move(*key)));
}

std::string StripeProcessor::ConfigMembers() const {
    if (m_publishable_key.empty()) return "";
    return "\"publishable_key\":" + common::JsonQuote(m_publishable_key);
}

common::Result<PaymentIntent> StripeProcessor::Create(const std::string& customer, Cents cents) {
    // The wallet goes into a Stripe search query: only the exact address shape may get there.
    if (!IsWallet(customer)) return MakeError(ErrorKind::Internal, "invalid_customer", "the customer is not a wallet address");
    if (cents <= 0) return MakeError(ErrorKind::InvalidInput, "invalid_amount", "the amount must be above 0 cents");

    // The Stripe customer whose metadata.wallet_address is the wallet, found or created.
    Request search;
    search.path = "/v1/customers/search?query=" + UrlEncode("metadata['wallet_address']:'" + customer + "'");
    SIGIL_TRY(found, Send(m_api_base, m_timeout_ms, m_secret_key, search));
    const rapidjson::Value* data = Member(*found, "data");
    if (data == nullptr || !data->IsArray()) return Unavailable("the payment processor's customer search has no data list");
    std::string stripe_customer;
    if (!data->Empty()) {
        const auto id = StringMember((*data)[0], "id");
        if (!id || !MatchesIdPattern(*id, "cus_")) return Unavailable("the payment processor's customer has no valid id");
        stripe_customer = *id;
    } else {
        Request create;
        create.method = "POST";
        create.path = "/v1/customers";
        create.form = FormBody({{"metadata[wallet_address]", customer}});
        // Search lags behind writes (up to a minute): a second payment started meanwhile would
        // create a second customer. Stripe answers a repeated key (kept 24 h) with the first one.
        create.idempotency_key = "sigil-customer-" + customer;
        SIGIL_TRY(created, Send(m_api_base, m_timeout_ms, m_secret_key, create));
        const auto id = StringMember(*created, "id");
        if (!id || !MatchesIdPattern(*id, "cus_")) return Unavailable("the payment processor's new customer has no valid id");
        stripe_customer = *id;
    }

    Request intent_request;
    intent_request.method = "POST";
    intent_request.path = "/v1/payment_intents";
    intent_request.form = FormBody({{"amount", std::to_string(cents)},
                                    {"currency", "usd"},
                                    {"customer", stripe_customer},
                                    {"metadata[wallet_address]", customer},
                                    {"automatic_payment_methods[enabled]", "true"}});
    // A fresh key per intent: a resent request (a retry after a lost answer) never makes two.
    intent_request.idempotency_key = common::HexEncode(common::RandomBytes(16));
    SIGIL_TRY(answer, Send(m_api_base, m_timeout_ms, m_secret_key, intent_request));
    const auto id = StringMember(*answer, "id");
    const auto client_secret = StringMember(*answer, "client_secret");
    const auto amount = IntMember(*answer, "amount");
    const auto currency = StringMember(*answer, "currency");
    if (!id || !MatchesIdPattern(*id, "pi_")) return Unavailable("the payment processor's payment intent has no valid id");
    if (!client_secret || client_secret->empty()) return Unavailable("the payment processor's payment intent has no client_secret");
    if (!amount || *amount != cents || !currency || *currency != "usd") {
        return Unavailable("the payment processor's payment intent is not for the amount asked");
    }
    PaymentIntent intent;
    intent.id = *id;
    intent.customer = customer;
    intent.amount_cents = cents;
    intent.processor = "stripe";
    intent.client_secret = *client_secret;
    intent.created_ms = NowMs();
    return intent;
}

common::Result<bool> StripeProcessor::IsPaid(const PaymentIntent& intent) {
    if (!MatchesIdPattern(intent.id, "pi_")) {
        return MakeError(ErrorKind::InvalidInput, "invalid_payment_intent_id", "a payment intent id is pi_ and letters or digits");
    }
    Request retrieve;
    retrieve.path = "/v1/payment_intents/" + intent.id;
    SIGIL_TRY(answer, Send(m_api_base, m_timeout_ms, m_secret_key, retrieve));
    const auto id = StringMember(*answer, "id");
    const auto status = StringMember(*answer, "status");
    if (!id || *id != intent.id) return Unavailable("the payment processor answered about another payment intent");
    if (!status) return Unavailable("the payment processor's payment intent has no status");
    // requires_payment_method, requires_action, processing, canceled, ...: not (yet) paid.
    if (*status != "succeeded") return false;

    const auto received = IntMember(*answer, "amount_received");
    const auto currency = StringMember(*answer, "currency");
    const rapidjson::Value* metadata = Member(*answer, "metadata");
    if (!received || !currency || metadata == nullptr || !metadata->IsObject()) {
        return Unavailable("the payment processor's payment intent lacks amount_received, currency or metadata");
    }
    const rapidjson::Value* wallet = Member(*metadata, "wallet_address");
    if (wallet != nullptr && !wallet->IsString()) return Unavailable("the payment intent's metadata.wallet_address is not text");
    if (wallet == nullptr || !EqualsIgnoringCase(common::JsonView(*wallet), intent.customer)) return false;
    return *currency == "usd" && *received >= intent.amount_cents;
}

}  // namespace sigil::workers::billing
