// Several instances, one service (issue 24): two full instances (each its own keyd, supervisor,
// workers and nginx) sharing one chain, one PostgreSQL ledger and one root key, behind an nginx load
// balancer (tests/api/cluster.mjs). What one instance did, every instance sees; keys derive the same
// everywhere; concurrent relayed writes on both never share a payer's nonce sequence; credits, charges
// and Idempotency-Key answers happen once for the cluster.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster } from '../api/cluster.mjs';
import {
  assertOk, assertSuccess, newAccount, addGroup, createWallet, actionRunner, keccakText, chainRpc, ethers, BUILD_DIR, eventually, assertError,
} from '../api/stack.mjs';

let cluster;
const STARTER = 1000;

before(async () => {
  cluster = await startCluster({ instances: 2, workers: 2, payers: 8, billingLines: [`starter_credit_cents = ${STARTER}`] });
});
after(async () => {
  await cluster?.stop();
});

const via = (i) => cluster.instances[i];
const balance = async (i, key) => assertOk(await via(i).request('GET', '/core/v1/billing/balance', { key }), 'balance').balance_cents;

test('the balancer reaches both instances, and each instance leases only its own share of the payers', async () => {
  const shares = [cluster.payerShare(0), cluster.payerShare(1)];
  assert.equal(shares[0].length + shares[1].length, 8);
  assert.equal(new Set([...shares[0], ...shares[1]]).size, 8, 'the shares are disjoint');
  for (let i = 0; i < 2; i++) assertOk(await via(i).request('GET', '/health'), `instance ${i} /health`);
  assertOk(await cluster.request('GET', '/health'), 'balancer /health');
  assertOk(await cluster.request('GET', 'version'), 'balancer version');
});

test('the same account, keys, groups and PKPs through every instance; a PKP signs the same on each', async () => {
  const acct = await newAccount(via(0), 'made on instance 0');
  // Created through instance 0, seen by instance 1 (the chain holds the configuration).
  assert.equal(assertOk(await via(1).request('GET', 'account_exists', { key: acct.api_key })), true);
  const pkp = await createWallet(via(1), acct.api_key);
  const group = await addGroup(via(0), acct.api_key, 'shared', { pkp_ids_permitted: [pkp] });
  const usage = assertSuccess(await via(1).request('POST', 'add_usage_api_key', {
    key: acct.api_key,
    body: { name: 'u', description: 'made on instance 1', can_create_groups: false, can_delete_groups: false, can_create_pkps: false,
      manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [], execute_in_groups: [Number(group)] },
  })).usage_api_key;

  const lists = [];
  for (let i = 0; i < 2; i++) {
    const groups = assertOk(await via(i).request('GET', 'list_groups', { key: acct.api_key, query: { page_size: 100 } }));
    const wallets = assertOk(await via(i).request('GET', 'list_wallets', { key: acct.api_key, query: { page_size: 100 } }));
    const keys = assertOk(await via(i).request('GET', 'list_api_keys', { key: acct.api_key, query: { page_size: 100 } }));
    lists.push(JSON.stringify({ groups, wallets, keys }));
  }
  assert.equal(lists[0], lists[1], 'both instances list the same groups, wallets and keys');
  assert.ok(lists[0].includes(pkp.toLowerCase()) || lists[0].includes(pkp), 'the PKP is listed');

  const code = 'async function main({ pkpId }) { return await Sigil.Actions.signMessage({ pkpId, message: "one service" }); }';
  // Listed in the group through instance 0; then the usage key runs it on each instance.
  const sigs = [(await actionRunner(via(0), { owner: acct.api_key, group, key: usage, pkp })(code, { pkpId: pkp })).response];
  const again = await via(1).request('POST', 'sigil_action', { key: usage, body: { code, pkp_id: pkp, js_params: { pkpId: pkp } } });
  assert.equal(again.status, 200, again.text.slice(0, 300));
  sigs.push(again.json.response);
  assert.match(sigs[0], /^0x[0-9a-f]{130}$/);
  assert.equal(sigs[0], sigs[1], 'the PKP signs the same on both instances');
  assert.equal(ethers.verifyMessage('one service', sigs[0]).toLowerCase(), pkp.toLowerCase(), 'the signature recovers to the PKP');
});

