// Billing against the whole stack (DESIGN.md section 9): credits bought with the chain processor on
// the dev chain (tUSD paid through Payments, by ethers), charges for writes and runs (every run that
// started, however it ended; a run never costs more than the credit and the key's cap held), 402
// before any work, exactly-once crediting, X-Wallet-Auth, Idempotency-Key, the balance moved on
// conversion, concurrent runs that never overdraw, and nginx's limit on minting endpoints.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import {
  startStack, ethers, assertError, assertOk, newAccount, addGroup, createWallet, accountConfigAbi, BUILD_DIR,
  signedEnvelope, walletAuth as walletAuthOf,
} from './stack.mjs';

const STARTER = 20;        // [billing] starter_credit_cents
const WRITE_PRICE = 2;     // [billing] write_price_cents
const RUN_PRICE = 5;       // [billing] run_second_price_cents
const TIME_LIMIT_S = 4;    // [actions] timeout_ms / 1000: a run holds up to 4 * RUN_PRICE
const IPFS_TIMEOUT_MS = 1500;
let stack;
// The stack's only IPFS gateway: serves `gatewayFiles` (CID -> code), answers 503 for the CIDs in
// `gatewayDown` (a gateway failing on its own) and never answers for any other CID (one it cannot find).
const gatewayFiles = new Map();
const gatewayDown = new Set();
let gateway;
let provider;
let payer;       // an anvil wallet holding ETH for gas and minting tUSD
let token;
let payments;

const abi = (name) => JSON.parse(readFileSync(join(BUILD_DIR, `contracts/${name}.abi.json`), 'utf8'));
const balanceOf = async (key, headers) => {
  const r = await stack.request('GET', 'billing/balance', { key, headers });
  assert.equal(r.status, 200, r.text);
  return r.json.balance_cents;
};

before(async () => {
  gateway = createServer((req, res) => {
    const cid = req.url.split('/').pop();
    if (gatewayFiles.has(cid)) return res.end(gatewayFiles.get(cid));
    if (gatewayDown.has(cid)) { res.statusCode = 503; return res.end('down'); }
    // Unknown: hold the request open, as a gateway searching for a CID it cannot find.
  });
  await new Promise((r) => gateway.listen(0, '127.0.0.1', r));
  stack = await startStack({
    // A small pool (issue 23's pool would run a burst of 100 at once on 2 cores, each run then
    // longer than the one second the charges below assume); beyond it, 503 overloaded.
    workers: 2, maxWorkers: 4, supervisorOptions: ['reserve_workers = 1'],
    ipfsGateways: [`http://127.0.0.1:${gateway.address().port}/ipfs/`],
    actions: [`timeout_ms = ${TIME_LIMIT_S * 1000}`, `ipfs_timeout_ms = ${IPFS_TIMEOUT_MS}`],
    billing: { lines: [`starter_credit_cents = ${STARTER}`, `write_price_cents = ${WRITE_PRICE}`,
      `run_second_price_cents = ${RUN_PRICE}`, 'max_concurrent_runs_per_key = 0'] },
    nginxEnv: { SIGIL_MINT_RATE: '5r/s', SIGIL_MINT_BURST: '30' },
  });
  provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50 });
  const wallet = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [wallet.address, '0x8ac7230489e80000']);
  payer = new ethers.NonceManager(wallet);  // back-to-back transactions: count nonces locally
  token = new ethers.Contract(stack.token, abi('TestStablecoin'), payer);
  payments = new ethers.Contract(stack.payments, abi('Payments'), payer);
  await (await token.mint(wallet.address, 1_000_000n * 1_000_000n)).wait();
  await (await token.approve(stack.payments, ethers.MaxUint256)).wait();
});
after(async () => {
  if (stack?.anvilPid) try { process.kill(stack.anvilPid, 'SIGCONT'); } catch { /* gone */ }
  await stack?.stop();
  gateway?.closeAllConnections();
  gateway?.close();
});

/// Pays an intent's `pay` instructions on the dev chain with ethers.
async function pay(intent) {
  await (await payments.pay(intent.pay.reference, BigInt(intent.pay.amount))).wait();
}

test('payments_config names the chain processor, its token and payments contract', async () => {
  const r = assertOk(await stack.request('GET', 'billing/payments_config'));
  assert.equal(r.processor, 'chain');
  assert.equal(r.chain_id, Number(stack.chainId));
  assert.equal(r.token.toLowerCase(), stack.token.toLowerCase());
  assert.equal(r.payments_contract.toLowerCase(), stack.payments.toLowerCase());
  assert.equal(r.min_payment_cents, 500);
});

