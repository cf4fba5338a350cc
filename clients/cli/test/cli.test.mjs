// `sigil` against the whole stack with scripts/start's settings (billing on, the chain processor,
// starter credit 1000): a profile, an account, credits bought on the dev chain in one command, a PKP,
// a group, an action deployed (CID, upload to the gateway, metadata, group) and run by file and by CID
// with its cost, usage keys by hash, errors with their fixes, --json for scripts, and sigil verify.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { sigil, cliHome, startLikeScriptsStart } from './support.mjs';

const require = createRequire(import.meta.url);
const { ethers } = require('ethers');
const TEE_SIM = join(import.meta.dirname, '../../../evidence/tee-sim/sigil-tee-sim.mjs');

let stack;
let home;
let env;
const run = (args, extra = {}) => sigil(args, { env: { ...env, ...extra } });

before(async () => {
  stack = await startLikeScriptsStart();
  home = cliHome();
  env = home.env;
});
after(async () => {
  await stack?.stop();
  home?.remove();
});

const state = {};

test('profile set, then show: where each setting comes from, never a key value', async () => {
  const set = await run(['profile', 'set', '--url', stack.url, '--ca-file', join(stack.home, 'nginx/tls/cert.pem'),
    '--rpc-url', stack.rpcUrl, '--gateway-dir', stack.gatewayDir]);
  assert.equal(set.code, 0, set.stderr);
  const show = await run(['profile', 'show', '--json']);
  assert.equal(show.json.url, stack.url);
  assert.equal(show.json.sources.url, 'profile default');
  assert.equal(show.json.key_file, undefined);
  assert.equal(statSync(env.SIGIL_CLI_CONFIG).mode & 0o777, 0o600);
});

test('without a key, a command says how to get one', async () => {
  const r = await run(['group', 'list']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^sigil: missing_api_key: .*\n  fix: create an account: sigil account create --save-key/);
});

test('account create --save-key writes the key 0600 and the profile uses it', async () => {
  const keyFile = join(home.dir, 'master.key');
  const r = await run(['account', 'create', '--name', 'cli', '--save-key', keyFile]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^account created: owner wallet 0x[0-9a-fA-F]{40}\nmaster key saved in /);
  assert.doesNotMatch(r.stdout, new RegExp(readFileSync(keyFile, 'utf8').trim().replace(/[+/=]/g, '.')));
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  state.key = readFileSync(keyFile, 'utf8').trim();
  const again = await run(['account', 'create', '--save-key', keyFile]);
  assert.match(again.stderr, /file_exists/);
  const show = await run(['account', 'show', '--json']);
  assert.equal(show.json.account_exists, true);
  assert.equal(show.json.balance.balance_cents, 1000);
});

test('credits: prices, buy 500 on the dev chain in one command, balance', async () => {
  const prices = await run(['credits', 'prices', '--json']);
  assert.deepEqual(prices.json.prices, { write_cents: 1, run_second_cents: 1 });
  assert.equal(prices.json.min_payment_cents, 500);
  const tooSmall = await run(['credits', 'buy', '100']);
  assert.match(tooSmall.stderr, /invalid_amount: the smallest purchase is 500 credits\n  fix: sigil credits buy 500/);
  const buy = await run(['credits', 'buy', '500', '--json']);
  assert.equal(buy.code, 0, buy.stderr + buy.stdout);
  assert.equal(buy.json.bought_cents, 500);
  assert.equal(buy.json.balance_cents, 1500);
  // Twice in a row (no nonce reused: the provider's request cache is off), with the human output.
  const again = await run(['credits', 'buy', '500']);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^bought 500 credits \(payment pi_\S+, tx 0x[0-9a-f]{64}\)\nbalance: 2000 credits\n$/);
  const balance = await run(['credits', 'balance']);
  assert.equal(balance.stdout, '2000 credits (20.00)\n');
});

