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
  // The service answers a string response that holds JSON parsed (issue 28, as the deployed
  // implementation does), so compare values: Node's text parsed the same way.
  let wantValue = want;
  try { wantValue = JSON.parse(want); } catch { /* a THROWN line stays text */ }
  assert.deepEqual(j.response, wantValue, `${name}: the sandbox answered differently from Node`);
}

// Babel 7's class helpers as ES5 bundles of libraries carry them (7.9-7.19): with Proxy present they
// construct every subclass instance through Reflect.construct(Super, arguments, NewTarget).
const BABEL_HELPERS = `
function _typeof(obj) { return typeof obj; }
function _classCallCheck(instance, Constructor) { if (!(instance instanceof Constructor)) throw new TypeError("Cannot call a class as a function"); }
function _inherits(subClass, superClass) { if (typeof superClass !== "function" && superClass !== null) throw new TypeError("Super expression must either be null or a function"); subClass.prototype = Object.create(superClass && superClass.prototype, { constructor: { value: subClass, writable: true, configurable: true } }); if (superClass) _setPrototypeOf(subClass, superClass); }
function _setPrototypeOf(o, p) { _setPrototypeOf = Object.setPrototypeOf || function _setPrototypeOf(o, p) { o.__proto__ = p; return o; }; return _setPrototypeOf(o, p); }
function _createSuper(Derived) { var hasNativeReflectConstruct = _isNativeReflectConstruct(); return function _createSuperInternal() { var Super = _getPrototypeOf(Derived), result; if (hasNativeReflectConstruct) { var NewTarget = _getPrototypeOf(this).constructor; result = Reflect.construct(Super, arguments, NewTarget); } else { result = Super.apply(this, arguments); } return _possibleConstructorReturn(this, result); }; }
function _possibleConstructorReturn(self, call) { if (call && (_typeof(call) === "object" || typeof call === "function")) { return call; } return _assertThisInitialized(self); }
function _assertThisInitialized(self) { if (self === void 0) { throw new ReferenceError("this hasn't been initialised - super() hasn't been called"); } return self; }
function _wrapNativeSuper(Class) { var _cache = typeof Map === "function" ? new Map() : undefined; _wrapNativeSuper = function _wrapNativeSuper(Class) { if (Class === null || !_isNativeFunction(Class)) return Class; if (typeof Class !== "function") { throw new TypeError("Super expression must either be null or a function"); } if (typeof _cache !== "undefined") { if (_cache.has(Class)) return _cache.get(Class); _cache.set(Class, Wrapper); } function Wrapper() { return _construct(Class, arguments, _getPrototypeOf(this).constructor); } Wrapper.prototype = Object.create(Class.prototype, { constructor: { value: Wrapper, enumerable: false, writable: true, configurable: true } }); return _setPrototypeOf(Wrapper, Class); }; return _wrapNativeSuper(Class); }
function _construct(Parent, args, Class) { if (_isNativeReflectConstruct()) { _construct = Reflect.construct; } else { _construct = function _construct(Parent, args, Class) { var a = [null]; a.push.apply(a, args); var Constructor = Function.bind.apply(Parent, a); var instance = new Constructor(); if (Class) _setPrototypeOf(instance, Class.prototype); return instance; }; } return _construct.apply(null, arguments); }
function _isNativeReflectConstruct() { if (typeof Reflect === "undefined" || !Reflect.construct) return false; if (Reflect.construct.sham) return false; if (typeof Proxy === "function") return true; try { Date.prototype.toString.call(Reflect.construct(Date, [], function () {})); return true; } catch (e) { return false; } }
function _isNativeFunction(fn) { return Function.toString.call(fn).indexOf("[native code]") !== -1; }
function _getPrototypeOf(o) { _getPrototypeOf = Object.setPrototypeOf ? Object.getPrototypeOf : function _getPrototypeOf(o) { return o.__proto__ || Object.getPrototypeOf(o); }; return _getPrototypeOf(o); }
`;

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
  new_function_modern_body: `const main = () => { const F = Function; const f = new F('a', 'b', 'return [a, b].map((x) => x * 2).reduce((s, v) => s + v, 0)');
     const g = new Function('o', 'const { x, ...rest } = o; return \`\${x}:\${Object.keys(rest).join()}\`'); const h = Function('return 1 + 1');
     let err; try { new Function('return ('); } catch (e) { err = e.name; }
     return [f(1, 2), g({ x: 1, y: 2, z: 3 }), h(), err, f instanceof Function, (function () {}).constructor === Function, typeof new Function(''), new Function('a = 2', 'return a')()]; }`,
  loop_closures_continue: `const main = () => { let g = 0; const fns = [], out = [];
     for (let a = 0; a < 6;) { if (++g > 100) return 'stuck at a=' + a; let c = 2; fns.push(() => c + a); if (a < 3) { a += 1; continue; } a += c; }
     for (let i = 0, j = 10; i < 5; i++) { fns.push(() => i * j); if (i % 2) { j--; continue; } j += 2; }
     for (let i = 0; i < 3; i++) { for (let k = 0; k < 4;) { fns.push(() => k); if (k === 1) { k += 2; continue } k++ } }
     let w = 0; while (w < 4) { const v = w++; fns.push(() => v); if (v === 2) continue; }
     return [g, fns.map((f) => f())]; }`,
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
  dataview_bigint_published: `const main = () => { const v = new DataView(new ArrayBuffer(8)); v.setBigUint64(0, 258n, false); return new Uint8Array(v.buffer).join(","); }`,
  dataview_bigint: `const main = () => { const t = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
     const v = new DataView(new ArrayBuffer(16)), bytes = () => Array.from(new Uint8Array(v.buffer)).join(','), out = [];
     v.setBigUint64(0, 258n, false); out.push(bytes()); v.setBigUint64(8, 258n, true); out.push(bytes());
     out.push(v.getBigUint64(0), v.getBigUint64(8, true), v.getBigInt64(0, true), v.getBigUint64());
     v.setBigInt64(0, -1n); out.push(bytes(), v.getBigInt64(0), v.getBigUint64(0));
     v.setBigUint64(0, 2n ** 64n + 5n); out.push(v.getBigUint64(0)); v.setBigInt64(8, 2n ** 63n, true); out.push(v.getBigInt64(8, true), v.getBigUint64(8, true));
     v.setBigUint64(0, -2n); out.push(v.getBigUint64(0)); v.setBigUint64(0, '300'); v.setBigUint64(8, true); out.push(v.getBigUint64(0), v.getBigUint64(8));
     v.setBigUint64(1.7, 7n); v.setBigInt64('4', -3n, 1); out.push(bytes());
     out.push(t(() => v.setBigUint64(0, 1)), t(() => v.setBigInt64(0, 1.5)), t(() => v.setBigUint64(0, 'x')), t(() => v.setBigUint64(0)), t(() => v.setBigUint64(9, 1n)),
       t(() => v.getBigInt64(-1)), t(() => v.getBigUint64(9)), t(() => new DataView(new ArrayBuffer(4)).setBigUint64(0, 1)), t(() => new DataView(new ArrayBuffer(4)).getBigInt64(0)));
     const sub = new DataView(new ArrayBuffer(12), 2, 8); sub.setBigUint64(0, 0x0102030405060708n); out.push(Array.from(new Uint8Array(sub.buffer)).join(','), sub.getBigUint64(0, true));
     out.push(typeof v.getBigUint64(0), DataView.prototype.getBigInt64.length, DataView.prototype.setBigUint64.length);
     return out; }`,
  regex_unicode_published: `const main = () => [new RegExp("^\\\\p{Extended_Pictographic}$", "u").test("\\u{1F600}"), new RegExp("^[a-z]+$", "u").test("abc"), /\\u{1F600}/u.test("\\u{1F600}")];`,
  regex_unicode_literals: `const main = () => { const smile = '\\u{1F600}';
     return [/^\\p{Extended_Pictographic}$/u.test(smile), /\\u{1F600}/u.test(smile), /^.$/u.test(smile), /^.$/.test(smile), /^[^a]$/u.test(smile), /^\\S$/u.test(smile),
       /^\\p{Lu}+$/u.test('\\u00c0B'), /^\\p{Script=Greek}+$/u.test('\\u03b1\\u03b2'), /\\P{L}/u.test('abc'), 'a1b\\u0663'.replace(/\\p{Nd}/gu, '#'), /\\u{1F600}+/u.exec(smile + smile)[0].length,
       /^[\\p{L}--[a-z]]+$/v.test('ABC'), /^[\\p{L}--[a-z]]+$/v.test('abc'), /[\\p{L}&&\\p{ASCII}]/v.test('\\u00e9'), /^\\p{RGI_Emoji}$/v.test('\\u{1F44D}\\u{1F3FD}'), /^[\\q{abc|d}]+$/v.test('abcd'),
       /k/iu.test('\\u212A'), /[a-z]/iu.test('\\u017F'), /^\\p{L}+$/u.source, /^\\p{L}+$/gu.flags, /^\\p{L}$/u.unicode, /[\\p{L}]/v.unicodeSets, /\\p{L}.\\p{L}/su.test('a\\nb'), String(/\\p{L}/giu)]; }`,
  regex_unicode_runtime: `const main = () => { const t = (f) => { try { return f(); } catch (e) { return e.name; } }; const smile = '\\u{1F600}';
     const re = new RegExp('^\\\\p{Extended_Pictographic}$', 'u');
     return [re.test(smile), new RegExp('^[a-z]+$', 'u').test('abc'), new RegExp('^[a-z]+$', 'u').test('ab1'), new RegExp('\\\\u{1F600}', 'u').test(smile), new RegExp(smile + '{2}', 'u').test(smile + smile),
       new RegExp('^.$', 'u').test(smile), new RegExp('^.$', 'su').test('\\n'), new RegExp('a.b', 's').test('a\\nb'), new RegExp('a[.]b', 's').test('a\\nb'),
       new RegExp('[\\\\p{L}--[a-z]]', 'v').test('a'), new RegExp('[\\\\p{L}--[a-z]]', 'v').test('Q'),
       re.source, re.flags, re.unicode, re.unicodeSets, re.global, String(re), re instanceof RegExp, re.constructor === RegExp, new RegExp(re).flags, new RegExp(re, 'g').flags, new RegExp(re, 'gu').test(smile),
       RegExp('x', 'u').unicode, /x/.unicode, /x/.sticky, /x/.dotAll, /x/.hasIndices, new RegExp('x', 'gimsu').flags, new RegExp('a/b', 'u').source, new RegExp('', 'u').source, new RegExp('x', 'u').lastIndex,
       t(() => new RegExp('a', 'uv')), t(() => new RegExp('a', 'uu')), t(() => new RegExp('[', 'u')), t(() => new RegExp('\\\\p{Nope}', 'u')), t(() => new RegExp('a', 'q')),
       ('x' + smile + 'y' + smile).split(new RegExp('\\\\p{Extended_Pictographic}', 'u')), 'Ab1C'.replace(new RegExp('\\\\p{Lu}', 'gu'), '_'), '\\u03b1\\u03b2 abc'.match(new RegExp('\\\\p{Script=Greek}+', 'u'))[0],
       new RegExp('^\\\\p{L}+$', 'iu').test('\\u00c0\\u00c9'), new RegExp('\\\\u212A', 'iu').test('k'), new RegExp('[^x]', 'u').exec(smile)[0].length,
       Array.from(('a' + smile + 'b').matchAll(new RegExp('\\\\p{Emoji_Presentation}', 'gu')), (m) => m.index), RegExp.length, RegExp.name]; }`,
  bigint_truthiness: `const main = () => { let n = 3n, steps = 0; while (n) { n--; steps++; } const r = []; if (0n) r.push('if0'); if (2n) r.push('if2'); for (let i = 2n; i; i--) r.push(i); return [!0n, !1n, !!0n, 0n ? 'y' : 'n', 0n || 'or', 1n && 'and', 0n && 'no', steps, r]; }`,
  // Subclasses of Error (lowered to Error.call(this, m) on frozen built-ins) and assignments that
  // shadow a frozen prototype's constructor or toString, sloppy and strict.
  error_subclass_sloppy: `class E extends Error { constructor(m) { super(m); this.name = "E"; } }
     class T extends TypeError { constructor(m) { super(m); this.name = "T"; } } class R extends RangeError {}
     class F extends E { constructor(m) { super(m + "!"); this.level = 2; } }
     const info = (e, C) => [e.name, e.message, e instanceof C, e instanceof Error, String(e), typeof e.stack, e.stack.split('\\n')[0], e.constructor === C, Object.keys(e)];
     const grab = (f, C) => { try { f(); } catch (e) { return info(e, C); } };
     const main = () => [grab(() => { throw new E("boom"); }, E), grab(() => { throw new T("t"); }, T), grab(() => { throw new R("r"); }, R),
       grab(() => { throw new F("f"); }, F), new F("x") instanceof E, new E().message, Object.prototype.hasOwnProperty.call(new E(), 'message')];`,
  error_subclass_strict: `'use strict';
     class E extends Error { constructor(m, o) { super(m, o); this.name = "E"; } }
     class T extends TypeError { constructor(m) { super(m); this.name = "T"; } } class R extends RangeError {}
     class F extends E { constructor(m) { super(m + "!"); this.level = 2; } }
     const info = (e, C) => [e.name, e.message, e instanceof C, e instanceof Error, String(e), typeof e.stack, e.stack.split('\\n')[0], e.constructor === C, Object.keys(e)];
     const grab = (f, C) => { try { f(); } catch (e) { return info(e, C); } };
     const main = () => [grab(() => { throw new E("boom"); }, E), grab(() => { throw new T("t"); }, T), grab(() => { throw new R("r"); }, R),
       grab(() => { throw new F("f"); }, F), new F("x") instanceof E, new E().message, Object.prototype.hasOwnProperty.call(new E(), 'message')];`,
  error_subclass_cause_fields: `'use strict';
     class E extends Error { code = 'E_X'; constructor(m, o) { super(m, o); this.name = 'E'; } }
     class G extends Error { kind = 'g'; static made = 0; }
     class H extends E { extra = this.code + '!'; }
     const main = () => { const root = new Error('root'); const e = new E('wrapped', { cause: root }), h = new H('h', { cause: undefined }), n = new E('none', {});
       const d = Object.getOwnPropertyDescriptor(e, 'cause'), m = Object.getOwnPropertyDescriptor(e, 'message');
       return [e.cause === root, e.cause.message, [d.enumerable, d.writable, d.configurable], [m.enumerable, m.writable], 'cause' in h, h.cause, 'cause' in n,
         e.code, h.extra, h.name, String(h), new G('g').kind, new G('g').name, String(new G('msg')), Object.keys(h)]; };`,
  error_subclass_methods: `'use strict';
     class HttpError extends Error { constructor(status, m) { super(m); this.name = 'HttpError'; this.status = status; }
       toString() { return this.name + '(' + this.status + '): ' + this.message; } get retry() { return this.status >= 500; } toJSON() { return { status: this.status, message: this.message }; } }
     class NotFound extends HttpError { constructor(what) { super(404, what + ' not found'); this.name = 'NotFound'; } }
     const main = () => { const e = new NotFound('page'); let caught; try { throw e; } catch (x) { caught = x; }
       return [String(caught), caught.retry, JSON.stringify(caught), caught instanceof HttpError, caught.constructor.name, Object.getPrototypeOf(NotFound) === HttpError,
         \`\${caught}\`, caught.message, new HttpError(503, 'down').retry]; };`,
  override_builtins_strict: `'use strict';
     function C() {} function D() {}
     const main = () => { const o = {}; o.toString = function () { return 'mine'; }; const p = {}; p.constructor = C;
       const q = Object.assign({}, { valueOf() { return 41; } }); const r = {}; r.hasOwnProperty = () => 'shadowed'; const s = {}; s.toLocaleString = () => 'loc';
       D.prototype = Object.create(Object.prototype); D.prototype.constructor = D; D.prototype.toString = function () { return 'D!'; };
       const arr = [1, 2]; arr.toString = () => 'arr'; const fn = function () {}; fn.toString = () => 'fn';
       return [String(o), \`\${o}\`, p.constructor === C, q + 1, r.hasOwnProperty('x'), s.toLocaleString(), String(new D()), new D().constructor === D,
         String(arr), '' + fn, Object.keys(o), ({}).toString(), ({}).constructor === Object, [3].toString(), Object.prototype.hasOwnProperty.call(o, 'toString')]; };`,
  override_builtins_sloppy: `function C() {}
     const main = () => { const o = {}; o.toString = function () { return 'mine'; }; o.constructor = C; const e = new Error('x'); e.name = 'Custom'; e.toString = () => 'own';
       const t = new TypeError('t'); t.message = 'changed';
       return [String(o), o.constructor === C, e.name, String(e), t.message, String(t), Object.keys(o), Object.keys(e), new Error('y').name]; };`,
  // Proxy (bundled libraries use it at load) with the traps Duktape has, and Reflect.construct with
  // a newTarget, which Babel's class helpers take once Proxy exists.
  proxy_reflect_construct: `const main = () => { function Base(x) { this.x = x; this.kind = this.label(); } Base.prototype.label = function () { return 'base'; };
     function Sub() {} Sub.prototype = Object.create(Base.prototype); Sub.prototype.label = function () { return 'sub'; };
     const o = Reflect.construct(Base, [4], Sub), e = Reflect.construct(Error, ['m'], Sub), d = Reflect.construct(Date, [0], Sub), p = Reflect.construct(Base, [5]);
     return [o instanceof Sub, o.x, o.kind, e instanceof Sub, e.message, Object.prototype.toString.call(e), d instanceof Sub, Date.prototype.getTime.call(d), p.kind,
       Boolean.prototype.valueOf.call(Reflect.construct(Boolean, [], function () {}))]; }`,
  babel_class_helpers: `'use strict';
     ${BABEL_HELPERS}
     var MyError = function (_Error) { _inherits(MyError, _Error); var _super = _createSuper(MyError);
       function MyError(m) { var _this; _classCallCheck(this, MyError); _this = _super.call(this, m); _this.name = 'MyError'; return _this; }
       MyError.prototype.describe = function () { return 'described ' + this.message; }; return MyError; }(_wrapNativeSuper(Error));
     var Base = function () { function Base(x) { _classCallCheck(this, Base); this.x = x; this.kind = this.label(); } Base.prototype.label = function () { return 'base'; }; return Base; }();
     var Derived = function (_Base) { _inherits(Derived, _Base); var _super = _createSuper(Derived);
       function Derived(x) { var _this; _classCallCheck(this, Derived); _this = _super.call(this, x * 2); _this.y = 1; return _this; }
       Derived.prototype.label = function () { return 'derived'; }; return Derived; }(Base);
     function main() { var e; try { throw new MyError('boom'); } catch (x) { e = x; } var d = new Derived(21);
       return [e.name, e.message, e instanceof MyError, e instanceof Error, String(e), e.describe(), Object.prototype.toString.call(e), typeof e.stack,
         d.x, d.y, d.kind, d instanceof Derived, d instanceof Base]; }`,
  proxy_traps: `const main = () => { const log = []; const target = { a: 1, b: 2 };
     const p = new Proxy(target, { get: (t, k) => (log.push('get ' + String(k)), k in t ? t[k] : 'got ' + String(k)),
       set: (t, k, v) => { log.push('set ' + k); t[k] = v * 2; return true; }, has: (t, k) => k === 'virtual' || k in t,
       deleteProperty: (t, k) => { log.push('delete ' + k); delete t[k]; return true; } });
     p.c = 5; delete p.a;
     const f = new Proxy(function (x) { return x + 1; }, { apply: (t, self, args) => 'applied ' + t(args[0]), construct: (t, args) => ({ made: args[0] }) });
     const plain = new Proxy({ x: 1 }, {});
     return [new Proxy({}, { get: (t, k) => "got " + String(k) }).hello, p.a, p.b, p.zzz, target.c, 'virtual' in p, 'a' in p, 'b' in p, f(1), new f(2), typeof f, typeof p,
       plain.x, (plain.y = 2, plain.y), Object.keys(plain), JSON.stringify(plain), Array.isArray(new Proxy([], {})), log]; }`,
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
