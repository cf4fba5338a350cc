// Run receipts (docs/receipts.md): the deployment's receipt key's EIP-712 signature over one run's
// CID, js_params, response, PKP, key hash, request id, time, app id and ending. Checked with
// ethers' verifyTypedData against the receipt key's address the attested evidence set publishes
// (receipt-key.json, covered by sha256sum.txt and so by the evidence quote), never against the
// `signer` the receipt itself names.
import { ethers } from 'ethers';

export const RECEIPT_DOMAIN_NAME = 'Sigil Receipt';
export const RECEIPT_DOMAIN_VERSION = '1';
/// The one Receipt type (field order is part of the signature).
export const RECEIPT_TYPES = Object.freeze({
  Receipt: Object.freeze([
    { name: 'cid', type: 'string' }, { name: 'paramsHash', type: 'bytes32' }, { name: 'responseHash', type: 'bytes32' },
    { name: 'pkp', type: 'address' }, { name: 'apiKeyHash', type: 'bytes32' }, { name: 'requestId', type: 'string' },
    { name: 'issuedAt', type: 'uint64' }, { name: 'appId', type: 'address' }, { name: 'ending', type: 'string' },
  ].map(Object.freeze)),
});

// The SDK runs in browsers too (the dashboard): ethers' sha256 and TextEncoder, no node: modules.
const sha256 = (bytes) => ethers.sha256(bytes);
const utf8 = (text) => new TextEncoder().encode(text);
const isBytes = (v) => v instanceof Uint8Array;  // a Node Buffer is one too

/// sha256 of js_params as the service hashes them: their compact JSON (JSON.stringify of the value
/// sent; `{}` when none was sent). A string or bytes (Uint8Array, Buffer) are taken as those exact bytes.
export function paramsHash(params) {
  if (params === undefined || params === null) return sha256(utf8('{}'));
  if (typeof params === 'string') return sha256(utf8(params));
  if (isBytes(params)) return sha256(params);
  return sha256(utf8(JSON.stringify(params)));
}

/// sha256 of the answer's `response` member: JSON.stringify of the parsed value (a run that did not
/// complete answers ""). Bytes (Uint8Array, Buffer) are taken as they are.
export function responseHash(response) {
  if (isBytes(response)) return sha256(response);
  return sha256(utf8(JSON.stringify(response ?? '')));
}

const sameTypes = (types) => JSON.stringify(types) === JSON.stringify(RECEIPT_TYPES);
const addr = (a) => (typeof a === 'string' && /^0x[0-9a-fA-F]{40}$/.test(a) ? a.toLowerCase() : null);

/// Checks `receipt` ({domain, types, primaryType, message, signature}; the run's answer with a
/// `receipt` member is accepted too, and then its `response` is checked). Options:
///   signer    the attested receipt key address (required: from verifyDeployment's report, or
///             `evidence`, which is such a report or {receiptKey});
///   appId     the expected app id (default: the evidence's), compared with message.appId;
///   chainId, contract  compared with the domain when given;
///   params    the js_params sent (or their bytes): paramsHash must match;
///   response  the answer's response value (or the member's bytes): responseHash must match.
/// Returns {ok, checks: [{status: 'pass'|'fail', what, reason}], message}. Never throws on a bad receipt.
export function checkReceipt(input, options = {}) {
  const checks = [];
  const add = (ok, what, reason) => checks.push({ status: ok ? 'pass' : 'fail', what, reason });
  let receipt = input;
  let response = options.response;
  if (receipt && typeof receipt === 'object' && receipt.receipt && typeof receipt.receipt === 'object') {
    if (response === undefined && 'response' in receipt) response = receipt.response;
    receipt = receipt.receipt;
  }
  const evidence = options.evidence ?? {};
  const signer = addr(options.signer ?? evidence.receiptKey);
  const appId = addr(options.appId ?? evidence.appId);
  const { domain, types, primaryType, message, signature } = receipt ?? {};
  if (!receipt || typeof receipt !== 'object' || !domain || !types || !message || typeof signature !== 'string') {
    add(false, 'shape', 'not a receipt: domain, types, message and signature are needed');
    return finish(checks, null);
  }
  const shapeOk = domain.name === RECEIPT_DOMAIN_NAME && domain.version === RECEIPT_DOMAIN_VERSION &&
    (primaryType === undefined || primaryType === 'Receipt') && sameTypes(types);
  add(shapeOk, 'shape', shapeOk ? `a "${RECEIPT_DOMAIN_NAME}" v${RECEIPT_DOMAIN_VERSION} Receipt`
    : `not the Sigil Receipt v1 structure (domain ${JSON.stringify(domain)}, types as given differ)`);
  let recovered = null;
  try {
    recovered = ethers.verifyTypedData(domain, RECEIPT_TYPES, message, signature).toLowerCase();
  } catch (e) {
    add(false, 'signature', `the signature does not verify: ${e.shortMessage ?? e.message}`);
  }
  if (!signer) add(false, 'signer', 'no attested receipt key address to compare with (give the evidence or signer)');
  else if (recovered) {
    add(recovered === signer, 'signature', recovered === signer
      ? `signed by the attested receipt key ${signer}` : `signed by ${recovered}, not the attested receipt key ${signer}`);
  }
  if (appId) {
    const got = addr(message.appId);
    add(got === appId, 'appId', got === appId ? `app id ${appId}` : `app id ${message.appId} is not the attested ${appId}`);
  }
  if (options.chainId !== undefined) {
    const ok = BigInt(domain.chainId ?? -1) === BigInt(options.chainId);
    add(ok, 'chainId', ok ? `chain id ${options.chainId}` : `chain id ${domain.chainId} is not ${options.chainId}`);
  }
  if (options.contract !== undefined) {
    const ok = addr(domain.verifyingContract) === addr(options.contract);
    add(ok, 'contract', ok ? `contract ${options.contract}` : `contract ${domain.verifyingContract} is not ${options.contract}`);
  }
  if (options.params !== undefined) {
    const h = paramsHash(options.params);
    add(h === String(message.paramsHash).toLowerCase(), 'paramsHash',
      h === String(message.paramsHash).toLowerCase() ? 'js_params match' : `js_params hash ${h}, the receipt binds ${message.paramsHash}`);
  }
  if (response !== undefined) {
    const h = responseHash(response);
    add(h === String(message.responseHash).toLowerCase(), 'responseHash',
      h === String(message.responseHash).toLowerCase() ? 'the response matches' : `response hash ${h}, the receipt binds ${message.responseHash}`);
  }
  return finish(checks, message);
}

function finish(checks, message) {
  const ok = checks.length > 0 && checks.every((c) => c.status === 'pass');
  return { ok, checks, message };
}
