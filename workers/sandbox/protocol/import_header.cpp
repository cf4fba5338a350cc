#include "workers/sandbox/protocol/import_header.h"

namespace sigil::workers {

namespace {

constexpr std::string_view OPEN = "/*sigil-imports";
constexpr std::string_view CLOSE = "*/";
constexpr std::string_view SCHEME = "ipfs://";
constexpr std::string_view BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

bool IsCidV0(std::string_view text) {
    if (text.size() != 46 || text.compare(0, 2, "Qm") != 0) return false;
    return text.find_first_not_of(BASE58) == std::string_view::npos;
}

}  // namespace

ImportHeader ParseImportHeader(std::string_view lowered) {
    ImportHeader out;
    if (lowered.compare(0, OPEN.size(), OPEN) != 0) return out;
    const std::size_t end = lowered.find(CLOSE, OPEN.size());
    if (end == std::string_view::npos) return out;
    std::string_view rest = lowered.substr(OPEN.size(), end - OPEN.size());
    while (!rest.empty()) {
        if (rest.front() != ' ') break;
        rest.remove_prefix(1);
        const std::size_t space = rest.find(' ');
        const std::string_view word = rest.substr(0, space);
        if (word == "esm") {
            out.esm = true;
        } else if (word.compare(0, SCHEME.size(), SCHEME) == 0 && IsCidV0(word.substr(SCHEME.size()))) {
            out.cids.emplace_back(word.substr(SCHEME.size()));
        } else {
            break;
        }
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space);
    }
    return out;
}

}  // namespace sigil::workers
