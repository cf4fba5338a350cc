// EIP-1559 transactions signed with common/eth_tx + common/secp256k1, parsed and re-signed by ethers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ethers } from 'ethers';
import { makeRng, ok, startVectors } from './support.mjs';

const CASES = 60;
const UINT256_MAX = (1n << 256n) - 1n;

let vectors;
let rng;
before(() => {
  vectors = startVectors();
  rng = makeRng('transactions');
});
after(async () => assert.equal(await vectors.close(), 0));

function randomTx(i) {
  const accessList = Array.from({ length: rng.int(3) }, () => ({
    address: ethers.getAddress(rng.hex(20)),
    storageKeys: Array.from({ length: rng.int(3) }, () => rng.hex(32)),
  }));
  // ethers refuses a tip above the fee cap (nodes would too), so draw the cap first.
  const maxFeePerGas = i === 0 ? UINT256_MAX : rng.bigint(rng.pick([40, 64, 256]));
  const tip = i === 0 ? UINT256_MAX : rng.bigint(rng.pick([40, 64, 256])) % (maxFeePerGas + 1n);
  return {
    chainId: rng.pick([1n, 11155111n, 31337n, BigInt(rng.u32()), (1n << 53n) - 1n]),
    // ethers keeps the nonce as a JS number, so stay within safe integers.
    nonce: rng.pick([0, 1, 127, 128, rng.int(1e6), Number.MAX_SAFE_INTEGER]),
    maxPriorityFeePerGas: tip,
    maxFeePerGas,
    gasLimit: rng.pick([21000n, 30000000n, rng.bigint(64)]),
    to: i === 1 || rng.int(6) === 0 ? null : ethers.getAddress(rng.hex(20)),
    value: i === 0 ? UINT256_MAX : rng.bigint(rng.pick([0, 60, 256]) || 1),
    data: rng.hex(rng.pick([0, 4, 36, 68, rng.int(600)])),
    accessList,
  };
}

function request(tx, privateKey) {
  return {
    op: 'tx1559',
    private_key: privateKey,
    chain_id: tx.chainId.toString(),
    nonce: tx.nonce,
    max_priority_fee_per_gas: tx.maxPriorityFeePerGas.toString(),
    max_fee_per_gas: '0x' + tx.maxFeePerGas.toString(16),
    gas_limit: tx.gasLimit.toString(),
    to: tx.to === null ? null : tx.to.toLowerCase(),
    value: tx.value.toString(),
    data: tx.data,
    access_list: tx.accessList.map(({ address, storageKeys }) => ({ address, storage_keys: storageKeys })),
  };
}

test('signed EIP-1559 transactions parse in ethers with the same fields, sender and hashes', async () => {
  const cases = Array.from({ length: CASES }, (_, i) => ({ tx: randomTx(i), key: rng.privateKey() }));
  const answers = await vectors.callMany(cases.map(({ tx, key }) => request(tx, key)));
  cases.forEach(({ tx, key }, i) => {
    const what = `case ${i} (key ${key})`;
    const answer = ok(answers[i], what);
    const parsed = ethers.Transaction.from(answer.signed_raw);
    assert.equal(parsed.type, 2, what);
    assert.equal(parsed.chainId, tx.chainId, what);
    assert.equal(parsed.nonce, tx.nonce, what);
    assert.equal(parsed.maxPriorityFeePerGas, tx.maxPriorityFeePerGas, what);
    assert.equal(parsed.maxFeePerGas, tx.maxFeePerGas, what);
    assert.equal(parsed.gasLimit, tx.gasLimit, what);
    assert.equal(parsed.to, tx.to, what);
    assert.equal(parsed.value, tx.value, what);
    assert.equal(parsed.data, tx.data, what);
    assert.deepEqual(parsed.accessList.map(({ address, storageKeys }) => ({ address, storageKeys })), tx.accessList, what);
    assert.equal(parsed.from, ethers.computeAddress(key), what);
    assert.equal(answer.from, parsed.from, what);
    assert.equal(parsed.hash, answer.tx_hash, what);
    assert.equal(parsed.unsignedHash, answer.unsigned_hash, what);
    assert.equal(parsed.unsignedSerialized, answer.unsigned_payload, what);
    assert.equal(parsed.serialized, answer.signed_raw, what);

    // ethers signing the same fields with the same key gives the same bytes (RFC 6979 on both sides).
    const mine = ethers.Transaction.from({ type: 2, ...tx });
    mine.signature = new ethers.SigningKey(key).sign(mine.unsignedHash);
    assert.equal(mine.serialized, answer.signed_raw, what);
  });
});

test('malformed transaction fields are refused', async () => {
  const key = rng.privateKey();
  const good = request(randomTx(2), key);
  assert.ok(ok(await vectors.call(good), 'baseline').signed_raw);
  const variants = [
    { nonce: '0x10000000000000000' },         // above 64 bits
    { gas_limit: '-1' },
    { chain_id: 'one' },
    { value: '0x1' + '0'.repeat(64) },        // above 256 bits
    { to: '0x1234' },
    { to: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD827' },  // bad EIP-55 checksum
    { data: '0xabc' },
    { access_list: [{ address: '0x' + '11'.repeat(20), storage_keys: ['0x12'] }] },
    { access_list: [{ address: '0x' + '11'.repeat(20) }] },
    { access_list: 'none' },
    { private_key: '0x' + '00'.repeat(32) },
    { max_fee_per_gas: undefined },
  ];
  const answers = await vectors.callMany(variants.map((v) => ({ ...good, ...v })));
  answers.forEach((answer, i) => assert.ok(answer.error, `accepted ${JSON.stringify(variants[i])}`));
});
