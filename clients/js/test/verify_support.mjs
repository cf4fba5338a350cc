// Shared by test/verify.test.mjs (not a test): a fake Sigil deployment built from scratch, following
// evidence/README.md (nothing imported from evidence/ or from src/verify): a simulated TDX v4 quote
// builder, the event log with V1/V2 digests, an HTTPS server on loopback serving /info, /attestation
// and /evidences/, a DNS server on loopback answering CAA, and a governance contract on anvil.
import https from 'node:https';
import http from 'node:http';
import dgram from 'node:dgram';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, sign as cryptoSign, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { startAnvil, devWallet } from '../../../scripts/devchain.mjs';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const require = createRequire(join(REPO, 'package.json'));
const dnsPacket = require('dns-packet');

export const RUNTIME = 0x08000001;
const sha256 = (b) => createHash('sha256').update(b).digest();
const sha384 = (...parts) => parts.reduce((h, p) => h.update(p), createHash('sha384')).digest();

// ---------------------------------------------------------------- event log

/// V1: SHA-384(type LE32 || ':' || name || ':' || payload).
export function v1(name, payload, type = RUNTIME) {
  const t = Buffer.alloc(4);
  t.writeUInt32LE(type);
  return sha384(t, Buffer.from(':'), Buffer.from(name), Buffer.from(':'), payload);
}

/// V2: SHA-384 of the JCS JSON {"name","payload","type"} (keys already in order, no whitespace).
export function v2(name, payload, type = RUNTIME) {
  return sha384(Buffer.from(`{"name":${JSON.stringify(name)},"payload":"${payload.toString('hex')}","type":${type}}`));
}

/// The simulator's IMR-3 events (plus two non-runtime events in other IMRs), with a mix of V1, V2 and
/// empty digests. Returns {events, rtmr3 (Buffer)}.
export function bootEvents({ appId, composeHash, instanceId = randomBytes(20).toString('hex') }) {
  const spec = [
    ['system-preparing', Buffer.alloc(0), 'v1'],
    ['app-id', Buffer.from(appId, 'hex'), 'v2'],
    ['compose-hash', Buffer.from(composeHash, 'hex'), 'v1'],
    ['instance-id', Buffer.from(instanceId, 'hex'), 'empty'],
    ['boot-mr-done', Buffer.alloc(0), 'v2'],
    ['key-provider', Buffer.from('{"type":"none","id":""}'), 'v1'],
    ['system-ready', Buffer.alloc(0), 'empty'],
  ];
  const events = [
    { imr: 0, event_type: 1, digest: randomBytes(48).toString('hex'), event: '', event_payload: '' },
    { imr: 1, event_type: 2147483651, digest: randomBytes(48).toString('hex'), event: '', event_payload: '' },
  ];
  let rtmr3 = Buffer.alloc(48);
  for (const [name, payload, format] of spec) {
    const digest = format === 'v2' ? v2(name, payload) : v1(name, payload);
    events.push({ imr: 3, event_type: RUNTIME, digest: format === 'empty' ? '' : digest.toString('hex'), event: name, event_payload: payload.toString('hex') });
    rtmr3 = sha384(rtmr3, digest);
  }
  return { events, rtmr3 };
}

// ---------------------------------------------------------------- quotes

export const SIM_VENDOR = Buffer.from('SIGIL-SIMULATED!', 'ascii');
export const INTEL_VENDOR = Buffer.from('939a7233f79c4ca9940a0db3957f0607', 'hex');

/// The OS measurements the fake deployment's quotes carry (what a verifier is told to expect).
export const MEASURED = Object.freeze({ mrtd: '11'.repeat(48), rtmr0: '20'.repeat(48), rtmr1: '21'.repeat(48), rtmr2: '22'.repeat(48) });

/// report_data of a quote bound to a nonce (DESIGN.md section 6): SHA-512("sigil/attestation-nonce/v1" || nonce).
export const nonceReportData = (nonce) => createHash('sha512').update('sigil/attestation-nonce/v1').update(nonce).digest();

