// Benchmark of imports by CID (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_imports.mjs [--kb 100] [--count 5] [--warm 30] [--child-only]
// A small action imports one ES module of about `kb` KB (modern code, pinned on a gateway of our own
// that counts requests). Each of `count` fresh modules (a new CID each) is timed on its first run (the
// worker fetches it, sigil-lowerer or, with --child-only, the sandbox child lowers it as a module, the
// child links it) and then `warm` times (lowered text from the worker's memory, compiled and linked in
// the child per run); beside it, in the same sitting, the same module's code pasted into the action
// (no import: what the import costs over the code itself) and a hello world.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { startStack, newAccount, addGroup } from '../api/stack.mjs';
import { arg, summary } from './support.mjs';

const KB = arg('kb', 100);
const COUNT = arg('count', 5);
const WARM = arg('warm', 30);
const CHILD_ONLY = process.argv.includes('--child-only');

function block(i, seed) {
  return `
export class Ledger${i} {
  static kind = 'ledger${i}-${seed}';
  #total = 0;
  constructor(entries = []) { this.entries = [...entries]; }
  add({ amount, memo = '' }, ...tags) { this.entries.push({ amount, memo, tags }); this.#total += amount; return this; }
  get total() { return this.#total; }
  summary(opts) {
    const label = opts?.label ?? 'item${i}';
    return \`\${label}: \${this.entries.length} entries, \${this.#total}\`;
  }
}
export const step${i} = async ({ a = '0', b = '0' } = {}) => {
  const l = new Ledger${i}();
  for (const [k, v] of Object.entries({ a, b })) l.add({ amount: Number(v), memo: k }, 'x', 'y');
  return l.total + ${i};
};
`;
}

function moduleText(seed) {
  let text = `// bench module ${seed}\n`;
  for (let i = 0; text.length < KB * 1024; i++) text += block(i, seed);
  return text;
}

const served = new Map();
let requests = 0;
const gateway = createServer((req, res) => {
  requests++;
  const cid = req.url.replace(/^\/ipfs\//, '');
  if (!served.has(cid)) return res.writeHead(404).end();
  res.writeHead(200).end(served.get(cid));
});
await new Promise((resolve) => gateway.listen(0, '127.0.0.1', resolve));
const cacheDir = mkdtempSync('/tmp/sigil-bench-imports-');
const stack = await startStack({ workers: 1, lowerer: !CHILD_ONLY, ipfsGateways: [`http://127.0.0.1:${gateway.address().port}/ipfs/`],
  actions: [`code_cache_dir = ${cacheDir}`] });
const fmt = (x) => x.toFixed(1).padStart(7);
try {
  if (!CHILD_ONLY) {
    const log = join(stack.logs, 'lowerer.log');
    for (let i = 0; i < 300 && !readFileSync(log, 'utf8').includes('warmed up'); i++) await sleep(50);
  }
  const { api_key: key } = await newAccount(stack, 'bench imports');
  await addGroup(stack, key, 'bench');
  const cidOf = async (text) => JSON.parse((await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(text) })).text);
  const allow = async (code) => {
    const r = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: '1', action_ipfs_cid: await cidOf(code) } });
    if (r.status !== 200) throw new Error(`add_action_to_group: ${r.status} ${r.text}`);
  };
  const runOnce = async (code) => {
    const t0 = performance.now();
    const r = await stack.request('POST', 'sigil_action', { key, body: { code, js_params: { a: '1', b: '2' } } });
    const ms = performance.now() - t0;
    if (r.status !== 200 || r.json?.has_error !== false) throw new Error(`run failed: ${r.status} ${r.text.slice(0, 300)}`);
    return ms;
  };
  const hello = 'async function main() { return "hello"; }';
  await allow(hello);
  const inline = moduleText(`inline-${Date.now()}`).replaceAll('export ', '') +
    '\nasync function main(p) { return (await step0(p)) + (await step1(p)) + Ledger0.kind.length; }';
  await allow(inline);
  const actions = [];
  let size = 0;
  for (let n = 0; n < COUNT; n++) {
    const text = moduleText(`${Date.now()}-${n}`);
    size = text.length;
    const cid = await cidOf(text);
    served.set(cid, text);
    const code = `import { step0, step1, Ledger0 } from "ipfs://${cid}";\nasync function main(p) { return (await step0(p)) + (await step1(p)) + Ledger0.kind.length; }`;
    await allow(code);
    actions.push(code);
  }
  await runOnce(hello);
  const first = [];
  const warm = [];
  const plain = [];
  const pasted = [];
  for (const code of actions) {
    first.push(await runOnce(code));
    for (let i = 0; i < Math.ceil(WARM / COUNT); i++) {
      warm.push(await runOnce(code));
      plain.push(await runOnce(hello));
    }
  }
  await runOnce(inline);
  for (let i = 0; i < warm.length; i++) pasted.push(await runOnce(inline));
  const line = (name, s) => console.log(`${name.padEnd(34)} n=${String(s.n).padStart(3)} p50 ${fmt(s.p50)} ms  p90 ${fmt(s.p90)} ms  max ${fmt(s.max)} ms`);
  console.log(`one ${(size / 1024).toFixed(0)} KB ES module by CID, ${CHILD_ONLY ? 'the sandbox child lowers' : 'sigil-lowerer lowers'}; gateway requests ${requests}; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  line('first run (fetch, lower, link)', summary(first));
  line('warm run (cached, linked per run)', summary(warm));
  line('the same code pasted in (warm)', summary(pasted));
  line('hello world (no import)', summary(plain));
} finally {
  await stack.stop();
  gateway.close();
  rmSync(cacheDir, { recursive: true, force: true });
}
