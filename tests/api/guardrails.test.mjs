// Key guardrails through the whole stack (issue 26): set, read and clear by the account's admin only;
// run rates per key and per client address (distinct loopback source addresses) at and over their
// limits with Retry-After; runs in flight; a rolling spend cap hit by 100 concurrent runs stops at
// exactly the cap, on SQLite and on PostgreSQL; Origins refused and allowed with their CORS headers;
// a guardrails store that is down refuses runs with 503.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import {
  startStack, assertError, assertOk, newAccount, addGroup, addUsageKey, actionCid, keccakText, httpsRequest,
} from './stack.mjs';
import { startPostgres } from './postgres.mjs';

const STARTER = 1000;  // [billing] starter_credit_cents
const HELLO = 'async function main() { return "hello"; }';
const SLOW = 'async function main() { const t = Date.now(); while (Date.now() - t < 700) {} return "slow"; }';
let stack;

// Runs cost 1 cent a second and hold 1 second (the time limit), so each admitted run costs exactly 1.
const stackOptions = (database) => ({
  // A bounded pool (nginx answers 503 overloaded past it at once), so 100 runs at once do not bury
  // this shared machine's chain node and database under a hundred workers.
  workers: 2, maxWorkers: 12, actions: ['timeout_ms = 1000'],
  billing: { database, lines: [`starter_credit_cents = ${STARTER}`, 'run_second_price_cents = 1'] },
});

before(async () => { stack = await startStack(stackOptions(undefined)); });
after(async () => { await stack?.stop(); });

/// An account with a usage key that may run HELLO and SLOW: {owner, key, hash, run(code, opts)}.
async function setup(s = stack) {
  const { api_key: owner } = await newAccount(s, 'guarded');
  const group = await addGroup(s, owner, 'runs');
  for (const code of [HELLO, SLOW]) {
    assertOk(await s.request('POST', 'add_action_to_group', { key: owner, body: { group_id: group, action_ipfs_cid: await actionCid(s, code) } }));
  }
  const key = await addUsageKey(s, owner, { execute_in_groups: [Number(group)] });
  const agents = new Map();
  // A run from `from` (a loopback source address: nginx sees it as REMOTE_ADDR) with extra headers.
  const run = (code = HELLO, { from = null, headers = {} } = {}) => {
    if (!from) return s.request('POST', 'sigil_action', { key, body: { code }, headers });
    if (!agents.has(from)) agents.set(from, new https.Agent({ localAddress: from }));
    const body = Buffer.from(JSON.stringify({ code }));
    return httpsRequest(agents.get(from), `${s.url}/core/v1/sigil_action`, 'POST', {
      headers: { 'X-Api-Key': key, 'Content-Type': 'application/json', 'Content-Length': String(body.length), ...headers }, body,
    });
  };
  return { owner, key, hash: keccakText(key), run };
}

const setGuardrails = (s, owner, body) => s.request('POST', 'set_usage_api_key_guardrails', { key: owner, body });
const balance = async (s, key) => assertOk(await s.request('GET', 'billing/balance', { key })).balance_cents;

