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

// Whether no object or array in `text` nests deeper than `max_depth` levels. A scan of the text,
// not a parse, so a deep document is refused before anything is built from it (and recursive code
// over the parsed value is bounded). Text inside string literals is skipped; the text need not be
// valid JSON (a parser still has to accept it afterwards).
bool JsonNestingWithin(std::string_view text, int max_depth);

// Whether some object inside `value` (at any depth) repeats a key. RapidJSON keeps duplicates,
// and two readers of the same text may pick different ones. Recursive: bound the depth first
// (JsonNestingWithin).
bool JsonHasDuplicateKeys(const rapidjson::Value& value);

}  // namespace sigil::common
