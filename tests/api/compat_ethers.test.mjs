// ethers v5 inside actions (DESIGN.md section 5, issue 16), through the whole stack: the sandbox
// runs the real ethers v5 from npm (lowered for Duktape, secp256k1 and keccak256 on native fast
// paths), and every answer is compared with Node running the same code with ethers v5 from npm
// (`ethers5`) as the referee. Providers reach the dev chain (anvil) through the sandbox's fetch,
// allowed here by [actions] fetch_allowed_addresses = 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  startStack, SOURCE_DIR, assertOk, actionRunner, newAccount, addGroup, addUsageKey, createWallet, chainRpc, minedReceipt,
} from './stack.mjs';

const require = createRequire(join(SOURCE_DIR, 'package.json'));
const { ethers: ethers5 } = require('ethers5');

let stack;
const s = {};

before(async () => {
  stack = await startStack({
    workers: 2,
    actions: ['fetch_allowed_addresses = 127.0.0.1', 'timeout_ms = 20000'],
  });
  s.owner = (await newAccount(stack, 'ethers compat')).api_key;
  s.group = await addGroup(stack, s.owner, 'runners');
  s.pkp = (await createWallet(stack, s.owner)).toLowerCase();
  assertOk(await stack.request('POST', 'add_pkp_to_group', { key: s.owner, body: { group_id: s.group, pkp_id: s.pkp } }));
  s.executor = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
  runRaw = actionRunner(stack, { owner: s.owner, group: s.group, key: s.executor, pkp: s.pkp });
});

after(async () => {
  await stack?.stop();
});

// Runs `code` (listed in the runners group first); the whole answer.
let runRaw;

// Runs `code`; its response, after checking it ran without an error.
async function run(code, params) {
  const j = await runRaw(code, params);
  assert.equal(j.has_error, false, JSON.stringify(j).slice(0, 2000));
  return j.response;
}

// The same action in Node with ethers v5 (and the Lit API the code uses, from `lit`).
async function referee(code, params, lit = {}) {
  const main = new Function('ethers', 'Lit', 'LitActions', `${code}\n;return main;`)(ethers5, { Actions: lit }, lit);
  return JSON.parse(JSON.stringify(await main(params)));
}

const KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const TO = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';

