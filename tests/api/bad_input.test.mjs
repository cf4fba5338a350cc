// Refusal of bad input on every endpoint (DESIGN.md section 4): wrong types, missing fields, bad
// hex, addresses and CIDs, too many items, too long strings, malformed JSON (422), another content
// type (415), an oversized body (413), unknown endpoints (404) and wrong methods (405). Always a
// JSON error {"error":{"code","message"}} with the exact status and code; never a 500.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, ethers, assertError, assertOk, newAccount, perms, createWallet, UUID_V4 } from './stack.mjs';

const CID = 'QmRgutAxd8t7oGkSm4wmeuByG6M51wcTso6cubDdQtuEfL';
const HASH = '0x' + 'ab'.repeat(32);
const ADDR = '0x' + '11'.repeat(20);

let stack;
let owner;
let usage;

before(async () => {
  stack = await startStack();
  owner = (await newAccount(stack, 'bad input')).api_key;
  const r = await stack.request('POST', 'add_usage_api_key', { key: owner, body: { name: 'u', description: '', ...perms() } });
  usage = r.json.usage_api_key;
});
after(async () => { await stack?.stop(); });

const req = (...a) => stack.request(...a);

// Bad values by kind, each refused as invalid_<field>.
const wallet = ethers.Wallet.createRandom().address; // EIP-55 checksummed
const badChecksum = wallet.replace(/[a-f]/, (c) => c.toUpperCase()) === wallet
  ? wallet.replace(/[A-F]/, (c) => c.toLowerCase()) : wallet.replace(/[a-f]/, (c) => c.toUpperCase());
const BAD = {
  name: [123, true, ['x'], { a: 1 }, 'n'.repeat(257)],
  description: [123, false, ['x'], 'd'.repeat(4097), 'é'.repeat(2049)],
  group_id: [-1, 0, '0', 'abc', 1.5, '1.5', '1e3', true, {}, [], '18446744073709551616', ''],
  group_list: [1, '1', [-1], ['abc'], [1.5], [true], [{}], Array.from({ length: 101 }, (_, i) => i + 1)],
  address: ['0x123', 'not an address', '0x' + 'g'.repeat(40), ADDR + '00', 42, badChecksum, ''],
  address_list: [ADDR, ['0x123'], [42], Array.from({ length: 101 }, (_, i) => ethers.zeroPadValue(ethers.toBeHex(i + 1), 20))],
  hash: ['0x1234', '0x' + 'g'.repeat(64), '0x' + 'a'.repeat(66), '0x' + 'a'.repeat(63), 12345, '', 'zz'],
  hash_list: [HASH, ['0x12'], [7], Array.from({ length: 101 }, (_, i) => ethers.zeroPadValue(ethers.toBeHex(i + 1), 32))],
  cid: ['Qm123', 'hello', '', 42, CID.slice(0, -1) + '0', CID + 'x', 'Qm' + 'x'.repeat(2000), ['x']],
  bool: ['true', 1, 0, 'yes', [], {}],
  api_key: [42, true, 'k'.repeat(300), ['x']],
};

