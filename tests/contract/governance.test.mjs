// AppGovernance (the spec's rule 8): allowed compose hashes, owner-only writes, two-step ownership,
// a contract account (multisig) as owner, events.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnvil, loadArtifacts, deployAppGovernance, devWallet } from '../../scripts/devchain.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { ethers } = createRequire(join(REPO, 'package.json'))('ethers');

const HASH_A = ethers.sha256(ethers.toUtf8Bytes('app_compose A'));
const HASH_B = ethers.sha256(ethers.toUtf8Bytes('app_compose B'));

// A minimal "multisig": forwards any call from its own address, so the governance contract sees a
// contract account as msg.sender (what a Safe does after its signers approve).
const FORWARDER_SOURCE = `// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;
contract Forwarder {
    function exec(address to, bytes calldata data) external returns (bytes memory) {
        (bool ok, bytes memory ret) = to.call(data);
        if (!ok) assembly { revert(add(ret, 32), mload(ret)) }
        return ret;
    }
}`;

function compileForwarder() {
  const solc = createRequire(join(REPO, 'package.json'))('solc');
  const out = JSON.parse(solc.compile(JSON.stringify({
    language: 'Solidity',
    sources: { 'Forwarder.sol': { content: FORWARDER_SOURCE } },
    settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  })));
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  assert.equal(errors.length, 0, errors.map((e) => e.formattedMessage).join('\n'));
  const c = out.contracts['Forwarder.sol'].Forwarder;
  return { abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
}

describe('AppGovernance', () => {
  let anvil;
  let provider;
  let artifacts;
  let iface;
  let owner;
  let gov;

  before(async () => {
    anvil = await startAnvil();
    provider = new ethers.JsonRpcProvider(anvil.url, undefined, { staticNetwork: true, pollingInterval: 20, cacheTimeout: -1 });
    artifacts = loadArtifacts(process.env.SIGIL_BUILD_DIR, 'AppGovernance');
    iface = new ethers.Interface(artifacts.abi);
    owner = devWallet(0, provider);
    ({ contract: gov } = await deployAppGovernance({ deployer: owner, artifacts, composeHashes: [HASH_A] }));
  });
  after(async () => {
    provider?.destroy();
    await anvil?.stop();
  });

  async function wallet() {
    const w = ethers.Wallet.createRandom().connect(provider);
    await provider.send('anvil_setBalance', [w.address, '0x8ac7230489e80000']);
    return w;
  }

  async function send(txPromise) {
    const receipt = await (await txPromise).wait();
    assert.equal(receipt.status, 1);
    return receipt;
  }

  /// The events of `receipt` emitted by the governance contract, as [name, ...args as strings].
  function events(receipt) {
    return receipt.logs.map((l) => iface.parseLog(l)).filter(Boolean).map((e) => [e.name, ...[...e.args].map(String)]);
  }

  async function reverts(txPromise, name) {
    let err;
    try {
      await (await txPromise).wait();
    } catch (e) {
      err = e;
    }
    assert.ok(err, `expected revert ${name}, but the call succeeded`);
    const revert = err.revert ?? (typeof err.data === 'string' && err.data.length >= 10 ? iface.parseError(err.data) : null);
    assert.ok(revert, `expected revert ${name}, got: ${err.shortMessage ?? err.message}`);
    assert.equal(revert.name, name);
  }

  it('is owned by the deployer and allows the compose hashes it was deployed with', async () => {
    assert.equal(await gov.owner(), owner.address);
    assert.equal(await gov.pendingOwner(), ethers.ZeroAddress);
    assert.equal(await gov.allowedComposeHashes(HASH_A), true);
    assert.equal(await gov.allowedComposeHashes(HASH_B), false);
    assert.equal(await gov.allowedComposeHashes(ethers.ZeroHash), false);
  });

  it('records the owner set at deployment in an event and refuses the zero address', async () => {
    const factory = new ethers.ContractFactory(artifacts.abi, artifacts.bytecode, owner);
    const other = ethers.Wallet.createRandom().address;
    const c = await factory.deploy(other);
    const receipt = await c.deploymentTransaction().wait();
    assert.deepEqual(events(receipt), [['OwnershipTransferred', ethers.ZeroAddress, other]]);
    assert.equal(await c.owner(), other);
    await reverts(factory.deploy(ethers.ZeroAddress), 'ZeroAddress');
  });

  it('adds and removes compose hashes, with an event for each', async () => {
    assert.deepEqual(events(await send(gov.addComposeHash(HASH_B))), [['ComposeHashAdded', HASH_B]]);
    assert.equal(await gov.allowedComposeHashes(HASH_B), true);
    await reverts(gov.addComposeHash(HASH_B), 'NothingToChange');
    await reverts(gov.addComposeHash(ethers.ZeroHash), 'ZeroComposeHash');

    assert.deepEqual(events(await send(gov.removeComposeHash(HASH_B))), [['ComposeHashRemoved', HASH_B]]);
    assert.equal(await gov.allowedComposeHashes(HASH_B), false);
    assert.equal(await gov.allowedComposeHashes(HASH_A), true);
    await reverts(gov.removeComposeHash(HASH_B), 'NothingToChange');
    // Allowed again after removal.
    await send(gov.addComposeHash(HASH_B));
    assert.equal(await gov.allowedComposeHashes(HASH_B), true);
    await send(gov.removeComposeHash(HASH_B));
  });

  it('lets only the owner change the allowed set', async () => {
    const stranger = gov.connect(await wallet());
    await reverts(stranger.addComposeHash(HASH_B), 'NotOwner');
    await reverts(stranger.removeComposeHash(HASH_A), 'NotOwner');
    await reverts(stranger.transferOwnership(stranger.runner.address), 'NotOwner');
    assert.equal(await gov.allowedComposeHashes(HASH_A), true);
    assert.equal(await gov.allowedComposeHashes(HASH_B), false);
  });

  it('moves ownership in two steps', async () => {
    const next = await wallet();
    const stranger = await wallet();
    assert.deepEqual(events(await send(gov.transferOwnership(next.address))),
      [['OwnershipTransferStarted', owner.address, next.address]]);
    assert.equal(await gov.pendingOwner(), next.address);
    // Proposed is not owner yet: the old owner still rules, the proposed address cannot act.
    assert.equal(await gov.owner(), owner.address);
    await reverts(gov.connect(next).addComposeHash(HASH_B), 'NotOwner');
    await reverts(gov.connect(stranger).acceptOwnership(), 'NotPendingOwner');
    await reverts(gov.transferOwnership(next.address), 'NothingToChange');
    await reverts(gov.transferOwnership(owner.address), 'NothingToChange');

    assert.deepEqual(events(await send(gov.connect(next).acceptOwnership())),
      [['OwnershipTransferred', owner.address, next.address]]);
    assert.equal(await gov.owner(), next.address);
    assert.equal(await gov.pendingOwner(), ethers.ZeroAddress);
    await reverts(gov.connect(next).acceptOwnership(), 'NotPendingOwner');
    await reverts(gov.addComposeHash(HASH_B), 'NotOwner');
    await send(gov.connect(next).addComposeHash(HASH_B));
    assert.equal(await gov.allowedComposeHashes(HASH_B), true);

    // A proposal can be withdrawn (transferOwnership(0)); then nobody can accept.
    await send(gov.connect(next).transferOwnership(stranger.address));
    await send(gov.connect(next).transferOwnership(ethers.ZeroAddress));
    assert.equal(await gov.pendingOwner(), ethers.ZeroAddress);
    await reverts(gov.connect(stranger).acceptOwnership(), 'NotPendingOwner');
    await reverts(gov.connect(next).transferOwnership(ethers.ZeroAddress), 'NothingToChange');

    // Back to the dev owner for the next test.
    await send(gov.connect(next).transferOwnership(owner.address));
    await send(gov.acceptOwnership());
    assert.equal(await gov.owner(), owner.address);
  });

  it('keeps an existing deployment and allows only what is new when deployed again', async () => {
    const address = await gov.getAddress();
    const hash = ethers.sha256(ethers.toUtf8Bytes('app_compose D'));
    const again = await deployAppGovernance({ deployer: owner, artifacts, composeHashes: [HASH_A, hash], existing: address });
    assert.equal(again.address, address);
    assert.equal(await gov.allowedComposeHashes(HASH_A), true);
    assert.equal(await gov.allowedComposeHashes(hash), true);
  });

  it('works with a contract account (multisig) as owner', async () => {
    const fwdArtifacts = compileForwarder();
    const signer = await wallet();
    const fwd = await new ethers.ContractFactory(fwdArtifacts.abi, fwdArtifacts.bytecode, signer).deploy();
    await fwd.waitForDeployment();
    const fwdAddress = await fwd.getAddress();
    const govAddress = await gov.getAddress();

    // Hand the contract to the multisig: it accepts with its own call.
    await send(gov.transferOwnership(fwdAddress));
    await send(fwd.exec(govAddress, iface.encodeFunctionData('acceptOwnership')));
    assert.equal(await gov.owner(), fwdAddress);

    const hash = ethers.sha256(ethers.toUtf8Bytes('app_compose C'));
    const receipt = await send(fwd.exec(govAddress, iface.encodeFunctionData('addComposeHash', [hash])));
    assert.deepEqual(events(receipt), [['ComposeHashAdded', hash]]);
    assert.equal(await gov.allowedComposeHashes(hash), true);
    // The signer alone (an EOA) has no rights, and a revert inside the multisig's call surfaces.
    await reverts(gov.connect(signer).removeComposeHash(hash), 'NotOwner');
    await reverts(fwd.exec(govAddress, iface.encodeFunctionData('addComposeHash', [hash])), 'NothingToChange');
    await send(fwd.exec(govAddress, iface.encodeFunctionData('removeComposeHash', [hash])));
    assert.equal(await gov.allowedComposeHashes(hash), false);
  });

});
