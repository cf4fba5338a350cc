// keyd's production key source over the simulated TEE (issue 24): the stack with
// startStack({keySource: 'tee-sim'}) takes the root key from sigil-tee-sim's GetKey (path
// sigil/root/v1, app id = AppGovernance) instead of a key file. The keys keyd hands out are the
// documented derivations of the simulator's key, a PKP signs the same after keyd restarts (it asks
// the agent again each time), and nothing is written to disk.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hkdfSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, newAccount, addGroup, createWallet, actionRunner, assertOk, ethers } from './stack.mjs';
import { simulatedKey, DEV_KEY_SECRET } from '../../evidence/tee-sim/sigil-tee-sim.mjs';

let stack;
let s = {};

// common/key_derivation.h: HKDF-SHA256(root, salt "sigil/pkp/v1", info, 32), a secp256k1 key (attempt 0
// is out of range with probability ~2^-128, so the counter rule is not written out here).
const derive = (root, info) => Buffer.from(hkdfSync('sha256', root, Buffer.from('sigil/pkp/v1'), info, 32));
const addressOf = (key) => new ethers.Wallet('0x' + key.toString('hex')).address;

before(async () => {
  stack = await startStack({ keySource: 'tee-sim', workers: 1, chainPayers: 4 });
  s.root = simulatedKey(DEV_KEY_SECRET, Buffer.from(stack.governance.slice(2), 'hex'), 'sigil/root/v1');
  s.owner = (await newAccount(stack, 'tee key')).api_key;
  s.group = await addGroup(stack, s.owner, 'signers');
  s.pkp = await createWallet(stack, s.owner);
  assertOk(await stack.request('POST', 'add_pkp_to_group', { key: s.owner, body: { group_id: s.group, pkp_id: s.pkp } }));
  s.run = actionRunner(stack, { owner: s.owner, group: s.group, key: s.owner, pkp: s.pkp });
});
after(async () => {
  await stack?.stop();
});

test('keyd takes its root key from the TEE key service: no key file, the payers are the derivations of the simulator\'s key', () => {
  const log = readFileSync(join(stack.logs, 'keyd.log'), 'utf8');
  assert.match(log, /root key from TEE key service \(dstack GetKey\) at .*dstack\.sock/);
  assert.ok(!existsSync(join(stack.home, 'keyd/root.key')), 'no root key file');
  assert.match(readFileSync(join(stack.logs, 'tee-sim.log'), 'utf8'), /GetKey path "sigil\/root\/v1" \(SIMULATED key\)/);
  // payer i: info "payer" || i (u32 big-endian); the admin payer: "admin-payer".
  const payer = (i) => {
    const n = Buffer.alloc(4);
    n.writeUInt32BE(i);
    return addressOf(derive(s.root, Buffer.concat([Buffer.from('payer'), n])));
  };
  assert.deepEqual(stack.apiPayers, [0, 1, 2, 3].map(payer));
  assert.equal(stack.adminPayer, addressOf(derive(s.root, Buffer.from('admin-payer'))));
});

const SIGN = `async function main({ pkpId }) {
  const A = Sigil.Actions;
  return { message: await A.signMessage({ pkpId, message: 'same key after a restart' }),
           actionKey: await Lit.Actions.getLitActionPrivateKey() }; }`;

test('a PKP signs the same on two keyd restarts, and the action key is the derivation of the simulator\'s key', async () => {
  const signatures = [];
  for (let round = 0; round < 3; round++) {
    if (round > 0) await stack.restart('keyd');
    const j = await s.run(SIGN, { pkpId: s.pkp });
    assert.equal(j.has_error, false, JSON.stringify(j));
    assert.equal(ethers.verifyMessage('same key after a restart', j.response.message), ethers.getAddress(s.pkp));
    signatures.push(j.response);
  }
  // RFC 6979: the same key signs the same message the same way.
  assert.equal(signatures[1].message, signatures[0].message);
  assert.equal(signatures[2].message, signatures[0].message);
  // The action key: info "action" || keccak256(utf8(cid)).
  const cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(SIGN) }));
  const expected = derive(s.root, Buffer.concat([Buffer.from('action'), ethers.getBytes(ethers.keccak256(ethers.toUtf8Bytes(cid)))]));
  assert.equal(signatures[0].actionKey.replace(/^0x/, '').toLowerCase(), expected.toString('hex'));
  // Three GetKey calls: keyd's --print-payers at start, and one per keyd start since (3 starts).
  const calls = readFileSync(join(stack.logs, 'tee-sim.log'), 'utf8').match(/GetKey path "sigil\/root\/v1"/g).length;
  assert.equal(calls, 4);
});
