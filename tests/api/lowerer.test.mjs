// sigil-lowerer through the stack ([actions] lowerer_socket): an unseen CID's first run is lowered by
// the daemon (its lowered text lands in the shared code cache before the child runs), a syntax error
// reads the same as without the daemon, and a daemon that is gone or comes back never fails a run:
// the sandbox child lowers meanwhile, the worker logs the change once each way. Sources built to
// stall a scan are lowered or refused at once, and the real daemon, given a short deadline, gives
// up on a slow source without holding up a small one sent beside it (its pool alone:
// lowerer_pool.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startStack, actionRunner, actionCid, newAccount, addGroup, addUsageKey, eventually, BUILD_DIR } from './stack.mjs';

let stack, run, cacheDir;
const stacks = [];

before(async () => {
  cacheDir = mkdtempSync('/tmp/sigil-lowerer-cache-');
  stack = await startStack({ workers: 1, actions: [`code_cache_dir = ${cacheDir}`] });
  stacks.push(stack);
  const owner = (await newAccount(stack, 'lowerer')).api_key;
  const group = await addGroup(stack, owner, 'runners');
  const key = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] });
  run = actionRunner(stack, { owner, group, key });
  await threadsWarm(0);
});

// The daemon listens before its lowering threads have started and warmed up; a request meanwhile
// waits for them within its deadline, and on this loaded machine may pass it (the child then
// lowers), so the tests that count the daemon's lowerings wait for both threads.
const warmLines = () => (readFileSync(join(stack.logs, 'lowerer.log'), 'utf8').match(/thread \d warmed up/g) ?? []).length;
async function threadsWarm(before) {
  assert.ok(await eventually(() => warmLines() >= before + 2, 60000, 50), readFileSync(join(stack.logs, 'lowerer.log'), 'utf8'));
}

after(async () => {
  for (const s of stacks) await s.stop();
  if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
});

let serial = 0;
// Modern code no run has seen (a new CID each call).
function unseen() {
  serial += 1;
  return `class Counter${serial} { static made = 0; #n = ${serial}; bump(by = 1) { this.#n += by; return this.#n; } }
const main = async ({ by, tags = [] } = {}) => {
  const c = new Counter${serial}();
  const [first = 'none', ...rest] = tags;
  return \`\${c.bump(by ?? 2)}:\${first}:\${rest.length}:\${tags?.at?.(-1) ?? '-'}\`;
};`;
}
const expected = () => `${serial + 5}:a:2:c`;
const workerLog = () => readFileSync(join(stack.logs, 'supervisor.log'), 'utf8');
const lowererLog = () => readFileSync(join(stack.logs, 'lowerer.log'), 'utf8');
const lowered = () => (lowererLog().match(/sigil-lowerer: lowered \d+ bytes/g) ?? []).length;

test('the daemon lowers an unseen CID before its first run', async () => {
  const code = unseen();
  const cid = await actionCid(stack, code);
  const before = lowered();
  const j = await run(code, { by: 5, tags: ['a', 'b', 'c'] });
  assert.equal(j.has_error, false, JSON.stringify(j));
  assert.equal(j.response, expected());
  assert.equal(lowered(), before + 1, lowererLog());
  // What it answered is shared with the pool, and a second run asks it nothing.
  assert.ok(existsSync(join(cacheDir, `${cid}.lowered`)), readdirSync(cacheDir).join(' '));
  assert.equal((await run(code, { by: 5, tags: ['a', 'b', 'c'] })).response, expected());
  assert.equal(lowered(), before + 1);
  assert.doesNotMatch(workerLog(), /sigil-lowerer: .*the sandbox child lowers meanwhile/);
});

test('a syntax error reads as without the daemon (line and column)', async () => {
  const j = await run('const main = async (p) => {\n  return p?.a ?? ;\n};');
  assert.equal(j.has_error, true, JSON.stringify(j));
  assert.equal(j.error.code, 'syntax_error', JSON.stringify(j));
  assert.match(j.error.message, /line 2, column 18/);
  assert.match(lowererLog(), /sigil-lowerer: refused \d+ bytes in [\d.]+ ms: line 2: Unexpected token/);
});

test('a daemon that is gone or comes back never fails a run', async () => {
  process.kill(stack.pidOf('lowerer'), 'SIGKILL');
  await eventually(() => stack.pidOf('lowerer') === null, 5000, 20);
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    const j = await run(unseen(), { by: 5, tags: ['a', 'b', 'c'] });
    assert.equal(j.response, expected(), JSON.stringify(j));
    assert.ok(Date.now() - started < 5000);
  }
  const down = workerLog().match(/sigil-lowerer: connect [^\n]*the sandbox child lowers meanwhile/g) ?? [];
  assert.equal(down.length, 1, 'the worker logs the daemon going away once, not once per run');

  const before = lowered();
  const warmBefore = warmLines();
  await stack.restart('lowerer');
  await threadsWarm(warmBefore);
  const j = await run(unseen(), { by: 5, tags: ['a', 'b', 'c'] });
  assert.equal(j.response, expected());
  assert.match(workerLog(), /sigil-lowerer: answering again/);
  assert.equal(lowered(), before + 1, 'the restarted daemon lowered it');
});

