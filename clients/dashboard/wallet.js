// The browser wallet (EIP-1193 window.ethereum) behind a guard: every transaction and every typed-data
// signature the dashboard or the SDK asks of it is first shown decoded in a dialog (which contract,
// which function, each argument by name, amounts in token units), and goes to the wallet only when
// the user presses Sign. A contract the dashboard cannot name is shown as such with its raw data.
import { ethers } from 'ethers';
import { ACCOUNT_CONFIG_ABI, ClientError, ErrorCode } from '@sigil/sdk';
import { $, el, fill, show } from './ui.js';

// The dev chain's billing contracts (DESIGN section 9): only the calls the dashboard makes.
const PAYMENTS_ABI = ['function pay(bytes32 ref, uint256 amount)'];
const TOKEN_ABI = [
  'function approve(address spender, uint256 amount) returns (bool)',
  'function mint(address to, uint256 amount)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function balanceOf(address owner) view returns (uint256)',
];

/// The contracts a transaction may be decoded against: AccountConfig always, the token and the
/// Payments contract when billing runs on the chain processor.
async function knownContracts(client) {
  const known = [];
  const { contract_address } = await client.getNodeChainConfig();
  known.push({ address: contract_address, label: 'AccountConfig (the service\'s account contract)', iface: new ethers.Interface(ACCOUNT_CONFIG_ABI) });
  try {
    const cfg = await client.paymentsConfig();
    if (cfg.processor === 'chain') {
      known.push({ address: cfg.payments_contract, label: 'Payments (buys credits)', iface: new ethers.Interface(PAYMENTS_ABI), decimals: cfg.token_decimals });
      known.push({ address: cfg.token, label: 'the payment token (ERC-20)', iface: new ethers.Interface(TOKEN_ABI), decimals: cfg.token_decimals });
    }
  } catch {
    // Billing off: no payment contracts to name.
  }
  return known;
}

/// What a transaction does, as label/value rows: the decoded call when `to` is a known contract.
export function describeTransaction(tx, known) {
  const rows = [['from', tx.from ?? '(the wallet)']];
  const to = tx.to ? ethers.getAddress(tx.to) : null;
  const contract = to && known.find((k) => ethers.getAddress(k.address) === to);
  rows.push(['to', to ? `${to}${contract ? ` — ${contract.label}` : ' — not a contract this dashboard knows'}` : '(contract creation)']);
  rows.push(['value', `${ethers.formatEther(BigInt(tx.value ?? 0))} ETH`]);
  let decoded = null;
  if (contract && tx.data && tx.data !== '0x') {
    try {
      decoded = contract.iface.parseTransaction({ data: tx.data, value: BigInt(tx.value ?? 0) });
    } catch {
      decoded = null;
    }
  }
  if (decoded) {
    rows.push(['function', decoded.signature]);
    decoded.fragment.inputs.forEach((input, i) => {
      let v = decoded.args[i];
      let text = show(typeof v === 'object' && v !== null && 'toArray' in v ? v.toArray() : v);
      if (input.name === 'amount' && contract.decimals !== undefined) text += ` (${ethers.formatUnits(v, contract.decimals)} tokens)`;
      if (/hash$/i.test(input.name) && typeof v === 'bigint') text = ethers.toBeHex(v, 32);
      rows.push([`  ${input.name || `arg ${i}`} (${input.type})`, text]);
    });
  } else if (tx.data && tx.data !== '0x') {
    rows.push(['data (not decoded)', tx.data]);
  }
  return { rows, decoded: decoded !== null };
}

/// A typed-data request (eth_signTypedData_v4's JSON) as rows: domain, primaryType, message, with
/// issuedAt shown as a date (the service accepts it within 300 s of its clock).
export function describeTypedData(json) {
  const td = typeof json === 'string' ? JSON.parse(json) : json;
  const rows = [['primaryType', td.primaryType], ['domain', `${td.domain?.name} v${td.domain?.version} on chain ${td.domain?.chainId}`]];
  for (const [k, v] of Object.entries(td.message ?? {})) {
    rows.push([`  ${k}`, k === 'issuedAt' ? `${v} (${new Date(Number(v) * 1000).toISOString()})` : show(v)]);
  }
  return { rows, decoded: true };
}

