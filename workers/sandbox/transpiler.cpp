// Transpiler: buble in a Duktape heap, behind a front pass over acorn 8's syntax tree (js/lower.js)
// that lowers ES2020-ES2022 syntax, async/await and BigInt to ES2019 for buble.
#include "workers/sandbox/transpiler.h"

#include <duktape.h>

#include <cstdio>
#include <cstdlib>

#include "workers/sandbox/embedded_scripts.h"

namespace sigil::workers {

namespace {

using common::ErrorKind;
using common::MakeError;
using common::Result;

std::string_view View(const unsigned char* bytes, std::size_t size) {
    return {reinterpret_cast<const char*>(bytes), size};
}

[[noreturn]] void FatalHandler(void* /*udata*/, const char* msg) {
    // Duktape calls this only for internal failures with no catch point left; the heap is
    // unusable, so the process (a sandbox child) ends.
    std::fprintf(stderr, "transpiler: duktape fatal error: %s\n", msg != nullptr ? msg : "?");
    std::abort();
}

struct EvalCall {
    std::string_view text;
    const char* file_name;
};

duk_ret_t CompileAndRun(duk_context* ctx, void* udata) {
    const auto* call = static_cast<const EvalCall*>(udata);
    duk_push_string(ctx, call->file_name);
    duk_compile_lstring_filename(ctx, 0, call->text.data(), call->text.size());
    duk_call(ctx, 0);
    return 0;
}

// Compiles and runs `text` as a global program inside duk_safe_call, so no Duktape error
// (out of memory included) unwinds through C++ frames; on failure leaves the error text in
// `error`.
bool EvalProtected(duk_context* ctx, std::string_view text, const char* file_name, std::string& error) {
    EvalCall call{text, file_name};
    if (duk_safe_call(ctx, CompileAndRun, &call, 0, 1) != DUK_EXEC_SUCCESS) {
        const char* what = duk_safe_to_string(ctx, -1);
        error = std::string(file_name) + ": " + (what != nullptr ? what : "unknown error");
        duk_pop(ctx);
        return false;
    }
    duk_pop(ctx);
    return true;
}

bool IsIdentifierChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           static_cast<unsigned char>(c) >= 0x80;
}

// True if `word` occurs in `text` delimited by non-identifier characters. Matches inside
// strings and comments too, which only sends such code down the full lowering path.
bool ContainsWord(std::string_view text, std::string_view word) {
    for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
        bool starts = at == 0 || !IsIdentifierChar(text[at - 1]);
        std::size_t end = at + word.size();
        bool ends = end == text.size() || !IsIdentifierChar(text[end]);
        if (starts && ends) return true;
    }
    return false;
}

// ES5 source this long or longer that names BigInt runs as it is (see RunsAsIs).
constexpr std::size_t MAX_ES5_BIGINT_LOWERING_BYTES = 64u * 1024u;

// Source that Duktape compiles as it is and that has none of the words whose meaning Duktape
// gets wrong (const and let with var semantics, async/await as plain identifiers) needs no
// lowering: whatever ES2015 syntax Duktape accepts (shorthand and computed properties, method
// definitions, binary/octal literals) it runs with the standard meaning. This spares parsing
// large pre-bundled ES5 actions in the interpreter (acorn there runs at about 80 KB/s).
// BigInt is only defined for lowered code (its operators go through the runtime), so ES5 that
// names it is lowered too, unless it is a large bundle: a library such as ethers v5 names
// BigInt on a path it rarely takes (BigNumber.toBigInt), and lowering it would cost seconds
// and slow all its arithmetic; there BigInt stays undefined, as before.
bool RunsAsIs(duk_context* ctx, std::string_view source) {
    // A module to lower as one, or a source that would pass for the lowering's own header
    // (import_header.h): lower.js decides.
    if (source.rfind("/*sigil", 0) == 0) return false;
    for (std::string_view word : {"const", "let", "async", "await"}) {
        if (ContainsWord(source, word)) return false;
    }
    if (source.size() < MAX_ES5_BIGINT_LOWERING_BYTES && ContainsWord(source, "BigInt")) return false;
    bool compiles = duk_pcompile_lstring(ctx, 0, source.data(), source.size()) == 0;
    duk_pop(ctx);
    return compiles;
}

struct LowerCall {
    const char* source;
    std::size_t size;
};

