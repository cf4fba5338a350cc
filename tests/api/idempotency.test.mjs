// Idempotency-Key and the billing rules around it, against the whole stack with billing on (DESIGN.md
// section 9, Sigil issue 22): answers scoped by the sending key's hash and sealed under that
// credential (the ledger file never holds a minted key in clear), a 402 not replayed after a top-up,
// a claim whose worker died taken over after its lease; the starter credit's daily budget; any key of
// an account reading its balance and buying credit; Paid events searched from the intent's block.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startStack, ethers, assertError, assertOk, newAccount, addGroup, addUsageKey, actionCid, BUILD_DIR,
} from './stack.mjs';

const STARTER = 20;          // [billing] starter_credit_cents
const STARTER_BUDGET = 60;   // [billing] starter_credit_budget_cents: three accounts' worth a day
const RUN_PRICE = 600;       // [billing] run_second_price_cents: more than one minimal top-up (500)
const HARD_TIMEOUT_S = 6;    // [supervisor] request_hard_timeout_s: a claim's lease is this + 2 s
const LEASE_MS = HARD_TIMEOUT_S * 1000 + 2000;
let stack;
let payer;
let token;
let payments;

const abi = (name) => JSON.parse(readFileSync(join(BUILD_DIR, `contracts/${name}.abi.json`), 'utf8'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const balanceOf = async (key) => assertOk(await stack.request('GET', 'billing/balance', { key })).balance_cents;

before(async () => {
  stack = await startStack({
    workers: 2,
    supervisorOptions: [`request_hard_timeout_s = ${HARD_TIMEOUT_S}`],
    billing: { lines: [`starter_credit_cents = ${STARTER}`, `starter_credit_budget_cents = ${STARTER_BUDGET}`,
      'write_price_cents = 1', `run_second_price_cents = ${RUN_PRICE}`, 'max_concurrent_runs_per_key = 0'] },
  });
  const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50 });
  const wallet = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [wallet.address, '0x8ac7230489e80000']);
  payer = new ethers.NonceManager(wallet);
  token = new ethers.Contract(stack.token, abi('TestStablecoin'), payer);
  payments = new ethers.Contract(stack.payments, abi('Payments'), payer);
  await (await token.mint(wallet.address, 1_000_000n * 1_000_000n)).wait();
  await (await token.approve(stack.payments, ethers.MaxUint256)).wait();
});
after(async () => { await stack?.stop(); });

/// Buys `cents` of credit for the account `key` belongs to (any of its keys), paid on the dev chain.
async function topUp(key, cents) {
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { key, body: { amount_cents: cents } }));
  await (await payments.pay(intent.pay.reference, BigInt(intent.pay.amount))).wait();
  return assertOk(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: intent.payment_intent_id } }));
}

/// An account with `cents` bought, a group and `code` listed in it.
async function runnableAccount(name, cents, code) {
  const { api_key: owner } = await newAccount(stack, name);
  await topUp(owner, cents);
  const group = await addGroup(stack, owner, 'runs');
  assertOk(await stack.request('POST', 'add_action_to_group', { key: owner, body: { group_id: group, action_ipfs_cid: await actionCid(stack, code) } }));
  return { owner, group };
}

// First: the accounts it makes spend the day's starter budget.
test('the starter credit stops once the day\'s budget is spent; accounts are still made', async () => {
  const balances = [];
  for (let i = 0; i < 4; i++) balances.push(await balanceOf((await newAccount(stack, `starter ${i}`)).api_key));
  assert.deepEqual(balances, [STARTER, STARTER, STARTER, 0]);
  const rows = execFileSync('sqlite3', [join(stack.home, 'ledger.sqlite'), 'SELECT id, used FROM budgets'], { encoding: 'utf8' }).trim();
  assert.match(rows, new RegExp(`^starter:\\d{4}-\\d{2}-\\d{2}\\|${STARTER_BUDGET}$`));
});

test('a usage key reads its account\'s balance and buys credit for it; no scope needed', async () => {
  const { api_key: owner } = await newAccount(stack, 'usage balance');
  await topUp(owner, 500);  // the day's starter budget is spent: the key costs a write
  const usage = await addUsageKey(stack, owner);  // no scopes at all
  const before = await balanceOf(owner);
  assert.equal(await balanceOf(usage), before);
  assert.equal((await topUp(usage, 500)).balance_cents, before + 500);
  assert.equal(await balanceOf(owner), before + 500);
  // An unknown key is still refused.
  assertError(await stack.request('GET', 'billing/balance', { key: Buffer.alloc(32, 7).toString('base64') }), 401, 'invalid_api_key');
});

test('Idempotency-Key is scoped by key: another key of the account replaying it gets nothing of the first answer', async () => {
  const code = 'async function main() { return { secret: await Sigil.Actions.getActionPrivateKey() }; }';
  const { owner, group } = await runnableAccount('scoped', 1000, code);
  const runner = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] }, 'runner');
  const idle = await addUsageKey(stack, owner, {}, 'no scopes');
  const headers = { 'Idempotency-Key': 'run-once' };
  const first = await stack.request('POST', 'sigil_action', { key: runner, body: { code }, headers });
  assert.equal(first.status, 200, first.text);
  assert.match(first.json.response.secret, /^0x[0-9a-f]{64}$/);
  const replay = await stack.request('POST', 'sigil_action', { key: runner, body: { code }, headers });
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(replay.text, first.text);
  // The key with no scopes sends the same header and body: its own request, refused on its own merits.
  const stolen = await stack.request('POST', 'sigil_action', { key: idle, body: { code }, headers });
  assertError(stolen, 403, 'not_authorized');
  assert.equal(stolen.headers['idempotent-replayed'], undefined);
  assert.ok(!stolen.text.includes(first.json.response.secret), 'nothing of the first answer');
});

