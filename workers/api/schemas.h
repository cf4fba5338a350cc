// The JSON Schemas of the API's requests and responses, written once in workers/api/schemas/*.json
// (embedded at build time) and handed to the router as text for the OpenAPI document.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sigil::workers {

// The compact JSON text of the schema at `ref`, "<file>.json#<JSON pointer>" (for example
// "groups.json#/AddGroupRequest"), with every "$ref" inside it resolved, so the served document
// holds no references.
// "$ref" in the files: a member {"$ref": "<file>.json#/Name"} (or "#/Name" within the same file)
// inside an object is replaced, in place, by the members of the object it points to; members
// written beside it win over referenced members of the same name and stand where they are written:
//   {"$ref": "common.json#/Address", "description": "the owner wallet"}
//   -> {"type":"string","pattern":"^0x[0-9a-f]{40}$","description":"the owner wallet"}
// The same works inside "properties" to splice a shared group of properties.
// An unknown ref, a "$ref" that does not point to an object, or a cycle is a programming error: the
// answer is then text that is not JSON ("<unresolved schema ...>"), which GenerateOpenApi refuses
// with invalid_route_schema naming the route, and the unit tests catch.
std::string ApiSchema(std::string_view ref);

// Every top-level entry of every schema file as a ref ("common.json#/Name", ...), sorted.
std::vector<std::string> ApiSchemaRefs();

}  // namespace sigil::workers
