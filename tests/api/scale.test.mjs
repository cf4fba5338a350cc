// One account at the contract's scale through the whole stack (AccountConfig header "Scale"): 1,000
// groups, two of them full (256 PKPs, 256 CIDs), 257 wallets and 256 actions with long descriptions,
// usage keys with full scope lists. Every page of every list answers 200 with exactly what is on
// chain at several page sizes (the worker assembles a page from as many bounded view calls as it
// takes), and a run is authorized when the only matching group is the last of 1,000 and refused
// (403 not_authorized) when none matches, for the owner key and for keys scoped to groups.
//
// The account is built fast: its owner key's secret is its admin wallet's key (managed account), so
// the test writes straight to the contract as the admin, signing locally and mining each batch of
// transactions in one block (about 7 s for the ~2,700 of them on 2 idle cores).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  startStack, ethers, assertError, assertOk, newAccount, createWallet, keccakText, accountConfigAbi, eventually, chainRpc,
  sendBurst,
} from './stack.mjs';

const GROUPS = 1000;
const FULL = 256; // MAX_GROUP_ITEMS
const LONG_NAME = 'n'.repeat(256);
const long = (tag, bytes) => `${tag} `.padEnd(bytes, '.');
const PAGE_SIZES = [100, 64, 37, 10];

let stack;
let iface;
let admin; // the owner key's wallet, the account's admin
const s = {}; // what the account holds, in list order

// ---- chain writes ----------------------------------------------------------------------------

const rpc = (method, params) => chainRpc(stack, method, params);
// The admin wallet's calls as bursts mined one block each (stack.mjs's sendBurst).
const sendAll = (calls) => sendBurst(stack, admin, iface, calls);

const randomPath = () => BigInt('0x' + randomBytes(32).toString('hex'));
const hex32 = (v) => '0x' + v.toString(16).padStart(64, '0');

