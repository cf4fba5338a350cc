// The SDK against the real stack in API mode: a management round trip through every management
// method (account, usage keys, wallets, groups, actions, runs, listings, removal), the public
// endpoints, typed errors for a few codes, and a check that every route of the live openapi.json has
// a client method.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import {
  SigilClient, hashCid, apiKeyHash, ErrorCode, AuthenticationError, PermissionDeniedError, NotFoundError,
  InvalidRequestError, MalformedJsonError, UnavailableError, ConflictError,
} from '@sigil/sdk';
import { startStack, stackFetch } from './support.mjs';

let stack;
let fetch;
let client;

before(async () => {
  stack = await startStack();
  fetch = stackFetch(stack);
  client = new SigilClient({ baseUrl: `${stack.url}/core/v1`, fetch });
});
after(async () => { await stack?.stop(); });

const SIGN_CODE = 'async function main({ pkpId }) { return await Sigil.Actions.signMessage({ pkpId, message: "api mode" }); }';

test('public endpoints: version, health, chain config, payers, limits, openapi, CID helper, attestation', async () => {
  assert.deepEqual(Object.keys(await client.version()).sort(), ['api', 'service', 'version']);
  assert.equal((await client.health()).status, 'ok');
  const cfg = await client.getNodeChainConfig();
  assert.equal(cfg.chain_id, Number(stack.chainId));
  assert.equal(cfg.contract_address, stack.contract.toLowerCase());
  assert.deepEqual((await client.getApiPayers()).map((a) => a.toLowerCase()).sort(),
    stack.apiPayers.map((a) => a.toLowerCase()).sort());
  assert.equal((await client.getAdminApiPayer()).toLowerCase(), stack.adminPayer.toLowerCase());
  assert.equal(typeof (await client.getActionClientConfig()).timeout_ms, 'number');
  assert.equal((await client.getActionIpfsId('console.log("hello")')), 'QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL');
  assert.ok((await client.openApi()).paths);
  assert.equal((await client.index()).links.openapi, '/core/v1/openapi.json');
  // No TEE agent on the test stack: a typed 503.
  await assert.rejects(client.attestation(), (e) => e instanceof UnavailableError && e.status === 503 && e.code === 'attestation_unavailable');
  await assert.rejects(client.info(), (e) => e instanceof UnavailableError && e.code === 'attestation_unavailable');
});

const COMPAT_ALIASES = new Set(['/core/v1/lit_action', '/core/v1/get_lit_action_ipfs_id', '/core/v1/billing/stripe_config']);

