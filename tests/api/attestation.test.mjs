// GET /attestation, GET /info and /evidences/ against the whole stack with the simulated guest agent
// (sigil-tee-sim) and the evidence set sigil-evidence wrote: the relay, the cache, the nonce binding,
// the nonce rate limit, the evidence files' consistency, and a silent agent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { startStack, assertError, httpsRequest } from './stack.mjs';

let stack;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sha256 = (data) => createHash('sha256').update(data).digest('hex');
// The report_data of a nonce quote (DESIGN.md section 6): SHA-512 of the label and the nonce's bytes.
const nonceReportData = (nonceHex) => createHash('sha512').update('sigil/attestation-nonce/v1')
  .update(Buffer.from(nonceHex.replace(/^0x/, ''), 'hex')).digest('hex');
// A GET with the query exactly as written (URLSearchParams would encode it its own way).
const rawGet = (pathAndQuery) => httpsRequest(undefined, stack.url + pathAndQuery, 'GET');

// The TD report's report_data: after the 48-byte header and 520 bytes of the body (TDX quote v4).
const REPORT_DATA_OFFSET = 48 + 520;
const quoteReportData = (quoteHex) => Buffer.from(quoteHex.replace(/^0x/, ''), 'hex')
  .subarray(REPORT_DATA_OFFSET, REPORT_DATA_OFFSET + 64).toString('hex');

before(async () => {
  stack = await startStack({ workers: 2, teeSim: true, workerOptions: ['attestation_timeout_ms = 500'] });
});
after(async () => { await stack?.stop(); });

test('GET /attestation relays a quote for report_data all zeros, cached by the worker', async () => {
  const r = await stack.request('GET', '/attestation');
  assert.equal(r.status, 200, r.text);
  assert.match(r.json.quote, /^(0x)?[0-9a-f]+$/);
  assert.equal(typeof r.json.event_log, 'string');
  assert.ok(Array.isArray(JSON.parse(r.json.event_log)));
  assert.equal(typeof r.json.vm_config, 'string');
  assert.equal(r.json.report_data, '0'.repeat(128));
  assert.equal(quoteReportData(r.json.quote), '0'.repeat(128));
  assert.equal(r.json.simulated, true);
  // The agent signs each quote afresh (ECDSA is randomized): equal quotes mean the cache answered.
  const again = await stack.request('GET', '/attestation');
  assert.equal(again.status, 200);
  assert.equal(again.json.quote, r.json.quote);
});

