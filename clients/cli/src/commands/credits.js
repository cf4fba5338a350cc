// sigil credits ...: the balance, the prices, and buying credits with the `chain` processor in one
// command: a payment intent, the token's approve and the Payments contract's pay from a wallet on
// the service's chain (on the dev chain, tUSD is minted first: its mint is open), then confirm.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CliError } from '../output.js';
import { REPO, readWalletKey } from '../profile.js';

const require = createRequire(join(REPO, 'package.json'));

// anvil's well-known development mnemonic and the dev account the CLI pays from on the dev chain
// when no wallet is configured (scripts/devchain.mjs funds its accounts 0..9 with test ETH; 0 deploys,
// 9 is the treasury).
const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
const DEV_PAYING_ACCOUNT = 7;
const DEV_CHAIN_ID = 31337;

const TOKEN_ABI = [
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function mint(address to, uint256 amount)',
];
const PAYMENTS_ABI = ['function pay(bytes32 ref, uint256 amount)'];

async function paymentsConfig(client) {
  try {
    return await client.paymentsConfig();
  } catch (e) {
    if (e.code === 'billing_disabled') throw new CliError('billing_disabled', 'this deployment runs without billing: runs and writes are free', '');
    throw e;
  }
}

function wallet(ethers, ctx, provider, chainId) {
  const key = readWalletKey(ctx.settings);
  if (key) {
    try { return new ethers.Wallet(key, provider); } catch {
      throw new CliError('bad_wallet_key', 'the wallet key is not a private key (0x + 64 hex)', 'fix the file or variable the profile names (sigil profile show)');
    }
  }
  if (chainId === DEV_CHAIN_ID) {
    ctx.out.note(`paying from the dev chain's account ${DEV_PAYING_ACCOUNT} (anvil's test mnemonic; set --wallet-key-file to use another)`);
    return ethers.HDNodeWallet.fromPhrase(DEV_MNEMONIC, undefined, `m/44'/60'/0'/0/${DEV_PAYING_ACCOUNT}`).connect(provider);
  }
  throw new CliError('missing_wallet_key', `paying on chain ${chainId} needs a wallet with the token and gas`,
    'sigil profile set --wallet-key-file FILE (or export SIGIL_WALLET_KEY=0x...)');
}

