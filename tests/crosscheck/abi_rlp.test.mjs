// ABI and RLP: common/abi and common/rlp against ethers' AbiCoder and encodeRlp/decodeRlp, both directions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ethers } from 'ethers';
import { makeRng, ok, startVectors } from './support.mjs';

const CASES = 250;

let vectors;
let rng;
before(() => {
  vectors = startVectors();
  rng = makeRng('abi_rlp');
});
after(async () => assert.equal(await vectors.close(), 0));

const coder = ethers.AbiCoder.defaultAbiCoder();

// Types are trees: { kind, bits | size | length, members }; `spell` gives the canonical string.
function randomType(depth) {
  const roll = rng.int(depth >= 3 ? 9 : 12);
  switch (roll) {
    case 0: return { kind: 'uint', bits: rng.pick([8, 16, 24, 32, 64, 96, 128, 160, 248, 256]) };
    case 1: return { kind: 'int', bits: rng.pick([8, 16, 24, 32, 64, 128, 256]) };
    case 2: return { kind: 'address' };
    case 3: return { kind: 'bool' };
    case 4: return { kind: 'fixedbytes', size: rng.pick([1, 2, 4, 20, 31, 32]) };
    case 5: return { kind: 'bytes' };
    case 6: return { kind: 'string' };
    case 7: return { kind: 'uint', bits: 256 };
    case 8: return { kind: 'bytes' };
    case 9: return { kind: 'array', members: [randomType(depth + 1)] };
    case 10: return { kind: 'fixedarray', length: 1 + rng.int(3), members: [randomType(depth + 1)] };
    default: return { kind: 'tuple', members: Array.from({ length: 1 + rng.int(3) }, () => randomType(depth + 1)) };
  }
}

function spell(t) {
  switch (t.kind) {
    case 'uint': return `uint${t.bits}`;
    case 'int': return `int${t.bits}`;
    case 'fixedbytes': return `bytes${t.size}`;
    case 'array': return `${spell(t.members[0])}[]`;
    case 'fixedarray': return `${spell(t.members[0])}[${t.length}]`;
    case 'tuple': return `(${t.members.map(spell).join(',')})`;
    default: return t.kind;
  }
}

// A value in ethers' form (bigint, checksummed address, hex bytes, string, arrays).
function randomValue(t) {
  switch (t.kind) {
    case 'uint': return rng.bigint(t.bits);
    case 'int': {
      const magnitude = rng.bigint(t.bits - 1);
      return rng.bool() ? -magnitude - 1n : magnitude;  // covers -2^(bits-1) .. 2^(bits-1)-1
    }
    case 'address': return ethers.getAddress(rng.hex(20));
    case 'bool': return rng.bool();
    case 'fixedbytes': return rng.hex(t.size);
    case 'bytes': return rng.hex(rng.pick([0, 1, 31, 32, 33, rng.int(100), 300]));
    case 'string': return rng.string(rng.bool() ? 8 : 80);
    case 'array': return Array.from({ length: rng.int(4) }, () => randomValue(t.members[0]));
    case 'fixedarray': return Array.from({ length: t.length }, () => randomValue(t.members[0]));
    case 'tuple': return t.members.map(randomValue);
  }
  throw new Error(`unknown kind ${t.kind}`);
}

// sigil_vectors' JSON form: integers as decimal strings (uint sometimes as 0x hex), addresses in
// either case; everything else as ethers has it.
function toVectorsJson(t, v) {
  switch (t.kind) {
    case 'uint': return rng.bool() ? v.toString() : '0x' + v.toString(16);
    case 'int': return v.toString();
    case 'address': return rng.bool() ? v : v.toLowerCase();
    case 'array': case 'fixedarray': return v.map((x) => toVectorsJson(t.members[0], x));
    case 'tuple': return v.map((x, i) => toVectorsJson(t.members[i], x));
    default: return v;
  }
}

