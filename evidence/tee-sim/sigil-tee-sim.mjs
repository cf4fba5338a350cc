#!/usr/bin/env node
// sigil-tee-sim: the development stand-in for dstack's guest agent. It serves the agent's API
// (POST/GET /GetQuote, GET/POST /Info, POST/GET /GetKey: evidence/README.md) over HTTP on a unix
// socket, so the worker, sigil-evidence, keyd and the verifier run the same code paths without a TEE. Its quotes have
// the TDX v4 layout, carry the vendor id SIGIL-SIMULATED!, and are signed by a P-256 key made at
// start and thrown away at exit; RTMR3 is the replay of its event log. Every answer says
// "simulated": true. Nothing it produces proves anything: the verifier refuses it unless told
// --allow-simulated.
// GetKey stands in for dstack's key provider: the key is deterministic per app id and path, from a
// simulator secret (--key-secret-file, or a fixed development secret that is public):
//   app key = HMAC-SHA256(secret, "sigil-tee-sim app key" || app id (20 bytes))
//   key     = HMAC-SHA256(app key, "sigil-tee-sim GetKey" || 0x00 || utf8(path))
// so every simulator with the same secret and app id hands out the same keys (several instances
// share them, as dstack's KMS makes them), and another app id gets unrelated ones. The answer has no
// signature chain (an empty array; dstack's is the KMS's proof for third parties) and says
// "simulated": true.
//
//   node evidence/tee-sim/sigil-tee-sim.mjs --socket PATH --app-id 0x<40 hex> --compose FILE [--instance-id HEX]
//        [--key-secret-file FILE]
//   node evidence/tee-sim/sigil-tee-sim.mjs --compose FILE --print-compose-hash    (prints the hex, exits)
//   node evidence/tee-sim/sigil-tee-sim.mjs --print-measurements    (prints {mrtd, rtmr0, rtmr1, rtmr2}
//        as JSON, the values a verifier pins for the simulator with sigil-verify --expect, and exits)
//
// SIGTERM/SIGINT: closes and removes the socket, exits 0.
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { replayRtmr, reportDataFromHex, simulatedEventLog, simulatedMeasurements, buildQuote, sha256, sha384 } from './quote.mjs';

const MAX_BODY_BYTES = 65536;
const MAX_KEY_PATH = 1024;
// The development key provider's secret when no --key-secret-file is given: public, so every
// developer's simulator derives the same keys for the same app id. Never a production secret.
export const DEV_KEY_SECRET = Buffer.from('sigil-tee-sim development key provider (public, not a secret)');

function fail(message) {
  console.error(`sigil-tee-sim: ${message}`);
  process.exit(2);
}

/// The app_compose string and its compose hash (hex SHA-256 of the file's exact bytes).
function loadCompose(file) {
  const bytes = readFileSync(file);
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) fail(`${file} is not UTF-8`);
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    fail(`${file} is not JSON: ${err.message}`);
  }
  if (typeof parsed?.docker_compose_file !== 'string') fail(`${file} has no docker_compose_file string`);
  return { text, name: parsed.name ?? '', hash: sha256(bytes) };
}

function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        socket: { type: 'string' },
        'app-id': { type: 'string' },
        compose: { type: 'string' },
        'instance-id': { type: 'string' },
        'key-secret-file': { type: 'string' },
        'print-compose-hash': { type: 'boolean' },
        'print-measurements': { type: 'boolean' },
      },
    }));
  } catch (err) {
    fail(err.message);
  }
  if (values['print-measurements']) return values;
  if (!values.compose) fail('--compose FILE is required');
  if (values['print-compose-hash']) return values;
  if (!values.socket) fail('--socket PATH is required');
  const appId = /^(0x)?([0-9a-fA-F]{40})$/.exec(values['app-id'] ?? '');
  if (!appId) fail('--app-id must be 0x and 20 bytes of hex');
  values.appId = Buffer.from(appId[2], 'hex');
  const instance = values['instance-id'] ?? randomBytes(20).toString('hex');
  if (!/^(0x)?([0-9a-fA-F]{2})+$/.test(instance)) fail('--instance-id must be hex');
  values.instanceId = Buffer.from(instance.replace(/^0x/, ''), 'hex');
  values.keySecret = DEV_KEY_SECRET;
  if (values['key-secret-file']) {
    try {
      values.keySecret = readFileSync(values['key-secret-file']);
    } catch (err) {
      fail(`--key-secret-file: ${err.message}`);
    }
    if (values.keySecret.length < 16) fail('--key-secret-file must hold at least 16 bytes');
  }
  return values;
}