test('every route of the live openapi.json has a client method', async () => {
  const methods = {
    '/core/v1/new_account': 'newAccount', '/core/v1/account_exists': 'accountExists',
    '/core/v1/add_usage_api_key': 'addUsageApiKey', '/core/v1/update_usage_api_key': 'updateUsageApiKey',
    '/core/v1/update_usage_api_key_metadata': 'updateUsageApiKeyMetadata', '/core/v1/remove_usage_api_key': 'removeUsageApiKey',
    '/core/v1/list_api_keys': 'listApiKeys', '/core/v1/create_wallet': 'createWallet',
    '/core/v1/add_pkp_to_group': 'addPkpToGroup', '/core/v1/remove_pkp_from_group': 'removePkpFromGroup',
    '/core/v1/list_wallets': 'listWallets', '/core/v1/list_wallets_in_group': 'listWalletsInGroup',
    '/core/v1/add_group': 'addGroup', '/core/v1/update_group': 'updateGroup', '/core/v1/remove_group': 'removeGroup',
    '/core/v1/list_groups': 'listGroups', '/core/v1/add_action': 'addAction', '/core/v1/update_action_metadata': 'updateActionMetadata',
    '/core/v1/delete_action': 'deleteAction', '/core/v1/add_action_to_group': 'addActionToGroup',
    '/core/v1/remove_action_from_group': 'removeActionFromGroup', '/core/v1/list_actions': 'listActions',
    '/core/v1/get_sigil_action_ipfs_id': 'getActionIpfsId', '/core/v1/get_node_chain_config': 'getNodeChainConfig',
    '/core/v1/get_api_payers': 'getApiPayers', '/core/v1/get_admin_api_payer': 'getAdminApiPayer',
    '/core/v1/openapi.json': 'openApi', '/core/v1/create_wallet_with_signature': 'createWalletWithSignature',
    '/core/v1/add_usage_api_key_with_signature': 'addUsageApiKeyWithSignature',
    '/core/v1/convert_to_chain_secured_account': 'convertToChainSecuredAccount', '/core/v1/sigil_action': 'runAction',
    '/core/v1/get_action_client_config': 'getActionClientConfig', '/health': 'health', '/core/v1/version': 'version',
    '/attestation': 'attestation', '/info': 'info', '/': 'index',
    '/core/v1/billing/payments_config': 'paymentsConfig', '/core/v1/billing/balance': 'balance',
    '/core/v1/billing/create_payment_intent': 'createPaymentIntent', '/core/v1/billing/confirm_payment': 'confirmPayment',
    '/core/v1/list_runs': 'listRuns', '/core/v1/get_run': 'getRun',
    '/core/v1/get_run_history_settings': 'getRunHistorySettings', '/core/v1/set_run_history_settings': 'setRunHistorySettings',
    '/core/v1/set_usage_api_key_guardrails': 'setUsageApiKeyGuardrails',
    '/core/v1/get_usage_api_key_guardrails': 'getUsageApiKeyGuardrails',
    '/core/v1/clear_usage_api_key_guardrails': 'clearUsageApiKeyGuardrails',
  };
  const { paths } = await client.openApi();
  for (const p of Object.keys(paths)) {
    const full = p.startsWith('/core/') || ['/', '/health', '/attestation', '/info'].includes(p) ? p : `/core/v1${p}`;
    if (full.startsWith('/core/v1/test/') || full.startsWith('/core/v1/swagger-ui')) continue;
    // The deployed implementation's names for the run and the CID helper (README "Coming from the
    // deployed implementation"): its clients call them; this SDK calls sigil_action and get_sigil_action_ipfs_id.
    if (COMPAT_ALIASES.has(full)) continue;
    assert.ok(methods[full], `a client method for ${full}`);
    assert.equal(typeof client[methods[full]], 'function', `${methods[full]} for ${full}`);
  }
});

