// The SDK's billing methods against the real stack with billing on (the chain processor on the dev
// chain): payments config, balance with the master key and with X-Wallet-Auth, buying credits (the
// intent's pay instructions carried out with ethers), confirming once, typed errors, and idempotent
// writes through client.idempotent(key).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { SigilClient, ErrorCode, InsufficientCreditError, ConflictError, NotFoundError, InvalidRequestError, RateLimitError,
  PermissionDeniedError } from '@sigil/sdk';
import { startStack, stackFetch, stackProvider } from './support.mjs';
import { BUILD_DIR, accountConfigAbi } from '../../../tests/api/stack.mjs';

let stack;
let client;
let provider;
let payer;

const abi = (name) => JSON.parse(readFileSync(join(BUILD_DIR, `contracts/${name}.abi.json`), 'utf8'));

before(async () => {
  stack = await startStack({ billing: { lines: ['starter_credit_cents = 10'] } });
  client = new SigilClient({ baseUrl: stack.url, fetch: stackFetch(stack) });
  provider = stackProvider(stack);
  const wallet = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [wallet.address, '0x8ac7230489e80000']);
  payer = new ethers.NonceManager(wallet);
  const token = new ethers.Contract(stack.token, abi('TestStablecoin'), payer);
  await (await token.mint(wallet.address, 10n ** 12n)).wait();
  await (await token.approve(stack.payments, ethers.MaxUint256)).wait();
});
after(async () => { await stack?.stop(); });

async function payIntent(intent) {
  const payments = new ethers.Contract(intent.pay.payments_contract, abi('Payments'), payer);
  await (await payments.pay(intent.pay.reference, BigInt(intent.pay.amount))).wait();
}

test('paymentsConfig, balance, createPaymentIntent, pay with ethers, confirmPayment once', async () => {
  const cfg = await client.paymentsConfig();
  assert.equal(cfg.processor, 'chain');
  const { api_key } = await client.newAccount({ account_name: 'sdk billing', account_description: '' });
  const owner = client.withApiKey(api_key);
  assert.deepEqual(await owner.balance(), { balance_cents: 10, balance_display: '0.10' });
  const intent = await owner.createPaymentIntent({ amount_cents: 500 });
  await assert.rejects(owner.confirmPayment({ payment_intent_id: intent.payment_intent_id }),
    (e) => e instanceof InsufficientCreditError && e.code === ErrorCode.PAYMENT_NOT_COMPLETED);
  await payIntent(intent);
  const done = await owner.confirmPayment({ payment_intent_id: intent.payment_intent_id });
  assert.equal(done.credited_cents, 500);
  assert.equal(done.balance_cents, 510);
  await assert.rejects(owner.confirmPayment({ payment_intent_id: intent.payment_intent_id }),
    (e) => e instanceof ConflictError && e.code === ErrorCode.PAYMENT_ALREADY_CREDITED);
  await assert.rejects(owner.confirmPayment({ payment_intent_id: 'pi_unknown' }),
    (e) => e instanceof NotFoundError && e.code === ErrorCode.UNKNOWN_PAYMENT_INTENT);
  await assert.rejects(owner.createPaymentIntent({ amount_cents: 499 }),
    (e) => e instanceof InvalidRequestError && e.code === ErrorCode.INVALID_AMOUNT);
});

test('walletAuth: a ChainSecured admin signs BillingAuth with its ethers wallet', async () => {
  const admin = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [admin.address, '0x8ac7230489e80000']);
  await (await new ethers.Contract(stack.contract, accountConfigAbi(), admin).newChainSecuredAccount()).wait();
  assert.equal((await client.balance({ walletAuth: admin })).balance_cents, 0);
  const intent = await client.createPaymentIntent({ amount_cents: 600, walletAuth: admin });
  await payIntent(intent);
  assert.equal((await client.confirmPayment({ payment_intent_id: intent.payment_intent_id, walletAuth: admin })).balance_cents, 600);
});

test('client.idempotent(key): a retried write returns the first answer and runs once', async () => {
  const { api_key } = await client.newAccount({ account_name: 'sdk idempotent', account_description: '' });
  const owner = client.withApiKey(api_key);
  const once = owner.idempotent('sdk-add-group-1');
  const first = await once.addGroup({ group_name: 'once' });
  const second = await once.addGroup({ group_name: 'once' });
  assert.deepEqual(second, first);
  assert.equal((await owner.listGroups({ page_number: 0, page_size: 10 })).filter((g) => g.name === 'once').length, 1);
  assert.equal((await owner.balance()).balance_cents, 9, 'charged once');
  await assert.rejects(once.addGroup({ group_name: 'other' }), (e) => e.status === 422 && e.code === ErrorCode.IDEMPOTENCY_KEY_REUSED);
  assert.throws(() => owner.idempotent('has space'), /Idempotency-Key/);
});

test('key guardrails: set, read and clear them; a run over the key\'s rate throws RateLimitError with retryAfter', async () => {
  const { api_key } = await client.newAccount({ account_name: 'sdk guardrails', account_description: '' });
  const owner = client.withApiKey(api_key);
  const code = 'async function main() { return 1; }';
  const { group_id } = await owner.addGroup({ group_name: 'g', group_description: '' });
  await owner.addActionToGroup({ group_id, action_ipfs_cid: await owner.getActionIpfsId(code) });
  const { usage_api_key } = await owner.addUsageApiKey({ name: 'browser', description: '', execute_in_groups: [Number(group_id)] });
  const set = await owner.setUsageApiKeyGuardrails({ usage_api_key, requests_per_second: 0.5, burst: 1, allowed_origins: ['https://app.example'] });
  assert.equal(set.guardrails.requests_per_second, 0.5);
  const hash = ethers.keccak256(ethers.toUtf8Bytes(usage_api_key));
  assert.deepEqual((await owner.getUsageApiKeyGuardrails(hash)).allowed_origins, ['https://app.example']);
  const usage = owner.withApiKey(usage_api_key);
  await assert.rejects(usage.setUsageApiKeyGuardrails({ usage_api_key }), (e) => e instanceof PermissionDeniedError && e.code === 'owner_only');
  assert.equal((await usage.runAction({ code })).response, 1);
  await assert.rejects(usage.runAction({ code }),
    (e) => e instanceof RateLimitError && e.code === ErrorCode.RATE_LIMITED && e.retryAfter >= 1);
  assert.deepEqual(await owner.clearUsageApiKeyGuardrails(hash), { success: true, cleared: true });
  assert.equal((await usage.runAction({ code })).response, 1);
});
