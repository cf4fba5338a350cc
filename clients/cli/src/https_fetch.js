// A WHATWG fetch over node:https that trusts one CA file (a development stack's self-signed
// certificate) instead of the system's roots: Node's own fetch takes no CA option, and
// NODE_EXTRA_CA_CERTS is read only when the process starts.
import https from 'node:https';
import http from 'node:http';
import { readFileSync } from 'node:fs';

/// fetch(url, init) -> Response, verified against the certificates in `caFile` (PEM).
export function fetchTrusting(caFile) {
  const ca = readFileSync(caFile);
  const agent = new https.Agent({ keepAlive: false, ca });
  return (url, init = {}) => new Promise((resolve, reject) => {
    const target = new URL(url);
    const lib = target.protocol === 'http:' ? http : https;
    const req = lib.request(target, {
      method: init.method ?? 'GET', headers: init.headers ?? {}, agent: lib === https ? agent : undefined, signal: init.signal,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) for (const x of [v].flat()) headers.append(k, x);
        const body = res.statusCode === 204 || res.statusCode === 304 ? null : Buffer.concat(chunks);
        resolve(new Response(body, { status: res.statusCode, headers }));
      });
    });
    req.on('error', reject);
    if (init.body !== undefined && init.body !== null) req.write(init.body);
    req.end();
  });
}
