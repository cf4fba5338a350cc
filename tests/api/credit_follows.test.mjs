// Credit follows the account (DESIGN.md section 9: the ledger customer is the admin wallet): when
// the admin changes on chain by the direct path (an accepted ownership transfer, an accepted or
// self-made conversion), the worker's event watcher hears OwnershipTransferred/AccountConverted and
// the balance moves to the new admin's customer once per event (tx hash + log index). Before this,
// credit stayed on the old key wallet, where an account converted to that wallet could capture it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, ethers, accountConfigAbi, eventually, assertOk, walletAuth as walletAuthOf } from './stack.mjs';

const STARTER = 100;  // [billing] starter_credit_cents

let stack;
let provider;

before(async () => {
  stack = await startStack({ billing: { lines: [`starter_credit_cents = ${STARTER}`] } });
  provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
});
after(async () => { provider?.destroy(); await stack?.stop(); });

async function funded(wallet) {
  const w = wallet.connect(provider);
  await provider.send('anvil_setBalance', [w.address, '0x8ac7230489e80000']);
  return w;
}
const contractAs = (w) => new ethers.Contract(stack.contract, accountConfigAbi(), w);
const send = async (p) => (await p).wait();

const walletAuth = (signer) => walletAuthOf(stack, signer);

async function balanceOf(signer) {
  const r = await stack.request('GET', 'billing/balance', { headers: { 'X-Wallet-Auth': await walletAuth(signer) } });
  return r.status === 200 ? r.json.balance_cents : null;
}

// A new API-mode account: its master key, hash and the key's wallet (the admin), with the starter credit.
async function apiAccount() {
  const r = await stack.request('POST', 'new_account', { body: {} });
  assertOk(r, 'new_account');
  const key = r.json.api_key;
  const master = await funded(new ethers.Wallet(ethers.hexlify(ethers.decodeBase64(key))));
  assert.equal(master.address.toLowerCase(), r.json.wallet_address.toLowerCase());
  const balance = await stack.request('GET', 'billing/balance', { key });
  assert.equal(balance.json.balance_cents, STARTER);
  return { key, hash: BigInt(ethers.keccak256(ethers.toUtf8Bytes(key))), master };
}

test('an accepted ownership transfer by the direct path moves the credit to the new owner, once', async () => {
  const a = await apiAccount();
  const next = await funded(ethers.Wallet.createRandom());
  await send(contractAs(a.master).transferOwnership(next.address));
  await send(contractAs(next).acceptOwnership(a.hash));
  let seen;
  assert.ok(await eventually(async () => (seen = await balanceOf(next)) === STARTER, 10000, 100),
    `the new owner's balance is ${seen}, not ${STARTER}`);
  // Every worker hears the event; the balance still moved once (another poll round changes nothing).
  await new Promise((r) => setTimeout(r, 1500));
  for (let i = 0; i < 4; i += 1) assert.equal(await balanceOf(next), STARTER);
});

test('a direct-path conversion moves the credit when the new admin accepts, and an admin converting to itself keeps it', async () => {
  const a = await apiAccount();
  const next = await funded(ethers.Wallet.createRandom());
  await send(contractAs(a.master).convertToChainSecuredAccount(a.hash, next.address));
  // Proposed only: nothing moved, the master key still reads its credit.
  assert.equal((await stack.request('GET', 'billing/balance', { key: a.key })).json.balance_cents, STARTER);
  await send(contractAs(next).acceptConversion(a.hash));
  let seen;
  assert.ok(await eventually(async () => (seen = await balanceOf(next)) === STARTER, 10000, 100),
    `the new admin's balance is ${seen}, not ${STARTER}`);

  const self = await apiAccount();
  await send(contractAs(self.master).convertToChainSecuredAccount(self.hash, self.master.address));
  assert.ok(await eventually(async () => (await balanceOf(self.master)) === STARTER, 5000, 100));
});
