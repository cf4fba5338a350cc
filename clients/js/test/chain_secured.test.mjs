// The SDK against the real stack (anvil, keyd, supervisor, nginx): the README's ChainSecured
// walkthrough end to end, conversion refused from a ChainSecured client, typed errors of the
// signature endpoints and of direct-path reverts, and the two-step ownership transfer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import {
  SigilClient, ChainSecuredAccount, AccountConfig, Mode, ErrorCode, ClientError, AuthenticationError, InvalidRequestError,
  NotFoundError, ConflictError, PermissionDeniedError, signTypedData, apiKeyHash, chainSecuredAccountHash, masterKeyWallet,
} from '@sigil/sdk';
import { walkthrough } from '../examples/chain_secured_walkthrough.mjs';
import { startStack, stackFetch, stackProvider, fundedWallet } from './support.mjs';

const here = dirname(fileURLToPath(import.meta.url));

let stack;
let fetch;
let provider;
let sent = 0;       // requests that reached the service
let w;              // the walkthrough's results
let admin;
let newAdmin;

before(async () => {
  // scripts/start's billing (the chain processor, a starter credit of 1000): the walkthrough buys the
  // credits its ChainSecured account's run needs, as a user of scripts/start must.
  stack = await startStack({ billing: { lines: ['starter_credit_cents = 1000', 'starter_credit_budget_cents = 100000000'] } });
  const inner = stackFetch(stack);
  fetch = (url, init) => { sent += 1; return inner(url, init); };
  provider = stackProvider(stack);
  admin = await fundedWallet(provider);
  newAdmin = await fundedWallet(provider);
});
after(async () => { provider?.destroy(); await stack?.stop(); });

const client = () => new SigilClient({ baseUrl: stack.url, fetch });

test('README: the walkthrough block is exactly examples/chain_secured_walkthrough.mjs', () => {
  const readme = readFileSync(join(here, '../README.md'), 'utf8');
  const example = readFileSync(join(here, '../examples/chain_secured_walkthrough.mjs'), 'utf8');
  assert.ok(readme.includes('```js\n' + example + '```\n'), 'README.md holds the example file verbatim in a js block');
});

test('the walkthrough end to end: create, convert, mint a PKP, register it, add a usage key, run', async () => {
  w = await walkthrough({ baseUrl: stack.url, fetch, admin, newAdmin });
  // 1. the wallet-created account
  assert.equal(w.account.accountHash, chainSecuredAccountHash(admin.address));
  const onChain = await w.account.accountConfig.getAccount(w.account.accountHash);
  assert.deepEqual(onChain, { adminWalletAddress: admin.address, managed: false, exists: true });
  // 2. the converted account kept its hash; the client switched mode; the new admin administers it
  assert.equal(w.api_key_hash, apiKeyHash(w.apiMode.apiKey));
  assert.equal(w.apiMode.mode, Mode.ChainSecured);
  assert.equal(w.converted.accountHashHex, w.api_key_hash);
  assert.deepEqual(await w.converted.accountConfig.getAccount(w.converted.accountHash),
    { adminWalletAddress: newAdmin.address, managed: false, exists: true });
  // 3. the PKP is registered to the account under the minted path
  const [owner, wallet] = await w.account.accountConfig.contract.getWallet(w.pkp.wallet_address);
  assert.equal(owner, w.account.accountHash);
  assert.equal(ethers.toBeHex(wallet.derivationPath, 32), w.pkp.derivation_path);
  assert.equal(w.pkp.receipt.status, 1);
  // 4-5. the group and the usage key, seen through the API with the usage key
  const runner = w.account.usageClient(w.usage_api_key);
  assert.equal(runner.mode, Mode.ChainSecured);
  const groups = await runner.listGroups();
  assert.deepEqual(groups.map((g) => [g.id, g.pkp_ids_permitted, g.cid_hashes_permitted]),
    [[String(w.groupId), [w.pkp.wallet_address.toLowerCase()], [ethers.keccak256(ethers.toUtf8Bytes(w.cid))]]]);
  const keys = await runner.listApiKeys();
  assert.equal(keys.length, 1);
  assert.equal(keys[0].api_key_hash, apiKeyHash(w.usage_api_key));
  assert.deepEqual(keys[0].can_execute_in_groups, [Number(w.groupId)]);
  assert.equal((await runner.listWallets()).length, 2, 'the PKP and the usage key\'s wallet');
  // 6. the account, created on chain with no credit, bought 500 (the run is charged after the confirmation)
  assert.equal(w.balance_cents, 500);
  // 7. the run signed with the PKP
  assert.equal(w.run.has_error, false, JSON.stringify(w.run));
  assert.equal(w.signer, ethers.getAddress(w.pkp.wallet_address));
});