// POST endpoints: a valid body, which fields are required, and each field's kind.
const ENDPOINTS = [
  { path: 'add_group', key: () => owner,
    body: { group_name: 'g', group_description: 'd', pkp_ids_permitted: [], cid_hashes_permitted: [] },
    fields: { group_name: 'name', group_description: 'description', pkp_ids_permitted: 'address_list', cid_hashes_permitted: 'hash_list' },
    required: ['group_name'] },
  { path: 'update_group', key: () => owner,
    body: { group_id: '1', name: 'g', description: 'd', pkp_ids_permitted: [], cid_hashes_permitted: [] },
    fields: { group_id: 'group_id', name: 'name', description: 'description', pkp_ids_permitted: 'address_list', cid_hashes_permitted: 'hash_list' },
    required: ['group_id', 'name'] },
  { path: 'remove_group', key: () => owner, body: { group_id: '1' }, fields: { group_id: 'group_id' }, required: ['group_id'] },
  { path: 'add_action', key: () => owner, body: { action_ipfs_cid: CID, name: 'a', description: 'd' },
    fields: { action_ipfs_cid: 'cid', name: 'name', description: 'description' }, required: ['action_ipfs_cid', 'name'] },
  { path: 'delete_action', key: () => owner, body: { hashed_cid: HASH }, fields: { hashed_cid: 'hash' }, required: ['hashed_cid'] },
  { path: 'update_action_metadata', key: () => owner, body: { hashed_cid: HASH, name: 'a', description: 'd' },
    fields: { hashed_cid: 'hash', name: 'name', description: 'description' }, required: ['hashed_cid', 'name'] },
  { path: 'add_action_to_group', key: () => owner, body: { group_id: 1, action_ipfs_cid: CID },
    fields: { group_id: 'group_id', action_ipfs_cid: 'cid' }, required: ['group_id', 'action_ipfs_cid'] },
  { path: 'remove_action_from_group', key: () => owner, body: { group_id: 1, hashed_cid: HASH },
    fields: { group_id: 'group_id', hashed_cid: 'hash' }, required: ['group_id', 'hashed_cid'] },
  { path: 'add_pkp_to_group', key: () => owner, body: { group_id: 1, pkp_id: ADDR },
    fields: { group_id: 'group_id', pkp_id: 'address' }, required: ['group_id', 'pkp_id'] },
  { path: 'remove_pkp_from_group', key: () => owner, body: { group_id: 1, pkp_id: ADDR },
    fields: { group_id: 'group_id', pkp_id: 'address' }, required: ['group_id', 'pkp_id'] },
  { path: 'add_usage_api_key', key: () => owner, body: { name: 'k', description: 'd', ...perms() },
    fields: { name: 'name', description: 'description', can_create_groups: 'bool', can_delete_groups: 'bool', can_create_pkps: 'bool',
      manage_ipfs_ids_in_groups: 'group_list', add_pkp_to_groups: 'group_list', remove_pkp_from_groups: 'group_list',
      execute_in_groups: 'group_list' },
    required: [] },
  { path: 'update_usage_api_key', key: () => owner, body: () => ({ usage_api_key: usage, name: 'k', description: 'd', ...perms() }),
    fields: { usage_api_key: 'api_key', name: 'name', description: 'description', can_create_groups: 'bool',
      manage_ipfs_ids_in_groups: 'group_list', execute_in_groups: 'group_list' },
    required: ['usage_api_key'] },
  { path: 'update_usage_api_key_metadata', key: () => owner, body: () => ({ usage_api_key: usage, name: 'k', description: 'd' }),
    fields: { usage_api_key: 'api_key', name: 'name', description: 'description' }, required: ['usage_api_key', 'name'] },
  { path: 'remove_usage_api_key', key: () => owner, body: () => ({ usage_api_key: usage }),
    fields: { usage_api_key: 'api_key' }, required: ['usage_api_key'] },
  { path: 'new_account', key: () => undefined, body: { account_name: 'a', account_description: 'd' },
    fields: { account_name: 'name', account_description: 'description' }, required: [] },
];

const bodyOf = (e) => (typeof e.body === 'function' ? e.body() : e.body);

test('wrong types, bad formats, too many items, too long strings: 400 invalid_<field>', async () => {
  let n = 0;
  for (const e of ENDPOINTS) {
    for (const [field, kind] of Object.entries(e.fields)) {
      for (const value of BAD[kind]) {
        const body = { ...bodyOf(e), [field]: value };
        const r = await req('POST', e.path, { key: e.key(), body });
        assertError(r, 400, `invalid_${field}`, `${e.path} ${field}=${JSON.stringify(value).slice(0, 60)}`);
        n++;
      }
    }
  }
  console.log(`# ${n} bad field values refused`);
});

test('missing or null required fields: 400 missing_<field>', async () => {
  for (const e of ENDPOINTS) {
    for (const field of e.required) {
      const body = { ...bodyOf(e) };
      delete body[field];
      assertError(await req('POST', e.path, { key: e.key(), body }), 400, `missing_${field}`, `${e.path} without ${field}`);
      assertError(await req('POST', e.path, { key: e.key(), body: { ...body, [field]: null } }), 400, `missing_${field}`,
        `${e.path} ${field}=null`);
    }
  }
});