test('a new account starts with the starter credit; buying credits on the dev chain end to end, credited once', async () => {
  const { api_key: key } = await newAccount(stack, 'buyer');
  assert.equal(await balanceOf(key), STARTER);
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { key, body: { amount_cents: 500 } }));
  assert.match(intent.payment_intent_id, /^pi_[0-9a-f]{32}$/);
  assert.equal(intent.amount_cents, 500);
  assert.equal(intent.pay.amount, String(500n * 10_000n));  // 6 decimals: one cent is 10,000 units
  // Not paid yet: nothing credited.
  assertError(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: intent.payment_intent_id } }),
    402, 'payment_not_completed');
  const treasuryBefore = await token.balanceOf(stack.treasury);
  await pay(intent);
  assert.equal(await token.balanceOf(stack.treasury) - treasuryBefore, 5_000_000n);
  const confirmed = assertOk(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: intent.payment_intent_id } }));
  assert.deepEqual(confirmed, { success: true, credited_cents: 500, balance_cents: STARTER + 500, balance_display: ((STARTER + 500) / 100).toFixed(2) });
  // Confirming twice credits once.
  assertError(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: intent.payment_intent_id } }),
    409, 'payment_already_credited');
  assert.equal(await balanceOf(key), STARTER + 500);
});

test('create_payment_intent refuses amounts below 500 or not integers; confirm refuses another account\'s intent', async () => {
  const { api_key: key } = await newAccount(stack, 'amounts');
  for (const amount_cents of [499, 0, -5, 500.5, '500', null]) {
    assertError(await stack.request('POST', 'billing/create_payment_intent', { key, body: { amount_cents } }), 400, 'invalid_amount',
      JSON.stringify(amount_cents));
  }
  const other = await newAccount(stack, 'other');
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { key: other.api_key, body: { amount_cents: 600 } }));
  await pay(intent);
  assertError(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: intent.payment_intent_id } }),
    404, 'unknown_payment_intent');
  assertError(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: 'pi_nope' } }), 404, 'unknown_payment_intent');
  assert.equal(await balanceOf(key), STARTER);
  // The owner can still confirm its own.
  assert.equal(assertOk(await stack.request('POST', 'billing/confirm_payment', { key: other.api_key,
    body: { payment_intent_id: intent.payment_intent_id } })).credited_cents, 600);
  // Billing needs account auth.
  assertError(await stack.request('GET', 'billing/balance', {}), 401, 'missing_api_key');
});

test('a write charges its price; a failed write charges nothing; an empty balance is 402 before any work', async () => {
  const { api_key: key } = await newAccount(stack, 'writer');
  const group = await addGroup(stack, key, 'g1');
  assert.equal(await balanceOf(key), STARTER - WRITE_PRICE);
  // A write the contract refuses (an unknown group) is not charged.
  const failed = await stack.request('POST', 'remove_group', { key, body: { group_id: '999' } });
  assert.ok(failed.status >= 400, failed.text);
  assert.equal(await balanceOf(key), STARTER - WRITE_PRICE);
  // Spend the rest: STARTER / WRITE_PRICE writes in all.
  for (let i = 1; i < STARTER / WRITE_PRICE; i++) await addGroup(stack, key, `g${i + 1}`);
  assert.equal(await balanceOf(key), 0);
  const refused = await stack.request('POST', 'add_group', { key, body: { group_name: 'one too many', group_description: '' } });
  assertError(refused, 402, 'insufficient_credit');
  const groups = assertOk(await stack.request('GET', 'list_groups', { key, query: { page_number: 0, page_size: 100 } }));
  assert.equal(groups.length, STARTER / WRITE_PRICE, 'nothing was written');
  assert.ok(group);
});

async function runnableAccount(name) {
  const { api_key: key } = await newAccount(stack, name);
  const code = 'async function main() { return "ran"; }';
  const cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) }));
  const group = await addGroup(stack, key, 'runs');
  assertOk(await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cid } }));
  return { key, group };
}

