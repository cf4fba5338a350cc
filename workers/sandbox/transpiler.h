// Transpiler: lowers modern JavaScript (ES2022 less generators: optional chaining, ??, logical
// assignment, class fields and private names, async/await, BigInt, and the ES2015-ES2019 syntax:
// arrows, classes, destructuring, template strings, spread, let/const, for-of) to the ES5.1 that
// Duktape runs. A front pass on acorn 8 (js/lower.js) lowers ES2020+ to ES2019, then the buble
// transpiler lowers that to ES5.1; both are loaded once into their own Duktape heap.
//
// Lowering parses attacker-supplied source, so it runs inside the sandbox child: the heap is
// built in the zygote before fork and every run gets it copy-on-write. The class never assumes
// which Duktape build it is linked with (Debian's libduktape or the sandbox's own build); it
// only uses the public Duktape API.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

// Duktape's public handle type (duk_context is a typedef of it); declared here so this header
// does not pull in one particular duktape.h.
struct duk_hthread;

namespace sigil::workers {

// Largest source Lower() accepts (the "code" limit of DESIGN.md section 5).
constexpr std::size_t MAX_ACTION_SOURCE_BYTES = 16u * 1024u * 1024u;

// The JavaScript every action heap evaluates before the action itself, in this order:
//   ShimsSource():   Map, Set, WeakMap, Object.assign, Array.from, String/Array helpers that
//                    Duktape 2.7 lacks and that lowered code relies on (spread uses
//                    Object.assign). Plain ES5.1; safe to evaluate in any global scope.
//   PreludeSource(): Sigil.Actions, Lit.Actions/LitActions, console, fetch. Needs the natives
//                    __sigil_op(name, json_arg) -> json_result and __sigil_log(text) to be
//                    defined as globals first (the sandbox provides them).
//   LowerRuntimeSource(): what lowered code calls: JSBI (BigInt values) and the helpers of
//                    js/lower_runtime.js (__sigil_oc, __sigil_nc, __sigil_b...). Needs shims.js
//                    first; its for-await helper calls prelude.js's __sigil_await at run time.
// The views point at static storage, NUL-terminated just past their end.
std::string_view ShimsSource();
std::string_view PreludeSource();
std::string_view LowerRuntimeSource();

// Allocation functions for the transpiler heap, with the signatures of Duktape's
// duk_alloc_function / duk_realloc_function / duk_free_function (all three or none), so the
// sandbox can count and cap its memory like any action heap.
struct TranspilerAllocator {
    void* (*alloc)(void* udata, std::size_t size) = nullptr;
    void* (*realloc)(void* udata, void* ptr, std::size_t size) = nullptr;
    void (*free)(void* udata, void* ptr) = nullptr;
};

class Transpiler {
public:
    // Builds a heap with the shims, buble, acorn 8 and the front pass loaded (about 100 ms, 2.1 MB).
    // `heap_udata` becomes the heap's udata (duk_create_heap), which a Duktape build with
    // DUK_USE_EXEC_TIMEOUT_CHECK passes to its check: the sandbox gives its run deadline so a
    // lowering that takes too long is cut off like any other code; nullptr means no deadline,
    // and such a check must then return 0. `allocator` (optional) replaces Duktape's default
    // allocation functions; they receive `heap_udata` too.
    // Errors: Internal "transpiler_load_failed" if the embedded JS does not load (a build
    // defect, never user input) or the heap cannot be created.
    static common::Result<std::unique_ptr<Transpiler>> Create(void* heap_udata = nullptr,
                                                              const TranspilerAllocator* allocator = nullptr);

    ~Transpiler();
    Transpiler(const Transpiler&) = delete;
    Transpiler& operator=(const Transpiler&) = delete;

    // Lowers `source` (UTF-8 JavaScript, script or module syntax) to ES5.1 source text, which
    // runs in a heap that evaluated ShimsSource, PreludeSource and LowerRuntimeSource.
    // async functions, async arrows and async methods become plain functions and `await x`
    // becomes `__sigil_await(x)` (prelude.js): every Sigil op is synchronous, so the awaited
    // value is usually already there; a promise is settled by running the queued jobs.
    // Source that mentions BigInt (a BigInt literal or the identifier) has its operators
    // rewritten onto the BigInt runtime; other code keeps native operators.
    // The rewrites work on acorn's syntax tree, so strings, comments and template literals
    // that merely contain the words are never touched.
    // Errors:
    //   TooLarge "code_too_large"      source longer than MAX_ACTION_SOURCE_BYTES
    //   InvalidInput "syntax_error"    the source does not parse or uses syntax that cannot be
    //                                  lowered (generators); the message carries
    //                                  "line L, column C" (both 1-based) and the reason
    //   Internal "transpiler_failed"   the transpiler itself failed (out of memory, a bug)
    // Not thread-safe: one Transpiler per thread (in practice, per sandbox child).
    common::Result<std::string> Lower(std::string_view source);

private:
    explicit Transpiler(duk_hthread* heap);

    duk_hthread* m_heap;  // owned; destroyed in ~Transpiler
};

}  // namespace sigil::workers