test('concurrent relayed writes through both instances: no nonce error, each on chain once, the payers disjoint', async () => {
  const accts = [await newAccount(via(0), 'writer 0'), await newAccount(via(1), 'writer 1')];
  const startBlock = Number(await chainRpc(cluster.chain, 'eth_blockNumber', []));
  const PER = 12;
  const results = [[], []];
  // Three writes in flight per instance at once, both instances at the same time.
  await Promise.all([0, 1].map(async (i) => {
    for (let k = 0; k < PER; k += 3) {
      const batch = await Promise.all([0, 1, 2].map((j) => via(i).request('POST', 'add_group', {
        key: accts[i].api_key,
        body: { group_name: `g${i}-${k + j}`, group_description: 'cluster', pkp_ids_permitted: [], cid_hashes_permitted: [] },
      })));
      results[i].push(...batch);
    }
  }));
  const groupIds = [new Set(), new Set()];
  for (let i = 0; i < 2; i++) {
    for (const r of results[i]) {
      const j = assertSuccess(r, `add_group on instance ${i}`);
      groupIds[i].add(j.group_id);
    }
    assert.equal(groupIds[i].size, PER, `instance ${i}: every write acknowledged with its own group`);
  }
  // Every acknowledged write's group is on chain, once (seen through the other instance too).
  for (let i = 0; i < 2; i++) {
    const listed = assertOk(await via(1 - i).request('GET', 'list_groups', { key: accts[i].api_key, query: { page_size: 100 } }));
    const names = JSON.stringify(listed);
    for (let k = 0; k < PER; k++) assert.equal(names.split(`"g${i}-${k}"`).length - 1, 1, `g${i}-${k} listed once`);
  }
  // The transactions: each names its caller's key hash; account i's went out from instance i's share only.
  const endBlock = Number(await chainRpc(cluster.chain, 'eth_blockNumber', []));
  const hashes = accts.map((a) => keccakText(a.api_key).slice(2).toLowerCase());
  const senders = [new Set(), new Set()];
  const mined = [0, 0];
  for (let b = startBlock + 1; b <= endBlock; b++) {
    const block = await chainRpc(cluster.chain, 'eth_getBlockByNumber', ['0x' + b.toString(16), true]);
    for (const tx of block.transactions) {
      if (tx.to?.toLowerCase() !== cluster.chain.contract.toLowerCase()) continue;
      for (let i = 0; i < 2; i++) {
        if (!tx.input.toLowerCase().includes(hashes[i])) continue;
        const receipt = await chainRpc(cluster.chain, 'eth_getTransactionReceipt', [tx.hash]);
        if (receipt.status === '0x1') mined[i]++;
        senders[i].add(tx.from.toLowerCase());
      }
    }
  }
  for (let i = 0; i < 2; i++) {
    assert.equal(mined[i], PER, `instance ${i}: ${PER} writes mined, each once`);
    const share = new Set(cluster.payerShare(i));
    for (const s of senders[i]) assert.ok(share.has(s), `instance ${i} sent from ${s}, outside its share`);
  }
  assert.ok(senders[0].size >= 1 && senders[1].size >= 1);
});

test('Idempotency-Key answers once for the cluster: instance 0 then instance 1 give the same answer and one charge', async () => {
  const acct = await newAccount(via(0), 'idempotent');
  const before = await balance(1, acct.api_key);
  const headers = { 'Idempotency-Key': 'cluster-once' };
  const body = { group_name: 'once', group_description: 'idempotent', pkp_ids_permitted: [], cid_hashes_permitted: [] };
  const first = assertSuccess(await via(0).request('POST', 'add_group', { key: acct.api_key, body, headers }), 'first');
  const second = assertSuccess(await via(1).request('POST', 'add_group', { key: acct.api_key, body, headers }), 'replayed');
  assert.equal(second.group_id, first.group_id, 'the same answer from the other instance');
  const third = assertSuccess(await cluster.request('POST', 'add_group', { key: acct.api_key, body, headers }), 'via balancer');
  assert.equal(third.group_id, first.group_id);
  assert.equal(await balance(0, acct.api_key), before - 1, 'one write charged once');
  const listed = JSON.stringify(assertOk(await via(1).request('GET', 'list_groups', { key: acct.api_key, query: { page_size: 100 } })));
  assert.equal(listed.split('"once"').length - 1, 1, 'one group on chain');
  const stored = cluster.sql("SELECT count(*) FROM idempotency WHERE scope LIKE '%cluster-once%'");
  assert.ok(Number(stored[0]) <= 1, 'one stored answer');
});