/// A TDX v4 quote: header (48) || TD report body (584) || LE32 signature data length || signature
/// data (r||s, attestation key x||y, cert type LE16, cert size LE32, cert data). `measured` (hex
/// strings) and `tdAttributes` (8 bytes) default to MEASURED and zeros.
export function buildQuote({ rtmr3, reportData, key, vendor = SIM_VENDOR, certType = 0, certData = Buffer.alloc(0), measured = MEASURED, tdAttributes = Buffer.alloc(8) }) {
  const header = Buffer.alloc(48);
  header.writeUInt16LE(4, 0);
  header.writeUInt16LE(2, 2);
  header.writeUInt32LE(0x81, 4);
  vendor.copy(header, 12);
  const body = Buffer.alloc(584);
  tdAttributes.copy(body, 120);
  Buffer.from(measured.mrtd, 'hex').copy(body, 136);
  Buffer.from(measured.rtmr0, 'hex').copy(body, 328);
  Buffer.from(measured.rtmr1, 'hex').copy(body, 376);
  Buffer.from(measured.rtmr2, 'hex').copy(body, 424);
  rtmr3.copy(body, 472);
  reportData.copy(body, 520);
  const signed = Buffer.concat([header, body]);
  const signature = cryptoSign('sha256', signed, { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  const jwk = key.publicKey.export({ format: 'jwk' });
  const pub = Buffer.concat([Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')]);
  const cert = Buffer.alloc(6);
  cert.writeUInt16LE(certType, 0);
  cert.writeUInt32LE(certData.length, 2);
  const sigData = Buffer.concat([signature, pub, cert, certData]);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(sigData.length);
  return Buffer.concat([signed, len, sigData]);
}

export const newQuoteKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });

// ---------------------------------------------------------------- certificates

/// A self-signed P-256 certificate for `domain` and 127.0.0.1 made by openssl: {certPem, keyPem}.
export function selfSignedCert(domain) {
  const dir = mkdtempSync(join(tmpdir(), 'sigil-verify-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2',
      '-subj', `/CN=${domain}`, '-addext', `subjectAltName=DNS:${domain},IP:127.0.0.1`,
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    return { certPem: readFileSync(join(dir, 'cert.pem'), 'utf8'), keyPem: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- the deployment

export const PINNED = (name) => `${name}@sha256:${sha256(Buffer.from(name)).toString('hex')}`;

export function composeYaml({ sigilImage = PINNED('ghcr.io/example/sigil'), nginxImage = PINNED('nginx') } = {}) {
  return `services:\n  sigil:\n    image: ${sigilImage}\n    restart: always\n  nginx:\n    image: ${nginxImage}\n    ports:\n      - "443:443"\n`;
}

export function appComposeOf(yaml, name = 'sigil') {
  return JSON.stringify({ manifest_version: 2, name, runner: 'docker-compose', docker_compose_file: yaml, kms_enabled: true });
}

export const hashOf = (text) => sha256(Buffer.from(text, 'utf8')).toString('hex');

/// The content of a deployment: what /info, /attestation and /evidences/ answer.
/// Options: appId (hex), appCompose (string), composeHash (default its SHA-256), domain, certPem,
/// accountUri, vendor (quote vendor id), key (P-256 key pair signing the quotes).
export function makeDeployment({
  appId, appCompose, composeHash = hashOf(appCompose), domain, certPem, accountUri,
  vendor = SIM_VENDOR, key = newQuoteKey(), certType = 0, certData = Buffer.alloc(0), measured = MEASURED, tdAttributes,
}) {
  const { events, rtmr3 } = bootEvents({ appId, composeHash });
  const eventLog = JSON.stringify(events);
  const vmConfig = JSON.stringify({ cpu_count: 2, memory_size: 2147483648 });
  const attest = (reportData) => ({
    quote: buildQuote({ rtmr3, reportData, key, vendor, certType, certData, measured, tdAttributes }).toString('hex'),
    event_log: eventLog,
    report_data: reportData.toString('hex'),
    vm_config: vmConfig,
    ...(vendor.equals(SIM_VENDOR) ? { simulated: true } : {}),
  });
  const files = new Map();
  files.set(`cert-${domain}.pem`, Buffer.from(certPem));
  files.set('acme-account.json', Buffer.from(JSON.stringify({ uri: accountUri })));
  const sums = [...files].map(([name, body]) => `${sha256(body).toString('hex')}  ${name}\n`).join('');
  files.set('sha256sum.txt', Buffer.from(sums));
  const rd = Buffer.alloc(64);
  sha256(Buffer.from(sums)).copy(rd);
  files.set('quote.json', Buffer.from(JSON.stringify(attest(rd))));
  const tcbInfo = {
    ...measured, rtmr3: rtmr3.toString('hex'), event_log: eventLog, app_compose: appCompose,
  };
  return {
    appId, appCompose, composeHash, domain, events, rtmr3,
    info: { app_id: appId, instance_id: 'ab'.repeat(20), app_name: 'sigil', device_id: 'cd'.repeat(32), compose_hash: composeHash, tcb_info: tcbInfo, ...(vendor.equals(SIM_VENDOR) ? { simulated: true } : {}) },
    attest,
    files,
    // Tampering switches read by the server:
    attestationEventLog: null, // a different event_log string for /attestation answers
    staleNonce: false,         // answer ?nonce= with the nonce-less quote
    paddedNonce: false,        // bind ?nonce= as the nonce zero padded (Sigil before issue 22)
    relayAttestation: null,    // (search) -> answer: /attestation relayed elsewhere (a man in the middle)
  };
}

/// An HTTPS server on 127.0.0.1 serving `state.deployment`. Returns {url, port, setCert({certPem,
/// keyPem}), close()}.
export async function startDeploymentServer(state, { certPem, keyPem }) {
  const server = https.createServer({ cert: certPem, key: keyPem }, async (req, res) => {
    const d = state.deployment;
    const url = new URL(req.url, 'https://x');
    const json = (obj, status = 200) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(obj));
    };
    if (req.method !== 'GET') return json({ error: 'method' }, 405);
    if (url.pathname === '/info') return json(d.info);
    if (url.pathname === '/attestation') {
      if (d.relayAttestation) return json(await d.relayAttestation(url.search));
      const nonce = url.searchParams.get('nonce');
      const rd = Buffer.alloc(64);
      if (nonce !== null && !d.staleNonce) {
        if (!/^([0-9a-f]{2}){1,64}$/.test(nonce)) return json({ error: 'bad nonce' }, 400);
        (d.paddedNonce ? Buffer.from(nonce, 'hex') : nonceReportData(Buffer.from(nonce, 'hex'))).copy(rd);
      }
      const a = { ...(await d.attest(rd)) };
      delete a.report_data;
      if (d.attestationEventLog) a.event_log = d.attestationEventLog;
      return json(a);
    }
    if (url.pathname === '/evidences/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      const rows = [...d.files.keys()].sort().map((n) => `<a href="${encodeURIComponent(n)}">${n}</a>  25-Nov-2025 12:00  ${d.files.get(n).length}`);
      return res.end(`<html>\r\n<head><title>Index of /evidences/</title></head>\r\n<body>\r\n<h1>Index of /evidences/</h1><hr><pre><a href="../">../</a>\r\n${rows.join('\r\n')}\r\n</pre><hr></body>\r\n</html>\r\n`);
    }
    const m = /^\/evidences\/([^/]+)$/.exec(url.pathname);
    if (m && d.files.has(decodeURIComponent(m[1]))) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return res.end(d.files.get(decodeURIComponent(m[1])));
    }
    res.writeHead(404);
    res.end('not found');
  });
  server.keepAliveTimeout = 1000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    setCert: ({ certPem: cert, keyPem: key }) => server.setSecureContext({ cert, key }),
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/// The files of an evidence directory around a GetQuote function: cert-<domain>.pem,
/// acme-account.json, sha256sum.txt over them, quote.json = getQuote(SHA-256(sha256sum.txt) padded).
export async function evidenceFiles({ domain, certPem, accountUri, getQuote }) {
  const files = new Map();
  files.set(`cert-${domain}.pem`, Buffer.from(certPem));
  files.set('acme-account.json', Buffer.from(JSON.stringify({ uri: accountUri })));
  const sums = [...files].map(([name, body]) => `${sha256(body).toString('hex')}  ${name}\n`).join('');
  files.set('sha256sum.txt', Buffer.from(sums));
  const rd = Buffer.alloc(64);
  sha256(Buffer.from(sums)).copy(rd);
  files.set('quote.json', Buffer.from(JSON.stringify(await getQuote(rd))));
  return files;
}

// ---------------------------------------------------------------- the simulator, when it is there

export const TEE_SIM = join(REPO, 'evidence/tee-sim/sigil-tee-sim.mjs');

/// Starts evidence/tee-sim/sigil-tee-sim.mjs on a unix socket in `dir`. Returns {get(path) -> JSON,
/// stop()}.
export async function startTeeSim({ dir, appId, composeFile }) {
  const socketPath = join(dir, 'dstack.sock');
  const child = spawn(process.execPath, [TEE_SIM, '--socket', socketPath, '--app-id', `0x${appId}`, '--compose', composeFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((r) => child.on('exit', r));
  const get = (path) => new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path, method: 'GET' }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200) reject(new Error(`tee-sim ${path}: ${res.statusCode} ${text}`));
        else resolve(JSON.parse(text));
      });
    });
    req.on('error', reject);
    req.end();
  });
  const deadline = Date.now() + 10000;
  for (;;) {
    try {
      await get('/Info');
      break;
    } catch (e) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(`sigil-tee-sim did not start: ${stderr || e.message}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    get,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    },
  };
}

// ---------------------------------------------------------------- DNS

/// A UDP DNS server on 127.0.0.1 answering from `zone`: Map name -> {cname?, caa?: [{flags, tag,
/// value}]}. A CAA question on a name with only a CNAME is answered with the CNAME alone (as an
/// authoritative server does). Returns {server: "127.0.0.1:port", close()}.
export async function startDnsServer(zone) {
  const sock = dgram.createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    let q;
    try { q = dnsPacket.decode(msg); } catch { return; }
    const question = q.questions?.[0];
    const answers = [];
    let rcode = 'NOERROR';
    if (question) {
      const name = question.name.toLowerCase().replace(/\.$/, '');
      const entry = zone.get(name);
      if (!entry) rcode = 'NXDOMAIN';
      else if (question.type === 'CAA' && entry.caa) {
        for (const data of entry.caa) answers.push({ type: 'CAA', class: 'IN', name, ttl: 60, data });
      } else if ((question.type === 'CAA' || question.type === 'CNAME') && entry.cname) {
        answers.push({ type: 'CNAME', class: 'IN', name, ttl: 60, data: entry.cname });
      }
    }
    const reply = dnsPacket.encode({
      type: 'response', id: q.id, flags: dnsPacket.AUTHORITATIVE_ANSWER | (q.flags & dnsPacket.RECURSION_DESIRED), rcode, questions: q.questions, answers,
    });
    sock.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise((r) => sock.bind(0, '127.0.0.1', r));
  return { server: `127.0.0.1:${sock.address().port}`, close: () => new Promise((r) => sock.close(r)) };
}

// ---------------------------------------------------------------- governance on anvil

const MINI_GOVERNANCE = `// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.0;
contract MiniGovernance {
  address public immutable owner = msg.sender;
  mapping(bytes32 => bool) public allowedComposeHashes;
  function addComposeHash(bytes32 h) external { require(msg.sender == owner, "owner"); allowedComposeHashes[h] = true; }
}`;

function compile(fileName, content, contractName, { viaIR = false } = {}) {
  const solc = require('solc');
  const out = JSON.parse(solc.compile(JSON.stringify({
    language: 'Solidity',
    sources: { [fileName]: { content } },
    settings: {
      viaIR, optimizer: { enabled: viaIR, runs: 200 }, evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  })));
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = out.contracts[fileName][contractName];
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

/// How to allow a hash on an AppGovernance-like ABI: a constructor of addresses only (given the
/// deployer) and a non-view f(bytes32) named add/allow/approve/set. null when the ABI has no such way.
function plainAdder(abi) {
  const ctor = abi.find((f) => f.type === 'constructor');
  if (ctor && !ctor.inputs.every((i) => i.type === 'address')) return null;
  const adder = abi.find((f) => f.type === 'function' && f.stateMutability !== 'view' && f.stateMutability !== 'pure'
    && f.inputs.length === 1 && f.inputs[0].type === 'bytes32' && /add|allow|approve|set/i.test(f.name) && !/remove|revoke|disallow/i.test(f.name));
  return adder ? { adder: adder.name, ctorArgs: (ctor?.inputs ?? []).length } : null;
}

/// The governance contract to deploy: contracts/AppGovernance.sol from the build dir's artifacts, or
/// compiled here from its source when the build dir lacks them; null when neither is usable.
function appGovernance() {
  const dir = join(process.env.SIGIL_BUILD_DIR ?? join(REPO, 'build'), 'contracts');
  let art = null;
  if (existsSync(join(dir, 'AppGovernance.bin')) && existsSync(join(dir, 'AppGovernance.abi.json'))) {
    art = {
      abi: JSON.parse(readFileSync(join(dir, 'AppGovernance.abi.json'), 'utf8')),
      bytecode: `0x${readFileSync(join(dir, 'AppGovernance.bin'), 'utf8').trim()}`,
      source: 'contracts/AppGovernance.sol (build dir artifacts)',
    };
  } else if (existsSync(join(REPO, 'contracts/AppGovernance.sol'))) {
    try {
      art = { ...compile('AppGovernance.sol', readFileSync(join(REPO, 'contracts/AppGovernance.sol'), 'utf8'), 'AppGovernance', { viaIR: true }), source: 'contracts/AppGovernance.sol (compiled by the test)' };
    } catch (e) {
      console.error(`verify_support: contracts/AppGovernance.sol does not compile alone (${e.message.split('\n')[0]})`);
    }
  }
  const how = art && plainAdder(art.abi);
  return how ? { ...art, ...how } : null;
}

function miniGovernance() {
  return { ...compile('MiniGovernance.sol', MINI_GOVERNANCE, 'MiniGovernance'), adder: 'addComposeHash', ctorArgs: 0, source: 'MiniGovernance (test-local, solc)' };
}

/// anvil with a governance contract. Returns {rpcUrl, address (0x, checksummed), appId (hex, lower
/// case, no 0x), source, allow(hashHex), stop()}.
export async function startGovernance() {
  const anvil = await startAnvil();
  const provider = new ethers.JsonRpcProvider(anvil.url, undefined, { staticNetwork: true, pollingInterval: 20, cacheTimeout: -1 });
  const owner = new ethers.NonceManager(devWallet(0, provider));
  const deploy = async (art) => {
    const factory = new ethers.ContractFactory(art.abi, art.bytecode, owner);
    const args = Array(art.ctorArgs ?? 0).fill(devWallet(0).address);
    const contract = await factory.deploy(...args);
    await contract.waitForDeployment();
    return contract;
  };
  let art = appGovernance();
  let contract = null;
  if (art) {
    try {
      contract = await deploy(art);
      const probe = `0x${randomBytes(32).toString('hex')}`;
      await (await contract[art.adder](probe)).wait();
      if (!(await contract.allowedComposeHashes(probe))) throw new Error('allowing a hash did not take');
    } catch (e) {
      console.error(`verify_support: ${art.source} not usable here (${e.shortMessage ?? e.message}); using a test-local contract`);
      contract = null;
    }
  }
  if (!contract) {
    art = miniGovernance();
    contract = await deploy(art);
  }
  const address = await contract.getAddress();
  return {
    rpcUrl: anvil.url,
    address,
    appId: address.slice(2).toLowerCase(),
    source: art.source,
    allow: async (hashHex) => {
      if (!(await contract.allowedComposeHashes(`0x${hashHex}`))) await (await contract[art.adder](`0x${hashHex}`)).wait();
    },
    stop: async () => { provider.destroy(); await anvil.stop(); },
  };
}