test('a body that is not a JSON object: 400 invalid_body', async () => {
  for (const e of ENDPOINTS) {
    for (const body of [[], [bodyOf(e)], 'text', 42, true, null]) {
      assertError(await req('POST', e.path, { key: e.key(), body }), 400, 'invalid_body', `${e.path} body ${JSON.stringify(body).slice(0, 40)}`);
    }
  }
  // get_sigil_action_ipfs_id takes a JSON string and nothing else.
  for (const body of [{ code: 'x' }, 42, ['x'], null]) {
    assertError(await req('POST', 'get_sigil_action_ipfs_id', { body }), 400, undefined, `ipfs_id body ${JSON.stringify(body)}`);
  }
});

test('malformed JSON: 422 malformed_json', async () => {
  const bad = ['{', '{"group_name":}', '{"a":1}x', "{'a':1}", '[1,2', '{"a":"\\x"}', '{"a":01}', 'nul',
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // {"a":"<invalid UTF-8>"}
    '['.repeat(100000)];
  const paths = [...ENDPOINTS.map((e) => [e.path, e.key()]), ['get_sigil_action_ipfs_id', undefined]];
  for (const [path, key] of paths) {
    for (const raw of bad) {
      assertError(await req('POST', path, { key, rawBody: raw }), 422, 'malformed_json', `${path} ${String(raw).slice(0, 20)}`);
    }
  }
  // Also without a key: the body is checked before authentication or after, never a 500.
  const r = await req('POST', 'add_group', { rawBody: '{' });
  assert.ok(r.status === 422 || r.status === 401, `${r.status}`);
  assertError(r, r.status);
});

test('another content type: 415 unsupported_media_type', async () => {
  const paths = [...ENDPOINTS.map((e) => [e.path, e.key(), bodyOf(e)]), ['get_sigil_action_ipfs_id', undefined, 'x']];
  for (const [path, key, body] of paths) {
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', null]) {
      const r = await req('POST', path, { key, rawBody: JSON.stringify(body), contentType: ct });
      assertError(r, 415, 'unsupported_media_type', `${path} ${ct}`);
    }
  }
  // Parameters on application/json are fine.
  const ok = await req('POST', 'get_sigil_action_ipfs_id', { rawBody: '"x"', contentType: 'application/json; charset=utf-8' });
  assert.equal(ok.status, 200, ok.text);
});

test('oversized body: 413 as JSON', async () => {
  const huge = JSON.stringify({ group_name: 'x'.repeat(1100 * 1024), group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] });
  for (const [path, key] of [['add_group', owner], ['new_account', undefined], ['get_sigil_action_ipfs_id', undefined]]) {
    const r = await req('POST', path, { key, rawBody: huge });
    assertError(r, 413, 'body_too_large', path);
    assert.match(r.headers['content-type'] ?? '', /application\/json/);
  }
});

test("nginx's own refusals carry X-Request-Id too (DESIGN section 4: every response)", async () => {
  const huge = 'x'.repeat(1100 * 1024);
  const r = await req('POST', 'add_group', { key: owner, rawBody: JSON.stringify(huge) });
  assertError(r, 413, 'body_too_large');
  assert.match(r.headers['x-request-id'] ?? '', UUID_V4, "X-Request-Id on nginx's 413");
});