/// GetKey's key for `path` (module doc): HMAC-SHA256 twice, app id then path.
export function simulatedKey(secret, appId, path) {
  const appKey = createHmac('sha256', secret).update(Buffer.concat([Buffer.from('sigil-tee-sim app key'), appId])).digest();
  return createHmac('sha256', appKey).update(Buffer.concat([Buffer.from('sigil-tee-sim GetKey\0'), Buffer.from(path, 'utf8')])).digest();
}

/// Everything the answers hold, fixed at start.
function makeAgent({ appId, instanceId, compose, keySecret }) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyProviderInfo = JSON.stringify({ name: 'sigil-tee-sim', id: '' });
  const events = simulatedEventLog({ appId, composeHash: compose.hash, instanceId, keyProvider: Buffer.from(keyProviderInfo) });
  const madeUp = (label) => sha384(Buffer.from(`sigil-tee-sim: ${label}`));
  const fields = {
    tee_tcb_svn: Buffer.from('04010700000000000000000000000000', 'hex'),
    mrseam: madeUp('mrseam'),
    xfam: Buffer.from('e718060000000000', 'hex'),
    ...simulatedMeasurements(),
    rtmr3: replayRtmr(events, 3),
  };
  const hex = (b) => b.toString('hex');
  const eventLog = JSON.stringify(events);
  const vmConfig = JSON.stringify({ spec_version: 1, os_image_hash: hex(sha256(Buffer.from('sigil-tee-sim: os image'))),
    cpu_count: 2, memory_size: 4294967296 });
  const info = {
    app_id: hex(appId),
    instance_id: hex(instanceId),
    app_name: compose.name,
    device_id: hex(sha256(Buffer.from('sigil-tee-sim: device'))),
    compose_hash: hex(compose.hash),
    tcb_info: JSON.stringify({
      mrtd: hex(fields.mrtd), rtmr0: hex(fields.rtmr0), rtmr1: hex(fields.rtmr1), rtmr2: hex(fields.rtmr2),
      rtmr3: hex(fields.rtmr3), event_log: events, app_compose: compose.text,
    }),
    key_provider_info: keyProviderInfo,
    simulated: true,
  };
  const quote = (reportData) => ({
    quote: hex(buildQuote({ privateKey, fields: { ...fields, report_data: reportData } })),
    event_log: eventLog,
    report_data: hex(reportData),
    vm_config: vmConfig,
    simulated: true,
  });
  const key = (path) => ({ key: hex(simulatedKey(keySecret, appId, path)), signature_chain: [], simulated: true });
  return { info, quote, key };
}