test('the admin sets, reads and clears a key\'s guardrails; a usage key never sets its own; another account gets 404', async () => {
  const { owner, key, hash } = await setup();
  const none = assertOk(await stack.request('GET', 'get_usage_api_key_guardrails', { key: owner, query: { usage_api_key: hash } }));
  assert.equal(none.set, false);
  assert.equal(none.requests_per_second, null);
  assert.equal(none.default_max_runs_in_flight, 8);
  const set = assertOk(await setGuardrails(stack, owner, {
    usage_api_key: key, requests_per_second: 2.5, requests_per_second_per_address: 1, burst_per_address: 3,
    max_runs_in_flight: 4, spend_cap_cents: 500, allowed_origins: ['HTTPS://App.Example:443', 'http://127.0.0.1:3000'],
  }));
  assert.equal(set.success, true);
  const got = assertOk(await stack.request('GET', 'get_usage_api_key_guardrails', { key: owner, query: { usage_api_key: hash } }));
  assert.deepEqual({ ...got, updated_at_ms: 0 }, {
    api_key_hash: hash, set: true, requests_per_second: 2.5, burst: 3, requests_per_second_per_address: 1, burst_per_address: 3,
    max_runs_in_flight: 4, default_max_runs_in_flight: 8, spend_cap_cents: 500, spend_window_seconds: 86400,
    allowed_origins: ['https://app.example', 'http://127.0.0.1:3000'], updated_at_ms: 0,
  });
  assert.deepEqual(set.guardrails, got);

  // A usage key is not the admin, not even of itself.
  assertError(await setGuardrails(stack, key, { usage_api_key: key }), 403, 'owner_only');
  assertError(await stack.request('GET', 'get_usage_api_key_guardrails', { key, query: { usage_api_key: hash } }), 403, 'owner_only');
  // Another account's admin cannot see or touch this key.
  const { api_key: stranger } = await newAccount(stack, 'stranger');
  assertError(await setGuardrails(stack, stranger, { usage_api_key: hash, max_runs_in_flight: 100 }), 404, 'unknown_key');
  assertError(await stack.request('POST', 'clear_usage_api_key_guardrails', { key: stranger, body: { usage_api_key: hash } }), 404, 'unknown_key');
  // Bad input is a 400 naming the field; nothing changes.
  for (const [body, code] of [
    [{ usage_api_key: key, requests_per_second: 0 }, 'invalid_requests_per_second'],
    [{ usage_api_key: key, requests_per_second: '5' }, 'invalid_requests_per_second'],
    [{ usage_api_key: key, burst: 5 }, 'invalid_burst'],
    [{ usage_api_key: key, max_runs_in_flight: -1 }, 'invalid_max_runs_in_flight'],
    [{ usage_api_key: key, spend_window_seconds: 60 }, 'invalid_spend_window_seconds'],
    [{ usage_api_key: key, allowed_origins: ['https://app.example/path'] }, 'invalid_origin'],
    [{ usage_api_key: key, rate: 5 }, 'unknown_field'],
    [{ usage_api_key: owner }, 'master_key_not_usage_key'],
  ]) {
    assertError(await setGuardrails(stack, owner, body), 400, code, JSON.stringify(body));
  }
  assert.equal(assertOk(await stack.request('GET', 'get_usage_api_key_guardrails', { key: owner, query: { usage_api_key: hash } })).max_runs_in_flight, 4);

  assert.deepEqual(assertOk(await stack.request('POST', 'clear_usage_api_key_guardrails', { key: owner, body: { usage_api_key: hash } })),
    { success: true, cleared: true });
  assert.equal(assertOk(await stack.request('POST', 'clear_usage_api_key_guardrails', { key: owner, body: { usage_api_key: key } })).cleared, false);
  assert.equal(assertOk(await stack.request('GET', 'get_usage_api_key_guardrails', { key: owner, query: { usage_api_key: hash } })).set, false);
});

