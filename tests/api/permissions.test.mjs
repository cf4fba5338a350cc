// Usage-key scopes through the API (spec "Scopes" and permission matrix, DESIGN.md section 3):
// each of the seven scopes works where granted and is refused with 403 elsewhere; [0] is the
// wildcard; owner-only operations refuse every usage key; updates and removals take effect.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startStack, ethers, assertError, assertSuccess, assertOk, newAccount, perms, addGroup, addUsageKey,
  createWallet, keccakText, accountConfigAbi, eventually,
} from './stack.mjs';

const CID_A = 'QmRgutAxd8t7oGkSm4wmeuByG6M51wcTso6cubDdQtuEfL';
const CID_B = 'QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL';
const CID_C = 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH';

let stack;
let contract; // read-only view of AccountConfig
const s = {};

before(async () => {
  stack = await startStack();
  const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true });
  contract = new ethers.Contract(stack.contract, accountConfigAbi(), provider);
  const acct = await newAccount(stack, 'perms');
  s.owner = acct.api_key;
  s.g1 = await addGroup(stack, s.owner, 'g1');
  s.g2 = await addGroup(stack, s.owner, 'g2');
  s.pkp1 = (await createWallet(stack, s.owner)).toLowerCase();
  s.pkp2 = (await createWallet(stack, s.owner)).toLowerCase();
  // g1 and g2 both list pkp1 and CID_A, so removal and execution have something to act on.
  for (const g of [s.g1, s.g2]) {
    assertSuccess(await stack.request('POST', 'add_pkp_to_group', { key: s.owner, body: { group_id: g, pkp_id: s.pkp1 } }));
    assertSuccess(await stack.request('POST', 'add_action_to_group', { key: s.owner, body: { group_id: g, action_ipfs_cid: CID_A } }));
  }
});
after(async () => { contract?.runner?.destroy?.(); await stack?.stop(); });

const req = (...a) => stack.request(...a);
const G = (id) => Number(id);

test('group:manageActions on its group only', async () => {
  const k = await addUsageKey(stack, s.owner, { manage_ipfs_ids_in_groups: [G(s.g1)] });
  assertSuccess(await req('POST', 'add_action_to_group', { key: k, body: { group_id: s.g1, action_ipfs_cid: CID_B } }));
  assertSuccess(await req('POST', 'remove_action_from_group', { key: k, body: { group_id: s.g1, hashed_cid: keccakText(CID_B) } }));
  assertError(await req('POST', 'add_action_to_group', { key: k, body: { group_id: s.g2, action_ipfs_cid: CID_B } }),
    403, 'missing_scope', 'manageActions on g2');
  assertError(await req('POST', 'remove_action_from_group', { key: k, body: { group_id: s.g2, hashed_cid: keccakText(CID_A) } }),
    403, 'missing_scope', 'remove action on g2');
  // Renaming a group is managing it (contract header: updateGroup needs manageActions).
  assertSuccess(await req('POST', 'update_group', {
    key: k, body: { group_id: s.g1, name: 'g1 by key', description: 'x', pkp_ids_permitted: [s.pkp1], cid_hashes_permitted: [keccakText(CID_A)] },
  }));
  assertError(await req('POST', 'update_group', {
    key: k, body: { group_id: s.g2, name: 'g2 by key', description: 'x', pkp_ids_permitted: [s.pkp1], cid_hashes_permitted: [keccakText(CID_A)] },
  }), 403, 'missing_scope');
  // It gives nothing else.
  assertError(await req('POST', 'add_pkp_to_group', { key: k, body: { group_id: s.g1, pkp_id: s.pkp2 } }), 403, 'missing_scope');
  assertError(await req('POST', 'add_group', { key: k, body: { group_name: 'n', group_description: 'd', pkp_ids_permitted: [], cid_hashes_permitted: [] } }),
    403, 'missing_scope');
});

test('group:addPkp on its group only, and it does not remove', async () => {
  const k = await addUsageKey(stack, s.owner, { add_pkp_to_groups: [G(s.g1)] });
  assertSuccess(await req('POST', 'add_pkp_to_group', { key: k, body: { group_id: s.g1, pkp_id: s.pkp2 } }));
  assertError(await req('POST', 'add_pkp_to_group', { key: k, body: { group_id: s.g2, pkp_id: s.pkp2 } }),
    403, 'missing_scope', 'addPkp on g2');
  assertError(await req('POST', 'remove_pkp_from_group', { key: k, body: { group_id: s.g1, pkp_id: s.pkp2 } }),
    403, 'missing_scope', 'addPkp does not grant removePkp');
  assertError(await req('POST', 'add_action_to_group', { key: k, body: { group_id: s.g1, action_ipfs_cid: CID_C } }),
    403, 'missing_scope');
});