class BadRequest extends Error {}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (d) => {
      size += d.length;
      if (size > MAX_BODY_BYTES) reject(new BadRequest(`body over ${MAX_BODY_BYTES} bytes`));
      else chunks.push(d);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/// The JSON body of a POST (an object; {} when empty).
async function jsonBody(req) {
  const text = await readBody(req);
  let body = {};
  try {
    if (text.trim() !== '') body = JSON.parse(text);
  } catch {
    throw new BadRequest('the body is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequest('the body is not a JSON object');
  return body;
}

/// path of a GetKey request: the query parameter (GET) or the JSON body's member (POST). purpose
/// and algorithm are accepted as dstack accepts them; only secp256k1 (the default) is simulated.
async function keyPathOf(req, url) {
  let args = Object.fromEntries(url.searchParams);
  if (req.method === 'POST') args = await jsonBody(req);
  const { path = '', purpose = '', algorithm = '' } = args;
  if (typeof path !== 'string' || typeof purpose !== 'string' || typeof algorithm !== 'string') {
    throw new BadRequest('path, purpose and algorithm must be strings');
  }
  if (path.length > MAX_KEY_PATH) throw new BadRequest(`path is over ${MAX_KEY_PATH} characters`);
  if (!['', 'secp256k1', 'k256'].includes(algorithm)) throw new BadRequest(`algorithm ${algorithm} is not simulated`);
  return path;
}

/// report_data of a GetQuote request: the query parameter (GET) or the JSON body's member (POST).
async function reportDataOf(req, url) {
  let hex = url.searchParams.get('report_data') ?? '';
  if (req.method === 'POST') {
    const body = await jsonBody(req);
    if (body.report_data !== undefined && typeof body.report_data !== 'string') throw new BadRequest('report_data must be a hex string');
    hex = body.report_data ?? '';
  }
  try {
    return reportDataFromHex(hex);
  } catch (err) {
    throw new BadRequest(err.message);
  }
}

function serve(agent) {
  const send = (res, status, body) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };
  return createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://localhost');
      const route = { '/GetQuote': 'quote', '/Info': 'info', '/GetKey': 'key' }[url.pathname];
      if (!route) return send(res, 404, { error: `no such path: ${url.pathname}` });
      if (req.method !== 'GET' && req.method !== 'POST') {
        res.setHeader('Allow', 'GET, POST');
        return send(res, 405, { error: `method ${req.method} not allowed` });
      }
      if (route === 'info') {
        req.resume();
        return send(res, 200, agent.info);
      }
      if (route === 'key') {
        const path = await keyPathOf(req, url);
        // The path only, never the key.
        console.error(`sigil-tee-sim: GetKey path ${JSON.stringify(path)} (SIMULATED key)`);
        return send(res, 200, agent.key(path));
      }
      return send(res, 200, agent.quote(await reportDataOf(req, url)));
    } catch (err) {
      if (err instanceof BadRequest || err.code === 'ERR_INVALID_URL') return send(res, 400, { error: err.message });
      console.error(`sigil-tee-sim: ${req.method} ${req.url}: ${err.stack}`);
      return send(res, 500, { error: 'internal error' });
    }
  });
}

function main() {
  const opts = options();
  if (opts['print-measurements']) {
    const m = simulatedMeasurements();
    console.log(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.toString('hex')]))));
    return;
  }
  const compose = loadCompose(opts.compose);
  if (opts['print-compose-hash']) {
    console.log(compose.hash.toString('hex'));
    return;
  }
  const socket = opts.socket;
  mkdirSync(dirname(socket), { recursive: true });
  try {
    if (!lstatSync(socket).isSocket()) fail(`${socket} exists and is not a socket`);
    rmSync(socket); // a stale socket of an earlier run
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  const server = serve(makeAgent({ appId: opts.appId, instanceId: opts.instanceId, compose, keySecret: opts.keySecret }));
  server.on('error', (err) => fail(`${socket}: ${err.message}`));
  server.listen(socket, () => {
    chmodSync(socket, 0o666); // nginx's and the workers' users connect too
    console.error(`sigil-tee-sim: SIMULATED guest agent on ${socket} (app id 0x${opts.appId.toString('hex')},` +
      ` compose hash ${compose.hash.toString('hex')}, GetKey from ${opts['key-secret-file'] ? 'the key secret file' : 'the public development secret'})`);
  });
  const stop = () => {
    server.close();
    server.closeAllConnections();
    rmSync(socket, { force: true });
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// Runs only as a program: tests import simulatedKey.
if (process.argv[1] && realpathSync(resolve(process.argv[1])) === fileURLToPath(import.meta.url)) main();