test('without the daemon the sandbox child lowers, with the same answers', async () => {
  const plain = await startStack({ workers: 1, lowerer: false });
  stacks.push(plain);
  assert.equal(plain.lowererSocket, null);
  const owner = (await newAccount(plain, 'no lowerer')).api_key;
  const group = await addGroup(plain, owner, 'runners');
  const key = await addUsageKey(plain, owner, { execute_in_groups: [Number(group)] });
  const runPlain = actionRunner(plain, { owner, group, key });
  const code = unseen();
  const j = await runPlain(code, { by: 5, tags: ['a', 'b', 'c'] });
  assert.equal(j.response, expected());
  const bad = await runPlain('const main = async (p) => {\n  return p?.a ?? ;\n};');
  assert.equal(bad.error.code, 'syntax_error');
  assert.match(bad.error.message, /line 2, column 18/);
});

test('sources built to stall a scan are refused or lowered at once, through the daemon and the child', async () => {
  // 720 KB of `while(` took sigil-lowerer 120 s (a loop head's `)` searched from every head), and a
  // regular expression's long run of flag letters was worse; the child ran the same scans.
  const cases = [
    { name: 'while(', code: 'while('.repeat(720 * 1024 / 6), error: /line 1, column 7/ },
    { name: 'flags', code: `const main = () => /${'s'.repeat(720 * 1024)}x/.source.length;`, response: 720 * 1024 + 1 },
  ];
  for (const c of cases) {
    const started = Date.now();
    const j = await run(c.code);
    const took = Date.now() - started;
    if (c.error) {
      assert.equal(j.error?.code, 'syntax_error', `${c.name}: ${JSON.stringify(j).slice(0, 300)}`);
      assert.match(j.error.message, c.error);
    } else {
      assert.equal(j.has_error, false, `${c.name}: ${JSON.stringify(j).slice(0, 300)}`);
      assert.equal(j.response, c.response);
    }
    assert.ok(took < 20000, `${c.name}: ${took} ms`);
  }
  assert.match(lowererLog(), /sigil-lowerer: refused 737280 bytes in [\d.]+ ms: line 1: Unexpected token/);
  assert.doesNotMatch(lowererLog(), /gave up/);
});

// The real daemon on a socket of this test, with a short deadline and two threads.
async function startDaemon(args) {
  const dir = mkdtempSync('/tmp/sigil-lowerer-deadline-');
  const socket = join(dir, 'lowerer.sock');
  let log = '';
  const child = spawn(process.execPath, [join(BUILD_DIR, 'bin/sigil-lowerer.cjs'), '--socket', socket, ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (d) => { log += d; });
  await eventually(() => (log.match(/thread \d ready/g) ?? []).length >= 2, 20000, 25);
  return {
    socket, log: () => log,
    stop: async () => { child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r)); rmSync(dir, { recursive: true, force: true }); },
  };
}

// One request of the daemon's protocol: { kind, text, at } (at: when the answer arrived).
function ask(socket, source) {
  return new Promise((resolve, reject) => {
    const c = connect(socket);
    const body = Buffer.from(source);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    c.write(Buffer.concat([head, body]));
    let got = Buffer.alloc(0);
    c.on('data', (d) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 4 && got.length >= 4 + got.readUInt32BE(0)) {
        c.end();
        resolve({ kind: String.fromCharCode(got[4]), text: got.toString('utf8', 5), at: Date.now() });
      }
    });
    c.on('error', reject);
  });
}

test('the daemon gives up on a source past its deadline without holding up a small one beside it', async (t) => {
  const daemon = await startDaemon(['--threads', '2', '--warmup', '0', '--deadline-ms', '1500', '--deadline-ms-per-kib', '0']);
  t.after(() => daemon.stop());
  // Valid and slow: about a second per 20 KB of optional chains on one line, and 600 KB of them.
  const slow = 'let a = {};' + 'a?.b;'.repeat(600 * 1024 / 5);
  const started = Date.now();
  const slowAnswer = ask(daemon.socket, slow);
  await new Promise((r) => setTimeout(r, 100));
  const small = await ask(daemon.socket, 'const main = async (p) => p?.x ?? 1;');
  assert.equal(small.kind, 'C', small.text);
  assert.match(small.text, /__sigil_nc/);
  const gaveUp = await slowAnswer;
  assert.equal(gaveUp.kind, 'T', gaveUp.text.slice(0, 200));
  assert.equal(gaveUp.text, 'the lowering took longer than 1500 ms');
  assert.ok(small.at < gaveUp.at, 'the small source was answered while the slow one ran');
  assert.ok(gaveUp.at - started < 6000, `gave up after ${gaveUp.at - started} ms`);
  assert.ok(await eventually(() => /gave up on \d+ bytes after [\d.]+ ms: the lowering took longer than 1500 ms/.test(daemon.log()),
    5000, 20), daemon.log());
  // The killed thread's replacement serves again.
  const again = await Promise.all([ask(daemon.socket, 'const x = 1 ?? 2;'), ask(daemon.socket, 'const y = [...z];')]);
  assert.deepEqual(again.map((a) => a.kind), ['C', 'C']);
});
