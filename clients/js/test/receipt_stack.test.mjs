// Run receipts through the whole stack (docs/receipts.md): a run asked with receipt: true answers a
// receipt signed by keyd's receipt key, whose address is in the evidence set (receipt-key.json,
// covered by sha256sum.txt and so by the evidence quote). It verifies with ethers, with the SDK
// (against sigil-verify's report) and with `sigil-verify --receipt`; a changed byte anywhere (each
// field, the signature, the params, the response) fails; a run without receipt answers none.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  startStack, ethers, assertError, assertOk, newAccount, addGroup, addUsageKey, createWallet, actionCid, keccakText,
  UUID_V4,
} from '../../../tests/api/stack.mjs';
import { startDnsServer, TEE_SIM } from './verify_support.mjs';
import { SigilClient, checkReceipt, RECEIPT_TYPES, paramsHash, responseHash } from '../src/index.js';
import { verifyDeployment } from '../src/verify/index.js';
import { ACME_ACCOUNT_URI } from '../../../tests/api/stack.mjs';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '../src/verify/cli.js');
const run = promisify(execFile);
const MEASURED = JSON.parse(execFileSync(process.execPath, [TEE_SIM, '--print-measurements']).toString());

let stack;
let dns;
let tmp;
const s = {};

before(async () => {
  stack = await startStack({ workers: 1, teeSim: true });
  dns = await startDnsServer(new Map([
    ['localhost', { caa: [{ flags: 0, tag: 'issue', value: `letsencrypt.org; validationmethods=dns-01; accounturi=${ACME_ACCOUNT_URI}` }] }],
  ]));
  tmp = mkdtempSync(join(tmpdir(), 'sigil-receipt-'));
  s.owner = (await newAccount(stack, 'receipts')).api_key;
  s.group = await addGroup(stack, s.owner, 'runners');
  s.pkp = (await createWallet(stack, s.owner)).toLowerCase();
  assertOk(await stack.request('POST', 'add_pkp_to_group', { key: s.owner, body: { group_id: s.group, pkp_id: s.pkp } }));
  s.executor = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
  s.code = 'async function main({ name }) { return { greeting: "Hello, " + name + "!", n: 42 }; }';
  s.failing = 'async function main() { throw new Error("boom"); }';
  for (const code of [s.code, s.failing]) {
    assertOk(await stack.request('POST', 'add_action_to_group', {
      key: s.owner, body: { group_id: s.group, action_ipfs_cid: await actionCid(stack, code) },
    }));
  }
  s.params = { name: 'receipt', list: [1, 2.5, 'x'], nested: { ok: true } };
  const r = await stack.request('POST', 'sigil_action', {
    key: s.executor, body: { code: s.code, js_params: s.params, pkp_id: s.pkp, receipt: true },
  });
  assert.equal(r.status, 200, r.text);
  s.answer = r.json;
  s.requestId = r.headers['x-request-id'];
  // The attested evidence, as sigil-verify reads it (the expectations are the test's own).
  s.report = await verifyDeployment(stack.url, {
    ca: readFileSync(join(stack.home, 'nginx/tls/cert.pem'), 'utf8'), governanceRpc: stack.rpcUrl, dnsServer: dns.server,
    allowSimulated: true, allowUnchecked: [4], appId: stack.governance, ...MEASURED,
  });
});

