// Development chain: starts anvil on loopback and deploys AccountConfig, AppGovernance and the
// `chain` billing processor's contracts (TestStablecoin, Payments), or deploys to a running node.
//
// CLI:
//   node scripts/devchain.mjs start  --config <out.json> [--build-dir DIR] [--port N]
//                                    [--api-payers 0xA,0xB] [--admin-payer 0xC] [--state DIR]
//                                    [--compose-hash 0x..[,0x..]]... [--treasury 0x..]
//     Starts anvil (127.0.0.1, the given or a free port), deploys, registers and funds the payers,
//     writes the config, then stays in the foreground until SIGTERM/SIGINT and stops anvil.
//     With --state, the chain lives in DIR/anvil-state.json (written every second and on exit)
//     and the deployment in DIR/deployment.json: the next start loads both, keeps every contract and
//     everything on them, and only re-registers and tops up the payers and allows compose hashes
//     not yet allowed (hashes allowed before stay allowed). Payments is kept too unless --treasury
//     names another treasury than the saved one (its treasury is immutable: a new Payments is
//     deployed for the same token, and token balances stay).
//   node scripts/devchain.mjs deploy --config <out.json> --rpc-url URL [--build-dir DIR]
//                                    [--api-payers ...] [--admin-payer ...] [--deployer-key 0x..]
//                                    [--compose-hash ...] [--treasury 0x..] [--state DIR]
//     Deploys to an already running node (default deployer: anvil's dev account 0, or the
//     SIGIL_DEPLOYER_KEY environment variable). With --state (the DIR of a `start`), keeps the
//     contracts DIR/deployment.json names and only re-registers and tops up the payers (and allows
//     new compose hashes): how scripts/start registers payers it learns after the chain is up
//     (keyd's TEE key depends on the app id, AppGovernance's address).
//   Without --api-payers, anvil's dev accounts 1..4 are the API payers; without --admin-payer, dev
//   account 5 is the admin payer. --build-dir defaults to $SIGIL_BUILD_DIR or <repo>/build and must
//   hold contracts/{AccountConfig,AppGovernance,TestStablecoin,Payments}.{abi.json,bin}
//   (cmake --build <dir> --target contracts).
//   --compose-hash (repeatable, or a comma list; 32 bytes hex, 0x optional): compose hashes
//   (SHA-256 of an app_compose, `node evidence/tee-sim/sigil-tee-sim.mjs --compose FILE
//   --print-compose-hash`) that AppGovernance allows. AppGovernance (the spec's rule 8; its address is
//   the app id the TEE reports) is owned by the deployer; without --compose-hash it allows none.
//   Billing (DESIGN section 9, the `chain` processor): TestStablecoin ("Sigil Test USD", tUSD, 6
//   decimals, whose mint(to, amount) is open to anyone: the dev chain's faucet) and Payments(token,
//   treasury), whose pay(ref, amount) moves the tokens from the payer to the treasury and emits Paid.
//   --treasury defaults to anvil's dev account 9.
//   The config file is JSON: {rpc_url, chain_id, contract_address, governance_address, token_address,
//   payments_address, treasury_address, api_payers, admin_payer, anvil_pid (null for deploy)};
//   deployment.json (with --state) holds the five contract/treasury addresses and the hash of the AccountConfig
//   bytecode deployed: a saved AccountConfig built from other source is replaced by a fresh deployment.
//
// Module (used by tests/contract): startAnvil, deployAccountConfig, deployAppGovernance, deployPayments,
// loadArtifacts, DEV_MNEMONIC, devWallet, TREASURY_DEV_ACCOUNT.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, renameSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(REPO, 'package.json'));
const { ethers } = require('ethers');