// Shows the preview dialog and resolves true (Sign) or false (Reject).
function confirmInDialog(title, { rows, decoded }) {
  const dialog = $('#wallet-preview');
  fill($('#wallet-preview-title'), title);
  fill($('#wallet-preview-rows'), rows.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]).flat());
  $('#wallet-preview-warning').hidden = decoded;
  return new Promise((resolve) => {
    const sign = $('#wallet-preview-sign');
    const reject = $('#wallet-preview-reject');
    const done = (ok) => {
      sign.removeEventListener('click', onSign);
      reject.removeEventListener('click', onReject);
      dialog.removeEventListener('cancel', onReject);
      dialog.close();
      resolve(ok);
    };
    const onSign = () => done(true);
    const onReject = (ev) => { ev?.preventDefault?.(); done(false); };
    sign.addEventListener('click', onSign);
    reject.addEventListener('click', onReject);
    dialog.addEventListener('cancel', onReject);
    dialog.showModal();
  });
}

const rejected = () => Object.assign(new Error('rejected in the dashboard\'s preview'), { code: 4001 });

/// An EIP-1193 provider that previews eth_sendTransaction and eth_signTypedData_v4 before passing
/// them on to `ethereum`; everything else goes straight through.
export function guardedProvider(ethereum, client) {
  let known = null;
  return {
    async request({ method, params }) {
      if (method === 'eth_sendTransaction') {
        known ??= await knownContracts(client);
        if (!await confirmInDialog('Sign this transaction?', describeTransaction(params[0], known))) throw rejected();
      } else if (method === 'eth_signTypedData_v4') {
        if (!await confirmInDialog('Sign this message?', describeTypedData(params[1]))) throw rejected();
      } else if (method === 'personal_sign' || method === 'eth_sign') {
        // The dashboard never asks for these; the SDK signs typed data only.
        throw rejected();
      }
      return ethereum.request({ method, params });
    },
    on: (...a) => ethereum.on?.(...a),
    removeListener: (...a) => ethereum.removeListener?.(...a),
  };
}

/// Connects window.ethereum: asks for an account, checks the wallet's chain is the service's (asking
/// the wallet to switch when it is not) -> {provider, signer, address, chainId}. `onChange` is called
/// once when the wallet's account or chain changes: the signer made here would then sign for the wrong
/// account or chain, so the caller drops it.
export async function connectWallet(client, { onChange = null } = {}) {
  const ethereum = window.ethereum;
  if (!ethereum || typeof ethereum.request !== 'function') {
    throw new ClientError('no browser wallet: install one that provides window.ethereum (EIP-1193), or sign in with an API key',
      { code: ErrorCode.INVALID_ARGUMENT });
  }
  const { chain_id } = await client.getNodeChainConfig();
  const guarded = guardedProvider(ethereum, client);
  await guarded.request({ method: 'eth_requestAccounts', params: [] });
  let walletChain = BigInt(await guarded.request({ method: 'eth_chainId', params: [] }));
  if (walletChain !== BigInt(chain_id)) {
    try {
      await guarded.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: ethers.toBeHex(BigInt(chain_id)) }] });
      walletChain = BigInt(await guarded.request({ method: 'eth_chainId', params: [] }));
    } catch {
      // Reported below with both chain ids.
    }
  }
  if (walletChain !== BigInt(chain_id)) {
    throw new ClientError(`the wallet is on chain ${walletChain}, the service on chain ${chain_id}: switch the wallet's network`,
      { code: ErrorCode.CHAIN_ID_MISMATCH });
  }
  // cacheTimeout -1: no cached eth_getTransactionCount between two sends (issue 25's nonce stumble).
  const provider = new ethers.BrowserProvider(guarded, undefined, { cacheTimeout: -1 });
  const signer = await provider.getSigner();
  if (onChange) {
    let fired = false;
    const handler = () => {
      if (fired) return;
      fired = true;
      ethereum.removeListener?.('accountsChanged', handler);
      ethereum.removeListener?.('chainChanged', handler);
      onChange();
    };
    ethereum.on?.('accountsChanged', handler);
    ethereum.on?.('chainChanged', handler);
  }
  return { provider, signer, address: await signer.getAddress(), chainId: walletChain };
}

export { TOKEN_ABI, PAYMENTS_ABI };
