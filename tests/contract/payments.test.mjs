// The `chain` billing processor's contracts (DESIGN section 9): TestStablecoin (tUSD, the dev chain's
// open-mint ERC-20) and Payments (pay(ref, amount) moves tokens from the payer to the treasury and
// emits Paid), deployed with deployPayments from scripts/devchain.mjs; and devchain's config fields
// for them, kept across a --state restart.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnvil, loadArtifacts, deployPayments, devWallet, TREASURY_DEV_ACCOUNT } from '../../scripts/devchain.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(REPO, 'package.json'));
const { ethers } = require('ethers');

const USD = 1_000_000n; // 6 decimals
const MAX = ethers.MaxUint256;

// Tokens that break the ERC-20 rules the other way: transferFrom returns false instead of reverting,
// or returns nothing at all (as USDT does on Ethereum). Payments must refuse the first and may
// accept the second.
const ODD_TOKENS_SOURCE = `// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;
contract FalseToken {
    function transferFrom(address, address, uint256) external pure returns (bool) { return false; }
}
contract SilentToken {
    mapping(address => uint256) public balanceOf;
    function mint(address to, uint256 amount) external { balanceOf[to] += amount; }
    function transferFrom(address from, address to, uint256 amount) external {
        require(balanceOf[from] >= amount);
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
    }
}`;

function compileOddTokens() {
  const solc = require('solc');
  const out = JSON.parse(solc.compile(JSON.stringify({
    language: 'Solidity',
    sources: { 'Odd.sol': { content: ODD_TOKENS_SOURCE } },
    settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  })));
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  assert.equal(errors.length, 0, errors.map((e) => e.formattedMessage).join('\n'));
  const pick = (name) => ({ abi: out.contracts['Odd.sol'][name].abi, bytecode: '0x' + out.contracts['Odd.sol'][name].evm.bytecode.object });
  return { FalseToken: pick('FalseToken'), SilentToken: pick('SilentToken') };
}

const ref = (text) => ethers.id(`payment intent ${text}`);

