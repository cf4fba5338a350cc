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
