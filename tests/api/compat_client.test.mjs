// Existing clients of the deployed implementation work unchanged (issue 28): a client of our own
// that speaks that implementation's published JavaScript SDK's wire (its paths, bodies and headers,
// and what it does with an answer: the JSON body on 2xx; otherwise it throws "<endpoint>: <text>",
// the text being a string `error` or a top-level `message` of the body, else the bare status line),
// run through the whole stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startStack, assertOk, assertError, newAccount, addGroup, addUsageKey, keccakText, HASH32,
} from './stack.mjs';

let stack;
const s = {};

// That SDK's reading of an error body: a string `error`, else a string `message`, else a bare string.
function sdkErrorText(text) {
  try {
    const body = JSON.parse(text);
    if (!body) return null;
    if (typeof body.error === 'string' && body.error.length > 0) return body.error;
    if (typeof body.message === 'string' && body.message.length > 0) return body.message;
    if (typeof body === 'string') return body;
  } catch { /* not JSON */ }
  return null;
}

// One call as that SDK makes it: X-Api-Key when it has a key, Content-Type application/json with a
// JSON body. Returns the parsed body, or throws the Error that SDK throws (with .status for tests).
async function legacyCall(method, endpoint, { apiKey = null, body = undefined } = {}) {
  const headers = {};
  if (apiKey !== null) headers['X-Api-Key'] = apiKey;
  const opts = { headers };
  if (body !== undefined) {
    opts.rawBody = JSON.stringify(body);
    opts.contentType = 'application/json';
  }
  const r = await stack.request(method, `/core/v1/${endpoint}`, opts);
  if (r.status < 200 || r.status > 299) {
    const text = sdkErrorText(r.text);
    const err = new Error(text ? `${endpoint}: ${text}` : `${endpoint}: ${r.status}`);
    err.status = r.status;
    err.body = r.json;
    throw err;
  }
  return r.text ? JSON.parse(r.text) : null;
}

async function rejects(promise, status, pattern) {
  let err = null;
  try { await promise; } catch (e) { err = e; }
  assert.ok(err, 'the call must throw');
  assert.equal(err.status, status, `status: ${err.message}`);
  if (pattern) assert.match(err.message, pattern);
  return err;
}

before(async () => {
  stack = await startStack({ workers: 2 });
  s.owner = (await newAccount(stack, 'compat')).api_key;
  s.group = await addGroup(stack, s.owner, 'compat runners');
});

after(async () => {
  await stack?.stop();
});

// ---- usage keys by hash ----------------------------------------------------------------------

async function keyItem(hash) {
  const list = await legacyCall('GET', 'list_api_keys?page_number=0&page_size=100', { apiKey: s.owner });
  return list.find((k) => k.api_key_hash === hash) ?? null;
}

test('update_usage_api_key, its metadata and remove_usage_api_key accept the key hash that listings show', async () => {
  const usage = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] }, 'by hash', 'before');
  const hash = keccakText(usage);
  assert.match(hash, HASH32);
  assert.ok(await keyItem(hash), 'the listing shows the key by its hash');

  // Metadata by the hash, lowercase, as list_api_keys answers it.
  assert.equal((await legacyCall('POST', 'update_usage_api_key_metadata', {
    apiKey: s.owner, body: { usage_api_key: hash, name: 'renamed', description: 'by its hash' },
  })).success, true);
  let item = await keyItem(hash);
  assert.equal(item.name, 'renamed');
  assert.equal(item.description, 'by its hash');

  // Permissions by the hash in upper case with 0X (the deployed implementation takes either case).
  const upper = '0X' + hash.slice(2).toUpperCase();
  assert.equal((await legacyCall('POST', 'update_usage_api_key', {
    apiKey: s.owner,
    body: {
      usage_api_key: upper, name: 'renamed', description: 'by its hash', can_create_groups: true, can_delete_groups: false,
      can_create_pkps: false, manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [],
      execute_in_groups: [0],
    },
  })).success, true);
  item = await keyItem(hash);
  assert.equal(item.can_create_groups, true);
  assert.deepEqual(item.can_execute_in_groups, [0]);

  // The value still works as before.
  assert.equal((await legacyCall('POST', 'update_usage_api_key_metadata', {
    apiKey: s.owner, body: { usage_api_key: usage, name: 'by value', description: 'still' },
  })).success, true);
  assert.equal((await keyItem(hash)).name, 'by value');

  // Revoked by its hash: gone from the listing, and the key no longer authenticates.
  assert.equal((await legacyCall('POST', 'remove_usage_api_key', { apiKey: s.owner, body: { usage_api_key: hash } })).success, true);
  assert.equal(await keyItem(hash), null);
  assert.equal(await legacyCall('GET', 'account_exists', { apiKey: usage }), false);
  assertError(await stack.request('GET', 'list_groups', { key: usage }), 401);
});

test('a hash that names no usage key is 404, and the master key\'s hash is refused like its value', async () => {
  const unknown = keccakText('no such key');
  assertError(await stack.request('POST', 'remove_usage_api_key', { key: s.owner, body: { usage_api_key: unknown } }), 404);
  assertError(await stack.request('POST', 'update_usage_api_key_metadata',
    { key: s.owner, body: { usage_api_key: unknown, name: 'x', description: 'y' } }), 404);
  for (const form of [keccakText(s.owner), s.owner]) {
    assertError(await stack.request('POST', 'remove_usage_api_key', { key: s.owner, body: { usage_api_key: form } }),
      400, 'master_key_not_usage_key');
  }
  // Another account's key by its hash: unknown here, and still working there.
  const other = (await newAccount(stack, 'other')).api_key;
  const theirs = await addUsageKey(stack, other, {}, 'theirs');
  assertError(await stack.request('POST', 'remove_usage_api_key', { key: s.owner, body: { usage_api_key: keccakText(theirs) } }), 404);
  assert.equal(await legacyCall('GET', 'account_exists', { apiKey: theirs }), true);
});
