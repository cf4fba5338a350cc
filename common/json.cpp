#include "common/json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <set>

namespace sigil::common {

std::string JsonQuote(std::string_view s) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return {buffer.GetString(), buffer.GetSize()};
}

std::string JsonSerialize(const rapidjson::Value& value) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    value.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

bool JsonNestingWithin(std::string_view text, int max_depth) {
    int depth = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth) return false;
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return true;
}

bool JsonHasDuplicateKeys(const rapidjson::Value& value) {
    if (value.IsArray()) {
        for (const auto& e : value.GetArray()) {
            if (JsonHasDuplicateKeys(e)) return true;
        }
    } else if (value.IsObject()) {
        std::set<std::string_view> seen;
        for (const auto& m : value.GetObject()) {
            if (!seen.insert(JsonView(m.name)).second || JsonHasDuplicateKeys(m.value)) return true;
        }
    }
    return false;
}

}  // namespace sigil::common
