// Benchmark of an unseen action's first run (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_first_run.mjs [--workers 2] [--count 40] [--kb 10]
//       [--es2019] [--sandbox PATH] [--no-shared-cache] [--lowerer-only | --child-only]
// Generates `count` different actions of about `kb` KB each (modern code: classes, arrows,
// destructuring, template strings, spread, async/await, and with the default ES2022 flavour also
// optional chaining, ??, class fields and numeric separators), so each has its own CID; lists them
// all in the account's group first (not timed), then times each one's first run through nginx
// (no worker has lowered it: sigil-lowerer or, without it, the sandbox child lowers it) and its
// later runs (lowered code from the cache). By default it does this twice in one run, on a stack
// with sigil-lowerer and on one without (the sandbox child lowers), and prints the ratio. --es2019 leaves out the ES2020+ syntax, so an
// older sandbox (--sandbox PATH, [actions] sandbox_path) can run the same actions for comparison.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { startStack, newAccount, addGroup } from '../api/stack.mjs';
import { arg, summary } from './support.mjs';

const WORKERS = arg('workers', 2);
const COUNT = arg('count', 40);
const KB = arg('kb', 10);
const ES2019 = process.argv.includes('--es2019');
const sandboxIndex = process.argv.indexOf('--sandbox');

// One block of about 1 KB of realistic action code; `i` makes every block (and action) distinct.
function block(i) {
  const modern = ES2019
    ? `const label = (opts && opts.label) || 'item${i}';
    const depth = opts && opts.deep && opts.deep.value !== undefined ? opts.deep.value : 1000000;`
    : `const label = opts?.label ?? 'item${i}';
    const depth = opts?.deep?.value ?? 1_000_000;`;
  const field = ES2019 ? '' : `  static kind = 'ledger${i}';\n  #total = 0;\n`;
  const total = ES2019 ? 'this.total' : 'this.#total';
  return `
class Ledger${i} {
${field}  constructor(entries = []) { this.entries = [...entries]; ${ES2019 ? 'this.total = 0;' : ''} }
  add({ amount, memo = '' }, ...tags) {
    this.entries.push({ amount, memo, tags, at: this.entries.length });
    ${total} += amount;
    return this;
  }
  summary(opts) {
    ${modern}
    const rows = this.entries.map(({ amount, memo }, n) => \`\${label}#\${n}: \${amount.toFixed(2)} \${memo}\`);
    return { label, depth, count: rows.length, total: ${total}, rows: rows.slice(0, 3) };
  }
}
async function step${i}(input) {
  const ledger = new Ledger${i}([]);
  for (const [k, v] of Object.entries(input)) ledger.add({ amount: Number(v) || ${i}, memo: k }, 'a', 'b');
  const { count, total } = ledger.summary({ label: 'step${i}', deep: { value: ${i} } });
  return await Promise.resolve(count + total);
}
`;
}

function action(n) {
  const blocks = [];
  let text = `// action ${n} of a first-run benchmark\n`;
  for (let i = 0; text.length < KB * 1024; i++) {
    const b = block(i);
    blocks.push(i);
    text += b;
  }
  text += `
const main = async (params) => {
  let sum = 0;
  ${blocks.map((i) => `sum += await step${i}(params);`).join('\n  ')}
  return { n: ${n}, sum };
};
`;
  return text;
}

// --no-shared-cache: no code_cache_dir, so each worker lowers a CID for itself (as before lowered
// code was shared through the folder).
const SHARED = !process.argv.includes('--no-shared-cache');
// Which lowering serves the first runs: by default both, one stack after the other in this run
// (sigil-lowerer, then the sandbox child alone), each with its own fresh set of unseen actions.
const MODES = process.argv.includes('--child-only') ? ['child'] : process.argv.includes('--lowerer-only') ? ['lowerer']
  : ['lowerer', 'child'];
const fmt = (x) => x.toFixed(1).padStart(7);

async function measure(mode, seed) {
  const cacheDir = SHARED ? mkdtempSync('/tmp/sigil-bench-codecache-') : null;
  const stack = await startStack({
    workers: WORKERS,
    lowerer: mode === 'lowerer',
    actions: [...(sandboxIndex > 0 ? [`sandbox_path = ${process.argv[sandboxIndex + 1]}`] : []),
      ...(cacheDir ? [`code_cache_dir = ${cacheDir}`] : [])],
  });
  try {
    // A deployed daemon has long finished its warm-up when actions arrive.
    if (mode === 'lowerer') {
      const log = join(stack.logs, 'lowerer.log');
      for (let i = 0; i < 300 && !readFileSync(log, 'utf8').includes('warmed up'); i++) await sleep(50);
    }
    const { api_key: key } = await newAccount(stack, 'bench first run');
    await addGroup(stack, key, 'bench');
    const codes = Array.from({ length: COUNT }, (_, n) => action(seed + n));
    for (const code of codes) {
      const cid = JSON.parse((await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) })).text);
      const r = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: '1', action_ipfs_cid: cid } });
      if (r.status !== 200) throw new Error(`add_action_to_group: ${r.status} ${r.text}`);
    }
    const runOnce = async (code) => {
      const t0 = performance.now();
      const r = await stack.request('POST', 'sigil_action', { key, body: { code, js_params: { a: '1', b: '2' } } });
      const ms = performance.now() - t0;
      if (r.status !== 200 || r.json?.has_error !== false) throw new Error(`run failed: ${r.status} ${r.text.slice(0, 300)}`);
      return ms;
    };
    // One worker process at a time serves a keep-alive connection's requests in turn, so the second
    // run of a code may land on another worker: run each code WORKERS + 1 times and keep the first
    // (never lowered anywhere) and the last (lowered by then in the worker that serves it).
    const first = [];
    const second = [];
    const warm = [];
    for (const code of codes) {
      first.push(await runOnce(code));
      let last = 0;
      for (let i = 0; i < WORKERS; i++) {
        last = await runOnce(code);
        if (i === 0) second.push(last);
      }
      warm.push(last);
    }
    const f = summary(first);
    const n = summary(second);
    const w = summary(warm);
    console.log(`First runs of ${COUNT} unseen ${(codes[0].length / 1024).toFixed(1)} KB actions (${ES2019 ? 'ES2019' : 'ES2022'} syntax), ` +
      `${WORKERS} workers${sandboxIndex > 0 ? `, sandbox ${process.argv[sandboxIndex + 1]}` : ''}, ` +
      `${SHARED ? 'lowered code shared through code_cache_dir' : 'no code_cache_dir'}, ` +
      `${mode === 'lowerer' ? 'lowered by sigil-lowerer' : 'lowered in the sandbox child (no sigil-lowerer)'}`);
    console.log(`                p50     p90     max   (ms)`);
    console.log(`first run  ${fmt(f.p50)} ${fmt(f.p90)} ${fmt(f.max)}`);
    // The second run may land on another worker: it is warm only if the lowered code is shared.
    console.log(`second run ${fmt(n.p50)} ${fmt(n.p90)} ${fmt(n.max)}`);
    console.log(`warm run   ${fmt(w.p50)} ${fmt(w.p90)} ${fmt(w.max)}`);
    return f.p50;
  } finally {
    await stack.stop();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  }
}

const p50 = {};
for (const [k, mode] of MODES.entries()) p50[mode] = await measure(mode, k * 100000);
if (p50.lowerer && p50.child) {
  console.log(`first run p50: sigil-lowerer ${p50.lowerer.toFixed(1)} ms, sandbox child ${p50.child.toFixed(1)} ms ` +
    `(${(p50.child / p50.lowerer).toFixed(2)}x)`);
}