test('a key\'s rate: its burst passes, the next run is 429 rate_limited with Retry-After, and the bucket refills', async () => {
  const { owner, key, run } = await setup();
  assertOk(await setGuardrails(stack, owner, { usage_api_key: key, requests_per_second: 0.2, burst: 2 }));
  assertOk(await run());
  assertOk(await run());
  const refused = await run();
  assertError(refused, 429, 'rate_limited');
  assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After ${refused.headers['retry-after']}`);
  await new Promise((r) => setTimeout(r, 1100 * Number(refused.headers['retry-after'])));
  assertOk(await run());
});

test('the per-address rate holds each client address to its own bucket', async () => {
  const { owner, key, run } = await setup();
  assertOk(await setGuardrails(stack, owner, { usage_api_key: key, requests_per_second_per_address: 0.1, burst_per_address: 1 }));
  assertOk(await run(HELLO, { from: '127.0.0.2' }));
  const refused = await run(HELLO, { from: '127.0.0.2' });
  assertError(refused, 429, 'rate_limited');
  assert.ok(Number(refused.headers['retry-after']) >= 5, `0.1/s: about 10 s, Retry-After ${refused.headers['retry-after']}`);
  assertOk(await run(HELLO, { from: '127.0.0.3' }));
  assertError(await run(HELLO, { from: '127.0.0.3' }), 429, 'rate_limited');
});

test('a usage key\'s relayed writes take from the same buckets as its runs; its reads and the admin\'s writes do not', async () => {
  const { owner, run } = await setup();
  const group = await addGroup(stack, owner, 'writes');
  assertOk(await stack.request('POST', 'add_action_to_group', { key: owner, body: { group_id: group, action_ipfs_cid: await actionCid(stack, HELLO) } }));
  const writer = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)], can_create_groups: true }, 'writer');
  assertOk(await setGuardrails(stack, owner, { usage_api_key: writer, requests_per_second: 0.05, burst: 2 }));
  const write = (name) => stack.request('POST', 'add_group', { key: writer,
    body: { group_name: name, group_description: 'by a usage key', pkp_ids_permitted: [], cid_hashes_permitted: [] } });
  assertOk(await write('first'));  // one token
  assertOk(await stack.request('POST', 'sigil_action', { key: writer, body: { code: HELLO } }));  // the second
  const refused = await write('second');
  assertError(refused, 429, 'rate_limited');
  assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After ${refused.headers['retry-after']}`);
  assertError(await stack.request('POST', 'sigil_action', { key: writer, body: { code: HELLO } }), 429, 'rate_limited');
  // Reads are not taken from the buckets (they are served from the chain's cache and cost no gas).
  for (let i = 0; i < 3; i++) assertOk(await stack.request('GET', 'list_groups', { key: writer }));
  // The admin's own writes have no guardrails, and another key's buckets are its own.
  await addGroup(stack, owner, 'admin writes');
  assertOk(await run());
});

test('runs in flight: a key held to one refuses a concurrent run with 429 too_many_runs', async () => {
  const { owner, key, run } = await setup();
  assertOk(await setGuardrails(stack, owner, { usage_api_key: key, max_runs_in_flight: 1 }));
  const answers = await Promise.all([run(SLOW), run(SLOW), run(SLOW)]);
  const ok = answers.filter((r) => r.status === 200);
  const refused = answers.filter((r) => r.status === 429);
  assert.ok(ok.length >= 1, answers.map((r) => r.status).join(' '));
  assert.ok(refused.length >= 1, answers.map((r) => r.status).join(' '));
  for (const r of refused) assertError(r, 429, 'too_many_runs');
  assertOk(await run());  // the slot is given back when a run ends
});

// 100 runs at once against a rolling cap of `cap` cents: exactly `cap` are admitted (each costs 1 cent),
// the rest are 402 spend_cap_reached, and the account paid exactly `cap`.
async function capStopsExactly(s, cap) {
  const { owner, key, run } = await setup(s);
  assertOk(await setGuardrails(s, owner, { usage_api_key: key, spend_cap_cents: cap, spend_window_seconds: 3600, max_runs_in_flight: 0 }));
  const before = await balance(s, owner);
  let admitted = 0;
  const statuses = {};
  // Rounds of 100 until the cap is reached and a round admits nothing. A run the service refused on its
  // own (the pool full: 503 overloaded; the chain or the ledger slow on this shared machine: 502/504) was
  // not admitted and costs nothing; it is sent again in the next round.
  for (let round = 0; round < 12; ++round) {
    const answers = await Promise.all(Array.from({ length: 100 }, () => run()));
    let admittedNow = 0;
    for (const r of answers) {
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status === 200) ++admittedNow;
      else if (r.status === 402) assertError(r, 402, 'spend_cap_reached');
      else assert.ok([502, 503, 504].includes(r.status), r.text);
    }
    admitted += admittedNow;
    if (admitted >= cap && admittedNow === 0) break;
  }
  assert.equal(admitted, cap, JSON.stringify(statuses));
  assert.equal(before - await balance(s, owner), cap, 'the account paid exactly the cap');
}

