// The natives behind RegExp's u and v flags (js/regexp.js): regexpu-core (npm, pinned) and the
// Unicode property sets it reads, embedded and compiled in a run only when a pattern needs them.
// Duktape's RegExp has neither flag; regexpu-core rewrites such a pattern into one without them.
#pragma once

#include <duktape.h>

#include <string_view>

namespace sigil::workers {

// Registers
//   __sigil_regexpu(glue)          compiles the embedded regexpu-core bundle (js_bundle.mjs:
//                                  regexpu-core, regjsparser, regjsgen, regenerate, the property-name
//                                  tables) and answers its module loader, load(name) with name
//                                  "regexpu" (its rewritePattern) or "regenerate"; `glue` is the
//                                  bundle's __sigil_glue, whose unicodeProperty(file) regexpu-core
//                                  calls for the set of a \p{...}, file being
//                                  "regenerate-unicode-properties/<Property>/<Value>.js"
//   __sigil_unicode_property(path) the module of one property set, "<Property>/<Value>" (e.g.
//                                  "Script/Greek"), as function (module, exports, require), compiled
//                                  now; undefined when there is none by that name
// About 290 KB and 700 KB of source: a run that needs neither pays nothing, and the zygote's heap
// does not carry them. Must run inside a protected call.
void InstallRegExpUnicodeNatives(duk_context* ctx);

// The text of one property module in the embedded sets, or an empty view (exposed for tests).
std::string_view UnicodePropertySource(std::string_view path);

}  // namespace sigil::workers
