// bench_lowering: the action transpiler (workers/sandbox/transpiler.h: acorn 8 front pass, then
// buble) in the sandbox's own Duktape build. Prints
//  - preload: Transpiler::Create time and the heap's memory afterwards (a counting allocator);
//  - Lower() p50/min of representative modern action code of about 3, 10 and 50 KB (optional
//    chaining, ??, class fields, private names, async, destructuring, templates, spread), also
//    the same code with no ES2020+ syntax (ES2019, buble's own input), and ES5 (passes as is);
//  - BigInt: lowered BigInt arithmetic (JSBI) against the same loop on numbers, per operation,
//    and decimal conversion with and without the sandbox's native (bigint_native.h).
// Usage: bench_lowering [RUNS=15]
#include <duktape.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "workers/sandbox/natives/bigint_native.h"
#include "workers/sandbox/transpiler.h"

using namespace sigil::workers;

namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// One unit of modern action code (about 2.3 KB); NAME is replaced per copy.
constexpr const char* MODERN_UNIT = R"JS(
const DEFAULTS_NAME = { retries: 3, timeoutMs: 1_000, tags: ["a", "b"] };
class RateLimiter_NAME {
  static created = 0;
  #hits = 0;
  limit = 10;
  constructor(limit) { this.limit = limit ?? this.limit; RateLimiter_NAME.created++; }
  hit() { this.#hits += 1; return this.#hits <= this.limit; }
  get hits() { return this.#hits; }
}
function pick_NAME(obj, ...keys) {
  const out = {};
  for (const k of keys) if (obj?.[k] !== undefined) out[k] = obj[k];
  return out;
}
const merge_NAME = (a, b) => ({ ...a, ...b, tags: [...(a?.tags ?? []), ...(b?.tags ?? [])] });
async function fetchJson_NAME(url, { method = "GET", body } = {}) {
  try {
    const res = await fetch(url, { method, body: body ? JSON.stringify(body) : undefined });
    return await res.json();
  } catch {
    return null;
  }
}
const summarize_NAME = (items = []) => {
  let total = 0, count = 0;
  for (const { amount = 0, meta } of items) {
    total += amount ** 2;
    count ||= meta?.count;
    count &&= count + 1;
  }
  return `total=${total} count=${count ?? 0} first=${items[0]?.name?.toUpperCase?.() ?? "-"}`;
};
const handlers_NAME = {
  async ping(p) { return { pong: p?.value ?? 1 }; },
  sum(p) { return (p.values ?? []).reduce((s, v) => s + v, 0); },
  describe({ name = "anon", ...rest } = {}) { return `${name}:${Object.keys(rest).join(",")}`; },
};
const main_NAME = async (params) => {
  const cfg = merge_NAME(DEFAULTS_NAME, params?.config);
  const limiter = new RateLimiter_NAME(cfg?.retries);
  let attempts = 0;
  while (limiter.hit() && attempts < 2) attempts++;
  const picked = pick_NAME(params, "a", "b", "c");
  const handler = handlers_NAME[params?.op ?? "sum"];
  const result = handler ? await handler.call(handlers_NAME, params) : undefined;
  const data = params.url ? await fetchJson_NAME(params.url) : null;
  const nested = params?.deep?.list?.[0]?.fn?.(2) ?? "none";
  let cache = params.cache;
  cache ??= {};
  cache.n ??= 0;
  cache.n += 1;
  return { attempts, picked, result, data, nested, cache, summary: summarize_NAME(params?.items),
    created: RateLimiter_NAME.created, hits: limiter.hits, describe: handlers_NAME.describe(params?.person),
    tmpl: `${cfg.retries}-${cfg.timeoutMs}-${cfg.tags.length}` };
};
)JS";

// The same shape in ES2019 (the front pass still parses it: it has spreads).
constexpr const char* ES2019_UNIT = R"JS(
const DEFAULTS_NAME = { retries: 3, timeoutMs: 1000, tags: ["a", "b"] };
class RateLimiter_NAME {
  constructor(limit) { this.hits_ = 0; this.limit = limit != null ? limit : 10; RateLimiter_NAME.created++; }
  hit() { this.hits_ += 1; return this.hits_ <= this.limit; }
  get hits() { return this.hits_; }
}
RateLimiter_NAME.created = 0;
function pick_NAME(obj, ...keys) {
  const out = {};
  for (const k of keys) { if (obj && obj[k] !== undefined) out[k] = obj[k]; }
  return out;
}
const merge_NAME = (a, b) => ({ ...a, ...b, tags: [...((a && a.tags) || []), ...((b && b.tags) || [])] });
function fetchJson_NAME(url, { method = "GET", body } = {}) {
  try {
    const res = fetch(url, { method, body: body ? JSON.stringify(body) : undefined });
    return res.json();
  } catch (e) {
    return null;
  }
}
const summarize_NAME = (items = []) => {
  let total = 0, count = 0;
  for (const { amount = 0, meta } of items) {
    total += amount ** 2;
    count = count || (meta && meta.count);
    count = count && count + 1;
  }
  const first = items[0] && items[0].name && items[0].name.toUpperCase ? items[0].name.toUpperCase() : "-";
  return `total=${total} count=${count != null ? count : 0} first=${first}`;
};
const handlers_NAME = {
  ping(p) { return { pong: p && p.value != null ? p.value : 1 }; },
  sum(p) { return (p.values || []).reduce((s, v) => s + v, 0); },
  describe({ name = "anon", ...rest } = {}) { return `${name}:${Object.keys(rest).join(",")}`; },
};
const main_NAME = (params) => {
  const cfg = merge_NAME(DEFAULTS_NAME, params && params.config);
  const limiter = new RateLimiter_NAME(cfg && cfg.retries);
  let attempts = 0;
  while (limiter.hit() && attempts < 2) attempts++;
  const picked = pick_NAME(params, "a", "b", "c");
  const handler = handlers_NAME[(params && params.op) || "sum"];
  const result = handler ? handler.call(handlers_NAME, params) : undefined;
  const data = params.url ? fetchJson_NAME(params.url) : null;
  let cache = params.cache || {};
  cache.n = (cache.n || 0) + 1;
  return { attempts, picked, result, data, cache, summary: summarize_NAME(params && params.items),
    created: RateLimiter_NAME.created, hits: limiter.hits, describe: handlers_NAME.describe(params && params.person),
    tmpl: `${cfg.retries}-${cfg.timeoutMs}-${cfg.tags.length}` };
};
)JS";

