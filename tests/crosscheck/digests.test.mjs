// Keccak-256 and digest signatures against ethers; SHA-256, HKDF and AES-256-GCM against node:crypto;
// the CID op against the published vectors of tests/data/cid_vectors.txt.
import assert from 'node:assert/strict';
import { createCipheriv, createHash, hkdfSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ethers } from 'ethers';
import { makeRng, ok, startVectors } from './support.mjs';

let vectors;
let rng;
before(() => {
  vectors = startVectors();
  rng = makeRng('digests');
});
after(async () => assert.equal(await vectors.close(), 0));

// Around keccak's 136-byte rate and SHA-256's 64-byte block, then random sizes up to 5 KiB.
const LENGTHS = [0, 1, 55, 56, 63, 64, 65, 135, 136, 137, 271, 272, 273, ...Array.from({ length: 60 }, (_, i) => (i * 7919) % 5000)];

test('keccak256 and sha256 of random data equal ethers.keccak256 and node:crypto', async () => {
  const inputs = LENGTHS.map((n) => rng.hex(n));
  const answers = await vectors.callMany(inputs.flatMap((hex) => [{ op: 'keccak', hex }, { op: 'sha256', hex }]));
  inputs.forEach((hex, i) => {
    assert.equal(ok(answers[2 * i], 'keccak').hash, ethers.keccak256(hex), `keccak of ${hex.length / 2 - 1} bytes`);
    const sha = '0x' + createHash('sha256').update(Buffer.from(hex.slice(2), 'hex')).digest('hex');
    assert.equal(ok(answers[2 * i + 1], 'sha256').hash, sha, `sha256 of ${hex.length / 2 - 1} bytes`);
  });
});

test('sign_digest signatures recover in ethers and equal ethers SigningKey.sign', async () => {
  const cases = Array.from({ length: 50 }, () => ({ key: rng.privateKey(), digest: rng.hex(32) }));
  cases.push({ key: rng.privateKey(), digest: '0x' + '00'.repeat(32) }, { key: rng.privateKey(), digest: '0x' + 'ff'.repeat(32) });
  const answers = await vectors.callMany(cases.map(({ key, digest }) => ({ op: 'sign_digest', private_key: key, digest })));
  const recoveries = [];
  cases.forEach(({ key, digest }, i) => {
    const what = `key ${key} digest ${digest}`;
    const { signature } = ok(answers[i], what);
    const v = Number.parseInt(signature.slice(-2), 16);
    assert.ok(v === 0 || v === 1, `digest signatures carry the recovery id, got v = ${v}`);
    const address = ethers.computeAddress(key);
    assert.equal(ethers.computeAddress(ethers.SigningKey.recoverPublicKey(digest, signature)), address, what);
    assert.equal(ethers.recoverAddress(digest, signature), address, what);
    const theirs = new ethers.SigningKey(key).sign(digest);
    assert.equal(signature.slice(0, 130), theirs.r + theirs.s.slice(2), `${what}: r || s differ from ethers`);
    assert.equal(v, theirs.yParity, what);
    recoveries.push({ op: 'recover_digest', digest, signature: theirs.serialized, address });
  });
  const recovered = await vectors.callMany(recoveries.map(({ address, ...request }) => request));
  recovered.forEach((answer, i) => assert.equal(ok(answer, 'recover_digest').address, recoveries[i].address));
});

test('recover_digest refuses malformed digests and signatures', async () => {
  const key = rng.privateKey();
  const digest = rng.hex(32);
  const { signature } = ok(await vectors.call({ op: 'sign_digest', private_key: key, digest }), 'sign_digest');
  for (const request of [
    { op: 'recover_digest', digest: digest.slice(0, 64), signature },
    { op: 'recover_digest', digest, signature: signature.slice(0, 128) },
    { op: 'recover_digest', digest, signature: signature.slice(0, 130) + '02' },
    { op: 'recover_digest', digest, signature: '0x' + '00'.repeat(65) },
    { op: 'recover_digest', digest },
    { op: 'sign_digest', private_key: key, digest: '0x' + '00'.repeat(33) },
    { op: 'keccak', hex: 'xyz' },
    { op: 'keccak' },
  ]) {
    assert.ok((await vectors.call(request)).error, `accepted ${JSON.stringify(request)}`);
  }
});