test('management round trip with the master key and a usage key', async () => {
  const { api_key, wallet_address } = await client.newAccount({ account_name: 'sdk', account_description: 'round trip' });
  assert.match(wallet_address, /^0x[0-9a-f]{40}$/);
  const owner = client.withApiKey(api_key);
  assert.equal(await owner.accountExists(), true);

  // wallets and groups
  const pkp = await owner.createWallet({ name: 'pkp', description: 'round trip' });
  assert.match(pkp.derivation_path, /^0x[0-9a-f]{64}$/);
  const { group_id } = await owner.addGroup({ group_name: 'g', group_description: 'first' });
  assert.match(group_id, /^[1-9][0-9]*$/);
  await owner.addPkpToGroup({ group_id, pkp_id: pkp.wallet_address });
  const cid = await owner.getActionIpfsId(SIGN_CODE);
  await owner.addActionToGroup({ group_id, action_ipfs_cid: cid });
  const added = await owner.addAction({ action_ipfs_cid: cid, name: 'signer', description: 'signs' });
  assert.equal(added.hashed_cid, hashCid(cid));
  await owner.updateGroup({ group_id, name: 'g renamed', description: 'second' });
  const [group] = await owner.listGroups();
  assert.deepEqual(group, { id: group_id, name: 'g renamed', description: 'second',
    pkp_ids_permitted: [pkp.wallet_address], cid_hashes_permitted: [hashCid(cid)] });
  assert.deepEqual((await owner.listWallets()).map((x) => x.wallet_address), [pkp.wallet_address]);
  assert.deepEqual((await owner.listWalletsInGroup({ group_id })).map((x) => x.pkp_id), [pkp.wallet_address]);
  await owner.updateActionMetadata({ hashed_cid: hashCid(cid), name: 'signer 2', description: 'still signs' });
  const actions = await owner.listActions();
  assert.equal(actions.length, 1);
  assert.equal(actions[0].id, hashCid(cid));
  assert.equal(actions[0].name, 'signer 2');
  assert.equal((await owner.listActions({ group_id })).length, 1);

  // a usage key that may execute in the group, and a run with it
  const { usage_api_key } = await owner.addUsageApiKey({ name: 'runner', description: 'executes', execute_in_groups: [Number(group_id)] });
  const usage = owner.withApiKey(usage_api_key);
  const run = await usage.runAction({ code: SIGN_CODE, pkp_id: pkp.wallet_address, js_params: { pkpId: pkp.wallet_address } });
  assert.equal(run.has_error, false, JSON.stringify(run));
  assert.equal(ethers.verifyMessage('api mode', run.response), ethers.getAddress(pkp.wallet_address));
  // A run whose own code throws is a 200 with has_error (it ran), not a SigilError.
  const failed = await usage.runAction({ code: SIGN_CODE, js_params: {} });
  assert.equal(failed.has_error, true);
  let keys = await owner.listApiKeys({ page_number: 0, page_size: 10 });
  assert.deepEqual(keys.map((k) => [k.api_key_hash, k.name]), [[apiKeyHash(usage_api_key), 'runner']]);
  await owner.updateUsageApiKeyMetadata({ usage_api_key, name: 'runner 2', description: 'renamed' });
  await owner.updateUsageApiKey({ usage_api_key, execute_in_groups: [Number(group_id)], can_create_groups: true });
  keys = await owner.listApiKeys();
  assert.equal(keys[0].name, 'runner 2');
  assert.equal(keys[0].can_create_groups, true);

  // removal
  await owner.removeActionFromGroup({ group_id, hashed_cid: hashCid(cid) });
  await owner.removePkpFromGroup({ group_id, pkp_id: pkp.wallet_address });
  await owner.deleteAction(hashCid(cid));
  assert.deepEqual(await owner.listActions(), []);
  await owner.removeGroup(group_id);
  assert.deepEqual(await owner.listGroups(), []);
  await owner.removeUsageApiKey(usage_api_key);
  await assert.rejects(usage.listGroups(), (e) => e instanceof AuthenticationError && e.code === ErrorCode.INVALID_API_KEY);
  assert.equal(await usage.accountExists(), false);
});

test('typed errors: missing key, missing scope, owner only, unknown group, bad page size, malformed JSON, conflict', async () => {
  await assert.rejects(client.listGroups(), (e) => e instanceof AuthenticationError && e.status === 401 && e.code === ErrorCode.MISSING_API_KEY);
  const { api_key } = await client.newAccount();
  const owner = client.withApiKey(api_key);
  const { usage_api_key } = await owner.addUsageApiKey({ name: 'weak' });
  const weak = owner.withApiKey(usage_api_key);
  await assert.rejects(weak.addGroup({ group_name: 'no' }),
    (e) => e instanceof PermissionDeniedError && e.status === 403 && e.code === ErrorCode.MISSING_SCOPE);
  await assert.rejects(weak.addUsageApiKey({ name: 'no' }), (e) => e instanceof PermissionDeniedError && e.code === ErrorCode.OWNER_ONLY);
  await assert.rejects(owner.removeGroup('999'), (e) => e instanceof NotFoundError && e.status === 404 && e.code === ErrorCode.UNKNOWN_GROUP);
  await assert.rejects(owner.listGroups({ page_size: 1000 }), (e) => e instanceof InvalidRequestError && e.code === 'invalid_page_size');
  await assert.rejects(owner.request('POST', 'add_group', { rawBody: '{"group_name":' }),
    (e) => e instanceof MalformedJsonError && e.status === 422);
  const { group_id } = await owner.addGroup({ group_name: 'same' });
  await assert.rejects(owner.updateGroup({ group_id, name: 'same', description: '' }),
    (e) => e instanceof ConflictError && e.code === ErrorCode.NOTHING_TO_CHANGE);
});