test('GET /attestation?nonce= binds a fresh quote to SHA-512("sigil/attestation-nonce/v1" || nonce) (0x optional)', async () => {
  const nonce = createHash('sha256').update('a verifier nonce').digest('hex');
  const r = await stack.request('GET', '/attestation', { query: { nonce } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.report_data, nonceReportData(nonce));
  assert.equal(quoteReportData(r.json.quote), nonceReportData(nonce));
  const full = 'ab'.repeat(64);
  const r64 = await stack.request('GET', '/attestation', { query: { nonce: '0x' + full } });
  assert.equal(r64.status, 200, r64.text);
  assert.equal(quoteReportData(r64.json.quote), nonceReportData(full));
});

test('a nonce quote never binds the evidence quote\'s report_data (issue 22: a forged evidence set)', async () => {
  await sleep(1100);
  // An attacker's own sha256sum.txt: before, ?nonce=<its SHA-256> gave a TEE quote that passed as
  // its quote.json (report_data = SHA-256(sums) zero padded).
  const forgedSums = `${'ab'.repeat(32)}  cert-evil.example.pem\n${'cd'.repeat(32)}  acme-account.json\n`;
  const wanted = sha256(forgedSums) + '0'.repeat(64);
  for (const nonce of [sha256(forgedSums), wanted]) {
    const r = await stack.request('GET', '/attestation', { query: { nonce } });
    assert.equal(r.status, 200, r.text);
    assert.notEqual(quoteReportData(r.json.quote), wanted);
    assert.equal(quoteReportData(r.json.quote), nonceReportData(nonce));
  }
});

test('/attestation refuses any query but one literal nonce (400 invalid_query)', async () => {
  await sleep(3000);
  for (const q of ['?%6eonce=01', '?%6Eonce=01', '?n%6fnce=01', '?foo=1', '?nonce=01&nonce=02', '?nonce=01&x=1', '?x=1&nonce=01', '?nonce', '?NONCE=01']) {
    assertError(await rawGet(`/attestation${q}`), 400, 'invalid_query', q);
    await sleep(500);  // under nginx's 2 r/s: each of these is limited like a nonce
  }
  // The nonce's value is hex: an escape in it is not decoded but refused.
  assertError(await rawGet('/attestation?nonce=%30%31'), 400, 'invalid_nonce');
});

test('nginx limits every /attestation request with a query, whatever its parameter is called', async () => {
  await sleep(3000);  // the bucket is full again
  const answers = [];
  for (let i = 0; i < 12; i++) answers.push(await rawGet(`/attestation?%6eonce=${i.toString(16).padStart(2, '0')}`));
  const limited = answers.filter((a) => a.status === 429);
  // Before, ?%6eonce= was keyed to "" by $arg_nonce: never limited, and the worker read it as a nonce.
  assert.ok(limited.length >= 3, `statuses: ${answers.map((a) => a.status)}`);
  assert.equal(limited[0].json.error.code, 'rate_limited');
  assert.ok(answers.every((a) => a.status === 429 || a.status === 400), `statuses: ${answers.map((a) => a.status)}`);
});

test('a nonce that is not hex of 1 to 64 bytes is 400 invalid_nonce', async () => {
  await sleep(3000);  // stay clear of the rate limit the previous test used up
  for (const nonce of ['zz', 'abc', 'ab'.repeat(65), '0x']) {
    assertError(await stack.request('GET', '/attestation', { query: { nonce } }), 400, 'invalid_nonce', nonce);
  }
});

test('nonces are rate limited per client (429 JSON with Retry-After); the nonce-less quote is not', async () => {
  await sleep(3000);  // 2 r/s with a burst of 5: the bucket is full again
  const answers = [];
  for (let i = 0; i < 12; i++) {
    answers.push(await stack.request('GET', '/attestation', { query: { nonce: i.toString(16).padStart(2, '0') } }));
  }
  const limited = answers.filter((a) => a.status === 429);
  assert.ok(limited.length >= 3, `statuses: ${answers.map((a) => a.status)}`);
  assert.equal(limited[0].json.error.code, 'rate_limited');
  assert.equal(limited[0].headers['retry-after'], '1');
  assert.ok(answers.slice(0, 5).every((a) => a.status === 200), `the burst is served: ${answers.map((a) => a.status)}`);
  for (let i = 0; i < 10; i++) assert.equal((await stack.request('GET', '/attestation')).status, 200);
});

test('GET /info relays app_id, compose_hash and tcb_info as an object; the compose hash is allowed on chain', async () => {
  const r = await stack.request('GET', '/info');
  assert.equal(r.status, 200, r.text);
  assert.equal('0x' + r.json.app_id.replace(/^0x/, '').toLowerCase(), stack.governance.toLowerCase());
  assert.equal('0x' + r.json.compose_hash, stack.composeHash);
  assert.equal(typeof r.json.tcb_info, 'object');
  assert.equal(sha256(r.json.tcb_info.app_compose), r.json.compose_hash);
  assert.ok(JSON.parse(r.json.tcb_info.app_compose).docker_compose_file.includes('@sha256:'));
});

test('/evidences/ holds a consistent set: sha256sum.txt covers the files, quote.json binds sha256sum.txt', async () => {
  const listing = await stack.request('GET', '/evidences/');
  assert.equal(listing.status, 200);
  for (const f of ['cert-localhost.pem', 'acme-account.json', 'receipt-key.json', 'sha256sum.txt', 'quote.json']) {
    assert.ok(listing.text.includes(`href="${f}"`), `${f} listed`);
  }
  const sums = await stack.request('GET', '/evidences/sha256sum.txt');
  assert.equal(sums.status, 200);
  const lines = sums.text.trim().split('\n');
  assert.equal(lines.length, 3);  // the certificate, the ACME account, the receipt key (docs/receipts.md)
  for (const line of lines) {
    const [, digest, name] = line.match(/^([0-9a-f]{64}) {2}(\S+)$/);
    const file = await stack.request('GET', `/evidences/${name}`);
    assert.equal(file.status, 200, name);
    assert.equal(sha256(file.raw), digest, name);
  }
  const acme = (await stack.request('GET', '/evidences/acme-account.json')).json;
  assert.equal(acme.uri, stack.acmeAccountUri);
  const quote = (await stack.request('GET', '/evidences/quote.json')).json;
  const expected = sha256(sums.raw) + '0'.repeat(64);
  assert.equal(quote.report_data, expected);
  assert.equal(quoteReportData(quote.quote), expected);
});

test('the attested certificate is the one nginx serves in the TLS handshake (rule 6)', async () => {
  const pem = (await stack.request('GET', '/evidences/cert-localhost.pem')).text;
  const attested = new X509Certificate(pem).raw;
  const { port } = new URL(stack.url);
  const live = await new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate(true).raw);
      s.end();
    });
    s.on('error', reject);
  });
  assert.equal(sha256(live), sha256(attested));
});

