// Modern JavaScript through the whole stack (POST /core/v1/sigil_action): every ES2020-ES2022
// construct the transpiler lowers (optional chaining, ??, logical assignment, class fields and
// private names, numeric separators, optional catch, async arrows and methods, rest/spread,
// tagged templates) and BigInt (literals, arithmetic, comparisons, bitwise, conversions,
// V8's errors), each run as an action whose answer is compared with Node running the same code.
// BigInt also gets randomized operands (seed printed) against Node's native BigInt, and one
// published action that used to be refused (optional chaining) runs unmodified.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';

import { join } from 'node:path';
import { startStack, assertOk, actionRunner, newAccount, addGroup, addUsageKey, createWallet, SOURCE_DIR } from './stack.mjs';

let stack;
const s = {};

before(async () => {
  stack = await startStack({
    workers: 2,
    actions: ['timeout_ms = 10000', 'memory_bytes = 67108864', 'max_code_bytes = 200000', 'max_response_bytes = 262144'],
  });
  s.owner = (await newAccount(stack, 'compat syntax')).api_key;
  s.group = await addGroup(stack, s.owner, 'runners');
  s.pkp = (await createWallet(stack, s.owner)).toLowerCase();
  assertOk(await stack.request('POST', 'add_pkp_to_group', { key: s.owner, body: { group_id: s.group, pkp_id: s.pkp } }));
  s.executor = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
  run = actionRunner(stack, { owner: s.owner, group: s.group, key: s.executor, pkp: s.pkp });
});

after(async () => { await stack?.stop(); });

let run;  // actionRunner, once the account exists

// The value a case's main answers, as text: BigInts tagged (JSON has none), a throw as its
// name and message. The same conversion runs inside the action (lowered with the case) and here.
// It spells 'big' + 'int' so that it does not mark every case as BigInt code (a typeof test
// against 'bigint' does, lower.js): cases without BigInt stay lowered as such code is.
const CONVERT = `
function __conv(v) { if (typeof v === 'big' + 'int') return 'bigint:' + v.toString(); if (Array.isArray(v)) return v.map(__conv);
  if (v && typeof v === 'object') { const o = {}; for (const k of Object.keys(v)) o[k] = __conv(v[k]); return o; } return v; }
const main = async (p) => { try { return JSON.stringify(__conv(await caseMain(p))); } catch (e) { return 'THROWN ' + e.name + ': ' + e.message; } };
`;
const actionCode = (code) => code.replace(/\bmain\b/g, 'caseMain') + CONVERT;

async function nodeAnswer(code, params) {
  const ctx = vm.createContext({});
  vm.runInContext(actionCode(code) + '\n;globalThis.__main = main;', ctx);
  return ctx.__main(params);
}

async function compare(name, code, params) {
  const want = await nodeAnswer(code, params);
  const j = await run(actionCode(code), params);
  assert.equal(j.has_error, false, `${name}: ${JSON.stringify(j)}`);
  assert.equal(j.response, want, `${name}: the sandbox answered differently from Node`);
}

