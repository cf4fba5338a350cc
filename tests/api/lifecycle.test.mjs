// The management API end to end over HTTPS (nginx -> supervisor -> worker -> anvil): one account
// through its whole life (spec "Endpoints", DESIGN.md section 4), the public endpoints, and the
// headers every response carries.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startStack, ethers, assertError, assertSuccess, assertOk, newAccount, perms, addGroup,
  keccakText, eventually, UUID_V4, HASH32, ADDRESS,
} from './stack.mjs';

// CIDv0 of known contents (DESIGN.md section 8; "foobar\n" as `ipfs add --cid-version=0` gives it).
const CID_FOOBAR = 'QmRgutAxd8t7oGkSm4wmeuByG6M51wcTso6cubDdQtuEfL';
const CID_EMPTY = 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH';
const CID_HELLO = 'QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL';

let stack;
const s = {}; // state carried from step to step

before(async () => { stack = await startStack({ workers: Number(process.env.W ?? 2) }); });
after(async () => { await stack?.stop(); });

const req = (...a) => stack.request(...a);
const lower = (a) => a.toLowerCase();
const ids = (arr) => arr.map((x) => String(x));
// Workers cache chain reads per process: a write through one worker reaches the others' caches by
// event polling, so reads right after a write poll (the strict read-your-writes check is its own test).
async function fresh(path, opts, pred, what = path) {
  let last;
  const ok = await eventually(async () => {
    last = await req('GET', path, opts);
    return last.status === 200 && pred(last.json);
  }, 3000, 50);
  assert.ok(ok, `${what}: not as expected within 3 s: ${last.status} ${last.text.slice(0, 300)}`);
  return last.json;
}
const GROUP_ID_FORM = /^(0x[0-9a-f]{64}|[1-9][0-9]*)$/;

test('public configuration endpoints', async () => {
  const cfg = assertOk(await req('GET', 'get_node_chain_config'), 'get_node_chain_config');
  assert.equal(Number(cfg.chain_id), stack.chainId);
  assert.equal(lower(cfg.contract_address), lower(stack.contract));
  assert.equal(JSON.stringify(cfg).includes(stack.rpcUrl), false, 'the RPC URL is not returned');

  const payers = assertOk(await req('GET', 'get_api_payers'), 'get_api_payers');
  assert.ok(Array.isArray(payers), 'a JSON array');
  assert.deepEqual(payers.map(lower).sort(), stack.apiPayers.map(lower).sort());

  const admin = assertOk(await req('GET', 'get_admin_api_payer'), 'get_admin_api_payer');
  assert.equal(typeof admin, 'string');
  assert.equal(lower(admin), lower(stack.adminPayer));

  const limits = assertOk(await req('GET', 'get_action_client_config'), 'get_action_client_config');
  assert.equal(typeof limits, 'object');
  assert.ok(Object.keys(limits).length > 0);
  // Every limit is a number; `runtime` describes the runtime's level (compat_globals checks it).
  const { runtime, ...numbers } = limits;
  assert.equal(typeof runtime, 'object');
  for (const v of Object.values(numbers)) assert.equal(typeof v, 'number');

  const version = assertOk(await req('GET', 'version'), 'version');
  assert.equal(version.service, 'sigil');

  const openapi = assertOk(await req('GET', 'openapi.json'), 'openapi.json');
  assert.match(String(openapi.openapi), /^3\./);
  for (const p of ['/new_account', '/add_group', '/list_groups', '/add_usage_api_key', '/get_node_chain_config']) {
    const present = Object.keys(openapi.paths).some((k) => k === p || k === `/core/v1${p}`);
    assert.ok(present, `openapi lists ${p}`);
  }
});

test('get_sigil_action_ipfs_id computes CIDv0 of the code', async () => {
  for (const [code, cid] of [['foobar\n', CID_FOOBAR], ['', CID_EMPTY], ['console.log("hello")', CID_HELLO]]) {
    const r = await req('POST', 'get_sigil_action_ipfs_id', { body: code });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json, cid, `CID of ${JSON.stringify(code)}`);
  }
  // Not a JSON string: 400; not JSON at all: 422.
  assertError(await req('POST', 'get_sigil_action_ipfs_id', { body: { code: 'x' } }), 400);
  assertError(await req('POST', 'get_sigil_action_ipfs_id', { rawBody: 'foobar' }), 422, 'malformed_json');
});

