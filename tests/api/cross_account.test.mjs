// Account isolation through the API (DESIGN.md sections 2-3): account B's keys cannot read,
// change or use anything of account A's. A has more groups than B, so A's higher group ids do not
// exist in B (ids are per account) and B's calls naming them are refused as unknown (404).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startStack, ethers, assertError, assertSuccess, assertOk, newAccount, addGroup, addUsageKey,
  createWallet, keccakText, accountConfigAbi,
} from './stack.mjs';

const CID_A = 'QmRgutAxd8t7oGkSm4wmeuByG6M51wcTso6cubDdQtuEfL';
const CID_B = 'QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL';

let stack;
let contract;
const A = {};
const B = {};
const ALL = { manage_ipfs_ids_in_groups: [0], add_pkp_to_groups: [0], remove_pkp_from_groups: [0], execute_in_groups: [0],
  can_create_groups: true, can_delete_groups: true, can_create_pkps: true };

before(async () => {
  stack = await startStack();
  contract = new ethers.Contract(stack.contract, accountConfigAbi(),
    new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true }));
  A.key = (await newAccount(stack, 'A')).api_key;
  B.key = (await newAccount(stack, 'B')).api_key;
  A.groups = [await addGroup(stack, A.key, 'a1'), await addGroup(stack, A.key, 'a2'), await addGroup(stack, A.key, 'a3')];
  B.groups = [await addGroup(stack, B.key, 'b1')];
  A.pkp = (await createWallet(stack, A.key)).toLowerCase();
  B.pkp = (await createWallet(stack, B.key)).toLowerCase();
  for (const g of A.groups) {
    assertSuccess(await stack.request('POST', 'add_pkp_to_group', { key: A.key, body: { group_id: g, pkp_id: A.pkp } }));
    assertSuccess(await stack.request('POST', 'add_action_to_group', { key: A.key, body: { group_id: g, action_ipfs_cid: CID_A } }));
  }
  assertSuccess(await stack.request('POST', 'add_action', { key: A.key, body: { action_ipfs_cid: CID_A, name: 'a', description: 'A action' } }));
  A.usage = await addUsageKey(stack, A.key, ALL, 'a usage');
  B.usage = await addUsageKey(stack, B.key, ALL, 'b usage');
});
after(async () => { contract?.runner?.destroy?.(); await stack?.stop(); });

const req = (...a) => stack.request(...a);

test('lists show only the caller account', async () => {
  for (const key of [B.key, B.usage]) {
    const groups = assertOk(await req('GET', 'list_groups', { key }));
    assert.deepEqual(groups.map((g) => g.name), ['b1']);
    const wallets = assertOk(await req('GET', 'list_wallets', { key }));
    assert.deepEqual(wallets.map((w) => w.wallet_address.toLowerCase()), [B.pkp]);
    assert.deepEqual(assertOk(await req('GET', 'list_actions', { key })), []);
    const keys = assertOk(await req('GET', 'list_api_keys', { key }));
    assert.deepEqual(keys.map((k) => k.id), [keccakText(B.usage)]);
  }
});

