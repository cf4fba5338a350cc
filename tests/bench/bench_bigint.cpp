// bench_bigint: BigInt arithmetic in the sandbox's Duktape build, lowered as actions are (JSBI
// through __sigil_b, lower_runtime.js), without and with the OpenSSL BN natives
// (bigint_arith.h): before and after in one sitting, beside Node on the same source. Prints
//  - 2,000 255-bit modular squarings (x = x * x % p, p = 2^255 - 19): ms, and Node's ms;
//  - a 256-bit modular multiplication loop (acc = acc * y % p): us per step, Node's, the ratio;
//  - an x25519-style ladder step mix (mul, add, sub, mod) per step;
//  - the crossover: JSBI against the native per operation (mul, div, mod, add, sub) by operand
//    size, which sets OP_NATIVE_DIGITS in lower_runtime.js.
// Usage: bench_bigint [NODE=node] | bench_bigint --profile (only the native modular
// multiplication loop, for perf record)
#include <duktape.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "workers/sandbox/natives/bigint_native.h"
#include "workers/sandbox/transpiler.h"

using namespace sigil::workers;

namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Each loop is `function loop(n)` returning a BigInt; a run calls loop(N) once.
constexpr const char* SQUARINGS =
    "function loop(n) { const p = 2n ** 255n - 19n; let x = 9n;"
    " for (let i = 0; i < n; i++) x = x * x % p; return x; }";
constexpr const char* MODMUL =
    "function loop(n) { const p = 2n ** 256n - 2n ** 32n - 977n; const y = p - 12345678901234567890n;"
    " let acc = 3n; for (let i = 0; i < n; i++) acc = acc * y % p; return acc; }";
// One step of a Montgomery ladder's arithmetic (RFC 7748), with noble's mod() for negatives.
constexpr const char* LADDER =
    "function loop(n) { const P = 2n ** 255n - 19n; const mod = (a) => { const r = a % P; return r >= 0n ? r : P + r; };"
    " let x2 = 1n, z2 = 0n, x3 = 9n, z3 = 1n; const x1 = 9n;"
    " for (let i = 0; i < n; i++) { const A = x2 + z2, AA = mod(A * A), B = x2 - z2, BB = mod(B * B), E = AA - BB;"
    "  const C = x3 + z3, D = x3 - z3, DA = mod(D * A), CB = mod(C * B);"
    "  x3 = mod((DA + CB) ** 2n); z3 = mod(x1 * mod((DA - CB) ** 2n)); x2 = mod(AA * BB); z2 = mod(E * (AA + mod(121665n * E)));"
    "  if (z2 === 0n) z2 = 1n; } return x2 ^ z2; }";

struct Heap {
    duk_context* ctx;
    explicit Heap(bool natives) : ctx(duk_create_heap_default()) {
        if (natives) {
            InstallBigIntNatives(ctx);
            // Keep a handle on the natives the runtime binds, for the crossover figures.
            Eval("(function (g) { var f = g.__sigil_bigint_arith;"
                 " g.__sigil_bigint_arith = function (p) { return (g.__bench_arith = f(p)); }; })(this);");
        }
        Eval(ShimsSource());
        Eval(LowerRuntimeSource());
    }
    ~Heap() { duk_destroy_heap(ctx); }
    std::string Eval(std::string_view text) {
        if (duk_peval_lstring(ctx, text.data(), text.size()) != 0) {
            std::fprintf(stderr, "eval: %s\n", duk_safe_to_string(ctx, -1));
            std::exit(1);
        }
        std::string out = duk_safe_to_string(ctx, -1);
        duk_pop(ctx);
        return out;
    }
};

struct Timed {
    double ms;
    std::string value;
};

Timed RunLowered(Transpiler& transpiler, const char* code, int n, bool natives) {
    auto lowered = transpiler.Lower(code);
    if (!lowered.ok()) {
        std::fprintf(stderr, "lowering: %s\n", lowered.error().message.c_str());
        std::exit(1);
    }
    Heap heap(natives);
    heap.Eval(lowered.value());
    std::string call = "String(loop(" + std::to_string(n) + "))";
    auto t0 = Clock::now();
    std::string value = heap.Eval(call);
    return {Ms(Clock::now() - t0), value};
}