const CASES = {
  optional_member: `const main = () => { const o = { a: { b: { c: 1 } } }, n = null; return [o?.a.b.c, n?.a.b.c, o.x?.y.z, o?.["a"]?.b?.["c"]]; }`,
  optional_call_this: `const main = () => { const o = { v: 7, m() { return this.v; }, k: { f() { return this === o.k; } } }; const n = undefined;
     return [o.m?.(), o.nope?.(), n?.m(), o?.k.f(), o.k?.f?.(), o?.["m"]?.(), (o?.m)?.call({v: 3})]; }`,
  optional_short_circuit: `const main = () => { let calls = 0; const f = () => { calls++; return 1; }; const n = null; const r = n?.a[f()].b(f()); return [r, calls, n?.x.y.z, (n?.x)?.y]; }`,
  nullish: `const main = () => { const z = 0, e = '', n = null, u = undefined; let c = 0; const side = () => ++c; return [z ?? 1, e ?? 'x', n ?? 'd', u ?? n ?? 'e', z ?? side(), c, (n ?? 2) + 1]; }`,
  logical_assign: `const main = () => { let a = null, b = 0, c = 1, d = 'x'; a ??= 5; b ||= 6; c &&= 7; d &&= 0; const o = { p: null, q: 1, r: 0 }; let k = 0; const key = () => (k++, 'p');
     o[key()] ??= 'set'; o.q ||= 'no'; o.r ||= 'yes'; o.q &&= 'and'; return [a, b, c, d, o, k]; }`,
  exponent: `const main = () => { let x = 3; x **= 3; return [2 ** 10, (-2) ** 3, 2 ** -1, x, 2 ** 3 ** 2]; }`,
  numeric_separators: `const main = () => [1_000_000, 0xFF_FF, 1_0.5_0, 0b1010_1010, 1e1_0];`,
  optional_catch: `const main = () => { let r; try { throw new Error('x'); } catch { r = 'caught'; } try { JSON.parse('{'); } catch { r += '2'; } return r; }`,
  object_rest_spread: `const main = () => { const { a, ...rest } = { a: 1, b: 2, c: 3 }; const o = { ...rest, d: 4, ...{ e: 5 } }; const f = ({ x, ...others }) => others; return [a, rest, o, f({ x: 1, y: 2 })]; }`,
  class_fields: `class A { x = 1; y = this.x + 1; static count = 0; static { A.count = 10; } constructor(z) { this.z = z; A.count++; } sum() { return this.x + this.y + this.z; } }
     class B extends A { w = 5; arrow = () => this.w; constructor() { super(100); this.after = this.w * 2; } }
     class C extends A { q = 9; }
     const main = () => { const a = new A(3), b = new B(), c = new C(1); return [a.sum(), b.sum(), b.arrow(), b.after, A.count, c.q, c.z, Object.keys(a)]; }`,
  private_members: `class Counter { #n = 0; static #made = 0; #step() { this.#n += 2; } constructor() { Counter.#made++; } inc() { this.#step(); return this.#n; } static made() { return Counter.#made; } has(o) { return #n in o; } }
     const main = () => { const c = new Counter(); c.inc(); return [c.inc(), Counter.made(), c.has(c), c.has({}), JSON.stringify(c), Object.keys(c)]; }`,
  async_arrow_main: `const helper = async (x) => x * 2; const main = async (p) => { const v = await helper(21); return { v, p: p ?? null }; };`,
  async_methods: `const o = { async m(v) { return (await v) + 1; } }; class K { async k() { return 'k'; } static async s() { return 's'; } }
     const main = async () => [await o.m(1), await new K().k(), await K.s(), await (async () => 'arrow')()];`,
  destructuring_defaults: `const main = () => { const { a = 1, b: { c = 2 } = {}, ...r } = { d: 4 }; const [x = 5, , y = 6, ...zs] = [undefined, 0, null, 7, 8]; function f({ p = 'p', q } = {}, [m = 'm'] = []) { return p + q + m; } return [a, c, r, x, y, zs, f(), f({ q: 'Q' }, ['M'])]; }`,
  template_literals: "const main = () => { const n = 3, o = { k: 'v' }; const tag = (s, ...v) => s.raw.join('|') + v.join(','); return [`a${n}b${o.k}c${`in${n + 1}`}`, tag`x${1}y${2}z`, `multi\nline`]; }",
  bigint_json_replacer: `const main = () => { const o = { a: 5n, b: [1n, { c: 2n ** 70n }], d: 'x' }; const out = [];
     out.push(JSON.stringify(o, (k, v) => typeof v === 'bigint' ? v.toString() : v));
     out.push(JSON.stringify(o, function (k, v) { return typeof v === 'bigint' ? Number(v) : v; }, 1));
     const grab = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
     out.push(grab(() => JSON.stringify(o, (k, v) => v)));
     out.push(grab(() => JSON.stringify(o)));
     out.push(grab(() => JSON.stringify(o, ['a'])));
     out.push(grab(() => JSON.stringify({ z: 1 }, (k, v) => k === 'z' ? JSON.stringify({ inner: 3n }) : v)));
     out.push(grab(() => JSON.stringify([7n], (k, v) => typeof v === 'bigint' ? JSON.stringify([String(v)], (k2, w) => w) : v)));
     return out; }`,
  v8_error_messages: `const main = () => { const out = []; const grab = (f) => { try { f(); } catch (e) { out.push(e.name + ': ' + e.message); } };
     grab(() => notDefinedAnywhere); let u; const n = null; grab(() => u.x); grab(() => n.x.y); grab(() => n[0]); grab(() => { u.x = 1; });
     grab(() => { throw new TypeError('own words stay'); }); return out; }`,
  v8_error_uncaught: `const main = () => { let u; return u.deep; }`,
  for_of_iterables: `const main = () => { const out = []; for (const s of new Set(['a', 'b', 'a'])) out.push(s); for (const [k, v] of new Map([['k', 1], ['j', 2]])) out.push(k + v);
     for (const v of new Map([['x', 3]]).values()) out.push(v); for (const [i, x] of ['p', 'q'].entries()) out.push(i + x); for (const k of ['u'].keys()) out.push(k);
     for (const c of 'a\u{1F600}b') out.push(c); let n = 0; for (const _ of new Set()) n++; const s = new Set([1]); for (const v of s) out.push(v * 10);
     const it = { [Symbol.iterator]() { let i = 0; return { next: () => (i < 3 ? { value: i++, done: false } : { value: undefined, done: true }) }; } };
     for (const v of it) out.push('it' + v); for (const x of [...new Set([7, 8])]) out.push(x); return [out, n, Array.from('x\u{1F600}').length, [...'\u{1F600}\u{1F600}'].length]; }`,
  for_of_spread: `const main = () => { const out = []; for (const [i, v] of [[0, 'a'], [1, 'b']]) out.push(i, v); for (const ch of 'hé') out.push(ch); const max = Math.max(...[1, 5, 3], ...[9]); function f(a, ...r) { return a + r.length; } return [out, max, f(...[1, 2, 3]), [...'ab', ...[1]]]; }`,
  optional_in_loop: `const main = () => { const out = {}; const src = { a: 1, c: 3 }; for (const k of ['a', 'b', 'c']) if (src?.[k] !== undefined) out[k] = src[k] ?? 0; let i = 0; while (i < 3) i += src?.a ?? 1; return [out, i]; }`,
  for_await: `const main = async () => { const out = []; for await (const v of [Promise.resolve(1), 2]) out.push(v); return out; }`,
  arguments_in_rewrites: `function f() { return [arguments[0] ?? arguments[1], arguments?.[2]?.x ?? 'none', ((...a) => a.length)(...arguments)]; } const main = () => [f(null, 2, { x: 'X' }), f(0)];`,
  this_in_chains: `const o = { v: 1, g() { return this?.v ?? 0; }, h() { const inner = () => this.v ??= 5; return inner(); }, k() { return [1, 2].map(function () { return this?.v; }, { v: 9 }); } }; const main = () => [o.g(), o.h(), o.k()];`,
  private_accessors: `class T { #v = 1; get v() { return this.#v; } set v(x) { this.#v = x * 2; } static #count = 0; static bump() { return ++T.#count; } #priv() { return this.#v + 100; } callPriv() { return this.#priv(); } }
    const main = () => { const t = new T(); t.v = 5; T.bump(); return [t.v, T.bump(), t.callPriv(), 'v' in t]; };`,
  class_super_nested: `class A { constructor(x) { this.x = x; } } class B extends A { y = this.x + 1; constructor(x) { if (x > 0) { super(x); } else { super(-x); } this.z = this.y * 2; } }
    const main = () => { const b = new B(3), c = new B(-4); return [b.x, b.y, b.z, c.x, c.y, c.z]; };`,
  labeled_switch: `const main = (p) => { let out = []; outer: for (const [i, row] of [[0, [1, 2]], [1, [3, 4]]].map((x) => x)) { for (const v of row) { if (v === 3) continue outer; out.push(v); } } switch (p?.k ?? 'b') { case 'a': out.push('A'); break; case 'b': out.push('B'); } return out; };`,
  getters_statics: `class S { static #inst; static get inst() { return S.#inst ??= new S(); } id = Math.floor(1.5); } const main = () => [S.inst === S.inst, S.inst.id];`,
  exponent_assign_member: `const main = () => { const o = { a: 2, b: [3] }; o.a **= 3; o.b[0] **= 2; let i = 0; const arr = [2, 2]; arr[i++] **= 2; return [o, arr, i]; };`,
  optional_chain_template_new: "const main = () => { const m = new Map([['k', { f: (x) => `v${x}` }]]); return [m.get('k')?.f?.(1), m.get('z')?.f(1), `${m.get('k')?.f(2) ?? ''}!`]; };",
  minified_bigint: `function t(e){if(e==="")return!0;return!1}function n(e){return-e}function f(i){if(i.length!==2)throw new Error("len");let[r,o]=i;return r+o}
     function mk(U){return(a,b)=>U(a,b)}function sw(e){switch(e){case!0:return"t";case-1:return"m";default:return"f"}}function h(a){if(a.x)a.y=1;else a.y=2;let{y}=a;return y}
     function k(e){return typeof-e+void!e}function sq(a,b,c){if(a||b,c)return 1;return 2}function cm(a,b){return(a,b)+1n}
     const main=()=>[t(""),t("x"),n(2),n(5n),f(["a","b"]),mk((a,b)=>a+b)(1,2),sw(!0),sw(-1),sw(0),h({x:1}),h({}),k(1),typeof 1n,sq(0,0,1),sq(1,1,0),cm(1,2n)]`,
  minified_plain: `function t(e){if(e==="")return!0;return!1}function n(e){return-e}function f(i){if(i.length!==2)throw new Error("len");let[r,o]=i;return r+o}
     function mk(U){return(a,b)=>U(a,b)}function as(U){return async(a)=>U(a)}function h(a){if(a.x)a.y=1;else a.y=2;let{y}=a;return y}
     function g(a){if(a)return 1;const[b]=[2];return b}const main=async()=>[t(""),n(2),f(["a","b"]),mk((a,b)=>a+b)(1,2),await as((a)=>a*3)(2),h({x:1}),h({}),g(0),g(1)]`,
  class_fields_super_without_semicolon: `class A { constructor(x) { this.x = x } }
     class B extends A { f = 1; g = this.x + 1
       constructor() { super(32)
         this.after = this.g } }
     class C extends A { #p = 5; constructor(v) { if (v) { super(v) } else { super(0) } } p() { return this.#p } }
     const main = () => { const b = new B(), c = new C(7); return [b.x, b.f, b.g, b.after, c.x, c.p()] }`,
  async_in_class_fields: `class Q { run = async (x) => (await x) * 2; static make = async () => new Q(); } const main = async () => { const q = await Q.make(); return await q.run(21); };`,
  nested_destructuring_params_arrows: `const main = () => { const f = ({ a: { b = 1, ...r } = {}, c: [d, ...e] = [] } = {}) => [b, r, d, e]; return [f(), f({ a: { b: 2, x: 3 }, c: [4, 5, 6] })]; };`,
  regex_dotall: `const main = () => { const nl = String.fromCharCode(10); return [('a' + nl + 'b').match(/a.b/s)?.[0].length, /x.y/s.test('x' + nl + 'y'), /x.y/.test('x' + nl + 'y'), /[.]/s.test(nl), /\./s.test('.'), /^(.*!)([^!]*)$/s.exec('a' + nl + '!b')?.[2]]; }`,
  bigint_literals: `const main = () => [10n ** 18n, 0xffn, 0o17n, 0b101n, 1_000n, -5n, 123456789012345678901234567890n];`,
  bigint_arith: `const main = () => { const a = 2n ** 200n + 12345n, b = -987654321987654321n; return [a + b, a - b, a * b, a / b, a % b, b / 7n, b % 7n, -b, 7n / -2n, -7n % 2n, 3n ** 0n]; }`,
  bigint_update: `const main = () => { let x = 5n; const y = x++; const z = ++x; x--; --x; const o = { v: 1n }; o.v++; ++o.v; o.v += 10n; o.v *= 2n; let s = 1n; s -= 3n; s <<= 4n; s >>= 1n; return [x, y, z, o.v, s]; }`,
  bigint_compare: `const main = () => { const a = 5n; return [a < 6n, a <= 5n, a > 4, a >= 5.5, a == 5, a === 5, a === 5n, a != 5n, a !== 5n, 5 == a, "5" == a, a < "6", 2n > 1.5, 1n < NaN, 0n == false, a == 5.5, a == null, null == 0n, a != undefined, 1n < null, 1n > undefined, true == 1n, 1n >= false]; }`,
  for_of_destructuring_siblings: `const main = () => { const r = []; for (const [k, v] of Object.entries({ a: 1 })) r.push(() => k + v); for (const [k, v] of Object.entries({ b: 2 })) r.push(() => k + v); for (const { x = 'd' } of [{}, { x: 'e' }]) r.push(() => x); return r.map((f) => f()); }`,
  bigint_bitwise: `const main = () => { const a = 0b1100n, b = -0b1010n; return [a & b, a | b, a ^ b, ~a, ~b, a << 70n, b >> 2n, (1n << 255n) >> 250n, -1n >> 100n]; }`,
  bigint_conversions: `const main = () => [BigInt(42), BigInt('0x1f'), BigInt('  123  '), BigInt(true), BigInt(false), BigInt(''), BigInt(-0), BigInt(Number.MAX_SAFE_INTEGER) * 3n, Number(2n ** 60n), Number(-12n), BigInt('-77')];`,
  bigint_asn: `const main = () => [BigInt.asUintN(8, 257n), BigInt.asUintN(64, -1n), BigInt.asIntN(8, 255n), BigInt.asIntN(64, 2n ** 63n), BigInt.asIntN(3, 4n), BigInt.asUintN(0, 5n)];`,
  bigint_tostring: "const main = () => { const x = 255n, y = -(2n ** 70n); return [x.toString(16), x.toString(2), y.toString(36), String(y), `v=${x}`, 'c' + x, x + 'd', typeof x, typeof 1, typeof BigInt, typeof notDeclared, x.toLocaleString === undefined]; }",
  bigint_errors: `const main = () => { const t = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
     return [t(() => 1n + 1), t(() => 2 * 3n), t(() => 1n / 0n), t(() => 5n % 0n), t(() => JSON.stringify({ a: 1n })), t(() => BigInt(1.5)), t(() => BigInt('12x')), t(() => +1n), t(() => Math.max(1n)), t(() => new BigInt(1)), t(() => 1n >>> 0n), t(() => BigInt(undefined))]; }`,
  bigint_tojson_override: `BigInt.prototype.toJSON = function () { return this.toString(); }; const main = () => JSON.stringify({ a: 10n ** 20n, b: [1n] });`,
  bigint_wei: `const main = (p) => { const wei = BigInt(p?.wei ?? '1500000000000000000'); const ether = wei / 10n ** 18n, rem = wei % 10n ** 18n; const fee = (wei * 3n) / 1000n; let total = 0n; for (const v of [1n, 2n, 3n]) total += v; return { ether: ether.toString(), frac: rem.toString().padStart(18, '0'), fee: String(fee), total: Number(total), max: (wei > fee ? wei : fee).toString(16) }; }`,
  // ES2019-ES2023 library methods (the sandbox's shims), including their edge cases and errors.
  library_arrays: `const main = () => { const a = [1, [2, [3, [4]]], , 5]; const t = (f) => { try { return f(); } catch (e) { return e.name; } };
     return [a.flat(), a.flat(2), a.flat(Infinity), a.flat(0).length, [1, 2].flatMap((x, i) => [x, i * 10]), [[1], [2]].flatMap((x) => x),
       [5, 6, 7].at(-1), [5, 6, 7].at(0), [5].at(3), [5, 6].at('1'), [1, 2, 3, 4].findLast((x) => x % 2), [1, 2, 3, 4].findLastIndex((x) => x > 9),
       new Uint8Array([9, 8, 7]).at(-2), t(() => [1].flatMap(null))]; }`,
  library_objects: `const main = () => { const t = (f) => { try { return f(); } catch (e) { return e.name; } };
     return [Object.fromEntries([['a', 1], ['b', [2]]]), Object.fromEntries(new Map([['m', true]])), Object.fromEntries(Object.entries({ x: 1, y: 2 }).map(([k, v]) => [k, v * 2])),
       Object.hasOwn({ q: undefined }, 'q'), Object.hasOwn({}, 'toString'), Object.hasOwn([1], 0), t(() => Object.hasOwn(null, 'a')), t(() => Object.fromEntries([1]))]; }`,
  library_strings: `const main = () => { const t = (f) => { try { return f(); } catch (e) { return e.name; } };
     return ['a-b-c'.replaceAll('-', '+'), 'aaa'.replaceAll('aa', 'b'), 'abc'.replaceAll('', '.'), 'x.y'.replaceAll('.', '$&$&'), 'ab'.replaceAll('b', "[$\`|$'|$$]"),
       'a1b2'.replaceAll(/\d/g, (d) => d * 2), 'n-n'.replaceAll('n', (m, at) => at), t(() => 'a'.replaceAll(/a/, 'b')), 'hello'.at(-1), 'hi'.at(5),
       [...'a1b22c333'.matchAll(/\d+/g)].map((m) => m[0] + '@' + m.index), Array.from('k=v;x=y'.matchAll(/(\w)=(\w)/g), (m) => m[2]), t(() => 'a'.matchAll(/a/))]; }`,
  library_es2023: `const main = () => { const a = [3, 1, 2]; const t = (f) => { try { return f(); } catch (e) { return e.name; } };
     return [a.toSorted(), a.toSorted((x, y) => y - x), a.toReversed(), a.with(1, 9), a.with(-1, 0), a.toSpliced(1, 1, 'x', 'y'), a.toSpliced(), a,
       t(() => a.with(3, 0)), t(() => a.toSorted('no')), String.raw\`a\\n\${1 + 1}b\`, String.raw({ raw: ['x', 'y', 'z'] }, 1, 2, 3), Math.fround(5.5), Math.fround(5.05),
       Math.expm1(0), Math.expm1(1e-10), Math.expm1(1), Object.keys(Object.getOwnPropertyDescriptors({ p: 1, get q() { return 2; } })),
       (() => { const w = new WeakSet(); const k = {}; w.add(k); return [w.has(k), w.has({}), w.delete(k), w.has(k), t(() => w.add(1))]; })()]; }`,
  bigint_truthiness: `const main = () => { let n = 3n, steps = 0; while (n) { n--; steps++; } const r = []; if (0n) r.push('if0'); if (2n) r.push('if2'); for (let i = 2n; i; i--) r.push(i); return [!0n, !1n, !!0n, 0n ? 'y' : 'n', 0n || 'or', 1n && 'and', 0n && 'no', steps, r]; }`,
};