test('X-Request-Id on every response, X-Correlation-Id echoed', async () => {
  const seen = new Set();
  const samples = [
    await req('GET', '/health'),
    await req('GET', 'version'),
    await req('GET', 'list_groups'), // 401
    await req('GET', 'no_such_endpoint'), // 404
    await req('DELETE', 'version'), // 405
    await req('POST', 'add_group', { rawBody: '{', key: 'x' }), // 422
  ];
  for (const r of samples) {
    const id = r.headers['x-request-id'];
    assert.match(id ?? '', UUID_V4, `X-Request-Id on ${r.status}`);
    assert.ok(!seen.has(id), 'fresh per response');
    seen.add(id);
  }
  const corr = 'corr-' + Date.now();
  const r = await req('GET', 'version', { headers: { 'X-Correlation-Id': corr } });
  assert.equal(r.headers['x-correlation-id'], corr);
  const e = await req('GET', 'list_wallets', { headers: { 'X-Correlation-Id': corr } });
  assert.equal(e.status, 401);
  assert.equal(e.headers['x-correlation-id'], corr, 'echoed on errors too');
  const none = await req('GET', 'version');
  assert.equal(none.headers['x-correlation-id'], undefined, 'not invented when absent');
});

test('new_account returns a base64 key whose secret is the owner wallet key', async () => {
  const acct = await newAccount(stack, 'lifecycle');
  assert.match(acct.api_key, /^[A-Za-z0-9+/]{43}=$/, 'base64 of 32 bytes');
  const secret = Buffer.from(acct.api_key, 'base64');
  assert.equal(secret.length, 32);
  const wallet = new ethers.Wallet('0x' + secret.toString('hex'));
  assert.equal(lower(acct.wallet_address), lower(wallet.address));
  s.key = acct.api_key;
  s.owner = acct.wallet_address;
  // Two accounts never share a key.
  const other = await newAccount(stack, 'other');
  assert.notEqual(other.api_key, s.key);
  s.otherKey = other.api_key;
});

test('account_exists: true for live keys, false for an unknown one', async () => {
  let r = await req('GET', 'account_exists', { key: s.key });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json, true);
  const unknown = Buffer.alloc(32, 7).toString('base64');
  r = await req('GET', 'account_exists', { key: unknown });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json, false);
});

test('Authorization: Bearer works like X-Api-Key, scheme case-insensitive', async () => {
  for (const auth of [`Bearer ${s.key}`, `bearer ${s.key}`, `BEARER   ${s.key}  `]) {
    const r = await req('GET', 'list_groups', { headers: { Authorization: auth } });
    assert.equal(r.status, 200, `${auth}: ${r.text}`);
    assert.deepEqual(r.json, []);
  }
  const r = await req('GET', 'account_exists', { bearer: s.key });
  assert.equal(r.json, true);
  assertError(await req('GET', 'list_groups', { headers: { Authorization: `Basic ${s.key}` } }), 401);
  assertError(await req('GET', 'list_groups', { headers: { Authorization: 'Bearer ' } }), 401);
});

test('create_wallet (GET and POST) registers PKPs on the account', async () => {
  let r = await req('GET', 'create_wallet', { key: s.key });
  let j = assertOk(r, 'create_wallet GET');
  assert.match(j.wallet_address, ADDRESS);
  s.pkp1 = lower(j.wallet_address);
  r = await req('POST', 'create_wallet', { key: s.key });
  j = assertOk(r, 'create_wallet POST');
  assert.match(j.wallet_address, ADDRESS);
  s.pkp2 = lower(j.wallet_address);
  assert.notEqual(s.pkp1, s.pkp2);
});

