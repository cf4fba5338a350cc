#include "evidence/agent/agent_client.h"

#include <rapidjson/document.h>

#include "common/hex.h"
#include "common/metrics.h"
#include "evidence/agent/agent_http.h"

namespace sigil::evidence {
namespace {

using common::ErrorKind;
using common::MakeError;

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
    auto answer = PostToAgent(m_options.socket_path, path, body, m_options.timeout_ms, m_options.max_answer_bytes);
    if (!answer.ok()) {
        if (answer.error().kind == ErrorKind::Timeout) {
            return MakeError(ErrorKind::Timeout, "attestation_timeout",
                             "the TEE guest agent did not answer within " + std::to_string(m_options.timeout_ms) + " ms");
        }
        return Unavailable("the TEE guest agent: " + answer.error().message);
    }
    if (answer->status != 200) return Unavailable("the TEE guest agent answered HTTP " + std::to_string(answer->status));
    const auto& bytes = answer->body;
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (doc.HasParseError() || !doc.IsObject()) return Unavailable("the TEE guest agent's answer is not a JSON object");
    return std::string(bytes.begin(), bytes.end());
}

}  // namespace sigil::evidence
