// Test helpers for suites that drive a Duktape heap directly: the heap's deleter and the string
// value of evaluated code.
#pragma once

#include <duktape.h>

#include <string>

namespace sigil::test {

// For std::unique_ptr<duk_context, HeapFree>.
struct HeapFree {
    void operator()(duk_context* ctx) const { duk_destroy_heap(ctx); }
};

// The string value of `code` evaluated in `ctx`, or "THROW <error>" when it throws.
inline std::string EvalToString(duk_context* ctx, const std::string& code) {
    if (duk_peval_lstring(ctx, code.data(), code.size()) != 0) {
        std::string what = std::string("THROW ") + duk_safe_to_string(ctx, -1);
        duk_pop(ctx);
        return what;
    }
    std::string value = duk_safe_to_string(ctx, -1);
    duk_pop(ctx);
    return value;
}

}  // namespace sigil::test
