// sigil-tee-sim (evidence/tee-sim): its socket API, the quote layout field by field, RTMR3 against
// the event log, the signature, compose_hash, bad requests, and its life cycle on the socket.
// The layout offsets here are written out by hand from evidence/README.md, not taken from quote.mjs.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createHash, createHmac, createPublicKey, verify } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventDigestV1, replayRtmr, RUNTIME_EVENT_TYPE } from '../../evidence/tee-sim/quote.mjs';

const SOURCE_DIR = process.env.SIGIL_SOURCE_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SIM = join(SOURCE_DIR, 'evidence/tee-sim/sigil-tee-sim.mjs');
const COMPOSE = join(SOURCE_DIR, 'evidence/dev/app-compose.json');
const APP_ID = '5fbdb2315678afecb367f032d93f642f64180aa3';
const INSTANCE_ID = '00112233445566778899aabbccddeeff00112233';

const sha256 = (b) => createHash('sha256').update(b).digest();
const sha384 = (...parts) => parts.reduce((h, p) => h.update(p), createHash('sha384')).digest();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Offsets of the TDX v4 quote (header 48 bytes, TD report body 584 bytes).
const BODY = 48;
const AT = {
  tee_tcb_svn: [BODY, 16], mrseam: [BODY + 16, 48], mrsignerseam: [BODY + 64, 48], seam_attributes: [BODY + 112, 8],
  td_attributes: [BODY + 120, 8], xfam: [BODY + 128, 8], mrtd: [BODY + 136, 48], mrconfigid: [BODY + 184, 48],
  mrowner: [BODY + 232, 48], mrownerconfig: [BODY + 280, 48], rtmr0: [BODY + 328, 48], rtmr1: [BODY + 376, 48],
  rtmr2: [BODY + 424, 48], rtmr3: [BODY + 472, 48], report_data: [BODY + 520, 64],
};
const field = (quote, name) => quote.subarray(AT[name][0], AT[name][0] + AT[name][1]);

/// Starts the simulator on `socket`; resolves once the socket answers.
async function startSim(socket, extra = [], appId = APP_ID) {
  const child = spawn(process.execPath, [SIM, '--socket', socket, '--app-id', `0x${appId.toUpperCase()}`,
    '--compose', COMPOSE, '--instance-id', INSTANCE_ID, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stderrText = () => stderr;
  child.exitPromise = new Promise((r) => child.on('exit', (code, signal) => r(signal ?? code)));
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break;
    if (stderr.includes('guest agent on')) return child;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error(`sigil-tee-sim did not start: ${stderr}`);
}

/// One HTTP request over the unix socket: {status, headers, json}.
function request(socketPath, method, path, body = null) {
  return new Promise((res, rej) => {
    const req = http.request({ socketPath, method, path, headers: body === null ? {} : { 'Content-Type': 'application/json' } }, (resp) => {
      const chunks = [];
      resp.on('data', (d) => chunks.push(d));
      resp.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        res({ status: resp.statusCode, headers: resp.headers, json, text });
      });
    });
    req.on('error', rej);
    if (body !== null) req.write(typeof body === 'string' ? body : JSON.stringify(body));
    req.end();
  });
}

/// The register replay written out again: mr = SHA-384(mr || digest), from 48 zero bytes.
function replay(events, imr) {
  let mr = Buffer.alloc(48);
  for (const e of events.filter((x) => x.imr === imr)) mr = sha384(mr, Buffer.from(e.digest, 'hex'));
  return mr;
}