test('a rolling spend cap hit by 100 concurrent runs stops at exactly the cap (SQLite)', async () => {
  await capStopsExactly(stack, 30);
});

test('Origins: another Origin is refused before any work, a listed one gets CORS headers, preflights answer', async () => {
  const { owner, key, run } = await setup();
  const before = await balance(stack, owner);
  assertOk(await setGuardrails(stack, owner, { usage_api_key: key, allowed_origins: ['https://app.example'] }));
  const refused = await run(HELLO, { headers: { Origin: 'https://evil.example' } });
  assertError(refused, 403, 'origin_not_allowed');
  assert.equal(refused.headers['access-control-allow-origin'], undefined);
  assert.equal(await balance(stack, owner), before, 'a refused run costs nothing');
  const allowed = await run(HELLO, { headers: { Origin: 'https://app.example' } });
  assert.equal(assertOk(allowed).response, 'hello');
  assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example');
  assert.match(allowed.headers.vary, /Origin/);
  assert.match(allowed.headers['access-control-expose-headers'], /X-Request-Id/);
  // Other calls with the key are checked too (before their handler reads the chain).
  assertError(await stack.request('GET', 'list_groups', { key, query: { page_number: 0, page_size: 10 }, headers: { Origin: 'null' } }),
    403, 'origin_not_allowed');
  // Without an Origin (a server, curl) the list does not apply, and no CORS header is sent.
  const plain = await run();
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['access-control-allow-origin'], undefined);
  // A preflight carries no key: it answers for the path, and the actual request is checked.
  const pre = await stack.request('OPTIONS', 'sigil_action', {
    headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key, content-type' },
  });
  assert.equal(pre.status, 204, pre.text);
  assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example');
  assert.match(pre.headers['access-control-allow-methods'], /POST/);
  assert.match(pre.headers['access-control-allow-headers'], /X-Api-Key/);
  assertError(await stack.request('OPTIONS', 'no_such_endpoint', { headers: { Origin: 'https://app.example' } }), 404, 'not_found');
  // A key without a list keeps today's behaviour: no CORS header.
  const other = await setup();
  const noList = await other.run(HELLO, { headers: { Origin: 'https://app.example' } });
  assert.equal(noList.status, 200);
  assert.equal(noList.headers['access-control-allow-origin'], undefined);
});

test('PostgreSQL: the rolling cap stops at exactly the cap, and a stopped database refuses runs', async () => {
  const pg = await startPostgres();
  let pgStack;
  try {
    pgStack = await startStack(stackOptions(pg.url));
    await capStopsExactly(pgStack, 25);
    const { owner, key, run } = await setup(pgStack);
    assertOk(await setGuardrails(pgStack, owner, { usage_api_key: key, requests_per_second: 100 }));
    await pg.stop();
    const r = await run();
    assert.ok(r.status === 502 || r.status === 503, r.text);
    assert.match(r.json.error.code, /^(ledger_unavailable|guardrails_unavailable)$/);
  } finally {
    await pgStack?.stop();
    await pg.stop();
  }
});

test('billing off, guardrails kept in a ledger that is down: runs and the endpoints answer 503 guardrails_unavailable', async () => {
  // [billing] database without billing: the guardrails' store only, here an address nothing listens on.
  const s = await startStack({ workers: 1, ledgerDatabase: 'postgresql://sigil@127.0.0.1:9/ledger' });
  try {
    const { owner, key, hash, run } = await setup(s);
    const r = await run();
    assertError(r, 503, 'guardrails_unavailable');
    assert.equal(r.headers['retry-after'], '1');
    assertError(await setGuardrails(s, owner, { usage_api_key: key, max_runs_in_flight: 1 }), 503, 'guardrails_unavailable');
    assertError(await s.request('GET', 'get_usage_api_key_guardrails', { key: owner, query: { usage_api_key: hash } }), 503,
      'guardrails_unavailable');
  } finally {
    await s.stop();
  }
});
