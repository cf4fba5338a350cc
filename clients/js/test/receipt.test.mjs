// checkReceipt offline (src/receipt.js): a receipt signed here with ethers as keyd signs one passes
// against its signer, and each way of tampering with it is named in a failing check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { checkReceipt, paramsHash, responseHash, RECEIPT_TYPES } from '../src/receipt.js';
import { SigilClient } from '../src/index.js';

const key = ethers.Wallet.createRandom();
const params = { name: 'world', n: [1, 2] };
const response = { greeting: 'Hello, world!' };
const domain = { name: 'Sigil Receipt', version: '1', chainId: 31337, verifyingContract: '0x' + 'cc'.repeat(20) };
const message = {
  cid: 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG', paramsHash: paramsHash(params), responseHash: responseHash(response),
  pkp: '0x' + '00'.repeat(20), apiKeyHash: ethers.keccak256(ethers.toUtf8Bytes('k')), requestId: 'r-1', issuedAt: 1_800_000_000,
  appId: '0x' + '44'.repeat(20), ending: 'completed',
};
const receipt = {
  domain, types: RECEIPT_TYPES, primaryType: 'Receipt', message,
  signature: await key.signTypedData(domain, RECEIPT_TYPES, message), signer: key.address.toLowerCase(),
};
const evidence = { receiptKey: key.address.toLowerCase(), appId: message.appId };

test('the hashes are those of the bytes the service hashes', () => {
  assert.equal(paramsHash(params), ethers.sha256(ethers.toUtf8Bytes('{"name":"world","n":[1,2]}')));
  assert.equal(paramsHash(undefined), ethers.sha256(ethers.toUtf8Bytes('{}')));
  assert.equal(responseHash('hi'), ethers.sha256(ethers.toUtf8Bytes('"hi"')));
  assert.equal(responseHash(Buffer.from('raw')), ethers.sha256(ethers.toUtf8Bytes('raw')));
});

test('a good receipt passes, alone or inside the run answer', () => {
  const r = checkReceipt(receipt, { evidence, params, response });
  assert.equal(r.ok, true, JSON.stringify(r.checks));
  const inAnswer = checkReceipt({ response, logs: '', has_error: false, receipt }, { evidence, params });
  assert.equal(inAnswer.ok, true);
  assert.ok(inAnswer.checks.some((c) => c.what === 'responseHash' && c.status === 'pass'));
});

test('tampering fails with the check that caught it', () => {
  const failing = (r, opts = {}) => checkReceipt(r, { evidence, params, response, ...opts }).checks.filter((c) => c.status === 'fail').map((c) => c.what);
  assert.deepEqual(failing({ ...receipt, message: { ...message, ending: 'time_limit' } }), ['signature']);
  assert.deepEqual(failing(receipt, { params: { ...params, name: 'x' } }), ['paramsHash']);
  assert.deepEqual(failing(receipt, { response: 'other' }), ['responseHash']);
  assert.deepEqual(failing(receipt, { evidence: { ...evidence, appId: '0x' + '55'.repeat(20) } }), ['appId']);
  assert.deepEqual(failing({ ...receipt, types: { Receipt: RECEIPT_TYPES.Receipt.slice(1) } }), ['shape']);
  assert.deepEqual(failing(receipt, { evidence: {} }), ['signer']);
  assert.deepEqual(failing(null), ['shape']);
  // Signed by another key, which the receipt names as its signer: still refused.
  const other = ethers.Wallet.createRandom();
  const forged = { ...receipt, signature: other.signingKey.sign(ethers.TypedDataEncoder.hash(domain, RECEIPT_TYPES, message)).serialized, signer: other.address };
  assert.deepEqual(failing(forged), ['signature']);
});

test('the client verifies in one call and refuses to without attested evidence', () => {
  const client = new SigilClient({ baseUrl: 'https://127.0.0.1:1' });
  assert.equal(client.verifyReceipt(receipt, { evidence, params, response }).ok, true);
  assert.equal(client.verifyReceipt(receipt, { signer: key.address }).ok, true);
  assert.throws(() => client.verifyReceipt(receipt), /needs the attested evidence/);
  assert.throws(() => client.verifyReceipt(receipt, { evidence: { rules: [], ok: false, receiptKey: evidence.receiptKey } }), /did not verify/);
});

test('the SDK imports no node: module, so it runs in a browser (the dashboard loads it as it is)', async () => {
  const { readdirSync, readFileSync } = await import('node:fs');
  const dir = new URL('../src/', import.meta.url);
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    const text = readFileSync(new URL(name, dir), 'utf8');
    assert.doesNotMatch(text, /from\s+['"]node:|import\(\s*['"]node:|require\(/, `src/${name}`);
  }
});
