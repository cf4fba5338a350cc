// Writes that read before they write (update_group without a list, update_usage_api_key without
// some field) take the current values from the node, never from the read cache: a cached record
// would silently undo a change made meanwhile straight on chain (issue 15). Today every write
// attempt also drops every worker's cache, so a cached record could not survive to the next
// update anyway; the reads are fresh so that this stays true whatever the cache does next. The
// test makes the cache as stale as it can be (1 worker, events polled once a minute, the record
// read by a refused update) and checks the behaviour: the change made on chain is kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startStack, ethers, assertOk, newAccount, addGroup, addUsageKey, createWallet, keccakText, accountConfigAbi,
} from './stack.mjs';

let stack;
let provider;
let owner;    // the master key
let admin;    // the owner wallet (the master key is its secret), writing straight to the contract
let c;
let accountHash;

before(async () => {
  stack = await startStack({ workers: 1, chainOptions: ['cache_ttl_ms = 600000', 'event_poll_ms = 60000'] });
  owner = (await newAccount(stack, 'fresh reads')).api_key;
  provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  admin = new ethers.Wallet('0x' + Buffer.from(owner, 'base64').toString('hex'), provider);
  await provider.send('anvil_setBalance', [admin.address, '0x8ac7230489e80000']);
  c = new ethers.Contract(stack.contract, accountConfigAbi(), admin);
  accountHash = BigInt(keccakText(owner));
});
after(async () => { provider?.destroy(); await stack?.stop(); });

const req = (...a) => stack.request(...a);

test('update_group keeps a PKP added on chain a moment ago', async () => {
  const group = await addGroup(stack, owner, 'g');
  const pkp = await createWallet(stack, owner);
  // A key without scopes: its update reads the group (caching it) and is then refused by the contract.
  const weak = await addUsageKey(stack, owner);
  const refused = await req('POST', 'update_group', { key: weak, body: { group_id: group, name: 'x', description: 'd' } });
  assert.equal(refused.status, 403, refused.text);

  await (await c.addPkpToGroup(accountHash, 0, group, pkp)).wait();
  assertOk(await req('POST', 'update_group', { key: owner, body: { group_id: group, name: 'renamed', description: 'd' } }));
  const [, name, , pkps] = await c.getGroup(accountHash, group);
  assert.equal(name, 'renamed');
  assert.deepEqual(pkps.map((a) => a.toLowerCase()), [pkp.toLowerCase()]);
});
