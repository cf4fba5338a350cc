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
// Runs/s on a shared 2-core machine swing by 20 % from one round to the next with the neighbours' load,
// so each round also counts the CPU time the stack's processes spent in its concurrency-16 phase (nginx,
// the supervisor, workers, zygotes and the sandbox children they reaped; /proc, utime + stime of the
// living and of the reaped) divided by its runs: CPU per run moves far less with the neighbours than
// runs/s, and on a saturated machine runs/s is its inverse, so off/on CPU per run is the runs/s ratio
// billing costs. It leaves out the client, which costs both sides alike.
import { readdirSync, readFileSync } from 'node:fs';
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
    billing: billing ? { lines: ['starter_credit_cents = 100000000', 'starter_credit_budget_cents = 1000000000000', 'max_concurrent_runs_per_key = 0'],
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
  return { stack, runOnce, roots: [stack.pidOf('supervisor'), stack.pidOf('nginx')] };
}

const TICKS_PER_MS = 100 / 1000;  // USER_HZ, as /proc reports times

/// CPU milliseconds spent so far by `roots` and their descendants, reaped children included.
function treeCpuMs(roots) {
  const procs = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    let stat;
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8'); } catch { continue; }  // gone meanwhile
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');  // f[0] is field 3 (state)
    procs.set(Number(name), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
  }
  const inTree = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 16; p = procs.get(p)?.ppid ?? 0, hops++) if (roots.includes(p)) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, p] of procs) if (inTree(pid)) ticks += p.ticks;
  return ticks / TICKS_PER_MS;
}

async function measure({ runOnce, roots }) {
  const seq = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await runOnce();
    seq.push(performance.now() - t0);
  }
  let done = 0;
  const cpu0 = treeCpuMs(roots);
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) {
      await runOnce();
      done++;
    }
  }));
  const rate = done / ((performance.now() - t0) / 1000);
  return { p50: summary(seq).p50, rate, cpuPerRun: (treeCpuMs(roots) - cpu0) / done };
}

const median = (xs) => quantile([...xs].sort((a, b) => a - b), 0.5);
const sides = {};
try {
  sides.off = await prepare(false);
  sides.on = await prepare(true);
  console.log(`hello world, billing on vs off, ${WORKERS} workers each, ${ROUNDS} rounds of ${RUNS} sequential runs and ` +
    `${SECONDS} s at concurrency ${CONCURRENCY}, ${USAGE_KEY ? 'a capped usage key' : 'the master key'}` +
    (dbIndex > 0 ? ', ledger on PostgreSQL' : ', SQLite ledger'));
  console.log('round   off runs/s   on runs/s   ratio   off c1 p50   on c1 p50   ratio   CPU ms/run off   on   off/on   load');
  for (const side of ['off', 'on']) await measure(sides[side]); // warm-up, not counted
  const rates = [], p50s = [], cpus = [], all = { on: [], off: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? ['off', 'on'] : ['on', 'off'];
    const got = {};
    for (const side of order) got[side] = await measure(sides[side]);
    all.on.push(got.on);
    all.off.push(got.off);
    rates.push(got.on.rate / got.off.rate);
    p50s.push(got.on.p50 / got.off.p50);
    cpus.push(got.off.cpuPerRun / got.on.cpuPerRun);
    const load = (await import('node:os')).loadavg()[0].toFixed(1);
    console.log(`${String(round).padStart(5)} ${got.off.rate.toFixed(0).padStart(12)} ${got.on.rate.toFixed(0).padStart(11)} ` +
      `${rates.at(-1).toFixed(3).padStart(7)} ${got.off.p50.toFixed(2).padStart(12)} ${got.on.p50.toFixed(2).padStart(11)} ` +
      `${p50s.at(-1).toFixed(3).padStart(7)} ${got.off.cpuPerRun.toFixed(3).padStart(16)} ${got.on.cpuPerRun.toFixed(3).padStart(6)} ` +
      `${cpus.at(-1).toFixed(3).padStart(8)} ${load.padStart(6)}`);
  }
  console.log(`median of the per-round ratios on/off: runs/s ${median(rates).toFixed(3)}, c1 p50 ${median(p50s).toFixed(3)}; ` +
    `CPU per run off/on ${median(cpus).toFixed(3)}`);
  console.log(`medians: runs/s off ${median(all.off.map((x) => x.rate)).toFixed(0)} on ${median(all.on.map((x) => x.rate)).toFixed(0)}; ` +
    `c1 p50 off ${median(all.off.map((x) => x.p50)).toFixed(2)} on ${median(all.on.map((x) => x.p50)).toFixed(2)} ms; ` +
    `CPU per run off ${median(all.off.map((x) => x.cpuPerRun)).toFixed(3)} on ${median(all.on.map((x) => x.cpuPerRun)).toFixed(3)} ms`);
} finally {
  for (const side of Object.values(sides)) await side.stack.stop();
}
