// JSON text helpers shared by every component: string literals and serialization with RapidJSON.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace sigil::common {

// Serializes `s` as a JSON string literal (with quotes), escaping as RFC 8259 requires.
std::string JsonQuote(std::string_view s);

// Compact JSON text of a RapidJSON value.
std::string JsonSerialize(const rapidjson::Value& value);

// The bytes of a string value (which may hold NULs). The value must be a string.
inline std::string_view JsonView(const rapidjson::Value& value) {
    return {value.GetString(), value.GetStringLength()};
}

}  // namespace sigil::common
