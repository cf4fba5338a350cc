// sigil-lowerer through the stack ([actions] lowerer_socket): an unseen CID's first run is lowered by
// the daemon (its lowered text lands in the shared code cache before the child runs), a syntax error
// reads the same as without the daemon, and a daemon that is gone or comes back never fails a run:
// the sandbox child lowers meanwhile, the worker logs the change once each way.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, actionRunner, actionCid, newAccount, addGroup, addUsageKey, eventually } from './stack.mjs';

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
});

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
  await stack.restart('lowerer');
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