test('ethers.utils, BigNumber, AbiCoder, Interface and Wallet signatures match ethers v5 in Node', async () => {
  const code = `async function main({ key, to, text }) {
    const u = ethers.utils;
    const w = new ethers.Wallet(key);
    const iface = new u.Interface([
      'function transfer(address to, uint256 amount) returns (bool)',
      'function balanceOf(address owner) view returns (uint256)',
      'function getPair(uint256 id) view returns (tuple(address owner, uint64 count, bytes32 tag) pair, string[] names)',
      'event Transfer(address indexed from, address indexed to, uint256 value)',
    ]);
    const encoded = u.defaultAbiCoder.encode(['uint256', 'int8', 'string', 'address[]', 'bytes', 'tuple(bool,bytes32)'],
      [u.parseEther('1.25'), -5, 'héllo ✓', [to, w.address], '0xdeadbeef', [true, u.id('x')]]);
    const decoded = u.defaultAbiCoder.decode(['uint256', 'int8', 'string', 'address[]', 'bytes', 'tuple(bool,bytes32)'], encoded);
    const pairData = u.defaultAbiCoder.encode(['tuple(address,uint64,bytes32)', 'string[]'], [[to, 7, u.id('tag')], ['a', 'bc']]);
    const pair = iface.decodeFunctionResult('getPair', pairData);
    const log = iface.encodeEventLog(iface.getEvent('Transfer'), [w.address, to, 99]);
    const big = ethers.BigNumber.from('123456789012345678901234567890');
    const tx1559 = { to, value: u.parseEther('0.5'), nonce: 7, gasLimit: 21000, maxFeePerGas: u.parseUnits('30', 'gwei'),
                     maxPriorityFeePerGas: u.parseUnits('2', 'gwei'), chainId: 31337, type: 2, data: '0x1234' };
    const txLegacy = { to, value: 1, nonce: 0, gasLimit: 50000, gasPrice: 1000000000, chainId: 1 };
    const domain = { name: 'Mail', version: '1', chainId: 1, verifyingContract: to };
    const types = { Person: [{ name: 'name', type: 'string' }, { name: 'wallet', type: 'address' }],
                    Mail: [{ name: 'from', type: 'Person' }, { name: 'to', type: 'Person' }, { name: 'contents', type: 'string' }] };
    const mail = { from: { name: 'Cow', wallet: w.address }, to: { name: 'Bob', wallet: to }, contents: 'Hello, Bob!' };
    const digest = u.keccak256(u.toUtf8Bytes('digest'));
    const sig = w._signingKey().signDigest(digest);
    const signedMessage = await w.signMessage('Chipotle Rocks!');
    const signed1559 = await w.signTransaction(tx1559);
    return {
      hmac256: u.computeHmac(u.SupportedAlgorithm.sha256, u.toUtf8Bytes('key'), u.toUtf8Bytes('The quick brown fox')),
      hmac512: u.computeHmac('sha512', '0x0102', '0x03'),
      parseUnits: [u.parseUnits('1.5', 18).toString(), u.parseUnits('123.456789', 6).toString(), u.parseEther('0.000000000000000001').toString()],
      formatUnits: [u.formatUnits('1234567890123456789', 6), u.formatEther('1000000000000000000'), u.formatUnits(12345, 'gwei'), u.commify('1234567.891')],
      keccak: [u.keccak256('0x'), u.keccak256('0x1234'), u.keccak256(new Uint8Array(300).fill(7)), u.id('Transfer(address,address,uint256)')],
      sha: [u.sha256('0x1234'), u.ripemd160('0x1234'), u.sha512('0x')],
      solidity: [u.solidityPack(['address', 'uint256', 'string', 'bool', 'bytes4'], [to, 42, 'hi', true, '0x01020304']),
                 u.solidityKeccak256(['uint8', 'bytes32', 'int16'], [7, u.id('x'), -3]), u.soliditySha256(['string'], ['x'])],
      encoded, decoded: JSON.parse(JSON.stringify(decoded)),
      transfer: iface.encodeFunctionData('transfer', [to, u.parseEther('1')]),
      transferDecoded: JSON.parse(JSON.stringify(iface.decodeFunctionData('transfer', iface.encodeFunctionData('transfer', [to, 5])))),
      balance: iface.decodeFunctionResult('balanceOf', '0x00000000000000000000000000000000000000000000000000000000000003e8')[0].toString(),
      pair: JSON.parse(JSON.stringify(pair)),
      sighash: iface.getSighash('transfer'), topic: iface.getEventTopic('Transfer'), log,
      parsedLog: JSON.parse(JSON.stringify(iface.parseLog(log).args)),
      big: [big.mul(3).div(7).add(1).sub(2).toString(), big.pow(3).mod(1000003).toString(), big.toHexString(),
            ethers.BigNumber.from(-12345).toTwos(32).toHexString(), big.gt(1), big.shl(3).toString(), big.mask(20).toString(),
            ethers.BigNumber.from('0xff').toNumber(), ethers.FixedNumber.from('1.5').mulUnsafe(ethers.FixedNumber.from('2.25')).toString()],
      bytes: [u.hexZeroPad('0x1', 32), u.hexlify(u.concat(['0x01', [2, 3]])), u.hexDataSlice('0x01020304', 1, 3), u.hexStripZeros('0x000102'),
              u.base64.encode(u.toUtf8Bytes('hello')), u.toUtf8String(u.base64.decode('aGVsbG8=')), u.formatBytes32String('sigil'),
              u.parseBytes32String(u.formatBytes32String('sigil')), u.RLP.encode(['0x01', ['0x0203']]), u.getAddress(to.toLowerCase()),
              u.getContractAddress({ from: to, nonce: 5 }), u.getCreate2Address(to, u.id('salt'), u.id('code'))],
      wallet: { address: w.address, publicKey: w.publicKey, compressed: w._signingKey().compressedPublicKey,
                computed: u.computeAddress(w.publicKey), computedCompressed: u.computePublicKey(w.publicKey, true) },
      signedMessage, signedBytes: await w.signMessage(u.arrayify('0x010203')),
      verified: u.verifyMessage('Chipotle Rocks!', signedMessage),
      signDigest: sig, joined: u.joinSignature(sig), recovered: u.recoverAddress(digest, sig),
      recoveredKey: u.recoverPublicKey(digest, sig),
      signed1559, signedLegacy: await w.signTransaction(txLegacy),
      parsedTx: JSON.parse(JSON.stringify(u.parseTransaction(signed1559))),
      serialized: u.serializeTransaction(txLegacy),
      typed: await w._signTypedData(domain, types, mail),
      typedHash: u._TypedDataEncoder.hash(domain, types, mail),
      typedVerified: u.verifyTypedData(domain, types, mail, await w._signTypedData(domain, types, mail)),
      hashMessage: u.hashMessage('hello'),
      // Non-BMP characters from the source and from js_params encode as V8's surrogate pairs do.
      emoji: [u.hexlify(u.toUtf8Bytes('gm 😀')), u.hexlify(u.toUtf8Bytes(text)), u.id(text), await w.signMessage(text),
              u.hexlify(u.toUtf8Bytes(u.toUtf8String(u.toUtf8Bytes(text))))],
      version: ethers.version,
    };
  }`;
  const params = { key: KEY, to: TO, text: 'héllo 😀 \u65e5' };
  const got = await run(code, params);
  const want = await referee(code, params);
  for (const name of Object.keys(want)) assert.deepEqual(got[name], want[name], name);
  assert.deepEqual(got, want);
  assert.equal(got.version, 'ethers/5.8.0');
});

