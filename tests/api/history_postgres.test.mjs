// Run history on PostgreSQL through the whole stack (issue 26): with billing on a PostgreSQL ledger the
// history lives in the same database and list_runs lists exactly the runs made, with their keys, endings
// and costs, and the admin of a ChainSecured account reads them with X-Wallet-Auth (a wrong signer is
// refused); a history database that is stopped holds up no run: the workers keep the records queued and
// write them once it is back (within [history] queue_records per worker; more would be counted dropped).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  startStack, newAccount, addUsageKey, addGroup, actionCid, assertOk, assertError, eventually, keccakText, ethers, signedEnvelope, walletAuth,
} from './stack.mjs';
import { startPostgres } from './postgres.mjs';

const OK = 'async function main() { return { a: 1 }; }';
const BOOM = 'function main() { throw new Error("boom"); }';

let pg;
before(async () => { pg = await startPostgres(); });
after(async () => { await pg?.stop(); });

async function run(stack, key, code) {
  const r = await stack.request('POST', 'sigil_action', { key, body: { code } });
  return { r, id: r.headers['x-request-id'] };
}

// Every run list_runs lists for `key` (pages of 100).
async function allRuns(stack, key) {
  const out = [];
  let cursor = null;
  for (let i = 0; i < 100; i++) {
    const j = assertOk(await stack.request('GET', 'list_runs', { key, query: { limit: 100, ...(cursor ? { cursor } : {}) } }));
    out.push(...j.runs);
    if (j.next_cursor === null) return out;
    cursor = j.next_cursor;
  }
  throw new Error('list_runs paged forever');
}

async function runnable(stack, name) {
  const owner = (await newAccount(stack, name)).api_key;
  const group = await addGroup(stack, owner, 'runs');
  const usage = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] }, 'runner');
  for (const code of [OK, BOOM]) {
    assertOk(await stack.request('POST', 'add_action_to_group',
      { key: owner, body: { group_id: group, action_ipfs_cid: await actionCid(stack, code) } }));
  }
  return { owner, usage };
}

describe('run history with billing on PostgreSQL', () => {
  let stack;
  let owner;
  let usage;
  before(async () => {
    stack = await startStack({
      billing: { database: pg.url, lines: ['starter_credit_cents = 1000'] },
      history: ['flush_interval_ms = 50'],
    });
    ({ owner, usage } = await runnable(stack, 'history on postgres'));
  });
  after(async () => { await stack?.stop(); });

  test('list_runs lists exactly the runs made, by the right key, with their endings and costs', async () => {
    const balance = async () => assertOk(await stack.request('GET', 'billing/balance', { key: owner })).balance_cents;
    const before = await balance();
    const made = {};
    for (const [key, code, status] of [[owner, OK, 'ok'], [usage, BOOM, 'script_error'], [usage, OK, 'ok'], [owner, OK, 'ok']]) {
      const { r, id } = await run(stack, key, code);
      assert.equal(r.status, 200, r.text);
      made[id] = { key, status };
    }
    const spent = before - await balance();
    const runs = await eventually(async () => {
      const listed = await allRuns(stack, owner);
      return listed.length >= 4 ? listed : null;
    }, 15000, 200);
    assert.ok(runs, 'the four runs are listed');
    assert.equal(runs.length, 4, JSON.stringify(runs));
    assert.deepEqual(new Set(runs.map((r) => r.request_id)), new Set(Object.keys(made)));
    let costs = 0;
    for (const r of runs) {
      assert.equal(r.key_hash, keccakText(made[r.request_id].key));
      assert.equal(r.account_hash, keccakText(owner));
      assert.equal(r.status, made[r.request_id].status);
      assert.equal(r.cid, await actionCid(stack, made[r.request_id].status === 'ok' ? OK : BOOM));
      assert.ok(r.cost_cents >= 1, 'every run that ran was charged');
      costs += r.cost_cents;
    }
    assert.equal(costs, spent, 'the history costs add up to what the PostgreSQL ledger charged');
    // A usage key sees its own two runs; get_run reads one from PostgreSQL.
    assert.equal((await allRuns(stack, usage)).length, 2);
    const one = Object.keys(made)[0];
    assert.equal(assertOk(await stack.request('GET', 'get_run', { key: owner, query: { request_id: one } })).request_id, one);
  });

  test('the owner of a ChainSecured account reads its history with X-Wallet-Auth; a wrong signer is refused', async () => {
    const acct = await runnable(stack, 'history wallet owner');
    const ids = [];
    for (const [key, code] of [[acct.owner, OK], [acct.usage, BOOM]]) {
      const { r, id } = await run(stack, key, code);
      assert.equal(r.status, 200, r.text);
      ids.push(id);
    }
    const admin = ethers.Wallet.createRandom();
    const { typed_data, signature } = await signedEnvelope(stack, admin, 'ConvertAccount');
    assertOk(await stack.request('POST', 'convert_to_chain_secured_account', { key: acct.owner,
      body: { new_admin_wallet_address: admin.address, typed_data, signature } }));
    const as = async (signer, overrides) => ({ 'X-Wallet-Auth': await walletAuth(stack, signer, overrides) });
    const listed = await eventually(async () => {
      const j = assertOk(await stack.request('GET', 'list_runs', { headers: await as(admin), query: { limit: 100 } }));
      return j.runs.length >= 2 ? j.runs : null;
    }, 15000, 200);
    assert.ok(listed, 'the admin lists the account\'s runs');
    assert.deepEqual(new Set(listed.map((r) => r.request_id)), new Set(ids), 'every run of the account, the usage key\'s too');
    assert.ok(listed.every((r) => r.account_hash === keccakText(acct.owner)));
    const got = assertOk(await stack.request('GET', 'get_run', { headers: await as(admin), query: { request_id: ids[1] } }));
    assert.equal(got.status, 'script_error');
    // Refused: another wallet signing for the admin's address, a wallet that administers no account, an
    // envelope of another type, and X-Wallet-Auth beside an API key.
    const stranger = ethers.Wallet.createRandom();
    assertError(await stack.request('GET', 'list_runs', { headers: await as(stranger, { address: admin.address }) }), 401, 'signature_mismatch');
    assertError(await stack.request('GET', 'get_run', { headers: await as(stranger, { address: admin.address }), query: { request_id: ids[0] } }),
      401, 'signature_mismatch');
    assertError(await stack.request('GET', 'list_runs', { headers: await as(stranger) }), 404, 'unknown_account');
    assertError(await stack.request('GET', 'list_runs', { headers: await as(admin, { primaryType: 'CreateWallet' }) }), 400, 'wrong_primary_type');
    assertError(await stack.request('GET', 'list_runs', { key: acct.usage, headers: await as(admin) }), 400, 'ambiguous_auth');
    // Another account's admin sees none of these runs.
    assertError(await stack.request('GET', 'get_run', { key: owner, query: { request_id: ids[0] } }), 404, 'run_not_found');
  });
});