test("A's group ids are unknown to B", async () => {
  const aOnly = A.groups[2]; // id 3: B has only id 1
  for (const key of [B.key, B.usage]) {
    assertError(await req('GET', 'list_wallets_in_group', { key, query: { group_id: aOnly } }), 404, 'unknown_group');
    assertError(await req('GET', 'list_actions', { key, query: { group_id: aOnly } }), 404, 'unknown_group');
    assertError(await req('POST', 'add_action_to_group', { key, body: { group_id: aOnly, action_ipfs_cid: CID_B } }), 404, 'unknown_group');
    assertError(await req('POST', 'remove_action_from_group', { key, body: { group_id: aOnly, hashed_cid: keccakText(CID_A) } }), 404, 'unknown_group');
    assertError(await req('POST', 'add_pkp_to_group', { key, body: { group_id: aOnly, pkp_id: B.pkp } }), 404, 'unknown_group');
    assertError(await req('POST', 'remove_pkp_from_group', { key, body: { group_id: aOnly, pkp_id: A.pkp } }), 404, 'unknown_group');
    assertError(await req('POST', 'update_group', {
      key, body: { group_id: aOnly, name: 'x', description: 'y', pkp_ids_permitted: [], cid_hashes_permitted: [] },
    }), 404, 'unknown_group');
    assertError(await req('POST', 'remove_group', { key, body: { group_id: aOnly } }), 404, 'unknown_group');
  }
  // B's group 1 is B's own; A's group 1 is untouched by B's writes to "1".
  assertSuccess(await req('POST', 'update_group', {
    key: B.key, body: { group_id: B.groups[0], name: 'b1 renamed', description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }));
  const aGroups = assertOk(await req('GET', 'list_groups', { key: A.key }));
  assert.deepEqual(aGroups.map((g) => g.name).sort(), ['a1', 'a2', 'a3']);
  assert.deepEqual(assertOk(await req('GET', 'list_wallets_in_group', { key: A.key, query: { group_id: 1 } }))
    .map((w) => w.wallet_address.toLowerCase()), [A.pkp]);
});

test("A's PKP cannot enter B's groups", async () => {
  for (const key of [B.key, B.usage]) {
    assertError(await req('POST', 'add_pkp_to_group', { key, body: { group_id: B.groups[0], pkp_id: A.pkp } }), 404, 'unknown_pkp');
    assertError(await req('POST', 'add_group', {
      key, body: { group_name: 'steal', group_description: '', pkp_ids_permitted: [A.pkp], cid_hashes_permitted: [] },
    }), 404, 'unknown_pkp');
    assertError(await req('POST', 'update_group', {
      key, body: { group_id: B.groups[0], name: 'b1', description: '', pkp_ids_permitted: [A.pkp], cid_hashes_permitted: [] },
    }), 404, 'unknown_pkp');
  }
  // Nor can B execute with it, even with execute [0] and a group that would list it.
  assert.equal(await contract.canExecute(keccakText(B.usage), keccakText(CID_A), A.pkp), false);
  assert.equal(await contract.canExecute(keccakText(B.key), keccakText(CID_A), A.pkp), false);
  // A can (sanity: the check is not simply always false).
  assert.equal(await contract.canExecute(keccakText(A.usage), keccakText(CID_A), A.pkp), true);
});

test("B cannot touch A's keys or action metadata", async () => {
  assertError(await req('POST', 'remove_usage_api_key', { key: B.key, body: { usage_api_key: A.usage } }), 404, 'unknown_key');
  assertError(await req('POST', 'update_usage_api_key_metadata', {
    key: B.key, body: { usage_api_key: A.usage, name: 'mine', description: '' },
  }), 404, 'unknown_key');
  // Re-adding A's usage key under B (update_usage_api_key on a key B does not have): refused.
  const upd = await req('POST', 'update_usage_api_key', {
    key: B.key,
    body: { usage_api_key: A.usage, name: 'mine', description: '', can_create_groups: true, can_delete_groups: true,
      can_create_pkps: true, manage_ipfs_ids_in_groups: [0], add_pkp_to_groups: [0], remove_pkp_from_groups: [0], execute_in_groups: [0] },
  });
  assert.ok(upd.status === 404 || upd.status === 409, `update of A's key by B: ${upd.status} ${upd.text}`);
  assertError(upd, upd.status, upd.status === 404 ? 'unknown_key' : 'key_hash_taken');
  assertError(await req('POST', 'update_action_metadata', {
    key: B.key, body: { hashed_cid: keccakText(CID_A), name: 'mine', description: '' },
  }), 404, 'unknown_action');
  assertError(await req('POST', 'delete_action', { key: B.usage, body: { hashed_cid: keccakText(CID_A) } }), 404, 'unknown_action');
  // A's key still works with its scopes and metadata.
  const keys = assertOk(await req('GET', 'list_api_keys', { key: A.key }));
  assert.equal(keys.length, 1);
  assert.equal(keys[0].name, 'a usage');
  assert.equal(keys[0].can_create_groups, true);
  assert.equal(assertOk(await req('GET', 'list_actions', { key: A.key }))[0].name, 'a');
});

test("A's usage key acts only on A, whatever the body says", async () => {
  // There is no account field in any body: a write lands on the key's own account.
  const id = await addGroup(stack, A.usage, 'made by a usage');
  assert.equal(id, '4');
  assert.deepEqual(assertOk(await req('GET', 'list_groups', { key: B.key })).map((g) => g.name), ['b1 renamed']);
  // The same action CID may appear in both accounts' groups, independently.
  assertSuccess(await req('POST', 'add_action_to_group', { key: B.key, body: { group_id: B.groups[0], action_ipfs_cid: CID_A } }));
  assertSuccess(await req('POST', 'remove_action_from_group', { key: B.key, body: { group_id: B.groups[0], hashed_cid: keccakText(CID_A) } }));
  const aActions = assertOk(await req('GET', 'list_actions', { key: A.key, query: { group_id: 1 } }));
  assert.deepEqual(aActions.map((a) => a.id), [keccakText(CID_A)]);
});
