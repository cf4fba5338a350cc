#include "workers/http/openapi.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "common/json.h"

namespace sigil::workers {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

constexpr const char* kErrorRef = "#/components/schemas/Error";

Value Str(std::string_view s, Allocator& a) { return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a); }

void Set(Value& obj, std::string_view key, Value v, Allocator& a) { obj.AddMember(Str(key, a), v, a); }

// The member `key` of `obj`, added as an empty object when absent.
Value& Child(Value& obj, std::string_view key, Allocator& a) {
    auto it = obj.FindMember(Str(key, a));
    if (it != obj.MemberEnd()) return it->value;
    Set(obj, key, Value(rapidjson::kObjectType), a);
    return obj[Str(key, a)];
}

// Parses a route's schema text into `out` (a deep copy owned by `a`). Empty text -> false, nothing set.
common::Result<bool> ParseSchema(const Route& route, const std::string& text, Allocator& a, Value& out) {
    if (text.empty()) return false;
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    if (d.HasParseError() || !d.IsObject()) {
        return common::MakeError(common::ErrorKind::Internal, "invalid_route_schema",
                                 "the schema of " + route.method + " " + route.path + " is not a JSON object");
    }
    out.CopyFrom(d, a);
    return true;
}

Value JsonContent(Value schema, Allocator& a) {
    Value media(rapidjson::kObjectType);
    Set(media, "schema", std::move(schema), a);
    Value content(rapidjson::kObjectType);
    Set(content, "application/json", std::move(media), a);
    return content;
}

// An error answer with one example body (`code` and `message` as the service sends them).
Value ErrorResponse(std::string_view description, Allocator& a, std::string_view code = "",
                    std::string_view message = "") {
    Value ref(rapidjson::kObjectType);
    Set(ref, "$ref", Str(kErrorRef, a), a);
    Value resp(rapidjson::kObjectType);
    Set(resp, "description", Str(description, a), a);
    Value content = JsonContent(std::move(ref), a);
    if (!code.empty()) {
        Value error(rapidjson::kObjectType);
        Set(error, "code", Str(code, a), a);
        Set(error, "message", Str(message, a), a);
        Value example(rapidjson::kObjectType);
        Set(example, "error", std::move(error), a);
        Set(content["application/json"], "example", std::move(example), a);
    }
    Set(resp, "content", std::move(content), a);
    return resp;
}

std::string LastSegment(const std::string& path) {
    const auto slash = path.find_last_of('/');
    std::string seg = slash == std::string::npos ? path : path.substr(slash + 1);
    return seg.empty() ? "root" : seg;
}

std::string Lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// Query parameters from an object schema's properties (GET-style routes).
Value QueryParameters(const Value& schema, Allocator& a) {
    Value params(rapidjson::kArrayType);
    if (!schema.IsObject()) return params;
    auto props = schema.FindMember("properties");
    if (props == schema.MemberEnd() || !props->value.IsObject()) return params;
    std::set<std::string> required;
    auto req = schema.FindMember("required");
    if (req != schema.MemberEnd() && req->value.IsArray()) {
        for (const auto& r : req->value.GetArray()) {
            if (r.IsString()) required.insert(r.GetString());
        }
    }
    for (const auto& p : props->value.GetObject()) {
        const std::string name(p.name.GetString(), p.name.GetStringLength());
        Value param(rapidjson::kObjectType);
        Set(param, "name", Str(name, a), a);
        Set(param, "in", Str("query", a), a);
        Set(param, "required", Value(required.count(name) > 0), a);
        if (p.value.IsObject()) {
            auto d = p.value.FindMember("description");
            if (d != p.value.MemberEnd() && d->value.IsString()) {
                Set(param, "description", Value(d->value, a), a);
            }
        }
        Set(param, "schema", Value(p.value, a), a);
        params.PushBack(param, a);
    }
    return params;
}

Value ApiKeyParameter(Allocator& a) {
    Value param(rapidjson::kObjectType);
    Set(param, "name", Str("X-Api-Key", a), a);
    Set(param, "in", Str("header", a), a);
    // Not required: "Authorization: Bearer <key>" is the alternative (securitySchemes).
    Set(param, "required", Value(false), a);
    Set(param, "description",
        Str("Account or usage API key. Alternatively send Authorization: Bearer <key>.", a), a);
    Value schema(rapidjson::kObjectType);
    Set(schema, "type", Str("string", a), a);
    Set(param, "schema", std::move(schema), a);
    return param;
}

