// Benchmark of action runs through nginx (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_actions.mjs [--workers 4] [--runs 300] [--seconds 5] [--billing]
// Starts a stack (tests/api/stack.mjs), creates an account with a PKP and a group listing the
// actions below, then for each action measures sequential latency (concurrency 1: p50/p99) and
// runs/s with p50/p99 at concurrency 16 (keep-alive HTTPS, like a real client):
//   hello world      async function main() { return "Hello World!"; }
//   signMessage      an EIP-191 signature with the PKP (keyd, chain permission check, signing)
//   encrypt          AES-256-GCM with the PKP's encryption key
//   ethers wallet    the action key, ethers.Wallet and signMessage (the issue's fourth example)
//   ethers rpc       ethers v5's Interface.encodeFunctionData and a JsonRpcProvider eth_call to the
//                    dev chain (fetch allowed to 127.0.0.1 for this benchmark)
// Every answer is checked (200 and has_error false); a failed run aborts the benchmark, except
// an action whose first run fails (a sandbox without that API), which is reported and skipped.
// --sandbox PATH runs the workers with another sigil-sandbox ([actions] sandbox_path), to compare
// two builds on one stack. --only NAME measures that action alone (e.g. --only "hello world").
import { performance } from 'node:perf_hooks';
import { startStack, newAccount, addGroup, addUsageKey, createWallet } from '../api/stack.mjs';
import { arg, summary } from './support.mjs';

const WORKERS = arg('workers', 4);
const RUNS = arg('runs', 300);
const SECONDS = arg('seconds', 5);
const CONCURRENCY = arg('concurrency', 16);

const ACTIONS = {
  'hello world': 'async function main() { return "Hello World!"; }',
  signMessage: 'async function main({ pkpId }) { return await Lit.Actions.signMessage({ pkpId, message: "bench" }); }',
  encrypt: 'async function main({ pkpId }) { return await Lit.Actions.Encrypt({ pkpId, message: "bench secret" }); }',
  'ethers wallet': 'async function main() { const pk = await Lit.Actions.getLitActionPrivateKey(); const wallet = new ethers.Wallet(pk); const signature = await wallet.signMessage("Chipotle Rocks!"); return { wallet_address: wallet.address, signature, publicKey: wallet.publicKey }; }',
  'ethers rpc': 'async function main({ rpcUrl, contract }) { const iface = new ethers.utils.Interface(["function MAX_GROUPS() view returns (uint256)"]); const provider = new ethers.providers.StaticJsonRpcProvider(rpcUrl, 31337); const raw = await provider.call({ to: contract, data: iface.encodeFunctionData("MAX_GROUPS", []) }); return iface.decodeFunctionResult("MAX_GROUPS", raw)[0].toString(); }',
};


// --billing: the stack charges runs (SQLite ledger, a starter credit large enough for the whole benchmark),
// to measure what charging costs on the run path; --billing-database postgresql://... for PostgreSQL.
const BILLING = process.argv.includes('--billing');
// --usage-key: runs use a usage key with a spend cap (its on-chain balance) instead of the master key,
// so with --billing every charge is also checked against the key's cap.
const USAGE_KEY = process.argv.includes('--usage-key');
const dbIndex = process.argv.indexOf('--billing-database');
const sandboxIndex = process.argv.indexOf('--sandbox');
const onlyIndex = process.argv.indexOf('--only');
const ONLY = onlyIndex > 0 ? process.argv[onlyIndex + 1] : null;
if (ONLY !== null && !(ONLY in ACTIONS)) throw new Error(`--only: no action named ${ONLY} (${Object.keys(ACTIONS).join(', ')})`);
const stack = await startStack({
  workers: WORKERS,
  runsPerKey: 0,  // one key runs at CONCURRENCY, more than the default cap of 8 in flight
  actions: ['fetch_allowed_addresses = 127.0.0.1', ...(sandboxIndex > 0 ? [`sandbox_path = ${process.argv[sandboxIndex + 1]}`] : [])],
  billing: BILLING ? { lines: ['starter_credit_cents = 100000000', 'starter_credit_budget_cents = 1000000000000'],
    database: dbIndex > 0 ? process.argv[dbIndex + 1] : undefined } : null,
});
try {
  const { api_key: key } = await newAccount(stack, 'bench actions');
  const pkp = await createWallet(stack, key);
  const cids = [];
  for (const code of Object.values(ACTIONS)) {
    const r = await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) });
    cids.push(JSON.parse(r.text));
  }
  await addGroup(stack, key, 'bench', { pkp_ids_permitted: [pkp], cid_hashes_permitted: [] });
  for (const cid of cids) {
    const r = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: '1', action_ipfs_cid: cid } });
    if (r.status !== 200) throw new Error(`add_action_to_group: ${r.status} ${r.text}`);
  }
  const runKey = USAGE_KEY ? await addUsageKey(stack, key, { execute_in_groups: [1], balance: 1_000_000_000 }, 'bench runs', 'capped') : key;
  const runOnce = async (code) => {
    const r = await stack.request('POST', 'sigil_action', { key: runKey, body: { code, pkp_id: pkp,
      js_params: { pkpId: pkp, rpcUrl: stack.rpcUrl, contract: stack.contract } } });
    if (r.status !== 200 || r.json?.has_error !== false) throw new Error(`run failed: ${r.status} ${r.text.slice(0, 300)}`);
  };

  console.log(`Sigil action runs through nginx (HTTPS, keep-alive), ${WORKERS} workers, inline code, billing ${BILLING ? "on" : "off"}, ` +
    `${USAGE_KEY ? 'a capped usage key' : 'the master key'}` + (sandboxIndex > 0 ? `, sandbox ${process.argv[sandboxIndex + 1]}` : ''));
  console.log(`${'action'.padEnd(16)} ${'c1 p50'.padStart(8)} ${'c1 p99'.padStart(8)} ${`c${CONCURRENCY} p50`.padStart(8)} ${`c${CONCURRENCY} p99`.padStart(8)} ${'runs/s'.padStart(8)}   (ms)`);
  for (const [name, code] of Object.entries(ACTIONS)) {
    if (ONLY !== null && name !== ONLY) continue;
    try {
      await runOnce(code);
    } catch (e) {
      console.log(`${name.padEnd(16)} not supported by this sandbox: ${e.message.slice(0, 120)}`);
      continue;
    }
    for (let i = 0; i < 3 * WORKERS; i++) await runOnce(code); // every worker lowers and caches it
    const seq = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await runOnce(code);
      seq.push(performance.now() - t0);
    }
    let done = 0;
    const lat = [];
    const deadline = performance.now() + SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const s = performance.now();
        await runOnce(code);
        lat.push(performance.now() - s);
        done++;
      }
    }));
    const rate = done / ((performance.now() - t0) / 1000);
    const a = summary(seq);
    const b = summary(lat);
    const f = (x) => x.toFixed(2).padStart(8);
    console.log(`${name.padEnd(16)} ${f(a.p50)} ${f(a.p99)} ${f(b.p50)} ${f(b.p99)} ${rate.toFixed(0).padStart(8)}`);
  }
} finally {
  await stack.stop();
}