test('the action key as an ethers v5 Wallet signs what Node\'s ethers v5 signs with the same key', async () => {
  const code = `async function main({ to }) {
    const key = await Lit.Actions.getLitActionPrivateKey();
    const w = new ethers.Wallet(key);
    return { key, address: w.address, message: await w.signMessage('hello'),
             tx: await w.signTransaction({ to, value: 5, nonce: 1, gasLimit: 21000, gasPrice: 7, chainId: 31337 }) };
  }`;
  const got = await run(code, { to: TO });
  assert.match(got.key, /^0x[0-9a-f]{64}$/);
  const want = await referee(code, { to: TO }, { getLitActionPrivateKey: async () => got.key });
  assert.deepEqual(got, want);
  assert.equal(ethers5.utils.verifyMessage('hello', got.message), got.address);
});

// An action's BigInts are JSBI instances in the sandbox (Arrays of 30-bit digits); ethers v5 must
// read them wherever Node's ethers v5 reads a native bigint, and refuse them where Node refuses
// one (as bytes, arrays, tuples), with the same messages.
test('BigInt values reach ethers v5 as native bigints do in Node: BigNumber, units, hex, ABI, signing, Contract', async () => {
  const code = `async function main({ key, to }) {
    const u = ethers.utils, BN = ethers.BigNumber;
    const show = (v) => BN.isBigNumber(v) ? 'BigNumber ' + v.toString() : typeof v === 'bigint' ? 'bigint ' + v : v;
    const t = (f) => { try { return show(f()); } catch (e) { return 'throws: ' + e.message; } };
    const big = 2n ** 30n + 5n;  // JSBI digits [5, 1]: read as bytes, 1281
    const w = new ethers.Wallet(key);
    const c = new ethers.Contract(to, ['function transfer(address to, uint256 amount) payable', 'function f(uint256 a, int64 b, uint256[] c)',
                                       'event T(uint256 indexed v)']);
    const iface = c.interface;
    const settled = async (f) => { try { return JSON.parse(JSON.stringify(await f())); } catch (e) { return 'throws: ' + e.message; } };
    return {
      reproductions: [BN.from(300n).toString(), BN.from(BigInt('345678000000')).toString(), BN.from(2n ** 30n + 5n).toString(),
                      u.defaultAbiCoder.encode(['uint256'], [2n ** 30n + 5n]), u.formatUnits(1500000000000000000n, 18)],
      from: [t(() => BN.from(-(2n ** 200n))), t(() => BN.from(0n)), t(() => BN.from(-1n)), t(() => BN.from(10n ** 30n).toHexString())],
      arithmetic: [t(() => BN.from(10).add(5n)), t(() => BN.from(10).mul(big)), t(() => BN.from(10).eq(10n)), t(() => BN.from(big).lt(big + 1n)),
                   t(() => BN.from(1000).div(7n).sub(-3n)), t(() => BN.from(2).pow(100n))],
      toBigInt: [t(() => BN.from(10).toBigInt()), typeof BN.from(-7).toBigInt(), BN.from(-7).toBigInt() === -7n,
                 t(() => BN.from('123456789012345678901234567890').toBigInt() * 3n + 1n), t(() => u.parseEther('1.5').toBigInt() / 10n ** 17n)],
      units: [t(() => u.formatEther(10n ** 18n)), t(() => u.formatUnits(5n, 2n)), t(() => u.formatUnits(-(10n ** 20n), 'gwei')),
              t(() => u.parseUnits(5n, 18)), t(() => ethers.FixedNumber.from(big).toString()),
              t(() => ethers.FixedNumber.from(big, 'fixed128x2').toString()), t(() => ethers.FixedNumber.fromValue(12345n, 2n).toString())],
      hex: [t(() => u.hexlify(5n)), t(() => u.hexlify(big)), t(() => u.hexValue(big)), t(() => u.hexValue(0n)), t(() => u.hexZeroPad(big, 32)),
            t(() => u.hexlify(-5n)), t(() => u.hexDataLength(big)), t(() => u.isHexString(5n))],
      notBytes: [t(() => u.isBytes(5n)), t(() => u.isBytes(big)), t(() => u.isBytesLike(big)), t(() => u.arrayify(5n)), t(() => u.arrayify(0n)),
                 t(() => u.arrayify(big)), t(() => u.keccak256(big)), t(() => u.concat([big])), t(() => u.zeroPad(big, 8)), t(() => u.RLP.encode(big))],
      abi: [t(() => u.defaultAbiCoder.encode(['uint256', 'int256', 'uint8'], [big, -big, 255n])), t(() => u.defaultAbiCoder.encode(['uint256[]'], [big])),
            t(() => u.defaultAbiCoder.encode(['tuple(uint256 length)'], [big])), t(() => u.defaultAbiCoder.encode(['uint8'], [256n])),
            t(() => iface.encodeFunctionData('f', [big, -7n, [1n, 2n ** 100n]])), t(() => u.solidityPack(['uint256', 'int8'], [big, -3n])),
            t(() => u.solidityPack(['uint256[]'], [big])), t(() => u.solidityKeccak256(['uint64'], [big])),
            t(() => u._TypedDataEncoder.hash({ chainId: 1n }, { M: [{ name: 'v', type: 'uint256' }] }, { v: big }))],
      deepCopy: [t(() => u.deepCopy({ a: big }).a === big), t(() => typeof u.deepCopy({ a: [big] }).a[0])],
      signed: [await settled(() => w.signTransaction({ to, value: big, nonce: 3n, gasLimit: 21000n, gasPrice: 7n, chainId: 1 })),
               await settled(() => w.signTransaction({ to, value: 0n, nonce: 0n, gasLimit: 21000n, maxFeePerGas: 10n ** 9n,
                                                       maxPriorityFeePerGas: 1n, chainId: 31337, type: 2 }))],
      contract: [await settled(() => c.populateTransaction.transfer(to, big, { value: 7n, gasLimit: 50000n, nonce: 2n })),
                 await settled(() => c.populateTransaction.transfer(to, 1n, { value: 0n })),
                 await settled(() => c.populateTransaction.f(big, -1n, [big, 0n])), t(() => JSON.stringify(c.filters.T(big)))],
    };
  }`;
  const params = { key: KEY, to: TO };
  const got = await run(code, params);
  const want = await referee(code, params);
  for (const name of Object.keys(want)) assert.deepEqual(got[name], want[name], name);
  assert.deepEqual(got, want);
  assert.deepEqual(got.reproductions, ['300', '345678000000', '1073741829',
    '0x0000000000000000000000000000000000000000000000000000000040000005', '1.5']);
});