test('add_group returns the new id as a decimal string', async () => {
  s.group1 = await addGroup(stack, s.key, 'first');
  assert.equal(s.group1, '1');
  // Created pre-filled with a PKP and a hashed CID.
  s.group2 = await addGroup(stack, s.key, 'second', {
    pkp_ids_permitted: [s.pkp2], cid_hashes_permitted: [keccakText(CID_EMPTY)],
  });
  assert.equal(s.group2, '2');
});

test('add_action, add_action_to_group, add_pkp_to_group', async () => {
  assertSuccess(await req('POST', 'add_action', {
    key: s.key, body: { action_ipfs_cid: CID_FOOBAR, name: 'foobar', description: 'prints foobar' },
  }), 'add_action');
  assertError(await req('POST', 'add_action', {
    key: s.key, body: { action_ipfs_cid: CID_FOOBAR, name: 'again', description: '' },
  }), 409, 'action_exists', 'add_action twice');
  // group_id as a number and as a decimal string.
  assertSuccess(await req('POST', 'add_action_to_group', {
    key: s.key, body: { group_id: Number(s.group1), action_ipfs_cid: CID_FOOBAR },
  }), 'add_action_to_group');
  assertSuccess(await req('POST', 'add_action_to_group', {
    key: s.key, body: { group_id: s.group1, action_ipfs_cid: CID_HELLO },
  }), 'add_action_to_group (string id)');
  assertError(await req('POST', 'add_action_to_group', {
    key: s.key, body: { group_id: s.group1, action_ipfs_cid: CID_HELLO },
  }), 409, 'already_in_group');
  assertSuccess(await req('POST', 'add_pkp_to_group', {
    key: s.key, body: { group_id: s.group1, pkp_id: s.pkp1 },
  }), 'add_pkp_to_group');
  assertError(await req('POST', 'add_pkp_to_group', {
    key: s.key, body: { group_id: s.group1, pkp_id: s.pkp1 },
  }), 409, 'already_in_group');
  assertError(await req('POST', 'add_pkp_to_group', {
    key: s.key, body: { group_id: '99', pkp_id: s.pkp1 },
  }), 404, 'unknown_group');
});

test('add_usage_api_key returns the key once; owner-only', async () => {
  const body = {
    name: 'ci key', description: 'runs things',
    ...perms({ can_create_groups: true, manage_ipfs_ids_in_groups: [Number(s.group1)], execute_in_groups: [0] }),
  };
  const r = await req('POST', 'add_usage_api_key', { key: s.key, body });
  const j = assertSuccess(r, 'add_usage_api_key');
  assert.match(j.usage_api_key, /^[A-Za-z0-9+/]{43}=$/);
  s.usage = j.usage_api_key;
  let e = await req('GET', 'account_exists', { key: s.usage });
  assert.equal(e.json, true, 'a usage key belongs to an account');
  e = await req('POST', 'add_usage_api_key', { key: s.usage, body });
  assertError(e, 403, 'owner_only', 'usage key adds a key');
});