test('paging and query parameters: 400', async () => {
  const lists = ['list_groups', 'list_wallets', 'list_actions', 'list_api_keys'];
  for (const path of lists) {
    for (const v of ['0', '101', '-1', 'x', '1.5', '', '1e2', '99999999999999999999999']) {
      assertError(await req('GET', path, { key: owner, query: { page_size: v } }), 400, 'invalid_page_size', `${path} page_size=${v}`);
    }
    for (const v of ['-1', 'x', '1.5', '', '99999999999999999999999']) {
      assertError(await req('GET', path, { key: owner, query: { page_number: v } }), 400, 'invalid_page_number', `${path} page_number=${v}`);
    }
    for (const [n, sz] of [[0, 1], [0, 100], [5, 10]]) {
      const r = await req('GET', path, { key: owner, query: { page_number: n, page_size: sz } });
      assert.equal(r.status, 200, `${path} ${n}/${sz}: ${r.text}`);
      assert.ok(Array.isArray(r.json));
    }
  }
  assertError(await req('GET', 'list_wallets_in_group', { key: owner }), 400, 'missing_group_id');
  assertError(await req('GET', 'list_wallets_in_group', { key: owner, query: { group_id: '' } }), 400, 'missing_group_id');
  for (const v of ['0', '-1', 'abc', '1.5', ' 1', '18446744073709551616']) {
    assertError(await req('GET', 'list_wallets_in_group', { key: owner, query: { group_id: v } }), 400, 'invalid_group_id', `group_id=${v}`);
    assertError(await req('GET', 'list_actions', { key: owner, query: { group_id: v } }), 400, 'invalid_group_id', `list_actions group_id=${v}`);
  }
  assertError(await req('GET', 'list_wallets_in_group', { key: owner, query: { group_id: 12345 } }), 404, 'unknown_group');
});

test('unknown endpoints: 404 not_found', async () => {
  for (const [m, p] of [['GET', 'nope'], ['POST', 'add_groups'], ['GET', '/core/v2/list_groups'], ['GET', '/core/v1/'],
    ['GET', 'list_groups/1'], ['POST', '/core/v1/ADD_GROUP'], ['GET', '/nope']]) {
    assertError(await req(m, p, { key: owner }), 404, 'not_found', `${m} ${p}`);
  }
});

test('wrong methods: 405 method_not_allowed with Allow', async () => {
  const cases = [['GET', 'add_group', 'POST'], ['PUT', 'add_group', 'POST'], ['POST', 'list_groups', 'GET'],
    ['DELETE', 'list_wallets', 'GET'], ['GET', 'new_account', 'POST'], ['POST', 'get_node_chain_config', 'GET'],
    ['GET', 'get_sigil_action_ipfs_id', 'POST'], ['PATCH', 'update_group', 'POST'], ['POST', 'account_exists', 'GET']];
  for (const [m, p, allow] of cases) {
    const r = await req(m, p, { key: owner });
    assertError(r, 405, 'method_not_allowed', `${m} ${p}`);
    assert.ok((r.headers.allow ?? '').split(/,\s*/).includes(allow), `Allow on ${m} ${p}: ${r.headers.allow}`);
  }
});

test('create_wallet: an optional body is still checked', async () => {
  assertError(await req('POST', 'create_wallet', { key: owner, rawBody: '{' }), 422, 'malformed_json');
  assertError(await req('POST', 'create_wallet', { key: owner, rawBody: '{}', contentType: 'text/plain' }), 415, 'unsupported_media_type');
  assertError(await req('POST', 'create_wallet', { key: owner, body: { name: 7 } }), 400, 'invalid_name');
  assertError(await req('POST', 'create_wallet', { key: owner, body: { description: 'd'.repeat(4097) } }), 400, 'invalid_description');
  // The key's lack of pkp:create is checked, never a 500.
  assertError(await req('GET', 'create_wallet', { key: usage }), 403, 'missing_scope');
  await createWallet(stack, owner);
});

test('an API key sent twice: 400 ambiguous_api_key, never a guess between them', async () => {
  for (const [name, values] of [
    ['X-Api-Key', [owner, usage]],
    ['X-Api-Key', [owner, owner]],
  ]) {
    const res = await req('GET', 'list_groups', { headers: { [name]: values }, query: { page_number: 0, page_size: 10 } });
    assertError(res, 400, 'ambiguous_api_key', `${name} twice`);
  }
  // nginx itself refuses a second Authorization line, with its JSON 400.
  const twice = await req('GET', 'list_groups', { headers: { Authorization: [`Bearer ${owner}`, `Bearer ${usage}`] },
    query: { page_number: 0, page_size: 10 } });
  assertError(twice, 400, 'bad_request', 'Authorization twice');
  // One key in each header is not ambiguous: X-Api-Key is the one that counts (the spec's order).
  assertOk(await req('GET', 'list_groups', { key: owner, bearer: 'not-a-key', query: { page_number: 0, page_size: 10 } }));
});
