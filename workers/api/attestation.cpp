#include "workers/api/attestation.h"

#include <memory>
#include <optional>
#include <string_view>

#include <rapidjson/document.h>

#include "common/clock.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/log.h"
#include "evidence/agent/agent_client.h"
#include "evidence/agent/report_data.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

// One cached answer and when it was fetched.
struct Cached {
    std::string body;
    std::int64_t at_ms = 0;
};

struct AttestationState {
    evidence::AgentClient agent;
    int cache_ms;
    std::optional<Cached> quote;  // report_data all zeros
    std::optional<Cached> info;
};

HttpResponse AgentFailure(const evidence::AgentClient& agent, const common::Error& error) {
    // The detail (socket, curl's words) is for the operator's log; the caller learns the kind.
    common::LogWarn("attestation: " + error.message);
    const bool none = agent.options().socket_path.empty();
    HttpResponse r = ErrorResponse(503, "attestation_unavailable",
                                   none ? "no TEE guest agent is configured on this instance"
                                        : error.code == "attestation_timeout"
                                              ? "the TEE guest agent did not answer in time"
                                              : "the TEE guest agent is not available");
    r.SetHeader("Retry-After", "5");
    return r;
}

// The fresh-enough cached answer, or the agent's (then cached).
common::Result<std::string> CachedOrAsk(std::optional<Cached>& slot, int cache_ms,
                                        const std::function<common::Result<std::string>()>& ask) {
    const std::int64_t now = common::MonotonicMs();
    if (slot && cache_ms > 0 && now - slot->at_ms < cache_ms) return slot->body;
    SIGIL_TRY(body, ask());
    if (cache_ms > 0) slot = Cached{*body, now};
    return body;
}

// The nonce of an /attestation query string: nullopt for no query, else the bytes of `nonce=<hex>`.
// Only one parameter exists, and its name is matched as sent, never decoded: nginx limits every
// request that has a query (nginx/sigil.conf.template), and a name nginx did not see as "nonce"
// (?%6eonce=) must not be read as one here. Hex needs no escapes, so the value is not decoded either.
common::Result<std::optional<common::Bytes>> ParseAttestationQuery(std::string_view query) {
    if (query.empty()) return std::optional<common::Bytes>{};
    constexpr std::string_view kPrefix = "nonce=";
    if (query.substr(0, kPrefix.size()) != kPrefix) {
        return MakeError(ErrorKind::InvalidInput, "invalid_query",
                         "/attestation takes one query parameter, nonce (spelled as is, not percent-encoded)");
    }
    const std::string_view value = query.substr(kPrefix.size());
    if (value.find('&') != std::string_view::npos) {
        return MakeError(ErrorKind::InvalidInput, "invalid_query",
                         "/attestation takes one query parameter, nonce, once");
    }
    auto bytes = common::HexDecode(value, common::HexPrefix::Optional);
    if (!bytes.ok() || bytes->empty() || bytes->size() > evidence::MAX_NONCE_BYTES) {
        return MakeError(ErrorKind::InvalidInput, "invalid_nonce", "nonce must be hex (0x optional) of 1 to 64 bytes");
    }
    return std::optional<common::Bytes>(std::move(bytes).value());
}

common::Result<HttpResponse> Attestation(AttestationState& state, RequestContext& ctx) {
    SIGIL_TRY(nonce, ParseAttestationQuery(ctx.request.query));
    if (*nonce) {
        // Domain-separated (evidence/agent/report_data.h): the caller's bytes never become the
        // report_data itself, so no nonce yields the evidence quote's value.
        auto quote = state.agent.GetQuote(evidence::NonceReportData(**nonce));
        if (!quote.ok()) return AgentFailure(state.agent, quote.error());
        return JsonResponse(200, std::move(quote).value());
    }
    const common::Bytes zeros(evidence::REPORT_DATA_BYTES, 0);
    auto quote = CachedOrAsk(state.quote, state.cache_ms, [&] { return state.agent.GetQuote(zeros); });
    if (!quote.ok()) return AgentFailure(state.agent, quote.error());
    return JsonResponse(200, std::move(quote).value());
}

// The agent's Info with tcb_info decoded: the agent sends it as a JSON string, the spec's readers
// expect tcb_info.app_compose.
common::Result<std::string> InfoWithTcbObject(const evidence::AgentClient& agent) {
    SIGIL_TRY(text, agent.Info());
    rapidjson::Document doc;
    doc.Parse(text->data(), text->size());
    auto tcb = doc.FindMember("tcb_info");
    if (tcb == doc.MemberEnd() || !tcb->value.IsString()) return text;
    rapidjson::Document inner(&doc.GetAllocator());
    inner.Parse(tcb->value.GetString(), tcb->value.GetStringLength());
    if (inner.HasParseError() || !inner.IsObject()) {
        return MakeError(ErrorKind::Unavailable, "attestation_unavailable", "the agent's tcb_info is not a JSON object");
    }
    tcb->value.CopyFrom(inner, doc.GetAllocator());
    return common::JsonSerialize(doc);
}

}  // namespace

void AddAttestationRoutes(Router& router, const AttestationSettings& settings) {
    evidence::AgentOptions options;
    options.socket_path = settings.agent_socket;
    options.timeout_ms = settings.timeout_ms;
    auto state = std::make_shared<AttestationState>(AttestationState{evidence::AgentClient(options), settings.cache_ms, {}, {}});
    router.Add({"GET", "/attestation", AuthRequirement::None, BodyKind::None,
                [state](RequestContext& ctx) { return Attestation(*state, ctx); },
                "A TEE quote relayed from the guest agent: report_data all zeros (cached), or bound to ?nonce= "
                "(hex, 1 to 64 bytes, rate limited per client): report_data = SHA-512(\"sigil/attestation-nonce/v1\" || nonce)",
                "attestation", ApiSchema("attestation.json#/AttestationQuery"), ApiSchema("attestation.json#/Quote")});
    router.Add({"GET", "/info", AuthRequirement::None, BodyKind::None,
                [state](RequestContext&) -> common::Result<HttpResponse> {
                    auto info = CachedOrAsk(state->info, state->cache_ms, [&] { return InfoWithTcbObject(state->agent); });
                    if (!info.ok()) return AgentFailure(state->agent, info.error());
                    return JsonResponse(200, std::move(info).value());
                },
                "TEE app info relayed from the guest agent: app_id, compose_hash, tcb_info (app_compose, measurements)",
                "attestation", "", ApiSchema("attestation.json#/Info")});
}

}  // namespace sigil::workers