test('list endpoints show everything with the documented fields', async () => {
  // Groups: id (0x + 64 hex), group_id (decimal string), name, description, members.
  await fresh('list_api_keys', { key: s.key }, (j) => j.length === 1);
  await fresh('list_actions', { key: s.key, query: { group_id: s.group1 } }, (j) => j.length === 2);
  await fresh('list_wallets_in_group', { key: s.key, query: { group_id: s.group1 } }, (j) => j.length === 1);
  const groups = await fresh('list_groups', { key: s.key }, (j) => j.length === 2);
  assert.ok(Array.isArray(groups));
  assert.equal(groups.length, 2);
  const g1 = groups.find((g) => String(BigInt(g.id)) === s.group1);
  const g2 = groups.find((g) => String(BigInt(g.id)) === s.group2);
  assert.ok(g1 && g2, JSON.stringify(groups));
  for (const g of [g1, g2]) {
    // DESIGN section 4 says both "list items carry id as 0x + 64 hex" and "group_id returned as a
    // decimal string": either form of the group id is accepted here.
    assert.match(g.id, GROUP_ID_FORM);
    assert.equal(typeof g.name, 'string');
    assert.equal(typeof g.description, 'string');
  }
  assert.equal(BigInt(g1.id), 1n);
  assert.equal(g1.name, 'first');
  assert.equal(g1.description, 'first description');
  assert.equal(g2.name, 'second');
  if (g1.group_id !== undefined) assert.equal(g1.group_id, '1');
  if (g2.pkp_ids_permitted !== undefined) {
    assert.deepEqual(g2.pkp_ids_permitted.map(lower), [s.pkp2]);
    assert.deepEqual(g2.cid_hashes_permitted, [keccakText(CID_EMPTY)]);
  }

  // Paging: a plain array; page_size 1 gives one item per page; past the end an empty array.
  const p0 = assertOk(await req('GET', 'list_groups', { key: s.key, query: { page_number: 0, page_size: 1 } }));
  const p1 = assertOk(await req('GET', 'list_groups', { key: s.key, query: { page_number: 1, page_size: 1 } }));
  const p2 = assertOk(await req('GET', 'list_groups', { key: s.key, query: { page_number: 2, page_size: 1 } }));
  assert.equal(p0.length, 1);
  assert.equal(p1.length, 1);
  assert.notEqual(p0[0].id, p1[0].id);
  assert.deepEqual(p2, []);

  // Wallets: id, wallet_address, name, description.
  const wallets = assertOk(await req('GET', 'list_wallets', { key: s.key }), 'list_wallets');
  assert.deepEqual(wallets.map((w) => lower(w.wallet_address)).sort(), [s.pkp1, s.pkp2].sort());
  for (const w of wallets) {
    assert.match(w.id, HASH32);
    assert.notEqual(BigInt(w.id), 0n, 'derivation path is never 0');
    assert.equal(typeof w.name, 'string');
    assert.equal(typeof w.description, 'string');
  }
  const inGroup = assertOk(await req('GET', 'list_wallets_in_group', { key: s.key, query: { group_id: s.group1 } }));
  assert.deepEqual(inGroup.map((w) => lower(w.wallet_address)), [s.pkp1]);
  const inGroup2 = assertOk(await req('GET', 'list_wallets_in_group', { key: s.key, query: { group_id: s.group2 } }));
  assert.deepEqual(inGroup2.map((w) => lower(w.wallet_address)), [s.pkp2]);

  // Actions: id = hashed CID; with group_id the group's CIDs (named from the metadata if any).
  const actions = assertOk(await req('GET', 'list_actions', { key: s.key }), 'list_actions');
  assert.equal(actions.length, 1);
  assert.equal(actions[0].id, keccakText(CID_FOOBAR));
  assert.equal(actions[0].name, 'foobar');
  assert.equal(actions[0].description, 'prints foobar');
  const ga = assertOk(await req('GET', 'list_actions', { key: s.key, query: { group_id: s.group1 } }));
  assert.deepEqual(ga.map((a) => a.id).sort(), [keccakText(CID_FOOBAR), keccakText(CID_HELLO)].sort());
  assert.equal(ga.find((a) => a.id === keccakText(CID_FOOBAR)).name, 'foobar');

  // Usage keys: metadata and permissions, never the key value.
  const keys = assertOk(await req('GET', 'list_api_keys', { key: s.key }), 'list_api_keys');
  assert.equal(keys.length, 1);
  const k = keys[0];
  assert.equal(k.id, keccakText(s.usage));
  if (k.api_key_hash !== undefined) assert.equal(k.api_key_hash, keccakText(s.usage));
  assert.equal(k.name, 'ci key');
  assert.equal(k.description, 'runs things');
  assert.equal(k.can_create_groups, true);
  assert.equal(k.can_delete_groups, false);
  assert.equal(k.can_create_pkps, false);
  assert.deepEqual(ids(k.can_manage_ipfs_ids_in_groups), [s.group1]);
  assert.deepEqual(ids(k.can_add_pkp_to_groups), []);
  assert.deepEqual(ids(k.can_remove_pkp_from_groups), []);
  assert.deepEqual(ids(k.can_execute_in_groups), ['0']);
  assert.equal(String(k.expiration), '0');
  assert.equal(JSON.stringify(keys).includes(s.usage), false, 'no key value in the list');

  // A usage key reads its account's lists too.
  const viaUsage = assertOk(await req('GET', 'list_groups', { key: s.usage }));
  assert.equal(viaUsage.length, 2);
  // The other account sees none of it.
  assert.deepEqual(assertOk(await req('GET', 'list_groups', { key: s.otherKey })), []);
});