Value SecurityRequirement(Allocator& a) {
    Value security(rapidjson::kArrayType);
    for (const char* scheme : {"ApiKeyHeader", "BearerAuth"}) {
        Value req(rapidjson::kObjectType);
        Set(req, scheme, Value(rapidjson::kArrayType), a);
        security.PushBack(req, a);
    }
    return security;
}

Value Components(Allocator& a) {
    rapidjson::Document d;
    // The one error shape of every refusal (DESIGN.md section 4), and the two ways to send a key.
    d.Parse(R"({"schemas":{"Error":{"type":"object","required":["error","message"],"properties":{)"
            R"("message":{"type":"string","description":"error.message again, for existing clients of the deployed implementation, which read a top-level message"},)"
            R"("error":{"type":"object",)"
            R"("required":["code","message"],"properties":{"code":{"type":"string","description":"snake_case machine code"},)"
            R"("message":{"type":"string","description":"human-readable explanation"},)"
            R"("tx_hash":{"type":"string","description":"a write's broadcast transaction whose outcome is unknown"}}}}}},)"
            R"("securitySchemes":{"ApiKeyHeader":{"type":"apiKey","in":"header","name":"X-Api-Key"},)"
            R"("BearerAuth":{"type":"http","scheme":"bearer","description":"Authorization: Bearer <api key>"}}})");
    Value out;
    out.CopyFrom(d, a);
    return out;
}

common::Result<Value> Operation(const Route& route, const std::string& operation_id, Allocator& a) {
    Value op(rapidjson::kObjectType);
    Set(op, "operationId", Str(operation_id, a), a);
    if (!route.summary.empty()) Set(op, "summary", Str(route.summary, a), a);
    if (!route.tag.empty()) {
        Value tags(rapidjson::kArrayType);
        tags.PushBack(Str(route.tag, a), a);
        Set(op, "tags", std::move(tags), a);
    }

    Value request_schema;
    auto has_request = ParseSchema(route, route.request_schema, a, request_schema);
    if (!has_request.ok()) return has_request.error();
    Value response_schema;
    auto has_response = ParseSchema(route, route.response_schema, a, response_schema);
    if (!has_response.ok()) return has_response.error();

    const bool authenticated = route.auth != AuthRequirement::None;
    const bool json_body = route.body != BodyKind::None;
    Value params = json_body || !*has_request ? Value(rapidjson::kArrayType) : QueryParameters(request_schema, a);
    const bool takes_input = json_body || params.Size() > 0;
    if (authenticated) params.PushBack(ApiKeyParameter(a), a);
    if (params.Size() > 0) Set(op, "parameters", std::move(params), a);
    if (authenticated) Set(op, "security", SecurityRequirement(a), a);

    if (json_body) {
        Value body(rapidjson::kObjectType);
        Set(body, "required", Value(route.body == BodyKind::Json), a);
        Value schema = *has_request ? std::move(request_schema) : Value(rapidjson::kObjectType);
        Set(body, "content", JsonContent(std::move(schema), a), a);
        Set(op, "requestBody", std::move(body), a);
    }

    Value responses(rapidjson::kObjectType);
    Value ok(rapidjson::kObjectType);
    Set(ok, "description", Str(route.summary.empty() ? "Success" : route.summary, a), a);
    if (*has_response) Set(ok, "content", JsonContent(std::move(response_schema), a), a);
    Set(responses, "200", std::move(ok), a);
    if (route.may_answer_pending) {
        Value pending(rapidjson::kObjectType);
        Set(pending, "description",
            Str("The transaction was broadcast but its receipt did not come in time: the 200 answer plus "
                "\"pending\": true and \"tx_hash\". Keep it: it takes effect once the transaction is mined (a retry "
                "with the same Idempotency-Key then answers 200, or 409 tx_reverted / tx_dropped)", a),
            a);
        Set(responses, "202", std::move(pending), a);
    }
    // Every status the route can answer, each with an example body (issue 25). Which ones follow from
    // what the route declares: its input, its auth, its charge.
    const bool charged = route.charge == Charge::Write || route.charge == Charge::WriteMovingBalance ||
                         route.charge == Charge::RunTime;
    if (takes_input) {
        Set(responses, "400", ErrorResponse("Invalid input (the error names the field)", a, "invalid_field",
                                            "group_id must be a positive integer"), a);
    }
    if (authenticated) {
        Set(responses, "401", ErrorResponse("Missing, unknown, revoked or expired API key", a, "invalid_api_key",
                                            "the API key is unknown, revoked or expired"), a);
    }
    if (charged) {
        Set(responses, "402", ErrorResponse("Billing on: the account's credit (or the usage key's spend cap) does not cover "
                                            "the write or one second of the run; nothing was done", a,
                                            "insufficient_credit", "the account's balance is 0 credits; buy credits"), a);
    }
    if (authenticated) {
        Set(responses, "403", ErrorResponse("The key lacks the scope, or the operation is owner-only", a, "missing_scope",
                                            "this key may not manage actions in group 3"), a);
        Set(responses, "404", ErrorResponse("Unknown account, group, key, wallet or action", a, "unknown_group",
                                            "group 7 does not exist in this account"), a);
        if (json_body) {
            Set(responses, "409", ErrorResponse("Conflict with the current on-chain state, or a write's transaction "
                                                "reverted or was dropped", a, "nothing_to_change",
                                                "the group already lists this PKP"), a);
        }
    }
    if (json_body) {
        Set(responses, "413", ErrorResponse("Request body too large", a, "body_too_large", "the body is larger than 1048576 bytes"), a);
        Set(responses, "415", ErrorResponse("The body is not application/json", a, "unsupported_media_type",
                                            "send Content-Type: application/json"), a);
        Set(responses, "422", ErrorResponse("Malformed JSON body, or an Idempotency-Key reused with another body", a,
                                            "malformed_json", "the body is not valid JSON"), a);
    }
    if (authenticated || route.charge == Charge::StarterCredit) {
        Set(responses, "429", ErrorResponse("A rate or concurrency limit (a usage key's guardrail rates on its runs and "
                                            "relayed writes, runs in flight per key, the account-minting rate, "
                                            "idempotency keys); Retry-After says when to try again", a, "too_many_runs",
                                            "this key has 8 runs in flight; try again when one ends"), a);
    }
    if (authenticated) {
        Set(responses, "502", ErrorResponse("The chain node or key service is unreachable", a, "chain_unavailable",
                                            "the chain node is not answering"), a);
    }
    Set(responses, "503", ErrorResponse("The instance is at its request bound (Retry-After: 1), its chain-bound share is "
                                        "full, or a component (billing, the sandbox) is off or down", a, "overloaded",
                                        "too many requests in flight; try again in a second"), a);
    if (authenticated) {
        Set(responses, "504", ErrorResponse("The chain did not answer in time; a write whose transaction went out "
                                            "names it in error.tx_hash, and a retry with the same Idempotency-Key "
                                            "follows that transaction instead of sending another", a, "chain_timeout",
                                            "the chain did not answer within 2000 ms"), a);
    }
    Set(responses, "default", ErrorResponse("Any other error", a), a);
    Set(op, "responses", std::move(responses), a);
    return op;
}

}  // namespace

