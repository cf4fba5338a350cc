// Run history and caller context (issue 26) through the whole stack: list_runs lists exactly the runs
// made, by the right key, with the right costs and endings; filters and paging; a usage key sees only its
// own; another account sees nothing (404 for get_run); logs only when the owner turns them on, capped;
// pruning; a locked history database never holds up a run; Sigil.Actions.caller() and Lit.Actions'
// caller() / requesterIpAddress() answer who called.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { lockDatabase } from './sqlite_lock.mjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import {
  startStack, newAccount, addUsageKey, addGroup, actionCid, assertOk, assertError, eventually, keccakText, HASH32,
} from './stack.mjs';
import { SigilClient } from '../../clients/js/src/index.js';
import { stackFetch } from '../../clients/js/test/support.mjs';
import { sigil, cliHome } from '../../clients/cli/test/support.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function listRuns(stack, key, query = {}) {
  return stack.request('GET', 'list_runs', { key, query });
}

// Every page of list_runs for `key` (newest first), following next_cursor.
async function allRuns(stack, key, query = {}, limit = 2) {
  const out = [];
  let cursor = null;
  for (let i = 0; i < 100; i++) {
    const j = assertOk(await listRuns(stack, key, { ...query, limit, ...(cursor ? { cursor } : {}) }), 'list_runs page');
    out.push(...j.runs);
    if (j.next_cursor === null) return out;
    cursor = j.next_cursor;
  }
  throw new Error('list_runs paged forever');
}

async function listCid(stack, owner, group, code) {
  const cid = await actionCid(stack, code);
  assertOk(await stack.request('POST', 'add_action_to_group', { key: owner, body: { group_id: group, action_ipfs_cid: cid } }));
  return cid;
}

async function run(stack, key, code, params) {
  const r = await stack.request('POST', 'sigil_action', { key, body: { code, ...(params ? { js_params: params } : {}) } });
  return { r, id: r.headers['x-request-id'] };
}

async function balance(stack, key) {
  return assertOk(await stack.request('GET', 'billing/balance', { key })).balance_cents;
}

