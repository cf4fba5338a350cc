// AccountConfig: account creation, key-hash uniqueness, payers, conversion and ownership transfer.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setupChain, newApiKey, send, reverts, perms, randomUint, ethers } from './support.mjs';

describe('AccountConfig accounts', () => {
  let chain;
  before(async () => { chain = await setupChain(); });
  after(async () => { await chain?.stop(); });

  it('creates a managed account through an API payer', async () => {
    const acct = await chain.managedAccount();
    assert.equal(await chain.deployer.accountExists(acct.hash), true);
    const [admin, managed, exists] = await chain.deployer.getAccount(acct.hash);
    assert.equal(admin, acct.adminWallet.address);
    assert.equal(managed, true);
    assert.equal(exists, true);
    assert.equal(await chain.deployer.adminAccount(acct.adminWallet.address), acct.hash);
    const [accountHash, isOwner, valid] = await chain.deployer.resolveKey(acct.hash);
    assert.deepEqual([accountHash, isOwner, valid], [acct.hash, true, true]);
    assert.equal(await chain.deployer.accountExists(newApiKey().hash), false);
  });

  it('refuses an account key hash claimed twice, by any path', async () => {
    const acct = await chain.managedAccount();
    const other = await chain.wallet();
    await reverts(chain.payer.newAccount(acct.hash, other.address), 'KeyHashTaken');
    // ... nor a hash already used as a usage key, in either direction.
    const usage = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, usage.hash, ...perms()));
    await reverts(chain.payer.newAccount(usage.hash, other.address), 'KeyHashTaken');
    const acct2 = await chain.managedAccount();
    await reverts(chain.payer.relaySetUsageApiKey(acct2.hash, acct2.hash, usage.hash, ...perms()), 'KeyHashTaken');
    await reverts(chain.payer.relaySetUsageApiKey(acct2.hash, acct2.hash, acct.hash, ...perms()), 'KeyHashTaken');
    await reverts(chain.payer.relaySetUsageApiKey(acct2.hash, acct2.hash, acct2.hash, ...perms()), 'KeyHashTaken');
    await reverts(chain.payer.newAccount(0n, other.address), 'ZeroKeyHash');
  });

  it('keeps a revoked usage key hash bound to its account', async () => {
    const acct = await chain.managedAccount();
    const acct2 = await chain.managedAccount();
    const usage = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, usage.hash, ...perms()));
    await send(chain.payer.removeUsageApiKey(acct.hash, acct.hash, usage.hash));
    await reverts(chain.payer.relaySetUsageApiKey(acct2.hash, acct2.hash, usage.hash, ...perms()), 'KeyHashTaken');
    // The owner may bring it back on the same account.
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, usage.hash, ...perms()));
    assert.deepEqual([...(await chain.deployer.resolveKey(usage.hash))], [acct.hash, false, true]);
  });

  it('lets a wallet administer at most one account', async () => {
    const acct = await chain.managedAccount();
    await reverts(chain.payer.newAccount(newApiKey().hash, acct.adminWallet.address), 'AdminTaken');
    await reverts(chain.as(acct.adminWallet).newChainSecuredAccount(), 'AdminTaken');
    await reverts(chain.payer.newAccount(newApiKey().hash, ethers.ZeroAddress), 'ZeroAddress');
    // A payer as admin would give every relayed usage key owner rights.
    await reverts(chain.payer.newAccount(newApiKey().hash, chain.payerWallet.address), 'InvalidAdmin');
    await reverts(chain.payer.newAccount(newApiKey().hash, chain.adminPayerWallet.address), 'InvalidAdmin');
  });

  it('creates a ChainSecured account directly from the wallet', async () => {
    const w = await chain.wallet();
    await send(chain.as(w).newChainSecuredAccount());
    const hash = BigInt(ethers.keccak256(w.address));
    const [admin, managed, exists] = await chain.deployer.getAccount(hash);
    assert.deepEqual([admin, managed, exists], [w.address, false, true]);
    await reverts(chain.as(w).newChainSecuredAccount(), 'KeyHashTaken');
    // The API payer cannot write for it, even naming the account hash.
    await reverts(chain.payer.addGroup(hash, hash, 'g', '', [], []), 'NotManaged');
    await send(chain.as(w).addGroup(hash, 0, 'g', '', [], []));
    // Its hash is public (keccak256 of the address), so it must not work as an API key.
    assert.deepEqual([...(await chain.deployer.resolveKey(hash))], [hash, true, false]);
    const pkp = ethers.Wallet.createRandom().address;
    await send(chain.as(w).registerWalletDerivation(hash, pkp, 12345n, '', ''));
    await send(chain.as(w).addGroup(hash, 0, 'x', '', [pkp], [ethers.id('cid')]));
    assert.equal(await chain.deployer.canExecute(hash, ethers.id('cid'), pkp), false);
  });

  it('refuses account creation and payer changes by strangers', async () => {
    const stranger = await chain.wallet();
    await reverts(chain.as(stranger).newAccount(newApiKey().hash, stranger.address), 'NotApiPayer');
    await reverts(chain.as(stranger).addApiPayer(stranger.address), 'NotContractOwner');
    await reverts(chain.as(stranger).setApiPayers([stranger.address]), 'NotContractOwner');
    await reverts(chain.as(stranger).setAdminPayer(stranger.address), 'NotContractOwner');
    await reverts(chain.payer.removeApiPayer(chain.payerWallet.address), 'NotContractOwner');
    await reverts(chain.deployer.addApiPayer(chain.payerWallet.address), 'PayerExists');
    assert.equal((await chain.deployer.getApiPayers()).length, 2);
    assert.equal(await chain.deployer.adminPayer(), chain.adminPayerWallet.address);
  });

  it('refuses every write from a stranger who is neither admin nor payer', async () => {
    const acct = await chain.managedAccount();
    const s = chain.as(await chain.wallet());
    const h = acct.hash;
    await reverts(s.addGroup(h, h, 'g', '', [], []), 'NotAuthorized');
    await reverts(s.relayRegisterWalletDerivation(h, h, ethers.Wallet.createRandom().address, 7n, '', ''), 'NotAuthorized');
    await reverts(s.relaySetUsageApiKey(h, h, newApiKey().hash, ...perms()), 'NotAuthorized');
    await reverts(s.addAction(h, h, ethers.id('x'), '', ''), 'NotAuthorized');
    await reverts(s.convertToChainSecuredAccount(h, s.runner.address), 'NotAuthorized');
    await reverts(s.transferOwnership(s.runner.address), 'OwnerOnly');
    await reverts(s.acceptOwnership(h), 'NotAuthorized');
    await reverts(s.addGroup(newApiKey().hash, 0, 'g', '', [], []), 'UnknownAccount');
  });

  it('converts to ChainSecured once; afterwards the payer can no longer write', async () => {
    const acct = await chain.managedAccount();
    const usage = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, usage.hash, ...perms({ createGroups: true, execute: [0] })));
    const newAdmin = await chain.wallet();
    const receipt = await send(chain.payer.convertToChainSecuredAccount(acct.hash, newAdmin.address));
    const ev = receipt.logs.map((l) => chain.deployer.interface.parseLog(l)).find((e) => e?.name === 'AccountConverted');
    assert.deepEqual([ev.args.accountHash, ev.args.previousAdmin, ev.args.newAdmin], [acct.hash, acct.adminWallet.address, newAdmin.address]);
    const [admin, managed] = await chain.deployer.getAccount(acct.hash);
    assert.deepEqual([admin, managed], [newAdmin.address, false]);
    assert.equal(await chain.deployer.adminAccount(acct.adminWallet.address), 0n);
    assert.equal(await chain.deployer.adminAccount(newAdmin.address), acct.hash);
    // Old master key and usage keys can no longer authorize relayed writes.
    await reverts(chain.payer.addGroup(acct.hash, acct.hash, 'g', '', [], []), 'NotManaged');
    await reverts(chain.payer.addGroup(acct.hash, usage.hash, 'g', '', [], []), 'NotManaged');
    await reverts(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, newApiKey().hash, ...perms()), 'NotManaged');
    await reverts(chain.as(acct.adminWallet).addGroup(acct.hash, 0, 'g', '', [], []), 'NotAuthorized');
    // A second conversion reverts, by the payer or the new admin.
    await reverts(chain.payer.convertToChainSecuredAccount(acct.hash, newAdmin.address), 'AlreadyUnmanaged');
    await reverts(chain.as(newAdmin).convertToChainSecuredAccount(acct.hash, newAdmin.address), 'AlreadyUnmanaged');
    // The old master key no longer resolves as a credential (ChainSecured has no account key).
    assert.deepEqual([...(await chain.deployer.resolveKey(acct.hash))], [acct.hash, true, false]);
    // Everything else is kept: the usage key still resolves, the new admin writes directly.
    assert.deepEqual([...(await chain.deployer.resolveKey(usage.hash))], [acct.hash, false, true]);
    await send(chain.as(newAdmin).addGroup(acct.hash, 0, 'g', '', [], []));
  });

  it('lets the admin wallet convert its own managed account, but not into a taken or payer wallet', async () => {
    const acct = await chain.managedAccount();
    const other = await chain.managedAccount();
    await reverts(acct.admin.convertToChainSecuredAccount(acct.hash, other.adminWallet.address), 'AdminTaken');
    await reverts(acct.admin.convertToChainSecuredAccount(acct.hash, chain.payerWallet.address), 'InvalidAdmin');
    await reverts(acct.admin.convertToChainSecuredAccount(acct.hash, ethers.ZeroAddress), 'ZeroAddress');
    await reverts(chain.payer.convertToChainSecuredAccount(newApiKey().hash, other.adminWallet.address), 'UnknownAccount');
    await send(acct.admin.convertToChainSecuredAccount(acct.hash, acct.adminWallet.address));
    assert.equal((await chain.deployer.getAccount(acct.hash))[1], false);
  });

  it('transfers ownership in two steps: the admin proposes, the new owner accepts', async () => {
    const acct = await chain.managedAccount();
    const next = await chain.wallet();
    await reverts(chain.payer.transferOwnership(next.address), 'OwnerOnly');
    await reverts(chain.as(next).transferOwnership(next.address), 'OwnerOnly');
    await reverts(acct.admin.transferOwnership(chain.payerWallet.address), 'InvalidAdmin');
    await reverts(acct.admin.transferOwnership(ethers.ZeroAddress), 'ZeroAddress');
    await reverts(acct.admin.transferOwnership(acct.adminWallet.address), 'NothingToChange');
    const other = await chain.managedAccount();
    await reverts(acct.admin.transferOwnership(other.adminWallet.address), 'AdminTaken');
    const receipt = await send(acct.admin.transferOwnership(next.address));
    const ev = chain.deployer.interface.parseLog(receipt.logs[0]);
    assert.deepEqual([ev.name, ev.args.accountHash, ev.args.owner, ev.args.pendingOwner],
      ['OwnershipTransferStarted', acct.hash, acct.adminWallet.address, next.address]);
    await reverts(acct.admin.transferOwnership(next.address), 'NothingToChange');
    // Proposed is not accepted: nothing moved yet, and nobody else can accept.
    assert.equal(await chain.deployer.pendingOwner(acct.hash), next.address);
    assert.deepEqual([...(await chain.deployer.getAccount(acct.hash))], [acct.adminWallet.address, true, true]);
    await reverts(chain.as(next).addGroup(acct.hash, 0, 'g', '', [], []), 'NotAuthorized');
    await reverts(chain.as(await chain.wallet()).acceptOwnership(acct.hash), 'NotAuthorized');
    await reverts(acct.admin.acceptOwnership(acct.hash), 'NotAuthorized');
    await send(chain.as(next).acceptOwnership(acct.hash));
    assert.deepEqual([...(await chain.deployer.getAccount(acct.hash))], [next.address, true, true]);
    assert.equal(await chain.deployer.pendingOwner(acct.hash), ethers.ZeroAddress);
    assert.equal(await chain.deployer.adminAccount(next.address), acct.hash);
    assert.equal(await chain.deployer.adminAccount(acct.adminWallet.address), 0n);
    await reverts(chain.as(next).acceptOwnership(acct.hash), 'NotAuthorized');
    await reverts(acct.admin.transferOwnership(acct.adminWallet.address), 'OwnerOnly');
    await reverts(acct.admin.addGroup(acct.hash, 0, 'g', '', [], []), 'NotAuthorized');
    await send(chain.as(next).addGroup(acct.hash, 0, 'g', '', [], []));
    // A payer can no longer be added once it administers an account.
    await reverts(chain.deployer.addApiPayer(next.address), 'InvalidAdmin');
  });

  it('leaves the old master key no owner rights after an accepted transfer', async () => {
    const acct = await chain.managedAccount();
    const usage = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, usage.hash, ...perms({ createGroups: true, execute: [0] })));
    const next = await chain.wallet();
    await send(acct.admin.transferOwnership(next.address));
    // Until accepted the master key is still the owner's.
    await send(chain.payer.addGroup(acct.hash, acct.hash, 'before', '', [], []));
    await send(chain.as(next).acceptOwnership(acct.hash));
    const h = acct.hash;
    await reverts(chain.payer.addGroup(h, h, 'g', '', [], []), 'NotAuthorized');
    await reverts(chain.payer.relaySetUsageApiKey(h, h, newApiKey().hash, ...perms()), 'NotAuthorized');
    await reverts(chain.payer.relaySetUsageApiKey(h, h, usage.hash, ...perms({ execute: [0] })), 'NotAuthorized');
    await reverts(chain.payer.removeUsageApiKey(h, h, usage.hash), 'NotAuthorized');
    await reverts(chain.payer.updateUsageApiKeyMetadata(h, h, usage.hash, 'x', 'y'), 'NotAuthorized');
    await reverts(chain.payer.relayRegisterWalletDerivation(h, h, ethers.Wallet.createRandom().address, randomUint(), '', ''), 'NotAuthorized');
    await reverts(chain.payer.convertToChainSecuredAccount(h, (await chain.wallet()).address), 'NotAuthorized');
    assert.deepEqual([...(await chain.deployer.resolveKey(h))], [h, true, false]);
    // Usage keys keep their scopes; the new owner keeps every owner right.
    assert.deepEqual([...(await chain.deployer.resolveKey(usage.hash))], [h, false, true]);
    await send(chain.payer.addGroup(h, usage.hash, 'by usage key', '', [], []));
    await send(chain.as(next).removeUsageApiKey(h, 0, usage.hash));
    assert.equal((await chain.deployer.getAccount(h))[1], true);
  });

  it('drops a pending transfer when the account is converted', async () => {
    const acct = await chain.managedAccount();
    const next = await chain.wallet();
    await send(acct.admin.transferOwnership(next.address));
    const newAdmin = await chain.wallet();
    await send(chain.payer.convertToChainSecuredAccount(acct.hash, newAdmin.address));
    assert.equal(await chain.deployer.pendingOwner(acct.hash), ethers.ZeroAddress);
    await reverts(chain.as(next).acceptOwnership(acct.hash), 'NotAuthorized');
    // The ChainSecured admin can hand it on the same way.
    await send(chain.as(newAdmin).transferOwnership(next.address));
    await send(chain.as(next).acceptOwnership(acct.hash));
    assert.deepEqual([...(await chain.deployer.getAccount(acct.hash))], [next.address, false, true]);
  });
});
