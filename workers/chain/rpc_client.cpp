#include "workers/chain/rpc_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "common/activity.h"
#include "common/handles.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/scoreboard.h"

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

    common::Result<std::string> Post(std::string_view body, std::chrono::milliseconds timeout) override {
        CURL* c = m_curl.get();
        if (c == nullptr) return MakeError(ErrorKind::Internal, "curl_init_failed", "libcurl could not be initialized");
        std::string response;
        curl_easy_setopt(c, CURLOPT_URL, m_options.url.c_str());
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, m_headers.get());
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
        const long timeout_ms = std::max<long>(1, static_cast<long>(timeout.count()));
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                         std::min(timeout_ms, static_cast<long>(m_options.connect_timeout.count())));
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
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
            // curl's text names hosts and ports: it goes to the log, not to the caller.
            common::LogWarn(std::string("chain node unreachable: ") + curl_easy_strerror(rc));
            return MakeError(ErrorKind::Suspended, "chain_unavailable", "the chain node is unreachable");
        }
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200) {
            return MakeError(ErrorKind::Suspended, "chain_unavailable",
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

RpcClient::RpcClient(std::unique_ptr<RpcTransport> transport, RpcOptions options, ChainCircuit* circuit)
    : m_transport(std::move(transport)), m_options(std::move(options)), m_circuit(circuit) {}

RpcClient::ExtendedDeadline::ExtendedDeadline(RpcClient& rpc, Clock::time_point deadline)
    : m_rpc(rpc), m_saved(rpc.m_deadline) {
    if (m_rpc.m_deadline && *m_rpc.m_deadline < deadline) m_rpc.m_deadline = deadline;
}

namespace {

common::Error CircuitOpen() {
    return MakeError(ErrorKind::Suspended, "chain_unavailable",
                     "the chain node is failing; chain requests are refused for a moment while it is tested");
}

// The chain reserve ([supervisor] reserve_workers): the workers left must stay free for chain-free requests.
common::Error ChainReserveHeld() {
    return MakeError(ErrorKind::Suspended, "overloaded",
                     "too many requests are waiting on the chain node; retry shortly");
}

common::Error BudgetSpent() {
    return MakeError(ErrorKind::Timeout, "chain_timeout", "the chain node did not answer within this request's budget");
}

}  // namespace

common::Result<RpcReply> RpcClient::Call(std::string_view method, std::string_view params_json, bool idempotent) {
    const common::ActivityScope activity(common::Activity::Chain);
    if (!activity.admitted()) {
        common::CountOverloadRefusal();
        return ChainReserveHeld();
    }
    const std::int64_t started_us = common::MetricsNowUs();
    auto reply = CallUncounted(method, params_json, idempotent);
    const std::int64_t took_us = common::MetricsNowUs() - started_us;
    // A JSON-RPC error answer (a revert) is the node answering: counted as a call, not a failure.
    common::CountChainCall(method, reply.ok(), took_us);
    common::CountDependency(common::Dependency::Chain, reply.ok(), took_us);
    return reply;
}

common::Result<RpcReply> RpcClient::CallUncounted(std::string_view method, std::string_view params_json, bool idempotent) {
    const int attempts = idempotent ? 1 + m_options.read_retries : 1;
    auto backoff = m_options.retry_backoff;
    std::optional<common::Error> last;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        auto timeout = m_options.total_timeout;
        if (m_deadline) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*m_deadline - Clock::now());
            if (attempt > 0 && left <= backoff) break;  // no time for another try
            if (left.count() <= 0) break;
            if (attempt > 0) std::this_thread::sleep_for(backoff);
            timeout = std::min(timeout, left - (attempt > 0 ? backoff : std::chrono::milliseconds(0)));
        } else if (attempt > 0) {
            std::this_thread::sleep_for(backoff);
        }
        if (attempt > 0) backoff *= 2;

        auto admission = ChainCircuit::Admission::Closed;
        if (m_circuit != nullptr) {
            admission = m_circuit->Admit(common::MonotonicMs(), timeout.count());
            if (admission == ChainCircuit::Admission::Refused) return last ? *last : CircuitOpen();
        }
        const std::uint64_t id = m_next_id++;
        const std::int64_t started_ms = common::MonotonicMs();
        auto body = m_transport->Post(BuildRpcRequest(method, params_json, id), timeout);
        auto reply = body.ok() ? ParseRpcResponse(*body, id) : common::Result<RpcReply>(body.error());
        // A timeout of an attempt the budget starved is the caller's deadline, not the node's failure.
        const bool starved = !reply.ok() && reply.error().kind == ErrorKind::Timeout && timeout < m_options.starved_below;
        if (m_circuit != nullptr && !starved) {
            if (reply.ok()) {
                m_circuit->RecordAnswer(started_ms, common::MonotonicMs(), admission);
            } else {
                m_circuit->RecordFailure(common::MonotonicMs(), admission);
            }
        }
        if (reply.ok()) return reply;
        last = reply.error();
    }
    return last ? *last : BudgetSpent();
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