test('an action\'s class extending ethers.Signer overrides its methods (sloppy and strict code), as in Node', async () => {
  for (const prologue of ['', '"use strict";\n']) {
    const code = `${prologue}class KeySigner extends ethers.Signer {
        constructor(key, provider) { super(); ethers.utils.defineReadOnly(this, 'wallet', new ethers.Wallet(key)); this.provider = provider; }
        async getAddress() { return this.wallet.address; }
        async signMessage(message) { return this.wallet.signMessage(message); }
        async signTransaction(tx) { return this.wallet.signTransaction(tx); }
        connect(provider) { return new KeySigner(this.wallet.privateKey, provider); }
        toString() { return 'KeySigner'; }
      }
      async function main({ key }) {
        const s = new KeySigner(key);
        const signature = await s.signMessage('hi');
        return { address: await s.getAddress(), recovered: ethers.utils.verifyMessage('hi', signature), signature,
                 isSigner: ethers.Signer.isSigner(s), text: String(s), connected: s.connect(null) instanceof KeySigner,
                 tx: await s.signTransaction({ to: '${TO}', value: 1, nonce: 0, gasLimit: 21000, gasPrice: 1, chainId: 1 }) }; }`;
    assert.deepEqual(await run(code, { key: KEY }), await referee(code, { key: KEY }), prologue || 'sloppy');
  }
});

