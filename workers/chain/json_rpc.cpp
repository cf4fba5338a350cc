#include "workers/chain/json_rpc.h"

#include <rapidjson/document.h>

#include "common/hex.h"
#include "common/json.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

common::Error BadResponse(std::string message) {
    return MakeError(ErrorKind::Unavailable, "rpc_bad_response", "chain node: " + std::move(message));
}

}  // namespace

std::string BuildRpcRequest(std::string_view method, std::string_view params_json, std::uint64_t id) {
    std::string out = R"({"jsonrpc":"2.0","id":)";
    out += std::to_string(id);
    out += R"(,"method":)";
    out += common::JsonQuote(method);
    out += R"(,"params":)";
    out += params_json.empty() ? std::string_view("[]") : params_json;
    out += '}';
    return out;
}

common::Result<RpcReply> ParseRpcResponse(std::string_view body, std::uint64_t expected_id) {
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError() || !doc.IsObject()) return BadResponse("response is not a JSON object");
    auto id = doc.FindMember("id");
    if (id == doc.MemberEnd() || !id->value.IsUint64() || id->value.GetUint64() != expected_id) {
        return BadResponse("response id does not match the request");
    }
    RpcReply reply;
    auto err = doc.FindMember("error");
    if (err != doc.MemberEnd() && !err->value.IsNull()) {
        if (!err->value.IsObject()) return BadResponse("error member is not an object");
        reply.is_error = true;
        auto code = err->value.FindMember("code");
        if (code != err->value.MemberEnd() && code->value.IsInt64()) reply.error_code = code->value.GetInt64();
        auto msg = err->value.FindMember("message");
        if (msg != err->value.MemberEnd() && msg->value.IsString()) reply.error_message = msg->value.GetString();
        auto data = err->value.FindMember("data");
        if (data != err->value.MemberEnd() && data->value.IsString()) {
            auto bytes = common::HexDecode(data->value.GetString(), common::HexPrefix::Required);
            if (bytes.ok()) reply.revert_data = std::move(bytes).value();
        }
        return reply;
    }
    auto result = doc.FindMember("result");
    if (result == doc.MemberEnd()) return BadResponse("response has neither result nor error");
    reply.result_json = common::JsonSerialize(result->value);
    return reply;
}

common::Result<std::uint64_t> ParseQuantity(std::string_view hex) {
    auto bad = [&] { return MakeError(ErrorKind::Unavailable, "rpc_bad_quantity", "chain node sent a malformed quantity"); };
    if (hex.size() < 3 || hex[0] != '0' || hex[1] != 'x') return bad();
    hex.remove_prefix(2);
    if (hex.size() > 16) {
        // Leading zeros are not canonical, but some nodes pad; accept them only if the value fits.
        const auto first = hex.find_first_not_of('0');
        if (first == std::string_view::npos) return std::uint64_t{0};
        if (hex.size() - first > 16) return bad();
        hex.remove_prefix(first);
    }
    std::uint64_t v = 0;
    for (char c : hex) {
        int d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return bad();
        v = (v << 4) | static_cast<std::uint64_t>(d);
    }
    return v;
}

std::string FormatQuantity(std::uint64_t v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    if (v == 0) return "0x0";
    std::string digits;
    while (v != 0) {
        digits.insert(digits.begin(), kDigits[v & 15]);
        v >>= 4;
    }
    return "0x" + digits;
}

common::Result<std::string> ResultString(std::string_view result_json) {
    rapidjson::Document doc;
    doc.Parse(result_json.data(), result_json.size());
    if (doc.HasParseError() || !doc.IsString()) return BadResponse("expected a string result");
    return std::string(doc.GetString(), doc.GetStringLength());
}

}  // namespace sigil::workers
