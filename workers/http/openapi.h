// The OpenAPI 3.0 document of the service, generated from the route table (DESIGN.md section 4), so
// the published description cannot drift from the handlers that actually run.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "workers/http/router.h"

namespace sigil::workers {

struct OpenApiInfo {
    std::string title = "Sigil";
    std::string version = "v1";
    std::string description;
};

// The document for `routes` as compact JSON text. For each route:
//   paths[route.path][lowercase method] with operationId (the last path segment; when two routes share
//   it, the later ones get "_<method>" appended so ids stay unique), summary, tags ([tag] if set);
//   authenticated routes (auth != None): an optional X-Api-Key header parameter and a security
//   requirement naming the ApiKeyHeader and BearerAuth schemes (components.securitySchemes);
//   BodyKind::Json / OptionalJson: requestBody (required for Json) with request_schema ({} when empty);
//   BodyKind::None: one query parameter per property of request_schema (required when listed in its
//   "required" array; the property's "description" becomes the parameter's);
//   responses: "200" with response_schema (no content when empty); the error object
//   {"error":{"code","message"}} (components.schemas.Error) for 400 when the route takes input,
//   401/403/404/409 (409 only with a body) and 502/504 on authenticated routes, 413/415/422 with a JSON
//   body, and "default" for every other status.
// Errors: Internal "invalid_route_schema" naming the method and path of a route whose request or
// response schema is not valid JSON text (a programming error the unit tests catch).
common::Result<std::string> GenerateOpenApi(const std::vector<Route>& routes, const OpenApiInfo& info = {});

}  // namespace sigil::workers