test('a BigInt from toBigInt in code that never names BigInt: typeof, a JSON replacer and arithmetic as in Node', async () => {
  const code = `async function main() {
    const v = ethers.BigNumber.from('123456789012345678901234567890').toBigInt();
    const w = ethers.utils.parseEther('1.5').toBigInt();
    return { kind: typeof v === 'bigint' ? 'bigint' : typeof v, json: JSON.stringify({ v, w }, (k, x) => typeof x === 'bigint' ? x.toString() : x),
             sum: String(v + w), less: w < v, back: ethers.BigNumber.from(v + v).toString() }; }`;
  assert.deepEqual(await run(code, {}), await referee(code, {}));
});

const READ_ABI = [
  'function MAX_GROUPS() view returns (uint256)',
  'function getApiPayers() view returns (address[])',
  'function accountExists(uint256 accountId) view returns (bool)',
  'function isApiPayer(address) view returns (bool)',
];

test('a Contract read through JsonRpcProvider reaches the dev chain over fetch and answers as in Node', async () => {
  const code = `async function main({ rpcUrl, address, abi }) {
    const provider = new ethers.providers.JsonRpcProvider(rpcUrl);
    const c = new ethers.Contract(address, abi, provider);
    const payers = await c.getApiPayers();
    const network = await provider.getNetwork();
    const iface = new ethers.utils.Interface(abi);
    const raw = await provider.call({ to: address, data: iface.encodeFunctionData('MAX_GROUPS', []) });
    return {
      maxGroups: (await c.MAX_GROUPS()).toString(), payers, exists: await c.accountExists(1), existsBigInt: [await c.accountExists(1n), await c.accountExists(300n)],
      isPayer: await c.isApiPayer(payers[0]), callStatic: (await c.callStatic.MAX_GROUPS()).toString(),
      raw, decoded: iface.decodeFunctionResult('MAX_GROUPS', raw)[0].toString(),
      chainId: network.chainId, code: (await provider.getCode(address)).length > 2,
      balance: (await provider.getBalance(payers[0])).gt(0),
    };
  }`;
  const params = { rpcUrl: stack.rpcUrl, address: stack.contract, abi: READ_ABI };
  const got = await run(code, params);
  const want = await referee(code, params);
  assert.deepEqual(got, want);
  assert.equal(got.chainId, Number(stack.chainId));
  assert.ok(got.payers.length > 0);
});