describe('run history with billing on (SQLite ledger)', () => {
  let stack;
  let owner;  // account A's master key
  let usage;  // account A's usage key, may execute on the group
  let other;  // account B's master key
  let group;
  const made = {};  // request id -> what the test expects

  const OK = 'async function main() { console.log("hello"); return { a: 1 }; }';
  const BOOM = 'function main() { throw new Error("boom"); }';
  const SPIN = 'function main() { for (;;) {} }';
  const CALLER = 'async function main() { return Sigil.Actions.caller(); }';
  const LIT_CALLER = 'async function main() { const c = await Lit.Actions.caller(); ' +
    'return { c, ip: await Lit.Actions.requesterIpAddress(), frozen: Object.isFrozen(Sigil.Actions.caller()) }; }';
  const LOGS = 'function main({ n }) { for (let i = 0; i < n; i++) console.log("x".repeat(99)); return n; }';

  before(async () => {
    stack = await startStack({
      billing: { lines: ['starter_credit_cents = 1000'] },
      actions: ['timeout_ms = 1500'],
      history: ['flush_interval_ms = 50'],
    });
    owner = (await newAccount(stack, 'history A')).api_key;
    other = (await newAccount(stack, 'history B')).api_key;
    group = await addGroup(stack, owner, 'runs');
    usage = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] }, 'runner');
    for (const code of [OK, BOOM, SPIN, CALLER, LIT_CALLER, LOGS]) await listCid(stack, owner, group, code);
  });
  after(async () => stack?.stop());

  test('lists exactly the runs made, by the right key, with their endings and costs', async () => {
    const before = await balance(stack, owner);
    let x = await run(stack, owner, OK);
    assert.equal(x.r.status, 200);
    assert.equal(x.r.json.has_error, false);
    made[x.id] = { key: owner, status: 'ok', error_code: null, cid: await actionCid(stack, OK) };
    x = await run(stack, usage, BOOM);
    assert.equal(x.r.json.error.code, 'script_error');
    made[x.id] = { key: usage, status: 'script_error', error_code: 'script_error', cid: await actionCid(stack, BOOM) };
    x = await run(stack, owner, SPIN);
    assert.equal(x.r.json.error.code, 'time_limit');
    made[x.id] = { key: owner, status: 'time_limit', error_code: 'time_limit', cid: await actionCid(stack, SPIN) };
    // Refused before anything ran: a CID no group of the key lists.
    x = await run(stack, usage, 'function main() { return "not listed"; }');
    assertError(x.r, 403, 'not_authorized');
    made[x.id] = { key: usage, status: 'refused', error_code: 'not_authorized', cid: await actionCid(stack, 'function main() { return "not listed"; }') };
    const spent = before - await balance(stack, owner);

    const runs = await eventually(async () => {
      const j = assertOk(await listRuns(stack, owner, { limit: 100 }));
      return j.runs.length >= 4 ? j.runs : null;
    }, 10000);
    assert.ok(runs, 'four runs recorded');
    assert.equal(runs.length, 4, JSON.stringify(runs));
    assert.deepEqual(new Set(runs.map((r) => r.request_id)), new Set(Object.keys(made)));
    for (let i = 1; i < runs.length; i++) assert.ok(runs[i - 1].started_ms >= runs[i].started_ms, 'newest first');
    let costs = 0;
    for (const r of runs) {
      const want = made[r.request_id];
      assert.equal(r.key_hash, keccakText(want.key), `key of ${r.status}`);
      assert.equal(r.account_hash, keccakText(owner));
      assert.equal(r.status, want.status);
      assert.equal(r.error_code, want.error_code);
      assert.equal(r.cid, want.cid);
      assert.equal(r.pkp_id, null);
      assert.ok(r.request_bytes > 0);
      assert.equal(r.logs, undefined, 'no logs unless the account turned them on');
      costs += r.cost_cents;
      if (r.status === 'ok') {
        assert.equal(r.cost_cents, 1);
        assert.equal(r.response_sha256, createHash('sha256').update('{"a":1}').digest('hex'));
        assert.ok(r.response_bytes > 0);
      }
      if (r.status === 'time_limit') assert.equal(r.cost_cents, 2, '1.5 s started two seconds');
      if (r.status === 'refused') {
        assert.equal(r.cost_cents, 0);
        assert.equal(r.response_sha256, null);
      }
    }
    assert.equal(costs, spent, 'the history costs add up to what the balance lost');
  });

  test('filters and paging', async () => {
    const all = await allRuns(stack, owner, {}, 1);
    assert.equal(all.length, 4);
    assert.equal(new Set(all.map((r) => r.request_id)).size, 4, 'paging repeats nothing');
    const mine = assertOk(await listRuns(stack, owner, { key_hash: keccakText(usage) })).runs;
    assert.deepEqual(mine.map((r) => r.status).sort(), ['refused', 'script_error']);
    assert.deepEqual(assertOk(await listRuns(stack, owner, { status: 'time_limit' })).runs.map((r) => r.status), ['time_limit']);
    const cid = await actionCid(stack, OK);
    assert.deepEqual(assertOk(await listRuns(stack, owner, { cid })).runs.map((r) => r.cid), [cid]);
    const times = all.map((r) => r.started_ms).sort((a, b) => a - b);
    const since = assertOk(await listRuns(stack, owner, { since: times[3] })).runs;
    assert.ok(since.length >= 1 && since.every((r) => r.started_ms >= times[3]));
    const until = assertOk(await listRuns(stack, owner, { until: times[0] })).runs;
    assert.equal(until.length, 0);
    assert.equal(assertOk(await listRuns(stack, owner, { since: times[0], until: times[3] + 1 })).runs.length, 4);
    for (const [query, what] of [[{ limit: 0 }, 'limit'], [{ limit: 101 }, 'limit'], [{ status: 'bogus' }, 'status'],
      [{ key_hash: '0x12' }, 'key_hash'], [{ cid: 'Qm123' }, 'cid'], [{ since: '-1' }, 'since'], [{ cursor: 'x' }, 'cursor']]) {
      assertError(await listRuns(stack, owner, query), 400, 'invalid_query', what);
    }
    assertError(await stack.request('GET', 'list_runs'), 401);
  });

  test('a usage key sees only its own runs; another account sees none', async () => {
    const own = assertOk(await listRuns(stack, usage)).runs;
    assert.equal(own.length, 2);
    assert.ok(own.every((r) => r.key_hash === keccakText(usage)));
    assert.equal(assertOk(await listRuns(stack, usage, { key_hash: keccakText(owner) })).runs.length, 0);
    const ownersRun = Object.keys(made).find((id) => made[id].key === owner);
    const usagesRun = Object.keys(made).find((id) => made[id].key === usage);
    assertError(await stack.request('GET', 'get_run', { key: usage, query: { request_id: ownersRun } }), 404, 'run_not_found');
    const got = assertOk(await stack.request('GET', 'get_run', { key: usage, query: { request_id: usagesRun } }));
    assert.equal(got.request_id, usagesRun);
    assert.equal(assertOk(await stack.request('GET', 'get_run', { key: owner, query: { request_id: usagesRun } })).key_hash,
      keccakText(usage));
    // Account B: nothing of A's, and get_run answers as for an unknown id (404, not 403).
    assert.equal(assertOk(await listRuns(stack, other)).runs.length, 0);
    assertError(await stack.request('GET', 'get_run', { key: other, query: { request_id: ownersRun } }), 404, 'run_not_found');
    assertError(await stack.request('GET', 'get_run', { key: other, query: { request_id: 'no-such-run' } }), 404, 'run_not_found');
    assertError(await stack.request('GET', 'get_run', { key: owner }), 400, 'invalid_query');
  });

  test('logs only when the owner turns them on, capped', async () => {
    assertError(await stack.request('POST', 'set_run_history_settings', { key: usage, body: { record_logs: true } }), 403, 'owner_only');
    assertError(await stack.request('POST', 'set_run_history_settings', { key: owner, body: { record_logs: 'yes' } }), 400);
    assert.equal(assertOk(await stack.request('GET', 'get_run_history_settings', { key: usage })).record_logs, false);
    const off = await run(stack, owner, LOGS, { n: 2 });
    // The setting applies to runs written from then on: the writer thread decides, off the run's path.
    assert.ok(await eventually(async () => (await stack.request('GET', 'get_run', { key: owner, query: { request_id: off.id } })).status === 200, 10000));
    const set = assertOk(await stack.request('POST', 'set_run_history_settings', { key: owner, body: { record_logs: true } }));
    assert.equal(set.record_logs, true);
    assert.equal(set.log_bytes, 16384);
    const small = await run(stack, usage, LOGS, { n: 2 });
    const big = await run(stack, owner, LOGS, { n: 300 });  // 30,000 bytes of logs
    assert.equal(big.r.json.logs.length, 30000);
    const get = async (id) => eventually(async () => {
      const r = await stack.request('GET', 'get_run', { key: owner, query: { request_id: id } });
      return r.status === 200 ? r.json : null;
    }, 10000);
    const offRow = await get(off.id);
    assert.equal(offRow.logs, undefined, 'a run made while logs were off keeps none');
    const smallRow = await get(small.id);
    assert.equal(smallRow.logs, small.r.json.logs);
    assert.equal(smallRow.logs_truncated, false);
    const bigRow = await get(big.id);
    assert.ok(bigRow.logs.length <= 16384 && bigRow.logs.length > 16000, `capped: ${bigRow.logs.length}`);
    assert.equal(bigRow.logs_truncated, true);
    assertOk(await stack.request('POST', 'set_run_history_settings', { key: owner, body: { record_logs: false } }));
  });

  test('the SDK and the CLI read the history', async () => {
    const client = new SigilClient({ baseUrl: `${stack.url}/core/v1`, fetch: stackFetch(stack), apiKey: owner });
    const all = [];
    for await (const r of client.allRuns({ limit: 2 })) all.push(r);
    const listed = assertOk(await listRuns(stack, owner, { limit: 100 })).runs;
    assert.deepEqual(all.map((r) => r.request_id), listed.map((r) => r.request_id));
    assert.equal((await client.getRun({ request_id: listed[0].request_id })).request_id, listed[0].request_id);
    const usageClient = client.withApiKey(usage);
    assert.ok((await usageClient.listRuns()).runs.every((r) => r.key_hash === keccakText(usage)));
    await assert.rejects(usageClient.setRunHistorySettings({ record_logs: true }), (e) => e.code === 'owner_only');

    const home = cliHome();
    try {
      const env = { ...home.env, HISTORY_KEY: owner };
      const common = ['--url', stack.url, '--key-env', 'HISTORY_KEY', '--ca-file', join(stack.home, 'nginx/tls/cert.pem'), '--json'];
      const list = await sigil(['runs', 'list', '--status', 'script_error', ...common], { env });
      assert.equal(list.code, 0, list.stderr);
      assert.deepEqual(list.json.runs.map((r) => r.status), ['script_error']);
      const got = await sigil(['runs', 'get', listed[0].request_id, ...common], { env });
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.json.request_id, listed[0].request_id);
      const human = await sigil(['runs', 'list', '--limit', '1', ...common.slice(0, -1)], { env });
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /more: sigil runs list --cursor [0-9]+\.[0-9]+/);
    } finally {
      home.remove();
    }
  });

  test('Sigil.Actions.caller() and Lit.Actions answer who called', async () => {
    for (const key of [owner, usage]) {
      const { r } = await run(stack, key, CALLER, { caller: 'forged' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.response, { apiKeyHash: keccakText(key), accountHash: keccakText(owner), clientAddress: '127.0.0.1' });
      assert.match(r.json.response.apiKeyHash, HASH32);
    }
    const { r } = await run(stack, usage, LIT_CALLER);
    assert.deepEqual(r.json.response, {
      c: { apiKeyHash: keccakText(usage), accountHash: keccakText(owner), clientAddress: '127.0.0.1' }, ip: '127.0.0.1', frozen: true,
    });
  });
});

