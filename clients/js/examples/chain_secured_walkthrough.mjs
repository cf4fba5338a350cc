import { ethers } from 'ethers';
import { SigilClient, ChainSecuredAccount } from '@sigil/sdk';

// baseUrl: the Sigil service; fetch: optional (default globalThis.fetch); admin and newAdmin: ethers
// Wallets (EOAs) on the service's chain with some ETH for gas.
export async function walkthrough({ baseUrl, fetch, admin, newAdmin }) {
  const client = new SigilClient({ baseUrl, fetch });

  // 1. Create a ChainSecured account: the admin wallet calls newChainSecuredAccount on AccountConfig.
  const account = await ChainSecuredAccount.create({ client, signer: admin });

  // 2. Or convert an API-mode account: its master key, plus a ConvertAccount signature of the new admin.
  const { api_key } = await client.newAccount();
  const apiMode = client.withApiKey(api_key);
  const { api_key_hash } = await apiMode.convertToChainSecuredAccount(newAdmin);
  const converted = await ChainSecuredAccount.connect({ client, signer: newAdmin });

  // 3. Mint a PKP (CreateWallet signature) and register it from the admin wallet (registerWalletDerivation).
  const pkp = await account.mintPkp({ name: 'signer', description: 'minted with a signature' });

  // 4. A group that lists the PKP and the action's CID (a direct-path write by the admin wallet).
  const code = 'async function main({ pkpId }) { return await Sigil.Actions.signMessage({ pkpId, message: "hello" }); }';
  const cid = await client.getActionIpfsId(code);
  const groupId = await account.addGroup({ name: 'signing', pkpIds: [pkp.wallet_address], cids: [cid] });

  // 5. Add a usage key (AddUsageApiKey signature; registerWalletDerivation + setUsageApiKey from the admin
  //    wallet) that may execute in that group.
  const { usage_api_key } = await account.addUsageKey({
    name: 'runner', description: 'runs the signing action', permissions: { execute_in_groups: [groupId] },
  });

  // 6. Buy credits: an account created on chain starts with none, and a run is charged per started
  //    second (billing is on under scripts/start). The chain processor: an intent the admin wallet
  //    signs for (X-Wallet-Auth), then the token's approve and Payments.pay from that wallet, then
  //    confirm. The dev chain's token (tUSD) has an open mint; elsewhere the wallet holds the token.
  const intent = await client.createPaymentIntent({ amount_cents: 500, walletAuth: admin });
  const { token, payments_contract, amount, reference } = intent.pay;
  const tusd = new ethers.Contract(token, ['function mint(address, uint256)', 'function approve(address, uint256)'], admin);
  await (await tusd.mint(admin.address, amount)).wait();
  await (await tusd.approve(payments_contract, amount)).wait();
  const payments = new ethers.Contract(payments_contract, ['function pay(bytes32, uint256)'], admin);
  await (await payments.pay(reference, amount)).wait();
  const { balance_cents } = await client.confirmPayment({ payment_intent_id: intent.payment_intent_id, walletAuth: admin });

  // 7. Run the action with the usage key: it signs with the PKP.
  const runner = account.usageClient(usage_api_key);
  const run = await runner.runAction({ code, pkp_id: pkp.wallet_address, js_params: { pkpId: pkp.wallet_address } });
  const signer = ethers.verifyMessage('hello', run.response);

  return { client, account, apiMode, api_key_hash, converted, pkp, cid, groupId, usage_api_key, balance_cents, run, signer };
}
