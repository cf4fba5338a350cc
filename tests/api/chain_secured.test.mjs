// ChainSecured mode end to end (spec "ChainSecured endpoints", Authentication rules 4-10, DESIGN.md
// sections 3-4): accounts created by their wallet on chain, the EIP-712 signature endpoints, the
// conversion of an API-mode account, and the worker's own checks (PKP address, key expiration).
// Every signature is made by ethers v6 (signTypedData), never by our code. Each refusal also proves
// that nothing changed: keyd minted and derived nothing (its request log), no wallet appeared, the
// account kept its mode and admin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startStack, ethers, assertError, assertOk, assertSuccess, keccakText, accountConfigAbi, eventually, newAccount,
  addUsageKey, addGroup, createWallet, ADDRESS, HASH32,
} from './stack.mjs';

// keyd logs one "request <name>" line per request at debug level: the witness that a refused
// request derived nothing.
process.env.SIGIL_LOG_LEVEL = 'debug';

let stack;
let provider;
let admin;        // the wallet-created ChainSecured account's admin
let c;            // AccountConfig as that admin
let accountHash;  // keccak256 of admin's 20-byte address
let chainId;

before(async () => {
  stack = await startStack();
  chainId = Number(stack.chainId);
  provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  admin = await fundedWallet();
  c = new ethers.Contract(stack.contract, accountConfigAbi(), admin);
  await (await c.newChainSecuredAccount()).wait();
  accountHash = BigInt(ethers.keccak256(admin.address));
});
after(async () => { provider?.destroy(); await stack?.stop(); });

const req = (...a) => stack.request(...a);
const send = async (p) => (await p).wait();
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function fundedWallet() {
  const w = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [w.address, '0x8ac7230489e80000']); // 10 ETH
  return w;
}

// ---- the EIP-712 envelope, built and signed with ethers ----

const DOMAIN_TYPES = [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }];
const MESSAGE_TYPES = [{ name: 'address', type: 'address' }, { name: 'issuedAt', type: 'uint256' }];

/// {typed_data, signature} for `primaryType`, signed by `signer` with ethers. Overrides: issuedAt,
/// chainId, address (message.address), domain / messageTypes / message (what is signed AND sent),
/// domainTypes (sent only: ethers derives the domain types itself).
async function envelope(signer, primaryType, o = {}) {
  const domain = o.domain ?? { name: 'Sigil ChainSecured', version: '1', chainId: o.chainId ?? chainId };
  const messageTypes = o.messageTypes ?? MESSAGE_TYPES;
  const message = o.message ?? { address: o.address ?? signer.address, issuedAt: o.issuedAt ?? nowSeconds() };
  const signature = await signer.signTypedData(domain, { [primaryType]: messageTypes }, message);
  const typed_data = {
    types: { EIP712Domain: o.domainTypes ?? DOMAIN_TYPES, [primaryType]: messageTypes },
    primaryType, domain, message,
  };
  return { typed_data, signature };
}

// ---- witnesses of "nothing changed" ----

function keydRequests(name) {
  const log = readFileSync(join(stack.logs, 'keyd.log'), 'utf8');
  return log.split('\n').filter((l) => l.includes(`request ${name}`)).length;
}
const keydMints = () => ({ mint: keydRequests('mint_path'), derive: keydRequests('get_pkp_public') });

/// Runs `fn` (which must be refused) and asserts keyd minted and derived nothing and the account's
/// wallets did not change.
/// keyd's counts once its log is quiet: lines travel through a pipe to the file, so a request of
/// the previous test may land a moment late.
async function settledMints() {
  let last = keydMints();
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = keydMints();
    if (now.mint === last.mint && now.derive === last.derive) return now;
    last = now;
  }
}

async function assertNothingMinted(fn, hash = accountHash) {
  const before = await settledMints();
  const wallets = await c.walletCount(hash);
  await fn();
  assert.deepEqual(await settledMints(), before, 'keyd minted or derived nothing');
  assert.equal(await c.walletCount(hash), wallets, 'no wallet was registered');
}

const CREATE = 'create_wallet_with_signature';
const ADD_KEY = 'add_usage_api_key_with_signature';
const CONVERT = 'convert_to_chain_secured_account';

// ---- the flows end to end ----

const SIGN_CODE = 'async function main({ pkpId }) { return await Sigil.Actions.signMessage({ pkpId, message: "chain secured" }); }';
const flow = {};