// Node on the same (unlowered) source: the loop's own time, after one warm-up call.
Timed RunNode(const std::string& node, const char* code, int n) {
    std::string script = std::string(code) + "; loop(" + std::to_string(n) +
                         "); const t = process.hrtime.bigint(); const v = loop(" + std::to_string(n) +
                         "); console.log(Number(process.hrtime.bigint() - t) / 1e6, String(v));";
    std::string command = node + " -e '" + script + "'";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (!pipe) return {-1, ""};
    char line[4096] = {};
    if (std::fgets(line, sizeof line, pipe.get()) == nullptr) return {-1, ""};
    Timed out{std::atof(line), ""};
    if (const char* space = std::strchr(line, ' ')) out.value = std::string(space + 1, std::strcspn(space + 1, "\n"));
    return out;
}

void Compare(Transpiler& transpiler, const std::string& node, const char* name, const char* code, int n) {
    Timed before = RunLowered(transpiler, code, n, false);
    Timed after = RunLowered(transpiler, code, n, true);
    Timed in_node = RunNode(node, code, n);
    bool same = before.value == after.value && after.value == in_node.value;
    std::printf("%-44s %6d %10.1f %10.2f %9.3f %9.1fx %9.0fx %s\n", name, n, before.ms, after.ms, in_node.ms,
                before.ms / after.ms, after.ms / in_node.ms, same ? "same" : "DIFFERENT RESULTS");
}

}  // namespace

int main(int argc, char** argv) {
    std::string node = argc > 1 ? argv[1] : "node";
    auto created = Transpiler::Create();
    if (!created.ok()) {
        std::fprintf(stderr, "Transpiler::Create: %s\n", created.error().message.c_str());
        return 1;
    }
    Transpiler& transpiler = *created.value();
    if (node == "--profile") {
        Timed t = RunLowered(transpiler, MODMUL, 50000, true);
        std::printf("native modular multiplication: %.2f us per step\n", t.ms * 1000 / 50000);
        return 0;
    }
    std::printf("%-44s %6s %10s %10s %9s %10s %10s\n", "loop", "steps", "JSBI ms", "native ms", "node ms",
                "speed-up", "vs node");
    Compare(transpiler, node, "255-bit modular squarings (x*x % p)", SQUARINGS, 2000);
    Compare(transpiler, node, "256-bit modular multiplication (acc*y % p)", MODMUL, 20000);
    Compare(transpiler, node, "x25519 ladder step (10 mul, 8 add/sub, 11 mod)", LADDER, 1000);

    // Crossover: each operation on operands of k 30-bit digits, JSBI against the native.
    Heap heap(true);
    std::printf("\ncrossover, us per operation (operands of k 30-bit digits each; div/mod: 2k by k)\n");
    std::printf("%4s %6s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "k", "bits", "mul JSBI", "native", "div JSBI",
                "native", "mod JSBI", "native", "add JSBI", "native", "sub JSBI", "native");
    std::string out = heap.Eval(R"JS(
(function () {
    var J = JSBI, N = __bench_arith, rows = [];
    function Time(f, a, b) {
        var n = 0, t0 = Date.now(), t;
        do { for (var i = 0; i < 100; i++) f(a, b); n += 100; t = Date.now() - t0; } while (t < 40);
        return (t * 1000 / n).toFixed(2);
    }
    function Of(bits) { return J.subtract(J.leftShift(J.BigInt(1), J.BigInt(bits)), J.BigInt(12345)); }
    [1, 2, 3, 4, 6, 9, 17, 35, 70].forEach(function (k) {
        var a = Of(30 * k - 1), b = J.subtract(a, J.BigInt(98765)), wide = J.multiply(a, b);
        rows.push([k, 30 * k, Time(J.multiply, a, b), Time(N.mul, a, b), Time(J.divide, wide, b), Time(N.div, wide, b),
                   Time(J.remainder, wide, b), Time(N.mod, wide, b), Time(J.add, a, b), Time(N.add, a, b),
                   Time(J.subtract, a, b), Time(N.sub, a, b)].join(' '));
    });
    return rows.join('\n');
})()
)JS");
    std::size_t start = 0;
    while (start < out.size()) {
        std::size_t end = out.find('\n', start);
        if (end == std::string::npos) end = out.size();
        std::string row = out.substr(start, end - start);
        double v[12] = {};
        std::sscanf(row.c_str(), "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                    &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]);
        std::printf("%4.0f %6.0f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", v[0], v[1], v[2], v[3],
                    v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]);
        start = end + 1;
    }
    return 0;
}
