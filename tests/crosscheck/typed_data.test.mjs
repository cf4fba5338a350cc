// EIP-712 typed data: common/eip712 digests and signatures against ethers' TypedDataEncoder.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ethers } from 'ethers';
import { makeRng, ok, startVectors } from './support.mjs';

const UINT256_MAX = (1n << 256n) - 1n;
const INT256_MIN = -(1n << 255n);
const INT256_MAX = (1n << 255n) - 1n;

let vectors;
let rng;
before(() => {
  vectors = startVectors();
  rng = makeRng('typed_data');
});
after(async () => assert.equal(await vectors.close(), 0));

// JSON with bigints as decimal strings (the form common/eip712 accepts for uintN/intN).
const toJson = (v) => JSON.parse(JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x)));

// The example of EIP-712 itself (eips.ethereum.org/EIPS/eip-712, "Example.js"), with its published digest.
const MAIL = {
  domain: { name: 'Ether Mail', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' },
  types: {
    Person: [{ name: 'name', type: 'string' }, { name: 'wallet', type: 'address' }],
    Mail: [{ name: 'from', type: 'Person' }, { name: 'to', type: 'Person' }, { name: 'contents', type: 'string' }],
  },
  value: {
    from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
    contents: 'Hello, Bob!',
  },
};
const MAIL_DIGEST = '0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2';

function fixedDocuments() {
  return {
    mail: MAIL,
    arrays: {
      domain: { name: 'Arrays', version: '2', chainId: 31337n, verifyingContract: '0x' + '11'.repeat(20) },
      types: {
        Person: [{ name: 'name', type: 'string' }, { name: 'wallets', type: 'address[]' }],
        Mail: [
          { name: 'from', type: 'Person' }, { name: 'to', type: 'Person[]' }, { name: 'contents', type: 'string' },
          { name: 'tags', type: 'bytes32[2]' }, { name: 'matrix', type: 'uint256[][]' }, { name: 'none', type: 'string[]' },
        ],
      },
      value: {
        from: { name: 'Cow', wallets: ['0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826', '0xDeaDbeefdEAdbeefdEadbEEFdeadbeEFdEaDbeeF'] },
        to: [
          { name: 'Bob', wallets: ['0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB'] },
          { name: '', wallets: [] },
        ],
        contents: 'Hello, Bob and nobody!',
        tags: ['0x' + 'ab'.repeat(32), '0x' + '00'.repeat(32)],
        matrix: [[1n, 2n, 3n], [], [UINT256_MAX]],
        none: [],
      },
    },
    nested: {
      domain: { name: 'Nested', chainId: 10 },
      types: {
        Order: [{ name: 'maker', type: 'Party' }, { name: 'legs', type: 'Leg[]' }, { name: 'meta', type: 'Meta' }],
        Party: [{ name: 'who', type: 'Person' }, { name: 'role', type: 'uint8' }],
        Person: [{ name: 'name', type: 'string' }, { name: 'wallet', type: 'address' }],
        Leg: [{ name: 'asset', type: 'Asset' }, { name: 'amount', type: 'uint128' }],
        Asset: [{ name: 'token', type: 'address' }, { name: 'id', type: 'uint256' }],
        Meta: [{ name: 'note', type: 'string' }, { name: 'deadline', type: 'uint64' }],
      },
      value: {
        maker: { who: { name: 'Alice', wallet: '0x' + '22'.repeat(20) }, role: 3 },
        legs: [
          { asset: { token: '0x' + '33'.repeat(20), id: 7n }, amount: (1n << 128n) - 1n },
          { asset: { token: '0x' + '44'.repeat(20), id: 0n }, amount: 0n },
        ],
        meta: { note: 'nested ✓ 😀', deadline: 18446744073709551615n },
      },
    },
    bytes: {
      domain: { name: 'Bytes', version: '1', chainId: 5, verifyingContract: '0x' + '55'.repeat(20), salt: '0x' + '5a'.repeat(32) },
      types: {
        Blob: [
          { name: 'empty', type: 'bytes' }, { name: 'long', type: 'bytes' }, { name: 'one', type: 'bytes1' },
          { name: 'full', type: 'bytes32' }, { name: 'many', type: 'bytes[]' },
        ],
      },
      value: {
        empty: '0x', long: '0x' + 'c3'.repeat(300), one: '0xff', full: '0x' + '01'.repeat(32), many: ['0x', '0x00', '0xdeadbeef'],
      },
    },
    negative_ints: {
      domain: { name: 'Ints', chainId: 1 },
      types: {
        Ints: [
          { name: 'min', type: 'int256' }, { name: 'max', type: 'int256' }, { name: 'byte', type: 'int8' },
          { name: 'minusOne', type: 'int64' }, { name: 'small', type: 'int16' }, { name: 'list', type: 'int32[]' },
        ],
      },
      value: { min: INT256_MIN, max: INT256_MAX, byte: -128n, minusOne: -1n, small: -300n, list: [-2147483648n, 2147483647n, 0n] },
    },
    uint_max: {
      domain: { verifyingContract: '0x' + '66'.repeat(20) },
      types: {
        Limits: [
          { name: 'max', type: 'uint256' }, { name: 'zero', type: 'uint256' }, { name: 'u8', type: 'uint8' },
          { name: 'yes', type: 'bool' }, { name: 'no', type: 'bool' }, { name: 'who', type: 'address' },
        ],
      },
      value: { max: UINT256_MAX, zero: 0n, u8: 255n, yes: true, no: false, who: '0x0000000000000000000000000000000000000000' },
    },
  };
}

// A schema touching every kind, with random values, so the fixed documents are not the only inputs.
const RANDOM_TYPES = {
  Envelope: [
    { name: 'sender', type: 'Account' }, { name: 'recipients', type: 'Account[]' }, { name: 'amount', type: 'uint256' },
    { name: 'delta', type: 'int256' }, { name: 'memo', type: 'string' }, { name: 'payload', type: 'bytes' },
    { name: 'nonce', type: 'bytes32' }, { name: 'urgent', type: 'bool' }, { name: 'small', type: 'int24' },
  ],
  Account: [{ name: 'owner', type: 'address' }, { name: 'label', type: 'string' }, { name: 'limits', type: 'uint96[2]' }],
};

function randomAccount() {
  return {
    owner: ethers.getAddress(rng.hex(20)),
    label: rng.string(20),
    limits: [rng.bigint(96), rng.bigint(96)],
  };
}

function randomDocument() {
  const signed = (bits) => {
    const v = rng.bigint(bits - 1);
    return rng.bool() ? -v - (rng.bool() ? 1n : 0n) : v;
  };
  return {
    domain: { name: rng.string(12), version: String(rng.int(10)), chainId: BigInt(1 + rng.int(1e9)), verifyingContract: rng.hex(20) },
    types: RANDOM_TYPES,
    value: {
      sender: randomAccount(),
      recipients: Array.from({ length: rng.int(4) }, randomAccount),
      amount: rng.bigint(256),
      delta: signed(256),
      memo: rng.string(rng.bool() ? 10 : 400),
      payload: rng.hex(rng.int(200)),
      nonce: rng.hex(32),
      urgent: rng.bool(),
      small: signed(24),
    },
  };
}

async function checkDocument(name, { domain, types, value }) {
  const key = rng.privateKey();
  const wallet = new ethers.Wallet(key);
  const digest = ethers.TypedDataEncoder.hash(domain, types, value);
  const payload = ethers.TypedDataEncoder.getPayload(domain, types, value);
  const parts = { domain: toJson(domain), types: toJson(types), value: toJson(value) };
  const ethersSig = wallet.signingKey.sign(digest).serialized;

  const [full, fromParts, signed, recovered] = await vectors.callMany([
    { op: 'hash_typed_data', typed_data: payload },
    { op: 'hash_typed_data', ...parts },
    { op: 'sign_typed_data', private_key: key, typed_data: payload },
    { op: 'recover_digest', digest, signature: ethersSig },
  ]);
  assert.equal(ok(full, `${name} (full document)`).digest, digest, name);
  assert.equal(full.domain_separator, ethers.TypedDataEncoder.hashDomain(domain), name);
  assert.equal(full.message_hash, ethers.TypedDataEncoder.from(types).hash(value), name);
  assert.equal(ok(fromParts, `${name} (domain, types, value)`).digest, digest, name);
  assert.equal(ok(signed, `${name} signing`).digest, digest, name);
  assert.equal(ethers.verifyTypedData(domain, types, value, signed.signature), wallet.address, name);
  assert.equal(signed.signature, ethersSig, `${name}: RFC 6979 signatures differ`);
  assert.equal(ok(recovered, `${name} recovery`).address, wallet.address, name);
}

test('the EIP-712 Mail example hashes to its published digest', async () => {
  assert.equal(ethers.TypedDataEncoder.hash(MAIL.domain, MAIL.types, MAIL.value), MAIL_DIGEST);
  const answer = ok(await vectors.call({ op: 'hash_typed_data', ...toJson(MAIL) }), 'Mail');
  assert.equal(answer.digest, MAIL_DIGEST);
});

test('fixed documents (arrays, nested structs, bytes, negative ints, uint256 max) match ethers', async () => {
  for (const [name, doc] of Object.entries(fixedDocuments())) await checkDocument(name, doc);
});

test('random documents match ethers', async () => {
  for (let i = 0; i < 25; ++i) await checkDocument(`random #${i}`, randomDocument());
});

test('documents that ethers refuses are refused too', async () => {
  const base = fixedDocuments().uint_max;
  const variants = {
    'uint8 out of range': { ...base, value: { ...base.value, u8: 256n } },
    'negative uint': { ...base, value: { ...base.value, zero: -1n } },
    'uint256 overflow': { ...base, value: { ...base.value, max: UINT256_MAX + 1n } },
    'missing field': { ...base, value: { ...base.value, who: undefined } },
    'bad address checksum': { ...base, value: { ...base.value, who: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD827'.replace('a3d', 'A3d') } },
    'unknown type': { ...base, types: { Limits: [...base.types.Limits, { name: 'x', type: 'Missing' }] }, value: { ...base.value, x: {} } },
    'bytes32 too short': {
      domain: base.domain, types: { T: [{ name: 'b', type: 'bytes32' }] }, value: { b: '0x' + '00'.repeat(31) },
    },
    'int8 below range': { domain: base.domain, types: { T: [{ name: 'i', type: 'int8' }] }, value: { i: -129n } },
    'circular types': {
      domain: base.domain,
      types: { A: [{ name: 'b', type: 'B' }], B: [{ name: 'a', type: 'A' }] },
      value: { b: { a: {} } },
    },
  };
  for (const [name, { domain, types, value }] of Object.entries(variants)) {
    assert.throws(() => ethers.TypedDataEncoder.hash(domain, types, value), undefined, `ethers accepted ${name}`);
    const answer = await vectors.call({ op: 'hash_typed_data', domain: toJson(domain), types: toJson(types), value: toJson(value) });
    assert.ok(answer.error, `C++ accepted ${name}: ${JSON.stringify(answer)}`);
  }
  // Stricter than ethers on purpose: a message key the type does not declare is refused, since it
  // would be signed without being shown.
  const extra = await vectors.call({ op: 'hash_typed_data', ...toJson({ ...base, value: { ...base.value, extra: 1 } }) });
  assert.match(extra.error, /^invalid_typed_data/);
  for (const request of [
    { op: 'hash_typed_data' },
    { op: 'hash_typed_data', typed_data: 'not an object' },
    { op: 'hash_typed_data', typed_data: { types: {}, primaryType: 'X', domain: {}, message: {} } },
    { op: 'sign_typed_data', private_key: '0x00', typed_data: ethers.TypedDataEncoder.getPayload(MAIL.domain, MAIL.types, MAIL.value) },
  ]) {
    assert.ok((await vectors.call(request)).error, `accepted ${JSON.stringify(request)}`);
  }
});