// One action, four modes, so its CID (and so its key) stays the same across the calls.
const WALLET_CODE = `async function main({ mode, rpcUrl, to, value }) {
  const provider = new ethers.providers.JsonRpcProvider(rpcUrl);
  const key = await Lit.Actions.getLitActionPrivateKey();
  const wallet = new ethers.Wallet(key).connect(provider);
  if (mode === 'address') return { address: await wallet.getAddress(), key };
  if (mode === 'build') {
    const tx = await wallet.populateTransaction({ to, value: ethers.BigNumber.from(value) });
    const signed = await wallet.signTransaction(tx);
    return { signed, tx: JSON.parse(JSON.stringify(tx)) };
  }
  if (mode === 'bigint') {
    // BigInt fields stay BigInts in the populated transaction, as in Node; fees turned into
    // BigInts by toBigInt sign to the same bytes.
    const tx = await wallet.populateTransaction({ to, value: BigInt(value) * 2n ** 30n, gasLimit: 21000n });
    const signed = await wallet.signTransaction(tx);
    const fees = { maxFeePerGas: tx.maxFeePerGas.toBigInt(), maxPriorityFeePerGas: tx.maxPriorityFeePerGas.toBigInt(), nonce: BigInt(tx.nonce) };
    const same = signed === await wallet.signTransaction({ ...tx, ...fees });
    const asBigNumbers = { ...tx, value: ethers.BigNumber.from(tx.value), gasLimit: ethers.BigNumber.from(tx.gasLimit) };
    return { signed, same, kept: [typeof tx.value, typeof tx.gasLimit], tx: JSON.parse(JSON.stringify(asBigNumbers)) };
  }
  const sent = await wallet.sendTransaction({ to, value: ethers.utils.parseUnits(value, 'wei') });
  const receipt = await sent.wait();
  return { hash: sent.hash, from: sent.from, status: receipt.status, blockNumber: receipt.blockNumber,
           confirmations: receipt.confirmations, balance: (await provider.getBalance(to)).toString() };
}`;

async function fundActionWallet() {
  const { address, key } = await run(WALLET_CODE, { mode: 'address', rpcUrl: stack.rpcUrl });
  assert.equal(address, new ethers5.Wallet(key).address);
  await chainRpc(stack, 'anvil_setBalance', [address, '0x' + (10n ** 19n).toString(16)]);
  return { address, key };
}

test('a transaction built and signed by ethers v5 inside an action is the one Node signs, and the test broadcasts it', async () => {
  const { address, key } = await fundActionWallet();
  const to = ethers5.Wallet.createRandom().address;
  const got = await run(WALLET_CODE, { mode: 'build', rpcUrl: stack.rpcUrl, to, value: '12345' });
  // populateTransaction asked the chain: nonce, fees, gas limit and chain id are filled in.
  assert.equal(got.tx.from, address);
  assert.equal(got.tx.type, 2);
  assert.equal(got.tx.chainId, Number(stack.chainId));
  assert.equal(ethers5.BigNumber.from(got.tx.gasLimit).toNumber(), 21000);
  // Node's ethers v5 signs the same fields to the same bytes.
  const tx = { ...got.tx };
  delete tx.from;
  assert.equal(got.signed, await new ethers5.Wallet(key).signTransaction(tx));
  const parsed = ethers5.utils.parseTransaction(got.signed);
  assert.equal(parsed.from, address);
  assert.equal(parsed.to, to);
  const hash = await chainRpc(stack, 'eth_sendRawTransaction', [got.signed]);
  assert.equal(hash, parsed.hash);
  const receipt = await minedReceipt(stack, hash);
  assert.equal(receipt.status, '0x1');
  assert.equal(BigInt(await chainRpc(stack, 'eth_getBalance', [to, 'latest'])), 12345n);
});

