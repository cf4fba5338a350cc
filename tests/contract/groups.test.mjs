// AccountConfig: groups, per-group scopes and the wildcard, the PKP registry, actions, canExecute.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setupChain, newApiKey, send, reverts, perms, cid, randomUint, ethers, SCOPE } from './support.mjs';

/// The group id carried by the GroupAdded event of a receipt.
function groupIdOf(contract, receipt) {
  for (const log of receipt.logs) {
    const ev = contract.interface.parseLog(log);
    if (ev?.name === 'GroupAdded') return ev.args.groupId;
  }
  throw new Error('no GroupAdded event');
}

describe('AccountConfig groups, PKPs and actions', () => {
  let chain;
  before(async () => { chain = await setupChain(); });
  after(async () => { await chain?.stop(); });

  async function group(acct, pkps = [], cids = []) {
    const receipt = await send(chain.payer.addGroup(acct.hash, acct.hash, 'g', 'd', pkps, cids));
    return groupIdOf(chain.deployer, receipt);
  }

  it('numbers groups per account from 1 and never reuses an id', async () => {
    const acct = await chain.managedAccount();
    assert.equal(await group(acct), 1n);
    assert.equal(await group(acct), 2n);
    await send(chain.payer.removeGroup(acct.hash, acct.hash, 2));
    assert.equal(await group(acct), 3n);
    await reverts(chain.payer.removeGroup(acct.hash, acct.hash, 2), 'UnknownGroup', [2]);
    await reverts(chain.payer.addActionToGroup(acct.hash, acct.hash, 0, cid('a')), 'UnknownGroup', [0]);
    const other = await chain.managedAccount();
    assert.equal(await group(other), 1n);
  });

  it('registers PKPs once: path 0, a path twice or a wallet twice are refused', async () => {
    const acct = await chain.managedAccount();
    const other = await chain.managedAccount();
    const w = ethers.Wallet.createRandom().address;
    const path = randomUint();
    await reverts(chain.payer.relayRegisterWalletDerivation(acct.hash, acct.hash, w, 0n, '', ''), 'ZeroPath');
    await reverts(chain.payer.relayRegisterWalletDerivation(acct.hash, acct.hash, ethers.ZeroAddress, path, '', ''), 'ZeroAddress');
    await send(chain.payer.relayRegisterWalletDerivation(acct.hash, acct.hash, w, path, 'main', 'desc'));
    await reverts(chain.payer.relayRegisterWalletDerivation(acct.hash, acct.hash, ethers.Wallet.createRandom().address, path, '', ''), 'PathTaken');
    await reverts(chain.payer.relayRegisterWalletDerivation(other.hash, other.hash, ethers.Wallet.createRandom().address, path, '', ''), 'PathTaken');
    await reverts(chain.payer.relayRegisterWalletDerivation(other.hash, other.hash, w, randomUint(), '', ''), 'WalletTaken');
    await reverts(chain.payer.relayRegisterWalletDerivation(acct.hash, acct.hash, w, randomUint(), '', ''), 'WalletTaken');
    assert.equal(await chain.deployer.pathAccount(path), acct.hash);
    const [owner, view] = await chain.deployer.getWallet(w);
    assert.deepEqual([owner, view.wallet, view.derivationPath, view.name, view.description], [acct.hash, w, path, 'main', 'desc']);
    // pkp:create is needed for a usage key.
    const k = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...perms({ createGroups: true })));
    await reverts(chain.payer.relayRegisterWalletDerivation(acct.hash, k.hash, ethers.Wallet.createRandom().address, randomUint(), '', ''),
      'MissingScope', [SCOPE.CREATE_PKPS, 0]);
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...perms({ createPkps: true })));
    await send(chain.payer.relayRegisterWalletDerivation(acct.hash, k.hash, ethers.Wallet.createRandom().address, randomUint(), '', ''));
    assert.equal(await chain.deployer.walletCount(acct.hash), 2n);
  });

  it('never lets a group list another account\'s PKP', async () => {
    const acct = await chain.managedAccount();
    const other = await chain.managedAccount();
    const foreign = await chain.pkp(other.hash);
    const unregistered = ethers.Wallet.createRandom().address;
    await reverts(chain.payer.addGroup(acct.hash, acct.hash, 'g', '', [foreign], []), 'UnknownPkp', [foreign]);
    await reverts(chain.payer.addGroup(acct.hash, acct.hash, 'g', '', [unregistered], []), 'UnknownPkp', [unregistered]);
    const g = await group(acct);
    await reverts(chain.payer.addPkpToGroup(acct.hash, acct.hash, g, foreign), 'UnknownPkp', [foreign]);
    await reverts(chain.payer.updateGroup(acct.hash, acct.hash, g, 'g', '', [foreign], []), 'UnknownPkp', [foreign]);
    // Even the admin wallet directly cannot.
    await reverts(acct.admin.addPkpToGroup(acct.hash, 0, g, foreign), 'UnknownPkp', [foreign]);
    const mine = await chain.pkp(acct.hash);
    await send(chain.payer.addPkpToGroup(acct.hash, acct.hash, g, mine));
    await reverts(chain.payer.addPkpToGroup(acct.hash, acct.hash, g, mine), 'AlreadyInGroup');
    await reverts(chain.payer.addGroup(acct.hash, acct.hash, 'g', '', [mine, mine], []), 'Duplicate');
  });

  it('lets the owner key do everything, including execute on every group', async () => {
    const acct = await chain.managedAccount();
    const pkp = await chain.pkp(acct.hash);
    const a = cid('owner-action');
    const g1 = await group(acct);
    const g2 = await group(acct);
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), false);
    await send(chain.payer.addActionToGroup(acct.hash, acct.hash, g2, a));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), false, 'the PKP is not in the group yet');
    await send(chain.payer.addPkpToGroup(acct.hash, acct.hash, g1, pkp));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), false, 'CID and PKP must share a group');
    await send(chain.payer.addPkpToGroup(acct.hash, acct.hash, g2, pkp));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), true);
    await send(chain.payer.removePkpFromGroup(acct.hash, acct.hash, g2, pkp));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), false);
    await send(chain.payer.updateGroup(acct.hash, acct.hash, g1, 'n', 'd', [pkp], [a]));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), true);
    await send(chain.payer.removeActionFromGroup(acct.hash, acct.hash, g1, a));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), false);
    await reverts(chain.payer.removeActionFromGroup(acct.hash, acct.hash, g1, a), 'NotInGroup');
    await send(chain.payer.addActionToGroup(acct.hash, acct.hash, g1, a));
    await send(chain.payer.removeGroup(acct.hash, acct.hash, g1));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), false, 'a removed group grants nothing');
    // The admin wallet directly, too.
    const g3 = groupIdOf(chain.deployer, await send(acct.admin.addGroup(acct.hash, 0, 'x', '', [pkp], [a])));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, pkp), true);
    await send(acct.admin.removeGroup(acct.hash, 0, g3));
  });

  it('answers canExecute false for a PKP of another account, even when the group lists the CID', async () => {
    const acct = await chain.managedAccount();
    const other = await chain.managedAccount();
    const a = cid('shared-cid');
    const foreign = await chain.pkp(other.hash);
    await send(chain.payer.addGroup(other.hash, other.hash, 'theirs', '', [foreign], [a]));
    const mine = await chain.pkp(acct.hash);
    await send(chain.payer.addGroup(acct.hash, acct.hash, 'mine', '', [mine], [a]));
    const k = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(acct.hash, acct.hash, k.hash, ...perms({ execute: [0] })));
    assert.equal(await chain.deployer.canExecute(acct.hash, a, foreign), false);
    assert.equal(await chain.deployer.canExecute(k.hash, a, foreign), false);
    assert.equal(await chain.deployer.canExecute(k.hash, a, mine), true);
    assert.equal(await chain.deployer.canExecute(other.hash, a, mine), false);
    assert.equal(await chain.deployer.canExecute(newApiKey().hash, a, mine), false, 'unknown key');
  });

  it('answers canExecuteAction (a run without a PKP) from the CID and the key\'s execute groups only', async () => {
    const acct = await chain.managedAccount();
    const h = acct.hash;
    const a = cid('pkpless');
    const gA = await group(acct, [], [a]);
    const gB = await group(acct, [], []);
    const key = async (fields) => {
      const k = newApiKey();
      await send(chain.payer.relaySetUsageApiKey(h, h, k.hash, ...perms(fields)));
      return k.hash;
    };
    const onA = await key({ execute: [gA] });
    const onB = await key({ execute: [gB] });
    const all = await key({ execute: [0] });
    const none = await key({});
    assert.equal(await chain.deployer.canExecuteAction(onA, a), true);
    assert.equal(await chain.deployer.canExecuteAction(onB, a), false, 'B does not list the CID');
    assert.equal(await chain.deployer.canExecuteAction(all, a), true);
    assert.equal(await chain.deployer.canExecuteAction(none, a), false, 'no execute scope');
    assert.equal(await chain.deployer.canExecuteAction(h, a), true, 'the owner key');
    assert.equal(await chain.deployer.canExecuteAction(onA, cid('unlisted')), false);
    const other = await chain.managedAccount();
    assert.equal(await chain.deployer.canExecuteAction(other.hash, a), false, 'another account lists nothing');
    await send(chain.payer.removeActionFromGroup(h, h, gA, a));
    assert.equal(await chain.deployer.canExecuteAction(onA, a), false, 'removed from the group');
    assert.equal(await chain.deployer.canExecuteAction(newApiKey().hash, a), false, 'unknown key');
  });

  it('confines each per-group scope to its groups, and [0] reaches all groups for all four', async () => {
    const acct = await chain.managedAccount();
    const h = acct.hash;
    const p1 = await chain.pkp(h);
    const p2 = await chain.pkp(h);
    const a = cid('scoped');
    const gA = await group(acct, [p1], [a]);
    const gB = await group(acct, [p1], [a]);
    const only = async (fields) => {
      const k = newApiKey();
      await send(chain.payer.relaySetUsageApiKey(h, h, k.hash, ...perms(fields)));
      return k.hash;
    };
    // execute
    const exA = await only({ execute: [gA] });
    await send(chain.payer.removePkpFromGroup(h, h, gA, p1));
    assert.equal(await chain.deployer.canExecute(exA, a, p1), false, 'execute on A does not reach B');
    await send(chain.payer.addPkpToGroup(h, h, gA, p1));
    assert.equal(await chain.deployer.canExecute(exA, a, p1), true);
    // manageActions
    const maA = await only({ manage: [gA] });
    await send(chain.payer.addActionToGroup(h, maA, gA, cid('m1')));
    await send(chain.payer.removeActionFromGroup(h, maA, gA, cid('m1')));
    await reverts(chain.payer.addActionToGroup(h, maA, gB, cid('m1')), 'MissingScope', [SCOPE.MANAGE_ACTIONS, gB]);
    await reverts(chain.payer.removeActionFromGroup(h, maA, gB, a), 'MissingScope', [SCOPE.MANAGE_ACTIONS, gB]);
    await reverts(chain.payer.addPkpToGroup(h, maA, gA, p2), 'MissingScope', [SCOPE.ADD_PKP, gA]);
    // addPkp: on A only, and it does not allow removing on A
    const apA = await only({ addPkp: [gA] });
    await send(chain.payer.addPkpToGroup(h, apA, gA, p2));
    await reverts(chain.payer.addPkpToGroup(h, apA, gB, p2), 'MissingScope', [SCOPE.ADD_PKP, gB]);
    await reverts(chain.payer.removePkpFromGroup(h, apA, gA, p2), 'MissingScope', [SCOPE.REMOVE_PKP, gA]);
    await reverts(chain.payer.addActionToGroup(h, apA, gA, cid('m2')), 'MissingScope', [SCOPE.MANAGE_ACTIONS, gA]);
    // removePkp
    const rpA = await only({ removePkp: [gA] });
    await reverts(chain.payer.removePkpFromGroup(h, rpA, gB, p1), 'MissingScope', [SCOPE.REMOVE_PKP, gB]);
    await send(chain.payer.removePkpFromGroup(h, rpA, gA, p2));
    await reverts(chain.payer.addPkpToGroup(h, rpA, gA, p2), 'MissingScope', [SCOPE.ADD_PKP, gA]);
    // No group scope gives group:create, group:delete, pkp:create.
    await reverts(chain.payer.addGroup(h, maA, 'g', '', [], []), 'MissingScope', [SCOPE.CREATE_GROUPS, 0]);
    await reverts(chain.payer.removeGroup(h, apA, gA), 'MissingScope', [SCOPE.DELETE_GROUPS, 0]);
    // Wildcard [0]: every group, for all four.
    const wild = await only({ manage: [0], addPkp: [0], removePkp: [0], execute: [0] });
    for (const g of [gA, gB]) {
      await send(chain.payer.addActionToGroup(h, wild, g, cid('w')));
      await send(chain.payer.removeActionFromGroup(h, wild, g, cid('w')));
      await send(chain.payer.addPkpToGroup(h, wild, g, p2));
      await send(chain.payer.removePkpFromGroup(h, wild, g, p2));
    }
    const gC = await group(acct, [p2], [cid('c')]);
    assert.equal(await chain.deployer.canExecute(wild, cid('c'), p2), true, 'wildcard reaches later groups');
    assert.equal(await chain.deployer.canExecute(exA, cid('c'), p2), false);
    for (const scope of [SCOPE.MANAGE_ACTIONS, SCOPE.ADD_PKP, SCOPE.REMOVE_PKP, SCOPE.EXECUTE]) {
      assert.equal(await chain.deployer.keyHasScope(wild, scope, gC), true);
      assert.equal(await chain.deployer.keyHasScope(exA, scope, gC), false);
    }
    // group:create with members needs the matching per-group scopes for the new group.
    const creator = await only({ createGroups: true });
    await send(chain.payer.addGroup(h, creator, 'empty', '', [], []));
    await reverts(chain.payer.addGroup(h, creator, 'full', '', [p1], []), 'MissingScope');
    const creatorAll = await only({ createGroups: true, addPkp: [0], manage: [0], deleteGroups: true });
    const gD = groupIdOf(chain.deployer, await send(chain.payer.addGroup(h, creatorAll, 'full', '', [p1], [a])));
    await send(chain.payer.removeGroup(h, creatorAll, gD));
  });

  it('checks updateGroup part by part for usage keys', async () => {
    const acct = await chain.managedAccount();
    const h = acct.hash;
    const p1 = await chain.pkp(h);
    const p2 = await chain.pkp(h);
    const g = await group(acct, [p1], [cid('u1')]);
    const key = async (fields) => {
      const k = newApiKey();
      await send(chain.payer.relaySetUsageApiKey(h, h, k.hash, ...perms(fields)));
      return k.hash;
    };
    const adder = await key({ addPkp: [g] });
    await send(chain.payer.updateGroup(h, adder, g, 'g', 'd', [p1, p2], [cid('u1')]));
    await reverts(chain.payer.updateGroup(h, adder, g, 'g', 'd', [p2], [cid('u1')]), 'MissingScope', [SCOPE.REMOVE_PKP, g]);
    await reverts(chain.payer.updateGroup(h, adder, g, 'g', 'd', [p1, p2], [cid('u2')]), 'MissingScope', [SCOPE.MANAGE_ACTIONS, g]);
    await reverts(chain.payer.updateGroup(h, adder, g, 'renamed', 'd', [p1, p2], [cid('u1')]), 'MissingScope', [SCOPE.MANAGE_ACTIONS, g]);
    const manager = await key({ manage: [g], removePkp: [g] });
    await send(chain.payer.updateGroup(h, manager, g, 'renamed', 'new', [p2], [cid('u2'), cid('u3')]));
    const v = await chain.deployer.getGroup(h, g);
    assert.deepEqual([v.id, v.name, v.description, [...v.pkps], [...v.cidHashes]], [g, 'renamed', 'new', [p2], [cid('u2'), cid('u3')]]);
    await reverts(chain.payer.updateGroup(h, h, g, 'g', '', [], [cid('u2'), cid('u2')]), 'Duplicate');
    await reverts(chain.payer.updateGroup(h, h, 99, 'g', '', [], []), 'UnknownGroup', [99]);
  });

  it('keeps standalone action metadata for the owner or a key that manages actions', async () => {
    const acct = await chain.managedAccount();
    const h = acct.hash;
    const a = cid('QmStandalone');
    const k = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(h, h, k.hash, ...perms({ execute: [0] })));
    await reverts(chain.payer.addAction(h, k.hash, a, 'n', 'd'), 'MissingScope', [SCOPE.MANAGE_ACTIONS, 0]);
    await send(chain.payer.addAction(h, h, a, 'n', 'd'));
    await reverts(chain.payer.addAction(h, h, a, 'n', 'd'), 'ActionExists');
    await reverts(chain.payer.addAction(h, h, ethers.ZeroHash, 'n', 'd'), 'ZeroCid');
    const m = newApiKey();
    await send(chain.payer.relaySetUsageApiKey(h, h, m.hash, ...perms({ manage: [5] })));
    await send(chain.payer.updateActionMetadata(h, m.hash, a, 'n2', 'd2'));
    await reverts(chain.payer.updateActionMetadata(h, k.hash, a, 'n3', 'd3'), 'MissingScope');
    await reverts(chain.payer.updateActionMetadata(h, h, cid('nope'), 'n', 'd'), 'UnknownAction');
    const { page: list, total } = await chain.deployer.listActions(h, 0, 10);
    assert.equal(total, 1n);
    assert.deepEqual(list.map((x) => [x.cidHash, x.name, x.description]), [[a, 'n2', 'd2']]);
    // Group listings carry the metadata when there is some.
    const g = await group(acct, [], [a, cid('bare')]);
    const [inGroup] = await chain.deployer.listActionsInGroup(h, g, 0, 10);
    assert.deepEqual(inGroup.map((x) => [x.cidHash, x.name]), [[a, 'n2'], [cid('bare'), '']]);
    await reverts(chain.payer.deleteAction(h, k.hash, a), 'MissingScope');
    await send(chain.payer.deleteAction(h, m.hash, a));
    await reverts(chain.payer.deleteAction(h, h, a), 'UnknownAction');
    assert.equal(await chain.deployer.actionCount(h), 0n);
    assert.equal(await chain.deployer.groupActionCount(h, g), 2n, 'deleting metadata leaves groups alone');
  });

  it('pages groups, wallets and wallets in a group consistently after removals', async () => {
    const acct = await chain.managedAccount();
    const h = acct.hash;
    const pkps = [];
    for (let i = 0; i < 4; i++) pkps.push(await chain.pkp(h));
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await group(acct, pkps.slice(0, i + 1), [cid(`p${i}`)]));
    assert.equal(await chain.deployer.groupCount(h), 4n);
    await send(chain.payer.removeGroup(h, h, ids[1]));
    const groups = [...(await chain.deployer.listGroups(h, 0, 2)).page, ...(await chain.deployer.listGroups(h, 2, 2)).page];
    assert.equal((await chain.deployer.listGroups(h, 0, 2)).total, 3n);
    assert.deepEqual(groups.map((x) => x.id).sort(), [ids[0], ids[2], ids[3]].sort());
    const g3 = groups.find((x) => x.id === ids[3]);
    assert.deepEqual([...g3.pkps], pkps);
    const [wallets, walletTotal] = await chain.deployer.listWallets(h, 1, 2);
    assert.equal(walletTotal, BigInt(pkps.length));
    assert.deepEqual(wallets.map((w) => w.wallet), pkps.slice(1, 3));
    await send(chain.payer.removePkpFromGroup(h, h, ids[3], pkps[0]));
    const [inGroup] = await chain.deployer.listWalletsInGroup(h, ids[3], 0, 10);
    assert.deepEqual(inGroup.map((w) => w.wallet).sort(), pkps.slice(1).sort());
    assert.equal(await chain.deployer.groupWalletCount(h, ids[3]), 3n);
    assert.equal((await chain.deployer.listWalletsInGroup(h, ids[3], 3, 10)).page.length, 0);
    await reverts(chain.deployer.listWalletsInGroup(h, ids[1], 0, 10), 'UnknownGroup', [ids[1]]);
  });
});