test('updates: group, action metadata, key metadata, key permissions', async () => {
  assertSuccess(await req('POST', 'update_group', {
    key: s.key,
    body: {
      group_id: s.group1, name: 'first renamed', description: 'new words',
      pkp_ids_permitted: [s.pkp1, s.pkp2], cid_hashes_permitted: [keccakText(CID_FOOBAR)],
    },
  }), 'update_group');
  const groups = await fresh('list_groups', { key: s.key }, (j) => j.some((g) => g.name === 'first renamed'));
  const g1 = groups.find((g) => BigInt(g.id) === 1n);
  assert.equal(g1.name, 'first renamed');
  assert.equal(g1.description, 'new words');
  const inGroup = await fresh('list_wallets_in_group', { key: s.key, query: { group_id: s.group1 } }, (j) => j.length === 2);
  assert.deepEqual(inGroup.map((w) => lower(w.wallet_address)).sort(), [s.pkp1, s.pkp2].sort());
  const ga = await fresh('list_actions', { key: s.key, query: { group_id: s.group1 } }, (j) => j.length === 1);
  assert.deepEqual(ga.map((a) => a.id), [keccakText(CID_FOOBAR)]);

  assertSuccess(await req('POST', 'update_action_metadata', {
    key: s.key, body: { hashed_cid: keccakText(CID_FOOBAR), name: 'foobar v2', description: 'still foobar' },
  }), 'update_action_metadata');
  const actions = await fresh('list_actions', { key: s.key }, (j) => j[0]?.name === 'foobar v2');
  assert.equal(actions[0].name, 'foobar v2');
  assert.equal(actions[0].description, 'still foobar');
  assertError(await req('POST', 'update_action_metadata', {
    key: s.key, body: { hashed_cid: keccakText(CID_HELLO), name: 'x', description: 'y' },
  }), 404, 'unknown_action');

  assertSuccess(await req('POST', 'update_usage_api_key_metadata', {
    key: s.key, body: { usage_api_key: s.usage, name: 'renamed key', description: 'new description' },
  }), 'update_usage_api_key_metadata');
  let k = (await fresh('list_api_keys', { key: s.key }, (j) => j[0]?.name === 'renamed key'))[0];
  assert.equal(k.name, 'renamed key');
  assert.equal(k.description, 'new description');
  assert.equal(k.can_create_groups, true, 'metadata update keeps permissions');

  assertSuccess(await req('POST', 'update_usage_api_key', {
    key: s.key,
    body: {
      usage_api_key: s.usage, name: 'renamed key', description: 'new description',
      ...perms({ can_delete_groups: true, add_pkp_to_groups: [1, 2], remove_pkp_from_groups: ['2'] }),
    },
  }), 'update_usage_api_key');
  k = (await fresh('list_api_keys', { key: s.key }, (j) => j[0]?.can_delete_groups === true))[0];
  assert.equal(k.can_create_groups, false);
  assert.equal(k.can_delete_groups, true);
  assert.deepEqual(ids(k.can_manage_ipfs_ids_in_groups), []);
  assert.deepEqual(ids(k.can_add_pkp_to_groups), ['1', '2']);
  assert.deepEqual(ids(k.can_remove_pkp_from_groups), ['2']);
  assert.deepEqual(ids(k.can_execute_in_groups), []);
  assertError(await req('POST', 'update_usage_api_key_metadata', {
    key: s.key, body: { usage_api_key: Buffer.alloc(32, 9).toString('base64'), name: 'x', description: 'y' },
  }), 404, 'unknown_key');
});

