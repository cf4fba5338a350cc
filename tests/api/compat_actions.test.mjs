// Published third-party actions, run unmodified (DESIGN.md section 5, "Compatibility"): the fixtures
// in ../shared/compat-actions (never copied into this repository), each stripped of its header as its
// README says and run through the whole stack by inline code with realistic params. Network-bound
// ones talk to a local HTTP server and the dev chain (allowed by fetch_allowed_addresses); answers
// that do not depend on our keys are checked against Node running the same code with ethers v5.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import {
  startStack, ethers, assertOk, actionCid, actionRunner, minedReceipt, newAccount, addGroup, addUsageKey, createWallet, chainRpc, SOURCE_DIR,
} from './stack.mjs';

const require = createRequire(import.meta.url);
const ethers5 = require('ethers5');

const FIXTURES = [process.env.SIGIL_COMPAT_ACTIONS, resolve(SOURCE_DIR, '../shared/compat-actions'), '/work/shared/compat-actions']
  .find((dir) => dir && existsSync(join(dir, 'README.md')));
const skip = FIXTURES ? false : 'the published actions (../shared/compat-actions) are not on this machine';

/// A fixture's action: everything after its `---- BEGIN VERBATIM ----` line.
function fixture(name) {
  const text = readFileSync(join(FIXTURES, name), 'utf8');
  const marker = text.indexOf('---- BEGIN VERBATIM ----');
  assert.ok(marker >= 0, `${name} has no BEGIN VERBATIM line`);
  return text.slice(text.indexOf('\n', marker) + 1);
}

let stack;
let server;
let statusUrl;
let indicator = 'none';
const s = {};

before(async () => {
  if (skip) return;
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ page: { id: 'x', name: 'Insured' }, status: { indicator, description: 'from the test' } }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  statusUrl = `http://127.0.0.1:${server.address().port}/api/v2/summary.json`;
  stack = await startStack({
    workers: 2,
    actions: ['fetch_allowed_addresses = 127.0.0.1', 'timeout_ms = 20000'],
  });
  s.owner = (await newAccount(stack, 'published actions')).api_key;
  s.group = await addGroup(stack, s.owner, 'published');
  s.pkp = (await createWallet(stack, s.owner)).toLowerCase();
  assertOk(await stack.request('POST', 'add_pkp_to_group', { key: s.owner, body: { group_id: s.group, pkp_id: s.pkp } }));
  s.runner = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
  runAction = actionRunner(stack, { owner: s.owner, group: s.group, key: s.runner, pkp: s.pkp });
});

after(async () => {
  await stack?.stop();
  server?.close();
});

const cidOf = (code) => actionCid(stack, code);
let runAction;  // actionRunner, once the account exists

// Runs a fixture; its CID and response, after checking it ran without an error.
async function run(code, params, { pkp = s.pkp } = {}) {
  const j = await runAction(code, params, { pkp });
  assert.equal(j.has_error, false, `the action failed: ${JSON.stringify(j.error)}`);
  return { cid: await cidOf(code), response: j.response };
}

test('01 hello-world: main() returning a string', { skip }, async () => {
  assert.equal((await run(fixture('01_hello-world.js'), {})).response, 'Hello World!');
});

test('03 encrypt and 04 decrypt: two different CIDs share the PKP\'s key', { skip }, async () => {
  const challenge = 'published challenge ✓ 🔐';
  const enc = await run(fixture('03_encrypt.js'), { pkpId: s.pkp, challenge });
  assert.match(enc.response, /^[0-9a-f]+$/);
  const dec = await run(fixture('04_decrypt.js'), { pkpId: s.pkp, ciphertext: enc.response });
  assert.equal(dec.response, challenge);
});

test('15 public-key helper (optional chaining): any CID\'s action key, the same one its own code gets', { skip }, async () => {
  const helper = fixture('15_docs-public-key-helper.js');
  const owner = ethers.Wallet.createRandom().address;
  const wallet = fixture('07_userWallet.js').replaceAll('__OWNER_ADDRESS__', owner);
  const walletCid = await cidOf(wallet);
  const { response } = await run(helper, { cid: walletCid }, { pkp: null });
  assert.equal(response.ok, true);
  assert.match(response.public_key, /^0x0[23][0-9a-f]{64}$/);
  // The derived wallet 07 reports for itself is the address of that public key.
  const own = await run(wallet, { action: 'address' }, { pkp: null });
  assert.deepEqual(own.response, { walletAddress: ethers.computeAddress(response.public_key), owner });
  // Its refusal of a bad CID is the action's own error.
  const bad = await stack.request('POST', 'sigil_action', { key: s.runner, body: { code: helper, js_params: { cid: 'nope' } } });
  assert.equal(bad.json.has_error, true);
  assert.match(JSON.stringify(bad.json.error), /Invalid action CID/);
});

test('07 userWallet: the withdraw path checks its inputs in order, as in V8 (URL, host pin)', { skip }, async () => {
  const owner = ethers.Wallet.createRandom().address;
  const code = fixture('07_userWallet.js').replaceAll('__OWNER_ADDRESS__', owner);
  const badUrl = await run(code, { action: 'withdraw', rpcUrl: 'not a url' }, { pkp: null });
  assert.deepEqual(badUrl.response, { ok: false, reason: 'rpcUrl is not a valid URL' });
  const local = await run(code, { action: 'withdraw', rpcUrl: stack.rpcUrl }, { pkp: null });
  assert.deepEqual(local.response, { ok: false, reason: 'rpc host not whitelisted: 127.0.0.1' });
  const unknown = await run(code, { action: 'sweep' }, { pkp: null });
  assert.deepEqual(unknown.response, { ok: false, reason: 'unknown action: sweep (expected "address" or "withdraw")' });
});

test('10 uptimeInsurance (const main = async arrow): healthy by fetch, a dry-run payout signed by ethers v5, a real payout mined', { skip }, async () => {
  const code = fixture('10_uptimeInsurance.js');
  indicator = 'none';
  const healthy = await run(code, { statusUrl }, { pkp: null });
  assert.deepEqual(healthy.response, { ok: true, indicator: 'none', paid: false, note: 'insured service healthy' });

  indicator = 'major';
  const policyholder = ethers.Wallet.createRandom().address;
  const base = { statusUrl, rpcUrl: stack.rpcUrl, policyholder, payoutWei: '1000000000000000' };
  const dry = await run(code, { ...base, dryRun: true }, { pkp: null });
  assert.equal(dry.response.dryRun, true);
  const tx = ethers.Transaction.from(dry.response.signedTx);
  assert.equal(tx.from, dry.response.pool);
  assert.equal(tx.to, policyholder);
  assert.equal(tx.value, 1000000000000000n);
  assert.equal(tx.chainId, BigInt(stack.chainId));
  // What ethers v5 in Node builds for the same wallet and request: the same fields.
  const referee = ethers5.utils.parseTransaction(dry.response.signedTx);
  assert.equal(referee.from, dry.response.pool);
  assert.equal(referee.gasLimit.toString(), '21000');

  await chainRpc(stack, 'anvil_setBalance', [dry.response.pool, '0xde0b6b3a7640000']);
  const paid = await run(code, base, { pkp: null });
  assert.equal(paid.response.paid, true, JSON.stringify(paid.response));
  const receipt = await minedReceipt(stack, paid.response.txHash);
  assert.equal(receipt.status, '0x1');
  assert.equal(BigInt(await chainRpc(stack, 'eth_getBalance', [policyholder, 'latest'])), 1000000000000000n);
});
