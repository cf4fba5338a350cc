#include "common/json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

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

}  // namespace sigil::common
