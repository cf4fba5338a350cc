// The direct path (spec "Management paths"): a ChainSecured account's admin wallet writes straight
// to AccountConfig with ethers; the API sees each change within 5 s (DESIGN.md section 3: reads are
// cached briefly and invalidated by polling the contract's events). The usage key the API is
// called with is minted on chain by the admin wallet itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  startStack, ethers, assertError, assertOk, keccakText, accountConfigAbi, eventually,
} from './stack.mjs';

const VISIBLE_WITHIN_MS = 5000;
const CID = 'QmRgutAxd8t7oGkSm4wmeuByG6M51wcTso6cubDdQtuEfL';

let stack;
let provider;
let admin;     // the ChainSecured account's admin wallet
let c;         // AccountConfig as the admin
let accountHash;
let usageKey;  // minted on chain by the admin

before(async () => {
  stack = await startStack();
  provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  admin = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [admin.address, '0x8ac7230489e80000']); // 10 ETH
  c = new ethers.Contract(stack.contract, accountConfigAbi(), admin);
});
after(async () => { provider?.destroy(); await stack?.stop(); });

const req = (...a) => stack.request(...a);
const send = async (p) => (await p).wait();

/// Polls `path` with the usage key until check(response) holds on CONSECUTIVE answers in a row
/// (each worker caches on its own, so one fresh answer does not mean all are); returns the ms it took.
const CONSECUTIVE = 4;
async function visibleWhen(path, check, query = {}) {
  const t0 = Date.now();
  let last;
  let run = 0;
  const ok = await eventually(async () => {
    last = await req('GET', path, { key: usageKey, query });
    run = check(last) ? run + 1 : 0;
    return run >= CONSECUTIVE;
  }, VISIBLE_WITHIN_MS, 50);
  assert.ok(ok, `${path} did not show the change within ${VISIBLE_WITHIN_MS} ms: ${last.status} ${last.text.slice(0, 200)}`);
  return Date.now() - t0;
}
const visible = (path, pred, query) => visibleWhen(path, (r) => r.status === 200 && pred(r.json), query);

test('the admin wallet creates the account and mints a usage key on chain', async () => {
  await send(c.newChainSecuredAccount());
  accountHash = BigInt(ethers.keccak256(admin.address));
  const [adminAddr, managed, exists] = await c.getAccount(accountHash);
  assert.equal(adminAddr, admin.address);
  assert.equal(managed, false);
  assert.equal(exists, true);

  usageKey = randomBytes(32).toString('base64');
  // Before it exists on chain the key is unknown to the API.
  assertError(await req('GET', 'list_groups', { key: usageKey }), 401, 'invalid_api_key');
  await send(c.setUsageApiKey(accountHash, keccakText(usageKey), 0, 0, 'direct key', 'minted by the wallet',
    true, false, false, [0], [], [], [0]));
  const ms = await visible('list_groups', (j) => Array.isArray(j) && j.length === 0);
  const exists2 = await req('GET', 'account_exists', { key: usageKey });
  assert.equal(exists2.json, true);
  // It lists itself with what the wallet set.
  const keys = assertOk(await req('GET', 'list_api_keys', { key: usageKey }));
  assert.equal(keys.length, 1);
  assert.equal(keys[0].id, keccakText(usageKey));
  assert.equal(keys[0].name, 'direct key');
  assert.equal(keys[0].can_create_groups, true);
  console.log(`# usage key usable after ${ms} ms`);
});

test('addGroup on chain shows in list_groups within 5 s', async () => {
  // Prime the cache with the old (empty) answer first, so the test sees invalidation, not a miss.
  assert.deepEqual(assertOk(await req('GET', 'list_groups', { key: usageKey })), []);
  await send(c.addGroup(accountHash, 0, 'direct group', 'added by the wallet', [], []));
  const ms = await visible('list_groups', (j) => j.length === 1 && j[0].name === 'direct group');
  const g = assertOk(await req('GET', 'list_groups', { key: usageKey }))[0];
  assert.equal(BigInt(g.id), 1n);
  assert.equal(g.description, 'added by the wallet');
  console.log(`# addGroup visible after ${ms} ms`);
});