test('a run charges a started second; a script error is charged; a refused run is not', async () => {
  const { key, group } = await runnableAccount('runner');
  const before = await balanceOf(key);
  const ok = assertOk(await stack.request('POST', 'sigil_action', { key, body: { code: 'async function main() { return "ran"; }' } }));
  assert.equal(ok.response, 'ran');
  assert.equal(await balanceOf(key), before - RUN_PRICE);
  const throws = 'async function main() { throw new Error("mine"); }';
  const cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(throws) }));
  assertOk(await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cid } }));
  const mid = await balanceOf(key);
  const thrown = assertOk(await stack.request('POST', 'sigil_action', { key, body: { code: throws } }));
  assert.equal(thrown.has_error, true);
  assert.equal(await balanceOf(key), mid - RUN_PRICE, 'the script ran: charged');
  const refused = await stack.request('POST', 'sigil_action', { key, body: { code: 'async function main() { return 1; }' } });
  assertError(refused, 403, 'not_authorized');
  assert.equal(await balanceOf(key), mid - RUN_PRICE, 'a refused run is free');
});

test('concurrent runs against a balance for 50 never overdraw: bursts of 100 run exactly 50 in all, the rest are 402', async () => {
  const { key } = await runnableAccount('parallel');
  // Spend down to exactly 50 runs' worth: the starter credit minus the two writes above is 16.
  let balance = await balanceOf(key);
  assert.equal(balance, STARTER - 2 * WRITE_PRICE);
  const code = 'async function main() { return "ran"; }';
  const target = 50 * RUN_PRICE;
  // Buy enough that the excess over `target` is a whole number of runs.
  const amount = 500 + ((RUN_PRICE - ((balance + 500 - target) % RUN_PRICE)) % RUN_PRICE);
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { key, body: { amount_cents: amount } }));
  await pay(intent);
  assertOk(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: intent.payment_intent_id } }));
  balance = await balanceOf(key);
  // Burn the excess with runs until the balance is exactly `target`.
  while (balance > target) {
    assertOk(await stack.request('POST', 'sigil_action', { key, body: { code } }));
    balance -= RUN_PRICE;
  }
  assert.equal(await balanceOf(key), target);
  // Each run holds what it may cost up to its time limit, so a burst admits only as many as the
  // balance holds at once; each settles at one second and gives the rest back for the next burst.
  let ran = 0;
  for (let burst = 0; burst < 30 && ran < 50; burst++) {
    const answers = await Promise.all(Array.from({ length: 100 }, () => stack.request('POST', 'sigil_action', { key, body: { code } })));
    const done = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 402);
    const overloaded = answers.filter((a) => a.status === 503 && a.json?.error?.code === 'overloaded');  // never started
    assert.equal(done.length + refused.length + overloaded.length, 100, `statuses: ${answers.map((a) => a.status).join(',')}`);
    assert.ok(refused.every((a) => a.json.error.code === 'insufficient_credit'));
    assert.ok(done.length > 0 || ran === 50, 'every burst with credit left runs something');
    ran += done.length;
    assert.equal(await balanceOf(key), target - ran * RUN_PRICE, 'never overdrawn, each run charged once');
  }
  assert.equal(ran, 50);
  assert.equal(await balanceOf(key), 0);
});

test('a usage key\'s on-chain balance caps what it spends: 402 spend_cap_reached, other keys unaffected', async () => {
  const { key: owner, group } = await runnableAccount('capped');
  const capped = assertOk(await stack.request('POST', 'add_usage_api_key', { key: owner, body: {
    name: 'capped', description: '', balance: 2 * RUN_PRICE, can_create_groups: false, can_delete_groups: false,
    can_create_pkps: false, manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [],
    execute_in_groups: [Number(group)] } })).usage_api_key;
  const code = 'async function main() { return "ran"; }';
  // Enough credit on the account that only the key's cap can refuse.
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { key: owner, body: { amount_cents: 500 } }));
  await pay(intent);
  assertOk(await stack.request('POST', 'billing/confirm_payment', { key: owner, body: { payment_intent_id: intent.payment_intent_id } }));
  const before = await balanceOf(owner);
  assertOk(await stack.request('POST', 'sigil_action', { key: capped, body: { code } }));
  assertOk(await stack.request('POST', 'sigil_action', { key: capped, body: { code } }));
  assertError(await stack.request('POST', 'sigil_action', { key: capped, body: { code } }), 402, 'spend_cap_reached');
  assert.equal(await balanceOf(owner), before - 2 * RUN_PRICE, 'the refused run charged nothing');
  // The account's own key is not held to the usage key's cap.
  assertOk(await stack.request('POST', 'sigil_action', { key: owner, body: { code } }));
});

