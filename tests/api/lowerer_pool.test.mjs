// sigil-lowerer's pool (lowerer/lowerer_pool.js, the code the daemon runs) with real
// worker threads and lowering programs written for the test: every request gets a context no
// other request touched, a request past its deadline has its thread killed without holding up the
// others, a request that waits too long for a thread is answered, and a thread that dies is
// replaced. The daemon itself, with the real lowering, is driven in lowerer.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// The file is a script (the daemon's bundle joins it before lowerer_main.js), evaluated here as
// the bundle would, with require.
const SOURCE_DIR = process.env.SIGIL_SOURCE_DIR ?? join(import.meta.dirname, '../..');
const LoweringPool = new Function('require', `${readFileSync(join(SOURCE_DIR, 'lowerer/lowerer_pool.js'), 'utf8')}
return LoweringPool;`)(createRequire(import.meta.url));

// A pool whose lowering is `program` (it defines __sigil_lower), closed after the test.
function pool(t, program, options = {}) {
  const logs = [];
  let fatal = null;
  const p = new LoweringPool(program, {
    threads: 2, warmupSources: [], log: (line) => logs.push(line), fatal: (why) => { fatal = why; }, ...options,
  });
  t.after(() => p.close());
  p.logs = logs;
  p.fatal = () => fatal;
  return p;
}
const lower = (p, source, deadlineMs = 30000) => new Promise((resolve) => {
  const started = Date.now();
  p.lower(source, deadlineMs, (answer) => resolve({ ...answer, at: Date.now(), took: Date.now() - started }));
});

test('each request is lowered in a context of its own: what one leaves behind, the next never sees', async (t) => {
  // What a lowering taken over by its source could do to its context: change built-in prototypes
  // and globals. Each request reports what it found, then does all of it.
  const p = pool(t, `globalThis.__sigil_lower = function (source) {
    var seen = [typeof Object.prototype.polluted, typeof globalThis.leftover, typeof Array.prototype.join,
                String(JSON.stringify({ a: 1 }))].join(',');
    Object.prototype.polluted = source;
    globalThis.leftover = source;
    Array.prototype.join = null;
    JSON.stringify = function () { return 'forged'; };
    return { code: seen };
  };`, { threads: 1 });
  for (const source of ['first account', 'second account', 'third account']) {
    const answer = await lower(p, source);
    assert.equal(answer.code, 'undefined,undefined,function,{"a":1}', JSON.stringify(answer));
  }
  assert.equal(p.fatal(), null);
});

const SPIN = `globalThis.__sigil_lower = function (source) {
  if (source === 'spin') for (;;) {}
  if (source === 'grow') { var hoard = []; for (;;) hoard.push(new Array(1e5).fill(hoard.length)); }
  return { code: source.toUpperCase() };
};`;

test('a request past its deadline is answered, its thread replaced, and a concurrent request is not held up', async (t) => {
  const p = pool(t, SPIN);
  const spinning = lower(p, 'spin', 1500);
  const normal = await lower(p, 'const a = 1;');
  assert.equal(normal.code, 'CONST A = 1;');
  const spun = await spinning;
  assert.match(spun.gaveUp, /^the lowering took longer than 1500 ms$/);
  assert.ok(normal.at < spun.at, 'the normal request was answered while the other one spun');
  assert.ok(spun.took >= 1490 && spun.took < 5000, `gave up after ${spun.took} ms`);
  // The pool is whole again: both threads answer (the killed one's replacement included).
  const after = await Promise.all([lower(p, 'x'), lower(p, 'y'), lower(p, 'z')]);
  assert.deepEqual(after.map((a) => a.code), ['X', 'Y', 'Z']);
  assert.equal(p.fatal(), null);
});

test('a request that waits past its deadline for a thread is answered, not lowered late', async (t) => {
  const p = pool(t, SPIN, { threads: 1 });
  const spinning = lower(p, 'spin', 3000);
  const queued = await lower(p, 'queued', 500);
  assert.equal(queued.gaveUp, 'no lowering thread was free within 500 ms');
  assert.ok(queued.took < 2500, `${queued.took} ms`);
  assert.ok((await spinning).gaveUp);
  assert.equal((await lower(p, 'later')).code, 'LATER');
});

test('a request whose asker went away leaves the queue', async (t) => {
  const p = pool(t, SPIN, { threads: 1 });
  const spinning = lower(p, 'spin', 1500);
  let answered = false;
  const dropped = p.lower('dropped', 500, () => { answered = true; });
  p.cancel(dropped);
  assert.ok((await spinning).gaveUp);
  assert.equal((await lower(p, 'next')).code, 'NEXT');
  assert.equal(answered, false);
});

test('a thread that runs out of memory is replaced and its request answered', async (t) => {
  const p = pool(t, SPIN, { threads: 1, resourceLimits: { maxOldGenerationSizeMb: 48 } });
  const grown = await lower(p, 'grow', 60000);
  assert.match(grown.gaveUp, /^the lowering stopped: /, JSON.stringify(grown));
  assert.equal((await lower(p, 'ok')).code, 'OK');
});

test('a lowering that is not isolated (or does not load) stops the daemon', async (t) => {
  const missing = pool(t, 'globalThis.nothing = 1;', { threads: 1 });
  const broken = pool(t, 'throw new Error("does not load")', { threads: 1 });
  for (let i = 0; i < 400 && (missing.fatal() === null || broken.fatal() === null); i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(missing.fatal(), 'the lowering context is not isolated');
  assert.match(broken.fatal(), /^a lowering thread did not start: /);
});
