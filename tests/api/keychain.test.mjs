// A published-style keychain bundle through the whole stack (issue 27): tests/bench/keychain's
// action (zod-validated params; x25519 ECDH, secp256k1 sign/verify/recover/ECDH and schnorr, ed25519,
// HKDF, AES-256-GCM through WebCrypto, all in noble's JavaScript with BigInt) bundled by esbuild from
// the pinned npm packages into one ES2020 script of about 310 KB, run through nginx, a worker,
// sigil-lowerer and the sandbox child: every answer must be byte for byte what the same bundle
// answers in Node, for valid params and for params zod refuses. The bundle is slow here (tens of
// seconds on this VM; README Performance "Keychain bundles"), so the limits are raised for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, actionRunner, newAccount, addGroup, addUsageKey } from './stack.mjs';
import { buildKeychainBundle, keychainParams, nodeMain } from '../bench/keychain/bundle.mjs';

let stack, run, bundle, main;

before(async () => {
  bundle = await buildKeychainBundle();
  main = nodeMain(bundle);
  // The sandbox child lowers the bundle itself if sigil-lowerer gives up on it under load, which
  // needs more than the default 64 MiB heap; the run itself takes tens of seconds here.
  stack = await startStack({ workers: 1, actions: ['timeout_ms = 240000', `memory_bytes = ${512 * 1024 * 1024}`] });
  const owner = (await newAccount(stack, 'keychain')).api_key;
  const group = await addGroup(stack, owner, 'keychain');
  const key = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] });
  run = actionRunner(stack, { owner, group, key });
});

after(async () => {
  await stack?.stop();
});

test('the bundle is an esbuild ES2020 script of 300-500 KB that defines main', () => {
  assert.ok(bundle.length > 300 * 1024 && bundle.length < 500 * 1024, `${bundle.length} bytes`);
  assert.match(bundle, /\basync function main\(params\)/);
  assert.match(bundle, /\d+n\b/, 'BigInt literals are in the bundle');
});

test('a keychain run answers exactly what Node answers for the same bundle and params', { timeout: 600000 }, async () => {
  const params = keychainParams(1);
  const expected = await main(params);
  assert.equal(expected.ok, true);
  assert.equal(expected.rounds[0].secp256k1.verified, true);
  assert.equal(expected.rounds[0].x25519.opened, params.message);
  const answer = await run(bundle, params);
  assert.equal(answer.has_error, false, JSON.stringify(answer.error));
  assert.deepEqual(answer.response, expected);
});

test('params zod refuses: the same issues as in Node, as the action\'s answer', { timeout: 600000 }, async () => {
  const params = { seed: '0x12', peerSeed: 'a5'.repeat(32), message: '', extra: 1, curves: ['rsa'] };
  const expected = await main(params);
  assert.equal(expected.ok, false);
  assert.ok(expected.issues.length >= 3, JSON.stringify(expected.issues));
  const answer = await run(bundle, params);
  assert.equal(answer.has_error, false, JSON.stringify(answer.error));
  assert.deepEqual(answer.response, expected);
});