describe('sigil-tee-sim', () => {
  let dir;
  let socket;
  let sim;
  const composeBytes = readFileSync(COMPOSE);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sigil-tee-sim-test-'));
    socket = join(dir, 'tee/dstack.sock');
    sim = await startSim(socket);
  });
  after(async () => {
    if (sim && sim.exitCode === null) {
      sim.kill('SIGKILL');
      await sim.exitPromise;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('computes the V1 digest of a runtime event as the spec says (values computed by hand)', () => {
    // SHA-384(01 00 00 08 || ":" || "system-ready" || ":") and the same with the 20 app id bytes.
    assert.equal(RUNTIME_EVENT_TYPE, 134217729);
    assert.equal(eventDigestV1(RUNTIME_EVENT_TYPE, 'system-ready', Buffer.alloc(0)).toString('hex'),
      '1a76b2a80a0be71eae59f80945d876351a7a3fb8e9fd1ff1cede5734aa84ea11fd72b4edfbb6f04e5a85edd114c751bd');
    assert.equal(eventDigestV1(RUNTIME_EVENT_TYPE, 'app-id', Buffer.from(APP_ID, 'hex')).toString('hex'),
      'feb3d6a0aec49218e2eea05973276862a3abe4a21f0ae7d8cbed678cee62d56c8bfacbec7ec0f42e6ca8705177fa7bd7');
    const preimage = Buffer.concat([Buffer.from([0x01, 0x00, 0x00, 0x08]), Buffer.from(':compose-hash:'), Buffer.alloc(32, 7)]);
    assert.deepEqual(eventDigestV1(RUNTIME_EVENT_TYPE, 'compose-hash', Buffer.alloc(32, 7)), sha384(preimage));
  });

  it('replays an empty digest of a runtime event with its V1 digest', () => {
    const events = [
      { imr: 3, event_type: RUNTIME_EVENT_TYPE, digest: '', event: 'system-ready', event_payload: '' },
      { imr: 2, event_type: 13, digest: 'ab'.repeat(48), event: '', event_payload: '' },
    ];
    const digest = Buffer.from('1a76b2a80a0be71eae59f80945d876351a7a3fb8e9fd1ff1cede5734aa84ea11fd72b4edfbb6f04e5a85edd114c751bd', 'hex');
    assert.deepEqual(replayRtmr(events, 3), sha384(Buffer.alloc(48), digest));
    assert.deepEqual(replayRtmr(events, 2), sha384(Buffer.alloc(48), Buffer.alloc(48, 0xab)));
  });

  it('listens on a socket everyone may connect to', () => {
    assert.ok(statSync(socket).isSocket());
    assert.equal(statSync(socket).mode & 0o777, 0o666);
  });

  it('prints the compose hash of a compose file', () => {
    const out = execFileSync(process.execPath, [SIM, '--compose', COMPOSE, '--print-compose-hash']).toString().trim();
    assert.equal(out, sha256(composeBytes).toString('hex'));
  });

  it('prints the measurements a verifier pins: those of its Info and quotes', async () => {
    const printed = JSON.parse(execFileSync(process.execPath, [SIM, '--print-measurements']).toString());
    assert.deepEqual(Object.keys(printed), ['mrtd', 'rtmr0', 'rtmr1', 'rtmr2']);
    const tcb = JSON.parse((await request(socket, 'GET', '/Info')).json.tcb_info);
    for (const name of Object.keys(printed)) assert.equal(printed[name], tcb[name], name);
    assert.equal(printed.mrtd, createHash('sha384').update('sigil-tee-sim: mrtd').digest('hex'));
  });

  it('answers Info with app id, compose hash, app_compose and the measurements', async () => {
    for (const method of ['GET', 'POST']) {
      const r = await request(socket, method, '/Info');
      assert.equal(r.status, 200);
      assert.match(r.headers['content-type'], /^application\/json/);
      const info = r.json;
      assert.equal(info.simulated, true);
      assert.equal(info.app_id, APP_ID);
      assert.equal(info.instance_id, INSTANCE_ID);
      assert.equal(info.app_name, 'sigil');
      assert.match(info.device_id, /^[0-9a-f]+$/);
      assert.equal(typeof info.key_provider_info, 'string');
      JSON.parse(info.key_provider_info);

      const tcb = JSON.parse(info.tcb_info);
      // compose_hash = SHA-256 of the exact app_compose string (rule 2), which is the file.
      assert.equal(tcb.app_compose, composeBytes.toString('utf8'));
      assert.equal(info.compose_hash, sha256(Buffer.from(tcb.app_compose, 'utf8')).toString('hex'));
      const compose = JSON.parse(tcb.app_compose);
      assert.equal(compose.name, 'sigil');
      assert.equal(compose.runner, 'docker-compose');
      // Every image pinned by digest (rule 3).
      const images = [...compose.docker_compose_file.matchAll(/^\s*image:\s*(\S+)\s*$/gm)].map((m) => m[1]);
      assert.ok(images.length >= 3, compose.docker_compose_file);
      for (const image of images) assert.match(image, /^[^@\s]+@sha256:[0-9a-f]{64}$/);

      for (const name of ['mrtd', 'rtmr0', 'rtmr1', 'rtmr2', 'rtmr3']) assert.match(tcb[name], /^[0-9a-f]{96}$/);
      assert.ok(Array.isArray(tcb.event_log));
      for (const imr of [0, 1, 2, 3]) assert.equal(tcb[`rtmr${imr}`], replay(tcb.event_log, imr).toString('hex'));
    }
  });

  it('answers GetQuote with a TDX v4 quote, field by field', async () => {
    const info = (await request(socket, 'GET', '/Info')).json;
    const tcb = JSON.parse(info.tcb_info);
    const r = await request(socket, 'POST', '/GetQuote', { report_data: 'abcdEF01' });
    assert.equal(r.status, 200);
    const a = r.json;
    assert.equal(a.simulated, true);
    assert.equal(a.report_data, 'abcdef01' + '00'.repeat(60));
    assert.equal(typeof a.event_log, 'string');
    assert.equal(typeof a.vm_config, 'string');
    JSON.parse(a.vm_config);
    assert.match(a.quote, /^[0-9a-f]+$/);
    const q = Buffer.from(a.quote, 'hex');

    // Header.
    assert.equal(q.readUInt16LE(0), 4, 'version');
    assert.equal(q.readUInt16LE(2), 2, 'attestation key type ECDSA-256 P-256');
    assert.equal(q.readUInt32LE(4), 0x81, 'TEE type TDX');
    assert.deepEqual(q.subarray(8, 12), Buffer.alloc(4), 'reserved');
    assert.equal(q.subarray(12, 28).toString('latin1'), 'SIGIL-SIMULATED!', 'QE vendor id');
    assert.deepEqual(q.subarray(28, 48), Buffer.alloc(20), 'user data');

    // Body.
    assert.deepEqual(field(q, 'report_data'), Buffer.concat([Buffer.from('abcdef01', 'hex'), Buffer.alloc(60)]));
    assert.deepEqual(field(q, 'td_attributes'), Buffer.alloc(8), 'no debug TD');
    for (const name of ['mrtd', 'rtmr0', 'rtmr1', 'rtmr2', 'rtmr3']) assert.equal(field(q, name).toString('hex'), tcb[name], name);
    const events = JSON.parse(a.event_log);
    assert.deepEqual(events, tcb.event_log);
    assert.deepEqual(field(q, 'rtmr3'), replay(events, 3), 'RTMR3 is the replay of the event log');
    assert.deepEqual(field(q, 'rtmr3'), replayRtmr(events, 3));

    // The runtime events: dstack's order, V1 digests, the payloads they must carry.
    const runtime = events.filter((e) => e.imr === 3);
    assert.deepEqual(runtime.map((e) => e.event),
      ['system-preparing', 'app-id', 'compose-hash', 'instance-id', 'boot-mr-done', 'key-provider', 'system-ready']);
    for (const e of runtime) {
      assert.equal(e.event_type, 0x08000001);
      const pre = Buffer.concat([Buffer.from([1, 0, 0, 8]), Buffer.from(`:${e.event}:`), Buffer.from(e.event_payload, 'hex')]);
      assert.equal(e.digest, sha384(pre).toString('hex'), e.event);
    }
    const payload = (name) => runtime.find((e) => e.event === name).event_payload;
    assert.equal(payload('app-id'), APP_ID);
    assert.equal(payload('compose-hash'), info.compose_hash);
    assert.equal(payload('instance-id'), INSTANCE_ID);
    assert.equal(payload('system-ready'), '');
    for (const e of events) assert.match(e.digest, /^[0-9a-f]{96}$/);

    // Signature data: length, r||s over header||body, the attestation key x||y, certification type 0, size 0.
    const end = 48 + 584;
    assert.equal(q.readUInt32LE(end), 134);
    assert.equal(q.length, end + 4 + 134);
    const sig = q.subarray(end + 4, end + 68);
    const pub = q.subarray(end + 68, end + 132);
    assert.equal(q.readUInt16LE(end + 132), 0, 'certification data type');
    assert.equal(q.readUInt32LE(end + 134), 0, 'certification data size');
    const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: pub.subarray(0, 32).toString('base64url'),
      y: pub.subarray(32).toString('base64url') }, format: 'jwk' });
    assert.ok(verify('sha256', q.subarray(0, end), { key, dsaEncoding: 'ieee-p1363' }, sig), 'signature verifies');
    const tampered = Buffer.from(q.subarray(0, end));
    tampered[AT.report_data[0]] ^= 1;
    assert.ok(!verify('sha256', tampered, { key, dsaEncoding: 'ieee-p1363' }, sig), 'a changed body does not verify');

    // The same key signs every quote of this run.
    const again = Buffer.from((await request(socket, 'GET', '/GetQuote')).json.quote, 'hex');
    assert.deepEqual(again.subarray(end + 68, end + 132), pub);
  });

  it('takes report_data from the query of a GET, zero padded; none means zeros', async () => {
    const full = 'ff'.repeat(64);
    const r = await request(socket, 'GET', `/GetQuote?report_data=${full}`);
    assert.equal(r.status, 200);
    assert.equal(r.json.report_data, full);
    assert.deepEqual(field(Buffer.from(r.json.quote, 'hex'), 'report_data'), Buffer.alloc(64, 0xff));
    for (const [method, body] of [['GET', null], ['POST', null], ['POST', {}], ['POST', { report_data: '' }]]) {
      const z = await request(socket, method, '/GetQuote', body);
      assert.equal(z.status, 200, `${method} ${JSON.stringify(body)}`);
      assert.equal(z.json.report_data, '00'.repeat(64));
    }
  });

  it('refuses a malformed GetQuote with 400 JSON', async () => {
    const bad = [
      ['POST', { report_data: 'zz' }],
      ['POST', { report_data: 'ab'.repeat(65) }],
      ['POST', { report_data: 'abc' }],
      ['POST', { report_data: '0xabcd' }],
      ['POST', { report_data: 12 }],
      ['POST', 'not json'],
      ['POST', '[1,2]'],
      ['GET', null, `?report_data=${'00'.repeat(65)}`],
      ['GET', null, '?report_data=xyz0'],
    ];
    for (const [method, body, query = ''] of bad) {
      const r = await request(socket, method, `/GetQuote${query}`, body);
      assert.equal(r.status, 400, `${method} ${query} ${JSON.stringify(body)}`);
      assert.equal(typeof r.json?.error, 'string');
    }
  });

  it('answers 404 JSON for an unknown path and 405 for another method', async () => {
    for (const path of ['/', '/GetTlsKey', '/getquote', '/Info/x']) {
      const r = await request(socket, 'GET', path);
      assert.equal(r.status, 404, path);
      assert.equal(typeof r.json?.error, 'string');
    }
    const r = await request(socket, 'DELETE', '/Info');
    assert.equal(r.status, 405);
    assert.equal(typeof r.json?.error, 'string');
  });

  it('replaces a stale socket, refuses a path that is not a socket, and removes its socket on SIGTERM', async () => {
    const path = join(dir, 'other.sock');
    const first = await startSim(path);
    first.kill('SIGKILL');
    await first.exitPromise;
    assert.ok(existsSync(path), 'a killed simulator leaves its socket behind');
    const second = await startSim(path);
    assert.equal((await request(path, 'GET', '/Info')).status, 200);
    second.kill('SIGTERM');
    assert.equal(await second.exitPromise, 0);
    assert.ok(!existsSync(path), 'the socket is gone after SIGTERM');

    writeFileSync(path, 'not a socket');
    await assert.rejects(startSim(path), /not a socket/);
    assert.equal(readFileSync(path, 'utf8'), 'not a socket');
  });

  // GetKey's derivation written out again from the simulator's module doc (not imported from it).
  const expectedKey = (secret, appIdHex, path) => {
    const appKey = createHmac('sha256', secret).update(Buffer.concat([Buffer.from('sigil-tee-sim app key'),
      Buffer.from(appIdHex, 'hex')])).digest();
    return createHmac('sha256', appKey).update(`sigil-tee-sim GetKey\0${path}`).digest('hex');
  };
  const DEV_SECRET = Buffer.from('sigil-tee-sim development key provider (public, not a secret)');

  it('answers GetKey with a key per app id and path from its secret, marked simulated', async () => {
    const r = await request(socket, 'POST', '/GetKey', { path: 'sigil/root/v1', purpose: 'sigil-keyd root key' });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^application\/json/);
    assert.deepEqual(Object.keys(r.json).sort(), ['key', 'signature_chain', 'simulated']);
    assert.equal(r.json.key, expectedKey(DEV_SECRET, APP_ID, 'sigil/root/v1'));
    assert.deepEqual(r.json.signature_chain, []);
    assert.equal(r.json.simulated, true);
    // The same again; the purpose and the secp256k1 algorithm do not change it (as dstack's);
    // the query form of a GET is the same call.
    const again = await request(socket, 'POST', '/GetKey', { path: 'sigil/root/v1', purpose: 'other', algorithm: 'secp256k1' });
    assert.equal(again.json.key, r.json.key);
    const viaGet = await request(socket, 'GET', '/GetKey?path=sigil%2Froot%2Fv1&purpose=x');
    assert.equal(viaGet.json.key, r.json.key);
    // Another path, another key.
    const other = await request(socket, 'POST', '/GetKey', { path: 'sigil/root/v2' });
    assert.equal(other.json.key, expectedKey(DEV_SECRET, APP_ID, 'sigil/root/v2'));
    assert.notEqual(other.json.key, r.json.key);
    // An empty body is the empty path.
    assert.equal((await request(socket, 'POST', '/GetKey')).json.key, expectedKey(DEV_SECRET, APP_ID, ''));
    // The log names the path, never the key.
    const log = sim.stderrText();
    assert.match(log, /GetKey path "sigil\/root\/v1" \(SIMULATED key\)/);
    assert.ok(!log.includes(r.json.key), 'the key is never logged');
  });

  it('refuses a malformed GetKey with 400 JSON', async () => {
    for (const [body, why] of [['[1]', /JSON object/], ['{"path": 7}', /strings/], ['{', /not JSON/],
      [JSON.stringify({ path: 'x'.repeat(1025) }), /over 1024/], [JSON.stringify({ path: 'a', algorithm: 'ed25519' }), /not simulated/]]) {
      const r = await request(socket, 'POST', '/GetKey', body);
      assert.equal(r.status, 400, body);
      assert.match(r.json.error, why);
    }
  });

  it('derives GetKey from --key-secret-file, and from the app id: another app gets another key', async () => {
    const secretFile = join(dir, 'key-secret');
    writeFileSync(secretFile, 'a simulator secret of this test', { mode: 0o600 });
    const path = join(dir, 'secret.sock');
    const withSecret = await startSim(path, ['--key-secret-file', secretFile]);
    try {
      const r = await request(path, 'POST', '/GetKey', { path: 'sigil/root/v1' });
      assert.equal(r.json.key, expectedKey(Buffer.from('a simulator secret of this test'), APP_ID, 'sigil/root/v1'));
      assert.notEqual(r.json.key, expectedKey(DEV_SECRET, APP_ID, 'sigil/root/v1'));
    } finally {
      withSecret.kill('SIGTERM');
      await withSecret.exitPromise;
    }
    const otherApp = '00000000000000000000000000000000000000aa';
    const child = await startSim(path, [], otherApp);
    try {
      const r = await request(path, 'POST', '/GetKey', { path: 'sigil/root/v1' });
      assert.equal(r.json.key, expectedKey(DEV_SECRET, otherApp, 'sigil/root/v1'));
    } finally {
      child.kill('SIGTERM');
      await child.exitPromise;
    }
    writeFileSync(secretFile, 'short');
    assert.throws(() => execFileSync(process.execPath, [SIM, '--socket', join(dir, 'y.sock'), '--app-id', APP_ID,
      '--compose', COMPOSE, '--key-secret-file', secretFile], { stdio: 'pipe' }), /at least 16 bytes/);
  });

  it('refuses a bad app id', () => {
    assert.throws(() => execFileSync(process.execPath, [SIM, '--socket', join(dir, 'x.sock'), '--app-id', '0x1234',
      '--compose', COMPOSE], { stdio: 'pipe' }), /app-id/);
  });
});