test('conversion from a ChainSecured client throws before sending anything', async () => {
  assert.ok(w, 'the walkthrough ran');
  const before = sent;
  // The client that converted is in ChainSecured mode now.
  await assert.rejects(w.apiMode.convertToChainSecuredAccount(await fundedWallet(provider)),
    (e) => e instanceof ClientError && e.code === ErrorCode.ALREADY_CHAIN_SECURED);
  // A usage-key client of a ChainSecured account.
  await assert.rejects(w.account.usageClient(w.usage_api_key).convertToChainSecuredAccount(newAdmin),
    (e) => e instanceof ClientError && e.code === ErrorCode.ALREADY_CHAIN_SECURED);
  // A client made in ChainSecured mode.
  await assert.rejects(new SigilClient({ baseUrl: stack.url, fetch, apiKey: 'x', mode: Mode.ChainSecured }).convertToChainSecuredAccount(newAdmin),
    (e) => e.code === ErrorCode.ALREADY_CHAIN_SECURED);
  assert.equal(sent, before, 'no request was sent');
});

test('conversion of an account already ChainSecured on chain: the SDK reads the mode and throws; without a provider the API refuses the dead key', async () => {
  const other = await fundedWallet(provider);
  // A fresh client with the converted account's (dead) master key: the signer's provider shows managed = false.
  const fresh = new SigilClient({ baseUrl: stack.url, fetch, apiKey: w.apiMode.apiKey });
  assert.equal(fresh.mode, Mode.Api);
  await assert.rejects(fresh.convertToChainSecuredAccount(other), (e) => e.code === ErrorCode.ALREADY_CHAIN_SECURED);
  assert.equal(fresh.mode, Mode.ChainSecured);
  // A signer without a provider: the request goes out and the API answers 401 (the master key is dead).
  const bare = new SigilClient({ baseUrl: stack.url, fetch, apiKey: w.apiMode.apiKey });
  await assert.rejects(bare.convertToChainSecuredAccount(ethers.Wallet.createRandom()),
    (e) => e instanceof AuthenticationError && e.status === 401 && e.code === ErrorCode.INVALID_API_KEY);
  // On chain the direct conversion reverts AlreadyUnmanaged, as a typed ConflictError.
  await assert.rejects(w.converted.accountConfig.convertToChainSecuredAccount({ accountHash: w.converted.accountHash, newAdmin: other.address }),
    (e) => e instanceof ConflictError && e.status === 409 && e.code === 'already_unmanaged' && e.revert.name === 'AlreadyUnmanaged' && e.cause !== undefined);
});

test('typed errors of the signature endpoints', async () => {
  const c = client();
  const { chain_id } = await c.getNodeChainConfig();
  const stranger = ethers.Wallet.createRandom();
  await assert.rejects(c.createWalletWithSignature(stranger),
    (e) => e instanceof NotFoundError && e.status === 404 && e.code === ErrorCode.UNKNOWN_ACCOUNT && typeof e.requestId === 'string');
  await assert.rejects(c.addUsageApiKeyWithSignature(await signTypedData(admin, 'AddUsageApiKey', { chainId: chain_id + 1 })),
    (e) => e instanceof InvalidRequestError && e.status === 400 && e.code === ErrorCode.WRONG_CHAIN_ID);
  await assert.rejects(c.createWalletWithSignature(await signTypedData(admin, 'ConvertAccount', { chainId: chain_id })),
    (e) => e instanceof InvalidRequestError && e.code === ErrorCode.WRONG_PRIMARY_TYPE);
  await assert.rejects(c.createWalletWithSignature(admin, { issuedAt: Math.floor(Date.now() / 1000) - 400 }),
    (e) => e instanceof AuthenticationError && e.status === 401 && e.code === ErrorCode.ISSUED_AT_OUT_OF_WINDOW);
  const env = await signTypedData(admin, 'CreateWallet', { chainId: chain_id });
  env.typed_data.types.CreateWallet = [...env.typed_data.types.CreateWallet].reverse();
  await assert.rejects(c.createWalletWithSignature(env), (e) => e.code === ErrorCode.TYPED_DATA_SCHEMA_MISMATCH);
  // A signer on another chain is refused by the SDK before it signs (spec rule 6: check chainId).
  const elsewhere = admin.connect(new ethers.JsonRpcProvider(stack.rpcUrl, 1, { staticNetwork: true }));
  await assert.rejects(c.createWalletWithSignature(elsewhere), (e) => e instanceof ClientError && e.code === ErrorCode.CHAIN_ID_MISMATCH);
  await assert.rejects(ChainSecuredAccount.create({ client: c, signer: elsewhere }),
    (e) => e instanceof ClientError && e.code === ErrorCode.CHAIN_ID_MISMATCH);
  // Conversion to a wallet that administers another account.
  const { api_key } = await c.newAccount();
  await assert.rejects(c.withApiKey(api_key).convertToChainSecuredAccount(admin),
    (e) => e instanceof ConflictError && e.code === ErrorCode.ADMIN_TAKEN);
});