after(async () => {
  await dns?.close();
  await stack?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const cliArgs = (...extra) => [CLI, stack.url, '--ca-file', join(stack.home, 'nginx/tls/cert.pem'), '--governance-rpc', stack.rpcUrl,
  '--dns-server', dns.server, '--app-id', stack.governance, '--allow-unchecked', '4', '--allow-simulated',
  ...Object.entries(MEASURED).flatMap(([k, v]) => [`--${k}`, v]), ...extra];

async function cli(...extra) {
  try {
    const { stdout } = await run(process.execPath, cliArgs(...extra));
    return { code: 0, stdout };
  } catch (e) {
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test('the receipt key address is in the evidence set, covered by sha256sum.txt', async () => {
  assert.equal(s.report.ok, true, s.report.summary);
  assert.match(s.report.receiptKey, /^0x[0-9a-f]{40}$/);
  const sums = (await stack.request('GET', '/evidences/sha256sum.txt')).text;
  const file = (await stack.request('GET', '/evidences/receipt-key.json')).text;
  const line = sums.split('\n').find((l) => l.endsWith('  receipt-key.json'));
  assert.ok(line, sums);
  assert.equal(line.split('  ')[0], createHash('sha256').update(file).digest('hex'));
  assert.equal(JSON.parse(file).address, s.report.receiptKey);
  // And it is the key that signs: the receipt key address is no payer's and no PKP's.
  assert.notEqual(s.report.receiptKey, s.pkp);
});

test('a run asked with receipt: true answers a receipt that verifies with ethers', () => {
  const { receipt } = s.answer;
  assert.ok(receipt, JSON.stringify(s.answer));
  assert.equal(s.answer.has_error, false);
  assert.deepEqual(receipt.types, RECEIPT_TYPES);
  assert.equal(receipt.primaryType, 'Receipt');
  assert.deepEqual(receipt.domain, { name: 'Sigil Receipt', version: '1', chainId: stack.chainId, verifyingContract: stack.contract.toLowerCase() });
  const m = receipt.message;
  assert.equal(m.cid, s.answer.receipt.message.cid);
  assert.match(m.cid, /^Qm/);
  assert.equal(m.paramsHash, paramsHash(s.params));
  assert.equal(m.responseHash, responseHash(s.answer.response));
  assert.equal(m.pkp, s.pkp);
  assert.equal(m.apiKeyHash, keccakText(s.executor));
  assert.equal(m.requestId, s.requestId);
  assert.match(m.requestId, UUID_V4);
  assert.ok(Math.abs(m.issuedAt - Date.now() / 1000) < 120);
  assert.equal(m.appId, stack.governance.toLowerCase());
  assert.equal(m.ending, 'completed');
  const signer = ethers.verifyTypedData(receipt.domain, { Receipt: receipt.types.Receipt }, m, receipt.signature);
  assert.equal(signer.toLowerCase(), s.report.receiptKey);
  assert.equal(receipt.signer, s.report.receiptKey);
});

test('the SDK verifies it in one call against the evidence report', () => {
  const client = new SigilClient({ baseUrl: stack.url });
  const r = client.verifyReceipt(s.answer, { evidence: s.report, params: s.params });
  assert.equal(r.ok, true, JSON.stringify(r.checks));
  assert.deepEqual(r.checks.map((c) => c.what), ['shape', 'signature', 'appId', 'paramsHash', 'responseHash']);
  assert.throws(() => client.verifyReceipt(s.answer, {}), /needs the attested evidence/);
  assert.throws(() => client.verifyReceipt(s.answer, { evidence: { ...s.report, ok: false } }), /did not verify/);
});

test('a changed byte anywhere fails: every field, the signature, the params, the response', () => {
  const base = s.answer.receipt;
  const ok = (receipt, extra = {}) => checkReceipt(receipt, { evidence: s.report, params: s.params, response: s.answer.response, ...extra }).ok;
  assert.equal(ok(base), true);
  const flipHex = (h) => h.slice(0, -1) + (h.at(-1) === '0' ? '1' : '0');
  const changed = {
    cid: base.message.cid.slice(0, -1) + (base.message.cid.at(-1) === 'a' ? 'b' : 'a'),
    paramsHash: flipHex(base.message.paramsHash), responseHash: flipHex(base.message.responseHash),
    pkp: flipHex(base.message.pkp), apiKeyHash: flipHex(base.message.apiKeyHash),
    requestId: base.message.requestId.slice(0, -1) + (base.message.requestId.at(-1) === '0' ? '1' : '0'),
    issuedAt: base.message.issuedAt + 1, appId: flipHex(base.message.appId), ending: 'script_error',
  };
  assert.deepEqual(Object.keys(changed).sort(), RECEIPT_TYPES.Receipt.map((f) => f.name).sort());
  for (const [field, value] of Object.entries(changed)) {
    assert.equal(ok({ ...base, message: { ...base.message, [field]: value } }), false, field);
  }
  for (const [field, value] of Object.entries({ chainId: base.domain.chainId + 1, verifyingContract: flipHex(base.domain.verifyingContract), name: 'Sigil Receipt2', version: '2' })) {
    assert.equal(ok({ ...base, domain: { ...base.domain, [field]: value } }), false, field);
  }
  // Every byte of the signature.
  const sig = ethers.getBytes(base.signature);
  for (let i = 0; i < sig.length; i++) {
    const bad = Uint8Array.from(sig);
    bad[i] ^= 1;
    assert.equal(ok({ ...base, signature: ethers.hexlify(bad) }), false, `signature byte ${i}`);
  }
  assert.equal(ok(base, { params: { ...s.params, name: 'receipt!' } }), false, 'params');
  assert.equal(ok(base, { response: { ...s.answer.response, n: 43 } }), false, 'response');
  // Another signer claimed by the receipt changes nothing: only the attested key counts.
  assert.equal(ok({ ...base, signer: '0x' + '11'.repeat(20) }), true);
  assert.equal(ok(base, { evidence: { ...s.report, receiptKey: '0x' + '11'.repeat(20) } }), false, 'another attested key');
});

test('sigil-verify --receipt passes on the receipt and fails on a changed byte (exit 1)', async () => {
  const good = join(tmp, 'answer.json');
  writeFileSync(good, JSON.stringify(s.answer));
  const params = join(tmp, 'params.json');
  writeFileSync(params, JSON.stringify(s.params));
  const pass = await cli('--receipt', good, '--params', params);
  assert.equal(pass.code, 0, pass.stdout + pass.stderr);
  assert.match(pass.stdout, /receipt pass signature: signed by the attested receipt key 0x[0-9a-f]{40}/);
  assert.match(pass.stdout, /receipt pass paramsHash/);
  assert.match(pass.stdout, /receipt pass responseHash/);
  assert.match(pass.stdout, /^receipt: OK$/m);

  const badResponse = join(tmp, 'bad-response.json');
  writeFileSync(badResponse, JSON.stringify({ ...s.answer, response: { ...s.answer.response, n: 41 } }));
  const r1 = await cli('--receipt', badResponse);
  assert.equal(r1.code, 1, r1.stdout);
  assert.match(r1.stdout, /receipt FAIL responseHash/);

  const badSig = join(tmp, 'bad-signature.json');
  const sig = s.answer.receipt.signature;
  writeFileSync(badSig, JSON.stringify({ ...s.answer.receipt, signature: sig.slice(0, 10) + (sig[10] === 'a' ? 'b' : 'a') + sig.slice(11) }));
  const r2 = await cli('--receipt', badSig);
  assert.equal(r2.code, 1, r2.stdout);
  assert.match(r2.stdout, /receipt FAIL signature/);

  const badParams = join(tmp, 'bad-params.json');
  writeFileSync(badParams, JSON.stringify({ ...s.params, name: 'x' }));
  const r3 = await cli('--receipt', good, '--params', badParams);
  assert.equal(r3.code, 1, r3.stdout);
  assert.match(r3.stdout, /receipt FAIL paramsHash/);

  const usage = await cli('--params', params);
  assert.equal(usage.code, 2);
});

test('a run without receipt answers none; a failed run\'s receipt binds its ending; bad receipt values are 400', async () => {
  const plain = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: s.code, js_params: s.params } });
  assert.equal(plain.status, 200);
  assert.equal('receipt' in plain.json, false);
  const off = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: s.code, js_params: s.params, receipt: false } });
  assert.equal('receipt' in off.json, false);

  const failed = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: s.failing, receipt: true } });
  assert.equal(failed.status, 200);
  assert.equal(failed.json.has_error, true);
  const r = checkReceipt(failed.json, { evidence: s.report, params: {} });
  assert.equal(r.ok, true, JSON.stringify(r.checks));
  assert.equal(failed.json.receipt.message.ending, 'script_error');
  assert.equal(failed.json.receipt.message.responseHash, responseHash(''));
  assert.equal(failed.json.receipt.message.pkp, '0x' + '00'.repeat(20));

  // The compatibility name answers it too (a failed run there is a 400 with the receipt).
  const compat = await stack.request('POST', 'lit_action', { key: s.executor, body: { code: s.failing, receipt: true } });
  assert.equal(compat.status, 400);
  assert.equal(checkReceipt(compat.json, { evidence: s.report }).ok, true);

  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: s.code, receipt: 'yes' } }), 400, 'invalid_field');
});

