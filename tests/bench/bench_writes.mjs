// Relayed writes through the whole stack on a chain with block times (issue 23; not a test, run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_writes.mjs [--workers 48] [--payers 64] [--inflight 64]
//     [--seconds 20] [--block-time 2]
// Starts a stack (tests/api/stack.mjs; SIGIL_STACK=/path/to/stack.mjs runs an older tree's, for the
// baseline), switches anvil to a block every --block-time seconds, and keeps --inflight new_account
// calls in flight for --seconds (each is one relayed write, estimate to receipt, with a fresh key).
// Prints writes/s acknowledged, p50/p99 of the acknowledged, every other answer by status and code,
// the nonce errors (must be 0), and afterwards checks on chain that every acknowledged account was
// created exactly once (AccountCreated events by account hash = keccak256 of its key).
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { arg, summary } from './support.mjs';

const stackModule = process.env.SIGIL_STACK ?? new URL('../api/stack.mjs', import.meta.url).href;
const { startStack, httpsRequest, ethers } = await import(stackModule);

const WORKERS = arg('workers', 48);
const PAYERS = arg('payers', 64);
const INFLIGHT = arg('inflight', 64);
const SECONDS = arg('seconds', 20);
const BLOCK_TIME = arg('block-time', 2);

const stack = await startStack({
  workers: WORKERS, chainPayers: PAYERS,
  // new_account is rate-limited per client address by nginx; the bench is one address.
  nginxEnv: { SIGIL_MINT_RATE: '100000r/s', SIGIL_MINT_BURST: '100000' },
});
const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true });
const agent = new https.Agent({ keepAlive: true, maxSockets: INFLIGHT, rejectUnauthorized: false });
try {
  // Every worker's keyd and chain connections warm, with automine still on.
  await Promise.all(Array.from({ length: Math.min(INFLIGHT, WORKERS) }, () => post()));
  const startBlock = await provider.getBlockNumber();
  await provider.send('evm_setAutomine', [false]);
  await provider.send('evm_setIntervalMining', [BLOCK_TIME]);

  const acked = [];      // api keys acknowledged (200)
  const latencies = [];  // of the acknowledged, ms
  const others = new Map();
  let nonceErrors = 0;
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(Array.from({ length: INFLIGHT }, async () => {
    while (performance.now() < end) {
      const t = performance.now();
      const r = await post();
      if (r.status === 200 && r.json?.api_key) {
        acked.push(r.json.api_key);
        latencies.push(performance.now() - t);
      } else {
        const code = `${r.status} ${r.json?.error?.code ?? r.text.slice(0, 60)}`;
        others.set(code, (others.get(code) ?? 0) + 1);
        if (/nonce/i.test(r.text)) nonceErrors++;
        if (r.status === 503) await new Promise((res) => setTimeout(res, 200));  // Retry-After, shortened
      }
    }
  }));
  const elapsed = (performance.now() - t0) / 1000;
  const s = summary(latencies);
  console.log(`workers ${WORKERS}, payers ${PAYERS}, ${INFLIGHT} in flight, block time ${BLOCK_TIME} s, ${elapsed.toFixed(1)} s`);
  console.log(`acknowledged writes: ${acked.length} (${(acked.length / elapsed).toFixed(2)} writes/s), ` +
    `p50 ${s.p50?.toFixed(0)} ms, p99 ${s.p99?.toFixed(0)} ms, max ${s.max?.toFixed(0)} ms`);
  console.log(`other answers: ${others.size ? [...others].map(([k, v]) => `${k} x${v}`).join(', ') : 'none'}`);
  console.log(`nonce errors: ${nonceErrors}`);

  // Let pending transactions settle, then count each acknowledged account's creation on chain.
  await new Promise((res) => setTimeout(res, (BLOCK_TIME + 1) * 1000));
  const topic = ethers.id('AccountCreated(uint256,address,bool)');
  const logs = await provider.getLogs({ address: stack.contract, topics: [topic], fromBlock: startBlock + 1, toBlock: 'latest' });
  const created = new Map();
  for (const log of logs) created.set(BigInt(log.topics[1]), (created.get(BigInt(log.topics[1])) ?? 0) + 1);
  let once = 0;
  const wrong = [];
  for (const key of acked) {
    const n = created.get(BigInt(ethers.keccak256(ethers.toUtf8Bytes(key)))) ?? 0;
    if (n === 1) once++; else wrong.push(n);
  }
  console.log(`on chain: ${once} of ${acked.length} acknowledged created exactly once` +
    `${wrong.length ? ` (others: ${wrong.join(',')})` : ''}; ${logs.length} AccountCreated events in all`);
} finally {
  await provider.send('evm_setAutomine', [true]).catch(() => {});
  provider.destroy();
  agent.destroy();
  await stack.stop();
}

function post() {
  const body = Buffer.from(JSON.stringify({ account_name: 'bench', account_description: 'bench_writes' }));
  return httpsRequest(agent, `${stack.url}/core/v1/new_account`, 'POST',
    { headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) }, body });
}