before(async () => {
  stack = await startStack({ workers: 2 });
  iface = new ethers.Interface(accountConfigAbi());
  const acct = await newAccount(stack, 'scale');
  s.owner = acct.api_key;
  s.accountHash = BigInt(keccakText(s.owner));
  admin = new ethers.Wallet('0x' + Buffer.from(s.owner, 'base64').toString('hex'));
  await rpc('anvil_setBalance', [admin.address, '0x' + (10n ** 24n).toString(16)]);
  const h = s.accountHash;
  const t0 = Date.now();

  // Wallets: the run's PKP through the API (keyd derives it), then 256 more registered directly.
  const runPkp = await createWallet(stack, s.owner);
  s.runPkp = runPkp.toLowerCase();
  const runWallet = assertOk(await stack.request('GET', 'list_wallets', { key: s.owner }))[0];
  s.wallets = [{ address: s.runPkp, path: runWallet.derivation_path, name: '', description: '' }];
  for (let i = 0; i < FULL; i++) {
    s.wallets.push({ address: ethers.Wallet.createRandom().address.toLowerCase(), path: hex32(randomPath()), name: `w${i}`, description: long(`wallet ${i}`, 2048) });
  }
  const pkps = s.wallets.slice(1).map((w) => w.address);
  // Actions: metadata for the full groups' 256 CIDs.
  s.cids = Array.from({ length: FULL }, (_, i) => keccakText(`scale cid ${i}`));
  s.actions = s.cids.map((c, i) => ({ id: c, name: `a${i}`, description: long(`action ${i}`, 2048) }));
  await sendAll([
    ...s.wallets.slice(1).map((w) => ['registerWalletDerivation', [h, w.address, BigInt(w.path), w.name, w.description], 2_500_000n]),
    ...s.actions.map((a) => ['addAction', [h, 0, a.id, a.name, a.description], 2_500_000n]),
  ]);

  // Groups 1 and 2 full; 3..100 with the longest text; 101..999 plain; 1000 the only one listing the
  // run's PKP and action (its CID is known once the code is). The first page of 100 is ~15,300 storage
  // words: ~35M gas in one call, over anvil's 30M eth_call cap.
  s.code = `async function main() { return "Hello from the last group"; } // ${randomBytes(8).toString('hex')}`;
  s.cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(s.code) }));
  s.codeElsewhere = `async function main() { return "listed without the PKP"; } // ${randomBytes(8).toString('hex')}`;
  s.cidElsewhere = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(s.codeElsewhere) }));
  s.groups = [];
  for (let id = 1; id <= GROUPS; id++) {
    const g = { id: String(id), name: `group ${id}`, description: '', pkps: [], cids: [] };
    if (id <= 2) Object.assign(g, { name: LONG_NAME, description: long(`full group ${id}`, 4096), pkps, cids: s.cids });
    else if (id <= 100) Object.assign(g, { name: LONG_NAME, description: long(`group ${id}`, 4096) });
    if (id === 3) g.cids = [keccakText(s.cidElsewhere)]; // listed, but with no PKP
    if (id === GROUPS) Object.assign(g, { name: 'the match', pkps: [s.runPkp], cids: [keccakText(s.cid)] });
    s.groups.push(g);
  }
  const calls = [];
  for (const g of s.groups) {
    const gas = g.pkps.length > 1 ? 16_000_000n : g.description ? 4_000_000n : 1_000_000n;
    calls.push(['addGroup', [h, 0, g.name, g.description, g.pkps.slice(0, 100), g.cids.slice(0, 100)], gas]);
  }
  for (const id of [1, 2]) {
    for (let i = 100; i < FULL; i++) {
      calls.push(['addPkpToGroup', [h, 0, id, pkps[i]], 400_000n], ['addActionToGroup', [h, 0, id, s.cids[i]], 400_000n]);
    }
  }

  // Usage keys: 30 with full scope lists and the longest text, then the executors.
  const all = Array.from({ length: 100 }, (_, i) => i + 1);
  const key = (name, description, execute, lists = []) => {
    const value = randomBytes(32).toString('base64');
    return { value, id: keccakText(value), name, description, manage: lists, addPkp: lists, removePkp: lists, execute };
  };
  s.keys = Array.from({ length: 30 }, (_, i) => key(LONG_NAME, long(`key ${i}`, 4096), all, all));
  s.scoped = key('scoped', 'executes on the last group only', [GROUPS]);
  s.wildcard = key('wildcard', 'executes on every group', [0]);
  s.elsewhere = key('elsewhere', 'executes on the first 100 groups', all);
  s.keys.push(s.scoped, s.wildcard, s.elsewhere);
  for (const k of s.keys) {
    calls.push(['setUsageApiKey', [h, BigInt(k.id), 0, 0, k.name, k.description, false, false, false,
      k.manage, k.addPkp, k.removePkp, k.execute], k.manage.length + k.execute.length > 10 ? 16_000_000n : 1_000_000n]);
  }
  await sendAll(calls);
  // The workers see direct writes by polling the contract's events.
  const settled = await eventually(async () => {
    const r = await stack.request('GET', 'list_groups', { key: s.owner, query: { page_number: 99, page_size: 10 } });
    return r.status === 200 && r.json.length === 10 && r.json[9].name === 'the match';
  }, 10000, 100);
  assert.ok(settled, 'the workers see the account');
  console.log(`# account built in ${Date.now() - t0} ms: ${GROUPS} groups, ${s.wallets.length} wallets, ${s.actions.length} actions, ${s.keys.length} usage keys`);
});

after(async () => { await stack?.stop(); });

// ---- paging ------------------------------------------------------------------------------------

/// Reads every page of `path` at each page size (four requests at a time) and compares each page with
/// the matching slice of `expected` (items mapped by `view`); then one page past the end is [].
async function checkPages(path, query, expected, view) {
  for (const size of PAGE_SIZES) {
    const pages = Math.ceil(expected.length / size);
    for (let first = 0; first <= pages; first += 4) {
      const numbers = [];
      for (let n = first; n < Math.min(first + 4, pages + 1); n++) numbers.push(n);
      await Promise.all(numbers.map(async (n) => {
        const what = `${path} ${JSON.stringify(query)} page ${n} of size ${size}`;
        const r = await stack.request('GET', path, { key: s.owner, query: { ...query, page_number: n, page_size: size } });
        const page = assertOk(r, what);
        assert.ok(Array.isArray(page), `${what}: an array`);
        assert.deepEqual(page.map(view), expected.slice(n * size, (n + 1) * size), what);
      }));
    }
  }
}

const lower = (a) => a.map((x) => x.toLowerCase());

test('list_groups: every page of 1,000 groups, two of them full, at every page size', async () => {
  await checkPages('list_groups', {}, s.groups.map((g) => ({ ...g, pkps: lower(g.pkps), cids: lower(g.cids) })),
    (g) => ({ id: g.id, name: g.name, description: g.description, pkps: lower(g.pkp_ids_permitted), cids: lower(g.cid_hashes_permitted) }));
});

test('list_wallets and list_wallets_in_group: every page', async () => {
  const view = (w) => ({ address: w.wallet_address.toLowerCase(), path: w.derivation_path, name: w.name, description: w.description });
  await checkPages('list_wallets', {}, s.wallets, view);
  await checkPages('list_wallets_in_group', { group_id: 1 }, s.wallets.slice(1), view);
  await checkPages('list_wallets_in_group', { group_id: GROUPS }, s.wallets.slice(0, 1), view);
});

