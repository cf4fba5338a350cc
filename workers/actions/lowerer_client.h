// Lowering through sigil-lowerer ([actions] lowerer_socket): the sandbox's own lowering (buble,
// acorn 8, lower.js) run by Node.js in a daemon of its own (lowerer/lowerer_main.js).
// The sandbox child lowers at the interpreter's speed, about 65 KB/s (a 10 KB action's first run
// takes ~190 ms that way; through the daemon ~30 ms with one shared context, 3-4 times that since
// each request gets a fresh one: bench_first_run.mjs, README "Performance"). The text is the same
// either way, so the result is cached by CID exactly as the child's (code_source.h).
//
// Trust: the daemon parses attacker-supplied source outside the sandbox, as data for a fixed
// program (in a V8 context made for that request alone, without require or process, where eval is
// refused, on a thread killed at the request's deadline: lowerer/lowerer_pool.js), with
// no secret and, under systemd/sigil-lowerer.service, no network; what it
// answers runs only inside a sandbox child. A daemon taken over through a V8 bug could answer
// other code for other CIDs' first runs; that is what this speed costs, and why the setting is
// an operator's choice (empty = the child lowers, as before).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sigil::workers {

// Larger sources are lowered by the sandbox child (the daemon refuses over 4 MiB; keeping well
// under it bounds how long one worker may hold the daemon).
constexpr std::size_t MAX_LOWERER_SOURCE_BYTES = 1u << 20;

// How long a source of this size may take in the daemon before the worker gives up on it: 1 s
// plus 25 ms per KiB (it lowered about 400 KB/s with one shared context, and about a third of that
// in a fresh context per request; a 313 KiB esbuild bundle that mentions BigInt took 4.8-6.5 s, about
// 50-65 KB/s, at load 7: at 10 ms per KiB it fell to the child, which ran out of the 64 MiB heap).
int LowererWaitMs(std::size_t source_bytes);

// The lowered text of `source`, or nullopt when the daemon does not give it within
// min(max_wait_ms, LowererWaitMs): no socket configured, nothing listening (fails at once), too
// slow, a broken answer, source that does not lower (the child then lowers it and reports the
// syntax error, so errors read the same either way), or the daemon's own refusal to go on with it
// ('T': the daemon gives each request a deadline under LowererWaitMs and then kills its thread;
// logged per source, and the child lowers it under the run's own time limit). Source that is not
// UTF-8 or is over MAX_LOWERER_SOURCE_BYTES is not sent. A daemon that took the connection but did
// not answer at all is left alone for 5 s (nullopt at once meanwhile). Logs a warning when the
// daemon stops answering and a note when it answers again.
std::optional<std::string> LowerWithDaemon(const std::string& socket_path, std::string_view source, int max_wait_ms);

}  // namespace sigil::workers
