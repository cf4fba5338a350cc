// Writes whose receipt does not come in time (DESIGN.md section 9, safe retries): the dev chain stops
// mining (automine off) and [chain] receipt_timeout_ms is 1 s. A write that mints a secret answers
// 202 with the secret and the transaction, so the secret is never lost; any other write answers 504
// with the transaction's hash. A retry with the same Idempotency-Key follows that transaction and
// never sends a second one: still pending, the same answer; mined, the first request's answer
// (completed from the receipt); dropped, the write runs again (or the minted answer becomes 409).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, chainRpc, assertError, newAccount, HASH32 } from './stack.mjs';

const WRITE_PRICE = 2;
let stack;
let owner;

const rpc = (method, params = []) => chainRpc(stack, method, params);
const pendingCount = async () => Number((await rpc('txpool_status')).pending);
const balance = async (key) => (await stack.request('GET', 'billing/balance', { key })).json.balance_cents;
const exists = async (key) => (await stack.request('GET', 'account_exists', { key })).json;
const groupCount = async (key) => (await stack.request('GET', 'list_groups?page_number=0&page_size=100', { key })).json.length;

before(async () => {
  stack = await startStack({
    workers: 2,
    chainOptions: ['receipt_timeout_ms = 1000'],
    billing: { lines: ['starter_credit_cents = 100', `write_price_cents = ${WRITE_PRICE}`] },
  });
  ({ api_key: owner } = await newAccount(stack, 'pending writes'));
  await rpc('evm_setAutomine', [false]);
});

after(async () => {
  if (stack) {
    await rpc('evm_setAutomine', [true]).catch(() => {});
    await stack.stop();
  }
});

test('new_account whose receipt times out answers 202 with its key and transaction; the key works once mined', async () => {
  const r = await stack.request('POST', 'new_account', { body: { account_name: 'slow chain' } });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.json.pending, true);
  assert.match(r.json.tx_hash, HASH32);
  assert.match(r.json.api_key, /.{20,}/);
  assert.equal(await exists(r.json.api_key), false, 'not mined yet');
  await rpc('evm_mine');
  assert.equal(await exists(r.json.api_key), true, 'the key the 202 gave is the account\'s key');
  assert.equal(await balance(r.json.api_key), 100, 'with its starter credit');
});

test('create_wallet whose receipt times out answers 202 with the wallet; it is listed once mined', async () => {
  const r = await stack.request('GET', 'create_wallet', { key: owner });
  assert.equal(r.status, 202, r.text);
  assert.match(r.json.wallet_address, /^0x[0-9a-f]{40}$/i);
  assert.match(r.json.tx_hash, HASH32);
  await rpc('evm_mine');
  const wallets = (await stack.request('GET', 'list_wallets', { key: owner, query: { page_number: 0, page_size: 100 } })).json;
  assert.ok(wallets.some((w) => w.wallet_address.toLowerCase() === r.json.wallet_address.toLowerCase()), JSON.stringify(wallets));
});

test('add_usage_api_key: 202 with the secret; retries replay it while pending, then answer 200 with the same secret once mined', async () => {
  const headers = { 'Idempotency-Key': 'usage-key-slow-1' };
  const body = { name: 'slow key', description: 'minted while the chain stalls', can_create_groups: false, can_delete_groups: false,
    can_create_pkps: false, manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [], execute_in_groups: [] };
  const before = await balance(owner);
  const first = await stack.request('POST', 'add_usage_api_key', { key: owner, body, headers });
  assert.equal(first.status, 202, first.text);
  assert.match(first.json.tx_hash, HASH32);
  const secret = first.json.usage_api_key;
  assert.ok(secret);
  assert.equal(await pendingCount(), 1);

  const again = await stack.request('POST', 'add_usage_api_key', { key: owner, body, headers });
  assert.equal(again.status, 202);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.json.usage_api_key, secret);
  assert.equal(await pendingCount(), 1, 'the retry sent nothing');

  await rpc('evm_mine');
  const settled = await stack.request('POST', 'add_usage_api_key', { key: owner, body, headers });
  assert.equal(settled.status, 200, settled.text);
  assert.equal(settled.headers['idempotent-replayed'], 'true');
  assert.deepEqual(settled.json, { success: true, usage_api_key: secret });
  assert.equal(await exists(secret), true, 'the secret is a live key');
  assert.equal(await balance(owner), before - WRITE_PRICE, 'charged once');
  const last = await stack.request('POST', 'add_usage_api_key', { key: owner, body, headers });
  assert.equal(last.status, 200);
  assert.deepEqual(last.json, settled.json);
});