test('a new usage key\'s answer is stored sealed: the ledger file never holds the key; the same credential replays it', async () => {
  const { api_key: owner } = await newAccount(stack, 'sealed');
  await topUp(owner, 500);
  const headers = { 'Idempotency-Key': 'mint-usage-key-1' };
  const body = { name: 'minted', description: '', can_create_groups: false, can_delete_groups: false, can_create_pkps: false,
    manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [], execute_in_groups: [] };
  const first = assertOk(await stack.request('POST', 'add_usage_api_key', { key: owner, body, headers }));
  const minted = first.usage_api_key;
  const replay = await stack.request('POST', 'add_usage_api_key', { key: owner, body, headers });
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(replay.json.usage_api_key, minted);
  const db = join(stack.home, 'ledger.sqlite');
  const rows = execFileSync('sqlite3', [db, 'SELECT status, body FROM idempotency'], { encoding: 'utf8' });
  assert.ok(rows.length > 0, 'answers are stored');
  assert.ok(!rows.includes(minted) && !rows.includes('usage_api_key'), rows.slice(0, 300));
  for (const file of [db, `${db}-wal`]) {
    if (existsSync(file)) assert.ok(!readFileSync(file).includes(Buffer.from(minted)), `${file} holds the minted key`);
  }
});

test('a 402 is not replayed: after a top-up the same Idempotency-Key runs', async () => {
  const code = 'async function main() { return "ran"; }';
  const { owner } = await runnableAccount('topped up', 500, code);
  const headers = { 'Idempotency-Key': 'run-after-top-up' };
  assertError(await stack.request('POST', 'sigil_action', { key: owner, body: { code }, headers }), 402, 'insufficient_credit');
  await topUp(owner, 500);
  const ran = await stack.request('POST', 'sigil_action', { key: owner, body: { code }, headers });
  assert.equal(ran.status, 200, ran.text);
  assert.equal(ran.json.response, 'ran');
  assert.equal(ran.headers['idempotent-replayed'], undefined);
});

test('a claim whose worker was killed answers 409 until its lease ends, then the retry runs', async () => {
  const code = 'async function main() { var t = Date.now(); while (Date.now() - t < 3000) {} return "late"; }';
  // A run holds its whole time limit (30 s at RUN_PRICE), and the killed run's hold stands: credit for two.
  const { owner } = await runnableAccount('killed claim', 2 * 30 * RUN_PRICE + 2000, code);
  const headers = { 'Idempotency-Key': 'killed-mid-run' };
  const claimedAt = Date.now();
  const running = stack.request('POST', 'sigil_action', { key: owner, body: { code }, headers });
  await sleep(800);
  // The workers only: the supervisor's children include the shared sandbox zygotes, and a zygote
  // killed first ends the run with a typed 502 zygote_gone that frees the claim before its worker dies.
  const workers = execFileSync('pgrep', ['-P', String(stack.pidOf('supervisor')), '-x', 'sigil-worker']).toString().trim().split('\n').map(Number);
  for (const pid of workers) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  assert.equal((await running).status, 502);
  // The supervisor brings workers back; the claim is still held.
  let held;
  for (let i = 0; i < 50; i++) {
    held = await stack.request('POST', 'sigil_action', { key: owner, body: { code }, headers });
    if (held.status !== 502) break;
    await sleep(100);
  }
  assertError(held, 409, 'idempotency_in_progress');
  assert.ok(Date.now() - claimedAt < LEASE_MS, 'checked within the lease');
  let ran;
  while (Date.now() - claimedAt < LEASE_MS + 15000) {
    ran = await stack.request('POST', 'sigil_action', { key: owner, body: { code }, headers });
    if (ran.status !== 409) break;
    await sleep(500);
  }
  assert.equal(ran.status, 200, ran.text);
  assert.equal(ran.json.response, 'late');
  assert.ok(Date.now() - claimedAt >= LEASE_MS, 'taken over only after the lease');
});

test('confirm_payment counts only Paid events from the intent\'s own block on', async () => {
  const { api_key: key } = await newAccount(stack, 'early payment');
  // A payment made before the intent exists, with the reference the intent will be given below.
  const early = ethers.hexlify(ethers.randomBytes(32));
  await (await payments.pay(early, 500n * 10_000n)).wait();
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { key, body: { amount_cents: 500 } }));
  execFileSync('sqlite3', ['-cmd', '.timeout 5000', join(stack.home, 'ledger.sqlite'),
    `UPDATE intents SET reference = '${early}', client_secret = '${early}' WHERE id = '${intent.payment_intent_id}'`]);
  const confirm = () => stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: intent.payment_intent_id } });
  assertError(await confirm(), 402, 'payment_not_completed');
  await (await payments.pay(early, 500n * 10_000n)).wait();  // now, after the intent: counted
  assert.equal(assertOk(await confirm()).credited_cents, 500);
});