test('a silent guest agent: nonce quotes answer 503 attestation_unavailable within the timeout; the rest keeps serving', async () => {
  await sleep(1100);
  const pid = stack.pidOf('tee-sim');
  assert.ok(pid);
  process.kill(pid, 'SIGSTOP');
  try {
    const t0 = Date.now();
    const r = await stack.request('GET', '/attestation', { query: { nonce: '01' } });
    const ms = Date.now() - t0;
    assertError(r, 503, 'attestation_unavailable');
    assert.equal(r.headers['retry-after'], '5');
    assert.ok(ms < 2000, `answered in ${ms} ms with a 500 ms agent timeout`);
    assert.ok(!r.text.includes('dstack.sock'), 'the socket path stays in the log');
    assert.equal((await stack.request('GET', '/core/v1/version')).status, 200);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  await sleep(1100);
  assert.equal((await stack.request('GET', '/attestation', { query: { nonce: '02' } })).status, 200);
});

test('regenerating the evidence set never shows a reader a half-written or mixed file', async () => {
  // Two certificates alternate, so every regeneration changes each file; a reader polls through nginx.
  const { execFileSync, execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { BUILD_DIR } = await import('./stack.mjs');
  const scratch = mkdtempSync('/tmp/sigil-evidence-regen-');
  const certs = [join(stack.home, 'nginx/tls/cert.pem'), join(scratch, 'other.pem')];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-subj', '/CN=other', '-keyout', join(scratch, 'other.key'), '-out', certs[1]], { stdio: 'ignore' });
  const receiptKey = readFileSync(join(stack.evidenceDir, 'receipt-key.json'));
  const valid = new Set(certs.map((c) => {
    const pem = readFileSync(c);
    const acme = JSON.stringify({ uri: stack.acmeAccountUri }) + '\n';
    return `${sha256(pem)}  cert-localhost.pem\n${sha256(acme)}  acme-account.json\n${sha256(receiptKey)}  receipt-key.json\n`;
  }));
  // Asynchronous, so the reader runs while sigil-evidence writes.
  const write = (cert) => promisify(execFile)(join(BUILD_DIR, 'bin/sigil-evidence'), ['--dir', stack.evidenceDir, '--cert', cert,
    '--domain', 'localhost', '--acme-account-uri', stack.acmeAccountUri, '--agent-socket', stack.teeSocket,
    '--keyd-socket', stack.keydSocket]);
  let stop = false;
  let reads = 0;
  const problems = [];
  const reader = (async () => {
    while (!stop) {
      const [sums, quote] = await Promise.all([stack.request('GET', '/evidences/sha256sum.txt'),
        stack.request('GET', '/evidences/quote.json')]);
      reads++;
      if (sums.status !== 200 || !valid.has(sums.text)) problems.push(`sha256sum.txt: ${sums.status} ${sums.text.slice(0, 80)}`);
      const reportData = quote.json?.report_data;
      if (quote.status !== 200 || ![...valid].some((t) => reportData === sha256(t) + '0'.repeat(64))) {
        problems.push(`quote.json: ${quote.status} ${quote.text.slice(0, 80)}`);
      }
    }
  })();
  try {
    for (let i = 0; i < 30; i++) await write(certs[i % 2]);
  } finally {
    stop = true;
    await reader;
    await write(certs[0]);  // the served certificate again
    rmSync(scratch, { recursive: true, force: true });
  }
  console.log(`# ${reads} reads of both files during 30 regenerations`);
  assert.ok(reads >= 10, `only ${reads} reads during the regenerations`);
  assert.deepEqual(problems, []);
});
