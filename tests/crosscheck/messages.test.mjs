// EIP-191 messages and EIP-55 addresses: common/secp256k1 against ethers, both directions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ethers } from 'ethers';
import { makeRng, ok, startVectors } from './support.mjs';

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const KEYS = 50;

let vectors;
let rng;
before(() => {
  vectors = startVectors();
  rng = makeRng('messages');
});
after(async () => assert.equal(await vectors.close(), 0));

// Lengths that cross the decimal length prefix (1, 2, 4 digits) and keccak's 136-byte rate.
function messageLength(i) {
  const fixed = [0, 1, 9, 10, 99, 100, 135, 136, 137, 1024, 1025];
  if (i < fixed.length) return fixed[i];
  return rng.bool() ? rng.int(200) : 1024 + rng.int(3000);
}

test('addresses match ethers computeAddress and getAddress (EIP-55)', async () => {
  const keys = Array.from({ length: KEYS }, () => rng.privateKey());
  keys.push('0x' + '00'.repeat(31) + '01', '0x' + (SECP256K1_N - 1n).toString(16));
  const answers = await vectors.callMany(keys.map((private_key) => ({ op: 'address', private_key })));
  keys.forEach((key, i) => {
    const expected = ethers.computeAddress(key);
    assert.equal(ok(answers[i], 'address').address, expected, `key ${key}`);
    assert.equal(ethers.getAddress(expected.toLowerCase()), answers[i].address);
  });
});

test('C++ EIP-191 signatures verify in ethers and equal its RFC 6979 signatures', async () => {
  const cases = Array.from({ length: KEYS }, (_, i) => ({ key: rng.privateKey(), message: rng.bytes(messageLength(i)) }));
  const answers = await vectors.callMany(cases.map(({ key, message }) => ({
    op: 'sign_message', private_key: key, message_hex: ethers.hexlify(message),
  })));
  cases.forEach(({ key, message }, i) => {
    const what = `key ${key}, message of ${message.length} bytes`;
    const { signature, hash } = ok(answers[i], what);
    assert.equal(hash, ethers.hashMessage(message), what);
    assert.equal(ethers.verifyMessage(message, signature), ethers.computeAddress(key), what);
    const v = Number.parseInt(signature.slice(-2), 16);
    assert.ok(v === 27 || v === 28, `v = ${v} for ${what}`);
    // Both sides use RFC 6979 nonces without extra entropy, so the bytes must agree exactly.
    assert.equal(signature, new ethers.Wallet(key).signMessageSync(message), what);
  });
});

test('ethers signMessage recovers to the signer in C++', async () => {
  const cases = Array.from({ length: KEYS }, (_, i) => {
    const wallet = new ethers.Wallet(rng.privateKey());
    // Strings go through ethers' UTF-8 conversion; recover_message gets those exact bytes.
    const message = i % 2 === 0 ? rng.bytes(messageLength(i)) : rng.string(i < 5 ? 0 : 600);
    return { wallet, message, signature: wallet.signMessageSync(message) };
  });
  const answers = await vectors.callMany(cases.map(({ message, signature }) => ({
    op: 'recover_message',
    message_hex: ethers.hexlify(typeof message === 'string' ? ethers.toUtf8Bytes(message) : message),
    signature,
  })));
  cases.forEach(({ wallet }, i) => assert.equal(ok(answers[i], 'recover_message').address, wallet.address));
});

test('tampered, high-s and malformed signatures are refused or recover elsewhere, as in ethers', async () => {
  const wallet = new ethers.Wallet(rng.privateKey());
  const message = rng.bytes(40);
  const message_hex = ethers.hexlify(message);
  const sig = ethers.Signature.from(wallet.signMessageSync(message));

  // A flipped recovery bit is a valid signature by someone else, in both implementations.
  const flipped = ethers.concat([sig.r, sig.s, ethers.toBeHex(sig.v === 27 ? 28 : 27)]);
  const other = ok(await vectors.call({ op: 'recover_message', message_hex, signature: flipped }), 'flipped v');
  assert.notEqual(other.address, wallet.address);
  assert.equal(other.address, ethers.verifyMessage(message, flipped));

  // The high-s twin (EIP-2) is refused by both.
  const highS = ethers.concat([sig.r, ethers.toBeHex(SECP256K1_N - BigInt(sig.s), 32), ethers.toBeHex(sig.v === 27 ? 28 : 27)]);
  assert.throws(() => ethers.verifyMessage(message, highS));
  assert.match((await vectors.call({ op: 'recover_message', message_hex, signature: highS })).error, /^invalid_signature/);

  const bad = [
    ethers.concat([sig.r, sig.s, '0x1d']),          // v = 29
    ethers.concat([sig.r, sig.s]),                  // 64 bytes
    ethers.concat([sig.serialized, '0x00']),        // 66 bytes
    ethers.concat(['0x' + '00'.repeat(32), sig.s, '0x1b']),  // r = 0
    ethers.concat([ethers.toBeHex(SECP256K1_N, 32), sig.s, '0x1b']),  // r = n
    '0xzz',
  ];
  for (const signature of bad) {
    const answer = await vectors.call({ op: 'recover_message', message_hex, signature });
    assert.ok(answer.error, `accepted ${signature}`);
  }
  for (const request of [
    { op: 'sign_message', private_key: '0x' + '00'.repeat(32), message_hex: '0x' },
    { op: 'sign_message', private_key: ethers.toBeHex(SECP256K1_N, 32), message_hex: '0x' },
    { op: 'sign_message', private_key: '0x1234', message_hex: '0x' },
    { op: 'sign_message', private_key: wallet.privateKey, message_hex: '0xabc' },
    { op: 'sign_message', private_key: wallet.privateKey },
    { op: 'address', private_key: 17 },
  ]) {
    assert.ok((await vectors.call(request)).error, `accepted ${JSON.stringify(request)}`);
  }
  const notUtf8 = Buffer.from([0x7b, 0x22, 0x6f, 0x70, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);  // {"op":"\xff"}
  for (const raw of ['{', 'null', '"op"', '{"op":"nope"}', '{"op":[]}', notUtf8]) {
    assert.ok((await vectors.callRaw(raw)).error, `accepted raw ${raw}`);
  }
  // Still serving after the bad input.
  assert.equal(ok(await vectors.call({ op: 'address', private_key: wallet.privateKey }), 'address').address, wallet.address);
});
