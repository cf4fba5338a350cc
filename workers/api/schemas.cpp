#include "workers/api/schemas.h"

#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include <map>

#include "common/json.h"
#include "common/result.h"

namespace sigil::workers {
namespace embedded {
extern const std::size_t SCHEMA_FILE_COUNT;
extern const char* const SCHEMA_FILE_NAMES[];
extern const char* const SCHEMA_FILE_TEXTS[];
extern const std::size_t SCHEMA_FILE_SIZES[];
}  // namespace embedded

namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

// Deeper nesting of "$ref" than this is taken for a cycle.
constexpr int MAX_REF_DEPTH = 32;

// The parsed schema files by name; a file that does not parse is absent (its refs then fail).
const std::map<std::string, rapidjson::Document>& Files() {
    static const std::map<std::string, rapidjson::Document> files = [] {
        std::map<std::string, rapidjson::Document> out;
        for (std::size_t i = 0; i < embedded::SCHEMA_FILE_COUNT; ++i) {
            rapidjson::Document d;
            d.Parse(embedded::SCHEMA_FILE_TEXTS[i], embedded::SCHEMA_FILE_SIZES[i]);
            if (!d.HasParseError() && d.IsObject()) out.emplace(embedded::SCHEMA_FILE_NAMES[i], std::move(d));
        }
        return out;
    }();
    return files;
}

struct Target {
    std::string file;
    const Value* value;
};

// What `ref` ("<file>#<pointer>", the file defaulting to `current`) points to.
common::Result<Target> Lookup(std::string_view ref, const std::string& current) {
    const auto hash = ref.find('#');
    const std::string file(hash == std::string_view::npos ? ref : ref.substr(0, hash));
    const std::string pointer(hash == std::string_view::npos ? "" : ref.substr(hash + 1));
    const std::string name = file.empty() ? current : file;
    const auto& files = Files();
    const auto it = files.find(name);
    if (it == files.end()) {
        return common::MakeError(common::ErrorKind::Internal, "unknown_schema_file", "no schema file " + name);
    }
    const rapidjson::Pointer p(pointer.c_str(), pointer.size());
    const Value* v = p.IsValid() ? p.Get(it->second) : nullptr;
    if (v == nullptr) {
        return common::MakeError(common::ErrorKind::Internal, "unknown_schema", "nothing at " + name + "#" + pointer);
    }
    return Target{name, v};
}

common::Result<Value> Resolve(const Value& in, const std::string& file, Allocator& a, int depth);

// Adds `value` under `name` to `out`, or replaces the member of that name already there.
void Put(Value& out, const Value& name, Value value, Allocator& a) {
    auto it = out.FindMember(name);
    if (it != out.MemberEnd()) {
        it->value = std::move(value);
    } else {
        out.AddMember(Value(name, a), std::move(value), a);
    }
}

common::Result<Value> ResolveObject(const Value& in, const std::string& file, Allocator& a, int depth) {
    Value out(rapidjson::kObjectType);
    for (const auto& m : in.GetObject()) {
        if (common::JsonView(m.name) != "$ref") {
            SIGIL_TRY(v, Resolve(m.value, file, a, depth));
            Put(out, m.name, std::move(v).value(), a);
            continue;
        }
        if (!m.value.IsString()) {
            return common::MakeError(common::ErrorKind::Internal, "bad_schema_ref", "a $ref in " + file + " is not a string");
        }
        if (depth >= MAX_REF_DEPTH) {
            return common::MakeError(common::ErrorKind::Internal, "schema_ref_cycle",
                                     "$ref " + std::string(common::JsonView(m.value)) + " nests too deep");
        }
        SIGIL_TRY(target, Lookup(common::JsonView(m.value), file));
        if (!target->value->IsObject()) {
            return common::MakeError(common::ErrorKind::Internal, "bad_schema_ref",
                                     "$ref " + std::string(common::JsonView(m.value)) + " is not an object");
        }
        SIGIL_TRY(spliced, Resolve(*target->value, target->file, a, depth + 1));
        for (auto& s : spliced->GetObject()) {
            // Members written beside the $ref win, wherever they stand.
            if (in.HasMember(s.name) || out.HasMember(s.name)) continue;
            out.AddMember(Value(s.name, a), std::move(s.value), a);
        }
    }
    return common::Result<Value>(std::move(out));
}

common::Result<Value> Resolve(const Value& in, const std::string& file, Allocator& a, int depth) {
    if (in.IsObject()) return ResolveObject(in, file, a, depth);
    if (in.IsArray()) {
        Value out(rapidjson::kArrayType);
        for (const auto& e : in.GetArray()) {
            SIGIL_TRY(v, Resolve(e, file, a, depth));
            out.PushBack(std::move(v).value(), a);
        }
        return common::Result<Value>(std::move(out));
    }
    return common::Result<Value>(Value(in, a));
}

}  // namespace

std::string ApiSchema(std::string_view ref) {
    auto target = Lookup(ref, "");
    if (!target.ok()) return "<unresolved schema " + std::string(ref) + ": " + target.error().message + ">";
    rapidjson::Document doc;
    auto resolved = Resolve(*target->value, target->file, doc.GetAllocator(), 0);
    if (!resolved.ok()) return "<unresolved schema " + std::string(ref) + ": " + resolved.error().message + ">";
    return common::JsonSerialize(*resolved);
}

std::vector<std::string> ApiSchemaRefs() {
    std::vector<std::string> refs;
    for (const auto& [name, doc] : Files()) {
        for (const auto& m : doc.GetObject()) refs.push_back(name + "#/" + std::string(common::JsonView(m.name)));
    }
    return refs;
}

}  // namespace sigil::workers
