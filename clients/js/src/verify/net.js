// What the verifier reads from the network: HTTPS GETs that remember the certificate each connection
// presented, the live TLS certificate, CAA records and one eth_call.
import https from 'node:https';
import http from 'node:http';
import tls from 'node:tls';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { Resolver } from 'node:dns/promises';

const MAX_BODY = 16 * 1024 * 1024;

export const sha256Hex = (bytes) => createHash('sha256').update(bytes).digest('hex');

/// A GET client for one deployment: {get(path) -> {status, body (Buffer), json()}, seenCerts (Set of
/// DER SHA-256 hex of every certificate a connection presented), close()}. TLS is verified against
/// `ca` (PEM) or the system's CAs, or not at all with `insecure`.
export function deploymentClient(baseUrl, { ca, insecure = false, timeoutMs = 15000 } = {}) {
  const base = new URL(baseUrl);
  const isHttps = base.protocol === 'https:';
  const agent = isHttps
    ? new https.Agent({ keepAlive: true, maxSockets: 2, ca: ca || undefined, rejectUnauthorized: !insecure, servername: sniName(base.hostname) })
    : new http.Agent({ keepAlive: true, maxSockets: 2 });
  const seenCerts = new Set();
  const get = (path) => new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = (isHttps ? https : http).request(url, { method: 'GET', agent, timeout: timeoutMs, headers: { accept: '*/*' } }, (res) => {
      if (isHttps) {
        const cert = res.socket.getPeerCertificate?.(true);
        if (cert?.raw) seenCerts.add(sha256Hex(cert.raw));
      }
      const chunks = [];
      let size = 0;
      res.on('data', (c) => {
        size += c.length;
        if (size > MAX_BODY) req.destroy(new Error(`GET ${url.pathname}: answer over ${MAX_BODY} bytes`));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode,
          body,
          text: () => body.toString('utf8'),
          json: () => JSON.parse(body.toString('utf8')),
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url.pathname}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
  return { get, seenCerts, close: () => agent.destroy() };
}

/// GET `path` and return its body when the status is 200; throws a message naming the path otherwise.
export async function getOk(client, path) {
  let res;
  try {
    res = await client.get(path);
  } catch (e) {
    throw new Error(`GET ${path}: ${e.message}`);
  }
  if (res.status !== 200) {
    let detail = '';
    try { detail = `: ${res.text().slice(0, 200)}`; } catch { /* binary */ }
    throw new Error(`GET ${path}: HTTP ${res.status}${detail}`);
  }
  return res;
}

export async function getJson(client, path) {
  const res = await getOk(client, path);
  try {
    return res.json();
  } catch {
    throw new Error(`GET ${path}: the answer is not JSON`);
  }
}

function sniName(host) {
  return net.isIP(host.replace(/^\[|\]$/g, '')) ? undefined : host;
}

/// The certificate the server presents in a fresh TLS handshake: {sha256 (hex of the DER), subject}.
/// `servername` is the SNI (default: the host unless it is an IP address). The chain is not judged
/// here: the attestation, not a CA, vouches for this certificate (rule 6).
export function liveCertificate(host, port, { servername, timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: host.replace(/^\[|\]$/g, ''), port, servername: servername ?? sniName(host), rejectUnauthorized: false, ALPNProtocols: ['http/1.1'],
    });
    const timer = setTimeout(() => socket.destroy(new Error(`TLS handshake with ${host}:${port}: no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const cert = socket.getPeerCertificate(true);
      socket.end();
      if (!cert?.raw) reject(new Error('the server presented no certificate'));
      else resolve({ sha256: sha256Hex(cert.raw), subject: cert.subject });
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

const MAX_ALIAS_HOPS = 8;

/// The CAA record set that applies to `domain` (RFC 8659: the domain's own, following CNAME aliases,
/// else its closest ancestor's), through the DNS server `server` ("host:port" or "host").
/// Returns {name (where found), chain (names visited), records ([{critical, issue|issuewild|...}])};
/// records is empty when no CAA record applies.
export async function resolveCaaSet(domain, server, { timeoutMs = 5000 } = {}) {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  resolver.setServers([server]);
  const chain = [];
  let labels = domain.replace(/\.$/, '').split('.');
  while (labels.length > 0) {
    let name = labels.join('.');
    for (let hop = 0; hop <= MAX_ALIAS_HOPS; hop++) {
      chain.push(name);
      const records = await caaOf(resolver, name);
      if (records.length > 0) return { name, chain, records };
      const alias = await cnameOf(resolver, name);
      if (!alias || chain.includes(alias)) break;
      name = alias;
    }
    labels = labels.slice(1);
    if (labels.length === 1) break; // a TLD's CAA is not the deployment's
  }
  return { name: null, chain, records: [] };
}

async function caaOf(resolver, name) {
  try {
    return await resolver.resolveCaa(name);
  } catch (e) {
    if (e.code === 'ENODATA' || e.code === 'ENOTFOUND') return [];
    throw new Error(`CAA ${name}: ${e.code ?? e.message}`);
  }
}

async function cnameOf(resolver, name) {
  try {
    const names = await resolver.resolveCname(name);
    return names[0] ?? null;
  } catch (e) {
    if (e.code === 'ENODATA' || e.code === 'ENOTFOUND') return null;
    throw new Error(`CNAME ${name}: ${e.code ?? e.message}`);
  }
}

/// keccak256("allowedComposeHashes(bytes32)")[0..4]
export const ALLOWED_COMPOSE_HASHES_SELECTOR = '0x2f6622e5';

/// eth_call allowedComposeHashes(0x<composeHash>) on `address` through the JSON-RPC `rpcUrl`.
/// Returns true or false; throws when the call fails or the answer is not an ABI bool.
export async function allowedComposeHash(rpcUrl, address, composeHashHex, { timeoutMs = 15000 } = {}) {
  const data = ALLOWED_COMPOSE_HASHES_SELECTOR + composeHashHex;
  const post = async (method, params) => {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`${method}: HTTP ${res.status}`);
    const answer = await res.json();
    if (answer.error) throw new Error(`${method}: ${answer.error.message ?? JSON.stringify(answer.error)}`);
    return answer.result;
  };
  const code = await post('eth_getCode', [address, 'latest']);
  if (typeof code !== 'string' || code === '0x' || code === '0x0') throw new Error(`no contract at ${address}`);
  const result = await post('eth_call', [{ to: address, data }, 'latest']);
  if (typeof result !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(result)) {
    throw new Error(`allowedComposeHashes answered ${JSON.stringify(result)}, not a bool`);
  }
  const n = BigInt(result);
  if (n > 1n) throw new Error(`allowedComposeHashes answered ${result}, not a bool`);
  return n === 1n;
}
