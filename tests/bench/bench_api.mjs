// Benchmark of the management API through nginx (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_api.mjs [--workers N] [--reads 300] [--writes 100]
//                                                        [--concurrency 16] [--seconds 5]
// Starts a stack (tests/api/stack.mjs), creates an account with a few groups, then measures
// sequential latency (p50/p99) of GET list_groups and POST add_group, and reads/s of list_groups
// at a fixed concurrency. Prints a small table.
import { performance } from 'node:perf_hooks';
import { startStack, newAccount, addGroup } from '../api/stack.mjs';
import { arg, quantile, summary } from './support.mjs';

const WORKERS = arg('workers', 4);
const READS = arg('reads', 300);
const WRITES = arg('writes', 100);
const CONCURRENCY = arg('concurrency', 16);
const SECONDS = arg('seconds', 5);

async function timed(n, fn) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

const stack = await startStack({ workers: WORKERS });
try {
  const { api_key: key } = await newAccount(stack, 'bench');
  for (let i = 0; i < 5; i++) await addGroup(stack, key, `seed ${i}`);
  const check = (r, what) => {
    if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 200)}`);
  };

  // Warm the connection and the caches.
  for (let i = 0; i < 20; i++) check(await stack.request('GET', 'list_groups', { key }), 'warm-up');

  const reads = await timed(READS, async () => check(await stack.request('GET', 'list_groups', { key }), 'list_groups'));
  const writes = await timed(WRITES, async (i) => check(await stack.request('POST', 'add_group', {
    key, body: { group_name: `bench ${i}`, group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 'add_group'));
  const publicReads = await timed(READS, async () => check(await stack.request('GET', 'get_node_chain_config'), 'config'));

  // Throughput: CONCURRENCY loops for SECONDS, each issuing list_groups back to back.
  let done = 0;
  let failed = 0;
  const lat = [];
  const deadline = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) {
      const s = performance.now();
      const r = await stack.request('GET', 'list_groups', { key });
      lat.push(performance.now() - s);
      if (r.status === 200) done++; else failed++;
    }
  }));
  const elapsed = (performance.now() - t0) / 1000;

  const fmt = (x) => x.toFixed(2).padStart(8);
  const row = (name, s) => console.log(`${name.padEnd(34)} ${String(s.n).padStart(6)} ${fmt(s.p50)} ${fmt(s.p99)} ${fmt(s.max)} ${fmt(s.mean)}`);
  console.log(`Sigil management API through nginx (HTTPS, keep-alive), ${WORKERS} workers`);
  console.log(`${'operation'.padEnd(34)} ${'n'.padStart(6)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'mean ms'.padStart(8)}`);
  row('GET list_groups (sequential)', summary(reads));
  row('POST add_group (sequential)', summary(writes));
  row('GET get_node_chain_config (seq.)', summary(publicReads));
  row(`GET list_groups (concurrency ${CONCURRENCY})`, summary(lat));
  console.log(`reads/s at concurrency ${CONCURRENCY} for ${SECONDS} s: ${(done / elapsed).toFixed(0)} (${done} ok, ${failed} failed)`);
} finally {
  await stack.stop();
}