constexpr const char* ES5_UNIT = R"JS(
function F_NAME(a, b) { var s = 'x' + a; for (var k in b) { if (b.hasOwnProperty(k)) s += b[k]; } return { s: s, n: [a, b].length }; }
var G_NAME = { run: function (p) { var out = []; for (var i = 0; i < p.length; i++) out.push(F_NAME(p[i], {})); return out; } };
)JS";

std::string Copies(const char* unit, std::size_t target_bytes, bool es5) {
    std::string out;
    for (int i = 0; out.size() < target_bytes; ++i) {
        std::string copy = unit;
        for (std::size_t at = copy.find("NAME"); at != std::string::npos; at = copy.find("NAME", at)) {
            copy.replace(at, 4, std::to_string(i));
        }
        out += copy;
    }
    return out + (es5 ? "var main = G_0.run;\n" : "const main = main_0;\n");
}

// A counting allocator: current and peak bytes of the transpiler heap.
struct Counter {
    std::size_t current = 0;
    std::size_t peak = 0;
};
struct Header {
    std::size_t size;
    std::size_t pad;
};
void* Alloc(void* udata, std::size_t size) {
    auto* c = static_cast<Counter*>(udata);
    auto* h = static_cast<Header*>(std::malloc(sizeof(Header) + size));
    if (h == nullptr) return nullptr;
    h->size = size;
    c->current += size;
    c->peak = std::max(c->peak, c->current);
    return h + 1;
}
void Free(void* udata, void* ptr) {
    if (ptr == nullptr) return;
    auto* h = static_cast<Header*>(ptr) - 1;
    static_cast<Counter*>(udata)->current -= h->size;
    std::free(h);
}
void* Realloc(void* udata, void* ptr, std::size_t size) {
    if (ptr == nullptr) return Alloc(udata, size);
    if (size == 0) {
        Free(udata, ptr);
        return nullptr;
    }
    auto* c = static_cast<Counter*>(udata);
    auto* old = static_cast<Header*>(ptr) - 1;
    std::size_t old_size = old->size;
    auto* h = static_cast<Header*>(std::realloc(old, sizeof(Header) + size));
    if (h == nullptr) return nullptr;
    h->size = size;
    c->current = c->current - old_size + size;
    c->peak = std::max(c->peak, c->current);
    return h + 1;
}

}  // namespace