test('list_actions, for the account and in a full group: every page', async () => {
  const view = (a) => ({ id: a.id, name: a.name, description: a.description });
  await checkPages('list_actions', {}, s.actions, view);
  await checkPages('list_actions', { group_id: 2 }, s.actions, view);
  await checkPages('list_actions', { group_id: GROUPS }, [{ id: keccakText(s.cid), name: '', description: '' }], view);
});

test('list_api_keys: every page of keys with full scope lists', async () => {
  const ids = (a) => a.map(Number);
  await checkPages('list_api_keys', {}, s.keys.map((k) => ({
    id: k.id, name: k.name, description: k.description, manage: k.manage, addPkp: k.addPkp, removePkp: k.removePkp, execute: k.execute,
  })), (k) => ({
    id: k.id, name: k.name, description: k.description, manage: ids(k.can_manage_ipfs_ids_in_groups), addPkp: ids(k.can_add_pkp_to_groups),
    removePkp: ids(k.can_remove_pkp_from_groups), execute: ids(k.can_execute_in_groups),
  }));
});

// ---- runs ----------------------------------------------------------------------------------------

async function run(key, code, pkp) {
  const body = { code };
  if (pkp) body.pkp_id = pkp;
  return stack.request('POST', 'sigil_action', { key, body });
}

test('a run is authorized by the last of 1,000 groups: owner, wildcard and scoped keys, with and without pkp_id', async () => {
  for (const [who, key] of [['owner', s.owner], ['wildcard', s.wildcard.value], ['scoped', s.scoped.value]]) {
    for (const pkp of [s.runPkp, null]) {
      const r = await run(key, s.code, pkp);
      const j = assertOk(r, `${who} run ${pkp ? 'with' : 'without'} pkp_id`);
      assert.deepEqual(j, { response: 'Hello from the last group', logs: '', has_error: false }, who);
    }
  }
});

test('a run is refused when no group the key may execute on matches: 403 not_authorized', async () => {
  const notListed = `async function main() { return "in no group"; } // ${randomBytes(8).toString('hex')}`;
  for (const [who, key] of [['owner', s.owner], ['wildcard', s.wildcard.value], ['scoped', s.scoped.value]]) {
    assertError(await run(key, notListed, s.runPkp), 403, 'not_authorized', `${who}: a CID in no group`);
    assertError(await run(key, notListed, null), 403, 'not_authorized', `${who}: a CID in no group, no pkp_id`);
    // Group 3 lists this CID but no PKP: with the PKP it is refused.
    assertError(await run(key, s.codeElsewhere, s.runPkp), 403, 'not_authorized', `${who}: CID and PKP in no one group`);
    // A PKP of the account that the matching group does not list.
    assertError(await run(key, s.code, s.wallets[5].address), 403, 'not_authorized', `${who}: another PKP`);
  }
  // Without a PKP the CID listed in group 3 is enough for the owner and the wildcard, not for a key
  // scoped to the last group.
  for (const key of [s.owner, s.wildcard.value]) assertOk(await run(key, s.codeElsewhere, null), 'group 3 lists the CID');
  assertError(await run(s.scoped.value, s.codeElsewhere, null), 403, 'not_authorized', 'scoped: group 3 is not in scope');
  // A key that may execute on the first 100 groups only (a full list) never reaches group 1,000.
  for (const pkp of [s.runPkp, null]) {
    assertError(await run(s.elsewhere.value, s.code, pkp), 403, 'not_authorized', `elsewhere ${pkp ? 'with' : 'without'} pkp_id`);
  }
});

test('renaming a full group through the API keeps its 256 PKPs and CIDs', async () => {
  const r = await stack.request('POST', 'update_group', { key: s.owner, body: { group_id: 2, name: 'renamed', description: 'still full' } });
  assertOk(r, 'update_group without lists');
  const ok = await eventually(async () => {
    const g = await stack.request('GET', 'list_groups', { key: s.owner, query: { page_number: 1, page_size: 1 } });
    return g.status === 200 && g.json[0].name === 'renamed';
  }, 5000, 100);
  assert.ok(ok, 'the new name shows');
  const [g] = assertOk(await stack.request('GET', 'list_groups', { key: s.owner, query: { page_number: 1, page_size: 1 } }));
  assert.equal(g.pkp_ids_permitted.length, FULL);
  assert.deepEqual(lower(g.cid_hashes_permitted).sort(), lower(s.cids).sort());
});