describe('run history with billing off: pruning, and a locked database', () => {
  let stack;
  let owner;
  let dir;
  let db;
  const CODE = 'function main() { return 7; }';

  before(async () => {
    dir = mkdtempSync('/tmp/sigil-history-');
    db = join(dir, 'history.sqlite');
    stack = await startStack({
      history: [`database = ${db}`, 'keep_seconds = 8', 'prune_interval_ms = 300', 'flush_interval_ms = 50', 'queue_records = 4'],
    });
    owner = (await newAccount(stack, 'history C')).api_key;
    const group = await addGroup(stack, owner, 'runs');
    await listCid(stack, owner, group, CODE);
  });
  after(async () => {
    await stack?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const dropped = async () => {
    const text = await (await fetch(`${stack.operatorUrl}/metrics`)).text();
    const m = text.match(/^sigil_history_records_dropped_total (\d+)$/m);
    assert.ok(m, 'sigil_history_records_dropped_total is exported');
    return Number(m[1]);
  };

  test('a locked history database holds up no run; what the queue holds is written once it is free, the rest counted', async () => {
    assert.equal(await dropped(), 0);
    const release = await lockDatabase(db);
    const ids = [];
    try {
      const started = Date.now();
      for (let i = 0; i < 8; i++) {
        const { r, id } = await run(stack, owner, CODE);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.response, 7);
        ids.push(id);
      }
      // Each run took its usual milliseconds: none waited for the database (its busy timeout is 1 s).
      const took = Date.now() - started;
      assert.ok(took < 8 * 1000, `8 runs took ${took} ms with the history database locked`);
      await sleep(300);
      // While locked, nothing of them is written (WAL readers still read: the list is just empty).
      const during = await listRuns(stack, owner);
      if (during.status === 200) assert.equal(during.json.runs.length, 0);
      else assertError(during, 503, 'history_unavailable');
    } finally {
      await release();
    }
    // Each worker's queue holds 4 records (queue_records = 4): the 8 runs are either written once the
    // database is free or dropped, logged and counted in /metrics; none is lost silently.
    const settled = await eventually(async () => {
      const j = assertOk(await listRuns(stack, owner, { limit: 100 }));
      const lost = await dropped();
      return j.runs.length + lost === ids.length ? { runs: j.runs, lost } : null;
    }, 15000, 250);
    assert.ok(settled, 'every run is written or counted as dropped');
    assert.ok(settled.runs.length >= 1, 'what the queue held is written');
    assert.ok(settled.runs.every((r) => ids.includes(r.request_id) && r.status === 'ok' && r.cost_cents === 0));
  });

  test('runs older than the keep time are pruned in the background', async () => {
    const { id } = await run(stack, owner, CODE);
    const seen = await eventually(async () => (await stack.request('GET', 'get_run', { key: owner, query: { request_id: id } })).status === 200, 5000);
    assert.ok(seen, 'recorded');
    const gone = await eventually(async () => assertOk(await listRuns(stack, owner)).runs.length === 0, 25000, 250);
    assert.ok(gone, 'every run is pruned once older than keep_seconds = 8');
    assertError(await stack.request('GET', 'get_run', { key: owner, query: { request_id: id } }), 404, 'run_not_found');
  });
});
