// Shared by the SDK's stack tests (not a test): the real stack of tests/api/stack.mjs, a WHATWG fetch
// over node:https that trusts the stack's self-signed certificate (and nothing else), a provider on
// the stack's anvil and funded wallets.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { startStack } from '../../../tests/api/stack.mjs';

export { startStack };

/// fetch(url, init) -> Response, over TLS verified against the stack's certificate.
export function stackFetch(stack) {
  const ca = readFileSync(join(stack.home, 'nginx/tls/cert.pem'));
  const agent = new https.Agent({ keepAlive: true, ca });
  const fetch = (url, init = {}) => new Promise((resolve, reject) => {
    const req = https.request(url, { method: init.method ?? 'GET', headers: init.headers ?? {}, agent, signal: init.signal }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) for (const x of [v].flat()) headers.append(k, x);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers }));
      });
    });
    req.on('error', reject);
    if (init.body !== undefined && init.body !== null) req.write(init.body);
    req.end();
  });
  fetch.agent = agent;
  return fetch;
}

export function stackProvider(stack) {
  return new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
}

/// A new random wallet on the stack's chain with 10 ETH.
export async function fundedWallet(provider) {
  const w = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [w.address, '0x8ac7230489e80000']);
  return w;
}