test('populateTransaction and signTransaction take BigInt fields as in Node; the test broadcasts the result', async () => {
  const { address, key } = await fundActionWallet();
  const to = ethers5.Wallet.createRandom().address;
  const got = await run(WALLET_CODE, { mode: 'bigint', rpcUrl: stack.rpcUrl, to, value: '12345' });
  assert.equal(got.same, true);
  assert.deepEqual(got.kept, ['bigint', 'bigint']);
  assert.equal(got.tx.from, address);
  assert.equal(ethers5.BigNumber.from(got.tx.value).toBigInt(), 12345n * 2n ** 30n);
  assert.equal(ethers5.BigNumber.from(got.tx.gasLimit).toNumber(), 21000);
  const tx = { ...got.tx };
  delete tx.from;
  assert.equal(got.signed, await new ethers5.Wallet(key).signTransaction(tx));
  const hash = await chainRpc(stack, 'eth_sendRawTransaction', [got.signed]);
  const receipt = await minedReceipt(stack, hash);
  assert.equal(receipt.status, '0x1');
  assert.equal(BigInt(await chainRpc(stack, 'eth_getBalance', [to, 'latest'])), 12345n * 2n ** 30n);
});

test('an action sends a transaction with Wallet.sendTransaction and waits for it (tx.wait) on the dev chain', async () => {
  const { address } = await fundActionWallet();
  const to = ethers5.Wallet.createRandom().address;
  const got = await run(WALLET_CODE, { mode: 'send', rpcUrl: stack.rpcUrl, to, value: '777' });
  assert.equal(got.from, address);
  assert.equal(got.status, 1);
  assert.ok(got.confirmations >= 1);
  assert.equal(got.balance, '777');
  const receipt = await minedReceipt(stack, got.hash);
  assert.equal(receipt.status, '0x1');
  assert.equal(Number(receipt.blockNumber), got.blockNumber);
  assert.equal(receipt.from.toLowerCase(), address.toLowerCase());
  assert.equal(BigInt(await chainRpc(stack, 'eth_getBalance', [to, 'latest'])), 777n);
});

test('providers go through the sandbox fetch: its address policy and fetch count apply', async () => {
  const port = new URL(stack.rpcUrl).port;
  const refused = await runRaw(`async function main({ url }) {
    return await new ethers.providers.StaticJsonRpcProvider(url, 31337).send('eth_chainId', []); }`, { url: `http://127.0.0.2:${port}` });
  assert.equal(refused.has_error, true, JSON.stringify(refused));
  assert.match(JSON.stringify(refused.error), /127\.0\.0\.2/);
  const many = await runRaw(`async function main({ url }) {
    const p = new ethers.providers.StaticJsonRpcProvider(url, 31337);
    for (let i = 0; i < 60; i++) await p.send('eth_blockNumber', []);
    return 'all sent'; }`, { url: stack.rpcUrl });
  assert.equal(many.has_error, true, JSON.stringify(many));
  assert.equal(many.error.code, 'fetch_limit', JSON.stringify(many));
});

test('mnemonics and ENS names (String.prototype.normalize) answer as ethers v5 in Node', async () => {
  const code = `async function main({ phrase }) {
    const u = ethers.utils;
    const hd = ethers.utils.HDNode.fromMnemonic(phrase);
    return {
      root: hd.address, first: ethers.Wallet.fromMnemonic(phrase).address,
      second: hd.derivePath("m/44'/60'/0'/0/1").address, valid: u.isValidMnemonic(phrase), invalid: u.isValidMnemonic(phrase.replace('junk', 'jumk')),
      entropy: u.mnemonicToEntropy(phrase), back: u.entropyToMnemonic(u.mnemonicToEntropy(phrase)) === phrase,
      namehash: [u.namehash('vitalik.eth'), u.namehash('Sub.Example.ETH'), u.namehash('caf\\u00e9.eth')], dns: u.dnsEncode('vitalik.eth'),
      nfkd: u.hexlify(u.toUtf8Bytes('\\u00e9\\ufb01', u.UnicodeNormalizationForm.NFKD)),
    };
  }`;
  const params = { phrase: 'test test test test test test test test test test test junk' };
  const got = await run(code, params);
  assert.deepEqual(got, await referee(code, params));
  assert.equal(got.first, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');  // anvil's first account, m/44'/60'/0'/0/0
});
