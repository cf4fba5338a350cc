// Benchmark of what the run history costs on the run path (issue 26; not a test, run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_history.mjs [--workers 4] [--rounds 8] [--seconds 5] [--concurrency 16] [--billing-off]
// Starts two stacks of the same build side by side, billing on (a SQLite ledger each, as scripts/start runs
// it) and [history] enabled = true on one, false on the other, and measures hello-world runs/s at the given
// concurrency in alternating pairs of rounds (the order flips every pair), each stack idle while the other
// runs. --billing-off runs both without billing (the history then has a SQLite file of its own). Prints
// every pair, the median of the per-pair ratios on/off, the runs the history stack recorded, and the load
// average before and after: this shared VM is noisy, so judge the median.
import { performance } from 'node:perf_hooks';
import { loadavg, tmpdir } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, newAccount, addGroup, actionCid } from '../api/stack.mjs';
import { arg } from './support.mjs';

const WORKERS = arg('workers', 4);
const ROUNDS = arg('rounds', 8);
const SECONDS = arg('seconds', 5);
const CONCURRENCY = arg('concurrency', 16);
const BILLING = !process.argv.includes('--billing-off');
const HELLO = 'async function main() { return "Hello World!"; }';

async function prepare(historyOn) {
  const history = [`enabled = ${historyOn}`];
  if (!BILLING) history.push(`database = ${join(mkdtempSync(join(tmpdir(), 'sigil-bench-history-')), 'history.sqlite')}`);
  const stack = await startStack({ workers: WORKERS, runsPerKey: 0, history,
    billing: BILLING ? { lines: ['starter_credit_cents = 1000000000', 'starter_credit_budget_cents = 1000000000000'] } : null });
  const { api_key: key } = await newAccount(stack, 'bench history');
  const group = await addGroup(stack, key, 'bench');
  const cid = await actionCid(stack, HELLO);
  const listed = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cid } });
  if (listed.status !== 200) throw new Error(`add_action_to_group: ${listed.status} ${listed.text}`);
  // A run the loaded machine failed (a chain timeout) is counted, not fatal: only answered runs count.
  let failed = 0;
  const answers = new Map();  // X-Request-Id -> status, to name what list_runs does not list
  const run = async () => {
    const r = await stack.request('POST', 'sigil_action', { key, body: { code: HELLO } });
    if (r.headers?.['x-request-id']) answers.set(r.headers['x-request-id'], r.status);
    if (r.status === 200 && r.json?.has_error === false) return true;
    if (++failed <= 3) console.log(`a run failed: ${r.status} ${r.text.slice(0, 200)}`);
    return false;
  };
  for (let i = 0; i < 4 * WORKERS; i++) await run();  // every worker warm
  let total = 4 * WORKERS;
  const round = async () => {
    let done = 0;
    const deadline = performance.now() + SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        if (await run()) done++;
      }
    }));
    total += done;  // answered runs; failed ones are recorded too (as failed), so `recorded` may exceed it
    return done / ((performance.now() - t0) / 1000);
  };
  // Runs recorded: list_runs pages of 100 (only at the end; off the measured rounds).
  const listedIds = new Set();
  const recorded = async () => {
    let n = 0;
    let cursor;
    do {
      const r = await stack.request('GET', 'list_runs', { key, query: { limit: 100, ...(cursor ? { cursor } : {}) } });
      if (r.status !== 200) return `list_runs ${r.status}`;
      n += r.json.runs.length;
      for (const run of r.json.runs) listedIds.add(run.request_id);
      cursor = r.json.next_cursor;
    } while (cursor);
    return n;
  };
  // Answers list_runs does not list, by status: a 429/503 nginx or the supervisor gave (no worker ran
  // anything, so nothing is recorded) is not a run; a worker's answer must be listed or counted dropped.
  const unlisted = () => {
    const by = {};
    for (const [id, status] of answers) if (!listedIds.has(id)) by[status] = (by[status] ?? 0) + 1;
    return by;
  };
  return { stack, round, recorded, unlisted, made: () => total, failed: () => failed };
}

// --off-first starts the history-off stack first: the start order must not be what the ratio measures.
const OFF_FIRST = process.argv.includes('--off-first');
const offEarly = OFF_FIRST ? await prepare(false) : null;
const on = await prepare(true);
const off = offEarly ?? await prepare(false);
try {
  const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`hello-world runs/s, billing ${BILLING ? 'on' : 'off'}${OFF_FIRST ? ' (history-off stack started first)' : ''}, ${WORKERS} workers, concurrency ${CONCURRENCY}, ` +
    `${ROUNDS} pairs of ${SECONDS} s rounds; load before: ${load()}`);
  await on.round();
  await off.round();
  const ratios = [];
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? [on, off] : [off, on];
    const rates = new Map();
    for (const side of order) rates.set(side, await side.round());
    const ratio = rates.get(on) / rates.get(off);
    ratios.push(ratio);
    console.log(`pair ${i + 1}: on ${rates.get(on).toFixed(1)}  off ${rates.get(off).toFixed(1)}  on/off ${ratio.toFixed(3)}`);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const mid = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  console.log(`median on/off ${mid.toFixed(3)} (min ${sorted[0].toFixed(3)}, max ${sorted.at(-1).toFixed(3)}); load after: ${load()}`);
  // The last batches (a writer that met a busy database retries a second later).
  let recorded = await on.recorded();
  for (let i = 0; i < 60 && recorded !== on.made() + on.failed(); i++) {
    await new Promise((r) => setTimeout(r, 500));
    recorded = await on.recorded();
  }
  const metrics = await (await fetch(`${on.stack.operatorUrl}/metrics`)).text();
  const dropped = metrics.match(/^sigil_history_records_dropped_total (\d+)$/m)?.[1] ?? '?';
  console.log(`history stack: ${dropped} records dropped (sigil_history_records_dropped_total); worker exits: ` +
    (metrics.match(/^sigil_worker_exits_total\{.*$/gm) ?? []).join(', '));
  console.log(`history stack: ${on.made()} runs answered, ${on.failed()} failed, ${recorded} recorded; ` +
    `failed runs on the other stack: ${off.failed()}; answers not listed, by status: ${JSON.stringify(on.unlisted())}`);
} finally {
  await on.stack.stop();
  await off.stack.stop();
}