test('keyd request log is visible (the witness the negative tests rely on)', async () => {
  const before = await settledMints();
  const legacy = await newAccount(stack, 'witness');
  await createWallet(stack, legacy.api_key);
  const after = await settledMints();
  assert.equal(after.mint, before.mint + 1, 'a create_wallet shows as one mint_path in keyd.log');
  assert.equal(after.derive, before.derive + 1);
});

test('create_wallet_with_signature mints a PKP for the signer\'s account; the admin wallet registers it', async () => {
  const before = keydMints();
  const r = await req('POST', CREATE, { body: await envelope(admin, 'CreateWallet') });
  const j = assertOk(r, CREATE);
  assert.deepEqual(Object.keys(j).sort(), ['derivation_path', 'wallet_address']);
  assert.match(j.wallet_address, ADDRESS);
  assert.match(j.derivation_path, HASH32);
  assert.equal(keydMints().mint, before.mint + 1);
  // Until registered it belongs to no account.
  const [owner] = await c.getWallet(j.wallet_address);
  assert.equal(owner, 0n);
  await send(c.registerWalletDerivation(accountHash, j.wallet_address, BigInt(j.derivation_path), 'signed pkp', 'minted with a signature'));
  flow.pkp = j.wallet_address.toLowerCase();
  flow.cid = assertOk(await req('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(SIGN_CODE) }));
  await send(c.addGroup(accountHash, 0, 'signed group', 'pkp + action', [flow.pkp], [keccakText(flow.cid)]));
  flow.group = 1n;
});

test('add_usage_api_key_with_signature mints a key; registered from the admin wallet it runs an action that signs with the PKP', async () => {
  const r = await req('POST', ADD_KEY, { body: await envelope(admin, 'AddUsageApiKey') });
  const j = assertOk(r, ADD_KEY);
  assert.deepEqual(Object.keys(j).sort(), ['derivation_path', 'usage_api_key', 'wallet_address']);
  assert.equal(Buffer.from(j.usage_api_key, 'base64').length, 32);
  assert.match(j.wallet_address, ADDRESS);
  assert.match(j.derivation_path, HASH32);
  // Not on chain yet: the key is nothing.
  assertError(await req('GET', 'list_groups', { key: j.usage_api_key }), 401, 'invalid_api_key');
  await send(c.registerWalletDerivation(accountHash, j.wallet_address, BigInt(j.derivation_path), 'usage key wallet', ''));
  await send(c.setUsageApiKey(accountHash, keccakText(j.usage_api_key), 0, 0, 'signed key', 'via signature',
    false, false, false, [], [], [], [flow.group]));
  flow.key = j.usage_api_key;
  let run;
  const ok = await eventually(async () => {
    run = await req('POST', 'sigil_action', { key: flow.key, body: { code: SIGN_CODE, pkp_id: flow.pkp, js_params: { pkpId: flow.pkp } } });
    return run.status === 200 && run.json?.has_error === false;
  }, 5000, 100);
  assert.ok(ok, `run -> ${run.status} ${run.text.slice(0, 300)}`);
  assert.equal(ethers.verifyMessage('chain secured', run.json.response), ethers.getAddress(flow.pkp));
  const wallets = assertOk(await req('GET', 'list_wallets', { key: flow.key }));
  assert.equal(wallets.length, 2);
});

test('a replayed signature within the window mints again (one more unattached path), as the spec accepts', async () => {
  const env = await envelope(admin, 'CreateWallet', { issuedAt: nowSeconds() - 250 });
  const a = assertOk(await req('POST', CREATE, { body: env }));
  const b = assertOk(await req('POST', CREATE, { body: env }));
  assert.notEqual(a.derivation_path, b.derivation_path);
  assert.notEqual(a.wallet_address, b.wallet_address);
});

test('typed_data may also be sent as the JSON string eth_signTypedData_v4 takes', async () => {
  const env = await envelope(admin, 'CreateWallet');
  assertOk(await req('POST', CREATE, { body: { typed_data: JSON.stringify(env.typed_data), signature: env.signature } }));
});

// ---- the negative matrix: one test per row, each proving nothing was minted ----

async function refused(path, body, status, code) {
  await assertNothingMinted(async () => assertError(await req('POST', path, { body }), status, code, path));
}

test('typed data over 4 KiB serialized: 400 typed_data_too_large', async () => {
  const env = await envelope(admin, 'CreateWallet');
  env.typed_data.domain.name = 'x'.repeat(4200);
  await refused(CREATE, env, 400, 'typed_data_too_large');
  await refused(ADD_KEY, env, 400, 'typed_data_too_large');
});

test('a message field added (signed by ethers): typed_data_schema_mismatch', async () => {
  const env = await envelope(admin, 'CreateWallet', {
    messageTypes: [...MESSAGE_TYPES, { name: 'extra', type: 'string' }],
    message: { address: admin.address, issuedAt: nowSeconds(), extra: 'x' },
  });
  await refused(CREATE, env, 400, 'typed_data_schema_mismatch');
});

test('a message field removed (signed by ethers): typed_data_schema_mismatch', async () => {
  const env = await envelope(admin, 'AddUsageApiKey', {
    messageTypes: [{ name: 'address', type: 'address' }], message: { address: admin.address },
  });
  await refused(ADD_KEY, env, 400, 'typed_data_schema_mismatch');
});

test('a message field renamed (signed by ethers): typed_data_schema_mismatch', async () => {
  const env = await envelope(admin, 'CreateWallet', {
    messageTypes: [{ name: 'address', type: 'address' }, { name: 'issued_at', type: 'uint256' }],
    message: { address: admin.address, issued_at: nowSeconds() },
  });
  await refused(CREATE, env, 400, 'typed_data_schema_mismatch');
});

test('a message field retyped (signed by ethers): typed_data_schema_mismatch', async () => {
  const env = await envelope(admin, 'CreateWallet', {
    messageTypes: [{ name: 'address', type: 'address' }, { name: 'issuedAt', type: 'uint64' }],
  });
  await refused(CREATE, env, 400, 'typed_data_schema_mismatch');
});

test('message fields reordered (signed by ethers): typed_data_schema_mismatch', async () => {
  const env = await envelope(admin, 'AddUsageApiKey', {
    messageTypes: [{ name: 'issuedAt', type: 'uint256' }, { name: 'address', type: 'address' }],
  });
  await refused(ADD_KEY, env, 400, 'typed_data_schema_mismatch');
});

test('a domain field added (verifyingContract, signed by ethers): typed_data_schema_mismatch', async () => {
  const env = await envelope(admin, 'CreateWallet', {
    domain: { name: 'Sigil ChainSecured', version: '1', chainId, verifyingContract: stack.contract },
    domainTypes: [...DOMAIN_TYPES, { name: 'verifyingContract', type: 'address' }],
  });
  await refused(CREATE, env, 400, 'typed_data_schema_mismatch');
});

test('a domain field removed (version, signed by ethers): typed_data_schema_mismatch', async () => {
  const env = await envelope(admin, 'CreateWallet', {
    domain: { name: 'Sigil ChainSecured', chainId },
    domainTypes: [DOMAIN_TYPES[0], DOMAIN_TYPES[2]],
  });
  await refused(CREATE, env, 400, 'typed_data_schema_mismatch');
});

test('domain types renamed, retyped or reordered: typed_data_schema_mismatch', async () => {
  for (const domainTypes of [
    [DOMAIN_TYPES[1], DOMAIN_TYPES[0], DOMAIN_TYPES[2]],
    [DOMAIN_TYPES[0], DOMAIN_TYPES[1], { name: 'chainId', type: 'uint64' }],
    [DOMAIN_TYPES[0], DOMAIN_TYPES[1], { name: 'chain_id', type: 'uint256' }],
  ]) {
    const env = await envelope(admin, 'CreateWallet', { domainTypes });
    await refused(CREATE, env, 400, 'typed_data_schema_mismatch');
  }
});

test('an extra member in the document or in the message value: typed_data_schema_mismatch', async () => {
  const env = await envelope(admin, 'CreateWallet');
  await refused(CREATE, { ...env, typed_data: { ...env.typed_data, extra: 1 } }, 400, 'typed_data_schema_mismatch');
  await refused(CREATE, { ...env, typed_data: { ...env.typed_data, message: { ...env.typed_data.message, x: 1 } } },
    400, 'typed_data_schema_mismatch');
});

test('wrong primaryType: another flow\'s signature is refused by every other endpoint', async () => {
  for (const [path, other] of [[CREATE, 'AddUsageApiKey'], [CREATE, 'ConvertAccount'], [ADD_KEY, 'CreateWallet'],
    [ADD_KEY, 'BillingAuth']]) {
    await refused(path, await envelope(admin, other), 400, 'wrong_primary_type');
  }
});

test('wrong chainId: wrong_chain_id', async () => {
  await refused(CREATE, await envelope(admin, 'CreateWallet', { chainId: chainId + 1 }), 400, 'wrong_chain_id');
  await refused(ADD_KEY, await envelope(admin, 'AddUsageApiKey', { chainId: 1 }), 400, 'wrong_chain_id');
});

test('wrong domain name or version: wrong_domain', async () => {
  await refused(CREATE, await envelope(admin, 'CreateWallet', { domain: { name: 'Lit ChainSecured', version: '1', chainId } }),
    400, 'wrong_domain');
  await refused(CREATE, await envelope(admin, 'CreateWallet', { domain: { name: 'Sigil ChainSecured', version: '2', chainId } }),
    400, 'wrong_domain');
});

test('issuedAt just outside +-300 s: issued_at_out_of_window', async () => {
  await refused(CREATE, await envelope(admin, 'CreateWallet', { issuedAt: nowSeconds() - 302 }), 401, 'issued_at_out_of_window');
  await refused(ADD_KEY, await envelope(admin, 'AddUsageApiKey', { issuedAt: nowSeconds() + 302 }), 401, 'issued_at_out_of_window');
  await refused(CREATE, await envelope(admin, 'CreateWallet', { issuedAt: 0 }), 401, 'issued_at_out_of_window');
});

test('wrong signer: a signature that does not recover to message.address is signature_mismatch', async () => {
  const mallory = ethers.Wallet.createRandom();
  await refused(CREATE, await envelope(mallory, 'CreateWallet', { address: admin.address }), 401, 'signature_mismatch');
  await refused(ADD_KEY, await envelope(mallory, 'AddUsageApiKey', { address: admin.address }), 401, 'signature_mismatch');
  // A valid signature over different bytes (the issuedAt changed after signing).
  const env = await envelope(admin, 'CreateWallet');
  env.typed_data.message.issuedAt -= 1;
  await refused(CREATE, env, 401, 'signature_mismatch');
});

test('a signer that administers no account: 404 unknown_account, nothing minted', async () => {
  const stranger = ethers.Wallet.createRandom();
  await refused(CREATE, await envelope(stranger, 'CreateWallet'), 404, 'unknown_account');
  await refused(ADD_KEY, await envelope(stranger, 'AddUsageApiKey'), 404, 'unknown_account');
});

test('malformed hex and lengths: signature and address', async () => {
  const env = await envelope(admin, 'CreateWallet');
  for (const signature of ['0x' + 'zz'.repeat(65), env.signature.slice(0, -2), env.signature + '00', env.signature.slice(2), '', 'x'.repeat(300)]) {
    await refused(CREATE, { ...env, signature }, 400, 'invalid_signature');
  }
  await refused(CREATE, { ...env, signature: 12 }, 400, 'invalid_signature');
  const badAddress = structuredClone(env.typed_data);
  badAddress.message.address = '0x1234';
  await refused(CREATE, { typed_data: badAddress, signature: env.signature }, 400, 'invalid_typed_data');
  const badIssued = structuredClone(env.typed_data);
  badIssued.message.issuedAt = 'soon';
  await refused(CREATE, { typed_data: badIssued, signature: env.signature }, 400, 'invalid_typed_data');
});

test('missing or mistyped envelope members: 400, never a 500', async () => {
  const env = await envelope(admin, 'CreateWallet');
  await refused(CREATE, { signature: env.signature }, 400, 'missing_typed_data');
  await refused(CREATE, { typed_data: env.typed_data }, 400, 'missing_signature');
  await refused(CREATE, { typed_data: 7, signature: env.signature }, 400, 'invalid_typed_data');
  await refused(CREATE, { typed_data: '{not json', signature: env.signature }, 400, 'invalid_typed_data');
  await refused(CREATE, { typed_data: [], signature: env.signature }, 400, 'invalid_typed_data');
  await assertNothingMinted(async () => assertError(await req('POST', CREATE, { body: [] }), 400));
});

test('a contract-wallet (ERC-1271) signature is not validated: only plain ECDSA recovery (rule 8)', async () => {
  // message.address is a contract (AccountConfig itself stands in for a multisig); its "owner" signs.
  const env = await envelope(admin, 'CreateWallet', { address: stack.contract });
  await refused(CREATE, env, 401, 'signature_mismatch');
  // A Safe-style signature (two concatenated owner signatures) is not 65 bytes.
  const second = await envelope(ethers.Wallet.createRandom(), 'CreateWallet', { address: stack.contract });
  await refused(CREATE, { typed_data: env.typed_data, signature: env.signature + second.signature.slice(2) }, 400, 'invalid_signature');
});

test('openapi.json documents the three ChainSecured endpoints with their bodies and answers', async () => {
  const openapi = assertOk(await req('GET', 'openapi.json'));
  const find = (p) => openapi.paths[p] ?? openapi.paths[`/core/v1${p}`];
  for (const [p, required, answer] of [
    ['/create_wallet_with_signature', ['typed_data', 'signature'], ['wallet_address', 'derivation_path']],
    ['/add_usage_api_key_with_signature', ['typed_data', 'signature'], ['usage_api_key', 'wallet_address', 'derivation_path']],
    ['/convert_to_chain_secured_account', ['new_admin_wallet_address', 'typed_data', 'signature'], ['success', 'api_key_hash']],
  ]) {
    const op = find(p)?.post;
    assert.ok(op, `openapi lists POST ${p}`);
    const text = JSON.stringify(op);
    for (const f of [...required, ...answer]) assert.ok(text.includes(`"${f}"`), `${p} documents ${f}`);
    // Only the conversion takes an API key (the master key); the other two take none (rule 2).
    assert.equal((op.security ?? []).length > 0, p === '/convert_to_chain_secured_account', `${p} security`);
  }
});

// ---- the worker's own checks ----

test('a PKP whose registered address is not the one derived for (account, path) is refused: pkp_key_mismatch', async () => {
  // The admin registers a foreign EOA under a real minted path, lists it with the action.
  const minted = assertOk(await req('POST', CREATE, { body: await envelope(admin, 'CreateWallet') }));
  const foreign = ethers.Wallet.createRandom().address.toLowerCase();
  await send(c.registerWalletDerivation(accountHash, foreign, BigInt(minted.derivation_path), 'foreign', 'not derived'));
  await send(c.updateGroup(accountHash, 0, flow.group, 'signed group', 'pkp + action', [flow.pkp, foreign], [keccakText(flow.cid)]));
  let run;
  const ok = await eventually(async () => {
    run = await req('POST', 'sigil_action', { key: flow.key, body: { code: SIGN_CODE, pkp_id: foreign, js_params: { pkpId: foreign } } });
    return run.status === 200 && run.json?.has_error === true;
  }, 5000, 100);
  assert.ok(ok, `run -> ${run.status} ${run.text.slice(0, 300)}`);
  assert.match(JSON.stringify(run.json.error), /pkp_key_mismatch|not the address derived/);
  assert.ok(!run.json.response, 'no signature came back');
  // The honest PKP of the same group still signs.
  const good = await req('POST', 'sigil_action', { key: flow.key, body: { code: SIGN_CODE, pkp_id: flow.pkp, js_params: { pkpId: flow.pkp } } });
  assert.equal(good.json?.has_error, false, good.text.slice(0, 300));
});

test('key expiration is checked against the worker\'s clock, not only block.timestamp', async () => {
  const key = Buffer.from(ethers.randomBytes(32)).toString('base64');
  const expiration = nowSeconds() + 4;
  await send(c.setUsageApiKey(accountHash, keccakText(key), expiration, 0, 'short lived', '', false, false, false, [], [], [], [flow.group]));
  assert.ok(assertOk(await eventually(async () => {
    const r = await req('GET', 'list_groups', { key });
    return r.status === 200 ? r : null;
  }, 5000, 100)));
  await new Promise((r) => setTimeout(r, (expiration - nowSeconds() + 1) * 1000));
  // No block was mined since: the chain alone would still accept the key.
  const latest = await provider.getBlock('latest');
  assert.ok(latest.timestamp < expiration, `latest block ${latest.timestamp} before expiration ${expiration}`);
  assertError(await req('GET', 'list_groups', { key }), 401, 'invalid_api_key');
  const run = await req('POST', 'sigil_action', { key, body: { code: SIGN_CODE, pkp_id: flow.pkp, js_params: { pkpId: flow.pkp } } });
  assertError(run, 401, 'invalid_api_key');
});

// ---- conversion of an API-mode account ----

const conv = {};

test('conversion setup: an API-mode account with a group, a PKP, an action and a usage key', async () => {
  conv.master = (await newAccount(stack, 'to convert')).api_key;
  conv.hash = keccakText(conv.master);
  conv.group = await addGroup(stack, conv.master, 'kept');
  conv.pkp = (await createWallet(stack, conv.master)).toLowerCase();
  assertOk(await req('POST', 'add_pkp_to_group', { key: conv.master, body: { group_id: conv.group, pkp_id: conv.pkp } }));
  assertOk(await req('POST', 'add_action_to_group', { key: conv.master, body: { group_id: conv.group, action_ipfs_cid: flow.cid } }));
  assertSuccess(await req('POST', 'add_action', { key: conv.master, body: { action_ipfs_cid: flow.cid, name: 'signer', description: 'kept' } }));
  conv.usage = await addUsageKey(stack, conv.master, { execute_in_groups: [Number(conv.group)], can_create_groups: true });
  conv.newAdmin = await fundedWallet();
});

async function assertStillManaged() {
  const [adminAddr, managed] = await c.getAccount(conv.hash);
  assert.equal(managed, true, 'account still managed');
  assert.notEqual(adminAddr, conv.newAdmin.address);
  assert.equal((await req('GET', 'account_exists', { key: conv.master })).json, true, 'master key still valid');
}

// key null: no API key header at all.
async function convRefused(body, status, code, key = conv.master) {
  assertError(await req('POST', CONVERT, key === null ? { body } : { key, body }), status, code, CONVERT);
  await assertStillManaged();
}

const convBody = async (signer, o = {}, primaryType = 'ConvertAccount') => ({
  new_admin_wallet_address: o.newAdmin ?? conv.newAdmin.address,
  ...(await envelope(signer, primaryType, o)),
});

test('conversion refusals (rule 7), each leaving the account managed', async () => {
  const other = ethers.Wallet.createRandom();
  await convRefused(await convBody(conv.newAdmin), 401, 'missing_api_key', null);
  await convRefused(await convBody(conv.newAdmin), 403, 'owner_only', conv.usage);
  await convRefused(await convBody(conv.newAdmin, {}, 'CreateWallet'), 400, 'wrong_primary_type');
  await convRefused(await convBody(conv.newAdmin, { chainId: chainId + 1 }), 400, 'wrong_chain_id');
  await convRefused(await convBody(conv.newAdmin, { issuedAt: nowSeconds() - 301 - 1 }), 401, 'issued_at_out_of_window');
  await convRefused(await convBody(conv.newAdmin, { issuedAt: nowSeconds() + 302 }), 401, 'issued_at_out_of_window');
  // Signed by someone else for new_admin's address.
  await convRefused(await convBody(other, { address: conv.newAdmin.address }), 401, 'signature_mismatch');
  // A valid signature of another wallet: the signer is not new_admin_wallet_address.
  await convRefused(await convBody(other), 401, 'signer_mismatch');
  const big = await convBody(conv.newAdmin);
  big.typed_data.domain.name = 'y'.repeat(5000);
  await convRefused(big, 400, 'typed_data_too_large');
  await convRefused({ ...(await convBody(conv.newAdmin)), new_admin_wallet_address: '0x12' }, 400, 'invalid_new_admin_wallet_address');
  await convRefused({ ...(await convBody(conv.newAdmin)), signature: '0x00' }, 400, 'invalid_signature');
  // The admin of another account cannot become this one's admin.
  await convRefused(await convBody(admin, { newAdmin: admin.address }), 409, 'admin_taken');
});

test('conversion: the payer converts; api_key_hash kept; resources kept; usage keys execute; old master key refused', async () => {
  const r = await req('POST', CONVERT, { key: conv.master, body: await convBody(conv.newAdmin) });
  const j = assertSuccess(r, CONVERT);
  assert.deepEqual(Object.keys(j).sort(), ['api_key_hash', 'success']);
  assert.equal(j.api_key_hash, conv.hash);
  const [adminAddr, managed, exists] = await c.getAccount(conv.hash);
  assert.equal(adminAddr, conv.newAdmin.address);
  assert.equal(managed, false);
  assert.equal(exists, true);
  // The old master key authorizes nothing any more.
  assertError(await req('POST', 'add_group', {
    key: conv.master, body: { group_name: 'no', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 401, 'invalid_api_key');
  assertError(await req('POST', 'add_usage_api_key', { key: conv.master, body: { name: 'no' } }), 401, 'invalid_api_key');
  // ...and the contract refuses the payer's relay for it too (rule 5).
  const asPayer = new ethers.Contract(stack.contract, accountConfigAbi(), provider);
  await assert.rejects(asPayer.addGroup.staticCall(conv.hash, conv.hash, 'relay', '', [], [], { from: stack.apiPayers[0] }),
    (e) => e.revert?.name === 'NotManaged');
  // Resources kept, visible to the usage key.
  const groups = assertOk(await req('GET', 'list_groups', { key: conv.usage }));
  assert.equal(groups.length, 1);
  assert.equal(groups[0].name, 'kept');
  const wallets = assertOk(await req('GET', 'list_wallets', { key: conv.usage }));
  assert.deepEqual(wallets.map((w) => w.wallet_address.toLowerCase()), [conv.pkp]);
  const actions = assertOk(await req('GET', 'list_actions', { key: conv.usage }));
  assert.equal(actions.length, 1);
  assert.equal(actions[0].id, keccakText(flow.cid));
  const keys = assertOk(await req('GET', 'list_api_keys', { key: conv.usage }));
  assert.equal(keys.length, 1);
  // The usage key still executes with the kept PKP.
  const run = await req('POST', 'sigil_action', { key: conv.usage, body: { code: SIGN_CODE, pkp_id: conv.pkp, js_params: { pkpId: conv.pkp } } });
  assert.equal(run.json?.has_error, false, run.text.slice(0, 300));
  assert.equal(ethers.verifyMessage('chain secured', run.json.response), ethers.getAddress(conv.pkp));
  // Relayed writes by usage keys are refused now (the contract: the account is unmanaged).
  assertError(await req('POST', 'add_group', {
    key: conv.usage, body: { group_name: 'relayed', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 403, 'not_managed');
  // The new admin now uses the signature endpoints for this account.
  const minted = assertOk(await req('POST', CREATE, { body: await envelope(conv.newAdmin, 'CreateWallet') }));
  const c2 = new ethers.Contract(stack.contract, accountConfigAbi(), conv.newAdmin);
  await send(c2.registerWalletDerivation(BigInt(conv.hash), minted.wallet_address, BigInt(minted.derivation_path), 'after', ''));
  assert.equal(await c2.walletCount(BigInt(conv.hash)), 2n);
});

test('a second conversion is refused: over HTTP (the master key is dead) and on chain (AlreadyUnmanaged)', async () => {
  const again = await ethers.Wallet.createRandom();
  assertError(await req('POST', CONVERT, { key: conv.master, body: await convBody(again, { newAdmin: again.address }) }),
    401, 'invalid_api_key');
  const c2 = new ethers.Contract(stack.contract, accountConfigAbi(), conv.newAdmin);
  await assert.rejects(c2.convertToChainSecuredAccount.staticCall(BigInt(conv.hash), again.address),
    (e) => e.revert?.name === 'AlreadyUnmanaged');
  const [adminAddr, managed] = await c.getAccount(conv.hash);
  assert.equal(adminAddr, conv.newAdmin.address);
  assert.equal(managed, false);
});

test('the old master key is also refused after an accepted ownership transfer', async () => {
  const master = (await newAccount(stack, 'transfer')).api_key;
  const hash = BigInt(keccakText(master));
  const oldOwner = new ethers.Wallet(ethers.hexlify(Buffer.from(master, 'base64')), provider);
  await provider.send('anvil_setBalance', [oldOwner.address, '0x8ac7230489e80000']);
  const next = await fundedWallet();
  await send(new ethers.Contract(stack.contract, accountConfigAbi(), oldOwner).transferOwnership(next.address));
  // Proposed only: the master key still works.
  await addGroup(stack, master, 'before accept');
  await send(new ethers.Contract(stack.contract, accountConfigAbi(), next).acceptOwnership(hash));
  assertError(await req('POST', 'add_group', {
    key: master, body: { group_name: 'after', group_description: '', pkp_ids_permitted: [], cid_hashes_permitted: [] },
  }), 401, 'invalid_api_key');
  assertError(await req('POST', CONVERT, { key: master, body: await convBody(next, { newAdmin: next.address }) }), 401, 'invalid_api_key');
});

// keyd checks what it can (keyd/protocol.md, "What keyd checks"): the test speaks to keyd's socket as a
// compromised worker would (same uid), with SIGN_PAYER_TX frames built here byte by byte.
function keydFrame(type, fields) {
  const parts = [Buffer.from([type])];
  for (const f of fields) {
    const h = Buffer.alloc(4);
    h.writeUInt32BE(f.length);
    parts.push(h, f);
  }
  const payload = Buffer.concat(parts);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(payload.length);
  return Buffer.concat([len, payload]);
}
const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(v)); return b; };

// One SIGN_PAYER_TX; answers 'signed' or the FAILURE code.
async function askKeyd({ data, apiKey = '', consent = null }) {
  const { createConnection } = await import('node:net');
  const frame = keydFrame(0x08, [u64(0), u64(chainId), u64(0), u64(1_000_000_000), u64(2_000_000_000), u64(300_000),
    Buffer.from(stack.contract.slice(2), 'hex'), Buffer.from(data.slice(2), 'hex'), Buffer.from(apiKey),
    u64(consent?.issuedAt ?? 0), consent ? Buffer.from(consent.signature.slice(2), 'hex') : Buffer.alloc(0)]);
  return new Promise((resolve, reject) => {
    const sock = createConnection(stack.keydSocket);
    let got = Buffer.alloc(0);
    sock.on('error', reject);
    sock.on('data', (chunk) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < 4 || got.length < 4 + got.readUInt32BE(0)) return;
      sock.destroy();
      const type = got[4];
      resolve(type === 0x87 ? 'signed' : type === 0x80 ? `failure ${got[9]}` : `type ${type}`);
    });
    sock.write(frame);
  });
}

test('keyd signs a relayed write only for the API key sent with it, and a conversion only with the new admin\'s consent', async () => {
  const iface = new ethers.Interface(accountConfigAbi());
  const keyA = 'a key the worker was shown';
  const hashA = keccakText(keyA);
  const removeGroup = iface.encodeFunctionData('removeGroup', [hashA, hashA, 1]);
  assert.equal(await askKeyd({ data: removeGroup, apiKey: keyA }), 'signed');
  // A call naming a key hash the worker never saw the key of (it can read hashes on chain): refused (4).
  assert.equal(await askKeyd({ data: removeGroup, apiKey: 'another key' }), 'failure 4');
  assert.equal(await askKeyd({ data: removeGroup }), 'failure 4');
  // Not a relayed write at all (the direct-path form): refused whatever key comes with it.
  assert.equal(await askKeyd({ data: iface.encodeFunctionData('transferOwnership', [ethers.Wallet.createRandom().address]), apiKey: keyA }), 'failure 4');

  // Conversion: the consent is the new admin's own ConvertAccount signature (ethers signs it here).
  const newAdmin = ethers.Wallet.createRandom();
  const convert = iface.encodeFunctionData('convertToChainSecuredAccount', [hashA, newAdmin.address]);
  const consentOf = async (signer, address = signer.address, issuedAt = nowSeconds()) => ({
    issuedAt,
    signature: await signer.signTypedData({ name: 'Sigil ChainSecured', version: '1', chainId },
      { ConvertAccount: [{ name: 'address', type: 'address' }, { name: 'issuedAt', type: 'uint256' }] },
      { address, issuedAt }),
  });
  assert.equal(await askKeyd({ data: convert, apiKey: keyA }), 'failure 4');
  assert.equal(await askKeyd({ data: convert, apiKey: keyA, consent: await consentOf(ethers.Wallet.createRandom()) }), 'failure 4');
  // A captured signature of another wallet never names this one; nor does a stale one.
  assert.equal(await askKeyd({ data: convert, apiKey: keyA, consent: await consentOf(ethers.Wallet.createRandom(), newAdmin.address) }), 'failure 4');
  assert.equal(await askKeyd({ data: convert, apiKey: keyA, consent: await consentOf(newAdmin, newAdmin.address, nowSeconds() - 400) }), 'failure 4');
  assert.equal(await askKeyd({ data: convert, apiKey: keyA, consent: await consentOf(newAdmin) }), 'signed');
  assert.equal(await askKeyd({ data: convert, apiKey: 'another key', consent: await consentOf(newAdmin) }), 'failure 4');
});
