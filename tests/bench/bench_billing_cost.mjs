// What charging costs on the run path (issue 13: at most 5 %), measured so that a shared machine's
// neighbours load both sides alike (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_billing_cost.mjs [--rounds 10] [--seconds 2] [--runs 100] [--workers 4]
//     [--usage-key] [--billing-database postgresql://...]
// Starts two stacks side by side (tests/api/stack.mjs), one with billing off and one with billing on
// (SQLite ledger unless --billing-database, a starter credit for the whole benchmark), with an
// account, a group and hello world on each. Then, each round, on each stack in turn (which goes
// first alternates): RUNS sequential runs (p50 at concurrency 1) and SECONDS of runs at concurrency 16
// (runs/s), so every on/off pair is measured within a few seconds. Prints each round and the medians
// of the per-round ratios on/off. --usage-key runs with a capped usage key on both (the spend cap is
// checked in every charge).
import { performance } from 'node:perf_hooks';
import { startStack, newAccount, addGroup, addUsageKey, createWallet } from '../api/stack.mjs';
import { arg, quantile, summary } from './support.mjs';

const ROUNDS = arg('rounds', 10);
const SECONDS = arg('seconds', 2);
const RUNS = arg('runs', 100);
const WORKERS = arg('workers', 4);
const CONCURRENCY = 16;
const USAGE_KEY = process.argv.includes('--usage-key');
const dbIndex = process.argv.indexOf('--billing-database');
const CODE = 'async function main() { return "Hello World!"; }';

async function prepare(billing) {
  const stack = await startStack({
    workers: WORKERS,
    billing: billing ? { lines: ['starter_credit_cents = 100000000', 'max_concurrent_runs_per_key = 0'],
      database: dbIndex > 0 ? process.argv[dbIndex + 1] : undefined } : null,
  });
  const { api_key: key } = await newAccount(stack, 'billing cost');
  const pkp = await createWallet(stack, key);
  const cid = JSON.parse((await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(CODE) })).text);
  await addGroup(stack, key, 'bench', { pkp_ids_permitted: [pkp], cid_hashes_permitted: [] });
  const added = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: '1', action_ipfs_cid: cid } });
  if (added.status !== 200) throw new Error(`add_action_to_group: ${added.status} ${added.text}`);
  const runKey = USAGE_KEY ? await addUsageKey(stack, key, { execute_in_groups: [1], balance: 1_000_000_000 }, 'bench runs', 'capped') : key;
  const runOnce = async () => {
    const r = await stack.request('POST', 'sigil_action', { key: runKey, body: { code: CODE, pkp_id: pkp } });
    if (r.status !== 200 || r.json?.has_error !== false) throw new Error(`run failed: ${r.status} ${r.text.slice(0, 300)}`);
  };
  for (let i = 0; i < 3 * WORKERS; i++) await runOnce(); // every worker lowers and caches it
  return { stack, runOnce };
}

async function measure({ runOnce }) {
  const seq = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await runOnce();
    seq.push(performance.now() - t0);
  }
  let done = 0;
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) {
      await runOnce();
      done++;
    }
  }));
  return { p50: summary(seq).p50, rate: done / ((performance.now() - t0) / 1000) };
}

const median = (xs) => quantile([...xs].sort((a, b) => a - b), 0.5);
const sides = {};
try {
  sides.off = await prepare(false);
  sides.on = await prepare(true);
  console.log(`hello world, billing on vs off, ${WORKERS} workers each, ${ROUNDS} rounds of ${RUNS} sequential runs and ` +
    `${SECONDS} s at concurrency ${CONCURRENCY}, ${USAGE_KEY ? 'a capped usage key' : 'the master key'}` +
    (dbIndex > 0 ? ', ledger on PostgreSQL' : ', SQLite ledger'));
  console.log('round   off runs/s   on runs/s   ratio   off c1 p50   on c1 p50   ratio   load');
  for (const side of ['off', 'on']) await measure(sides[side]); // warm-up, not counted
  const rates = [], p50s = [], all = { on: [], off: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? ['off', 'on'] : ['on', 'off'];
    const got = {};
    for (const side of order) got[side] = await measure(sides[side]);
    all.on.push(got.on);
    all.off.push(got.off);
    rates.push(got.on.rate / got.off.rate);
    p50s.push(got.on.p50 / got.off.p50);
    const load = (await import('node:os')).loadavg()[0].toFixed(1);
    console.log(`${String(round).padStart(5)} ${got.off.rate.toFixed(0).padStart(12)} ${got.on.rate.toFixed(0).padStart(11)} ` +
      `${rates.at(-1).toFixed(3).padStart(7)} ${got.off.p50.toFixed(2).padStart(12)} ${got.on.p50.toFixed(2).padStart(11)} ` +
      `${p50s.at(-1).toFixed(3).padStart(7)} ${load.padStart(6)}`);
  }
  console.log(`median of the per-round ratios on/off: runs/s ${median(rates).toFixed(3)}, c1 p50 ${median(p50s).toFixed(3)}`);
  console.log(`medians: runs/s off ${median(all.off.map((x) => x.rate)).toFixed(0)} on ${median(all.on.map((x) => x.rate)).toFixed(0)}; ` +
    `c1 p50 off ${median(all.off.map((x) => x.p50)).toFixed(2)} on ${median(all.on.map((x) => x.p50)).toFixed(2)} ms`);
} finally {
  for (const side of Object.values(sides)) await side.stack.stop();
}
