// AccountConfig: usage keys are owner-only, cannot raise their own scopes, expire, and list in pages.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setupChain, newApiKey, send, reverts, perms, cid, SCOPE } from './support.mjs';

describe('AccountConfig usage keys', () => {
  let chain;
  before(async () => { chain = await setupChain(); });
  after(async () => { await chain?.stop(); });

  it('stores a usage key and shows its metadata and permissions', async () => {
    const acct = await chain.managedAccount();
    const k = newApiKey();
    const receipt = await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash,
      ...perms({ expiration: 0, balance: 5, name: 'ci', description: 'runner', createPkps: true, manage: [3], addPkp: [4], removePkp: [5], execute: [0] })));
    const ev = chain.deployer.interface.parseLog(receipt.logs[0]);
    assert.equal(ev.name, 'UsageKeySet');
    assert.deepEqual([ev.args.accountHash, ev.args.keyHash], [acct.hash, k.hash]);
    const v = await chain.deployer.getUsageKey(acct.hash, k.hash);
    assert.equal(v.keyHash, k.hash);
    assert.equal(v.balance, 5n);
    assert.equal(v.name, 'ci');
    assert.equal(v.description, 'runner');
    assert.deepEqual([v.canCreateGroups, v.canDeleteGroups, v.canCreatePkps], [false, false, true]);
    assert.deepEqual([[...v.manageIpfsIdsInGroups], [...v.addPkpToGroups], [...v.removePkpFromGroups], [...v.executeInGroups]],
      [[3n], [4n], [5n], [0n]]);
    assert.equal(await chain.deployer.keyHasScope(k.hash, SCOPE.CREATE_PKPS, 0), true);
    assert.equal(await chain.deployer.keyHasScope(k.hash, SCOPE.CREATE_GROUPS, 0), false);
    assert.equal(await chain.deployer.keyHasScope(k.hash, SCOPE.ADD_PKP, 4), true);
    assert.equal(await chain.deployer.keyHasScope(k.hash, SCOPE.ADD_PKP, 3), false);
    assert.equal(await chain.deployer.keyHasScope(acct.hash, SCOPE.DELETE_GROUPS, 0), true);
    // Replacing drops what is no longer granted.
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...perms({ execute: [7] })));
    const w = await chain.deployer.getUsageKey(acct.hash, k.hash);
    assert.equal(w.canCreatePkps, false);
    assert.deepEqual([[...w.manageIpfsIdsInGroups], [...w.executeInGroups]], [[], [7n]]);
    assert.equal(await chain.deployer.usageKeyCount(acct.hash), 1n);
  });

  it('never lets a usage key add, update or revoke keys', async () => {
    const acct = await chain.managedAccount();
    const k = newApiKey();
    const all = perms({ createGroups: true, deleteGroups: true, createPkps: true, manage: [0], addPkp: [0], removePkp: [0], execute: [0] });
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...all));
    const other = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, other.hash, ...perms()));
    await reverts(chain.payer.relaySetUsageApiKey(acct.hash, k.hash, newApiKey().hash, ...all), 'OwnerOnly');
    await reverts(chain.payer.relaySetUsageApiKey(acct.hash, k.hash, other.hash, ...all), 'OwnerOnly');
    await reverts(chain.payer.updateUsageApiKeyMetadata(acct.hash, k.hash, other.hash, 'x', 'y'), 'OwnerOnly');
    await reverts(chain.payer.removeUsageApiKey(acct.hash, k.hash, other.hash), 'OwnerOnly');
    await reverts(chain.payer.removeUsageApiKey(acct.hash, k.hash, k.hash), 'OwnerOnly');
    // ... and cannot transfer ownership (not relayable at all) or convert through the relay's key check.
    await reverts(chain.payer.transferOwnership(chain.payerWallet.address), 'OwnerOnly');
    // The owner can; the metadata update keeps permissions.
    await send(chain.payer.updateUsageApiKeyMetadata(acct.hash, acct.hash, other.hash, 'renamed', 'd'));
    assert.equal((await chain.deployer.getUsageKey(acct.hash, other.hash)).name, 'renamed');
    await reverts(chain.payer.updateUsageApiKeyMetadata(acct.hash, acct.hash, newApiKey().hash, 'x', ''), 'UnknownKey');
    await reverts(chain.payer.removeUsageApiKey(acct.hash, acct.hash, newApiKey().hash), 'UnknownKey');
  });

  it('never lets a usage key raise its own scopes', async () => {
    const acct = await chain.managedAccount();
    const k = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...perms({ execute: [1] })));
    await reverts(chain.payer.relaySetUsageApiKey(acct.hash, k.hash, k.hash, ...perms({ execute: [0], createGroups: true })), 'OwnerOnly');
    const v = await chain.deployer.getUsageKey(acct.hash, k.hash);
    assert.deepEqual([[...v.executeInGroups], v.canCreateGroups], [[1n], false]);
    // A key of another account cannot act here either.
    const acct2 = await chain.managedAccount();
    const k2 = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct2.hash, acct2.hash, k2.hash, ...perms({ createGroups: true })));
    await reverts(chain.payer.addGroup(acct.hash, k2.hash, 'g', '', [], []), 'NotAuthorized');
    await reverts(chain.payer.addGroup(acct.hash, acct2.hash, 'g', '', [], []), 'NotAuthorized');
    await reverts(chain.payer.addGroup(acct.hash, 0, 'g', '', [], []), 'NotAuthorized');
  });

  it('refuses an expired key in every check', async () => {
    const acct = await chain.managedAccount();
    const pkp = await chain.pkp(acct.hash);
    const action = cid('expiring');
    await send(chain.payer.addGroup(acct.hash, acct.hash, 'g', '', [pkp], [action]));
    const k = newApiKey();
    const expiration = (await chain.now()) + 3600;
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash,
      ...perms({ expiration, createGroups: true, createPkps: true, manage: [0], execute: [0] })));
    assert.equal(await chain.deployer.canExecute(k.hash, action, pkp), true);
    await send(chain.payer.addGroup(acct.hash, k.hash, 'live', '', [], []));
    await chain.increaseTime(3601);
    assert.deepEqual([...(await chain.deployer.resolveKey(k.hash))], [acct.hash, false, false]);
    assert.equal(await chain.deployer.canExecute(k.hash, action, pkp), false);
    assert.equal(await chain.deployer.keyHasScope(k.hash, SCOPE.CREATE_GROUPS, 0), false);
    await reverts(chain.payer.addGroup(acct.hash, k.hash, 'late', '', [], []), 'KeyExpired');
    await reverts(chain.payer.addActionToGroup(acct.hash, k.hash, 1, cid('late')), 'KeyExpired');
    await reverts(chain.payer.relayRegisterWalletDerivation(acct.hash, k.hash, chain.payerWallet.address, 99n, '', ''), 'KeyExpired');
    await reverts(chain.payer.addAction(acct.hash, k.hash, cid('late'), '', ''), 'KeyExpired');
    // Renewal by the owner brings it back.
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...perms({ expiration: 0, execute: [0] })));
    assert.equal(await chain.deployer.canExecute(k.hash, action, pkp), true);
  });

  it('refuses a revoked key', async () => {
    const acct = await chain.managedAccount();
    const k = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...perms({ createGroups: true })));
    await send(chain.payer.removeUsageApiKey(acct.hash, acct.hash, k.hash));
    assert.deepEqual([...(await chain.deployer.resolveKey(k.hash))], [acct.hash, false, false]);
    await reverts(chain.payer.addGroup(acct.hash, k.hash, 'g', '', [], []), 'NotAuthorized');
    await reverts(chain.deployer.getUsageKey(acct.hash, k.hash), 'UnknownKey');
  });

  it('lists keys in pages and stays consistent under swap-and-pop removal', async () => {
    const acct = await chain.managedAccount();
    const keys = [];
    for (let i = 0; i < 5; i++) {
      const k = newApiKey();
      keys.push(k.hash);
      await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...perms({ name: `k${i}` })));
    }
    const [page0, total] = await chain.deployer.listUsageKeys(acct.hash, 0, 2);
    const [page2] = await chain.deployer.listUsageKeys(acct.hash, 4, 2);
    assert.equal(total, 5n);
    assert.deepEqual(page0.map((v) => v.name), ['k0', 'k1']);
    assert.deepEqual(page2.map((v) => v.name), ['k4']);
    assert.equal((await chain.deployer.listUsageKeys(acct.hash, 5, 2)).page.length, 0);
    assert.equal((await chain.deployer.listUsageKeys(acct.hash, 0, 1000)).page.length, 5);
    await send(chain.payer.removeUsageApiKey(acct.hash, acct.hash, keys[1]));
    await send(chain.payer.removeUsageApiKey(acct.hash, acct.hash, keys[4]));
    const [rest] = await chain.deployer.listUsageKeys(acct.hash, 0, 10);
    assert.deepEqual(rest.map((v) => v.name).sort(), ['k0', 'k2', 'k3']);
    assert.equal(await chain.deployer.usageKeyCount(acct.hash), 3n);
    await send(chain.payer.removeUsageApiKey(acct.hash, acct.hash, rest[0].keyHash));
    assert.deepEqual((await chain.deployer.listUsageKeys(acct.hash, 0, 10)).page.map((v) => v.name).sort(),
      rest.slice(1).map((v) => v.name).sort());
  });

  it('bounds names, descriptions and list lengths', async () => {
    const acct = await chain.managedAccount();
    const h = acct.hash;
    await reverts(chain.payer.relaySetUsageApiKey(h, h, newApiKey().hash, ...perms({ name: 'n'.repeat(257) })), 'NameTooLong');
    await reverts(chain.payer.relaySetUsageApiKey(h, h, newApiKey().hash, ...perms({ description: 'd'.repeat(4097) })), 'DescriptionTooLong');
    await reverts(chain.payer.relaySetUsageApiKey(h, h, newApiKey().hash, ...perms({ execute: Array(101).fill(1) })), 'TooMany');
    await reverts(chain.payer.relaySetUsageApiKey(h, h, 0n, ...perms()), 'ZeroKeyHash');
    await send(chain.payer.relaySetUsageApiKey(h, h, newApiKey().hash, ...perms({ name: 'n'.repeat(256), execute: Array(100).fill(1) })));
  });
});
