// sigil-verify against the whole stack (tests/api/stack.mjs with the simulated guest agent): the
// worker's /attestation and /info relaying sigil-tee-sim, the evidence set sigil-evidence wrote and
// nginx serves at /evidences/, the certificate nginx presents, AppGovernance on the stack's anvil,
// and CAA for the evidence's domain from a loopback DNS server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startStack, ACME_ACCOUNT_URI } from '../../../tests/api/stack.mjs';
import { startDnsServer } from './verify_support.mjs';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '../src/verify/cli.js');
const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let stack;
let dns;

before(async () => {
  stack = await startStack({ workers: 1, teeSim: true });
  // The development certificate is cert-localhost.pem; its CAA, as a production zone would publish it.
  dns = await startDnsServer(new Map([
    ['localhost', { caa: [{ flags: 0, tag: 'issue', value: `letsencrypt.org; validationmethods=dns-01; accounturi=${ACME_ACCOUNT_URI}` }] }],
  ]));
});

after(async () => {
  await dns?.close();
  await stack?.stop();
});

const args = () => [CLI, stack.url, '--ca-file', join(stack.home, 'nginx/tls/cert.pem'), '--governance-rpc', stack.rpcUrl, '--dns-server', dns.server];

test('the development stack passes every rule but 4 with --allow-simulated', async () => {
  const { stdout } = await run(process.execPath, [...args(), '--allow-simulated', '--json']);
  const report = JSON.parse(stdout);
  assert.deepEqual(report.rules.map((r) => [r.rule, r.status]), [
    [1, 'pass'], [2, 'pass'], [3, 'pass'], [4, 'not_checked'], [5, 'pass'], [6, 'pass'], [7, 'pass'], [8, 'pass'],
  ], stdout);
  assert.equal(report.ok, true);
  assert.equal(report.simulated, true);
  assert.match(report.rules[7].reason, new RegExp(`${stack.governance.slice(2)}`, 'i'));
});

test('without --allow-simulated its quotes are refused (exit 1)', async () => {
  await sleep(1100); // the worker rate limits ?nonce= quotes per client
  const e = await run(process.execPath, args()).then(() => null, (x) => x);
  assert.ok(e, 'must exit non-zero');
  assert.equal(e.code, 1);
  assert.match(e.stdout, /^rule 1 FAIL .*simulated quote/m);
  assert.match(e.stdout, /^rule 5 FAIL .*simulated quote/m);
  assert.match(e.stdout, /^rule 6 pass$/m);
});