test('group:removePkp on its group only', async () => {
  const k = await addUsageKey(stack, s.owner, { remove_pkp_from_groups: [G(s.g1)] });
  assertSuccess(await req('POST', 'remove_pkp_from_group', { key: k, body: { group_id: s.g1, pkp_id: s.pkp2 } }));
  assertError(await req('POST', 'remove_pkp_from_group', { key: k, body: { group_id: s.g2, pkp_id: s.pkp1 } }),
    403, 'missing_scope', 'removePkp on g2');
  assertError(await req('POST', 'add_pkp_to_group', { key: k, body: { group_id: s.g1, pkp_id: s.pkp2 } }),
    403, 'missing_scope', 'removePkp does not grant addPkp');
});

test('execute on its group only (on-chain check, and the run endpoint when present)', async () => {
  // g3 lists pkp2 and CID_C; the key may execute only on g3.
  const g3 = await addGroup(stack, s.owner, 'g3', { pkp_ids_permitted: [s.pkp2], cid_hashes_permitted: [keccakText(CID_C)] });
  const k = await addUsageKey(stack, s.owner, { execute_in_groups: [G(g3)] });
  const h = keccakText(k);
  assert.equal(await contract.canExecute(h, keccakText(CID_C), s.pkp2), true, 'executes on g3');
  assert.equal(await contract.canExecute(h, keccakText(CID_A), s.pkp1), false, 'not on g1/g2');
  assert.equal(await contract.keyHasScope(h, 3, BigInt(g3)), true);
  assert.equal(await contract.keyHasScope(h, 3, BigInt(s.g1)), false);
  // The run endpoint (DESIGN section 4) if this build has it.
  const probe = await req('POST', 'sigil_action', { key: k, body: { code: '', pkp_id: s.pkp1 } });
  if (probe.status !== 404 || probe.json?.error?.code !== 'not_found') {
    const code = 'function main(){ return "ok"; }';
    assertError(await req('POST', 'sigil_action', { key: k, body: { code, pkp_id: s.pkp1 } }), 403, undefined, 'run outside g3');
  }
  // No other scope comes with execute.
  assertError(await req('POST', 'add_action_to_group', { key: k, body: { group_id: g3, action_ipfs_cid: CID_A } }),
    403, 'missing_scope');
});

