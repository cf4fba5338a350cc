// Benchmark of a published-style keychain bundle (issue 27; not a test, run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_keychain.mjs [--warm 5] [--rounds 1] [--timeout-ms N]
//       [--memory-mib N] [--no-lowerer]
// Bundles tests/bench/keychain/keychain_action.mjs with esbuild (zod and noble: x25519 ECDH,
// secp256k1 sign/verify/recover/ECDH, schnorr, ed25519, AES-GCM through WebCrypto, HKDF), runs it in
// Node (V8's BigInt: the reference answer and time), then through the real stack (nginx, a worker,
// sigil-lowerer unless --no-lowerer, the sandbox child): its first run (the CID's lowering included)
// and `--warm` warm runs (lowered code from the cache). Every answer must equal Node's. Prints the
// figures, the ratio to Node and the load average. The service's default limits apply unless
// --timeout-ms / --memory-mib say otherwise.
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startStack, newAccount, addGroup } from '../api/stack.mjs';
import { arg, summary } from './support.mjs';
import { buildKeychainBundle, keychainParams, nodeMain } from './keychain/bundle.mjs';

const WARM = arg('warm', 5);
const ROUNDS = arg('rounds', 1);
const TIMEOUT_MS = arg('timeout-ms', 0);
const MEMORY_MIB = arg('memory-mib', 0);
const LOWERER = !process.argv.includes('--no-lowerer');
const fmt = (x) => x.toFixed(1).padStart(8);
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');

const bundle = await buildKeychainBundle();
const params = keychainParams(ROUNDS);
console.log(`keychain bundle: ${(bundle.length / 1024).toFixed(0)} KB (esbuild, ES2020, not minified), ${ROUNDS} round(s) a run`);

// Node: the first call (noble's precomputed tables are built then) and warm calls, one context.
const main = nodeMain(bundle);
let t0 = performance.now();
const expected = JSON.stringify(await main(params));
const nodeFirst = performance.now() - t0;
const nodeWarm = [];
for (let i = 0; i < Math.max(WARM, 5); i++) {
  t0 = performance.now();
  await main(params);
  nodeWarm.push(performance.now() - t0);
}
const nw = summary(nodeWarm);
console.log(`node ${process.version}: first call ${nodeFirst.toFixed(1)} ms, warm p50 ${nw.p50.toFixed(1)} ms (load ${load()})`);

const actions = [];
if (TIMEOUT_MS) actions.push(`timeout_ms = ${TIMEOUT_MS}`);
if (MEMORY_MIB) actions.push(`memory_bytes = ${MEMORY_MIB * 1024 * 1024}`);
const stack = await startStack({ workers: 1, lowerer: LOWERER, actions });
try {
  const { api_key: key } = await newAccount(stack, 'bench keychain');
  await addGroup(stack, key, 'bench');
  const cid = JSON.parse((await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(bundle) })).text);
  const listed = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: '1', action_ipfs_cid: cid } });
  if (listed.status !== 200) throw new Error(`add_action_to_group: ${listed.status} ${listed.text}`);
  const runOnce = async () => {
    const start = performance.now();
    const r = await stack.request('POST', 'sigil_action', { key, body: { code: bundle, js_params: params } });
    const ms = performance.now() - start;
    if (r.status !== 200 || r.json?.has_error !== false) {
      // Whether sigil-lowerer lowered it (else the child did, under the run's limits).
      for (const name of readdirSync(stack.logs)) {
        const lines = readFileSync(join(stack.logs, name), 'utf8').split('\n').filter((l) => /lower/i.test(l));
        if (lines.length) console.log(`${name}:\n  ${lines.slice(-6).join('\n  ')}`);
      }
      throw new Error(`run failed after ${ms.toFixed(0)} ms: ${r.status} ${r.text.slice(0, 400)}`);
    }
    if (JSON.stringify(r.json.response) !== expected) throw new Error(`the answer differs from Node's: ${r.text.slice(0, 400)}`);
    return ms;
  };
  const first = await runOnce();
  const warm = [];
  for (let i = 0; i < WARM; i++) warm.push(await runOnce());
  const w = summary(warm);
  console.log(`sigil (${LOWERER ? 'sigil-lowerer' : 'the child lowers'}; ${actions.join(', ') || 'default limits'}), ms:`);
  console.log(`             first    warm p50  warm max`);
  console.log(`sigil    ${fmt(first)}  ${fmt(w.p50)}  ${fmt(w.max)}`);
  console.log(`node     ${fmt(nodeFirst)}  ${fmt(nw.p50)}  ${fmt(nw.max)}`);
  // Each sandbox run is a fresh heap (noble's module set-up and tables every time), as Node's first call.
  console.log(`warm p50 / node first call: ${(w.p50 / nodeFirst).toFixed(0)}x; warm p50 / node warm p50: ` +
    `${(w.p50 / nw.p50).toFixed(0)}x; answers equal Node's; load ${load()}`);
} finally {
  await stack.stop();
}