/// An account whose key may run `code` (inline or by CID); answers {key, group, cid}.
async function accountFor(name, code) {
  const { api_key: key } = await newAccount(stack, name);
  const group = await addGroup(stack, key, 'runs');
  const cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) }));
  assertOk(await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cid } }));
  return { key, group, cid };
}

test('a script that logs one 3 MiB line gets a RangeError it can catch, and its run is charged', async () => {
  const code = `async function main() {
    let line = 'x'; while (line.length < 1024 * 1024) line += line; line = line + line + line;
    try { console.log(line); } catch (e) { return { name: e.name, message: e.message }; }
    return 'logged';
  }`;
  const { key } = await accountFor('big log', code);
  const before = await balanceOf(key);
  const r = assertOk(await stack.request('POST', 'sigil_action', { key, body: { code } }));
  assert.equal(r.has_error, false, JSON.stringify(r.error));
  assert.equal(r.response.name, 'RangeError');
  assert.match(r.response.message, /console line of 3145728 bytes exceeds/);
  assert.equal(await balanceOf(key), before - RUN_PRICE, 'the run started: charged (it was a free sandbox_crashed)');
  // Uncaught, it is the script's error, and charged as well.
  const uncaught = 'async function main() { let l = "x"; while (l.length < 3 * 1024 * 1024) l += l; console.log(l); }';
  const second = await accountFor('big log uncaught', uncaught);
  const mid = await balanceOf(second.key);
  const u = assertOk(await stack.request('POST', 'sigil_action', { key: second.key, body: { code: uncaught } }));
  assert.equal(u.has_error, true);
  assert.equal(u.error.name, 'RangeError');
  assert.equal(await balanceOf(second.key), mid - RUN_PRICE);
});

test('a run that times out is charged, its time limit cut to what the balance held (never more)', async () => {
  const code = 'async function main() { while (true) {} }';
  const { key } = await accountFor('endless', code);
  const before = await balanceOf(key);
  assert.equal(before, 16);  // 3 seconds' price, below the 4-second limit's 20
  const t = performance.now();
  const r = assertOk(await stack.request('POST', 'sigil_action', { key, body: { code } }));
  const took = performance.now() - t;
  assert.equal(r.has_error, true);
  assert.equal(r.error.code, 'time_limit');
  assert.match(r.error.message, /of 3 s \(what the account's credit or this key's spend cap could hold: 15 cents/);
  assert.ok(took < 3900, `cut at the held 3 s, not the configured 4 s (${Math.round(took)} ms)`);
  assert.equal(await balanceOf(key), before - 3 * RUN_PRICE, 'charged the held seconds it ran, and no more');
});

test('a usage key with a spend cap of 5 cents never spends more than 5, however long its run', async () => {
  const code = 'async function main() { const t = Date.now(); while (Date.now() - t < 3000) {} return "done"; }';
  const { key: owner, group } = await accountFor('cap five', code);
  const capped = assertOk(await stack.request('POST', 'add_usage_api_key', { key: owner, body: {
    name: 'five', description: '', balance: 5, can_create_groups: false, can_delete_groups: false,
    can_create_pkps: false, manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [],
    execute_in_groups: [Number(group)] } })).usage_api_key;
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { key: owner, body: { amount_cents: 500 } }));
  await pay(intent);
  assertOk(await stack.request('POST', 'billing/confirm_payment', { key: owner, body: { payment_intent_id: intent.payment_intent_id } }));
  const before = await balanceOf(owner);
  const r = assertOk(await stack.request('POST', 'sigil_action', { key: capped, body: { code } }));
  assert.equal(r.has_error, true);
  assert.equal(r.error.code, 'time_limit');
  assert.match(r.error.message, /of 1 s \(.*spend cap/);
  assert.equal(await balanceOf(owner), before - 5, 'the key spent its 5 cents, not the 15 its 3 s would cost');
  assertError(await stack.request('POST', 'sigil_action', { key: capped, body: { code } }), 402, 'spend_cap_reached');
  assert.equal(await balanceOf(owner), before - 5);
});