for (const [name, code] of Object.entries(CASES)) {
  // The sandbox gives main {} when a run has no js_params; Node gets the same.
  test(`${name}: same answer as Node`, async () => { await compare(name, code, {}); });
}

test('BigInt: randomized operands against Node (seeded)', async () => {
  const seed = Number(process.env.SIGIL_TEST_SEED ?? Date.now() % 1000000);
  let state = seed;
  const rnd = () => { state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648; };
  const big = () => {
    const bits = 1 + Math.floor(rnd() * 400);
    let v = 0n;
    for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(Math.floor(rnd() * 65536));
    return rnd() < 0.4 ? -v : v;
  };
  const pairs = [];
  for (let i = 0; i < 24; i++) {
    const a = big();
    let b = rnd() < 0.15 ? BigInt(Math.floor(rnd() * 20) - 10) : big();
    if (b === 0n) b = 7n;
    pairs.push([a.toString(rnd() < 0.5 ? 10 : 16), b.toString()]);
  }
  const code = `const PAIRS = ${JSON.stringify(pairs)};
const parse = (t) => t.match(/^-?[0-9]+$/) ? BigInt(t) : (t[0] === '-' ? -BigInt('0x' + t.slice(1)) : BigInt('0x' + t));
const main = () => PAIRS.map(([s, t]) => {
  const a = parse(s), b = BigInt(t), k = BigInt.asUintN(9, b), n = Number(BigInt.asIntN(40, b));
  let c = a; c += b; c *= 3n; c--; c **= 2n;
  return [a + b, a - b, a * b, a / b, a % b, a & b, a | b, a ^ b, ~a, -a, a << k, a >> k, c, a ** 2n,
    BigInt.asUintN(64, a), BigInt.asIntN(100, a), a.toString(36), (a * b).toString(2).length,
    a < b, a <= b, a > b, a >= b, a == b, a === b, a < n, a > n, a == n, Number(a) === Number(a), String(Number(b))].map(String).join(' ');
});`;
  await compare(`random BigInt (seed ${seed})`, code, {});
});