export const ANVIL_BIN = join(REPO, 'node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil');
// anvil's well-known development mnemonic (its dev accounts 0..9); never holds real funds.
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
// What each payer is topped up to: thousands of relayed writes at dev-chain prices, and up to 1,024
// payers ([chain] payers) within the deployer's 10,000 ETH.
const FUND_TARGET_WEI = ethers.parseEther('5');
/// The anvil dev account that receives the payments unless --treasury says otherwise.
export const TREASURY_DEV_ACCOUNT = 9;

/// The dev account `index` of anvil's mnemonic, optionally connected to a provider.
export function devWallet(index, provider = null) {
  const w = ethers.HDNodeWallet.fromPhrase(DEV_MNEMONIC, undefined, `m/44'/60'/0'/0/${index}`);
  return provider ? w.connect(provider) : w;
}

/// A loopback TCP port free at the time of the call.
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolvePort(port));
    });
  });
}

async function rpcAnswers(url) {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    });
    return res.ok;
  } catch {
    return false;
  }
}

/// Starts anvil directly (never through npx, whose kill leaves anvil running) and waits until it
/// answers JSON-RPC. Returns {url, port, pid, child, stop()}; stop() kills it and waits for exit.
export async function startAnvil({ port = 0, timeoutMs = 10000, extraArgs = [] } = {}) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const p = port || (await freePort());
    const child = spawn(ANVIL_BIN, ['--host', '127.0.0.1', '--port', String(p), '--silent', ...extraArgs], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    let exited = false;
    const exitPromise = new Promise((r) => child.on('exit', () => { exited = true; r(); }));
    const url = `http://127.0.0.1:${p}`;
    const deadline = Date.now() + timeoutMs;
    while (!exited && Date.now() < deadline) {
      if (await rpcAnswers(url)) {
        const stop = async () => {
          if (!exited) child.kill('SIGTERM');
          const t = setTimeout(() => { if (!exited) child.kill('SIGKILL'); }, 3000);
          await exitPromise;
          clearTimeout(t);
        };
        return { url, port: p, pid: child.pid, child, stop };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!exited) child.kill('SIGKILL');
    await exitPromise;
    // A fixed port that fails is final; a picked port may have been taken meanwhile: try another.
    if (port) throw new Error(`anvil did not start on port ${p}: ${stderr.trim()}`);
  }
  throw new Error('anvil did not start');
}

