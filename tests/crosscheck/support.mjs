// Shared fixture for the ethers cross-checks: one sigil_vectors process per test file, and a
// seeded PRNG so a failing run can be replayed with SIGIL_CROSSCHECK_SEED=<seed>.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/// Path of the sigil_vectors tool in the build tree named by SIGIL_BUILD_DIR.
export function vectorsPath() {
  const build = process.env.SIGIL_BUILD_DIR;
  if (!build) throw new Error('SIGIL_BUILD_DIR is not set (run through ctest, or export it)');
  const path = join(build, 'tests', 'sigil_vectors');
  if (!existsSync(path)) throw new Error(`${path} is missing: build the sigil_vectors target first`);
  return path;
}

/// Starts sigil_vectors. `call(request)` resolves with the parsed answer line (requests are
/// answered in order, so many may be in flight); `callMany(requests)` sends a batch at once.
/// Call `close()` when done: it ends stdin and resolves with the exit code.
export function startVectors() {
  const child = spawn(vectorsPath(), [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const pending = [];
  let failure = null;
  const fail = (err) => {
    failure = err;
    while (pending.length) pending.shift().reject(err);
  };
  createInterface({ input: child.stdout }).on('line', (line) => {
    const waiter = pending.shift();
    if (!waiter) return fail(new Error(`unexpected output line: ${line}`));
    try {
      waiter.resolve(JSON.parse(line));
    } catch (err) {
      waiter.reject(new Error(`answer is not JSON: ${line}`));
    }
  });
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      if (pending.length) fail(new Error(`sigil_vectors exited (code ${code}, signal ${signal}) with requests pending`));
      resolve(signal ? `signal ${signal}` : code);
    });
  });
  child.on('error', fail);

  const call = (request) => new Promise((resolve, reject) => {
    if (failure) return reject(failure);
    pending.push({ resolve, reject });
    child.stdin.write(JSON.stringify(request) + '\n');
  });
  // Writes one raw line, a string or a Buffer (for malformed-input checks, e.g. invalid UTF-8).
  const callRaw = (line) => new Promise((resolve, reject) => {
    if (failure) return reject(failure);
    pending.push({ resolve, reject });
    child.stdin.write(Buffer.concat([Buffer.from(line), Buffer.from('\n')]));
  });
  return {
    call,
    callRaw,
    callMany: (requests) => Promise.all(requests.map(call)),
    close: () => {
      child.stdin.end();
      return exited;
    },
  };
}

/// Asserts that an answer carries no error and returns it (the message names the request).
export function ok(answer, what) {
  if (answer.error !== undefined) throw new Error(`sigil_vectors refused ${what}: ${answer.error}`);
  return answer;
}

/// sfc32 seeded from one 32-bit seed; deterministic across platforms.
export function makeRng(label) {
  const fromEnv = process.env.SIGIL_CROSSCHECK_SEED;
  const seed = fromEnv !== undefined ? Number(fromEnv) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  console.log(`${label}: seed ${seed} (replay with SIGIL_CROSSCHECK_SEED=${seed})`);
  let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = seed;
  const next = () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 15; ++i) next();
  const rng = {
    seed,
    u32: next,
    /// Integer in [0, n).
    int: (n) => Math.floor((next() / 2 ** 32) * n),
    bool: () => (next() & 1) === 1,
    pick: (list) => list[rng.int(list.length)],
    bytes: (n) => {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; ++i) out[i] = next() & 0xff;
      return out;
    },
    hex: (n) => '0x' + Buffer.from(rng.bytes(n)).toString('hex'),
    /// Uniform-ish bigint below 2^bits, biased towards edge sizes (0, small, full width).
    bigint: (bits) => {
      const mask = (1n << BigInt(bits)) - 1n;
      const shape = rng.int(6);
      if (shape === 0) return 0n;
      if (shape === 1) return BigInt(rng.int(256)) & mask;
      if (shape === 2) return mask;
      const width = shape === 3 ? 1 + rng.int(bits) : bits;
      let v = 0n;
      for (let i = 0; i < width; i += 32) v = (v << 32n) | BigInt(next());
      return v & ((1n << BigInt(width)) - 1n) & mask;
    },
    /// A valid secp256k1 private key (0x + 64 hex); rejection-sampled below the group order.
    privateKey: () => {
      const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
      for (;;) {
        const k = BigInt(rng.hex(32));
        if (k !== 0n && k < n) return '0x' + k.toString(16).padStart(64, '0');
      }
    },
    /// A string mixing ASCII, 2-, 3- and 4-byte UTF-8 characters (never lone surrogates).
    string: (maxChars) => {
      const pool = ['a', 'Z', '0', ' ', '"', '\\', '\n', 'é', 'ß', '€', '中', '😀', '\u0000', '\u007f'];
      let s = '';
      const n = rng.int(maxChars + 1);
      for (let i = 0; i < n; ++i) s += rng.bool() ? String.fromCharCode(0x20 + rng.int(95)) : rng.pick(pool);
      return s;
    },
  };
  return rng;
}