// Runs inside duk_safe_call, so any Duktape error (including out of memory) is caught there
// and never unwinds through C++ frames. Leaves [code, error, line, column] on the stack: code
// is a string on success, undefined otherwise; reading them afterwards cannot throw.
duk_ret_t CallLowerDriver(duk_context* ctx, void* udata) {
    const auto* call = static_cast<const LowerCall*>(udata);
    duk_get_global_string(ctx, "__sigil_lower");
    duk_push_lstring(ctx, call->source, call->size);
    duk_call(ctx, 1);
    duk_idx_t result = duk_normalize_index(ctx, -1);
    duk_require_object(ctx, result);
    for (const char* key : {"code", "error", "line", "column"}) duk_get_prop_string(ctx, result, key);
    return 4;
}

}  // namespace

std::string_view ShimsSource() { return View(embedded::SHIMS_JS, embedded::SHIMS_JS_SIZE); }
std::string_view PreludeSource() { return View(embedded::PRELUDE_JS, embedded::PRELUDE_JS_SIZE); }

std::string_view LowerRuntimeSource() {
    // JSBI's bundle (Babel output) constructs its Array subclass through Reflect.construct with
    // a new.target, which Duktape 2.7 does not support ("unsupported"); with Reflect hidden it
    // takes Babel's ES5 path (construct, then set the prototype).
    static const std::string source = "(function (Reflect) {\n" +
                                      std::string(View(embedded::JSBI_JS, embedded::JSBI_JS_SIZE)) +
                                      "\n}).call(this);\n" +
                                      std::string(View(embedded::LOWER_RUNTIME_JS, embedded::LOWER_RUNTIME_JS_SIZE));
    return source;
}

Result<std::unique_ptr<Transpiler>> Transpiler::Create(void* heap_udata, const TranspilerAllocator* allocator) {
    duk_context* ctx = allocator != nullptr
                           ? duk_create_heap(allocator->alloc, allocator->realloc, allocator->free, heap_udata,
                                             FatalHandler)
                           : duk_create_heap(nullptr, nullptr, nullptr, heap_udata, FatalHandler);
    if (ctx == nullptr) {
        return MakeError(ErrorKind::Internal, "transpiler_load_failed", "cannot create a Duktape heap");
    }
    std::unique_ptr<Transpiler> transpiler(new Transpiler(ctx));

    std::string error;
    if (!EvalProtected(ctx, ShimsSource(), "shims.js", error) ||
        !EvalProtected(ctx, View(embedded::BUBLE_JS, embedded::BUBLE_JS_SIZE), "buble.js", error) ||
        !EvalProtected(ctx, View(embedded::ACORN8_JS, embedded::ACORN8_JS_SIZE), "acorn.js", error) ||
        !EvalProtected(ctx, View(embedded::LOWER_JS, embedded::LOWER_JS_SIZE), "lower.js", error)) {
        return MakeError(ErrorKind::Internal, "transpiler_load_failed", error);
    }
    return transpiler;
}

Transpiler::Transpiler(duk_hthread* heap) : m_heap(heap) {}

Transpiler::~Transpiler() { duk_destroy_heap(m_heap); }

Result<std::string> Transpiler::Lower(std::string_view source) {
    if (source.size() > MAX_ACTION_SOURCE_BYTES) {
        return MakeError(ErrorKind::TooLarge, "code_too_large",
                         "action code is " + std::to_string(source.size()) + " bytes; the limit is " +
                             std::to_string(MAX_ACTION_SOURCE_BYTES));
    }
    duk_context* ctx = m_heap;
    if (RunsAsIs(ctx, source)) return std::string(source);
    LowerCall call{source.data(), source.size()};
    if (duk_safe_call(ctx, CallLowerDriver, &call, 0, 4) != DUK_EXEC_SUCCESS) {
        // On error duk_safe_call fills all four slots: the error first, then undefined.
        std::string what = duk_safe_to_string(ctx, -4);
        duk_pop_n(ctx, 4);
        return MakeError(ErrorKind::Internal, "transpiler_failed", "lowering failed: " + what);
    }
    Result<std::string> result = std::string();
    duk_size_t len = 0;
    if (const char* code = duk_get_lstring(ctx, -4, &len); code != nullptr) {
        result = std::string(code, len);
    } else {
        const char* message = duk_get_string(ctx, -3);
        int line = duk_get_int(ctx, -2);
        int column = duk_get_int(ctx, -1);
        // Errors without a location (nesting too deep for the parser's recursion limit) are
        // still the input's fault.
        std::string where = line > 0 ? "line " + std::to_string(line) + ", column " +
                                           std::to_string(column) + ": "
                                     : std::string();
        result = MakeError(ErrorKind::InvalidInput, "syntax_error",
                           where + (message != nullptr ? message : "cannot be lowered"));
    }
    duk_pop_n(ctx, 4);
    // The lowering leaves garbage (syntax trees, source copies); collect it now so a long-lived
    // heap does not grow with each run.
    duk_gc(ctx, 0);
    return result;
}

}  // namespace sigil::workers