test('group:create is account-wide', async () => {
  const k = await addUsageKey(stack, s.owner, { can_create_groups: true });
  const id = await addGroup(stack, k, 'by key');
  assert.ok(Number(id) > 2);
  const without = await addUsageKey(stack, s.owner, { can_delete_groups: true, can_create_pkps: true });
  assertError(await req('POST', 'add_group', {
    key: without, body: { group_name: 'no', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 403, 'missing_scope');
  // Pre-filling members needs the member scopes too (contract header decision).
  assertError(await req('POST', 'add_group', {
    key: k, body: { group_name: 'filled', group_description: '', pkp_ids_permitted: [s.pkp1], cid_hashes_permitted: [] },
  }), 403, 'missing_scope');
});

test('group:delete is account-wide', async () => {
  const victim = await addGroup(stack, s.owner, 'victim');
  const victim2 = await addGroup(stack, s.owner, 'victim2');
  const without = await addUsageKey(stack, s.owner, { can_create_groups: true, manage_ipfs_ids_in_groups: [0] });
  assertError(await req('POST', 'remove_group', { key: without, body: { group_id: victim } }), 403, 'missing_scope');
  const k = await addUsageKey(stack, s.owner, { can_delete_groups: true });
  assertSuccess(await req('POST', 'remove_group', { key: k, body: { group_id: victim } }));
  assertSuccess(await req('POST', 'remove_group', { key: k, body: { group_id: victim2 } }));
  const left = assertOk(await req('GET', 'list_groups', { key: s.owner, query: { page_size: 100 } }));
  assert.ok(!left.some((g) => BigInt(g.id) === BigInt(victim) || BigInt(g.id) === BigInt(victim2)));
});

test('pkp:create is account-wide', async () => {
  const k = await addUsageKey(stack, s.owner, { can_create_pkps: true });
  const w = await createWallet(stack, k);
  const wallets = assertOk(await req('GET', 'list_wallets', { key: s.owner, query: { page_size: 100 } }));
  assert.ok(wallets.some((x) => x.wallet_address.toLowerCase() === w.toLowerCase()), 'registered to the account');
  const without = await addUsageKey(stack, s.owner, { can_create_groups: true, execute_in_groups: [0] });
  assertError(await req('GET', 'create_wallet', { key: without }), 403, 'missing_scope');
  assertError(await req('POST', 'create_wallet', { key: without }), 403, 'missing_scope');
});

test('[0] is the wildcard for every per-group scope', async () => {
  const k = await addUsageKey(stack, s.owner, {
    manage_ipfs_ids_in_groups: [0], add_pkp_to_groups: [0], remove_pkp_from_groups: [0], execute_in_groups: [0],
  });
  for (const g of [s.g1, s.g2]) {
    assertSuccess(await req('POST', 'add_action_to_group', { key: k, body: { group_id: g, action_ipfs_cid: CID_C } }), `manage ${g}`);
    assertSuccess(await req('POST', 'add_pkp_to_group', { key: k, body: { group_id: g, pkp_id: s.pkp2 } }), `addPkp ${g}`);
    assertSuccess(await req('POST', 'remove_pkp_from_group', { key: k, body: { group_id: g, pkp_id: s.pkp2 } }), `removePkp ${g}`);
    assertSuccess(await req('POST', 'remove_action_from_group', { key: k, body: { group_id: g, hashed_cid: keccakText(CID_C) } }));
  }
  // A group created after the key was minted is covered too.
  const later = await addGroup(stack, s.owner, 'later', { pkp_ids_permitted: [s.pkp1], cid_hashes_permitted: [keccakText(CID_B)] });
  assertSuccess(await req('POST', 'add_action_to_group', { key: k, body: { group_id: later, action_ipfs_cid: CID_C } }));
  assert.equal(await contract.canExecute(keccakText(k), keccakText(CID_B), s.pkp1), true);
  // The wildcard does not reach account-wide scopes.
  assertError(await req('POST', 'add_group', { key: k, body: { group_name: 'n', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] } }),
    403, 'missing_scope');
  assertError(await req('POST', 'remove_group', { key: k, body: { group_id: later } }), 403, 'missing_scope');
  assertError(await req('GET', 'create_wallet', { key: k }), 403, 'missing_scope');
});

test('a key with no scope is refused every write, may still read', async () => {
  const k = await addUsageKey(stack, s.owner, {});
  const writes = [
    ['add_group', { group_name: 'n', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] }],
    ['remove_group', { group_id: s.g1 }],
    ['update_group', { group_id: s.g1, name: 'n', description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] }],
    ['add_action_to_group', { group_id: s.g1, action_ipfs_cid: CID_C }],
    ['remove_action_from_group', { group_id: s.g1, hashed_cid: keccakText(CID_A) }],
    ['add_pkp_to_group', { group_id: s.g1, pkp_id: s.pkp2 }],
    ['remove_pkp_from_group', { group_id: s.g1, pkp_id: s.pkp1 }],
    ['add_action', { action_ipfs_cid: CID_C, name: 'n', description: 'd' }],
  ];
  for (const [path, body] of writes) assertError(await req('POST', path, { key: k, body }), 403, 'missing_scope', path);
  assertError(await req('GET', 'create_wallet', { key: k }), 403, 'missing_scope', 'create_wallet');
  assert.equal(await contract.canExecute(keccakText(k), keccakText(CID_A), s.pkp1), false);
  for (const path of ['list_groups', 'list_wallets', 'list_actions', 'list_api_keys']) {
    assert.equal((await req('GET', path, { key: k })).status, 200, path);
  }
});

test('owner-only operations refuse usage keys, even all-scoped ones', async () => {
  const strong = await addUsageKey(stack, s.owner, {
    can_create_groups: true, can_delete_groups: true, can_create_pkps: true,
    manage_ipfs_ids_in_groups: [0], add_pkp_to_groups: [0], remove_pkp_from_groups: [0], execute_in_groups: [0],
  });
  const target = await addUsageKey(stack, s.owner, {}, 'target');
  const p = perms({ can_create_groups: true });
  const calls = [
    ['add_usage_api_key', { name: 'x', description: 'y', ...p }],
    ['update_usage_api_key', { usage_api_key: target, name: 'x', description: 'y', ...p }],
    ['update_usage_api_key', { usage_api_key: strong, name: 'x', description: 'y', ...p }], // itself
    ['update_usage_api_key_metadata', { usage_api_key: target, name: 'x', description: 'y' }],
    ['remove_usage_api_key', { usage_api_key: target }],
  ];
  for (const [path, body] of calls) assertError(await req('POST', path, { key: strong, body }), 403, 'owner_only', path);
  // Nothing changed.
  const keys = assertOk(await req('GET', 'list_api_keys', { key: s.owner, query: { page_size: 100 } }));
  const t = keys.find((x) => x.id === keccakText(target));
  assert.equal(t.name, 'target');
  assert.equal(t.can_create_groups, false);
});

