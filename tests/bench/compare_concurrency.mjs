// Before/after table of bench_concurrency.mjs for issue 23 (not a benchmark; prints, never fails):
//   node tests/bench/compare_concurrency.mjs BEFORE AFTER
// BEFORE and AFTER are files holding the summaries of bench_concurrency.mjs runs: its whole output (the
// `BENCH_CONCURRENCY {json}` lines are picked out) or one JSON object per line, as
// tests/bench/results/issue23-baseline.jsonl. Several runs in a file are combined by the median of each
// figure. Prints each figure before and after, the ratio, and the goal with whether AFTER meets it.
import { readFileSync } from 'node:fs';

if (process.argv.length !== 4) {
  console.error('usage: node tests/bench/compare_concurrency.mjs BEFORE AFTER');
  process.exit(2);
}

function runs(file) {
  const out = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const t = line.startsWith('BENCH_CONCURRENCY ') ? line.slice('BENCH_CONCURRENCY '.length) : line.trim();
    if (!t.startsWith('{')) continue;
    try { out.push(JSON.parse(t)); } catch { /* not a summary */ }
  }
  if (out.length === 0) throw new Error(`${file}: no bench_concurrency summary in it`);
  return out;
}

const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const get = (o, path) => path.split('.').reduce((v, k) => (v == null ? undefined : v[k]), o);
const figure = (list, path) => median(list.map((r) => get(r, path)));
// The chain-free p99 when the chain part ran with list_groups (the default), else any.
const chainRuns = (list) => list.filter((r) => r.chain);

const before = runs(process.argv[2]);
const after = runs(process.argv[3]);
const rows = [
  // [label, path, goal(after, before) -> true/false/null, goal text]
  ['nginx alone, requests/s at 256 (the bound)', 'ceiling.rate', null, ''],
  ['200 ms fetch, runs/s at 16', 'fetch.16.rate', null, ''],
  ['200 ms fetch, p50 ms at 16', 'fetch.16.p50', null, ''],
  ['200 ms fetch, runs/s at 256', 'fetch.256.rate', (a) => a >= 500, '>= 500'],
  ['200 ms fetch, p50 ms at 256', 'fetch.256.p50', (a) => a <= 260, '<= 260 ms'],
  ['200 ms fetch, p99 ms at 256', 'fetch.256.p99', null, ''],
  ['hello world runs/s at 16', 'hello.hello.rate', (a, b) => a >= 0.95 * b, '>= 0.95 x before'],
  ['signMessage runs/s at 16', 'hello.sign.rate', (a, b) => a >= 0.95 * b, '>= 0.95 x before'],
  ['chain paused: version p99 ms', 'chain.chain_free.version.p99', (a) => a < 20, '< 20 ms'],
  ['chain paused: health p99 ms', 'chain.chain_free.health.p99', (a) => a < 20, '< 20 ms'],
  ['chain paused: CID helper p99 ms', 'chain.chain_free.cid_helper.p99', (a) => a < 20, '< 20 ms'],
  ['chain paused: version max ms', 'chain.chain_free.version.max', null, ''],
  ['chain paused: chain-bound max ms', 'chain.chain_bound_max', (a) => a <= 2500, '<= 2500 ms'],
  ['chain paused: chain-bound over 2.5 s', 'chain.chain_bound_over_2500ms', (a) => a === 0, '0'],
  ['chain paused: chain-bound not a typed 503/504', 'chain.chain_bound_not_typed_503_504', (a) => a === 0, '0'],
  ['chain resumed: recovery ms', 'chain.recovered_ms', (a) => a <= 1000, '<= 1000 ms'],
  ['PSS idle MiB (without sigil-lowerer)', 'memory_idle.total_mib', (a, b) => a <= 1.2 * b, '<= 1.2 x before'],
  ['PSS with 256 runs in flight MiB', 'memory_load.total_mib', null, 'reported'],
  ['run children alive under that load', 'memory_load.roles.run children.n', null, ''],
];
const fmt = (x) => (x === null || x === undefined ? '-' : (Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : String(+x.toFixed(1))));
console.log(`before: ${before.length} run(s), load average ${before.map((r) => r.load_start).join(' | ')}`);
console.log(`after:  ${after.length} run(s), load average ${after.map((r) => r.load_start).join(' | ')}; ${[...Object.entries(after[0].stack_options ?? {}).map(([k, v]) => `${k} ${v}`), ...(after[0].supervisor_options ?? [])].join(', ') || 'default pool'}`);
console.log('');
console.log('| figure | before | after | after / before | goal | met |');
console.log('|---|---|---|---|---|---|');
for (const [label, path, goal, goalText] of rows) {
  const src = path.startsWith('chain.') ? [chainRuns(before), chainRuns(after)] : [before, after];
  const b = figure(src[0], path);
  const a = figure(src[1], path);
  const ratio = a !== null && b ? (a / b).toFixed(2) : '-';
  const met = goal && a !== null && b !== null ? (goal(a, b) ? 'yes' : 'NO') : (goal && a !== null ? (goal(a, a) ? 'yes' : 'NO') : '');
  console.log(`| ${label} | ${fmt(b)} | ${fmt(a)} | ${ratio} | ${goalText} | ${met} |`);
}
