// What key guardrails cost on the run path (issue 26), measured in one sitting (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_guardrails.mjs [--rounds 6] [--seconds 3] [--workers 4]
//     [--billing-database postgresql://...]
// One stack with billing on (SQLite ledger unless --billing-database), one account, hello world, and two
// usage keys: one with every guardrail set (rates per key and per address, runs in flight, a rolling spend
// cap, an allowed Origin that every request sends) at bounds this load never reaches, and one with none.
// Each round runs SECONDS at concurrency 16 with each key in turn (which goes first alternates) and prints
// runs/s; the last line is the median of the per-round ratios guarded/plain.
import { startStack, newAccount, addGroup, addUsageKey } from '../api/stack.mjs';
import { arg } from './support.mjs';

const ROUNDS = arg('rounds', 6);
const SECONDS = arg('seconds', 3);
const WORKERS = arg('workers', 4);
const CONCURRENCY = 16;
const dbIndex = process.argv.indexOf('--billing-database');
const CODE = 'async function main() { return "Hello World!"; }';
const ORIGIN = 'https://app.example';

const stack = await startStack({
  workers: WORKERS,
  billing: { lines: ['starter_credit_cents = 100000000', 'starter_credit_budget_cents = 1000000000000', 'max_concurrent_runs_per_key = 0'],
    database: dbIndex > 0 ? process.argv[dbIndex + 1] : undefined },
});
try {
  const { api_key: owner } = await newAccount(stack, 'guardrails bench');
  const group = await addGroup(stack, owner, 'bench');
  const cid = JSON.parse((await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(CODE) })).text);
  const added = await stack.request('POST', 'add_action_to_group', { key: owner, body: { group_id: group, action_ipfs_cid: cid } });
  if (added.status !== 200) throw new Error(`add_action_to_group: ${added.status} ${added.text}`);
  const plain = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] }, 'plain', '');
  const guarded = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] }, 'guarded', '');
  const set = await stack.request('POST', 'set_usage_api_key_guardrails', { key: owner, body: {
    usage_api_key: guarded, requests_per_second: 10000, burst: 100000, requests_per_second_per_address: 10000,
    burst_per_address: 100000, max_runs_in_flight: 1000, spend_cap_cents: 1000000000, spend_window_seconds: 86400,
    allowed_origins: [ORIGIN],
  } });
  if (set.status !== 200) throw new Error(`set guardrails: ${set.status} ${set.text}`);
  const runOnce = async (key, headers) => {
    const r = await stack.request('POST', 'sigil_action', { key, body: { code: CODE }, headers });
    if (r.status !== 200 || r.json?.has_error !== false) throw new Error(`run failed: ${r.status} ${r.text.slice(0, 300)}`);
  };
  const sides = { plain: () => runOnce(plain, {}), guarded: () => runOnce(guarded, { Origin: ORIGIN }) };
  for (let i = 0; i < 3 * WORKERS; i++) { await sides.plain(); await sides.guarded(); }
  const rate = async (once) => {
    const end = Date.now() + SECONDS * 1000;
    let runs = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) { await once(); ++runs; }
    }));
    return runs / SECONDS;
  };
  const ratios = [];
  for (let round = 0; round < ROUNDS; ++round) {
    const order = round % 2 === 0 ? ['plain', 'guarded'] : ['guarded', 'plain'];
    const got = {};
    for (const side of order) got[side] = await rate(sides[side]);
    ratios.push(got.guarded / got.plain);
    console.log(`round ${round + 1}: plain ${got.plain.toFixed(1)} runs/s, guarded ${got.guarded.toFixed(1)} runs/s, ratio ${(got.guarded / got.plain).toFixed(3)}`);
  }
  ratios.sort((a, b) => a - b);
  console.log(`median guarded/plain: ${ratios[Math.floor(ratios.length / 2)].toFixed(3)} over ${ROUNDS} rounds of ${SECONDS} s at concurrency ${CONCURRENCY}`);
} finally {
  await stack.stop();
}
