// The pool shares its chain reads and its event watch (issue 23, common/shared_cache.h): one
// worker's read serves every worker, one worker polls the contract's events for all, and key
// validity is served from the cache only while that watch is current. The workers talk to anvil
// through a counting proxy, so the test sees exactly what the node is asked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  startStack, ethers, assertOk, newAccount, addUsageKey, keccakText, accountConfigAbi,
} from './stack.mjs';

const WORKERS = 8;
const POLL_MS = 250;  // [chain] event_poll_ms, the default

let stack;
let proxy;
let owner;
let provider;
let c;
let accountHash;
const calls = new Map();  // JSON-RPC method -> count
let target = null;

function startProxy() {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        const parsed = JSON.parse(body.toString());
        for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
          calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
        }
      } catch { /* forwarded as is */ }
      const up = http.request(target, { method: 'POST', headers: { 'content-type': 'application/json' } }, (r) => {
        res.writeHead(r.statusCode, { 'content-type': 'application/json' });
        r.pipe(res);
      });
      up.on('error', () => { res.writeHead(502); res.end(); });
      up.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const count = (method) => calls.get(method) ?? 0;
const req = (...a) => stack.request(...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  proxy = await startProxy();
  stack = await startStack({
    workers: WORKERS, maxWorkers: WORKERS, supervisorOptions: ['reserve_workers = 0'],
    chainOptions: ['cache_ttl_ms = 60000'],
    rpcUrl: (chain) => { target = chain.rpc_url; return `http://127.0.0.1:${proxy.address().port}`; },
  });
  owner = (await newAccount(stack, 'shared reads')).api_key;
  provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  const admin = new ethers.Wallet('0x' + Buffer.from(owner, 'base64').toString('hex'), provider);
  await provider.send('anvil_setBalance', [admin.address, '0x8ac7230489e80000']);
  c = new ethers.Contract(stack.contract, accountConfigAbi(), admin);
  accountHash = BigInt(keccakText(owner));
});
after(async () => { provider?.destroy(); await stack?.stop(); proxy?.close(); });

// `n` requests with `key`, `width` at a time (every worker of the pool busy at once).
async function burst(key, n, width = WORKERS) {
  const statuses = [];
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) {
      next++;
      statuses.push((await req('GET', 'list_groups', { key })).status);
    }
  }));
  return statuses;
}

test('one worker\'s reads serve the whole pool, and one worker polls the events for all', async () => {
  const key = await addUsageKey(stack, owner, { can_create_groups: true }, 'reader');
  assertOk(await req('GET', 'list_groups', { key }));  // cold: this worker asks the node
  const before = count('eth_call');
  const polls = count('eth_blockNumber');
  const t0 = Date.now();
  const statuses = await burst(key, 200);
  const elapsed = Date.now() - t0;
  assert.deepEqual([...new Set(statuses)], [200]);
  const reads = count('eth_call') - before;
  // Before the pool shared its reads, key validity alone cost one call per request (200) and every
  // worker its own misses. Shared, the pool is warm after the first request; a few validity reads go
  // to the node when the machine is so loaded that the watch falls behind (2 x event_poll_ms).
  assert.ok(reads <= 20, `${reads} eth_calls for 200 requests over ${WORKERS} workers`);
  const polled = count('eth_blockNumber') - polls;
  const bound = Math.ceil(elapsed / POLL_MS) + 3;
  assert.ok(polled <= bound, `${polled} event polls in ${elapsed} ms (one pool-wide poll per ${POLL_MS} ms allows ${bound})`);
});

test('a key removed straight on the contract stops working on every worker within 2 x event_poll_ms', async () => {
  const key = await addUsageKey(stack, owner, { can_create_groups: true }, 'removed on chain');
  assert.deepEqual([...new Set(await burst(key, 32))], [200]);  // valid, cached everywhere
  await (await c.removeUsageApiKey(accountHash, 0, BigInt(keccakText(key)))).wait();
  await sleep(2 * POLL_MS + 150);
  const after = await burst(key, 32);
  assert.deepEqual([...new Set(after)], [401], `after removal: ${after.join(',')}`);
});

test('a key added straight on the contract works at once: refusals are never cached', async () => {
  const key = Buffer.from(ethers.randomBytes(32)).toString('base64');
  assert.deepEqual([...new Set(await burst(key, 16))], [401]);  // unknown everywhere
  await (await c.setUsageApiKey(accountHash, keccakText(key), 0, 0, 'added on chain', '', true, false, false, [], [], [], [])).wait();
  assert.deepEqual([...new Set(await burst(key, 16))], [200]);
});

test('with the node paused past the watch window, key validity fails closed on every worker', async () => {
  const key = await addUsageKey(stack, owner, { can_create_groups: true }, 'paused');
  assert.deepEqual([...new Set(await burst(key, 16))], [200]);
  process.kill(stack.anvilPid, 'SIGSTOP');
  try {
    await sleep(2 * POLL_MS + 150);
    const paused = await burst(key, 16);
    assert.ok(paused.every((s) => s === 503 || s === 504), `paused: ${paused.join(',')}`);
  } finally {
    process.kill(stack.anvilPid, 'SIGCONT');
  }
});