test('a chain call starved by the run\'s own deadline is the run\'s time limit, charged (not a refunded chain_timeout)', async () => {
  // The run spins until its held 3 s are almost up, then asks for a key that needs a chain read,
  // while the node is paused: the read gets the run's last ~200 ms and times out.
  const stranger = ethers.Wallet.createRandom().address.toLowerCase();
  const code = `async function main() {
    const t = Date.now(); while (Date.now() - t < 2800) {}
    return Sigil.Actions.getPublicKey({ pkpId: '${stranger}' });
  }`;
  const { key } = await accountFor('starved', code);
  const before = await balanceOf(key);
  const running = stack.request('POST', 'sigil_action', { key, body: { code } });
  await new Promise((r) => setTimeout(r, 2000));
  process.kill(stack.anvilPid, 'SIGSTOP');
  let r;
  try {
    r = await running;
  } finally {
    process.kill(stack.anvilPid, 'SIGCONT');
  }
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.has_error, true);
  assert.equal(r.json.error.code, 'time_limit');
  assert.match(r.json.error.message, /waited for the chain/);
  assert.equal(await balanceOf(key), before - 3 * RUN_PRICE);
});

test('runs by ipfs_id: waiting for a CID no gateway has is charged as run time; a gateway that fails on its own is refunded', async () => {
  const served = 'async function main() { return "served"; }';
  const missing = 'async function main() { return "nowhere"; }';
  const down = 'async function main() { return "down"; }';
  const { key, group, cid: servedCid } = await accountFor('by cid', served);
  const cidOf = async (code) => {
    const cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) }));
    assertOk(await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cid } }));
    return cid;
  };
  const missingCid = await cidOf(missing);
  const downCid = await cidOf(down);
  gatewayFiles.set(servedCid, served);
  gatewayDown.add(downCid);
  // Top up so every case has its full 4 s hold.
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { key, body: { amount_cents: 500 } }));
  await pay(intent);
  assertOk(await stack.request('POST', 'billing/confirm_payment', { key, body: { payment_intent_id: intent.payment_intent_id } }));
  let balance = await balanceOf(key);
  assert.equal(assertOk(await stack.request('POST', 'sigil_action', { key, body: { ipfs_id: servedCid } })).response, 'served');
  assert.equal(await balanceOf(key), balance -= RUN_PRICE);
  // The gateway holds the request until ipfs_timeout_ms (1.5 s): two started seconds.
  const t = performance.now();
  assertError(await stack.request('POST', 'sigil_action', { key, body: { ipfs_id: missingCid } }), 502, 'ipfs_unavailable');
  assert.ok(performance.now() - t >= IPFS_TIMEOUT_MS - 100);
  assert.equal(await balanceOf(key), balance -= 2 * RUN_PRICE, 'the caller chose the CID, and the wait');
  // 503 from the only gateway: the service's failure, nothing charged.
  assertError(await stack.request('POST', 'sigil_action', { key, body: { ipfs_id: downCid } }), 502, 'ipfs_unavailable');
  assert.equal(await balanceOf(key), balance);
});

test('Idempotency-Key: a retried write returns the first answer, runs once and is charged once', async () => {
  const { api_key: key } = await newAccount(stack, 'idempotent');
  const body = { group_name: 'once', group_description: 'retried' };
  const headers = { 'Idempotency-Key': 'add-group-once-1' };
  const first = await stack.request('POST', 'add_group', { key, body, headers });
  assert.equal(first.status, 200, first.text);
  const second = await stack.request('POST', 'add_group', { key, body, headers });
  assert.equal(second.status, 200);
  assert.equal(second.text, first.text);
  assert.equal(second.headers['idempotent-replayed'], 'true');
  assert.equal(await balanceOf(key), STARTER - WRITE_PRICE, 'charged once');
  const groups = assertOk(await stack.request('GET', 'list_groups', { key, query: { page_number: 0, page_size: 100 } }));
  assert.equal(groups.filter((g) => g.name === 'once').length, 1, 'written once');
  assertError(await stack.request('POST', 'add_group', { key, body: { ...body, group_name: 'other' }, headers }), 422, 'idempotency_key_reused');
  assertError(await stack.request('POST', 'add_group', { key, body, headers: { 'Idempotency-Key': 'has space' } }), 400, 'invalid_idempotency_key');
  // Keys are per account: another account's identical key runs on its own.
  const other = await newAccount(stack, 'idempotent other');
  const theirs = await stack.request('POST', 'add_group', { key: other.api_key, body, headers });
  assert.equal(theirs.status, 200);
  assert.equal(theirs.headers['idempotent-replayed'], undefined);
});

const walletAuth = (signer, overrides) => walletAuthOf(stack, signer, overrides);

