// Benchmark of the attestation endpoints and the verifier through the whole stack with the simulated
// guest agent (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_attestation.mjs [--n 300] [--nonces 20] [--verifies 5]
// Sequential p50/p99 of: GET /attestation (the worker's cached quote), GET /info (cached), GET
// /attestation?nonce= (a fresh quote from the agent; spaced 0.6 s apart to stay under nginx's 2 r/s
// limit per client), and the wall time of one whole `sigil-verify --allow-simulated` run (with the app id and the
// simulator's measurements as expectations, rules 4 and 7 allowed unchecked) (a new Node
// process: fetches, the quote's signature, RTMR3 replay, rule 6's handshake; rules 7-8 without DNS
// and with the chain's RPC).
import { performance } from 'node:perf_hooks';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startStack, SOURCE_DIR } from '../api/stack.mjs';
import { arg, quantile } from './support.mjs';

const N = arg('n', 300);
const NONCES = arg('nonces', 20);
const VERIFIES = arg('verifies', 5);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fmt = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return `n=${String(s.length).padEnd(4)} p50 ${quantile(s, 0.5).toFixed(2).padStart(8)} ms   p99 ${quantile(s, 0.99).toFixed(2).padStart(8)} ms`;
};

const stack = await startStack({ workers: 2, teeSim: true });
try {
  const timed = async (n, path, query, gapMs = 0) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const r = await stack.request('GET', path, query ? { query: query(i) } : {});
      out.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
      if (gapMs) await sleep(gapMs);
    }
    return out;
  };
  await timed(20, '/attestation');
  await timed(20, '/info');
  const cached = await timed(N, '/attestation');
  const info = await timed(N, '/info');
  const nonce = await timed(NONCES, '/attestation', (i) => ({ nonce: (i + 1).toString(16).padStart(64, '0') }), 600);
  // What the verifier is told to expect: the simulator's fixed measurements, as it prints them.
  const measured = Object.entries(JSON.parse((await promisify(execFile)(process.execPath,
    [join(SOURCE_DIR, 'evidence/tee-sim/sigil-tee-sim.mjs'), '--print-measurements'])).stdout)).flatMap(([k, v]) => [`--${k}`, v]);
  const verify = [];
  for (let i = 0; i < VERIFIES; i++) {
    const t0 = performance.now();
    await promisify(execFile)(process.execPath, [join(SOURCE_DIR, 'clients/js/src/verify/cli.js'), stack.url,
      '--allow-simulated', '--insecure', '--governance-rpc', stack.rpcUrl, '--app-id', stack.governance,
      '--allow-unchecked', '4,7', ...measured]).catch((e) => {
      throw new Error(`sigil-verify failed: ${e.stdout}${e.stderr}`);
    });
    verify.push(performance.now() - t0);
    await sleep(600);  // its nonce request counts against the same limit
  }
  console.log('Attestation through nginx (HTTPS keep-alive), simulated guest agent, 2 workers');
  console.log(`GET /attestation (cached)      ${fmt(cached)}`);
  console.log(`GET /info (cached)             ${fmt(info)}`);
  console.log(`GET /attestation?nonce= (fresh) ${fmt(nonce)}`);
  console.log(`sigil-verify, whole run        ${fmt(verify)}`);
} finally {
  await stack.stop();
}
