// BigInt arithmetic in the real sandbox (sigil-worker --run-local: the sigil-sandbox zygote, the
// lowering, JSBI and the OpenSSL BN natives of workers/sandbox/natives/bigint_arith.h) against Node's
// native BigInt on the same expressions: random operands of many sizes and signs, the edge cases
// (0, -0n, ±1, powers of two and their neighbours, 2^255-19, secp256k1's p and n, operands at
// and past the natives' 64 Ki-bit limit), and the errors (division by zero, negative exponents,
// mixing with numbers). Every answer must be the same text. Seeded: replay a failure with
// SIGIL_BIGINT_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

function workerPath() {
  const build = process.env.SIGIL_BUILD_DIR;
  if (!build) throw new Error('SIGIL_BUILD_DIR is not set (run through ctest, or export it)');
  const path = join(build, 'bin', 'sigil-worker');
  if (!existsSync(path)) throw new Error(`${path} is missing: build sigil-worker and sigil-sandbox first`);
  return path;
}

// mulberry32: small, seeded, good enough to spread operands.
function Prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seed = Number(process.env.SIGIL_BIGINT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const random = Prng(seed);
function RandomBits(bits) {
  if (bits === 0) return 0n;
  let v = 0n;
  for (let i = 0; i < bits; i += 30) v = (v << 30n) | BigInt(Math.floor(random() * 2 ** 30));
  v &= (1n << BigInt(bits)) - 1n;
  return v | (1n << BigInt(bits - 1));  // exactly `bits` bits
}

const P25519 = 2n ** 255n - 19n;
const SECP_P = 2n ** 256n - 2n ** 32n - 977n;
const SECP_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

// Operands up to 4 Ki bits, every pair of which goes through + - * / %.
function Operands() {
  const out = [0n, 1n, 2n, 3n, 2n ** 29n, 2n ** 30n - 1n, 2n ** 30n, 2n ** 31n, 2n ** 53n + 1n, 2n ** 60n - 1n,
    2n ** 64n, 2n ** 128n - 1n, 2n ** 255n, 2n ** 256n, P25519, SECP_P, SECP_N, SECP_P - 1n, SECP_N * SECP_N];
  for (const bits of [1, 2, 7, 29, 30, 31, 32, 33, 59, 60, 61, 63, 64, 65, 89, 90, 91, 127, 128, 129, 200, 255, 256, 257,
    384, 512, 521, 1000, 2048, 4096]) {
    out.push(RandomBits(bits));
  }
  return out.flatMap((v) => (v === 0n ? [v] : [v, -v]));
}

// Operands at the natives' limit (65,536 bits, the largest they take) and past it (JSBI takes
// them back, slowly: so those meet only small partners).
function AtLimit() { return [2n ** 65535n, RandomBits(65536), -RandomBits(65536)]; }
function PastLimit() { return [-RandomBits(65537)]; }

// The expressions, evaluated by the same text in both engines: `values` are the operands as
// signed hex text (parsed once), each case is [op, i, j], operands values[i] and values[j] (for
// 'mixn', a * j with j a number); the answer is the result's hex text or the error's name and
// message.
const COMPUTE = `
// Long answers as their length, head, tail and residues mod two Mersenne primes: a loop over
// their characters would cost 100 ms each in the sandbox (the action mentions BigInt, so its
// every operator goes through the runtime), and the whole text would pass a run's answer cap.
function digest(r) {
  const text = r.toString(16);
  if (text.length <= 100) return text;
  return text.length + ':' + text.slice(0, 40) + ':' + text.slice(-40) + ':' + (r % (2n ** 127n - 1n)).toString(16) +
    ':' + (r % (2n ** 61n - 1n)).toString(16);
}
function compute(input) {
  const M = 2n ** 255n - 19n, NEG = -(2n ** 61n - 1n), ZERO = 0n;
  const values = input.values.map((t) => (t[0] === '-' ? -BigInt('0x' + t.slice(1)) : BigInt('0x' + t)));
  const out = [];
  for (const [op, i, j] of input.cases) {
    try {
      const a = values[i];
      const b = op === 'mixn' || op === 'parse' ? j : values[j];
      let r;
      switch (op) {
        case '+': r = a + b; break;
        case '-': r = a - b; break;
        case '*': r = a * b; break;
        case '/': r = a / b; break;
        case '%': r = a % b; break;
        case '**': r = a ** b; break;
        case '*=': r = a; r *= b; break;
        case '/=': r = a; r /= b; break;
        case '%=': r = a; r %= b; break;
        case '**=': r = a; r **= b; break;
        case 'mixn': r = a * b; break;
        case '<<': r = a << b; break;
        case '>>': r = a >> b; break;
        case '&': r = a & b; break;
        case '|': r = a | b; break;
        case '^': r = a ^ b; break;
        case '>>=': r = a; r >>= b; break;
        case 'cmp': r = [a < b, a <= b, a > b, a >= b, a == b, a != b, a === b, a !== b, !a, a ? 1 : 0, a && b, a || b].join(); break;
        case '&=': r = a; r &= b; break;
        case 'mulmod': r = a * b % M; break;
        case 'mulmodneg': r = a * b % NEG; break;
        case 'mulmod0': r = a * b % ZERO; break;
        case 'mulmodlit': r = a * b % 1000000007n; break;
        case 'mulmodmix': r = a * b % 7; break;
        case 'dec': r = 'decimal:' + String(a) + ' ' + a.toString() + ' ' + \`\${a}\`; break;
        case 'parse': r = BigInt(b); break;
        default: throw new Error('unknown op ' + op);
      }
      out.push(typeof r === 'bigint' ? digest(r) : typeof r + ':' + String(r));
    } catch (e) {
      // V8's words for a negative exponent vary by version (Node 20: "undefined must be
      // positive", later "Exponent must be non-negative"); JSBI's are "Exponent must be positive".
      out.push(e.name + ': ' + (/must be (positive|non-negative)$/.test(e.message) ? 'negative exponent' : e.message));
    }
  }
  return out;
}
`;

// The operand table and the cases over it.
function Cases() {
  const values = [];
  const index = new Map();
  const at = (v) => {
    const key = v.toString(16);
    if (!index.has(key)) {
      index.set(key, values.length);
      values.push(key);
    }
    return index.get(key);
  };
  const cases = [];
  const add = (op, a, b) => cases.push([op, at(a), at(b)]);
  const ops = Operands();
  for (const a of ops) {
    for (const b of ops) {
      for (const op of ['+', '-', '*', '/', '%']) add(op, a, b);
    }
  }
  const small = [0n, 1n, -1n, 3n, P25519, -SECP_N];
  const partners = [...small, RandomBits(4096), RandomBits(65000), -RandomBits(65536)];
  for (const [wide, others] of [[AtLimit(), partners], [PastLimit(), [0n, 1n, -1n, 3n]]]) {
    for (const a of wide) {
      for (const b of others) {
        for (const op of ['+', '-', '*', '/', '%']) {
          add(op, a, b);
          add(op, b, a);
        }
      }
    }
  }
  // Powers: results on both sides of the native limit, and JSBI's own cases (0, ±1, 2^k).
  const bases = [0n, 1n, -1n, 2n, -2n, 3n, -3n, 2n ** 30n, 2n ** 64n + 1n, P25519, -SECP_P, RandomBits(1000), RandomBits(4096)];
  for (const a of bases) {
    for (const e of [0n, 1n, 2n, 3n, 5n, 16n, 17n, 64n, 255n, 256n, 1000n]) {
      const bits = BigInt(a < 0n ? (-a).toString(2).length : a.toString(2).length);
      if (bits * e > 65536n && bits > 2n) continue;  // JSBI's own loop would take minutes in the interpreter
      add('**', a, e);
    }
  }
  // Around the limit: 3n ** 41349n has 65,537 bits (JSBI's), 3n ** 41348n 65,535 (native).
  for (const [a, e] of [[2n, 65535n], [2n, 65536n], [3n, 41348n], [-3n, 41347n], [-1n, 2n ** 40n], [-1n, 2n ** 40n + 1n],
    [0n, 2n ** 40n], [1n, 2n ** 64n], [-2n, 65537n], [2n ** 32n - 1n, 2048n], [SECP_N, 256n]]) {
    add('**', a, e);
  }
  // Shifts (the natives take 0 <= k < 2^17, either sign of a; >> of a negative is a floor) and
  // & | ^ (the natives take non-negative operands; negative ones are JSBI's two's complement).
  for (const a of ops) {
    for (const k of [0n, 1n, 2n, 7n, 29n, 30n, 31n, 60n, 64n, 255n, 256n, 1000n, 65535n, 131071n, 131072n, -1n, -30n]) {
      const bits = BigInt(a < 0n ? (-a).toString(2).length : a.toString(2).length);
      if (k > 0n && bits + k > 70000n && a !== 0n) continue;  // JSBI's own RangeError path would build it slowly
      add('<<', a, k);
      add('>>', a, k);
    }
    add('>>=', a, 3n);
  }
  for (const a of ops.slice(0, 70)) {
    for (const b of ops.slice(10, 70)) {
      for (const op of ['&', '|', '^']) add(op, a, b);
    }
  }
  for (const [a, b] of [[SECP_P, 2n ** 64n - 1n], [-SECP_N, 255n]]) add('&=', a, b);
  // Comparisons and truth (the runtime orders two BigInts by sign, length and digits itself).
  for (const a of ops) {
    for (const b of [0n, 1n, -1n, a, -a, a + 1n, a - 1n, 2n ** 30n, -(2n ** 30n), SECP_P, -SECP_P]) add('cmp', a, b);
  }
  // a * b % m, which the lowering fuses into one call when m is a name or a literal.
  for (const a of ops.slice(0, 60)) {
    for (const b of ops.slice(20)) {
      for (const op of ['mulmod', 'mulmodneg', 'mulmodlit']) add(op, a, b);
    }
  }
  for (const op of ['mulmod0', 'mulmodmix']) add(op, SECP_P, SECP_N);
  // Compound assignment goes through the same runtime entries.
  for (const [a, b] of [[SECP_P - 5n, SECP_N], [-P25519, 12345n], [RandomBits(300), -RandomBits(100)]]) {
    for (const op of ['*=', '/=', '%=']) add(op, a, b);
    add('**=', a, 3n);
  }
  // Text both ways: decimal text of every operand; strings to BigInt, with and without the
  // natives' forms (0x hex, plain decimal), and the bad ones (SyntaxError).
  for (let k = 0; k < values.length; k++) cases.push(['dec', k, 0]);
  for (const text of ['0x1F', '0XabcDEF', '0x', '0x0', '0x000001', '-0x1', ' 0x10 ', '0b101', '0o17', '123', '-123', '+123',
    '000123', '', '   ', ' 42\n', '1e3', '12a', '0x12g', '9'.repeat(400), '-' + '9'.repeat(400), '0x' + 'f'.repeat(16384),
    '0x' + 'f'.repeat(16385), '0x' + 'e'.repeat(65536), '1'.repeat(19729), '1'.repeat(78000)]) {
    cases.push(['parse', 0, text]);
  }
  // Errors: V8's types and messages.
  for (const a of [0n, 1n, -1n, SECP_P, -RandomBits(65536), RandomBits(70000)]) {
    for (const [op, b] of [['/', 0n], ['%', 0n], ['**', -1n], ['**', -(2n ** 70n)], ['/=', 0n]]) add(op, a, b);
    cases.push(['mixn', at(a), 1], ['mixn', at(a), 0]);
  }
  return { values, cases };
}

// Runs `input` in the sandbox in runs of up to 4,000 cases (a run's answer is capped).
async function InSandbox(input, dir) {
  const config = join(dir, 'sigil.conf');
  writeFileSync(config, '[actions]\ntimeout_ms = 300000\nmemory_bytes = 536870912\nmax_response_bytes = 1048576\n');
  const out = [];
  for (let start = 0; start < input.cases.length; start += 4000) {
    const chunk = { values: input.values, cases: input.cases.slice(start, start + 4000) };
    const file = join(dir, `action_${start}.js`);
    // One string literal, parsed at run time: an array literal of thousands of elements would
    // cost the lowering seconds.
    writeFileSync(file, `${COMPUTE}\nconst INPUT = JSON.parse(${JSON.stringify(JSON.stringify(chunk))});\n` +
      'async function main() { return compute(INPUT); }\n');
    const { stdout } = await run(workerPath(), ['--run-local', file, '--config', config],
      { maxBuffer: 256 * 1024 * 1024, timeout: 600000 });
    const answer = JSON.parse(stdout);
    if (process.env.SIGIL_BIGINT_VERBOSE) console.log(`cases ${start}..: ${answer.time_ms} ms`);
    assert.equal(answer.has_error, false, `the run failed: ${JSON.stringify(answer.error ?? answer.logs)}`);
    const response = typeof answer.response === 'string' ? JSON.parse(answer.response) : answer.response;
    assert.ok(Array.isArray(response), `the run answered ${stdout.slice(0, 300)}`);
    out.push(...response);
  }
  return out;
}

test(`BigInt + - * / % ** << >> & | ^ and comparisons in the sandbox are Node's, seed ${seed}`, { timeout: 1200000 }, async () => {
  const input = Cases();
  const cases = input.cases;
  const inNode = new Function(`${COMPUTE}\nreturn compute;`)()(input);
  const dir = mkdtempSync(join(tmpdir(), 'sigil-bigint-'));
  try {
    const inSandbox = await InSandbox(input, dir);
    assert.equal(inSandbox.length, cases.length);
    const wrong = [];
    for (let i = 0; i < cases.length && wrong.length < 10; i++) {
      if (inSandbox[i] !== inNode[i]) {
        wrong.push(`${JSON.stringify(cases[i])} (${cases[i].slice(1, 3).map((k) => String(input.values[k]).slice(0, 40))}): sandbox ${inSandbox[i].slice(0, 120)}, node ${inNode[i].slice(0, 120)}`);
      }
    }
    assert.deepEqual(wrong, [], `seed ${seed}: ${wrong.length} answers differ:\n${wrong.join('\n')}`);
    // The errors are among them, with V8's words.
    assert.ok(inNode.includes('RangeError: Division by zero'));
    assert.ok(inNode.includes('TypeError: Cannot mix BigInt and other types, use explicit conversions'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