test('HKDF-SHA256 and AES-256-GCM equal node:crypto', async () => {
  const hkdfCases = Array.from({ length: 20 }, () => ({
    ikm: rng.hex(1 + rng.int(64)), salt: rng.hex(rng.int(40)), info: rng.hex(rng.int(80)), length: 1 + rng.int(200),
  }));
  const gcmCases = Array.from({ length: 20 }, () => ({
    key: rng.hex(32), nonce: rng.hex(12), aad: rng.hex(rng.int(40)), plaintext: rng.hex(rng.pick([0, 1, 15, 16, 17, rng.int(3000)])),
  }));
  const answers = await vectors.callMany([
    ...hkdfCases.map((c) => ({ op: 'hkdf', ...c })),
    ...gcmCases.map((c) => ({ op: 'aes_gcm_seal', ...c })),
  ]);
  const buf = (hex) => Buffer.from(hex.slice(2), 'hex');
  hkdfCases.forEach((c, i) => {
    const okm = Buffer.from(hkdfSync('sha256', buf(c.ikm), buf(c.salt), buf(c.info), c.length)).toString('hex');
    assert.equal(ok(answers[i], 'hkdf').okm, '0x' + okm, JSON.stringify(c));
  });
  const opens = [];
  gcmCases.forEach((c, i) => {
    const cipher = createCipheriv('aes-256-gcm', buf(c.key), buf(c.nonce));
    cipher.setAAD(buf(c.aad));
    const sealed = Buffer.concat([cipher.update(buf(c.plaintext)), cipher.final(), cipher.getAuthTag()]).toString('hex');
    assert.equal(ok(answers[hkdfCases.length + i], 'aes_gcm_seal').sealed, '0x' + sealed, JSON.stringify(c));
    opens.push({ op: 'aes_gcm_open', key: c.key, nonce: c.nonce, aad: c.aad, sealed: '0x' + sealed });
    const tampered = Buffer.from(sealed, 'hex');
    tampered[rng.int(tampered.length)] ^= 1 << rng.int(8);
    opens.push({ op: 'aes_gcm_open', key: c.key, nonce: c.nonce, aad: c.aad, sealed: '0x' + tampered.toString('hex') });
  });
  const opened = await vectors.callMany(opens);
  gcmCases.forEach((c, i) => {
    assert.equal(ok(opened[2 * i], 'aes_gcm_open').plaintext, c.plaintext);
    assert.match(opened[2 * i + 1].error ?? '', /^decrypt_failed/, 'a flipped bit must fail the tag');
  });
  for (const request of [
    { op: 'hkdf', ikm: '0x', salt: '0x', info: '0x', length: 32 },
    { op: 'hkdf', ikm: '0x01', salt: '0x', info: '0x', length: 255 * 32 + 1 },
    { op: 'aes_gcm_seal', key: '0x' + '00'.repeat(31), nonce: '0x' + '00'.repeat(12), aad: '0x', plaintext: '0x' },
    { op: 'aes_gcm_seal', key: '0x' + '00'.repeat(32), nonce: '0x' + '00'.repeat(11), aad: '0x', plaintext: '0x' },
  ]) {
    assert.ok((await vectors.call(request)).error, `accepted ${JSON.stringify(request)}`);
  }
});

test('cid answers the published CIDv0 vectors', async () => {
  const text = readFileSync(join(process.env.SIGIL_SOURCE_DIR ?? join(import.meta.dirname, '../..'), 'tests/data/cid_vectors.txt'), 'utf8');
  const cases = [];
  for (const line of text.split('\n')) {
    const m = /^262144 174 (hex|utf8):(\S*) (Qm\w+)$/.exec(line);
    if (!m) continue;
    const hex = m[1] === 'hex' ? '0x' + m[2] : ethers.hexlify(ethers.toUtf8Bytes(m[2]));
    cases.push({ hex, cid: m[3] });
  }
  assert.ok(cases.length >= 2, 'cid_vectors.txt has no small vectors');
  const answers = await vectors.callMany(cases.map(({ hex }) => ({ op: 'cid', hex })));
  cases.forEach(({ hex, cid }, i) => assert.equal(ok(answers[i], 'cid').cid, cid, hex));
  assert.match((await vectors.call({ op: 'cid', hex: '0x0' })).error ?? '', /^invalid_hex/);
});
