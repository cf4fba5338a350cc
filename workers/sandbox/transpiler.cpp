// Transpiler: buble in a Duktape heap, plus an async/await pre-pass over acorn's syntax tree.
#include "workers/sandbox/transpiler.h"

#include <duktape.h>

#include <cstdio>
#include <cstdlib>

namespace sigil::workers {

namespace embedded {
extern const unsigned char SHIMS_JS[];
extern const std::size_t SHIMS_JS_SIZE;
extern const unsigned char PRELUDE_JS[];
extern const std::size_t PRELUDE_JS_SIZE;
extern const unsigned char BUBLE_JS[];
extern const std::size_t BUBLE_JS_SIZE;
}  // namespace embedded

namespace {

using common::ErrorKind;
using common::MakeError;
using common::Result;

std::string_view View(const unsigned char* bytes, std::size_t size) {
    return {reinterpret_cast<const char*>(bytes), size};
}

// buble's browser bundle keeps its copy of acorn private; the pre-pass needs acorn's parser and
// tokenizer, so the export block at the end of the bundle is extended by one line. The anchor
// is checked, so a different buble version fails loudly at load instead of misbehaving.
constexpr std::string_view BUBLE_EXPORT_ANCHOR = "exports.transform = transform;";
constexpr std::string_view BUBLE_EXTRA_EXPORTS =
    " exports.acornParse = parse; exports.acornTokenizer = tokenizer;";

// Defines __sigil_lower(source) in the transpiler heap. It returns {code} or
// {error, line, column} (1-based) so that syntax errors never surface as Duktape errors.
constexpr const char* LOWER_DRIVER_JS = R"JS(
(function (global) {
    'use strict';
    var buble = global.buble;
    if (typeof buble.acornParse !== 'function' || typeof buble.acornTokenizer !== 'function') {
        throw new Error('acorn is not exported by the buble bundle');
    }
    // The same options buble uses, so the pre-pass and buble accept the same programs.
    var PARSE_OPTIONS = {
        ecmaVersion: 10, sourceType: 'module', preserveParens: true,
        allowAwaitOutsideFunction: true, allowReturnOutsideFunction: true, allowHashBang: true
    };
    var TRANSFORM_OPTIONS = {
        transforms: { dangerousForOf: true, asyncAwait: false, generator: true },
        objectAssign: 'Object.assign'
    };

    function Walk(node, visit) {
        visit(node);
        for (var key in node) {
            if (!Object.prototype.hasOwnProperty.call(node, key)) continue;
            var child = node[key];
            if (child === null || typeof child !== 'object') continue;
            if (Array.isArray(child)) {
                for (var i = 0; i < child.length; i++) {
                    if (child[i] !== null && typeof child[i] === 'object' && typeof child[i].type === 'string') Walk(child[i], visit);
                }
            } else if (typeof child.type === 'string' && key !== 'loc') {
                Walk(child, visit);
            }
        }
    }

    // Absolute start of the first keyword token `word` in source[from, to), skipping comments.
    function FindKeyword(source, from, to, word) {
        var tokens = buble.acornTokenizer(source.slice(from, to), { ecmaVersion: 10 });
        for (;;) {
            var token;
            try { token = tokens.getToken(); } catch (e) { return -1; }
            if (token.type.label === 'eof') return -1;
            if (token.value === word) return from + token.start;
        }
    }

    function StripAsyncAwait(source) {
        // Parsing costs as much as buble's own pass; text without the words needs none.
        if (!/(^|[^\w$])(async|await)($|[^\w$])/.test(source)) return source;
        var ast = buble.acornParse(source, PARSE_OPTIONS);
        var edits = [];
        function Remove(start, length) { edits.push({ start: start, end: start + length, text: '' }); }
        Walk(ast, function (node) {
            var at;
            switch (node.type) {
            case 'FunctionDeclaration':
            case 'FunctionExpression':
            case 'ArrowFunctionExpression':
                // Method values start at their parameters; those are handled by their Property.
                if (node.async && source.substr(node.start, 5) === 'async') Remove(node.start, 5);
                break;
            case 'Property':
            case 'MethodDefinition':
                if (node.value && node.value.async && node.value.type === 'FunctionExpression' &&
                    source.substr(node.value.start, 5) !== 'async') {
                    at = FindKeyword(source, node.start, node.key.start, 'async');
                    if (at >= 0) Remove(at, 5);
                }
                break;
            case 'ForOfStatement':
                if (node.await) {
                    at = FindKeyword(source, node.start, node.left.start, 'await');
                    if (at >= 0) Remove(at, 5);
                }
                break;
            case 'AwaitExpression':
                edits.push({ start: node.start, end: node.argument.start, text: '__sigil_await(' });
                edits.push({ start: node.end, end: node.end, text: ')' });
                break;
            }
        });
        if (edits.length === 0) return source;
        edits.sort(function (a, b) { return a.start - b.start || a.end - b.end; });
        var out = [];
        var pos = 0;
        for (var i = 0; i < edits.length; i++) {
            var e = edits[i];
            if (e.start > pos) out.push(source.slice(pos, e.start));
            out.push(e.text);
            if (e.end > pos) pos = e.end;
        }
        out.push(source.slice(pos));
        return out.join('');
    }

    global.__sigil_lower = function (source) {
        try {
            var code = buble.transform(StripAsyncAwait(source), TRANSFORM_OPTIONS).code;
            return { code: code };
        } catch (e) {
            var loc = e && e.loc;
            var message = String(e && e.message !== undefined ? e.message : e);
            // acorn appends " (line:column)"; the location is reported separately.
            message = message.replace(/ \(\d+:\d+\)$/, '');
            return {
                error: message,
                line: loc && typeof loc.line === 'number' ? loc.line : 0,
                column: loc && typeof loc.column === 'number' ? loc.column + 1 : 0
            };
        }
    };
})(this);
)JS";

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

// Source that Duktape compiles as it is and that has none of the words whose meaning Duktape
// gets wrong (const and let with var semantics, async/await as plain identifiers) needs no
// lowering: whatever ES2015 syntax Duktape accepts (shorthand and computed properties, method
// definitions, binary/octal literals) it runs with the standard meaning. This spares parsing
// large pre-bundled ES5 actions in the interpreter (acorn there runs at about 80 KB/s).
bool RunsAsIs(duk_context* ctx, std::string_view source) {
    for (std::string_view word : {"const", "let", "async", "await"}) {
        if (ContainsWord(source, word)) return false;
    }
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

Result<std::unique_ptr<Transpiler>> Transpiler::Create(void* heap_udata, const TranspilerAllocator* allocator) {
    duk_context* ctx = allocator != nullptr
                           ? duk_create_heap(allocator->alloc, allocator->realloc, allocator->free, heap_udata,
                                             FatalHandler)
                           : duk_create_heap(nullptr, nullptr, nullptr, heap_udata, FatalHandler);
    if (ctx == nullptr) {
        return MakeError(ErrorKind::Internal, "transpiler_load_failed", "cannot create a Duktape heap");
    }
    std::unique_ptr<Transpiler> transpiler(new Transpiler(ctx));

    std::string buble(View(embedded::BUBLE_JS, embedded::BUBLE_JS_SIZE));
    std::size_t anchor = buble.rfind(BUBLE_EXPORT_ANCHOR);
    if (anchor == std::string::npos) {
        return MakeError(ErrorKind::Internal, "transpiler_load_failed",
                         "the embedded buble bundle has no export block to extend");
    }
    buble.insert(anchor + BUBLE_EXPORT_ANCHOR.size(), BUBLE_EXTRA_EXPORTS);

    std::string error;
    if (!EvalProtected(ctx, ShimsSource(), "shims.js", error) ||
        !EvalProtected(ctx, buble, "buble.js", error) ||
        !EvalProtected(ctx, LOWER_DRIVER_JS, "lower_driver.js", error)) {
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
