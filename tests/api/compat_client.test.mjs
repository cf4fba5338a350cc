// Existing clients of the deployed implementation work unchanged (issue 28): a client of our own
// that speaks that implementation's published JavaScript SDK's wire (its paths, bodies and headers,
// and what it does with an answer: the JSON body on 2xx; otherwise it throws "<endpoint>: <text>",
// the text being a string `error` or a top-level `message` of the body, else the bare status line),
// run through the whole stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startStack, assertOk, assertError, newAccount, addGroup, addUsageKey, keccakText, eventually, ethers, HASH32,
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

// ---- error bodies: a top-level message ---------------------------------------------------------

test('every refusal reaches that SDK\'s user with its message, not the bare status (worker and nginx alike)', async () => {
  const limited = await addUsageKey(stack, s.owner, {}, 'no scopes');
  const err = await rejects(legacyCall('POST', 'add_group', {
    apiKey: limited, body: { group_name: 'g', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 403);
  assert.equal(err.message, `add_group: ${err.body.error.message}`);
  assert.doesNotMatch(err.message, /^add_group: 403/);
  assert.equal(err.body.message, err.body.error.message, 'the nested error object stays');

  // A refusal nginx answers itself (the body is over its limit).
  const huge = await stack.request('POST', 'add_group', { key: s.owner, rawBody: JSON.stringify('x'.repeat(1100 * 1024)) });
  assertError(huge, 413, 'body_too_large');
  assert.equal(huge.json.message, huge.json.error.message);
  // Unknown endpoint and unknown key (the worker's router and its authentication).
  assertError(await stack.request('GET', 'no_such_endpoint'), 404);
  assertError(await stack.request('GET', 'list_groups', { key: 'not a key' }), 401);
});

// ---- runs and CIDs under the deployed implementation's names ----------------------------------

async function litAction(apiKey, code, jsParams) {
  return legacyCall('POST', 'lit_action', { apiKey, body: { code, js_params: jsParams ?? null } });
}

async function permit(code) {
  const cid = await legacyCall('POST', 'get_lit_action_ipfs_id', { body: code });
  assertOk(await stack.request('POST', 'add_action_to_group', { key: s.owner, body: { group_id: s.group, action_ipfs_cid: cid } }));
  return cid;
}

test('get_lit_action_ipfs_id answers the CID that get_sigil_action_ipfs_id answers', async () => {
  const code = 'console.log("hello")';
  assert.equal(await legacyCall('POST', 'get_lit_action_ipfs_id', { body: code }), 'QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL');
  assert.equal(await legacyCall('POST', 'get_sigil_action_ipfs_id', { body: code }), 'QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL');
});

test('lit_action runs an action; a string response holding JSON is answered parsed, on both names', async () => {
  const code = `(async () => {
    Lit.Actions.setResponse({ response: JSON.stringify({ sum: jsParams.a + jsParams.b, who: 'compat' }) });
  })();`;
  await permit(code);
  const res = await litAction(s.owner, code, { a: 2, b: 3 });
  assert.deepEqual(res.response, { sum: 5, who: 'compat' });
  assert.equal(res.response.sum, 5, 'its users read res.response.field');
  assert.equal(res.has_error, false);
  assert.equal(typeof res.logs, 'string');
  const ours = assertOk(await stack.request('POST', 'sigil_action', { key: s.owner, body: { code, js_params: { a: 2, b: 3 } } }));
  assert.deepEqual(ours.response, { sum: 5, who: 'compat' });

  // A string that is not JSON stays a string; a JSON number in a string becomes the number.
  const plain = 'Lit.Actions.setResponse({ response: "hello, world" });';
  await permit(plain);
  assert.equal((await litAction(s.owner, plain)).response, 'hello, world');
  const number = 'Lit.Actions.setResponse({ response: "42" });';
  await permit(number);
  assert.equal((await litAction(s.owner, number)).response, 42);
});

test('a failed action throws in that SDK (non-2xx with its message) on lit_action; sigil_action keeps 200 + has_error', async () => {
  const code = 'console.log("before"); throw new Error("the oracle is down");';
  await permit(code);
  const err = await rejects(litAction(s.owner, code), 400, /^lit_action: Error: the oracle is down$/);
  assert.equal(err.body.has_error, true);
  assert.equal(err.body.error.code, 'script_error');
  assert.match(err.body.logs, /before/);

  const ours = await stack.request('POST', 'sigil_action', { key: s.owner, body: { code } });
  assert.equal(ours.status, 200);
  assert.equal(ours.json.has_error, true);
  assert.equal(ours.json.error.code, 'script_error');

  // A limit hit too (the response cap): non-2xx on the compatibility name.
  const big = 'Lit.Actions.setResponse({ response: "x".repeat(200 * 1024) });';
  await permit(big);
  const limit = await rejects(litAction(s.owner, big), 400, /^lit_action: /);
  assert.equal(limit.body.error.code, 'response_limit');
  // Refusals before the run are the usual errors on both names.
  const unlisted = 'Lit.Actions.setResponse({ response: "never listed" });';
  await rejects(litAction(s.owner, unlisted), 403, /^lit_action: no group/);
});

test('Lit.Auth (and LitAuth) inside an action: the running action\'s CID stack, frozen', async () => {
  const code = `
    var before = Lit.Auth.actionIpfsIdStack.length;
    var pushed = true;
    try { Lit.Auth.actionIpfsIdStack.push('QmForged'); } catch (e) { pushed = false; }
    Lit.Actions.setResponse({ response: JSON.stringify({
      stack: Lit.Auth.actionIpfsIdStack, same: LitAuth === Lit.Auth, pushed: pushed, before: before,
      authSigAddress: Lit.Auth.authSigAddress, authMethodContexts: Lit.Auth.authMethodContexts,
      resources: Lit.Auth.resources, frozen: Object.isFrozen(Lit.Auth) }) });`;
  const cid = await permit(code);
  const res = await litAction(s.owner, code);
  assert.deepEqual(res.response, {
    stack: [cid], same: true, pushed: false, before: 1, authSigAddress: null, authMethodContexts: [], resources: [], frozen: true,
  });
});

// ---- billing/stripe_config ------------------------------------------------------------------------

test('billing/stripe_config: that SDK\'s billing check answers that Stripe is off here, with a message', async () => {
  const err = await rejects(legacyCall('GET', 'billing/stripe_config'), 404, /^billing\/stripe_config: billing is not enabled/);
  assert.equal(err.body.error.code, 'stripe_not_configured');
});

test('billing/stripe_config: the publishable key with the Stripe processor; 404 naming payments_config with the chain one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'compat-stripe-'));
  const keyFile = join(dir, 'stripe.key');
  writeFileSync(keyFile, 'sk_test_compat_never_sent\n', { mode: 0o600 });
  let other;
  try {
    // Stripe is never reached: stripe_config answers from the configuration.
    other = await startStack({ workers: 1, billing: { processor: 'stripe', lines: [
      `stripe_secret_key_file = ${keyFile}`, 'stripe_publishable_key = pk_test_compat', 'stripe_api_base = http://127.0.0.1:9'] } });
    const r = await other.request('GET', 'billing/stripe_config');
    assert.deepEqual(assertOk(r, 'stripe_config'), { publishable_key: 'pk_test_compat' });
    assert.doesNotMatch(r.text, /sk_test/);
  } finally {
    await other?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  let chain;
  try {
    chain = await startStack({ workers: 1, billing: {} });
    const r = await chain.request('GET', 'billing/stripe_config');
    assertError(r, 404, 'stripe_not_configured');
    assert.match(r.json.message, /chain processor, not Stripe.*payments_config/);
  } finally {
    await chain?.stop();
  }
});

// ---- groups: hashes without 0x, wildcards refused by name -----------------------------------------

test('add_group and update_group take CID hashes with or without 0x', async () => {
  const cidHash = keccakText('QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL');
  const other = keccakText('QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH');
  const added = await legacyCall('POST', 'add_group', {
    apiKey: s.owner,
    body: { group_name: 'bare hashes', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [cidHash.slice(2)] },
  });
  assert.equal(added.success, true);
  const find = async () => (await legacyCall('GET', 'list_groups?page_number=0&page_size=100', { apiKey: s.owner }))
    .find((g) => g.id === added.group_id);
  assert.deepEqual((await find()).cid_hashes_permitted, [cidHash]);
  assert.equal((await legacyCall('POST', 'update_group', {
    apiKey: s.owner,
    body: { group_id: Number(added.group_id), name: 'bare hashes', description: 'upper', pkp_ids_permitted: [],
      cid_hashes_permitted: [cidHash.slice(2).toUpperCase(), other] },
  })).success, true);
  assert.deepEqual([...(await find()).cid_hashes_permitted].sort(), [cidHash, other].sort());
});

test('the deployed implementation\'s group wildcards are refused with the way to list every PKP or action', async () => {
  const zeroPkp = '0x' + '0'.repeat(64);
  let err = await rejects(legacyCall('POST', 'add_group', {
    apiKey: s.owner, body: { group_name: 'all wallets', group_description: '', pkp_ids_permitted: [zeroPkp], cid_hashes_permitted: [] },
  }), 400, /list_wallets/);
  assert.equal(err.body.error.code, 'group_wildcard_not_supported');
  err = await rejects(legacyCall('POST', 'add_group', {
    apiKey: s.owner,
    body: { group_name: 'all wallets', group_description: '', pkp_ids_permitted: ['0x0000000000000000000000000000000000000000'], cid_hashes_permitted: [] },
  }), 400, /list_wallets/);
  for (const wildcard of [0, '0', '0x0', '0x' + '0'.repeat(64)]) {
    err = await rejects(legacyCall('POST', 'add_group', {
      apiKey: s.owner, body: { group_name: 'all actions', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [wildcard] },
    }), 400, /list_actions/);
    assert.equal(err.body.error.code, 'group_wildcard_not_supported', JSON.stringify(wildcard));
  }
  err = await rejects(legacyCall('POST', 'update_group', {
    apiKey: s.owner,
    body: { group_id: Number(s.group), name: 'x', description: 'y', pkp_ids_permitted: [], cid_hashes_permitted: [0] },
  }), 400, /list_actions/);
});

// ---- ChainSecured: the deployed SDK's direct contract calls ------------------------------------------

test('ChainSecured: that SDK\'s first direct call, newChainSecuredAccount(string,string), creates the account', async () => {
  const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  try {
    const admin = ethers.Wallet.createRandom().connect(provider);
    await provider.send('anvil_setBalance', [admin.address, '0x8ac7230489e80000']);
    // Only the deployed implementation's signatures, as its SDK's ABI has them.
    const theirs = new ethers.Contract(stack.contract, [
      'function newChainSecuredAccount(string name, string description)',
      'function setUsageApiKey(uint256,uint256,uint256,uint256,string,string,bool,bool,bool,uint256[],uint256[],uint256[],uint256[])',
    ], admin);
    await (await theirs.newChainSecuredAccount('my account', 'made as the deployed SDK makes it')).wait();
    const accountHash = ethers.solidityPackedKeccak256(['address'], [admin.address]);
    const usage = randomBytes(32).toString('base64');
    await (await theirs.setUsageApiKey(accountHash, keccakText(usage), 0, 0, 'k', '', false, false, false, [], [], [], [])).wait();
    assert.ok(await eventually(async () => (await legacyCall('GET', 'account_exists', { apiKey: usage })) === true, 10000),
      'the usage key minted on chain authenticates');
    // A second account for the same wallet is refused, as for newChainSecuredAccount().
    await assert.rejects(theirs.newChainSecuredAccount.staticCall('again', ''));

    // The views its login reads: api_payers() and accountExistsAndIsMutable(hash) from a given sender.
    const views = new ethers.Contract(stack.contract, [
      'function api_payers() view returns (address[])',
      'function accountExistsAndIsMutable(uint256) view returns (bool)',
    ], provider);
    const payers = await views.api_payers();
    assert.ok(payers.length > 0);
    const mutableBy = (hash, from) => views.accountExistsAndIsMutable.staticCall(hash, { from });
    assert.equal(await mutableBy(accountHash, admin.address), true, 'its admin writes to a ChainSecured account');
    assert.equal(await mutableBy(accountHash, payers[0]), false, 'an API payer does not');
    assert.equal(await mutableBy(keccakText(usage), admin.address), true, 'by a live usage key of the account');
    const managed = keccakText(s.owner);
    assert.equal(await mutableBy(managed, payers[0]), true, 'an API payer writes to a managed account');
    assert.equal(await mutableBy(managed, admin.address), false, 'another wallet does not');
    assert.equal(await mutableBy(keccakText('no such key'), payers[0]), false);
  } finally {
    provider.destroy();
  }
});

test('the OpenAPI document lists the compatibility names as aliases', async () => {
  const doc = assertOk(await stack.request('GET', 'openapi.json'));
  for (const path of ['/core/v1/lit_action', '/core/v1/get_lit_action_ipfs_id', '/core/v1/billing/stripe_config']) {
    assert.ok(doc.paths[path], path);
  }
  assert.match(doc.paths['/core/v1/lit_action'].post.summary, /alias of sigil_action/);
  assert.match(doc.paths['/core/v1/get_lit_action_ipfs_id'].post.summary, /alias of get_sigil_action_ipfs_id/);
  assert.ok(doc.components.schemas.Error.properties.message, 'the top-level message of every error body');
});
