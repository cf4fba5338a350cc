// The dynamic worker pool (issue 23): it grows under load and shrinks back when idle; a full
// instance answers 503 `overloaded` with Retry-After at once (nginx's bound = max_workers) and
// recovers when the load ends; chain-bound requests never take the workers kept for chain-free
// ones ([supervisor] reserve_workers), so /health and /core/v1/version answer at once while the
// chain node is paused. /health's in_flight shows what the busy workers wait on.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  startStack, assertOk, assertError, newAccount, eventually, addGroup, addUsageKey, actionRunner,
} from './stack.mjs';

const stacks = [];
const servers = [];
after(async () => {
  for (const srv of servers) srv.close();
  for (const s of stacks) {
    if (s.anvilPid) try { process.kill(s.anvilPid, 'SIGCONT'); } catch { /* gone */ }
    await s.stop();
  }
});

async function start(opts) {
  const s = await startStack(opts);
  stacks.push(s);
  return s;
}

async function timed(promise) {
  const t = performance.now();
  const res = await promise;
  return { res, ms: performance.now() - t };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const health = async (stack) => assertOk(await stack.request('GET', '/health'));

function assertOverloaded(res, context) {
  assertError(res, 503, 'overloaded', context);
  assert.equal(res.headers['retry-after'], '1', `Retry-After ${context}`);
}

test('the pool grows to carry slow requests, then shrinks back to its floor plus spares', async () => {
  const stack = await start({ workers: 2, maxWorkers: 16, testRoutes: true,
    supervisorOptions: ['min_spare_workers = 2', 'max_spare_workers = 3', 'reserve_workers = 2'] });
  const before = (await health(stack)).workers;
  assert.equal(before.max_workers, 16);
  assert.ok(before.total <= 5, `an idle pool of ${before.total}`);

  // Twelve requests each hold a worker for 3 s: the pool must grow past them.
  const held = Array.from({ length: 12 }, () => timed(stack.request('GET', '/core/v1/test/sleep', { query: { ms: 3000 } })));
  const grown = await eventually(async () => {
    const h = await health(stack);
    return h.in_flight.total >= 13 ? h : null;  // the twelve and this /health
  }, 2500, 50);
  assert.ok(grown, 'twelve slow requests in flight at once');
  assert.ok(grown.workers.total >= 13, `pool of ${grown.workers.total} under load`);
  for (const { res, ms } of await Promise.all(held)) {
    assertOk(res);
    // Each waited for a worker only as long as the pool took to grow (forks on a loaded machine),
    // not behind another request (that would be 6 s and more).
    assert.ok(ms < 3000 + 2500, `a held request took ${Math.round(ms)} ms`);
  }
  // Idle again: stopped one per 100 ms down to at most max_spare_workers idle.
  const shrunk = await eventually(async () => {
    const h = await health(stack);
    return h.workers.total - h.workers.draining <= 3 + 1 ? h : null;
  }, 5000, 100);
  assert.ok(shrunk, 'the pool shrank back');
  assertOk(await stack.request('GET', '/core/v1/version'));

  // A reload while the pool is grown: every request in flight ends 200, the old workers drain, and
  // the new generation starts at its floor and grows as load asks.
  const load = Array.from({ length: 8 }, () => stack.request('GET', '/core/v1/test/sleep', { query: { ms: 1000 } }));
  await sleep(300);
  process.kill(stack.pidOf('supervisor'), 'SIGHUP');
  for (const res of await Promise.all(load)) assertOk(res, 'a request across the reload');
  const settled = await eventually(async () => {
    const h = await health(stack);
    return h.workers.draining === 0 && h.workers.total <= 3 + 1 ? h : null;
  }, 5000, 100);
  assert.ok(settled, 'the reloaded pool settles');
  console.log(`# pool: idle ${before.total}, under 12 slow requests ${grown.workers.total}, ` +
    `after ${shrunk.workers.total - shrunk.workers.draining}`);
});

test('a full instance answers 503 overloaded with Retry-After at once, and recovers', async () => {
  const stack = await start({ workers: 2, maxWorkers: 4, testRoutes: true,
    supervisorOptions: ['min_spare_workers = 1', 'max_spare_workers = 4', 'reserve_workers = 1'] });
  const held = Array.from({ length: 4 }, () => stack.request('GET', '/core/v1/test/sleep', { query: { ms: 2500 } }));
  // Wait until all four are being served (the pool grows from two to four to take them).
  await sleep(800);
  for (const path of ['/core/v1/version', '/health', 'sigil_action']) {
    const { res, ms } = await timed(path === 'sigil_action'
      ? stack.request('POST', path, { body: { action_ipfs_cid: 'x' } }) : stack.request('GET', path));
    assertOverloaded(res, path);
    assert.ok(ms < 300, `${path} refused after ${Math.round(ms)} ms`);
  }
  for (const res of await Promise.all(held)) assertOk(res);
  // The load ended: the next requests are served.
  assertOk(await stack.request('GET', '/core/v1/version'));
  const h = await health(stack);
  assert.equal(h.in_flight.total, 1);
});

test('chain-bound requests leave the reserve to chain-free ones while the chain node is paused', async () => {
  // Four chain-bound requests at most (max_workers 6 - reserve_workers 2); reads are not cached.
  // Six spares: the pool is at its ceiling before the test, so what is measured is the reserve, not
  // how fast workers start (the first test covers growth).
  const stack = await start({ workers: 2, maxWorkers: 6, chainOptions: ['cache_ttl_ms = 0'],
    supervisorOptions: ['min_spare_workers = 6', 'max_spare_workers = 6', 'reserve_workers = 2'] });
  assert.ok(stack.anvilPid, 'devchain reports anvil\'s pid');
  const { api_key: key } = await newAccount(stack, 'reserve');
  assertOk(await stack.request('GET', 'list_groups', { key }));
  assert.ok(await eventually(async () => (await health(stack)).workers.idle >= 5, 10000, 100), 'six workers up');
  process.kill(stack.anvilPid, 'SIGSTOP');
  let resumed = false;
  try {
    const bound = Array.from({ length: 8 }, () => timed(stack.request('GET', 'list_groups', { key })));
    await sleep(500);
    // The four that wait on the node hold four workers; the rest were refused, and the reserve serves these.
    const v = await timed(stack.request('GET', '/core/v1/version'));
    assertOk(v.res);
    assert.ok(v.ms < 200, `/core/v1/version took ${Math.round(v.ms)} ms`);
    const h = await timed(stack.request('GET', '/health'));
    assertOk(h.res);
    assert.ok(h.ms < 200, `/health took ${Math.round(h.ms)} ms`);
    assert.equal(h.res.json.in_flight.chain, 4, JSON.stringify(h.res.json.in_flight));
    const results = await Promise.all(bound);
    const refused = results.filter(({ res }) => res.json?.error?.code === 'overloaded');
    const waited = results.filter(({ res }) => res.json?.error?.code !== 'overloaded');
    assert.equal(refused.length, 4, results.map(({ res }) => res.status + ' ' + res.json?.error?.code).join(', '));
    for (const { res, ms } of refused) {
      assertOverloaded(res, 'chain-bound beyond the reserve');
      assert.ok(ms < 500, `refused after ${Math.round(ms)} ms`);
    }
    for (const { res, ms } of waited) {
      assert.ok([503, 504].includes(res.status), `status ${res.status}: ${res.text}`);
      assert.ok(['chain_timeout', 'chain_unavailable'].includes(res.json?.error?.code), res.text);
      assert.ok(ms < 2000 + 1000, `a chain-bound request took ${Math.round(ms)} ms`);
    }
    process.kill(stack.anvilPid, 'SIGCONT');
    resumed = true;
    assert.ok(await eventually(async () => (await stack.request('GET', 'list_groups', { key })).status === 200, 5000, 100),
      'chain-bound requests recover');
    console.log(`# reserve: version ${v.ms.toFixed(1)} ms, health ${h.ms.toFixed(1)} ms, refused in ` +
      `${refused.map(({ ms }) => Math.round(ms)).join('/')} ms, waited ${waited.map(({ ms }) => Math.round(ms)).join('/')} ms`);
  } finally {
    if (!resumed) process.kill(stack.anvilPid, 'SIGCONT');
  }
});

test('runs awaiting a slow fetch show in /health as fetch; a pool full of them answers 503 overloaded', async () => {
  // A local server that answers after 1.5 s (allowed by fetch_allowed_addresses).
  const slow = http.createServer((req, res) => setTimeout(() => { res.writeHead(200); res.end('late'); }, 1500));
  servers.push(slow);
  await new Promise((r) => slow.listen(0, '127.0.0.1', r));
  const target = `http://127.0.0.1:${slow.address().port}/`;
  const stack = await start({ workers: 2, maxWorkers: 4, actions: ['fetch_allowed_addresses = 127.0.0.1'],
    supervisorOptions: ['min_spare_workers = 4', 'max_spare_workers = 4', 'reserve_workers = 1'] });
  const owner = (await newAccount(stack, 'pool fetch')).api_key;
  const group = await addGroup(stack, owner, 'runners');
  const key = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] });
  const run = actionRunner(stack, { owner, group, key });
  const code = `async function main() { const r = await fetch(${JSON.stringify(target)}); return await r.text(); }`;
  assert.equal((await run(code)).response, 'late');  // lists the code in the group
  // Runs with no other request around them (the runner's CID look-up would itself be refused).
  const runOnce = async () => assertOk(await stack.request('POST', 'sigil_action', { key, body: { code } }), 'run');

  const three = Array.from({ length: 3 }, runOnce);
  const h = await eventually(async () => {
    const j = (await health(stack));
    return j.in_flight.fetch === 3 ? j : null;
  }, 1400, 25);
  assert.ok(h, 'three runs wait on their fetch');
  assert.equal(h.in_flight.total, 4, JSON.stringify(h.in_flight));  // and this /health
  const fourth = runOnce();
  // The fourth fills the pool: the next request of any kind is refused at once.
  const refused = await eventually(async () => {
    const r = await timed(stack.request('GET', '/core/v1/version'));
    return r.res.status === 503 ? r : null;
  }, 1000, 20);
  assert.ok(refused, 'a request beyond the pool was refused');
  assertOverloaded(refused.res, 'version on a full pool');
  assert.ok(refused.ms < 200, `refused after ${Math.round(refused.ms)} ms`);
  for (const r of await Promise.all([...three, fourth])) assert.equal(r.response, 'late');
  assertOk(await stack.request('GET', '/core/v1/version'));
  assert.equal((await health(stack)).in_flight.fetch, 0);
});
