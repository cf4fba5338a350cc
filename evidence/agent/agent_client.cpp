#include "evidence/agent/agent_client.h"

#include <curl/curl.h>

#include <rapidjson/document.h>

#include "common/handles.h"
#include "common/hex.h"
#include "common/metrics.h"

namespace sigil::evidence {
namespace {

using common::ErrorKind;
using common::MakeError;
using CurlEasy = common::CHandle<CURL, curl_easy_cleanup>;
using CurlList = common::CHandle<curl_slist, curl_slist_free_all>;

struct Sink {
    std::string body;
    std::size_t max = 0;
    bool too_large = false;
};

// libcurl's write callback: never throws, stops the transfer past the cap.
extern "C" std::size_t Collect(char* data, std::size_t size, std::size_t n, void* user) noexcept {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t bytes = size * n;
    if (sink->body.size() + bytes > sink->max) {
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

common::Error Unavailable(const std::string& why) {
    return MakeError(ErrorKind::Unavailable, "attestation_unavailable", why);
}

}  // namespace

common::Result<std::string> AgentClient::GetQuote(common::ByteView report_data) const {
    if (report_data.size() > REPORT_DATA_BYTES) {
        return MakeError(ErrorKind::InvalidInput, "invalid_report_data",
                         "report_data is at most " + std::to_string(REPORT_DATA_BYTES) + " bytes");
    }
    // The quote's latency is the agent's (a TDX quote costs tens of ms): the agent series in /metrics.
    common::DependencyTimer timer(common::Dependency::Agent);
    auto quote = Post("/GetQuote", "{\"report_data\":\"" + common::HexEncode(report_data, false) + "\"}");
    if (quote.ok()) timer.MarkOk();
    return quote;
}

common::Result<std::string> AgentClient::Info() const { return Post("/Info", "{}"); }

common::Result<std::string> AgentClient::Post(const std::string& path, const std::string& body) const {
    if (m_options.socket_path.empty()) return Unavailable("no TEE guest agent is configured on this instance");
    CurlEasy curl(curl_easy_init());
    CurlList headers(curl_slist_append(nullptr, "Content-Type: application/json"));
    if (!curl || !headers) return Unavailable("cannot set up a request to the guest agent");
    Sink sink;
    sink.max = m_options.max_answer_bytes;
    const std::string url = "http://localhost" + path;
    curl_easy_setopt(curl.get(), CURLOPT_UNIX_SOCKET_PATH, m_options.socket_path.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(m_options.timeout_ms));
    curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, Collect);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &sink);
    const CURLcode rc = curl_easy_perform(curl.get());
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        return MakeError(ErrorKind::Timeout, "attestation_timeout",
                         "the TEE guest agent did not answer within " + std::to_string(m_options.timeout_ms) + " ms");
    }
    if (sink.too_large) return Unavailable("the TEE guest agent's answer is over the size limit");
    if (rc != CURLE_OK) return Unavailable(std::string("the TEE guest agent cannot be reached: ") + curl_easy_strerror(rc));
    long status = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) return Unavailable("the TEE guest agent answered HTTP " + std::to_string(status));
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(sink.body.data(), sink.body.size());
    if (doc.HasParseError() || !doc.IsObject()) return Unavailable("the TEE guest agent's answer is not a JSON object");
    return std::move(sink.body);
}

}  // namespace sigil::evidence
