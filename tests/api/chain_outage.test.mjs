// A slow chain node never stalls the service (DESIGN.md section 10): with the dev chain's node
// paused (SIGSTOP), chain-bound requests fail within the request budget and then at once while the
// pool's circuit is open; requests that need no chain keep answering; authenticated requests fail
// closed (never a cached 200); after SIGCONT the service recovers within a second.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, assertOk, assertError, newAccount } from './stack.mjs';

let stack;
let key;
const BUDGET_MS = 2000;  // [chain] request_timeout_ms default

before(async () => {
  stack = await startStack({ workers: 2 });
  assert.ok(stack.anvilPid, 'devchain reports anvil\'s pid');
  key = (await newAccount(stack, 'outage')).api_key;
  assertOk(await stack.request('GET', 'list_groups', { key }));
});
after(async () => {
  if (stack?.anvilPid) try { process.kill(stack.anvilPid, 'SIGCONT'); } catch { /* gone */ }
  await stack?.stop();
});

async function timed(fn) {
  const t = performance.now();
  const res = await fn();
  return { res, ms: performance.now() - t };
}

const chainBound = () => timed(() => stack.request('GET', 'list_groups', { key }));
const version = () => timed(() => stack.request('GET', '/core/v1/version'));
const health = async () => (await stack.request('GET', '/health')).json;

test('a paused chain node: fast typed errors, chain-free endpoints unaffected, recovery within a second', async () => {
  process.kill(stack.anvilPid, 'SIGSTOP');
  let resumed = false;
  try {
    // Key validity comes from the pool's cache only while its event watch is current (its last poll
    // began within 2 x event_poll_ms, 250 ms by default): past that, without the node, it fails closed.
    await new Promise((r) => setTimeout(r, 600));
    // First wave: more chain-bound requests than workers. Each fails within its budget (plus
    // queueing behind at most one other budget), never the 40 s of per-attempt retries.
    const wave = await Promise.all([chainBound(), chainBound(), chainBound(), chainBound()]);
    for (const { res, ms } of wave) {
      assert.ok([503, 504].includes(res.status), `status ${res.status}: ${res.text}`);
      assert.ok(['chain_timeout', 'chain_unavailable'].includes(res.json?.error?.code), res.text);
      assert.ok(ms < 2 * BUDGET_MS + 1500, `a chain-bound request took ${Math.round(ms)} ms`);
    }
    // Now the circuit is open for the whole pool: refused at once, without waiting on the node.
    const fast = await chainBound();
    assertError(fast.res, 503, 'chain_unavailable');
    assert.ok(fast.ms < 200, `an open circuit answered in ${Math.round(fast.ms)} ms`);
    assert.equal((await health()).chain, 'unavailable');

    // Requests that need no chain answer at once while the node is still paused.
    const v = await version();
    assertOk(v.res);
    assert.ok(v.ms < 200, `/core/v1/version took ${Math.round(v.ms)} ms during the outage`);

    // The node comes back: within a second chain-bound requests succeed again.
    process.kill(stack.anvilPid, 'SIGCONT');
    resumed = true;
    const t = performance.now();
    let ok = null;
    while (performance.now() - t < 5000) {
      const r = await chainBound();
      if (r.res.status === 200) { ok = performance.now() - t; break; }
      await new Promise((r2) => setTimeout(r2, 50));
    }
    assert.ok(ok !== null, 'no recovery within 5 s');
    assert.ok(ok < 1000 + 200, `recovered after ${Math.round(ok)} ms`);
    assert.equal((await health()).chain, 'ok');
    console.log(`# first wave ${wave.map((w) => Math.round(w.ms)).join('/')} ms; open circuit ${fast.ms.toFixed(1)} ms; ` +
      `version ${v.ms.toFixed(1)} ms; recovery ${Math.round(ok)} ms`);
  } finally {
    if (!resumed) process.kill(stack.anvilPid, 'SIGCONT');
  }
});
