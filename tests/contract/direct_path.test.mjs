// AccountConfig: the direct-path functions keep the spec's parameter lists (admin wallet = msg.sender),
// the relayed forms are separate, and a write that changes nothing reverts with NothingToChange.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setupChain, newApiKey, send, reverts, perms, randomUint, cid, ethers } from './support.mjs';

// The signatures of the spec (and of the deployed implementation), byte for byte.
const SPEC_SIGNATURES = [
  'registerWalletDerivation(uint256,address,uint256,string,string)',
  'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,bool,bool,bool,uint256[],uint256[],uint256[],uint256[])',
  'convertToChainSecuredAccount(uint256,address)',
];

describe('AccountConfig direct path', () => {
  let chain;
  before(async () => { chain = await setupChain(); });
  after(async () => { await chain?.stop(); });

  async function chainSecured() {
    const w = await chain.wallet();
    await send(chain.as(w).newChainSecuredAccount());
    return { hash: BigInt(ethers.keccak256(w.address)), wallet: w, admin: chain.as(w) };
  }

  it('exposes the spec signatures, each exactly once, and separate relayed forms', () => {
    const iface = chain.deployer.interface;
    const all = iface.fragments.filter((f) => f.type === 'function').map((f) => f.format('sighash'));
    for (const sig of SPEC_SIGNATURES) assert.ok(all.includes(sig), `missing ${sig}`);
    for (const name of ['registerWalletDerivation', 'setUsageApiKey', 'convertToChainSecuredAccount']) {
      assert.equal(all.filter((s) => s.startsWith(name + '(')).length, 1, `${name} is overloaded`);
    }
    assert.ok(all.includes('relayRegisterWalletDerivation(uint256,uint256,address,uint256,string,string)'));
    assert.ok(all.includes('relaySetUsageApiKey(uint256,uint256,uint256,uint256,uint256,string,string,bool,bool,bool,uint256[],uint256[],uint256[],uint256[])'));
    assert.ok(all.includes('transferOwnership(address)'));
    assert.ok(all.includes('acceptOwnership(uint256)'));
    assert.ok(all.includes('acceptConversion(uint256)'));
  });

  it('never makes a wallet an admin without its consent: a direct-path conversion naming another wallet only proposes', async () => {
    // A throw-away account (its master key's wallet is its admin) names a victim's wallet.
    const squatter = await chain.managedAccount();
    const victim = await chain.wallet();
    const proposed = await send(squatter.admin.convertToChainSecuredAccount(squatter.hash, victim.address));
    const ev = proposed.logs.map((l) => chain.deployer.interface.parseLog(l)).find((e) => e?.name === 'ConversionProposed');
    assert.deepEqual([ev.args.accountHash, ev.args.admin, ev.args.newAdmin], [squatter.hash, squatter.adminWallet.address, victim.address]);
    // The victim is not the admin, the account is still managed, the wallet is free.
    assert.deepEqual([...(await chain.deployer.getAccount(squatter.hash))], [squatter.adminWallet.address, true, true]);
    assert.equal(await chain.deployer.adminAccount(victim.address), 0n);
    assert.equal(await chain.deployer.pendingConversion(squatter.hash), victim.address);
    // Nobody but the proposed wallet completes it.
    await reverts(squatter.admin.acceptConversion(squatter.hash), 'NotAuthorized');
    await reverts(chain.as(await chain.wallet()).acceptConversion(squatter.hash), 'NotAuthorized');
    // The victim can still create its own account; the proposal can then never complete.
    await send(chain.as(victim).newChainSecuredAccount());
    await reverts(chain.as(victim).acceptConversion(squatter.hash), 'AdminTaken');
    assert.deepEqual([...(await chain.deployer.getAccount(squatter.hash))], [squatter.adminWallet.address, true, true]);
  });

  it('completes a proposed conversion when the named wallet accepts, and at once when the admin names itself', async () => {
    const acct = await chain.managedAccount();
    const next = await chain.wallet();
    await send(acct.admin.convertToChainSecuredAccount(acct.hash, next.address));
    await reverts(acct.admin.convertToChainSecuredAccount(acct.hash, next.address), 'NothingToChange');
    const receipt = await send(chain.as(next).acceptConversion(acct.hash));
    const ev = receipt.logs.map((l) => chain.deployer.interface.parseLog(l)).find((e) => e?.name === 'AccountConverted');
    assert.deepEqual([ev.args.previousAdmin, ev.args.newAdmin], [acct.adminWallet.address, next.address]);
    assert.deepEqual([...(await chain.deployer.getAccount(acct.hash))], [next.address, false, true]);
    assert.equal(await chain.deployer.pendingConversion(acct.hash), ethers.ZeroAddress);
    await reverts(chain.as(next).acceptConversion(acct.hash), 'NotAuthorized');

    const self = await chain.managedAccount();
    await send(self.admin.convertToChainSecuredAccount(self.hash, self.adminWallet.address));
    assert.deepEqual([...(await chain.deployer.getAccount(self.hash))], [self.adminWallet.address, false, true]);

    // A proposal does not survive an ownership change made meanwhile.
    const moved = await chain.managedAccount();
    const target = await chain.wallet();
    const owner2 = await chain.wallet();
    await send(moved.admin.convertToChainSecuredAccount(moved.hash, target.address));
    await send(moved.admin.transferOwnership(owner2.address));
    await send(chain.as(owner2).acceptOwnership(moved.hash));
    await reverts(chain.as(target).acceptConversion(moved.hash), 'NotAuthorized');
  });

  it('registers a PKP and sets a usage key from the admin wallet with the spec parameter lists', async () => {
    const acct = await chainSecured();
    const pkp = ethers.Wallet.createRandom().address;
    const path = randomUint();
    const receipt = await send(acct.admin.registerWalletDerivation(acct.hash, pkp, path, 'pkp', 'direct'));
    const ev = chain.deployer.interface.parseLog(receipt.logs[0]);
    assert.deepEqual([ev.name, ev.args.accountHash, ev.args.wallet, ev.args.derivationPath], ['WalletRegistered', acct.hash, pkp, path]);
    const [owner, view] = await chain.deployer.getWallet(pkp);
    assert.deepEqual([owner, view.derivationPath, view.name, view.description], [acct.hash, path, 'pkp', 'direct']);

    const k = newApiKey();
    await send(acct.admin.setUsageApiKey(acct.hash, k.hash, ...perms({ name: 'runner', execute: [0], createPkps: true })));
    const v = await chain.deployer.getUsageKey(acct.hash, k.hash);
    assert.deepEqual([v.name, [...v.executeInGroups], v.canCreatePkps], ['runner', [0n], true]);
    assert.deepEqual([...(await chain.deployer.resolveKey(k.hash))], [acct.hash, false, true]);
    // The same validation as the relayed form.
    await reverts(acct.admin.registerWalletDerivation(acct.hash, ethers.Wallet.createRandom().address, path, '', ''), 'PathTaken');
    await reverts(acct.admin.registerWalletDerivation(acct.hash, pkp, randomUint(), '', ''), 'WalletTaken');
    await reverts(acct.admin.registerWalletDerivation(acct.hash, ethers.ZeroAddress, randomUint(), '', ''), 'ZeroAddress');
    await reverts(acct.admin.registerWalletDerivation(acct.hash, ethers.Wallet.createRandom().address, 0n, '', ''), 'ZeroPath');
    await reverts(acct.admin.setUsageApiKey(acct.hash, acct.hash, ...perms()), 'KeyHashTaken');
    await reverts(acct.admin.setUsageApiKey(acct.hash, 0n, ...perms()), 'ZeroKeyHash');
    await reverts(acct.admin.setUsageApiKey(acct.hash, newApiKey().hash, ...perms({ name: 'n'.repeat(257) })), 'NameTooLong');
  });

  it('refuses the direct forms from anyone but the admin wallet, API payers included', async () => {
    const acct = await chainSecured();
    const managed = await chain.managedAccount();
    const stranger = chain.as(await chain.wallet());
    for (const via of [stranger, chain.payer]) {
      await reverts(via.registerWalletDerivation(acct.hash, ethers.Wallet.createRandom().address, randomUint(), '', ''), 'NotAuthorized');
      await reverts(via.setUsageApiKey(acct.hash, newApiKey().hash, ...perms()), 'NotAuthorized');
      // Even for a managed account the direct form is the admin wallet's: the relay must name a key.
      await reverts(via.registerWalletDerivation(managed.hash, ethers.Wallet.createRandom().address, randomUint(), '', ''), 'NotAuthorized');
      await reverts(via.setUsageApiKey(managed.hash, newApiKey().hash, ...perms()), 'NotAuthorized');
    }
    // Another account's admin cannot write here either.
    await reverts(managed.admin.setUsageApiKey(acct.hash, newApiKey().hash, ...perms()), 'NotAuthorized');
    await reverts(acct.admin.setUsageApiKey(newApiKey().hash, newApiKey().hash, ...perms()), 'UnknownAccount');
    // The managed account's own admin wallet may use the direct form.
    await send(managed.admin.registerWalletDerivation(managed.hash, ethers.Wallet.createRandom().address, randomUint(), '', ''));
    assert.equal(await chain.deployer.walletCount(acct.hash), 0n);
    assert.equal(await chain.deployer.usageKeyCount(acct.hash), 0n);
  });

  it('refuses the relayed forms for a ChainSecured account', async () => {
    const acct = await chainSecured();
    const h = acct.hash;
    await reverts(chain.payer.relayRegisterWalletDerivation(h, h, ethers.Wallet.createRandom().address, randomUint(), '', ''), 'NotManaged');
    await reverts(chain.payer.relaySetUsageApiKey(h, h, newApiKey().hash, ...perms()), 'NotManaged');
  });

  it('refuses a usage-key write that changes nothing, and accepts any single change', async () => {
    const acct = await chainSecured();
    const k = newApiKey();
    const base = { name: 'k', description: 'd', expiration: 0, balance: 1, execute: [1, 2], manage: [3] };
    await send(acct.admin.setUsageApiKey(acct.hash, k.hash, ...perms(base)));
    await reverts(acct.admin.setUsageApiKey(acct.hash, k.hash, ...perms(base)), 'NothingToChange');
    const changes = [{ name: 'k2' }, { description: 'e' }, { expiration: 4102444800 }, { balance: 2 }, { createGroups: true },
      { deleteGroups: true }, { createPkps: true }, { manage: [] }, { addPkp: [0] }, { removePkp: [1] }, { execute: [2, 1] }];
    let current = base;
    for (const change of changes) {
      current = { ...current, ...change };
      await send(acct.admin.setUsageApiKey(acct.hash, k.hash, ...perms(current)));
      await reverts(acct.admin.setUsageApiKey(acct.hash, k.hash, ...perms(current)), 'NothingToChange');
    }
    await send(acct.admin.updateUsageApiKeyMetadata(acct.hash, 0, k.hash, 'renamed', 'e'));
    await reverts(acct.admin.updateUsageApiKeyMetadata(acct.hash, 0, k.hash, 'renamed', 'e'), 'NothingToChange');
    // The relayed form too.
    const m = await chain.managedAccount();
    const mk = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(m.hash, m.hash, mk.hash, ...perms()));
    await reverts(chain.payer.relaySetUsageApiKey(m.hash, m.hash, mk.hash, ...perms()), 'NothingToChange');
  });

  it('refuses a group or action update that changes nothing, even from a key with no scopes', async () => {
    const m = await chain.managedAccount();
    const h = m.hash;
    const pkp = await chain.pkp(h);
    const pkp2 = await chain.pkp(h);
    await send(chain.payer.addGroup(h, h, 'g', 'd', [pkp, pkp2], [cid('a'), cid('b')]));
    const gid = await chain.deployer.groupCount(h);
    await reverts(chain.payer.updateGroup(h, h, gid, 'g', 'd', [pkp, pkp2], [cid('a'), cid('b')]), 'NothingToChange');
    // Another order of the same sets is the same group.
    await reverts(chain.payer.updateGroup(h, h, gid, 'g', 'd', [pkp2, pkp], [cid('b'), cid('a')]), 'NothingToChange');
    // A usage key without any scope used to get this no-op mined at the service's expense.
    const none = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(h, h, none.hash, ...perms()));
    await reverts(chain.payer.updateGroup(h, none.hash, gid, 'g', 'd', [pkp, pkp2], [cid('a'), cid('b')]), 'NothingToChange');
    await reverts(chain.payer.updateGroup(h, none.hash, gid, 'g2', 'd', [pkp, pkp2], [cid('a'), cid('b')]), 'MissingScope', [0, gid]);
    // Each real change still goes through for the owner.
    await send(chain.payer.updateGroup(h, h, gid, 'g2', 'd', [pkp, pkp2], [cid('a'), cid('b')]));
    await send(chain.payer.updateGroup(h, h, gid, 'g2', 'd', [pkp], [cid('a'), cid('b')]));
    await send(chain.payer.updateGroup(h, h, gid, 'g2', 'd', [pkp], [cid('a')]));
    await reverts(chain.payer.updateGroup(h, h, gid, 'g2', 'd', [pkp], [cid('a')]), 'NothingToChange');

    await send(chain.payer.addAction(h, h, cid('x'), 'n', 'd'));
    await reverts(chain.payer.updateActionMetadata(h, h, cid('x'), 'n', 'd'), 'NothingToChange');
    await send(chain.payer.updateActionMetadata(h, h, cid('x'), 'n', 'd2'));
  });
});
