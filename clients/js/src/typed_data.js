// The ChainSecured EIP-712 envelope (spec Authentication rule 6, DESIGN.md section 4): the canonical
// typed-data document of each flow, signed with an ethers v6 Signer's signTypedData, and the
// X-Wallet-Auth header of the BillingAuth flow. The server accepts exactly this document: any other
// field, order, type or primaryType is refused (workers/api/typed_data_auth.cpp).
import { ethers } from 'ethers';
import { ClientError, ErrorCode } from './errors.js';

export const DOMAIN_NAME = 'Sigil ChainSecured';
export const DOMAIN_VERSION = '1';
/// The spec's limit on the serialized typed data (bytes of JSON).
export const MAX_TYPED_DATA_BYTES = 4096;
/// issuedAt must be within this many seconds of the server's clock, for every flow.
export const ISSUED_AT_WINDOW_SECONDS = 300;

/// One primaryType per flow; a signature for one flow is refused by every other.
export const PrimaryType = Object.freeze({
  CreateWallet: 'CreateWallet',       // POST /create_wallet_with_signature
  ConvertAccount: 'ConvertAccount',   // POST /convert_to_chain_secured_account
  AddUsageApiKey: 'AddUsageApiKey',   // POST /add_usage_api_key_with_signature
  BillingAuth: 'BillingAuth',         // X-Wallet-Auth header
});

/// The canonical field lists, in the order the type hash depends on.
export const DOMAIN_TYPES = Object.freeze([
  Object.freeze({ name: 'name', type: 'string' }),
  Object.freeze({ name: 'version', type: 'string' }),
  Object.freeze({ name: 'chainId', type: 'uint256' }),
]);
export const MESSAGE_TYPES = Object.freeze([
  Object.freeze({ name: 'address', type: 'address' }),
  Object.freeze({ name: 'issuedAt', type: 'uint256' }),
]);

const nowSeconds = () => Math.floor(Date.now() / 1000);

function checkPrimaryType(primaryType) {
  if (!Object.hasOwn(PrimaryType, primaryType)) {
    throw new ClientError(`primaryType must be one of ${Object.keys(PrimaryType).join(', ')}, not ${primaryType}`,
      { code: ErrorCode.INVALID_ARGUMENT });
  }
}

// A uint256 as JSON: a number while it is exact, else its decimal string (the server takes both).
function uintJson(v, what) {
  let n;
  try {
    n = BigInt(v);
  } catch {
    throw new ClientError(`${what} must be a non-negative integer, not ${v}`, { code: ErrorCode.INVALID_ARGUMENT });
  }
  if (n < 0n) throw new ClientError(`${what} must be a non-negative integer, not ${v}`, { code: ErrorCode.INVALID_ARGUMENT });
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
}

/// The eth_signTypedData_v4 document of a flow:
///   {types: {EIP712Domain: [name, version, chainId], <primaryType>: [address, issuedAt]},
///    primaryType, domain: {name: 'Sigil ChainSecured', version: '1', chainId}, message: {address, issuedAt}}
/// chainId is the node's (GET /get_node_chain_config); address the signer's (checksummed here);
/// issuedAt unix seconds (default: now).
export function buildTypedData(primaryType, { chainId, address, issuedAt = nowSeconds() }) {
  checkPrimaryType(primaryType);
  if (chainId === undefined || chainId === null) {
    throw new ClientError('chainId is required (GET /get_node_chain_config)', { code: ErrorCode.INVALID_ARGUMENT });
  }
  let checksummed;
  try {
    checksummed = ethers.getAddress(address);
  } catch {
    throw new ClientError(`address must be an Ethereum address, not ${address}`, { code: ErrorCode.INVALID_ARGUMENT });
  }
  return {
    types: {
      EIP712Domain: DOMAIN_TYPES.map((f) => ({ ...f })),
      [primaryType]: MESSAGE_TYPES.map((f) => ({ ...f })),
    },
    primaryType,
    domain: { name: DOMAIN_NAME, version: DOMAIN_VERSION, chainId: uintJson(chainId, 'chainId') },
    message: { address: checksummed, issuedAt: uintJson(issuedAt, 'issuedAt') },
  };
}

/// The EIP-712 digest the server recovers the signature from (what signTypedData signs).
export function typedDataDigest(typedData) {
  const { domain, primaryType, message } = typedData;
  return ethers.TypedDataEncoder.hash(domain, { [primaryType]: typedData.types[primaryType] }, message);
}

/// Signs a flow with an ethers v6 Signer: {typed_data, signature}, the body members every
/// signature-authorized request carries. Only an EOA can sign (spec rule 8: plain ECDSA recovery,
/// no ERC-1271), so a signature that does not recover to the signer's address is refused here
/// before it is sent.
export async function signTypedData(signer, primaryType, { chainId, issuedAt } = {}) {
  if (!signer || typeof signer.signTypedData !== 'function' || typeof signer.getAddress !== 'function') {
    throw new ClientError('signer must be an ethers v6 Signer (signTypedData, getAddress)', { code: ErrorCode.INVALID_ARGUMENT });
  }
  const address = await signer.getAddress();
  const typed_data = buildTypedData(primaryType, { chainId, address, issuedAt });
  const signature = await signer.signTypedData(typed_data.domain, { [primaryType]: typed_data.types[primaryType] },
    typed_data.message);
  let recovered = null;
  try {
    recovered = ethers.recoverAddress(typedDataDigest(typed_data), signature);
  } catch {
    recovered = null;
  }
  if (recovered !== typed_data.message.address) {
    throw new ClientError(`the signature of ${typed_data.message.address} does not recover to it: only an EOA can sign ` +
      'the ChainSecured flows (no ERC-1271 contract wallets)', { code: ErrorCode.SIGNATURE_MISMATCH });
  }
  return { typed_data, signature };
}

/// The X-Wallet-Auth header value (DESIGN.md section 4): base64 of the JSON {typed_data, signature}
/// of a BillingAuth envelope.
export function walletAuthHeader({ typed_data, signature }) {
  if (typed_data?.primaryType !== PrimaryType.BillingAuth) {
    throw new ClientError('X-Wallet-Auth carries a BillingAuth envelope', { code: ErrorCode.INVALID_ARGUMENT });
  }
  return ethers.encodeBase64(ethers.toUtf8Bytes(JSON.stringify({ typed_data, signature })));
}

/// Decodes an X-Wallet-Auth value back to {typed_data, signature}.
export function parseWalletAuthHeader(value) {
  let parsed;
  try {
    parsed = JSON.parse(ethers.toUtf8String(ethers.decodeBase64(String(value))));
  } catch {
    throw new ClientError('X-Wallet-Auth is not base64 of a JSON object', { code: ErrorCode.INVALID_ARGUMENT });
  }
  if (!parsed || typeof parsed !== 'object' || !parsed.typed_data || typeof parsed.signature !== 'string') {
    throw new ClientError('X-Wallet-Auth must hold {typed_data, signature}', { code: ErrorCode.INVALID_ARGUMENT });
  }
  return parsed;
}

/// Signs a BillingAuth envelope and returns the X-Wallet-Auth header value.
export async function signWalletAuth(signer, { chainId, issuedAt } = {}) {
  return walletAuthHeader(await signTypedData(signer, PrimaryType.BillingAuth, { chainId, issuedAt }));
}