describe('a stopped PostgreSQL history database holds up no run', () => {
  let stack;
  let owner;
  before(async () => {
    // Billing on its SQLite ledger (so runs are billable while PostgreSQL is down), the history on PostgreSQL.
    stack = await startStack({
      billing: { lines: ['starter_credit_cents = 1000'] },
      history: [`database = ${pg.url}`, 'flush_interval_ms = 50'],
    });
    ({ owner } = await runnable(stack, 'history database stopped'));
  });
  after(async () => { await stack?.stop(); });

  test('runs go on while it is down; their records are written once it is back', async () => {
    const ids = [];
    const first = await run(stack, owner, OK);
    assert.equal(first.r.status, 200, first.r.text);
    ids.push(first.id);
    assert.ok(await eventually(async () => (await allRuns(stack, owner)).length === 1, 15000, 200), 'the first run is listed');

    await pg.down();
    try {
      const started = Date.now();
      for (let i = 0; i < 6; i++) {
        const { r, id } = await run(stack, owner, i % 2 ? BOOM : OK);
        assert.equal(r.status, 200, r.text);
        ids.push(id);
      }
      const took = Date.now() - started;
      assert.ok(took < 6 * 2000, `6 runs took ${took} ms with the history database down`);
      // The reads need the database: 502 (a dependency unreachable), as for the ledger.
      assertError(await stack.request('GET', 'list_runs', { key: owner }), 502, 'history_unavailable');
    } finally {
      await pg.up();
    }
    // Reads reconnect too (a failed open is retried after 1 s: 502 until then).
    const listed = await eventually(async () => {
      const runs = await allRuns(stack, owner).catch(() => []);
      return runs.length >= ids.length ? runs : null;
    }, 20000, 250);
    assert.ok(listed, 'the queued records are written once PostgreSQL is back');
    assert.deepEqual(new Set(listed.map((r) => r.request_id)), new Set(ids));
    const text = await (await fetch(`${stack.operatorUrl}/metrics`)).text();
    assert.match(text, /^sigil_history_records_dropped_total 0$/m, 'nothing was dropped');
  });
});
