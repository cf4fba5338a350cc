/* Sigil's Duktape configuration: Debian's generated config plus the execution-timeout hook.
 *
 * duktape.c is compiled with this file force-included (-include) and its folder first on the
 * include path, so Debian's header is read once, here, and its own include guard turns the
 * engine's later #include "duk_config.h" (which resolves next to duktape.h) into a no-op.
 * C++ code includes Debian's <duktape.h> as usual: these two options change only engine
 * internals, never the public API or its types.
 */
#if !defined(SIGIL_DUK_CONFIG_H_INCLUDED)
#define SIGIL_DUK_CONFIG_H_INCLUDED

#include "/usr/share/duktape/duk_config.h"

/* The executor calls DUK_USE_EXEC_TIMEOUT_CHECK every DUK_USE_INTERRUPT_COUNTER-driven
 * interrupt (about every 256k bytecode instructions by default); a non-zero return throws a
 * RangeError that keeps rethrowing until it leaves the engine, so scripts cannot catch it.
 * Debian's config #undefs both; the config's own consistency checks run before this point, so
 * the one that matters (EXEC_TIMEOUT_CHECK needs INTERRUPT_COUNTER) is honoured by hand.
 * Regex backtracking and some built-ins never reach an interrupt: RLIMIT_CPU and the worker's
 * SIGKILL stay the backstop. */
#undef DUK_USE_INTERRUPT_COUNTER
#define DUK_USE_INTERRUPT_COUNTER
#undef DUK_USE_EXEC_TIMEOUT_CHECK
#define DUK_USE_EXEC_TIMEOUT_CHECK(udata) sigil_duk_exec_timeout_check((udata))

#if defined(__cplusplus)
extern "C" {
#endif
/* Defined in workers/sandbox_child.cpp: 1 once the run's deadline has passed, else 0.
 * udata is the heap_udata given to duk_create_heap (the child's heap state). */
duk_bool_t sigil_duk_exec_timeout_check(void *udata);
#if defined(__cplusplus)
}
#endif

#endif /* SIGIL_DUK_CONFIG_H_INCLUDED */
