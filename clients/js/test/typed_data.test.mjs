// Pure unit tests of the EIP-712 builders and the X-Wallet-Auth header: each flow's document against
// hand-written JSON (DESIGN.md section 4), the digest against an independent encoding from the
// EIP-712 definition, signatures made by an ethers Wallet recovering to it, and refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import {
  buildTypedData, typedDataDigest, signTypedData, walletAuthHeader, parseWalletAuthHeader, signWalletAuth,
  PrimaryType, ClientError, ErrorCode, MAX_TYPED_DATA_BYTES,
} from '@sigil/sdk';

// A fixed key, so the expected JSON is written out in full.
const wallet = new ethers.Wallet('0x' + '11'.repeat(32));
const ADDRESS = '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A';
const ISSUED_AT = 1764068400;

const expected = (primaryType, chainId = 31337) => JSON.parse(`{
  "types": {
    "EIP712Domain": [
      {"name": "name", "type": "string"},
      {"name": "version", "type": "string"},
      {"name": "chainId", "type": "uint256"}
    ],
    "${primaryType}": [
      {"name": "address", "type": "address"},
      {"name": "issuedAt", "type": "uint256"}
    ]
  },
  "primaryType": "${primaryType}",
  "domain": {"name": "Sigil ChainSecured", "version": "1", "chainId": ${chainId}},
  "message": {"address": "${ADDRESS}", "issuedAt": ${ISSUED_AT}}
}`);

test('the fixed wallet is the address the expected documents name', () => {
  assert.equal(wallet.address, ADDRESS);
});

test('each of the four flows builds exactly the canonical document, keys in the canonical order', () => {
  for (const primaryType of ['CreateWallet', 'ConvertAccount', 'AddUsageApiKey', 'BillingAuth']) {
    const td = buildTypedData(primaryType, { chainId: 31337, address: ADDRESS.toLowerCase(), issuedAt: ISSUED_AT });
    assert.deepEqual(td, expected(primaryType));
    // Serialized byte for byte as the server measures and reads it (order matters to the schema check).
    assert.equal(JSON.stringify(td), JSON.stringify(expected(primaryType)));
    assert.ok(JSON.stringify(td).length < MAX_TYPED_DATA_BYTES);
  }
  assert.deepEqual(Object.keys(PrimaryType), ['CreateWallet', 'ConvertAccount', 'AddUsageApiKey', 'BillingAuth']);
});

test('chainId and issuedAt: numbers while exact, decimal strings beyond 2^53, bigint and string inputs accepted', () => {
  assert.equal(buildTypedData('CreateWallet', { chainId: 8453n, address: ADDRESS, issuedAt: `${ISSUED_AT}` }).domain.chainId, 8453);
  const big = buildTypedData('CreateWallet', { chainId: 2n ** 60n, address: ADDRESS, issuedAt: ISSUED_AT });
  assert.equal(big.domain.chainId, '1152921504606846976');
  const now = Math.floor(Date.now() / 1000);
  const d = buildTypedData('CreateWallet', { chainId: 1, address: ADDRESS });
  assert.ok(Math.abs(d.message.issuedAt - now) <= 1, 'issuedAt defaults to now');
});

test('the digest equals an independent EIP-712 encoding (typeHash, domain separator, 0x1901)', () => {
  const td = buildTypedData('ConvertAccount', { chainId: 31337, address: ADDRESS, issuedAt: ISSUED_AT });
  const k = (s) => ethers.keccak256(ethers.toUtf8Bytes(s));
  const abi = ethers.AbiCoder.defaultAbiCoder();
  const domainSeparator = ethers.keccak256(abi.encode(['bytes32', 'bytes32', 'bytes32', 'uint256'],
    [k('EIP712Domain(string name,string version,uint256 chainId)'), k('Sigil ChainSecured'), k('1'), 31337]));
  const structHash = ethers.keccak256(abi.encode(['bytes32', 'address', 'uint256'],
    [k('ConvertAccount(address address,uint256 issuedAt)'), ADDRESS, ISSUED_AT]));
  const digest = ethers.keccak256(ethers.concat(['0x1901', domainSeparator, structHash]));
  assert.equal(typedDataDigest(td), digest);
  // Another flow's digest differs (primaryType pins the signature to one flow).
  assert.notEqual(typedDataDigest({ ...td, primaryType: 'CreateWallet', types: expected('CreateWallet').types }), digest);
});