describe('TestStablecoin and Payments', () => {
  let anvil;
  let provider;
  let deployer;
  let tokenArtifacts;
  let paymentsArtifacts;
  let iface; // both ABIs: a revert inside pay() may carry the token's error
  let token;
  let payments;
  let paymentsAddress;
  let treasury;

  before(async () => {
    anvil = await startAnvil();
    provider = new ethers.JsonRpcProvider(anvil.url, undefined, { staticNetwork: true, pollingInterval: 20, cacheTimeout: -1 });
    deployer = devWallet(0, provider);
    tokenArtifacts = loadArtifacts(process.env.SIGIL_BUILD_DIR, 'TestStablecoin');
    paymentsArtifacts = loadArtifacts(process.env.SIGIL_BUILD_DIR, 'Payments');
    iface = new ethers.Interface([...tokenArtifacts.abi, ...paymentsArtifacts.abi.filter((f) => f.type !== 'constructor')]);
    ({ token, payments, paymentsAddress, treasury } = await deployPayments({ deployer, buildDir: process.env.SIGIL_BUILD_DIR }));
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

  /// The events of `receipt` from our contracts, as [name, ...args as strings].
  function events(receipt) {
    return receipt.logs.map((l) => iface.parseLog(l)).filter(Boolean).map((e) => [e.name, ...[...e.args].map(String)]);
  }

  async function reverts(txPromise, name, args) {
    let err;
    try {
      await (await txPromise).wait();
    } catch (e) {
      err = e;
    }
    assert.ok(err, `expected revert ${name}, but the call succeeded`);
    const data = err.revert ? null : err.data;
    const revert = typeof data === 'string' && data.length >= 10 ? iface.parseError(data) : err.revert;
    assert.ok(revert, `expected revert ${name}, got: ${err.shortMessage ?? err.message}`);
    assert.equal(revert.name, name);
    if (args) assert.deepEqual([...revert.args].map(String), args.map(String));
  }

  /// A funded wallet holding `amount` tUSD it minted itself, with `approved` allowed to Payments.
  async function payer(amount, approved = amount) {
    const w = await wallet();
    if (amount) await send(token.connect(w).mint(w.address, amount));
    if (approved) await send(token.connect(w).approve(paymentsAddress, approved));
    return w;
  }

  it('is the 6-decimal Sigil Test USD, and Payments pays dev account 9 by default', async () => {
    assert.equal(await token.name(), 'Sigil Test USD');
    assert.equal(await token.symbol(), 'tUSD');
    assert.equal(await token.decimals(), 6n);
    assert.equal(await token.totalSupply(), 0n);
    assert.equal(treasury, devWallet(TREASURY_DEV_ACCOUNT).address);
    assert.equal(await payments.token(), await token.getAddress());
    assert.equal(await payments.treasury(), treasury);
  });

  it('lets anyone mint (the faucet), with a Transfer from the zero address', async () => {
    const stranger = await wallet();
    const to = ethers.Wallet.createRandom().address;
    const supply = await token.totalSupply();
    assert.deepEqual(events(await send(token.connect(stranger).mint(to, 25n * USD))),
      [['Transfer', ethers.ZeroAddress, to, String(25n * USD)]]);
    assert.equal(await token.balanceOf(to), 25n * USD);
    assert.equal(await token.totalSupply(), supply + 25n * USD);
    await reverts(token.connect(stranger).mint(ethers.ZeroAddress, 1n), 'ZeroAddress');
    // Overflow of the total supply reverts (checked arithmetic), it does not wrap.
    await assert.rejects(token.connect(stranger).mint.staticCall(to, MAX));
  });

  it('implements transfer, approve, allowance and transferFrom with the standard returns and events', async () => {
    const alice = await payer(10n * USD, 0n);
    const bob = await wallet();
    const carol = ethers.Wallet.createRandom().address;
    const a = token.connect(alice);
    const b = token.connect(bob);

    assert.equal(await a.transfer.staticCall(carol, USD), true);
    assert.deepEqual(events(await send(a.transfer(carol, USD))), [['Transfer', alice.address, carol, String(USD)]]);
    assert.equal(await token.balanceOf(alice.address), 9n * USD);
    assert.equal(await token.balanceOf(carol), USD);
    await reverts(a.transfer(carol, 10n * USD), 'InsufficientBalance', [alice.address, 9n * USD, 10n * USD]);
    await reverts(a.transfer(ethers.ZeroAddress, 1n), 'ZeroAddress');

    assert.equal(await a.approve.staticCall(bob.address, 2n * USD), true);
    assert.deepEqual(events(await send(a.approve(bob.address, 2n * USD))), [['Approval', alice.address, bob.address, String(2n * USD)]]);
    assert.equal(await token.allowance(alice.address, bob.address), 2n * USD);
    await reverts(a.approve(ethers.ZeroAddress, 1n), 'ZeroAddress');

    assert.equal(await b.transferFrom.staticCall(alice.address, carol, USD), true);
    assert.deepEqual(events(await send(b.transferFrom(alice.address, carol, USD))), [['Transfer', alice.address, carol, String(USD)]]);
    assert.equal(await token.allowance(alice.address, bob.address), USD);
    await reverts(b.transferFrom(alice.address, carol, 2n * USD), 'InsufficientAllowance', [bob.address, USD, 2n * USD]);
    await reverts(b.transferFrom(alice.address, ethers.ZeroAddress, 1n), 'ZeroAddress');

    // An unlimited allowance stays unlimited; it still cannot move more than the balance.
    await send(a.approve(bob.address, MAX));
    await send(b.transferFrom(alice.address, bob.address, 3n * USD));
    assert.equal(await token.allowance(alice.address, bob.address), MAX);
    await reverts(b.transferFrom(alice.address, bob.address, 6n * USD), 'InsufficientBalance', [alice.address, 5n * USD, 6n * USD]);
    // Approving replaces, it does not add.
    await send(a.approve(bob.address, 7n));
    assert.equal(await token.allowance(alice.address, bob.address), 7n);
    assert.equal(await token.balanceOf(alice.address), 5n * USD);
    assert.equal(await token.balanceOf(bob.address), 3n * USD);
    assert.equal(await token.balanceOf(carol), 2n * USD);
  });

  it('pays: moves the tokens from the payer to the treasury and emits Paid(ref, payer, amount)', async () => {
    const w = await payer(20n * USD);
    const before = await token.balanceOf(treasury);
    const receipt = await send(payments.connect(w).pay(ref('a'), 5n * USD));
    assert.deepEqual(events(receipt), [
      ['Transfer', w.address, treasury, String(5n * USD)],
      ['Paid', ref('a'), w.address, String(5n * USD)],
    ]);
    // What confirm_payment looks for: the Paid log of the payments contract, reference in topic 1.
    const paid = receipt.logs.find((l) => l.address === paymentsAddress);
    assert.equal(paid.topics[0], ethers.id('Paid(bytes32,address,uint256)'));
    assert.equal(paid.topics[1], ref('a'));
    const [log] = await payments.queryFilter(payments.filters.Paid(ref('a')), receipt.blockNumber, receipt.blockNumber);
    assert.deepEqual([log.args.ref, log.args.payer, log.args.amount], [ref('a'), w.address, 5n * USD]);

    assert.equal(await token.balanceOf(w.address), 15n * USD);
    assert.equal(await token.balanceOf(treasury), before + 5n * USD);
    assert.equal(await token.balanceOf(paymentsAddress), 0n);
    assert.equal(await token.allowance(w.address, paymentsAddress), 15n * USD);
  });

  it('refuses a payment without allowance or balance, passing the token error through', async () => {
    const before = await token.balanceOf(treasury);
    const noAllowance = await payer(10n * USD, 0n);
    await reverts(payments.connect(noAllowance).pay(ref('b'), USD), 'InsufficientAllowance', [paymentsAddress, 0n, USD]);
    const short = await payer(10n * USD, 5n * USD);
    await reverts(payments.connect(short).pay(ref('b'), 6n * USD), 'InsufficientAllowance', [paymentsAddress, 5n * USD, 6n * USD]);
    const noBalance = await payer(2n * USD, MAX);
    await reverts(payments.connect(noBalance).pay(ref('b'), 3n * USD), 'InsufficientBalance', [noBalance.address, 2n * USD, 3n * USD]);
    const nothing = await payer(0n, MAX);
    await reverts(payments.connect(nothing).pay(ref('b'), 1n), 'InsufficientBalance', [nothing.address, 0n, 1n]);
    assert.equal(await token.balanceOf(treasury), before);
    assert.equal(await token.balanceOf(noBalance.address), 2n * USD);
  });

  it('refuses a zero amount and a zero reference', async () => {
    const w = await payer(10n * USD);
    await reverts(payments.connect(w).pay(ref('c'), 0n), 'ZeroAmount');
    await reverts(payments.connect(w).pay(ethers.ZeroHash, USD), 'ZeroReference');
    assert.equal(await token.balanceOf(w.address), 10n * USD);
  });

  it('accepts two payments with the same reference (each emits Paid)', async () => {
    // Payments keeps no record of references: a client that pays twice for one intent pays twice.
    // Crediting exactly once is the ledger's job: confirm_payment credits each payment intent once
    // (keyed by the intent), however many Paid events carry its reference.
    const w = await payer(10n * USD);
    const before = await token.balanceOf(treasury);
    const first = await send(payments.connect(w).pay(ref('d'), 2n * USD));
    const second = await send(payments.connect(w).pay(ref('d'), 2n * USD));
    assert.deepEqual(events(first).at(-1), ['Paid', ref('d'), w.address, String(2n * USD)]);
    assert.deepEqual(events(second).at(-1), ['Paid', ref('d'), w.address, String(2n * USD)]);
    assert.equal(await token.balanceOf(treasury), before + 4n * USD);
    assert.equal((await payments.queryFilter(payments.filters.Paid(ref('d')))).length, 2);
  });

  it('checks the token: refuses false or no code, accepts a token that returns nothing', async () => {
    const odd = compileOddTokens();
    const factory = new ethers.ContractFactory(paymentsArtifacts.abi, paymentsArtifacts.bytecode, deployer);
    const w = await wallet();
    const deploy = async (tokenAddress) => {
      const c = await factory.deploy(tokenAddress, treasury);
      await c.waitForDeployment();
      return c.connect(w);
    };
    const falseToken = await new ethers.ContractFactory(odd.FalseToken.abi, odd.FalseToken.bytecode, deployer).deploy();
    await reverts((await deploy(await falseToken.getAddress())).pay(ref('e'), USD), 'TransferFailed');
    // An address without code answers every call with success and no data.
    await reverts((await deploy(ethers.Wallet.createRandom().address)).pay(ref('e'), USD), 'TransferFailed');

    const silent = await new ethers.ContractFactory(odd.SilentToken.abi, odd.SilentToken.bytecode, deployer).deploy();
    const viaSilent = await deploy(await silent.getAddress());
    await send(silent.mint(w.address, 3n));
    assert.deepEqual(events(await send(viaSilent.pay(ref('e'), 3n))), [['Paid', ref('e'), w.address, '3']]);
    assert.equal(await silent.balanceOf(treasury), 3n);
    await assert.rejects(viaSilent.pay.staticCall(ref('e'), 1n));

    await reverts(factory.deploy(ethers.ZeroAddress, treasury), 'ZeroAddress');
    await reverts(factory.deploy(await token.getAddress(), ethers.ZeroAddress), 'ZeroAddress');
  });

  it('deployPayments keeps an existing deployment, and redeploys Payments for another treasury', async () => {
    const tokenAddress = await token.getAddress();
    const again = await deployPayments({ deployer, buildDir: process.env.SIGIL_BUILD_DIR, existingToken: tokenAddress, existingPayments: paymentsAddress });
    assert.deepEqual([again.tokenAddress, again.paymentsAddress, again.treasury], [tokenAddress, paymentsAddress, treasury]);

    const other = ethers.Wallet.createRandom().address;
    const moved = await deployPayments({
      deployer, buildDir: process.env.SIGIL_BUILD_DIR, treasury: other, existingToken: tokenAddress, existingPayments: paymentsAddress,
    });
    assert.equal(moved.tokenAddress, tokenAddress);
    assert.notEqual(moved.paymentsAddress, paymentsAddress);
    assert.equal(moved.treasury, other);
    assert.equal(await moved.payments.treasury(), other);
  });
});

describe('devchain start: billing config fields', () => {
  let stateDir;
  let child = null;

  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('exit', r));
    }
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  /// Runs `devchain.mjs start` with --state until its config appears; returns the config. Stop with stop().
  async function start(extra = []) {
    const config = join(stateDir, `chain-${Date.now()}.json`);
    const args = [join(REPO, 'scripts/devchain.mjs'), 'start', '--config', config, '--state', stateDir, ...extra];
    if (process.env.SIGIL_BUILD_DIR) args.push('--build-dir', process.env.SIGIL_BUILD_DIR);
    child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    for (let i = 0; i < 600 && !existsSync(config) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(existsSync(config), `devchain did not write its config: ${stderr}`);
    return JSON.parse(readFileSync(config, 'utf8'));
  }

  async function stop() {
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
  }

  it('writes token, payments and treasury addresses, and keeps them across a --state restart', async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'sigil-devchain-'));
    const first = await start();
    for (const field of ['token_address', 'payments_address', 'treasury_address']) {
      assert.match(first[field], /^0x[0-9a-fA-F]{40}$/, field);
    }
    assert.equal(first.treasury_address, devWallet(TREASURY_DEV_ACCOUNT).address);
    const saved = JSON.parse(readFileSync(join(stateDir, 'deployment.json'), 'utf8'));
    assert.equal(saved.token_address, first.token_address);
    assert.equal(saved.payments_address, first.payments_address);
    assert.equal(saved.treasury_address, first.treasury_address);

    // A payment on the first run, to see it survive the restart.
    const provider = new ethers.JsonRpcProvider(first.rpc_url, undefined, { staticNetwork: true, pollingInterval: 20, cacheTimeout: -1 });
    const w = devWallet(7, provider);
    const tokenAbi = loadArtifacts(process.env.SIGIL_BUILD_DIR, 'TestStablecoin').abi;
    const paymentsAbi = loadArtifacts(process.env.SIGIL_BUILD_DIR, 'Payments').abi;
    const t = new ethers.Contract(first.token_address, tokenAbi, new ethers.NonceManager(w));
    await (await t.mint(w.address, 9n * USD)).wait();
    await (await t.approve(first.payments_address, 9n * USD)).wait();
    await (await new ethers.Contract(first.payments_address, paymentsAbi, t.runner).pay(ref('restart'), 4n * USD)).wait();
    provider.destroy();
    await stop();

    const second = await start(); // anvil writes its state on exit too
    assert.equal(second.contract_address, first.contract_address);
    assert.equal(second.governance_address, first.governance_address);
    assert.equal(second.token_address, first.token_address);
    assert.equal(second.payments_address, first.payments_address);
    assert.equal(second.treasury_address, first.treasury_address);
    const p2 = new ethers.JsonRpcProvider(second.rpc_url, undefined, { staticNetwork: true, cacheTimeout: -1 });
    const t2 = new ethers.Contract(second.token_address, tokenAbi, p2);
    assert.equal(await t2.balanceOf(second.treasury_address), 4n * USD);
    assert.equal(await t2.balanceOf(w.address), 5n * USD);
    p2.destroy();
    await stop();

    // Another treasury: same token (balances stay), a new Payments paying it.
    const other = ethers.Wallet.createRandom().address;
    const third = await start(['--treasury', other]);
    assert.equal(third.token_address, first.token_address);
    assert.notEqual(third.payments_address, first.payments_address);
    assert.equal(third.treasury_address, other);
    await stop();
  });
});
