// Shared fixture for the AccountConfig contract tests: a private anvil per test file, a fresh
// deployment, funded throwaway wallets, and a revert matcher that checks custom error names.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnvil, deployAccountConfig, loadArtifacts, devWallet } from '../../scripts/devchain.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(REPO, 'package.json'));
export const { ethers } = require('ethers');

let s_iface = null;

export const SCOPE = { MANAGE_ACTIONS: 0, ADD_PKP: 1, REMOVE_PKP: 2, EXECUTE: 3, CREATE_GROUPS: 4, DELETE_GROUPS: 5, CREATE_PKPS: 6 };

/// Starts anvil, deploys AccountConfig with dev accounts 1 and 2 as API payers and 3 as admin payer.
/// Returns helpers bound to that chain; call stop() in the test file's `after`.
export async function setupChain() {
  const anvil = await startAnvil();
  const provider = new ethers.JsonRpcProvider(anvil.url, undefined, { staticNetwork: true, pollingInterval: 20, cacheTimeout: -1 });
  const deployerWallet = devWallet(0, provider);
  const payerWallet = devWallet(1, provider);
  const payer2Wallet = devWallet(2, provider);
  const adminPayerWallet = devWallet(3, provider);
  const artifacts = loadArtifacts(process.env.SIGIL_BUILD_DIR);
  s_iface = new ethers.Interface(artifacts.abi);
  const { contract } = await deployAccountConfig({
    deployer: deployerWallet,
    artifacts,
    apiPayers: [payerWallet.address, payer2Wallet.address],
    adminPayer: adminPayerWallet.address,
  });

  const chain = {
    anvil,
    provider,
    artifacts,
    deployer: contract,
    payer: contract.connect(payerWallet),
    payer2: contract.connect(payer2Wallet),
    payerWallet,
    adminPayerWallet,
    /// A new random wallet with 10 ETH, connected to the chain.
    async wallet() {
      const w = ethers.Wallet.createRandom().connect(provider);
      await provider.send('anvil_setBalance', [w.address, '0x8ac7230489e80000']);
      return w;
    },
    /// The contract as seen from `signer`.
    as(signer) {
      return contract.connect(signer);
    },
    async increaseTime(seconds) {
      await provider.send('evm_increaseTime', [seconds]);
      await provider.send('evm_mine', []);
    },
    async now() {
      return (await provider.getBlock('latest')).timestamp;
    },
    /// A managed account created by the API payer: {hash, key, adminWallet}.
    async managedAccount() {
      const key = newApiKey();
      const adminWallet = await chain.wallet();
      await send(chain.payer.newAccount(key.hash, adminWallet.address));
      return { hash: key.hash, key: key.key, adminWallet, admin: contract.connect(adminWallet) };
    },
    /// Registers a PKP wallet to accountHash (through the payer with the owner key); returns its address.
    async pkp(accountHash, via = chain.payer) {
      const address = ethers.Wallet.createRandom().address;
      await send(via.relayRegisterWalletDerivation(accountHash, accountHash, address, randomUint(), 'pkp', ''));
      return address;
    },
    async stop() {
      provider.destroy();
      await anvil.stop();
    },
  };
  return chain;
}

/// A fresh API key string (base64 of 32 random bytes) and its uint256 hash keccak256(utf8(key)).
export function newApiKey() {
  const key = randomBytes(32).toString('base64');
  return { key, hash: BigInt(ethers.id(key)) };
}

export function randomUint() {
  return BigInt('0x' + randomBytes(32).toString('hex'));
}

export function cid(text) {
  return ethers.id(text);
}

/// Sends a transaction and waits for a successful receipt.
export async function send(txPromise) {
  const tx = await txPromise;
  const receipt = await tx.wait();
  assert.equal(receipt.status, 1);
  return receipt;
}

/// Asserts that the write (or call) reverts with the custom error `name` (and args, if given).
export async function reverts(txPromise, name, args) {
  let err;
  try {
    const tx = await txPromise;
    await tx.wait();
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected revert ${name}, but the call succeeded`);
  // ethers decodes errors of calls, but not of the gas estimate inside a signer's send: decode the
  // revert data with the contract's ABI ourselves.
  const revert = err.revert ?? (typeof err.data === 'string' && err.data.length >= 10 ? s_iface.parseError(err.data) : null);
  assert.ok(revert, `expected revert ${name}, got: ${err.shortMessage ?? err.message}`);
  assert.equal(revert.name, name, `expected ${name}, got ${revert.signature}`);
  if (args) assert.deepEqual([...revert.args].map(String), args.map(String));
}

/// Arguments for setUsageApiKey after (adminHash, usageKeyHash), or relaySetUsageApiKey after
/// (accountHash, callerKeyHash, usageKeyHash).
export function perms({
  expiration = 0, balance = 0, name = 'key', description = '', createGroups = false, deleteGroups = false,
  createPkps = false, manage = [], addPkp = [], removePkp = [], execute = [],
} = {}) {
  return [expiration, balance, name, description, createGroups, deleteGroups, createPkps, manage, addPkp, removePkp, execute];
}