test('direct-path reverts are typed: a path registered twice, a write by a wallet that is not the admin', async () => {
  const minted = await w.account.client.createWalletWithSignature(admin);
  const args = { accountHash: w.account.accountHash, walletAddress: minted.wallet_address, derivationPath: minted.derivation_path, name: 'once' };
  await w.account.accountConfig.registerWalletDerivation(args);
  await assert.rejects(w.account.accountConfig.registerWalletDerivation(args),
    (e) => e instanceof ConflictError && ['path_taken', 'wallet_taken'].includes(e.code));
  const intruder = await AccountConfig.fromClient(client(), await fundedWallet(provider));
  await assert.rejects(intruder.setUsageApiKey({ accountHash: w.account.accountHash, usageApiKey: 'k', name: 'no' }),
    (e) => e instanceof PermissionDeniedError && e.code === 'not_authorized');
});

test('two-step ownership: transferOwnership proposes, acceptOwnership completes; the signature flows follow the admin', async () => {
  const c = client();
  const owner = await fundedWallet(provider);
  const next = await fundedWallet(provider);
  const account = await ChainSecuredAccount.create({ client: c, signer: owner });
  await account.accountConfig.transferOwnership(next.address);
  assert.equal(await account.accountConfig.pendingOwner(account.accountHash), next.address);
  // Proposed only: the old admin still mints.
  await account.mintPkp({ name: 'before accept' });
  const nextConfig = await AccountConfig.fromClient(c, next);
  await nextConfig.acceptOwnership(account.accountHash);
  const moved = await ChainSecuredAccount.connect({ client: c, signer: next });
  assert.equal(moved.accountHash, account.accountHash);
  await moved.mintPkp({ name: 'after accept' });
  await assert.rejects(account.mintPkp(), (e) => e instanceof NotFoundError && e.code === ErrorCode.UNKNOWN_ACCOUNT);
  await assert.rejects(ChainSecuredAccount.connect({ client: c, signer: owner }), (e) => e.code === ErrorCode.UNKNOWN_ACCOUNT);
  assert.equal(await moved.accountConfig.contract.walletCount(moved.accountHash), 2n);
});

test('direct-path conversion: the master key\'s wallet proposes, the new admin consents with acceptConversion', async () => {
  const c = client();
  const { api_key, wallet_address } = await c.newAccount();
  const hash = apiKeyHash(api_key);
  const master = masterKeyWallet(api_key, provider);
  assert.equal(master.address, ethers.getAddress(wallet_address));
  await provider.send('anvil_setBalance', [master.address, '0x8ac7230489e80000']);
  const target = await fundedWallet(provider);
  const config = await AccountConfig.fromClient(c, master);
  const proposed = await config.convertToChainSecuredAccount({ accountHash: hash, newAdmin: target.address });
  assert.equal(proposed.converted, false);
  assert.equal(await config.pendingConversion(hash), target.address);
  // Not converted yet: the master key still works, the target administers nothing.
  assert.deepEqual(await config.getAccount(hash), { adminWalletAddress: master.address, managed: true, exists: true });
  await assert.rejects(ChainSecuredAccount.connect({ client: c, signer: target }), (e) => e.code === ErrorCode.UNKNOWN_ACCOUNT);
  assert.equal((await c.withApiKey(api_key).listApiKeys()).length, 0);
  // A stranger cannot complete it.
  const stranger = await AccountConfig.fromClient(c, await fundedWallet(provider));
  await assert.rejects(stranger.acceptConversion(hash), (e) => e instanceof PermissionDeniedError && e.code === 'not_authorized');
  await (await AccountConfig.fromClient(c, target)).acceptConversion(hash);
  const converted = await ChainSecuredAccount.connect({ client: c, signer: target });
  assert.equal(converted.accountHash, BigInt(hash));
  assert.deepEqual(await config.getAccount(hash), { adminWalletAddress: target.address, managed: false, exists: true });
  await converted.mintPkp({ name: 'after consent' });
  // Naming itself converts at once.
  const other = await c.newAccount();
  const otherMaster = masterKeyWallet(other.api_key, provider);
  await provider.send('anvil_setBalance', [otherMaster.address, '0x8ac7230489e80000']);
  const self = await (await AccountConfig.fromClient(c, otherMaster))
    .convertToChainSecuredAccount({ accountHash: apiKeyHash(other.api_key), newAdmin: otherMaster.address });
  assert.equal(self.converted, true);
});