// What sigil_vectors answers after decoding: integers as decimal strings, checksummed addresses.
function expectedDecoded(t, v) {
  switch (t.kind) {
    case 'uint': case 'int': return BigInt(v).toString();
    case 'fixedbytes': case 'bytes': return ethers.hexlify(v);
    case 'array': case 'fixedarray': return Array.from(v, (x) => expectedDecoded(t.members[0], x));
    case 'tuple': return Array.from(v, (x, i) => expectedDecoded(t.members[i], x));
    default: return v;
  }
}

function randomCase() {
  const types = Array.from({ length: rng.int(4) + (rng.int(8) === 0 ? 0 : 1) }, () => randomType(0));
  return { types, values: types.map(randomValue) };
}

test('AbiEncode equals ethers AbiCoder.encode and AbiDecode reads ethers encodings back', async () => {
  const fixed = [
    { types: [{ kind: 'uint', bits: 256 }], values: [(1n << 256n) - 1n] },
    { types: [{ kind: 'int', bits: 256 }], values: [-(1n << 255n)] },
    { types: [{ kind: 'int', bits: 8 }, { kind: 'int', bits: 8 }], values: [-128n, 127n] },
    { types: [{ kind: 'array', members: [{ kind: 'uint', bits: 256 }] }], values: [[]] },
    { types: [{ kind: 'array', members: [{ kind: 'string' }] }], values: [['', 'a', 'x'.repeat(33)]] },
    { types: [{ kind: 'tuple', members: [{ kind: 'address' }, { kind: 'bytes' }, { kind: 'array', members: [{ kind: 'string' }] }] }],
      values: [['0x' + '00'.repeat(20), '0x', ['ü', '']]] },
    { types: [], values: [] },
  ];
  const cases = [...fixed, ...Array.from({ length: CASES }, randomCase)];
  const requests = [];
  const expected = [];
  for (const { types, values } of cases) {
    const spelled = types.map(spell);
    const encoded = coder.encode(spelled, values);
    expected.push({ spelled, encoded, decoded: types.map((t, i) => expectedDecoded(t, values[i])) });
    requests.push({ op: 'abi_encode', types: spelled.join(','), values: types.map((t, i) => toVectorsJson(t, values[i])) });
    requests.push({ op: 'abi_decode', types: spelled.join(','), hex: encoded });
  }
  const answers = await vectors.callMany(requests);
  expected.forEach(({ spelled, encoded, decoded }, i) => {
    const what = `types ${spelled.join(',')}`;
    assert.equal(ok(answers[2 * i], `encode ${what}`).hex, encoded, what);
    assert.deepEqual(ok(answers[2 * i + 1], `decode ${what}`).values, decoded, what);
  });
});

test('out-of-range values and malformed encodings are refused', async () => {
  const refusals = [
    { op: 'abi_encode', types: 'uint8', values: ['256'] },
    { op: 'abi_encode', types: 'uint256', values: ['0x1' + '0'.repeat(64)] },
    { op: 'abi_encode', types: 'uint256', values: ['-1'] },
    { op: 'abi_encode', types: 'int8', values: ['128'] },
    { op: 'abi_encode', types: 'int256', values: [(-(1n << 255n) - 1n).toString()] },
    { op: 'abi_encode', types: 'bytes4', values: ['0x001122'] },
    { op: 'abi_encode', types: 'address', values: ['0x1234'] },
    { op: 'abi_encode', types: 'bool', values: [1] },
    { op: 'abi_encode', types: 'uint256[2]', values: [['1']] },
    { op: 'abi_encode', types: '(uint256,bool)', values: [['1']] },
    { op: 'abi_encode', types: 'uint7', values: ['1'] },
    { op: 'abi_encode', types: 'uint256', values: [] },
    { op: 'abi_encode', types: 'uint256' },
    { op: 'abi_decode', types: 'uint256', hex: '0x' + '00'.repeat(31) },
    { op: 'abi_decode', types: 'uint8', hex: ethers.toBeHex(256, 32) },
    { op: 'abi_decode', types: 'bool', hex: ethers.toBeHex(2, 32) },
    { op: 'abi_decode', types: 'address', hex: '0x' + '01' + '00'.repeat(31) },
    { op: 'abi_decode', types: 'uint256', hex: '0x' + '00'.repeat(33) },
    // A bytes length far beyond the data must fail before any allocation.
    { op: 'abi_decode', types: 'bytes', hex: ethers.toBeHex(32, 32) + 'ff'.repeat(32) },
    { op: 'abi_decode', types: 'string', hex: ethers.toBeHex(32, 32) + ethers.toBeHex(1, 32).slice(2) + 'ff' + '00'.repeat(31) },
    { op: 'abi_decode', types: 'uint256[]', hex: ethers.toBeHex(64, 32) + '00'.repeat(32) + ethers.toBeHex(0, 32).slice(2) },
  ];
  const answers = await vectors.callMany(refusals);
  answers.forEach((answer, i) => assert.ok(answer.error, `accepted ${JSON.stringify(refusals[i])}: ${JSON.stringify(answer)}`));
  // A truncated ethers encoding is refused wherever it is cut.
  const encoded = coder.encode(['string', 'uint256[]'], ['hello', [1n, 2n]]);
  const cuts = [];
  for (let n = 2; n < encoded.length; n += 2 * 8) cuts.push(encoded.slice(0, n));
  const truncated = await vectors.callMany(cuts.map((hex) => ({ op: 'abi_decode', types: 'string,uint256[]', hex })));
  truncated.forEach((answer, i) => assert.match(answer.error ?? '', /^abi_malformed/, `cut at ${cuts[i].length}`));
});

