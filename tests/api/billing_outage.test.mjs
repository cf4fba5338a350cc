// The ledger's database down (a PostgreSQL address nothing listens on): what needs billing fails fast
// with a typed error and charges nothing; what does not need it keeps working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startStack, assertError, newAccount } from './stack.mjs';

let stack;
before(async () => {
  stack = await startStack({ workers: 2, billing: { database: 'postgresql://sigil@127.0.0.1:9/ledger' } });
});
after(async () => { await stack?.stop(); });

test('a dead ledger database: billed requests answer 502 ledger_unavailable within 3 s; the rest is unaffected', async () => {
  // new_account needs no ledger to exist (only its starter credit is lost, and logged).
  const { api_key: key } = await newAccount(stack, 'no ledger');
  for (const [method, path, body] of [['GET', 'billing/balance'], ['POST', 'add_group', { group_name: 'g', group_description: '' }],
    ['POST', 'sigil_action', { code: 'async function main() { return 1; }' }]]) {
    const t0 = Date.now();
    const r = await stack.request(method, path, { key, body });
    const ms = Date.now() - t0;
    if (path === 'sigil_action') {
      // Not authorized comes first: a refused run never touches the ledger.
      assertError(r, 403, 'not_authorized');
    } else {
      assertError(r, 502, 'ledger_unavailable', path);
    }
    assert.ok(ms < 3000, `${path} took ${ms} ms`);
  }
  const groups = await stack.request('GET', 'list_groups', { key, query: { page_number: 0, page_size: 10 } });
  assert.equal(groups.status, 200, groups.text);
  assert.deepEqual(groups.json, [], 'the refused write wrote nothing');
  assert.equal((await stack.request('GET', '/core/v1/version')).status, 200);
  assert.equal((await stack.request('GET', 'billing/payments_config')).status, 200);
});

test('a silent ledger database (accepts, never answers): one connect timeout, then fast 502s until the next attempt', async () => {
  const sockets = new Set();
  const silent = createServer((socket) => { sockets.add(socket); socket.on('error', () => {}); });
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const quiet = await startStack({ workers: 1, billing: { database: `postgresql://sigil@127.0.0.1:${silent.address().port}/ledger` } });
  try {
    const { api_key: key } = await newAccount(quiet, 'silent ledger');
    const balanceMs = async () => {
      const t0 = Date.now();
      assertError(await quiet.request('GET', 'billing/balance', { key }), 502, 'ledger_unavailable');
      return Date.now() - t0;
    };
    const first = await balanceMs();
    assert.ok(first >= 1500 && first < 3000, `the first pays one connect timeout (2 s): ${first} ms`);
    const times = [];
    for (let i = 0; i < 5; ++i) times.push(await balanceMs());
    assert.ok(times.every((ms) => ms < 300), `the next ones are refused at once: ${times.join(', ')} ms`);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const retried = await balanceMs();
    assert.ok(retried >= 1500, `after 500 ms the next attempt is due and tries again: ${retried} ms`);
    assert.equal((await quiet.request('GET', '/core/v1/version')).status, 200);
  } finally {
    await quiet.stop();
    for (const socket of sockets) socket.destroy();
    silent.close();
  }
});