common::Result<std::string> GenerateOpenApi(const std::vector<Route>& routes, const OpenApiInfo& info) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    Set(doc, "openapi", Str("3.0.3", a), a);
    Value meta(rapidjson::kObjectType);
    Set(meta, "title", Str(info.title, a), a);
    Set(meta, "version", Str(info.version, a), a);
    if (!info.description.empty()) Set(meta, "description", Str(info.description, a), a);
    Set(doc, "info", std::move(meta), a);
    // Paths are absolute (the API lives under /core/v1, /health and the attestation routes at the root).
    Value server(rapidjson::kObjectType);
    Set(server, "url", Str("/", a), a);
    Value servers(rapidjson::kArrayType);
    servers.PushBack(server, a);
    Set(doc, "servers", std::move(servers), a);

    Value paths(rapidjson::kObjectType);
    std::set<std::string> operation_ids;
    for (const auto& route : routes) {
        if (route.operator_only) continue;  // not part of the public interface
        std::string id = LastSegment(route.path);
        if (!operation_ids.insert(id).second) {
            id += "_" + Lower(route.method);
            operation_ids.insert(id);
        }
        auto op = Operation(route, id, a);
        if (!op.ok()) return op.error();
        Set(Child(paths, route.path, a), Lower(route.method), std::move(op).value(), a);
    }
    Set(doc, "paths", std::move(paths), a);
    Set(doc, "components", Components(a), a);

    return common::JsonSerialize(doc);
}

}  // namespace sigil::workers
