// The shared sandbox zygotes under the real supervisor (issue 23): with `zygotes = 2` and six
// workers the stack runs two sigil-sandbox zygotes (children of the supervisor), not one per
// worker, and every worker's runs fork from them; a zygote killed with kill -9 mid-traffic costs
// at most the runs it was serving (a typed 5xx, never a hang), the supervisor starts another, and
// runs go on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { startStack, assertOk, newAccount, addGroup, addUsageKey, eventually } from './stack.mjs';

const WORKERS = 6;
const ZYGOTES = 2;
const CODE = 'function main(p) { return "hi " + p.n; }';
// Busy for 100 ms in its child: at any moment most workers have a run on a zygote.
const SPIN = 'function main(p) { var end = Date.now() + 100; while (Date.now() < end) {} return "hi " + p.n; }';

let stack;
const s = {};

before(async () => {
  stack = await startStack({ workers: WORKERS, maxWorkers: WORKERS, supervisorOptions: [`zygotes = ${ZYGOTES}`, "reserve_workers = 0"],
    // A static pool of WORKERS, whose count and spread are checked below; nginx lets the 24-run bursts
    // queue for it rather than answer 503 overloaded past WORKERS.
    nginxEnv: { SIGIL_MAX_INFLIGHT: "64" } });
  s.owner = (await newAccount(stack, 'zygotes')).api_key;
  s.group = await addGroup(stack, s.owner, 'runners');
  for (const code of [CODE, SPIN]) {
    const cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) }));
    assertOk(await stack.request('POST', 'add_action_to_group', { key: s.owner, body: { group_id: s.group, action_ipfs_cid: cid } }));
  }
  s.key = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
});
after(async () => { await stack?.stop(); });

// Every live process whose parent is `ppid`, with the name of its executable.
function childrenOf(ppid) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) !== ppid || rest[0] === 'Z') continue;
      out.push({ pid: Number(d), exe: basename(readlinkSync(`/proc/${d}/exe`)) });
    } catch { /* gone meanwhile */ }
  }
  return out;
}
const zygotes = () => childrenOf(stack.pidOf('supervisor')).filter((c) => c.exe === 'sigil-sandbox').map((c) => c.pid);
// The workers' connections a zygote holds: its sockets above the listening one (descriptor 3).
function connectionsOf(pid) {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try { if (Number(fd) > 3 && readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) ++n; } catch { /* closed meanwhile */ }
  }
  return n;
}
const workers = () => childrenOf(stack.pidOf('supervisor')).filter((c) => c.exe === 'sigil-worker').map((c) => c.pid);

async function run(n, code = CODE) {
  const started = Date.now();
  const r = await stack.request('POST', 'sigil_action', { key: s.key, body: { code, js_params: { n } } });
  return { status: r.status, json: r.json, text: r.text, ms: Date.now() - started };
}

test('the supervisor runs the configured zygotes, shared by every worker', async (t) => {
  assert.equal((await eventually(() => workers().length === WORKERS, 10000)), true, 'six workers');
  const z = zygotes();
  assert.equal(z.length, ZYGOTES, `zygotes: ${JSON.stringify(childrenOf(stack.pidOf('supervisor')))}`);
  // No worker has a zygote of its own.
  for (const w of workers()) {
    assert.deepEqual(childrenOf(w).filter((c) => c.exe === 'sigil-sandbox'), [], `worker ${w} has its own zygote`);
    const env = readFileSync(`/proc/${w}/environ`, 'utf8').split('\0');
    assert.ok(env.some((e) => /^SIGIL_ZYGOTE_SOCKET=@sigil-zygote-\d+-[0-9a-f]{16}$/.test(e)), `worker ${w} has the address`);
  }
  // Runs from all workers at once.
  const results = await Promise.all(Array.from({ length: 24 }, (_, i) => run(i)));
  results.forEach((r, i) => {
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.response, `hi ${i}`);
  });
  // Every worker is connected once.
  const first = z.map(connectionsOf);
  assert.equal(first.reduce((a, b) => a + b, 0), WORKERS, `connections per zygote: ${first}`);
  // The connections are spread over the zygotes and stay so under load: the least busy zygote
  // accepts a new connection first, and workers reconnect every 64 runs.
  for (let round = 0; round < 20; ++round) {
    const batch = await Promise.all(Array.from({ length: 24 }, (_, i) => run(i)));
    for (const r of batch) assert.equal(r.status, 200, r.text);
  }
  const held = await eventually(() => {
    const now = z.map(connectionsOf);
    return now.reduce((a, b) => a + b, 0) === WORKERS && now.every((n) => n >= 1) ? now : null;
  }, 3000);
  t.diagnostic(`connections per zygote: ${first} at start, ${z.map(connectionsOf)} after 480 runs`);
  assert.ok(held, `connections per zygote: ${z.map(connectionsOf)}`);
});

test('a zygote killed with kill -9 mid-traffic: runs go on, a new zygote takes its place', async (t) => {
  const before = zygotes();
  assert.equal(before.length, ZYGOTES);
  // The one serving the most workers, so some runs are on it when it dies.
  const victim = before.reduce((a, b) => (connectionsOf(b) > connectionsOf(a) ? b : a));
  const survivor = before.find((p) => p !== victim);
  const results = [];
  let stop = false;
  const loops = Array.from({ length: WORKERS }, async (_, i) => {
    for (let n = 0; !stop; ++n) results.push(await run(i * 1000 + n, SPIN));
  });
  await new Promise((r) => setTimeout(r, 1000));
  const killedAt = results.length;
  process.kill(victim, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 2500));
  stop = true;
  await Promise.all(loops);

  assert.ok(killedAt > 0 && results.length > killedAt, `runs before (${killedAt}) and after (${results.length - killedAt}) the kill`);
  const failed = results.filter((r) => r.status !== 200);
  t.diagnostic(`${results.length} runs, ${killedAt} before the kill, ${failed.length} failed: ` +
    JSON.stringify(failed.map((r) => `${r.status} ${r.json?.error?.code}`)) + `, slowest ${Math.max(...results.map((r) => r.ms))} ms`);
  for (const r of failed) {
    // Typed: the zygote's own errors as 5xx JSON, nothing untyped.
    assert.ok(r.status >= 500 && r.status < 600, `status ${r.status}: ${r.text}`);
    assert.ok(['zygote_gone', 'zygote_timeout'].includes(r.json?.error?.code), `untyped failure: ${r.status} ${r.text}`);
  }
  // Only runs on the killed zygote at that moment fail: at most one per worker.
  assert.ok(failed.length <= WORKERS, `${failed.length} failed runs`);
  for (const r of results) assert.ok(r.ms < 8000, `a run took ${r.ms} ms`);
  for (const r of results.filter((x) => x.status === 200)) assert.match(r.json.response, /^hi \d+$/);

  // The supervisor started another; the survivor kept its pid.
  const replaced = await eventually(() => {
    const now = zygotes();
    return now.length === ZYGOTES && !now.includes(victim) && now.includes(survivor) ? now : null;
  }, 5000);
  assert.ok(replaced, `zygotes now: ${JSON.stringify(zygotes())}`);
  // Every worker runs again (each worker's broken connection is replaced on its next run).
  const again = await Promise.all(Array.from({ length: 24 }, (_, i) => run(i)));
  again.forEach((r) => assert.equal(r.status, 200, r.text));
});
