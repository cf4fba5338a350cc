#pragma once
// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing above U+10FFFF.

#include <string>
#include <string_view>

namespace sigil::common {

bool IsUtf8(std::string_view s);

// s with every byte that does not start a valid sequence replaced by U+FFFD (as the WHATWG
// decoder does), so text from outside (the chain, a gateway) can always go into JSON.
std::string ReplaceInvalidUtf8(std::string_view s);

}  // namespace sigil::common