test('removals', async () => {
  assertSuccess(await req('POST', 'remove_action_from_group', {
    key: s.key, body: { group_id: s.group1, hashed_cid: keccakText(CID_FOOBAR) },
  }), 'remove_action_from_group');
  assertError(await req('POST', 'remove_action_from_group', {
    key: s.key, body: { group_id: s.group1, hashed_cid: keccakText(CID_FOOBAR) },
  }), 404, 'not_in_group');
  await fresh('list_actions', { key: s.key, query: { group_id: s.group1 } }, (j) => j.length === 0);

  assertSuccess(await req('POST', 'remove_pkp_from_group', {
    key: s.key, body: { group_id: s.group1, pkp_id: s.pkp1 },
  }), 'remove_pkp_from_group');
  assertError(await req('POST', 'remove_pkp_from_group', {
    key: s.key, body: { group_id: s.group1, pkp_id: s.pkp1 },
  }), 404, 'not_in_group');
  const inGroup = await fresh('list_wallets_in_group', { key: s.key, query: { group_id: s.group1 } }, (j) => j.length === 1);
  assert.deepEqual(inGroup.map((w) => lower(w.wallet_address)), [s.pkp2]);

  assertSuccess(await req('POST', 'delete_action', { key: s.key, body: { hashed_cid: keccakText(CID_FOOBAR) } }));
  await fresh('list_actions', { key: s.key }, (j) => j.length === 0);
  assertError(await req('POST', 'delete_action', { key: s.key, body: { hashed_cid: keccakText(CID_FOOBAR) } }),
    404, 'unknown_action');

  // group_id shown in the spec as a string for remove_group; numbers work too.
  assertSuccess(await req('POST', 'remove_group', { key: s.key, body: { group_id: s.group1 } }), 'remove_group');
  assertError(await req('POST', 'remove_group', { key: s.key, body: { group_id: Number(s.group1) } }),
    404, 'unknown_group');
  const groups = await fresh('list_groups', { key: s.key }, (j) => j.length === 1);
  assert.deepEqual(groups.map((g) => BigInt(g.id)), [2n]);
  assert.ok(await eventually(async () => (await req('GET', 'list_wallets_in_group', { key: s.key, query: { group_id: s.group1 } })).status === 404, 3000, 50));
  assertError(await req('GET', 'list_wallets_in_group', { key: s.key, query: { group_id: s.group1 } }),
    404, 'unknown_group');
  // Ids are never reused.
  assert.equal(await addGroup(stack, s.key, 'third'), '3');

  assertSuccess(await req('POST', 'remove_usage_api_key', { key: s.key, body: { usage_api_key: s.usage } }));
  await fresh('list_api_keys', { key: s.key }, (j) => j.length === 0);
  assert.ok(await eventually(async () => (await req('GET', 'list_groups', { key: s.usage })).status === 401, 3000, 50));
  assertError(await req('GET', 'list_groups', { key: s.usage }), 401, 'invalid_api_key');
  assertError(await req('POST', 'remove_usage_api_key', { key: s.key, body: { usage_api_key: s.usage } }),
    404, 'unknown_key');
  // The PKPs stay registered to the account.
  assert.equal(assertOk(await req('GET', 'list_wallets', { key: s.key })).length, 2);
});

test('read-your-writes: a relayed write is visible to the very next read, on any worker', async () => {
  // DESIGN section 3 / api brief: relayed writes invalidate the read cache themselves. With several
  // workers, the next request may land on a worker that did not make the write.
  const acct = await newAccount(stack, 'ryw');
  let stale = 0;
  for (let i = 0; i < 6; i++) {
    assertOk(await req('GET', 'list_groups', { key: acct.api_key })); // warm whichever worker answers
    assertOk(await req('GET', 'list_groups', { key: acct.api_key }));
    await addGroup(stack, acct.api_key, `ryw ${i}`);
    const now = assertOk(await req('GET', 'list_groups', { key: acct.api_key, query: { page_size: 100 } }));
    if (now.length !== i + 1) stale++;
  }
  assert.equal(stale, 0, `${stale} of 6 reads right after a write were stale`);
});
