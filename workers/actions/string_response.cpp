#include "workers/actions/string_response.h"

#include <string_view>

#include <rapidjson/document.h>

namespace sigil::workers {
namespace {

// Iterative parsing: the text comes from the action, which could nest arrays deep enough to
// exhaust a recursive parser's stack.
constexpr unsigned PARSE_FLAGS = rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag;

std::string_view TrimJsonSpace(std::string_view s) {
    constexpr std::string_view SPACE = " \t\r\n";
    const auto first = s.find_first_not_of(SPACE);
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(SPACE) - first + 1);
}

}  // namespace

std::string ParsedStringResponse(std::string response_json) {
    if (response_json.empty() || response_json.front() != '"') return response_json;
    rapidjson::Document outer;
    outer.Parse<PARSE_FLAGS>(response_json.data(), response_json.size());
    if (outer.HasParseError() || !outer.IsString()) return response_json;
    const std::string_view inner = TrimJsonSpace({outer.GetString(), outer.GetStringLength()});
    if (inner.empty()) return response_json;
    rapidjson::Document doc;
    doc.Parse<PARSE_FLAGS>(inner.data(), inner.size());
    if (doc.HasParseError()) return response_json;
    return std::string(inner);
}

}  // namespace sigil::workers
