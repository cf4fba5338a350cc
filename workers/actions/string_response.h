// A run's string response that holds JSON is answered parsed, as the deployed implementation does
// (DESIGN.md section 4): its actions answer `setResponse({response: JSON.stringify(...)})` and its
// clients read `res.response.field`.
#pragma once

#include <string>

namespace sigil::workers {

// `response_json` is one complete JSON value (the run's response). When it is a JSON string whose
// text is itself one complete JSON value in valid UTF-8, returns that text (surrounding JSON
// whitespace removed); otherwise returns `response_json` unchanged (a string that is not JSON
// stays a string; objects, numbers and the rest are untouched). The result is never longer.
std::string ParsedStringResponse(std::string response_json);

}  // namespace sigil::workers
