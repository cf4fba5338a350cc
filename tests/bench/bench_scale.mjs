// Benchmark of one account's scale through the whole stack (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_scale.mjs [--workers 4] [--runs 200] [--seconds 5]
//       [--concurrency 16] [--cache-ttl-ms 0] [--fat-groups 100] [--pages 30]
// Starts a stack (tests/api/stack.mjs) and, for accounts of 1, 100 and 1,000 groups where only the
// LAST group lists the run's PKP and the hello-world CID, prints the contract's canExecute gas and
// hello-world runs through nginx (p50/p99 at concurrency 1; runs/s and p50/p99 at --concurrency),
// with the owner key and with a usage key scoped to that last group. The filler groups list the run's
// PKP with other CIDs (a walk over the account's groups visits every one). The last account is the
// worst case of the contract's per-CID chains instead: its 999 fillers list the run's CID with another
// PKP and the matching group is the first one created, so it is the last of the CID's chain (the
// chain runs from the newest group listing the CID).
// Then an account of --fat-groups groups of 256 PKPs, 256 CIDs and the longest name and description
// (the contract's maxima): GET list_groups?page_size=100, p50/p99 of --pages sequential requests, and
// how many bounded view calls the worker makes for that page.
// --cache-ttl-ms is [chain] cache_ttl_ms: 0 (the default here) reads every contract value from the
// node, which is what a run costs on a cache miss; 2000 is the shipped default (a repeated run then
// asks the node only for its key). The accounts are written straight to the contract by their admin
// wallet (the owner key's secret), as tests/api/scale.test.mjs does. Every answer is checked; a
// failure aborts.
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { startStack, ethers, newAccount, createWallet, keccakText, accountConfigAbi, chainRpc, sendBurst } from '../api/stack.mjs';
import { arg, summary } from './support.mjs';

const WORKERS = arg('workers', 4);
const RUNS = arg('runs', 200);
const SECONDS = arg('seconds', 5);
const CONCURRENCY = arg('concurrency', 16);
const CACHE_TTL_MS = arg('cache-ttl-ms', 0);
const FAT_GROUPS = arg('fat-groups', 100);
const PAGES = arg('pages', 30);

const f = (x, w = 8) => x.toFixed(2).padStart(w);

const stack = await startStack({ workers: WORKERS, chainOptions: [`cache_ttl_ms = ${CACHE_TTL_MS}`] });
const iface = new ethers.Interface(accountConfigAbi());

const rpc = (method, params) => chainRpc(stack, method, params);

/// The contract calls [fn, args, gasLimit] from `wallet` as bursts mined one block each (stack.mjs's sendBurst).
const sendAll = (wallet, calls) => sendBurst(stack, wallet, iface, calls);

/// A new account whose admin wallet (the owner key's secret) can write directly.
async function account(name) {
  const { api_key: key } = await newAccount(stack, name);
  const admin = new ethers.Wallet('0x' + Buffer.from(key, 'base64').toString('hex'));
  await rpc('anvil_setBalance', [admin.address, '0x' + (10n ** 24n).toString(16)]);
  return { key, hash: BigInt(keccakText(key)), admin };
}

async function waitFor(check, what) {
  const deadline = Date.now() + 10000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not visible within 10 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function canExecuteGas(keyHash, cidHash, pkp) {
  const data = iface.encodeFunctionData('canExecute', [keyHash, cidHash, pkp]);
  const gas = await rpc('eth_estimateGas', [{ to: stack.contract, data }]);
  return Number(gas) - 21000;
}

async function runs(key, code, pkp) {
  const runOnce = async () => {
    const r = await stack.request('POST', 'sigil_action', { key, body: { code, pkp_id: pkp } });
    if (r.status !== 200 || r.json?.has_error !== false) throw new Error(`run failed: ${r.status} ${r.text.slice(0, 300)}`);
  };
  for (let i = 0; i < 3 * WORKERS; i++) await runOnce(); // every worker lowers and caches the code
  const seq = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await runOnce();
    seq.push(performance.now() - t0);
  }
  let done = 0;
  const lat = [];
  const deadline = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) {
      const s = performance.now();
      await runOnce();
      lat.push(performance.now() - s);
      done++;
    }
  }));
  return { seq: summary(seq), conc: summary(lat), rate: done / ((performance.now() - t0) / 1000) };
}