/// Reads the compiled ABI and bytecode of contract `name` (default AccountConfig); compiles into a
/// temporary folder if buildDir lacks them.
export function loadArtifacts(buildDir, name = 'AccountConfig') {
  let dir = buildDir ? join(buildDir, 'contracts') : null;
  let scratch = null;
  if (!dir || !existsSync(join(dir, `${name}.bin`))) {
    dir = scratch = mkdtempSync(join(tmpdir(), 'sigil-contracts-'));
    execFileSync(process.execPath, [join(REPO, 'contracts/compile.mjs'), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  try {
    return {
      abi: JSON.parse(readFileSync(join(dir, `${name}.abi.json`), 'utf8')),
      bytecode: '0x' + readFileSync(join(dir, `${name}.bin`), 'utf8').trim(),
    };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

/// Deploys AccountConfig from `deployer` (an ethers signer), registers the API payers and the admin
/// payer, and tops each of them up to 5 ETH. Returns {contract, address, apiPayers, adminPayer}.
/// With `existing` (an address holding AccountConfig), keeps that deployment and only updates the
/// payers where they differ.
export async function deployAccountConfig({ deployer, artifacts, apiPayers, adminPayer, existing = null }) {
  const signer = new ethers.NonceManager(deployer);
  let contract;
  if (existing) {
    contract = new ethers.Contract(existing, artifacts.abi, signer);
  } else {
    const factory = new ethers.ContractFactory(artifacts.abi, artifacts.bytecode, signer);
    contract = await factory.deploy();
    await contract.waitForDeployment();
  }
  const address = await contract.getAddress();
  const samePayers = existing && (await samePayerSet(contract, apiPayers));
  if (!samePayers) {
    // setApiPayers takes at most MAX_ITEMS_PER_CALL (100) addresses; the rest are added one by one,
    // sent together and awaited together.
    const first = apiPayers.slice(0, 100);
    await (await contract.setApiPayers(first)).wait();
    const more = [];
    for (const payer of apiPayers.slice(100)) more.push(await contract.addApiPayer(payer));
    await Promise.all(more.map((tx) => tx.wait()));
  }
  if (!existing || ethers.getAddress(await contract.adminPayer()) !== ethers.getAddress(adminPayer)) {
    await (await contract.setAdminPayer(adminPayer)).wait();
  }
  const provider = deployer.provider;
  // Sent together and awaited together: with dozens of payers on a chain with block times, one
  // block instead of one per payer.
  const funding = [];
  for (const who of [...apiPayers, adminPayer]) {
    const balance = await provider.getBalance(who);
    if (balance < FUND_TARGET_WEI) funding.push(await signer.sendTransaction({ to: who, value: FUND_TARGET_WEI - balance }));
  }
  await Promise.all(funding.map((tx) => tx.wait()));
  return { contract: contract.connect(deployer), address, apiPayers, adminPayer };
}

/// Deploys AppGovernance owned by `owner` (default: the deployer's address) and allows each of
/// `composeHashes` (0x + 64 hex) not allowed yet. With `existing` (an address holding AppGovernance),
/// keeps that deployment (its owner must be the deployer to allow new hashes). Returns {contract, address}.
export async function deployAppGovernance({ deployer, artifacts, composeHashes = [], owner = null, existing = null }) {
  const signer = new ethers.NonceManager(deployer);
  let contract;
  if (existing) {
    contract = new ethers.Contract(existing, artifacts.abi, signer);
  } else {
    const factory = new ethers.ContractFactory(artifacts.abi, artifacts.bytecode, signer);
    contract = await factory.deploy(owner ?? (await deployer.getAddress()));
    await contract.waitForDeployment();
  }
  for (const hash of new Set(composeHashes)) {
    if (!(await contract.allowedComposeHashes(hash))) await (await contract.addComposeHash(hash)).wait();
  }
  return { contract: contract.connect(deployer), address: await contract.getAddress() };
}

/// Deploys the `chain` billing processor's contracts from `deployer` (an ethers signer): TestStablecoin
/// (the open-mint dev token) and Payments(token, treasury). `treasury` defaults to anvil's dev account
/// 9; artifacts come from `buildDir` (see loadArtifacts). With `existingToken` / `existingPayments`
/// (addresses from an earlier deployment), keeps them: Payments only if it points at that token and
/// at `treasury`, else a new one is deployed (its token and treasury are immutable).
/// Returns {token, tokenAddress, payments, paymentsAddress, treasury}, the contracts connected to `deployer`.
export async function deployPayments({ deployer, buildDir, treasury = null, existingToken = null, existingPayments = null }) {
  const tokenArtifacts = loadArtifacts(buildDir, 'TestStablecoin');
  const paymentsArtifacts = loadArtifacts(buildDir, 'Payments');
  const treasuryAddress = ethers.getAddress(treasury ?? devWallet(TREASURY_DEV_ACCOUNT).address);
  const signer = new ethers.NonceManager(deployer);
  let token;
  if (existingToken) {
    token = new ethers.Contract(existingToken, tokenArtifacts.abi, signer);
  } else {
    token = await new ethers.ContractFactory(tokenArtifacts.abi, tokenArtifacts.bytecode, signer).deploy();
    await token.waitForDeployment();
  }
  const tokenAddress = await token.getAddress();
  let payments = null;
  if (existingToken && existingPayments) {
    const kept = new ethers.Contract(existingPayments, paymentsArtifacts.abi, signer);
    const [keptToken, keptTreasury] = [ethers.getAddress(await kept.token()), ethers.getAddress(await kept.treasury())];
    if (keptToken === tokenAddress && keptTreasury === treasuryAddress) payments = kept;
    else console.error(`devchain: Payments at ${existingPayments} pays ${keptTreasury}, not ${treasuryAddress}; deploying a new one`);
  }
  if (!payments) {
    payments = await new ethers.ContractFactory(paymentsArtifacts.abi, paymentsArtifacts.bytecode, signer)
      .deploy(tokenAddress, treasuryAddress);
    await payments.waitForDeployment();
  }
  return {
    token: token.connect(deployer),
    tokenAddress,
    payments: payments.connect(deployer),
    paymentsAddress: await payments.getAddress(),
    treasury: treasuryAddress,
  };
}

/// "0xab..,cd.." (or several such options joined by commas) -> ['0xab..', '0xcd..'], each 32 bytes.
export function composeHashList(text) {
  return (text ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean).map((h) => {
    const hex = h.startsWith('0x') ? h : `0x${h}`;
    if (!/^0x[0-9a-f]{64}$/.test(hex)) throw new Error(`bad compose hash ${h}: want 32 bytes of hex`);
    return hex;
  });
}

async function samePayerSet(contract, apiPayers) {
  const have = (await contract.getApiPayers()).map((a) => ethers.getAddress(a)).sort();
  const want = [...new Set(apiPayers.map((a) => ethers.getAddress(a)))].sort();
  return have.length === want.length && have.every((a, i) => a === want[i]);
}

function parseArgs(argv) {
  const [mode, ...rest] = argv;
  const opts = {};
  for (let i = 0; i < rest.length; i++) {
    const m = /^--([a-z-]+)$/.exec(rest[i]);
    if (!m || i + 1 >= rest.length) throw new Error(`bad argument: ${rest[i]}`);
    // --compose-hash may be given more than once; every other option takes its last value.
    const repeatable = m[1] === 'compose-hash' && opts[m[1]] !== undefined;
    opts[m[1]] = repeatable ? `${opts[m[1]]},${rest[++i]}` : rest[++i];
  }
  return { mode, opts };
}

function addressList(text) {
  return text.split(',').filter(Boolean).map((a) => ethers.getAddress(a.trim()));
}

function writeConfig(path, config) {
  const tmp = `${path}.tmp${process.pid}`;
  writeFileSync(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o644 });
  renameSync(tmp, path);
}

async function deployToNode(rpcUrl, opts, anvilPid, stateDir = null) {
  const provider = new ethers.JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  const deployerKey = opts['deployer-key'] ?? process.env.SIGIL_DEPLOYER_KEY;
  const deployer = deployerKey ? new ethers.Wallet(deployerKey, provider) : devWallet(0, provider);
  const apiPayers = opts['api-payers'] ? addressList(opts['api-payers']) : [1, 2, 3, 4].map((i) => devWallet(i).address);
  const adminPayer = opts['admin-payer'] ? ethers.getAddress(opts['admin-payer']) : devWallet(5).address;
  const composeHashes = composeHashList(opts['compose-hash']);
  const buildDir = opts['build-dir'] ?? process.env.SIGIL_BUILD_DIR ?? join(REPO, 'build');
  const artifacts = loadArtifacts(buildDir);
  const governanceArtifacts = loadArtifacts(buildDir, 'AppGovernance');
  const deploymentFile = stateDir ? join(stateDir, 'deployment.json') : null;
  const saved = deploymentFile && existsSync(deploymentFile) ? JSON.parse(readFileSync(deploymentFile, 'utf8')) : {};
  // The state file may be older than the deployment record (a kill -9 within a second of it).
  const stillThere = async (what, address) => {
    if (!address) return null;
    if ((await provider.getCode(address)) !== '0x') return address;
    console.error(`devchain: no ${what} at the saved address ${address}; deploying a new one`);
    return null;
  };
  // A saved AccountConfig built from other source (an older checkout) speaks another ABI: the workers
  // would fail every call on it. Deploy the current one instead; the old contract's accounts stay on
  // the chain but this stack no longer uses them.
  const codeHash = ethers.keccak256(artifacts.bytecode);
  let existing = await stillThere('AccountConfig', saved.contract_address);
  if (existing && saved.account_config_code_hash !== codeHash) {
    console.error(`devchain: the saved AccountConfig at ${existing} was built from other source; deploying the current one ` +
      '(accounts, keys and groups on the old contract are not carried over)');
    existing = null;
  }
  const { address } = await deployAccountConfig({ deployer, artifacts, apiPayers, adminPayer, existing });
  const { address: governanceAddress } = await deployAppGovernance({
    deployer, artifacts: governanceArtifacts, composeHashes,
    existing: await stillThere('AppGovernance', saved.governance_address),
  });
  const existingToken = await stillThere('TestStablecoin', saved.token_address);
  const billing = await deployPayments({
    deployer, buildDir, treasury: opts.treasury ?? null, existingToken,
    existingPayments: existingToken ? await stillThere('Payments', saved.payments_address) : null,
  });
  const addresses = {
    contract_address: address,
    account_config_code_hash: codeHash,
    governance_address: governanceAddress,
    token_address: billing.tokenAddress,
    payments_address: billing.paymentsAddress,
    treasury_address: billing.treasury,
  };
  if (deploymentFile) writeConfig(deploymentFile, addresses);
  const { chainId } = await provider.getNetwork();
  provider.destroy();
  const config = {
    rpc_url: rpcUrl,
    chain_id: Number(chainId),
    ...addresses,
    api_payers: apiPayers,
    admin_payer: adminPayer,
    anvil_pid: anvilPid,
  };
  writeConfig(opts.config, config);
  return config;
}

async function main() {
  const { mode, opts } = parseArgs(process.argv.slice(2));
  if (!['start', 'deploy'].includes(mode) || !opts.config) {
    console.error('usage: devchain.mjs start|deploy --config OUT.json [--build-dir DIR] [--port N | --rpc-url URL]'
      + ' [--api-payers 0x..,0x..] [--admin-payer 0x..] [--deployer-key 0x..] [--state DIR] [--compose-hash 0x..[,0x..]]'
      + ' [--treasury 0x..]');
    process.exit(2);
  }
  if (mode === 'deploy') {
    if (!opts['rpc-url']) throw new Error('deploy needs --rpc-url');
    const config = await deployToNode(opts['rpc-url'], opts, null, opts.state ? resolve(opts.state) : null);
    console.log(`devchain: AccountConfig at ${config.contract_address}, AppGovernance at ${config.governance_address},`
      + ` tUSD at ${config.token_address}, Payments at ${config.payments_address} (treasury ${config.treasury_address})`
      + ` on ${config.rpc_url}`);
    return;
  }

  const stateDir = opts.state ? resolve(opts.state) : null;
  const extraArgs = stateDir ? ['--state', join(stateDir, 'anvil-state.json'), '--state-interval', '1'] : [];
  const anvil = await startAnvil({ port: opts.port ? Number(opts.port) : 0, extraArgs });
  let stopping = false;
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    await anvil.stop();
    process.exit(code);
  };
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
  anvil.child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`devchain: anvil exited unexpectedly (${signal ?? code})`);
      process.exit(1);
    }
  });
  try {
    const config = await deployToNode(anvil.url, opts, anvil.pid, stateDir);
    console.log(`devchain: anvil pid ${anvil.pid} at ${anvil.url}, AccountConfig at ${config.contract_address},`
      + ` AppGovernance at ${config.governance_address}, tUSD at ${config.token_address},`
      + ` Payments at ${config.payments_address} (treasury ${config.treasury_address})` +
      (stateDir ? ` (state in ${stateDir})` : ''));
  } catch (err) {
    console.error(`devchain: ${err.message}`);
    await stop(1);
  }
  // Stay in the foreground: the child keeps the event loop alive until a signal arrives.
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`devchain: ${err.message}`);
    process.exit(1);
  });
}