export const COMMANDS = [
  {
    path: ['credits', 'balance'], summary: "the account's credit balance (one credit = one cent)",
    async run(ctx) {
      const b = await ctx.client().balance();
      ctx.out.result(b, (v) => `${v.balance_cents} credits (${v.balance_display})`);
    },
  },
  {
    path: ['credits', 'prices'], summary: 'what a relayed write and a second of a run cost, and the smallest purchase',
    async run(ctx) {
      const cfg = await paymentsConfig(ctx.client({ needKey: false }));
      const value = { prices: cfg.prices ?? null, min_payment_cents: cfg.min_payment_cents, processor: cfg.processor };
      ctx.out.result(value, (v) => [
        v.prices ? `relayed write: ${v.prices.write_cents} credit(s); action run: ${v.prices.run_second_cents} credit(s) per started second` : 'prices: not reported by this deployment',
        'reads, public endpoints and failed calls are free',
        `buy at least ${v.min_payment_cents} credits at a time (processor: ${v.processor})`]);
    },
  },
  {
    path: ['credits', 'buy'], usage: 'CENTS [--rpc-url URL] [--wallet-key-file FILE]', args: [1, 1],
    summary: 'buy credits with the chain processor in one command (the dev chain: test tUSD, minted on the fly)',
    help: 'Creates a payment intent, pays it on chain (approve + Payments.pay from your wallet; on the dev chain,\n' +
      "tUSD is minted first and anvil's dev account pays unless a wallet is configured) and confirms it.\n" +
      'The chain\'s RPC comes from --rpc-url, the profile, SIGIL_RPC_URL or the dev stack\'s chain.json.',
    options: {
      'rpc-url': { type: 'string', help: "the chain's JSON-RPC URL" },
      'wallet-key-file': { type: 'string', valueName: 'FILE', help: 'the paying wallet\'s private key' },
    },
    async run(ctx, [amount]) {
      if (!/^[1-9][0-9]{0,11}$/.test(amount)) throw new CliError('usage', `"${amount}" is not a whole number of credits (cents)`, 'sigil credits buy 500');
      const client = ctx.client();
      const cfg = await paymentsConfig(client);
      if (Number(amount) < cfg.min_payment_cents) {
        throw new CliError('invalid_amount', `the smallest purchase is ${cfg.min_payment_cents} credits`, `sigil credits buy ${cfg.min_payment_cents}`);
      }
      if (cfg.processor !== 'chain') {
        throw new CliError('unsupported_processor', `this deployment takes payments with ${cfg.processor}, not on chain`, 'pay through the dashboard (/dashboard/) or the processor\'s client library');
      }
      if (!ctx.settings.rpc_url) {
        throw new CliError('missing_rpc_url', "the chain's RPC URL is not configured", 'sigil profile set --rpc-url URL (scripts/start prints it on its "chain:" line), or --rpc-url URL');
      }
      const { ethers } = require('ethers');
      // No request cache: ethers' 250 ms cache of eth_getTransactionCount reuses nonces between
      // quick transactions ("nonce has already been used").
      const provider = new ethers.JsonRpcProvider(ctx.settings.rpc_url, undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 200 });
      try {
        const chainId = Number((await provider.getNetwork()).chainId);
        if (chainId !== cfg.chain_id) {
          throw new CliError('chain_mismatch', `${ctx.settings.rpc_url} is chain ${chainId}; the service takes payments on chain ${cfg.chain_id}`, 'point --rpc-url at the service\'s chain');
        }
        const payer = wallet(ethers, ctx, provider, chainId);
        const intent = await client.createPaymentIntent({ amount_cents: Number(amount) });
        const units = BigInt(intent.pay.amount);
        const token = new ethers.Contract(intent.pay.token, TOKEN_ABI, payer);
        const held = await token.balanceOf(payer.address);
        if (held < units) {
          if (chainId !== DEV_CHAIN_ID) {
            throw new CliError('insufficient_tokens', `${payer.address} holds ${held} token units; the payment needs ${units}`, 'fund the wallet with the token first');
          }
          await (await token.mint(payer.address, units - held)).wait();
        }
        if ((await token.allowance(payer.address, intent.pay.payments_contract)) < units) {
          await (await token.approve(intent.pay.payments_contract, units)).wait();
        }
        const payments = new ethers.Contract(intent.pay.payments_contract, PAYMENTS_ABI, payer);
        const receipt = await (await payments.pay(intent.pay.reference, units)).wait();
        const done = await client.confirmPayment({ payment_intent_id: intent.payment_intent_id });
        const value = { bought_cents: Number(amount), payment_intent_id: intent.payment_intent_id, tx_hash: receipt.hash, ...done };
        ctx.out.result(value, (v) => [`bought ${v.bought_cents} credits (payment ${v.payment_intent_id}, tx ${v.tx_hash})`,
          `balance: ${v.balance_cents} credits`]);
      } catch (e) {
        if (e.code === 'INSUFFICIENT_FUNDS') throw new CliError('insufficient_funds', 'the paying wallet has no gas on this chain', 'fund it with the chain\'s native coin');
        if (e.code === 'ECONNREFUSED' || e.code === 'NETWORK_ERROR' || e.cause?.code === 'ECONNREFUSED') {
          throw new CliError('chain_unreachable', `no chain answers at ${ctx.settings.rpc_url}`, 'is the stack running (scripts/start)? or fix --rpc-url');
        }
        throw e;
      } finally {
        provider.destroy();
      }
    },
  },
];