test('concurrent charges through both instances and the balancer sum exactly', async () => {
  const acct = await newAccount(via(1), 'spender');
  const group = await addGroup(via(0), acct.api_key, 'runs');
  const code = 'async function main() { return "hello"; }';
  // List the CID once; then 24 runs, a third each straight to instance 0, instance 1 and the balancer.
  const runner = actionRunner(via(0), { owner: acct.api_key, group, key: acct.api_key });
  await runner(code);
  // A run is settled as its worker finishes it, possibly just after the answer: wait until the warm-up's is.
  let before = await balance(0, acct.api_key);
  for (let stable = 0; stable < 2;) {
    await new Promise((r) => setTimeout(r, 300));
    const now = await balance(0, acct.api_key);
    stable = now === before ? stable + 1 : 0;
    before = now;
  }
  const targets = [via(0), via(1), { request: cluster.request }];
  // Waves of 6 at once (2 per target): under the key's runs-in-flight cap (8 by default, for the cluster).
  const N = 24;
  const answers = [];
  for (let wave = 0; wave < N; wave += 6) {
    answers.push(...await Promise.all(Array.from({ length: 6 }, (_, k) =>
      targets[k % 3].request('POST', 'sigil_action', { key: acct.api_key, body: { code } }))));
  }
  for (const r of answers) assert.equal(r.status, 200, r.text.slice(0, 200));
  const ids = answers.map((r) => r.headers['x-request-id']);
  assert.equal(new Set(ids).size, N, 'distinct request ids');
  const inList = ids.map((i) => `'${i}'`).join(',');
  // Each run charged once: one charge entry (the hold) per request id, in the one ledger.
  const rows = cluster.sql(`SELECT request_id, count(*) FROM entries WHERE kind = 'charge' AND request_id IN (${inList}) GROUP BY request_id`);
  assert.equal(rows.length, N, 'a charge entry for each acknowledged run');
  for (const row of rows) assert.equal(row.split('|')[1], '1', `one charge for ${row}`);
  // And the balance, read through the other instance, fell by exactly what those runs cost: a credit per
  // started second each (a run over a second on this loaded machine costs two), settled before its answer.
  // A settlement row per run (the hold of its time limit turned into its cost), each naming its charge.
  const settlement = `FROM settlements s JOIN entries e ON e.id = s.charge_id WHERE e.request_id IN (${inList})`;
  const settled = await eventually(() => Number(cluster.sql(`SELECT count(*) ${settlement}`)[0]) === N, 10000, 200);
  assert.ok(settled, 'every run settled once');
  const cost = Number(cluster.sql(`SELECT sum(s.charged) ${settlement}`)[0]);
  assert.ok(cost >= N, `each run cost at least a credit (${cost})`);
  const after = await eventually(async () => { const b = await balance(1, acct.api_key); return b === before - cost ? b : null; }, 5000, 200);
  assert.equal(after, before - cost, 'the balance fell by exactly the charges');
});