test('updateGroup and addAction on chain show within 5 s', async () => {
  await send(c.updateGroup(accountHash, 0, 1, 'renamed on chain', 'still direct', [], [keccakText(CID)]));
  await visible('list_groups', (j) => j.length === 1 && j[0].name === 'renamed on chain');
  await visible('list_actions', (j) => j.length === 1 && j[0].id === keccakText(CID), { group_id: 1 });
  await send(c.addAction(accountHash, 0, keccakText(CID), 'foobar', 'metadata on chain'));
  await visible('list_actions', (j) => j.length === 1 && j[0].name === 'foobar');
});

test('registerWalletDerivation on chain shows in list_wallets within 5 s', async () => {
  const pkp = ethers.Wallet.createRandom().address;
  const path = BigInt('0x' + randomBytes(32).toString('hex'));
  await send(c.registerWalletDerivation(accountHash, pkp, path, 'wallet', 'registered directly'));
  await visible('list_wallets', (j) => j.length === 1 && j[0].wallet_address.toLowerCase() === pkp.toLowerCase());
  const w = assertOk(await req('GET', 'list_wallets', { key: usageKey }))[0];
  assert.equal(BigInt(w.id), path);
  assert.equal(w.name, 'wallet');
});

test('relayed writes for a ChainSecured account are refused by the contract', async () => {
  // The usage key has group:create, but API payers may not write for an unmanaged account.
  const r = await req('POST', 'add_group', {
    key: usageKey, body: { group_name: 'relayed', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  });
  assertError(r, 403, 'not_managed');
  assert.equal(assertOk(await req('GET', 'list_groups', { key: usageKey })).length, 1);
});

test('a group name that is not UTF-8 (written on chain) is answered with U+FFFD, never broken JSON or a 500', async () => {
  // string and bytes share one ABI encoding: the name goes on chain as raw bytes.
  const selector = c.interface.getFunction('addGroup').selector;
  const args = ethers.AbiCoder.defaultAbiCoder().encode(
    ['uint256', 'uint256', 'bytes', 'bytes', 'address[]', 'bytes32[]'],
    [accountHash, 0, Uint8Array.from([0x62, 0x61, 0x64, 0xff, 0xc0, 0xaf, 0x21]), Uint8Array.from([0xed, 0xa0, 0x80]), [], []]);
  await send(admin.sendTransaction({ to: stack.contract, data: selector + args.slice(2) }));
  await visible('list_groups', (j) => j.some((g) => g.name === 'bad\uFFFD\uFFFD\uFFFD!'));
  const res = await req('GET', 'list_groups', { key: usageKey });
  // The bytes on the wire are UTF-8 (a lenient decoder would hide raw 0xFF from the JSON text).
  assert.doesNotThrow(() => new TextDecoder('utf-8', { fatal: true }).decode(res.raw));
  const g = assertOk(res).find((x) => x.name.startsWith('bad'));
  assert.equal(g.description, '\uFFFD\uFFFD\uFFFD');
});

test('an expiration at or past 2^64 written on chain reads as the largest uint64 (not expired), never a 500', async () => {
  await send(c.setUsageApiKey(accountHash, keccakText(usageKey), (1n << 64n) + 5n, 0, 'direct key', 'far future',
    true, false, false, [0], [], [], [0]));
  await visible('list_api_keys', (j) => j.length === 1 && j[0].description === 'far future');
  const [k] = assertOk(await req('GET', 'list_api_keys', { key: usageKey }));
  assert.equal(k.expiration, '18446744073709551615');
  assertOk(await req('GET', 'list_groups', { key: usageKey }));
});

test('a scope change on chain takes effect within 5 s; removal gives 401', async () => {
  await send(c.setUsageApiKey(accountHash, keccakText(usageKey), 0, 0, 'direct key', 'narrowed',
    false, false, false, [], [], [], [1]));
  await visible('list_api_keys', (j) => j.length === 1 && j[0].can_create_groups === false && j[0].description === 'narrowed');
  await send(c.removeUsageApiKey(accountHash, 0, keccakText(usageKey)));
  const ms = await visibleWhen('list_groups', (r) => r.status === 401);
  assertError(await req('GET', 'list_groups', { key: usageKey }), 401, 'invalid_api_key');
  console.log(`# removal effective after ${ms} ms`);
});