int main(int argc, char** argv) {
    int runs = argc > 1 ? std::atoi(argv[1]) : 15;
    if (runs < 1) runs = 1;

    Counter counter;
    TranspilerAllocator allocator{Alloc, Realloc, Free};
    auto t0 = Clock::now();
    auto created = Transpiler::Create(&counter, &allocator);
    double create_ms = Ms(Clock::now() - t0);
    if (!created.ok()) {
        std::fprintf(stderr, "Transpiler::Create: %s\n", created.error().message.c_str());
        return 1;
    }
    Transpiler& transpiler = *created.value();
    std::printf("preload (Transpiler::Create: shims, buble, acorn 8, lower.js): %.1f ms, heap %.2f MB (peak %.2f MB)\n",
                create_ms, counter.current / 1048576.0, counter.peak / 1048576.0);
    std::printf("%-34s %8s %10s %10s %10s %12s\n", "input", "bytes", "p50 ms", "min ms", "KB/s", "peak+ MB");

    struct Input {
        const char* name;
        const char* unit;
        std::size_t bytes;
    };
    const Input inputs[] = {
        {"modern (ES2022) 3 KB", MODERN_UNIT, 3 * 1024},   {"modern (ES2022) 10 KB", MODERN_UNIT, 10 * 1024},
        {"modern (ES2022) 50 KB", MODERN_UNIT, 50 * 1024}, {"ES2019 10 KB", ES2019_UNIT, 10 * 1024},
        {"ES2019 50 KB", ES2019_UNIT, 50 * 1024}, {"ES5 (runs as is) 50 KB", ES5_UNIT, 50 * 1024},
    };
    for (const Input& input : inputs) {
        std::string source = Copies(input.unit, input.bytes, input.unit == ES5_UNIT);
        std::vector<double> times;
        std::size_t base = counter.current;
        counter.peak = base;
        for (int i = 0; i < runs; ++i) {
            t0 = Clock::now();
            auto lowered = transpiler.Lower(source);
            times.push_back(Ms(Clock::now() - t0));
            if (!lowered.ok()) {
                std::fprintf(stderr, "%s: %s\n", input.name, lowered.error().message.c_str());
                return 1;
            }
        }
        std::sort(times.begin(), times.end());
        double p50 = times[times.size() / 2];
        std::printf("%-34s %8zu %10.2f %10.2f %10.1f %12.2f\n", input.name, source.size(), p50, times[0],
                    source.size() / 1024.0 / (p50 / 1000.0), (counter.peak - base) / 1048576.0);
    }

    // BigInt: one loop lowered twice, on BigInts (JSBI through __sigil_b) and on numbers.
    auto run_loop = [&](const std::string& code, int iterations, bool natives = false) -> double {
        auto lowered = transpiler.Lower(code);
        if (!lowered.ok()) {
            std::fprintf(stderr, "lowering the BigInt loop: %s\n", lowered.error().message.c_str());
            std::exit(1);
        }
        duk_context* ctx = duk_create_heap_default();
        if (natives) InstallBigIntNatives(ctx);
        auto eval = [&](std::string_view text) {
            if (duk_peval_lstring(ctx, text.data(), text.size()) != 0) {
                std::fprintf(stderr, "eval: %s\n", duk_safe_to_string(ctx, -1));
                std::exit(1);
            }
            duk_pop(ctx);
        };
        eval(ShimsSource());
        eval(LowerRuntimeSource());
        eval(lowered.value());
        std::string call = "String(loop(" + std::to_string(iterations) + "))";
        t0 = Clock::now();
        eval(call);
        double ms = Ms(Clock::now() - t0);
        duk_destroy_heap(ctx);
        return ms;
    };
    const int iterations = 2000;
    // Per iteration: one multiply, one add, one divide, one remainder, one comparison (256-bit values).
    double big_ms = run_loop(
        "function loop(n) { let a = 2n ** 255n - 19n, m = 10n ** 18n, acc = 0n;"
        " for (let i = 0; i < n; i++) { acc = (acc + a * m) / m % a; if (acc > a) acc = 0n; } return acc; }",
        iterations);
    double num_ms = run_loop(
        "function loop(n) { let a = 2 ** 52 - 19, m = 1e9, acc = 0;"
        " for (let i = 0; i < n; i++) { acc = (acc + a * m) / m % a; if (acc > a) acc = 0; } return acc; }"
        " const mentions = 'BigInt';",
        iterations);
    double plain_ms = run_loop(
        "function loop(n) { let a = 2 ** 52 - 19, m = 1e9, acc = 0;"
        " for (let i = 0; i < n; i++) { acc = (acc + a * m) / m % a; if (acc > a) acc = 0; } return acc; }",
        iterations);
    std::printf("BigInt loop (JSBI, 256-bit: mul, add, div, mod, compare): %.2f us/iteration\n",
                big_ms * 1000.0 / iterations);
    std::printf("same loop on numbers, operators rewritten (source mentions BigInt): %.2f us/iteration\n",
                num_ms * 1000.0 / iterations);
    std::printf("same loop on numbers, native operators (no BigInt in the source): %.2f us/iteration\n",
                plain_ms * 1000.0 / iterations);
    // Decimal text of a 316-bit BigInt (formatting wei amounts): JSBI alone, then with the
    // sandbox's OpenSSL native.
    const std::string to_string =
        "function loop(n) { const p = (2n ** 255n - 19n) * 10n ** 18n; let s = ''; for (let i = 0; i < n; i++) s = p.toString();"
        " return s; }";
    const int conversions = 200;
    double jsbi_ms = run_loop(to_string, conversions, false);
    double native_ms = run_loop(to_string, conversions, true);
    std::printf("toString() of a 316-bit BigInt: JSBI %.1f us, with the OpenSSL native %.1f us\n",
                jsbi_ms * 1000.0 / conversions, native_ms * 1000.0 / conversions);
    return 0;
}