test('add_group: 504 with the transaction, not charged; a retry while pending sends nothing; once mined it answers the group id, charged once', async () => {
  const headers = { 'Idempotency-Key': 'group-slow-1' };
  const body = { group_name: 'slow group', group_description: 'd', pkp_ids_permitted: [], cid_hashes_permitted: [] };
  const before = await balance(owner);
  const groupsBefore = await groupCount(owner);
  const first = await stack.request('POST', 'add_group', { key: owner, body, headers });
  assertError(first, 504, 'tx_receipt_timeout');
  const tx = first.json.error.tx_hash;
  assert.match(tx, HASH32);
  assert.equal(await balance(owner), before, 'a write of unknown outcome is not charged yet');

  const again = await stack.request('POST', 'add_group', { key: owner, body, headers });
  assertError(again, 504, 'tx_receipt_timeout');
  assert.equal(again.json.error.tx_hash, tx);
  assert.equal(await pendingCount(), 1, 'the retry sent nothing');

  await rpc('evm_mine');
  const done = await stack.request('POST', 'add_group', { key: owner, body, headers });
  assert.equal(done.status, 200, done.text);
  assert.match(done.json.group_id, /^[1-9][0-9]*$/);
  assert.equal(await pendingCount(), 0, 'completed from the receipt, not sent again');
  assert.equal(await groupCount(owner), groupsBefore + 1, 'one group, not two');
  assert.equal(await balance(owner), before - WRITE_PRICE, 'charged once, when it was known to have run');
  const replay = await stack.request('POST', 'add_group', { key: owner, body, headers });
  assert.equal(replay.status, 200);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(replay.json.group_id, done.json.group_id);
});

test('a dropped transaction: the 504 write runs again on retry; a minted 202 becomes 409 tx_dropped', async () => {
  const groupHeaders = { 'Idempotency-Key': 'group-dropped-1' };
  const body = { group_name: 'dropped group', group_description: 'd', pkp_ids_permitted: [], cid_hashes_permitted: [] };
  const groupsBefore = await groupCount(owner);
  const first = await stack.request('POST', 'add_group', { key: owner, body, headers: groupHeaders });
  assertError(first, 504, 'tx_receipt_timeout');
  await rpc('anvil_dropTransaction', [first.json.error.tx_hash]);
  await rpc('evm_setAutomine', [true]);
  try {
    const retried = await stack.request('POST', 'add_group', { key: owner, body, headers: groupHeaders });
    assert.equal(retried.status, 200, retried.text);
    assert.equal(await groupCount(owner), groupsBefore + 1);
  } finally {
    await rpc('evm_setAutomine', [false]);
  }

  const keyHeaders = { 'Idempotency-Key': 'usage-key-dropped-1' };
  const keyBody = { name: 'dropped key', description: 'never mined', can_create_groups: false, can_delete_groups: false,
    can_create_pkps: false, manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [], execute_in_groups: [] };
  const minted = await stack.request('POST', 'add_usage_api_key', { key: owner, body: keyBody, headers: keyHeaders });
  assert.equal(minted.status, 202, minted.text);
  await rpc('anvil_dropTransaction', [minted.json.tx_hash]);
  assertError(await stack.request('POST', 'add_usage_api_key', { key: owner, body: keyBody, headers: keyHeaders }), 409, 'tx_dropped');
  assert.equal(await exists(minted.json.usage_api_key), false);
});
