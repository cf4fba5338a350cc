// Billing's configured defaults and start-up checks against the whole stack (Sigil issue 22): no
// starter credit unless configured (new_account needs no credential), and a payment token that does
// not answer decimals() 6 refuses payments (503 payments_misconfigured) instead of crediting at the
// wrong scale, reported in the log (on the first payment call: a worker start never waits on the chain).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, assertError, assertOk, newAccount, eventually } from './stack.mjs';

let stack;

before(async () => {
  // The Payments contract in place of the token: it has no decimals().
  stack = await startStack({ workers: 1, billing: { tokenAddress: (chain) => chain.payments_address } });
});
after(async () => { await stack?.stop(); });

test('new accounts get no starter credit by default', async () => {
  const { api_key: key } = await newAccount(stack, 'no starter');
  assert.equal(assertOk(await stack.request('GET', 'billing/balance', { key })).balance_cents, 0);
});

test('a token that does not answer decimals() 6 refuses payments, and the log says so', async () => {
  const { api_key: key } = await newAccount(stack, 'wrong token');
  const refused = await stack.request('POST', 'billing/create_payment_intent', { key, body: { amount_cents: 500 } });
  assertError(refused, 503, 'payments_misconfigured');
  assert.match(refused.json.error.message, /decimals\(\)/);
  assertError(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: 'pi_none' } }),
    404, 'unknown_payment_intent');
  const logged = await eventually(() => readdirSync(stack.logs).some((f) =>
    readFileSync(join(stack.logs, f), 'utf8').includes('payments are refused')), 5000);
  assert.ok(logged, 'the worker logged the misconfigured token');
});

// A worker's start never waits on the chain (issue 23): with billing on and the chain node paused,
// a worker killed and restarted by the supervisor answers as soon as it would with the node up (the
// token check waits for the first payment call; it used to take up to 1 s of the start).
test('a worker starts as fast with the chain node paused as with it up', async () => {
  const { execFileSync } = await import('node:child_process');
  const restartMs = async () => {
    // Only workers older than 2 s restart at once (a younger one's exit counts as a crash loop).
    await new Promise((res) => setTimeout(res, 2500));
    const supervisor = stack.pidOf('supervisor');
    const workers = execFileSync('pgrep', ['-P', String(supervisor), 'sigil-worker']).toString().trim().split('\n').map(Number);
    const t = performance.now();
    for (const pid of workers) process.kill(pid, 'SIGKILL');
    // Answered by a new worker: the old one is gone, so a 200 now comes from its replacement.
    await eventually(() => workers.every((pid) => { try { process.kill(pid, 0); return false; } catch { return true; } }), 5000, 5);
    const up = await eventually(async () => (await stack.request('GET', '/core/v1/version')).status === 200, 10000, 10);
    assert.ok(up, 'the worker came back');
    return performance.now() - t;
  };
  const running = await restartMs();
  process.kill(stack.anvilPid, 'SIGSTOP');
  let paused;
  try {
    paused = await restartMs();
  } finally {
    process.kill(stack.anvilPid, 'SIGCONT');
  }
  console.log(`# worker restart to first answer: chain up ${Math.round(running)} ms, chain paused ${Math.round(paused)} ms`);
  assert.ok(paused < running + 600, `with the chain paused a worker took ${Math.round(paused)} ms to answer (${Math.round(running)} ms with it up)`);
});
