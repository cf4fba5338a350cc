// What the billing methods put on the wire (DESIGN.md sections 4 and 9): X-Wallet-Auth carrying a
// BillingAuth envelope signed for the service's chain id, or the master key, never both. A local HTTP
// server records the requests (billing.test.mjs runs the same methods against the stack).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { ethers } from 'ethers';
import { SigilClient, parseWalletAuthHeader, typedDataDigest, signWalletAuth } from '@sigil/sdk';

const CHAIN_ID = 8453;
const seen = [];
let server;
let baseUrl;

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (req.url === '/core/v1/get_node_chain_config') {
        res.end(JSON.stringify({ chain_id: CHAIN_ID, contract_address: '0x' + '00'.repeat(20) }));
      } else {
        res.end('{"balance_cents":0,"balance_display":"0.00"}');
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${server.address().port}`;
});
after(() => new Promise((r) => server.close(r)));

const last = () => seen[seen.length - 1];

test('balance with a Signer: X-Wallet-Auth signed for the node\'s chain id, no API key', async () => {
  const wallet = ethers.Wallet.createRandom();
  const client = new SigilClient({ baseUrl, apiKey: 'master' });
  await client.balance({ walletAuth: wallet });
  const { url, headers } = last();
  assert.equal(url, '/core/v1/billing/balance');
  assert.equal(headers['x-api-key'], undefined);
  const { typed_data, signature } = parseWalletAuthHeader(headers['x-wallet-auth']);
  assert.equal(typed_data.primaryType, 'BillingAuth');
  assert.equal(typed_data.domain.chainId, CHAIN_ID);
  assert.equal(typed_data.message.address, wallet.address);
  assert.ok(Math.abs(typed_data.message.issuedAt - Date.now() / 1000) < 5);
  assert.equal(ethers.recoverAddress(typedDataDigest(typed_data), signature), wallet.address);
});

test('a ready X-Wallet-Auth value is sent verbatim; without one the master key is sent', async () => {
  const client = new SigilClient({ baseUrl, apiKey: 'master' });
  const value = await signWalletAuth(ethers.Wallet.createRandom(), { chainId: CHAIN_ID });
  await client.createPaymentIntent({ amount_cents: 500, walletAuth: value });
  assert.equal(last().headers['x-wallet-auth'], value);
  assert.equal(last().headers['x-api-key'], undefined);
  assert.deepEqual(JSON.parse(last().body), { amount_cents: 500 });
  await client.confirmPayment({ payment_intent_id: 'pi_1' });
  assert.equal(last().url, '/core/v1/billing/confirm_payment');
  assert.equal(last().headers['x-api-key'], 'master');
  assert.equal(last().headers['x-wallet-auth'], undefined);
  await client.paymentsConfig();
  assert.equal(last().url, '/core/v1/billing/payments_config');
  assert.equal(last().headers['x-api-key'], undefined, 'a public endpoint gets no key');
});