test('signTypedData: an ethers Wallet signs; the signature recovers to message.address', async () => {
  const env = await signTypedData(wallet, 'AddUsageApiKey', { chainId: 31337, issuedAt: ISSUED_AT });
  assert.deepEqual(Object.keys(env), ['typed_data', 'signature']);
  assert.deepEqual(env.typed_data, expected('AddUsageApiKey'));
  assert.match(env.signature, /^0x[0-9a-f]{130}$/);
  assert.equal(ethers.verifyTypedData(env.typed_data.domain, { AddUsageApiKey: env.typed_data.types.AddUsageApiKey },
    env.typed_data.message, env.signature), ADDRESS);
  assert.equal(ethers.recoverAddress(typedDataDigest(env.typed_data), env.signature), ADDRESS);
});

test('a signer whose signature does not recover to its address (a contract wallet) is refused before sending', async () => {
  const liar = { getAddress: async () => ADDRESS, signTypedData: (d, t, m) => new ethers.Wallet('0x' + '22'.repeat(32)).signTypedData(d, t, m) };
  await assert.rejects(signTypedData(liar, 'CreateWallet', { chainId: 1 }),
    (e) => e instanceof ClientError && e.code === ErrorCode.SIGNATURE_MISMATCH);
});

test('refusals: unknown primaryType, no chainId, bad address, no signer', async () => {
  const invalid = (e) => e instanceof ClientError && e.code === ErrorCode.INVALID_ARGUMENT && e.status === 0;
  assert.throws(() => buildTypedData('Mail', { chainId: 1, address: ADDRESS }), invalid);
  assert.throws(() => buildTypedData('toString', { chainId: 1, address: ADDRESS }), invalid);
  assert.throws(() => buildTypedData('CreateWallet', { address: ADDRESS }), invalid);
  assert.throws(() => buildTypedData('CreateWallet', { chainId: 1, address: '0x1234' }), invalid);
  assert.throws(() => buildTypedData('CreateWallet', { chainId: -1, address: ADDRESS }), invalid);
  await assert.rejects(signTypedData({}, 'CreateWallet', { chainId: 1 }), invalid);
});

test('X-Wallet-Auth is base64 of the JSON {typed_data, signature} of a BillingAuth envelope', async () => {
  const value = await signWalletAuth(wallet, { chainId: 31337, issuedAt: ISSUED_AT });
  assert.match(value, /^[A-Za-z0-9+/]+={0,2}$/);
  const decoded = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
  assert.deepEqual(Object.keys(decoded), ['typed_data', 'signature']);
  assert.deepEqual(decoded.typed_data, expected('BillingAuth'));
  assert.equal(ethers.recoverAddress(typedDataDigest(decoded.typed_data), decoded.signature), ADDRESS);
  assert.deepEqual(parseWalletAuthHeader(value), decoded);
  // Exactly the bytes of JSON.stringify of the envelope: no padding, no other members.
  assert.equal(value, Buffer.from(JSON.stringify({ typed_data: decoded.typed_data, signature: decoded.signature })).toString('base64'));
  // Only a BillingAuth envelope may travel in the header.
  const other = await signTypedData(wallet, 'CreateWallet', { chainId: 31337, issuedAt: ISSUED_AT });
  assert.throws(() => walletAuthHeader(other), (e) => e.code === ErrorCode.INVALID_ARGUMENT);
  assert.throws(() => parseWalletAuthHeader('not base64 json'), (e) => e.code === ErrorCode.INVALID_ARGUMENT);
});
