// Benchmark of what the metrics cost on the run path (issue 29; not a test, run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_metrics.mjs [--workers 4] [--rounds 8] [--seconds 5] [--concurrency 16]
// Starts two stacks of the same build side by side, one with [metrics] enabled = true and one with false,
// and measures hello-world runs/s at the given concurrency (keep-alive HTTPS through nginx) in
// alternating rounds (on, off, off, on, on, off, ...: the order flips every pair, so neither stack is
// always second), each stack idle while the other runs. Prints every round, the median of the per-pair
// ratios on/off and the load average before and after: this shared VM is noisy, so judge the median.
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { startStack, newAccount, addGroup, actionCid } from '../api/stack.mjs';
import { arg } from './support.mjs';

const WORKERS = arg('workers', 4);
const ROUNDS = arg('rounds', 8);
const SECONDS = arg('seconds', 5);
const CONCURRENCY = arg('concurrency', 16);
const HELLO = 'async function main() { return "Hello World!"; }';

async function prepare(metricsOn) {
  const stack = await startStack({ workers: WORKERS, runsPerKey: 0,
    metrics: [`enabled = ${metricsOn}`] });
  const { api_key: key } = await newAccount(stack, 'bench metrics');
  const group = await addGroup(stack, key, 'bench');
  const cid = await actionCid(stack, HELLO);
  const listed = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cid } });
  if (listed.status !== 200) throw new Error(`add_action_to_group: ${listed.status} ${listed.text}`);
  const run = async () => {
    const r = await stack.request('POST', 'sigil_action', { key, body: { code: HELLO } });
    if (r.status !== 200 || r.json?.has_error !== false) throw new Error(`run failed: ${r.status} ${r.text.slice(0, 300)}`);
  };
  for (let i = 0; i < 4 * WORKERS; i++) await run();  // every worker warm
  const round = async () => {
    let done = 0;
    const deadline = performance.now() + SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        await run();
        done++;
      }
    }));
    return done / ((performance.now() - t0) / 1000);
  };
  return { stack, round };
}

// --off-first starts the metrics-off stack first: the two stacks' start order (which one's processes
// came up first on the machine) must not be what the ratio measures.
const OFF_FIRST = process.argv.includes('--off-first');
const off = OFF_FIRST ? await prepare(false) : null;
const on = await prepare(true);
const offStack = off ?? await prepare(false);
try {
  const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`hello-world runs/s${OFF_FIRST ? ' (metrics-off stack started first)' : ''}, ${WORKERS} workers, concurrency ${CONCURRENCY}, ${ROUNDS} pairs of ${SECONDS} s rounds; load before: ${load()}`);
  // One unmeasured round each first: the dynamic pool grows to the load, and every new worker connects
  // to the zygotes and lowers nothing yet.
  await on.round();
  await offStack.round();
  const ratios = [];
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? [on, offStack] : [offStack, on];
    const rates = new Map();
    for (const side of order) rates.set(side, await side.round());
    const ratio = rates.get(on) / rates.get(offStack);
    ratios.push(ratio);
    console.log(`pair ${i + 1}: on ${rates.get(on).toFixed(1)}  off ${rates.get(offStack).toFixed(1)}  on/off ${ratio.toFixed(3)}`);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const mid = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  console.log(`median on/off ${mid.toFixed(3)} (min ${sorted[0].toFixed(3)}, max ${sorted.at(-1).toFixed(3)}); load after: ${load()}`);
} finally {
  await on.stack.stop();
  await offStack.stack.stop();
}
