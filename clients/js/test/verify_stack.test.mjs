// sigil-verify against the whole stack (tests/api/stack.mjs with the simulated guest agent): the
// worker's /attestation and /info relaying sigil-tee-sim, the evidence set sigil-evidence wrote and
// nginx serves at /evidences/, the certificate nginx presents, AppGovernance on the stack's anvil,
// and CAA for the evidence's domain from a loopback DNS server. The expectations (app id, the
// simulator's OS measurements) are the test's own, never read from the stack. And a man in the
// middle that relays the stack's quotes but serves its own certificate and evidence set, with a
// quote.json obtained from the stack's /attestation?nonce=: it passed rules 5 and 6 before issue 22.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startStack, ACME_ACCOUNT_URI, httpsRequest } from '../../../tests/api/stack.mjs';
import { startDnsServer, startDeploymentServer, selfSignedCert, evidenceFiles, TEE_SIM } from './verify_support.mjs';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '../src/verify/cli.js');
const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let stack;
let dns;
let tmp;
// The simulator's fixed OS measurements, as its own --print-measurements states them.
const MEASURED = JSON.parse(execFileSync(process.execPath, [TEE_SIM, '--print-measurements']).toString());

before(async () => {
  stack = await startStack({ workers: 1, teeSim: true });
  // The development certificate is cert-localhost.pem; its CAA, as a production zone would publish it.
  dns = await startDnsServer(new Map([
    ['localhost', { caa: [{ flags: 0, tag: 'issue', value: `letsencrypt.org; validationmethods=dns-01; accounturi=${ACME_ACCOUNT_URI}` }] }],
  ]));
  tmp = mkdtempSync(join(tmpdir(), 'sigil-verify-stack-'));
});

after(async () => {
  await dns?.close();
  await stack?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const expectations = () => ['--app-id', stack.governance, '--allow-unchecked', '4', ...Object.entries(MEASURED).flatMap(([k, v]) => [`--${k}`, v])];
const args = (url = stack.url, caFile = join(stack.home, 'nginx/tls/cert.pem')) => [
  CLI, url, '--ca-file', caFile, '--governance-rpc', stack.rpcUrl, '--dns-server', dns.server, ...expectations(),
];

test('the development stack passes every rule but 4 with --allow-simulated', async () => {
  const { stdout } = await run(process.execPath, [...args(), '--allow-simulated', '--json']);
  const report = JSON.parse(stdout);
  assert.deepEqual(report.rules.map((r) => [r.rule, r.status]), [
    [1, 'pass'], [2, 'pass'], [3, 'pass'], [4, 'not_checked'], [5, 'pass'], [6, 'pass'], [7, 'pass'], [8, 'pass'],
  ], stdout);
  assert.equal(report.ok, true);
  assert.equal(report.simulated, true);
  assert.match(report.summary, /^OK SIMULATED: 7 of 8 rules passed; not checked: 4 \(allowed\)/);
  assert.match(report.rules[7].reason, new RegExp(`${stack.governance.slice(2)}`, 'i'));
});

test('a man in the middle with the stack\'s nonce quote as its quote.json fails rule 5 (exit 1)', async () => {
  await sleep(1100);
  const stackGet = async (path) => {
    const r = await httpsRequest(undefined, stack.url + path, 'GET');
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  // Its own certificate for the same name, an evidence set over it, and for quote.json the TEE's
  // quote for ?nonce=<the report_data that set needs> (SHA-256(sha256sum.txt) zero padded).
  const mitmCert = selfSignedCert('localhost');
  const files = await evidenceFiles({
    domain: 'localhost', certPem: mitmCert.certPem, accountUri: ACME_ACCOUNT_URI,
    getQuote: (rd) => stackGet(`/attestation?nonce=${rd.toString('hex')}`),
  });
  const state = { deployment: { info: await stackGet('/info'), files, relayAttestation: (search) => stackGet(`/attestation${search}`) } };
  const mitm = await startDeploymentServer(state, mitmCert);
  const caFile = join(tmp, 'mitm-ca.pem');
  writeFileSync(caFile, mitmCert.certPem);
  try {
    await sleep(1100);
    const e = await run(process.execPath, [...args(mitm.url, caFile), '--allow-simulated']).then(() => null, (x) => x);
    assert.ok(e, 'the man in the middle must not pass');
    assert.equal(e.code, 1);
    const sums = files.get('sha256sum.txt');
    const wanted = createHash('sha256').update(sums).digest('hex') + '00'.repeat(32);
    assert.match(e.stdout, new RegExp(`^rule 5 FAIL .*quote.json: report_data is not SHA-256\\(sha256sum.txt\\) zero padded \\(quote has [0-9a-f]{128}, expected ${wanted}\\)`, 'm'));
    // Everything else about the relay holds: the quotes are the stack's, the certificate its own.
    for (const n of [1, 2, 3, 6, 7, 8]) assert.match(e.stdout, new RegExp(`^rule ${n} pass `, 'm'));
    assert.match(e.stdout, /^summary: FAIL SIMULATED: 6 of 8 rules passed; failed: 5;/m);
  } finally {
    await mitm.close();
  }
});

test('without --allow-simulated its quotes are refused (exit 1)', async () => {
  await sleep(1100); // the worker rate limits ?nonce= quotes per client
  const e = await run(process.execPath, args()).then(() => null, (x) => x);
  assert.ok(e, 'must exit non-zero');
  assert.equal(e.code, 1);
  assert.match(e.stdout, /^rule 1 FAIL .*simulated quote/m);
  assert.match(e.stdout, /^rule 5 FAIL .*simulated quote/m);
  assert.match(e.stdout, /^rule 6 pass /m);
  assert.match(e.stdout, /^summary: FAIL SIMULATED: /m);
});