test('pkp, group, action deploy into the group, run by file and by CID with its cost', async () => {
  const pkp = await run(['pkp', 'create', '--name', 'signer', '--json']);
  assert.equal(pkp.code, 0, pkp.stderr);
  state.pkp = pkp.json.wallet_address;
  const group = await run(['group', 'create', 'signing', '--description', 'by the CLI', '--pkp', state.pkp, '--json']);
  assert.equal(group.code, 0, group.stderr);
  state.group = group.json.group_id;
  const file = join(home.dir, 'sign.js');
  writeFileSync(file, 'async function main({ pkpId, message }) { console.log("signing"); return await Sigil.Actions.signMessage({ pkpId, message }); }\n');
  const deploy = await run(['action', 'deploy', file, '--group', state.group, '--json']);
  assert.equal(deploy.code, 0, deploy.stderr);
  state.cid = deploy.json.cid;
  const worker = join(process.env.SIGIL_BUILD_DIR ?? join(import.meta.dirname, '../../../build'), 'bin/sigil-worker');
  assert.equal(state.cid, execFileSync(worker, ['--cid', file]).toString().trim());
  assert.equal(readFileSync(join(stack.gatewayDir, state.cid), 'utf8'), readFileSync(file, 'utf8'));
  const again = await run(['action', 'deploy', file, '--group', state.group, '--name', 'signer v1']);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /already registered: its metadata was updated\ngroup \d+ already lists it/);
  const actions = await run(['action', 'list', '--group', state.group, '--json']);
  assert.deepEqual(actions.json.map((a) => a.id), [ethers.keccak256(ethers.toUtf8Bytes(state.cid))]);
  assert.equal(actions.json[0].name, 'signer v1');

  const params = JSON.stringify({ pkpId: state.pkp, message: 'from the cli' });
  const byFile = await run(['run', file, '--pkp', state.pkp, '--params', params]);
  assert.equal(byFile.code, 0, byFile.stderr);
  const [, signature] = byFile.stdout.match(/^response: (0x[0-9a-f]{130})\nlogs:\n  signing\ntime: [0-9.]+ ms round trip; cost: 1 credit \(balance \d+\)\n$/) ?? [];
  assert.ok(signature, byFile.stdout);
  assert.equal(ethers.verifyMessage('from the cli', signature).toLowerCase(), state.pkp.toLowerCase());
  const byCid = await run(['run', state.cid, '--pkp', state.pkp, '--params', params, '--json']);
  assert.equal(byCid.code, 0, byCid.stderr);
  assert.equal(byCid.json.has_error, false);
  assert.equal(byCid.json.cost_cents, 1);
  assert.equal(byCid.json.logs, 'signing\n');
});