// RLP items: hex strings (byte strings) and arrays (lists), sized around the 55-byte short/long boundary.
function randomRlp(depth) {
  if (depth < 3 && rng.int(3) === 0) return Array.from({ length: rng.int(5) }, () => randomRlp(depth + 1));
  return rng.hex(rng.pick([0, 1, 1, 2, 55, 56, 57, rng.int(60), 1024 + rng.int(100)]));
}

test('RlpEncode equals ethers encodeRlp and RlpDecode equals decodeRlp', async () => {
  const items = [
    '0x', '0x00', '0x7f', '0x80', [], [[]], [[], [[]], [[], [[]]]],
    '0x' + 'aa'.repeat(55), '0x' + 'aa'.repeat(56), Array.from({ length: 55 }, () => '0x01'), Array.from({ length: 56 }, () => '0x01'),
    ...Array.from({ length: 200 }, () => randomRlp(0)),
  ];
  const encodings = items.map((item) => ethers.encodeRlp(item));
  const answers = await vectors.callMany([
    ...items.map((item) => ({ op: 'rlp_encode', item })),
    ...encodings.map((hex) => ({ op: 'rlp_decode', hex })),
  ]);
  items.forEach((item, i) => {
    assert.equal(ok(answers[i], 'rlp_encode').hex, encodings[i], JSON.stringify(item).slice(0, 200));
    assert.deepEqual(ok(answers[items.length + i], 'rlp_decode').item, ethers.decodeRlp(encodings[i]));
  });
});

test('non-canonical and truncated RLP is refused', async () => {
  const bad = [
    '0x8100',            // single byte < 0x80 wrapped
    '0xb80100',          // long form for a 1-byte string
    '0xb90001' + '00',   // length with a leading zero byte
    '0x83aabb',          // truncated string
    '0xc3c0c0',          // list payload shorter than declared members
    '0xc0c0',            // trailing bytes
    '0xf8',              // truncated length
    '0x' + 'c1'.repeat(40) + 'c0',  // deeper than RLP_MAX_DEPTH
  ];
  const answers = await vectors.callMany(bad.map((hex) => ({ op: 'rlp_decode', hex })));
  answers.forEach((answer, i) => assert.match(answer.error ?? '', /^rlp_/, `accepted ${bad[i]}`));
  for (const item of [5, { a: 1 }, ['0x1'], null]) {
    assert.ok((await vectors.call({ op: 'rlp_encode', item })).error, `accepted ${JSON.stringify(item)}`);
  }
  let deep = '0x';
  for (let i = 0; i < 100; ++i) deep = [deep];
  assert.ok((await vectors.call({ op: 'rlp_encode', item: deep })).error, 'accepted 100 nested lists');
});
