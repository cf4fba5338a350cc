// libFuzzer harness: the first input byte picks a fixed type list, the rest is decoded against it
// strictly; whatever decodes must re-encode to exactly the input (the decoder accepts only canonical
// layouts). The input is also tried as revert data and as a type string.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/abi.h"

using namespace sigil::common;

namespace {

constexpr const char* TYPE_LISTS[] = {
    "uint256",
    "uint8,int16,bool,address,bytes3",
    "bytes,bool,uint256[]",
    "uint256,uint32[],bytes10,bytes",
    "uint256[][],string[]",
    "uint256,address[],(string,bytes32)[]",
    "address[2][],bytes32[3]",
    "(bool,(uint64[],string)[2])",
    "string",
    "int256,int8[]",
};

const std::vector<AbiSignature>& ErrorTable() {
    static const std::vector<AbiSignature> table = [] {
        std::vector<AbiSignature> t;
        for (const char* s : {"NotAuthorized(uint256)", "UnknownGroup(uint256,string)", "Paused()"}) {
            t.push_back(ParseSignature(s).value());
        }
        return t;
    }();
    return table;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t pick = data[0] % (sizeof(TYPE_LISTS) / sizeof(TYPE_LISTS[0]));
    static std::vector<std::vector<AbiType>> types = [] {
        std::vector<std::vector<AbiType>> all;
        for (const char* t : TYPE_LISTS) all.push_back(ParseAbiTypeList(t).value());
        return all;
    }();
    const ByteView body(data + 1, size - 1);
    auto values = AbiDecode(types[pick], body);
    if (values.ok()) {
        auto again = AbiEncode(types[pick], *values);
        if (!again.ok() || again->size() != body.size() || !std::equal(again->begin(), again->end(), body.begin())) {
            std::abort();
        }
    }
    (void)DecodeRevert(body, ErrorTable());
    auto parsed = ParseAbiTypeList(std::string_view(reinterpret_cast<const char*>(data), size));
    if (parsed.ok()) {
        // A parsed type list must survive its canonical spelling.
        std::string canonical;
        for (std::size_t i = 0; i < parsed->size(); ++i) canonical += (i ? "," : "") + (*parsed)[i].Canonical();
        auto reparsed = ParseAbiTypeList(canonical);
        if (!reparsed.ok() || *reparsed != *parsed) std::abort();
    }
    return 0;
}
