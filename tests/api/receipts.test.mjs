// Run receipts without a TEE and with keyd gone (docs/receipts.md): a run asked with a receipt that
// cannot be signed is refused before it runs (502 receipt_unavailable, the action's side effect never
// happens); without a guest agent the receipt carries app id zero and still verifies with ethers
// against keyd's receipt key. The full stack with the evidence set is clients/js/test/receipt_stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startStack, ethers, assertError, newAccount, addGroup, addUsageKey, actionCid, assertOk } from './stack.mjs';

let stack;
let server;
let hits = 0;
const s = {};

before(async () => {
  server = http.createServer((req, res) => { hits++; res.end('hit'); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  stack = await startStack({ workers: 1, actions: ['fetch_allowed_addresses = 127.0.0.1'] });
  s.owner = (await newAccount(stack, 'receipts')).api_key;
  s.group = await addGroup(stack, s.owner, 'runners');
  s.key = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
  s.code = `async function main() { await fetch("http://127.0.0.1:${server.address().port}/"); return "fetched"; }`;
  assertOk(await stack.request('POST', 'add_action_to_group', { key: s.owner, body: { group_id: s.group, action_ipfs_cid: await actionCid(stack, s.code) } }));
});

after(async () => {
  await stack?.stop();
  server?.close();
});

test('keyd down before the first receipt: 502 receipt_unavailable and the action never ran', async () => {
  const restarting = stack.restart('keyd', { downMs: 4000 });
  await new Promise((r) => setTimeout(r, 1000));
  const r = await stack.request('POST', 'sigil_action', { key: s.key, body: { code: s.code, receipt: true } });
  await restarting;
  assertError(r, 502, 'receipt_unavailable');  // Unavailable: a dependency (keyd) is unreachable
  assert.match(r.json.error.message, /keyd/);
  assert.equal(hits, 0);
});

test('without a TEE the receipt carries app id zero and verifies against keyd\'s receipt key', async () => {
  const r = await stack.request('POST', 'sigil_action', { key: s.key, body: { code: s.code, receipt: true } });
  assert.equal(r.status, 200, r.text);
  assert.equal(hits, 1);
  const { domain, types, message, signature, signer } = r.json.receipt;
  assert.equal(message.appId, '0x' + '00'.repeat(20));
  assert.equal(message.ending, 'completed');
  assert.equal(ethers.verifyTypedData(domain, types, message, signature).toLowerCase(), signer);
});