try {
  const code = `async function main() { return "Hello World!"; } // bench_scale ${randomBytes(4).toString('hex')}`;
  const cid = JSON.parse((await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) })).text);
  const cidHash = keccakText(cid);

  console.log(`Sigil at scale: ${WORKERS} workers, cache_ttl_ms ${CACHE_TTL_MS}, hello world inline, matching group last`);
  console.log(`${'groups'.padStart(6)} ${'fillers list'.padEnd(19)} ${'key'.padEnd(7)} ${'gas'.padStart(7)} ${'c1 p50'.padStart(8)} ${'c1 p99'.padStart(8)}` +
    ` ${`c${CONCURRENCY} p50`.padStart(8)} ${`c${CONCURRENCY} p99`.padStart(8)} ${'runs/s'.padStart(7)}   (ms)`);
  for (const [groups, sameCid] of [[1, false], [100, false], [1000, false], [1000, true]]) {
    const a = await account(`bench scale ${groups}`);
    const pkp = (await createWallet(stack, a.key)).toLowerCase();
    const other = ethers.Wallet.createRandom().address;
    const calls = [['registerWalletDerivation', [a.hash, other, BigInt('0x' + randomBytes(32).toString('hex')), 'other', ''], 1_000_000n]];
    const match = sameCid ? 1 : groups;
    for (let id = 1; id <= groups; id++) {
      if (id === match) calls.push(['addGroup', [a.hash, 0, 'the match', '', [pkp], [cidHash]], 1_000_000n]);
      else if (sameCid) calls.push(['addGroup', [a.hash, 0, `filler ${id}`, '', [other], [cidHash]], 1_000_000n]);
      else calls.push(['addGroup', [a.hash, 0, `filler ${id}`, '', [pkp], [keccakText(`other ${id}`)]], 1_000_000n]);
    }
    const scoped = randomBytes(32).toString('base64');
    calls.push(['setUsageApiKey', [a.hash, BigInt(keccakText(scoped)), 0, 0, 'scoped', '', false, false, false, [], [], [], [match]], 1_000_000n]);
    await sendAll(a.admin, calls);
    await waitFor(async () => {
      const r = await stack.request('POST', 'sigil_action', { key: a.key, body: { code, pkp_id: pkp } });
      return r.status === 200;
    }, `the account of ${groups} groups`);
    for (const [who, key, keyHash] of [['owner', a.key, a.hash], ['scoped', scoped, BigInt(keccakText(scoped))]]) {
      const gas = await canExecuteGas(keyHash, cidHash, pkp);
      const m = await runs(key, code, pkp);
      console.log(`${String(groups).padStart(6)} ${(sameCid ? 'this CID, other PKP' : 'other CID, the PKP').padEnd(19)} ${who.padEnd(7)} ${String(gas).padStart(7)}` +
        ` ${f(m.seq.p50)} ${f(m.seq.p99)} ${f(m.conc.p50)} ${f(m.conc.p99)} ${m.rate.toFixed(0).padStart(7)}`);
    }
  }

  if (FAT_GROUPS > 0) {
    const a = await account('bench scale fat');
    const pkps = Array.from({ length: 256 }, () => ethers.Wallet.createRandom().address);
    const cids = Array.from({ length: 256 }, (_, i) => keccakText(`fat ${i}`));
    const calls = pkps.map((p) => ['registerWalletDerivation', [a.hash, p, BigInt('0x' + randomBytes(32).toString('hex')), 'p', ''], 1_000_000n]);
    for (let g = 1; g <= FAT_GROUPS; g++) {
      calls.push(['addGroup', [a.hash, 0, 'n'.repeat(256), `group ${g} `.padEnd(4096, '.'), pkps.slice(0, 100), cids.slice(0, 100)], 16_000_000n]);
      for (let i = 100; i < 256; i++) {
        calls.push(['addPkpToGroup', [a.hash, 0, g, pkps[i]], 400_000n], ['addActionToGroup', [a.hash, 0, g, cids[i]], 400_000n]);
      }
    }
    const t0 = performance.now();
    await sendAll(a.admin, calls);
    const built = performance.now() - t0;
    const query = { page_number: 0, page_size: 100 };
    await waitFor(async () => {
      const r = await stack.request('GET', 'list_groups', { key: a.key, query: { page_number: FAT_GROUPS - 1, page_size: 1 } });
      return r.status === 200 && r.json.length === 1 && r.json[0].cid_hashes_permitted.length === 256;
    }, 'the fat groups');
    // The view calls one page takes (the worker's loop, from the contract directly).
    let calls100 = 0;
    for (let offset = 0n, total = 1n; offset < total && offset < 100n; calls100++) {
      const out = iface.decodeFunctionResult('listGroups',
        await rpc('eth_call', [{ to: stack.contract, data: iface.encodeFunctionData('listGroups', [a.hash, offset, 100n - offset]) }, 'latest']));
      offset += BigInt(out.page.length);
      total = out.total;
    }
    const lat = [];
    let bytes = 0;
    for (let i = 0; i < PAGES + 2; i++) {
      const s = performance.now();
      const r = await stack.request('GET', 'list_groups', { key: a.key, query });
      const ms = performance.now() - s;
      if (r.status !== 200 || r.json.length !== Math.min(100, FAT_GROUPS)) throw new Error(`list_groups: ${r.status} ${r.text.slice(0, 300)}`);
      bytes = r.raw.length;
      if (i >= 2) lat.push(ms);
    }
    const m = summary(lat);
    console.log(`list_groups page_size 100 of ${FAT_GROUPS} groups x (256 PKPs, 256 CIDs, 4 KB text): p50 ${f(m.p50, 0)} ms,` +
      ` p99 ${f(m.p99, 0)} ms, ${(bytes / 1024).toFixed(0)} KiB, ${calls100} view calls a page (account built in ${(built / 1000).toFixed(0)} s)`);
  }
} finally {
  await stack.stop();
}
