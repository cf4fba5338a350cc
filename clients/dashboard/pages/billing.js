// Billing page: the balance, the payment processor and prices, and buying credits with the wallet on
// the chain processor: create_payment_intent, then approve and pay on chain (each transaction shown
// decoded before the wallet signs it), then confirm_payment credits the account once.
import { ethers } from 'ethers';
import { signWalletAuth, ErrorCode } from '@sigil/sdk';
import { session, Kind } from '../session.js';
import { $, busy, say } from '../ui.js';
import { TOKEN_ABI, PAYMENTS_ABI } from '../wallet.js';

// A ChainSecured admin reads its balance with an X-Wallet-Auth header (a BillingAuth signature):
// one signature serves a few minutes, well inside the service's 300 s window.
let walletAuth = null;
export async function walletAuthOption() {
  if (session.kind !== Kind.Wallet) return {};
  if (!walletAuth || Date.now() - walletAuth.at > 240_000) {
    const { chain_id } = await session.client.getNodeChainConfig();
    walletAuth = { at: Date.now(), value: await signWalletAuth(session.wallet.signer, { chainId: chain_id }) };
  }
  return { walletAuth: walletAuth.value };
}

const cents = (c) => `${(c / 100).toFixed(2)} (${c} cents)`;

async function render() {
  const cfg = await session.client.paymentsConfig().catch((e) => ({ error: e }));
  if (cfg.error) {
    $('#billing-processor').textContent = cfg.error.code === 'billing_disabled' ? 'billing is off on this server: runs and writes are free' : cfg.error.message;
    $('#billing-balance').textContent = '—';
    $('#billing-prices').textContent = '—';
    return null;
  }
  $('#billing-processor').textContent = cfg.processor === 'chain'
    ? `on chain ${cfg.chain_id}: token ${cfg.token} (${cfg.token_decimals} decimals), Payments contract ${cfg.payments_contract}; minimum ${cents(cfg.min_payment_cents)}`
    : `${cfg.processor}; minimum ${cents(cfg.min_payment_cents)}`;
  const prices = [];
  if (cfg.prices?.write_cents !== undefined) prices.push(`${cfg.prices.write_cents} cents per relayed write`);
  if (cfg.prices?.run_second_cents !== undefined) prices.push(`${cfg.prices.run_second_cents} cents per started second of a run`);
  $('#billing-prices').textContent = prices.length ? prices.join('; ') : 'not published by this server (the Run page shows what each run cost)';
  $('#billing-amount').min = String(cfg.min_payment_cents);
  const { balance_cents } = await session.client.balance(await walletAuthOption());
  $('#billing-balance').textContent = cents(balance_cents);
  return cfg;
}

// confirm_payment answers 402 payment_not_completed until the payment has its confirmations.
async function confirmWhenMined(payment_intent_id, auth) {
  for (let i = 0; ; i += 1) {
    try {
      return await session.client.confirmPayment({ payment_intent_id, ...auth });
    } catch (e) {
      if (e.code !== ErrorCode.PAYMENT_NOT_COMPLETED || i >= 30) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function buy() {
  const status = $('#billing-status');
  const amount_cents = Number($('#billing-amount').value);
  const auth = await walletAuthOption();
  const intent = await session.client.createPaymentIntent({ amount_cents, ...auth });
  if (!intent.pay) throw new Error(`this server's processor takes payments outside the chain: pay intent ${intent.payment_intent_id} with its client_secret, then confirm`);
  const { signer, address } = await session.ensureWallet();
  const token = new ethers.Contract(intent.pay.token, TOKEN_ABI, signer);
  const amount = BigInt(intent.pay.amount);
  if (await token.balanceOf(address) < amount) throw new Error(`the wallet ${address} holds fewer than ${amount} token units: mint test tokens (dev chain) or fund it`);
  if (await token.allowance(address, intent.pay.payments_contract) < amount) {
    say(status, 'step 1 of 2: approve the Payments contract to take the amount');
    await (await token.approve(intent.pay.payments_contract, amount)).wait();
  }
  say(status, 'step 2 of 2: pay');
  const payments = new ethers.Contract(intent.pay.payments_contract, PAYMENTS_ABI, signer);
  await (await payments.pay(intent.pay.reference, amount)).wait();
  say(status, 'paid: waiting for the service to see the payment');
  const done = await confirmWhenMined(intent.payment_intent_id, auth);
  await render();
  say(status, `credited ${done.credited_cents} cents; balance ${done.balance_cents} cents`);
}

async function mint() {
  const cfg = await session.client.paymentsConfig();
  if (cfg.processor !== 'chain') throw new Error('this server does not take payments on chain');
  const { signer, address } = await session.ensureWallet();
  const token = new ethers.Contract(cfg.token, TOKEN_ABI, signer);
  const units = BigInt(Number($('#billing-amount').value)) * 10n ** BigInt(cfg.token_decimals - 2);
  await (await token.mint(address, units)).wait();
  say($('#billing-status'), `minted ${ethers.formatUnits(units, cfg.token_decimals)} tokens to ${address}`);
}

export function init() {
  $('#billing-refresh').addEventListener('click', () => busy($('#billing-refresh'), $('#billing-status'), async () => { await render(); say($('#billing-status'), ''); }));
  $('#billing-buy-form').addEventListener('submit', (ev) => { ev.preventDefault(); busy($('#billing-buy'), $('#billing-status'), buy); });
  $('#billing-mint').addEventListener('click', () => busy($('#billing-mint'), $('#billing-status'), mint));
}

export async function show() {
  await busy($('#billing-refresh'), $('#billing-status'), async () => { await render(); say($('#billing-status'), ''); });
}

export function signedOut() { walletAuth = null; }
