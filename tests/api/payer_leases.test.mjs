// API payer wallets leased per relayed write (issue 23): with every payer holding a write that waits
// for its receipt, another write answers 503 overloaded with Retry-After: 1 after a brief wait, while
// reads go on; once the block comes, the waiting writes are acknowledged and on chain, and the payer
// serves the next write. Workers outnumber payers here, so only the lease keeps nonces apart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, assertOk, assertError, keccakText, ethers, accountConfigAbi } from './stack.mjs';

let stack;
let provider;

before(async () => {
  stack = await startStack({ workers: 3, chainPayers: 1 });
  provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
});
after(async () => {
  await provider?.send('evm_setAutomine', [true]).catch(() => {});
  provider?.destroy();
  await stack?.stop();
});

const mint = () => stack.request('POST', 'new_account', { body: { account_name: 'lease', account_description: '' } });

test('one payer, three workers: a second write in flight is refused overloaded, the first lands once', async () => {
  const warm = assertOk(await mint(), 'new_account');  // keyd's payer list fetched, connections warm
  await provider.send('evm_setAutomine', [false]);
  let mined = false;
  try {
    const first = mint();  // holds the only payer until its block
    // Wait until its transaction is in the pool, so the payer is surely leased.
    const payer = stack.apiPayers[0];
    const latest = await provider.getTransactionCount(payer, 'latest');
    for (let i = 0; i < 500 && (await provider.getTransactionCount(payer, 'pending')) === latest; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(await provider.getTransactionCount(payer, 'pending'), latest + 1, 'the first write reached the pool');
    const t = performance.now();
    const second = await mint();
    const waited = performance.now() - t;
    assertError(second, 503, 'overloaded');
    assert.equal(second.headers['retry-after'], '1');
    // About 100 ms (the payer wait); never the block that will not come (the receipt timeout is 30 s).
    assert.ok(waited >= 90 && waited < 5000, `refused after ${Math.round(waited)} ms`);
    // Reads need no payer.
    assertOk(await stack.request('GET', 'account_exists', { key: warm.api_key }));
    await provider.send('evm_mine', []);
    mined = true;
    const acked = assertOk(await first, 'the first write');
    await provider.send('evm_setAutomine', [true]);
    // On chain once, and the payer is free again for the next write.
    const contract = new ethers.Contract(stack.contract, accountConfigAbi(), provider);
    const created = await contract.queryFilter(contract.filters.AccountCreated(BigInt(keccakText(acked.api_key))));
    assert.equal(created.length, 1);
    assertOk(await mint(), 'the next write');
    assert.equal(await provider.getTransactionCount(payer, 'latest'), latest + 2);
  } finally {
    if (!mined) await provider.send('evm_mine', []).catch(() => {});
    await provider.send('evm_setAutomine', [true]).catch(() => {});
  }
});

// A worker killed (SIGKILL) while its write waits for the block never gives its payer back itself: the
// supervisor frees the lease when it reaps the worker, and the next write takes the payer with the
// nonce after the dead worker's transaction, still in the pool. Both are mined, in order.
test('a payer held by a killed worker comes back, and the next write queues after its transaction', async () => {
  const { execFileSync } = await import('node:child_process');
  const payer = stack.apiPayers[0];
  const waitPending = async (n) => {
    for (let i = 0; i < 300 && (await provider.getTransactionCount(payer, 'pending')) < n; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    return provider.getTransactionCount(payer, 'pending');
  };
  await provider.send('evm_setAutomine', [false]);
  try {
    const latest = await provider.getTransactionCount(payer, 'latest');
    const orphan = mint();
    assert.equal(await waitPending(latest + 1), latest + 1, 'the doomed write reached the pool');
    const workers = execFileSync('pgrep', ['-P', String(stack.pidOf('supervisor')), 'sigil-worker']).toString().trim()
      .split('\n').map(Number);
    for (const pid of workers) process.kill(pid, 'SIGKILL');
    const lost = await orphan;
    assert.ok(lost.status >= 500, `the killed worker's request: ${lost.status}`);
    // The next write gets the payer (the reaped worker's lease is free) and the next nonce.
    let next = null;
    for (let i = 0; i < 100 && next === null; i++) {
      const pending = mint();
      const grew = await waitPending(latest + 2);
      if (grew === latest + 2) { next = pending; break; }
      const r = await pending;  // refused (workers restarting, or overloaded): try again
      assert.ok([502, 503].includes(r.status), `${r.status} ${r.text}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(next, 'a later write got the payer');
    await provider.send('evm_mine', []);
    const acked = assertOk(await next, 'the write after the kill');
    assert.equal(await provider.getTransactionCount(payer, 'latest'), latest + 2, 'both transactions mined');
    const contract = new ethers.Contract(stack.contract, accountConfigAbi(), provider);
    assert.equal((await contract.queryFilter(contract.filters.AccountCreated(BigInt(keccakText(acked.api_key))))).length, 1);
  } finally {
    await provider.send('evm_mine', []).catch(() => {});
    await provider.send('evm_setAutomine', [true]).catch(() => {});
  }
});