test('a key\'s runs in flight are capped for the cluster, not per instance (guardrails in the shared ledger)', async () => {
  const acct = await newAccount(via(0), 'capped');
  const group = await addGroup(via(1), acct.api_key, 'slow');
  const usage = assertSuccess(await via(0).request('POST', 'add_usage_api_key', {
    key: acct.api_key,
    body: { name: 'capped', description: 'two runs at once for the whole cluster', can_create_groups: false, can_delete_groups: false,
      can_create_pkps: false, manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [], execute_in_groups: [Number(group)] },
  })).usage_api_key;
  const CAP = 2;
  // Set through instance 1, held by the ledger both instances share.
  assertOk(await via(1).request('POST', 'set_usage_api_key_guardrails', { key: acct.api_key, body: { usage_api_key: usage, max_runs_in_flight: CAP } }));
  // A run that holds its slot for seconds (computing: the admitted ones overlap every other request's admission).
  const slow = 'async function main() { const t = Date.now(); while (Date.now() - t < 4000) {} return "done"; }';
  const quick = 'async function main() { return "quick"; }';
  const runner = actionRunner(via(0), { owner: acct.api_key, group, key: usage });
  await runner(quick);
  await actionRunner(via(0), { owner: acct.api_key, group, key: acct.api_key })(slow);  // listed; ran by the master key
  // Three at once straight to each instance: per instance they would all fit (3 > CAP, but 3 + 3 would
  // pass a per-instance cap of CAP twice over); for the cluster exactly CAP run.
  const answers = await Promise.all(Array.from({ length: 6 }, (_, k) =>
    via(k % 2).request('POST', 'sigil_action', { key: usage, body: { code: slow } })));
  const statuses = answers.map((r) => r.status).join(' ');
  const ok = answers.filter((r) => r.status === 200);
  const refused = answers.filter((r) => r.status === 429);
  assert.equal(ok.length, CAP, `exactly ${CAP} ran (${statuses})`);
  assert.equal(refused.length, 6 - CAP, `the rest refused (${statuses})`);
  for (const r of refused) assertError(r, 429, 'too_many_runs');
  for (const r of ok) assert.equal(r.json.response, 'done');
  // The slots are given back when the runs end: the key runs again on either instance.
  for (let i = 0; i < 2; i++) assert.equal(assertOk(await via(i).request('POST', 'sigil_action', { key: usage, body: { code: quick } })).response, 'quick');
});

test('the supervisor refuses a payer share that cannot be: an index outside the count, fewer payers than instances', () => {
  const dir = mkdtempSync('/tmp/sigil-share-');
  try {
    const check = (lines) => {
      writeFileSync(join(dir, 'c.conf'), `[chain]\n${lines.join('\n')}\n`);
      return spawnSync(join(BUILD_DIR, 'bin/sigil-supervisor'), ['-c', join(dir, 'c.conf'), '--check'], { encoding: 'utf8' });
    };
    assert.equal(check(['payers = 8', 'instance_index = 1', 'instance_count = 2']).status, 0, 'a good share passes');
    const outside = check(['payers = 8', 'instance_index = 2', 'instance_count = 2']);
    assert.notEqual(outside.status, 0);
    assert.match(outside.stderr + outside.stdout, /instance_index/);
    const short = check(['payers = 2', 'instance_index = 0', 'instance_count = 3']);
    assert.notEqual(short.status, 0);
    assert.match(short.stderr + short.stdout, /payers/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a payment confirmed on every instance at once is credited once', async () => {
  const acct = await newAccount(via(0), 'buyer');
  const abi = (name) => JSON.parse(readFileSync(join(BUILD_DIR, `contracts/${name}.abi.json`), 'utf8'));
  const provider = new ethers.JsonRpcProvider(cluster.chain.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50 });
  try {
    const wallet = ethers.Wallet.createRandom().connect(provider);
    await provider.send('anvil_setBalance', [wallet.address, '0x8ac7230489e80000']);
    const payer = new ethers.NonceManager(wallet);
    const token = new ethers.Contract(via(0).token, abi('TestStablecoin'), payer);
    const payments = new ethers.Contract(via(0).payments, abi('Payments'), payer);
    await (await token.mint(wallet.address, 10_000_000_000n)).wait();
    await (await token.approve(via(0).payments, ethers.MaxUint256)).wait();
    const before = await balance(0, acct.api_key);
    const intent = assertOk(await via(0).request('POST', 'billing/create_payment_intent', { key: acct.api_key, body: { amount_cents: 500 } }));
    await (await payments.pay(intent.pay.reference, BigInt(intent.pay.amount))).wait();
    const body = { payment_intent_id: intent.payment_intent_id };
    const answers = await Promise.all([via(0), via(1), { request: cluster.request }, via(1)].map((t) =>
      t.request('POST', 'billing/confirm_payment', { key: acct.api_key, body })));
    const credited = answers.filter((r) => r.status === 200);
    assert.equal(credited.length, 1, answers.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join('\n'));
    assert.equal(credited[0].json.credited_cents, 500);
    for (const r of answers.filter((x) => x.status !== 200)) assertError(r, 409, 'payment_already_credited');
    assert.equal(await balance(1, acct.api_key), before + 500, 'credited once, seen on the other instance');
  } finally {
    provider.destroy();
  }
});
