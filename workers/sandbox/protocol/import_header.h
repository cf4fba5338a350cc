// The header lowered code starts with when it imports modules by CID (js/lower.js): how the worker
// and the sandbox child learn a unit's imports without parsing JavaScript. Sans-IO.
//
//   header = "/*sigil-imports" [" esm"] (" ipfs://" CIDv0)* "*/"      at offset 0 of the lowered text
//
// "esm": the unit is an ES module (it has import or export declarations); each CID is a module it
// imports, statically or by a dynamic import of a string literal. Lowered text without the header
// imports nothing (and, as a module, is CommonJS). lower.js refuses a source that begins with the
// header's opening, so only the lowering writes one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sigil::workers {

// What a module's source is prefixed with to be lowered as a module (exports kept) rather than as an
// action (exports dropped). The lowering strips it before parsing, so positions are the source's.
constexpr std::string_view MODULE_LOWERING_PRAGMA = "/*sigil:module*/";

struct ImportHeader {
    bool esm = false;
    std::vector<std::string> cids;  // CIDv0s, without "ipfs://", in the order the code names them
};

// The header of `lowered`; an empty ImportHeader when there is none. A header that does not parse
// (a CID that is not CIDv0, an unknown word, no end) is read as far as it is well formed: the
// lowering never writes one, and what the child links is what the worker sent in any case.
ImportHeader ParseImportHeader(std::string_view lowered);

}  // namespace sigil::workers