// keyd spoken to as a compromised worker would: one frame, one reply.
async function askKeyd(type, fields) {
  const { createConnection } = await import('node:net');
  const parts = [Buffer.from([type])];
  for (const f of fields) {
    const h = Buffer.alloc(4);
    h.writeUInt32BE(f.length);
    parts.push(h, f);
  }
  const payload = Buffer.concat(parts);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(payload.length);
  return new Promise((resolve, reject) => {
    const sock = createConnection(stack.keydSocket);
    let got = Buffer.alloc(0);
    sock.on('error', reject);
    sock.on('data', (chunk) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < 4 || got.length < 4 + got.readUInt32BE(0)) return;
      sock.destroy();
      resolve(got.subarray(4));
    });
    sock.write(Buffer.concat([len, payload]));
  });
}
const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(v)); return b; };

test('keyd signs receipts only from their fields, under its own domain, never an arbitrary digest', async () => {
  // A digest to sign, alone or in place of the fields: malformed (FAILURE code 1).
  const digest = ethers.randomBytes(32);
  let reply = await askKeyd(0x30, [Buffer.from(digest)]);
  assert.deepEqual([reply[0], reply[5]], [0x80, 1]);
  reply = await askKeyd(0x30, [Buffer.from(digest), Buffer.from(digest)]);
  assert.deepEqual([reply[0], reply[5]], [0x80, 1]);
  // Fields it accepts: the signature is over the Receipt keyd built, with keyd's chain id and contract.
  const now = Math.floor(Date.now() / 1000);
  const message = {
    cid: 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG', paramsHash: '0x' + '11'.repeat(32), responseHash: '0x' + '22'.repeat(32),
    pkp: '0x' + '33'.repeat(20), apiKeyHash: keccakText('a key the worker saw'), requestId: 'forged-request', issuedAt: now,
    appId: '0x' + '44'.repeat(20), ending: 'completed',
  };
  const hex = (h) => Buffer.from(h.slice(2), 'hex');
  const fields = [Buffer.from(message.cid), hex(message.paramsHash), hex(message.responseHash), hex(message.pkp),
    Buffer.from('a key the worker saw'), Buffer.from(message.requestId), u64(now), hex(message.appId), Buffer.from(message.ending)];
  reply = await askKeyd(0x30, fields);
  assert.equal(reply[0], 0xb0);  // RECEIPT_SIGNATURE (keyd/receipt_protocol.h)
  const signature = ethers.hexlify(reply.subarray(5, 70));
  const domain = { name: 'Sigil Receipt', version: '1', chainId: stack.chainId, verifyingContract: stack.contract };
  assert.equal(ethers.verifyTypedData(domain, RECEIPT_TYPES, message, signature).toLowerCase(), s.report.receiptKey);
  // The same signature is no signature of that digest, nor of a message, by the receipt key.
  assert.notEqual(ethers.recoverAddress(ethers.TypedDataEncoder.hash({ ...domain, chainId: stack.chainId + 1 }, RECEIPT_TYPES, message), signature).toLowerCase(), s.report.receiptKey);
  // A time far from keyd's clock is refused (4).
  fields[6] = u64(now - 3600);
  reply = await askKeyd(0x30, fields);
  assert.deepEqual([reply[0], reply[5]], [0x80, 4]);
  // GET_RECEIPT_PUBLIC answers the attested address.
  reply = await askKeyd(0x31, []);
  assert.equal(reply[0], 0x83);
  assert.equal(ethers.hexlify(reply.subarray(5, 25)), s.report.receiptKey);
});

test('keyd down after the run: the result is still answered, with receipt_error instead of a receipt', async () => {
  const restarting = stack.restart('keyd', { downMs: 4000 });
  await new Promise((r) => setTimeout(r, 1000));
  const r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: s.code, js_params: s.params, receipt: true } });
  await restarting;
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.response, s.answer.response);
  assert.equal('receipt' in r.json, false);
  assert.equal(r.json.receipt_error.code, 'keyd_unavailable', r.text);
  // keyd back: receipts again.
  const again = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: s.code, js_params: s.params, receipt: true } });
  assert.equal(checkReceipt(again.json, { evidence: s.report, params: s.params }).ok, true, again.text);
});