test('X-Wallet-Auth: a ChainSecured admin reads its balance and buys credits; wrong signer, stale issuedAt, wrong primaryType refused', async () => {
  const admin = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [admin.address, '0x8ac7230489e80000']);
  await (await new ethers.Contract(stack.contract, accountConfigAbi(), admin).newChainSecuredAccount()).wait();
  const headers = { 'X-Wallet-Auth': await walletAuth(admin) };
  assert.equal(await balanceOf(undefined, headers), 0);
  const intent = assertOk(await stack.request('POST', 'billing/create_payment_intent', { headers, body: { amount_cents: 700 } }));
  await pay(intent);
  assert.equal(assertOk(await stack.request('POST', 'billing/confirm_payment', { headers,
    body: { payment_intent_id: intent.payment_intent_id } })).balance_cents, 700);
  const stranger = ethers.Wallet.createRandom();
  assertError(await stack.request('GET', 'billing/balance', { headers: { 'X-Wallet-Auth': await walletAuth(stranger) } }), 404, 'unknown_account');
  assertError(await stack.request('GET', 'billing/balance', { headers: { 'X-Wallet-Auth': await walletAuth(stranger, { address: admin.address }) } }),
    401, 'signature_mismatch');
  assertError(await stack.request('GET', 'billing/balance', { headers: { 'X-Wallet-Auth': await walletAuth(admin, { issuedAt: Math.floor(Date.now() / 1000) - 400 }) } }),
    401, 'issued_at_out_of_window');
  assertError(await stack.request('GET', 'billing/balance', { headers: { 'X-Wallet-Auth': await walletAuth(admin, { primaryType: 'CreateWallet' }) } }),
    400, 'wrong_primary_type');
  assertError(await stack.request('GET', 'billing/balance', { headers: { 'X-Wallet-Auth': 'not base64 json' } }), 400, 'invalid_wallet_auth');
});

test('conversion to ChainSecured moves the balance to the new admin\'s customer', async () => {
  const { api_key: key } = await newAccount(stack, 'converting');
  const before = await balanceOf(key);
  const admin = ethers.Wallet.createRandom();
  const { typed_data, signature } = await signedEnvelope(stack, admin, 'ConvertAccount');
  assertOk(await stack.request('POST', 'convert_to_chain_secured_account', { key,
    body: { new_admin_wallet_address: admin.address, typed_data, signature } }));
  assert.equal(await balanceOf(undefined, { 'X-Wallet-Auth': await walletAuth(admin) }), before - WRITE_PRICE);
});

test('a worker killed in the middle of a run leaves the ledger consistent: the hold stands, nothing else', async () => {
  const { key, group } = await runnableAccount('killed');
  const slow = 'async function main() { var t = Date.now(); while (Date.now() - t < 3000) {} return "late"; }';
  const cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(slow) }));
  assertOk(await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cid } }));
  const before = await balanceOf(key);
  const running = stack.request('POST', 'sigil_action', { key, body: { code: slow } });
  await new Promise((r) => setTimeout(r, 700));
  const { execFileSync } = await import('node:child_process');
  const supervisor = stack.pidOf('supervisor');
  const workers = execFileSync('pgrep', ['-P', String(supervisor), '-x', 'sigil-worker']).toString().trim().split('\n').map(Number);
  for (const pid of workers) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  const answer = await running;
  assert.equal(answer.status, 502, answer.text);
  // The hold stands: the worker died before settling. It is what the run could cost: the seconds
  // of its 4-second limit the balance covered (2 of them for 14 cents). Nothing more, nothing less.
  let after;
  for (let i = 0; i < 50; i++) {
    const r = await stack.request('GET', 'billing/balance', { key });
    if (r.status === 200) { after = r.json.balance_cents; break; }
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(before, 14);
  assert.equal(after, before - 2 * RUN_PRICE);
});

// Last: it spends this client's minting allowance.
test('nginx limits new_account per client address: 429 JSON with Retry-After', async () => {
  const answers = [];
  for (let i = 0; i < 45; i++) answers.push(await stack.request('POST', 'new_account', { body: { account_name: `burst ${i}`, account_description: '' } }));
  const limited = answers.filter((a) => a.status === 429);
  assert.ok(limited.length > 0, `statuses: ${answers.map((a) => a.status).join(',')}`);
  assert.equal(limited[0].json.error.code, 'rate_limited');
  assert.equal(limited[0].headers['retry-after'], '1');
  assert.ok(answers.every((a) => a.status === 200 || a.status === 429));
});