test('run --receipt OUT writes the answer with a receipt signed by the attested receipt key', async () => {
  const out = join(home.dir, 'receipt.json');
  const params = JSON.stringify({ pkpId: state.pkp, message: 'receipt' });
  const r = await run(['run', state.cid, '--pkp', state.pkp, '--params', params, '--receipt', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^receipt: signed by 0x[0-9a-f]{40}, written to .*receipt\.json \(check it: sigil-verify .* --receipt .*\)$/m);
  const answer = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(answer.receipt.message.cid, state.cid);
  const key = JSON.parse(execFileSync('curl', ['-sk', `${stack.url}/evidences/receipt-key.json`]).toString());
  const { domain, types, message, signature } = answer.receipt;
  assert.equal(ethers.verifyTypedData(domain, types, message, signature).toLowerCase(), key.address);
  const local = await run(['run', '--local', join(home.dir, 'other.js'), '--receipt', out]);
  assert.equal(local.code, 2);
});

test('a run the groups do not allow: 403 with the fix; an action error exits 1', async () => {
  const file = join(home.dir, 'other.js');
  writeFileSync(file, 'async function main() { throw new Error("boom"); }');
  const refused = await run(['run', file]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^sigil: not_authorized \(HTTP 403\): .*\n  fix: put the action and the PKP into a group/);
  const add = await run(['group', 'add-action', state.group, (await run(['action', 'cid', file])).stdout.trim()]);
  assert.equal(add.code, 0, add.stderr);
  const failed = await run(['run', file, '--json']);
  assert.equal(failed.code, 1);
  assert.equal(failed.json.error.code, 'script_error');
  assert.equal(failed.json.error.message, 'boom');
});

test('usage keys: add (value once), list by hash, update and revoke by hash (needs compat: "api: usage keys by hash")', async () => {
  const add = await run(['key', 'add', '--name', 'runner', '--execute', state.group, '--json']);
  assert.equal(add.code, 0, add.stderr);
  const { usage_api_key: usageKey, api_key_hash: hash } = add.json;
  assert.equal(hash, ethers.keccak256(ethers.toUtf8Bytes(usageKey)));
  const list = await run(['key', 'list']);
  assert.match(list.stdout, new RegExp(`^${hash}  runner  execute:${state.group} manage-actions:- add-pkp:- remove-pkp:-$`, 'm'));
  assert.ok(!list.stdout.includes(usageKey));
  // The usage key runs the group's action through its own profile.
  const params = JSON.stringify({ pkpId: state.pkp, message: 'usage' });
  const used = await run(['run', state.cid, '--pkp', state.pkp, '--params', params, '--json'], { SIGIL_API_KEY: usageKey });
  assert.equal(used.json.has_error, false, used.stdout + used.stderr);
  const update = await run(['key', 'update', hash, '--execute', 'all', '--create-pkps']);
  assert.equal(update.code, 0, update.stderr);
  assert.match((await run(['key', 'list'])).stdout, /runner  execute:all .* create-pkps/);
  // Guardrails: set (any option replaces them all), shown, a run over the rate refused, cleared.
  const guard = await run(['key', 'guardrails', hash, '--rate', '0.1', '--burst', '1', '--origins', 'https://app.example', '--json']);
  assert.equal(guard.code, 0, guard.stderr);
  assert.equal(guard.json.requests_per_second, 0.1);
  assert.deepEqual(guard.json.allowed_origins, ['https://app.example']);
  assert.match((await run(['key', 'guardrails', hash])).stdout, /rate: 0\.1\/s burst 1\norigins|rate: 0\.1\/s burst 1/);
  await run(['run', state.cid, '--pkp', state.pkp, '--params', params], { SIGIL_API_KEY: usageKey });
  const limited = await run(['run', state.cid, '--pkp', state.pkp, '--params', params], { SIGIL_API_KEY: usageKey });
  assert.match(limited.stderr, /rate_limited \(HTTP 429\)/);
  assert.match((await run(['key', 'guardrails', hash, '--clear'])).stdout, /guardrails cleared/);
  const revoke = await run(['key', 'revoke', hash]);
  assert.equal(revoke.code, 0, revoke.stderr);
  const after = await run(['run', state.cid, '--pkp', state.pkp, '--params', params], { SIGIL_API_KEY: usageKey });
  assert.match(after.stderr, /invalid_api_key \(HTTP 401\)/);
});

test('scripts/ipfs-add puts a file where a running stack\'s gateway serves it', async () => {
  const { spawnSync } = require('node:child_process');
  writeFileSync(join(stack.home, 'gateway_dir'), stack.gatewayDir);  // what scripts/start writes
  const file = join(home.dir, 'added.js');
  writeFileSync(file, 'async function main() { return "added"; }');
  const r = spawnSync(join(import.meta.dirname, '../../../scripts/ipfs-add'), [file], { env: { ...process.env, SIGIL_HOME: stack.home } });
  assert.equal(r.status, 0, r.stderr.toString());
  const cid = r.stdout.toString().trim();
  assert.equal(readFileSync(join(stack.gatewayDir, cid), 'utf8'), readFileSync(file, 'utf8'));
});

test('errors name the fix: an untrusted certificate, nothing listening, a bad group id', async () => {
  const noCa = await run(['group', 'list', '--ca-file', '/etc/ssl/certs/ca-certificates.crt']);
  assert.match(noCa.stderr, /network_error: .*\n  fix: the service's certificate is not trusted: give its CA with --ca-file/);
  const down = await run(['group', 'list', '--url', 'https://127.0.0.1:1']);
  assert.match(down.stderr, /fix: nothing answers at https:\/\/127\.0\.0\.1:1: start the stack \(scripts\/start\)/);
  const bad = await run(['group', 'add-pkp', 'x', state.pkp, '--json']);
  assert.equal(bad.json.error.code, 'usage');
  assert.match(bad.json.error.fix, /sigil group list/);
  const unknown = await run(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"\n  fix: sigil --help/);
});

test('every command answers --help', async () => {
  const top = await run(['--help']);
  const commands = [...top.stdout.matchAll(/^ {2}sigil ([a-z-]+(?: [a-z-]+)?)\s{2,}/gm)].map((m) => m[1]);
  assert.ok(commands.length >= 25, top.stdout);
  for (const c of commands) {
    const help = await run([...c.split(' '), '--help']);
    assert.equal(help.code, 0, c);
    assert.match(help.stdout, new RegExp(`^usage: sigil ${c}`), c);
  }
});

test('sigil verify runs sigil-verify on the profile\'s service and CA', async () => {
  const measured = JSON.parse(execFileSync(process.execPath, [TEE_SIM, '--print-measurements']).toString());
  const r = await run(['verify', '--app-id', stack.governance, '--governance-rpc', stack.rpcUrl, '--allow-simulated',
    '--allow-unchecked', '4,7', ...Object.entries(measured).flatMap(([k, v]) => [`--${k}`, v]), '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.json.summary, /^OK SIMULATED/);
});

test('sigil verify --dev adds what scripts/start\'s banner passes (its expect.json, simulated quotes, rules 4 and 7)', async () => {
  // What scripts/start writes to its home: the app id and the simulator's measurements.
  const measured = JSON.parse(execFileSync(process.execPath, [TEE_SIM, '--print-measurements']).toString());
  writeFileSync(join(stack.home, 'expect.json'), JSON.stringify({ app_id: stack.governance, ...measured }));
  const r = await run(['verify', '--dev', '--json'], { SIGIL_HOME: stack.home });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.json.summary, /^OK SIMULATED/);
  const missing = await run(['verify', '--dev']);   // the CLI's own SIGIL_HOME runs no stack
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /stack_not_running: .*expect\.json is missing.*\n  fix: start it: scripts\/start/);
});