test('update_usage_api_key takes a scope away', async () => {
  const k = await addUsageKey(stack, s.owner, { can_create_groups: true, add_pkp_to_groups: [G(s.g1)] });
  await addGroup(stack, k, 'before');
  assertSuccess(await req('POST', 'update_usage_api_key', {
    key: s.owner, body: { usage_api_key: k, name: 'k', description: 'd', ...perms({ add_pkp_to_groups: [G(s.g2)] }) },
  }));
  assertError(await req('POST', 'add_group', {
    key: k, body: { group_name: 'after', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 403, 'missing_scope', 'create removed');
  assertError(await req('POST', 'add_pkp_to_group', { key: k, body: { group_id: s.g1, pkp_id: s.pkp2 } }),
    403, 'missing_scope', 'g1 removed');
  assertSuccess(await req('POST', 'add_pkp_to_group', { key: k, body: { group_id: s.g2, pkp_id: s.pkp2 } }), 'g2 granted');
});

test('a removed key gets 401', async () => {
  const k = await addUsageKey(stack, s.owner, { can_create_groups: true });
  assert.equal((await req('GET', 'list_groups', { key: k })).status, 200);
  assertSuccess(await req('POST', 'remove_usage_api_key', { key: s.owner, body: { usage_api_key: k } }));
  // Every worker caches key lookups on its own; allow the cache window, then require 401 everywhere.
  let run = 0;
  assert.ok(await eventually(async () => {
    run = (await req('GET', 'list_groups', { key: k })).status === 401 ? run + 1 : 0;
    return run >= 4;
  }, 3000, 50), 'a removed key stops working within 3 s');
  assertError(await req('GET', 'list_groups', { key: k }), 401, 'invalid_api_key');
  assertError(await req('POST', 'add_group', {
    key: k, body: { group_name: 'n', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 401, 'invalid_api_key');
});

test('garbage, unknown and missing keys get 401', async () => {
  const cases = [
    [{ key: 'garbage' }, 'invalid_api_key'],
    [{ key: Buffer.alloc(32, 1).toString('base64') }, 'invalid_api_key'],
    [{ key: 'x'.repeat(300) }, 'invalid_api_key'],
    [{ bearer: 'garbage' }, 'invalid_api_key'],
    [{}, 'missing_api_key'],
    [{ key: '' }, 'missing_api_key'],
  ];
  for (const [opts, code] of cases) {
    assertError(await req('GET', 'list_groups', opts), 401, code, JSON.stringify(opts).slice(0, 40));
    assertError(await req('POST', 'add_group', {
      ...opts, body: { group_name: 'n', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
    }), 401, code);
    assertError(await req('POST', 'add_usage_api_key', { ...opts, body: { name: 'x', description: 'y', ...perms() } }), 401, code);
  }
});

test('revocation is immediate: the very next request with a removed key gets 401, on any worker', async () => {
  // Relayed writes invalidate the read cache (DESIGN section 3), but each worker has its own: a
  // revoked key must not keep working on the worker that did not relay the removal.
  let stillWorked = 0;
  for (let i = 0; i < 4; i++) {
    const k = await addUsageKey(stack, s.owner, { can_create_groups: true }, `revoke ${i}`);
    for (let j = 0; j < 4; j++) await req('GET', 'list_groups', { key: k }); // cache it as valid everywhere
    assertSuccess(await req('POST', 'remove_usage_api_key', { key: s.owner, body: { usage_api_key: k } }));
    for (let j = 0; j < 2; j++) if ((await req('GET', 'list_groups', { key: k })).status !== 401) stillWorked++;
  }
  assert.equal(stillWorked, 0, `${stillWorked} of 8 requests with a just-removed key still succeeded`);
});

test('an expired usage key gets 401; expiration 0 never expires', async () => {
  const past = Math.floor(Date.now() / 1000) - 60;
  const r = await req('POST', 'add_usage_api_key', {
    key: s.owner, body: { name: 'expired', description: '', expiration: String(past), ...perms({ can_create_groups: true }) },
  });
  const expired = assertSuccess(r).usage_api_key;
  assertError(await req('GET', 'list_groups', { key: expired }), 401, 'invalid_api_key');
  assertError(await req('POST', 'add_group', {
    key: expired, body: { group_name: 'n', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 401, 'invalid_api_key');
  const keys = assertOk(await req('GET', 'list_api_keys', { key: s.owner, query: { page_size: 100 } }));
  assert.equal(String(keys.find((k) => k.id === keccakText(expired)).expiration), String(past));
  const future = Math.floor(Date.now() / 1000) + 3600;
  const live = assertSuccess(await req('POST', 'add_usage_api_key', {
    key: s.owner, body: { name: 'live', description: '', expiration: future, ...perms() },
  })).usage_api_key;
  assert.equal((await req('GET', 'list_groups', { key: live })).status, 200);
});
