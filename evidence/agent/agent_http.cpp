#include "evidence/agent/agent_http.h"

#include <curl/curl.h>

#include "common/handles.h"

namespace sigil::evidence {
namespace {

using common::ErrorKind;
using common::MakeError;
using CurlEasy = common::CHandle<CURL, curl_easy_cleanup>;
using CurlList = common::CHandle<curl_slist, curl_slist_free_all>;

struct Sink {
    common::SecretBuffer* body = nullptr;
    std::size_t max = 0;
    bool too_large = false;
};

// libcurl's write callback: never throws, stops the transfer past the cap.
extern "C" std::size_t Collect(char* data, std::size_t size, std::size_t n, void* user) noexcept {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t bytes = size * n;
    if (sink->body->size() + bytes > sink->max) {
        sink->too_large = true;
        return 0;
    }
    try {
        // Growing is safe for a secret: the wiping allocator wipes each buffer it frees.
        sink->body->insert(sink->body->end(), data, data + bytes);
    } catch (...) {
        return 0;
    }
    return bytes;
}

}  // namespace

common::Result<AgentAnswer> PostToAgent(const std::string& socket_path, const std::string& path, std::string_view body,
                                        int timeout_ms, std::size_t max_answer_bytes) {
    CurlEasy curl(curl_easy_init());
    CurlList headers(curl_slist_append(nullptr, "Content-Type: application/json"));
    if (!curl || !headers) return MakeError(ErrorKind::Unavailable, "agent_unreachable", "cannot set up a request");
    AgentAnswer answer;
    Sink sink{&answer.body, max_answer_bytes, false};
    const std::string url = "http://localhost" + path;
    curl_easy_setopt(curl.get(), CURLOPT_UNIX_SOCKET_PATH, socket_path.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
    curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, Collect);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &sink);
    const CURLcode rc = curl_easy_perform(curl.get());
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        return MakeError(ErrorKind::Timeout, "agent_timeout", "no answer within " + std::to_string(timeout_ms) + " ms");
    }
    if (sink.too_large) {
        return MakeError(ErrorKind::Unavailable, "agent_unreachable",
                         "the answer is over " + std::to_string(max_answer_bytes) + " bytes");
    }
    if (rc != CURLE_OK) {
        return MakeError(ErrorKind::Unavailable, "agent_unreachable", std::string("cannot be reached: ") + curl_easy_strerror(rc));
    }
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &answer.status);
    return answer;
}

}  // namespace sigil::evidence
