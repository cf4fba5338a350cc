#include "workers/chain/rpc_client.h"

#include <curl/curl.h>

#include <mutex>
#include <thread>

#include "common/handles.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

void InitCurlOnce() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

extern "C" size_t AppendBody(char* data, size_t size, size_t nmemb, void* user) {
    // No exception may cross into libcurl: append can only fail by bad_alloc, so refuse instead.
    auto* out = static_cast<std::string*>(user);
    const size_t n = size * nmemb;
    constexpr size_t kMaxResponse = 64u << 20;  // a node never legitimately sends us more
    if (out->size() + n > kMaxResponse) return 0;
    try {
        out->append(data, n);
    } catch (...) {
        return 0;
    }
    return n;
}

class CurlTransport final : public RpcTransport {
public:
    explicit CurlTransport(const RpcOptions& options) : m_options(options) {
        InitCurlOnce();
        m_curl.reset(curl_easy_init());
        m_headers.reset(curl_slist_append(nullptr, "Content-Type: application/json"));
    }

    common::Result<std::string> Post(std::string_view body) override {
        CURL* c = m_curl.get();
        if (c == nullptr) return MakeError(ErrorKind::Internal, "curl_init_failed", "libcurl could not be initialized");
        std::string response;
        curl_easy_setopt(c, CURLOPT_URL, m_options.url.c_str());
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, m_headers.get());
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(m_options.connect_timeout.count()));
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(m_options.total_timeout.count()));
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        const CURLcode rc = curl_easy_perform(c);
        if (rc == CURLE_OPERATION_TIMEDOUT) {
            return MakeError(ErrorKind::Timeout, "chain_timeout", "the chain node did not answer in time");
        }
        if (rc != CURLE_OK) {
            return MakeError(ErrorKind::Unavailable, "chain_unreachable",
                             std::string("the chain node is unreachable: ") + curl_easy_strerror(rc));
        }
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200) {
            return MakeError(ErrorKind::Unavailable, "chain_unreachable",
                             "the chain node answered HTTP " + std::to_string(status));
        }
        return response;
    }

private:
    RpcOptions m_options;
    common::CHandle<CURL, curl_easy_cleanup> m_curl;
    common::CHandle<curl_slist, curl_slist_free_all> m_headers;
};

}  // namespace

std::unique_ptr<RpcTransport> MakeCurlTransport(const RpcOptions& options) {
    return std::make_unique<CurlTransport>(options);
}

RpcClient::RpcClient(std::unique_ptr<RpcTransport> transport, RpcOptions options)
    : m_transport(std::move(transport)), m_options(std::move(options)) {}

common::Result<RpcReply> RpcClient::Call(std::string_view method, std::string_view params_json, bool idempotent) {
    const int attempts = idempotent ? 1 + m_options.read_retries : 1;
    auto backoff = m_options.retry_backoff;
    common::Error last = MakeError(ErrorKind::Unavailable, "chain_unreachable", "the chain node is unreachable");
    for (int attempt = 0; attempt < attempts; ++attempt) {
        if (attempt > 0) {
            std::this_thread::sleep_for(backoff);
            backoff *= 2;
        }
        const std::uint64_t id = m_next_id++;
        auto body = m_transport->Post(BuildRpcRequest(method, params_json, id));
        if (!body.ok()) {
            last = body.error();
            continue;
        }
        auto reply = ParseRpcResponse(*body, id);
        if (!reply.ok()) {
            last = reply.error();
            continue;
        }
        return reply;
    }
    return last;
}

common::Result<std::string> RpcClient::CallForResult(std::string_view method, std::string_view params_json,
                                                     bool idempotent) {
    auto reply = Call(method, params_json, idempotent);
    if (!reply.ok()) return reply.error();
    if (reply->is_error) {
        return MakeError(ErrorKind::Unavailable, "rpc_error",
                         "chain node refused " + std::string(method) + ": " + reply->error_message);
    }
    return std::move(reply->result_json);
}

}  // namespace sigil::workers