test('Object.groupBy, Map.groupBy and Promise.withResolvers (ES2024; newer than this Node) answer as specified', async () => {
  const j = await run(`const main = async () => {
    const g = Object.groupBy([1, 2, 3, 4, 5], (n, i) => (n % 2 ? 'odd' : 'even') + (i > 2 ? '!' : ''));
    const m = Map.groupBy(['a', 'bb', 'cc', 'd'], (s) => s.length);
    const { promise, resolve } = Promise.withResolvers();
    setTimeout(() => resolve('resolved'), 5);
    return { g, proto: Object.getPrototypeOf(g), m: [...m.entries()], r: await promise };
  };`);
  assert.equal(j.has_error, false, JSON.stringify(j));
  assert.deepEqual(j.response, { g: { odd: [1, 3], even: [2], 'even!': [4], 'odd!': [5] }, proto: null,
    m: [[1, ['a', 'd']], [2, ['bb', 'cc']]], r: 'resolved' });
});

test('a syntax error in modern code is reported with its line and column', async () => {
  const j = await run('const main = async (p) => {\n  return p?.a ?? ;\n};');
  assert.equal(j.has_error, true, JSON.stringify(j));
  assert.equal(j.error.code, 'syntax_error', JSON.stringify(j));
  assert.match(j.error.message, /line 2, column 18/);  // the ';' where an operand should be
});
