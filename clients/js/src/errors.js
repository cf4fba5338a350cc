// Typed errors: every API error body {"error": {"code", "message"}} becomes a SigilError subclass
// chosen by its HTTP status (DESIGN.md section 4), carrying the API's own code; failures that never
// reached a JSON answer (network, a body that is not the API's JSON, a refusal by the SDK itself)
// are SigilErrors too, so callers catch one type.

/// Every error the SDK throws. status is the HTTP status (0 when no HTTP answer was received), code
/// the API's snake_case code (or one of the SDK's own: network_error, invalid_response,
/// already_chain_secured, ...), requestId the X-Request-Id of the answer when there was one.
export class SigilError extends Error {
  constructor(message, { status = 0, code = 'sigil_error', requestId = null, body = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.body = body;
  }
}

/// 400: the request is invalid (a field, a typed-data envelope, a contract InvalidInput revert).
export class InvalidRequestError extends SigilError {}
/// 401: no key, an unknown or expired key, a signature that does not authenticate.
export class AuthenticationError extends SigilError {}
/// 402: the account's credit does not cover the price.
export class InsufficientCreditError extends SigilError {}
/// 403: the key lacks the scope, the operation is owner-only, or the account is ChainSecured.
export class PermissionDeniedError extends SigilError {}
/// 404: unknown resource or route.
export class NotFoundError extends SigilError {}
/// 409: conflict with the state on chain (taken, already there, nothing to change).
export class ConflictError extends SigilError {}
/// 413: a body or value over its limit.
export class PayloadTooLargeError extends SigilError {}
/// 422: the body is not well-formed JSON.
export class MalformedJsonError extends SigilError {}
/// 429: overloaded or rate limited; retryAfter (seconds) when the server said.
export class RateLimitError extends SigilError {}
/// 500: the server failed (never a client mistake).
export class ServerError extends SigilError {}
/// 502/503: a dependency (chain node, IPFS, keyd) is unreachable or the circuit is open.
export class UnavailableError extends SigilError {}
/// 504: the chain or a gateway did not answer in time.
export class GatewayTimeoutError extends SigilError {}

/// The request never got an HTTP answer (connection refused, TLS, DNS, aborted, timed out).
export class NetworkError extends SigilError {}
/// An HTTP answer that is not the API's JSON (an HTML page of a proxy, an empty or cut body).
export class InvalidResponseError extends SigilError {}
/// The SDK refused before sending anything (bad arguments, wrong mode, chain id mismatch).
export class ClientError extends SigilError {}

const BY_STATUS = new Map([
  [400, InvalidRequestError], [401, AuthenticationError], [402, InsufficientCreditError],
  [403, PermissionDeniedError], [404, NotFoundError], [405, NotFoundError], [409, ConflictError],
  [413, PayloadTooLargeError], [415, InvalidRequestError], [422, MalformedJsonError], [429, RateLimitError],
  [500, ServerError], [502, UnavailableError], [503, UnavailableError], [504, GatewayTimeoutError],
]);

/// The class for an HTTP error status (SigilError for a status the API does not use).
export function errorClassForStatus(status) {
  return BY_STATUS.get(status) ?? (status >= 500 ? ServerError : SigilError);
}

/// The API's error codes for the rows of the spec's Errors table and the ChainSecured checks
/// (DESIGN.md section 4), plus the SDK's own. Compare with err.code.
export const ErrorCode = Object.freeze({
  // EIP-712 envelope (the spec's Errors table and Authentication rules 6-8)
  TYPED_DATA_SCHEMA_MISMATCH: 'typed_data_schema_mismatch', // 400, types differ from the canonical ones
  TYPED_DATA_TOO_LARGE: 'typed_data_too_large',             // 400, serialized over 4 KiB
  INVALID_TYPED_DATA: 'invalid_typed_data',                 // 400, not an EIP-712 document / bad values
  MISSING_TYPED_DATA: 'missing_typed_data',                 // 400
  MISSING_SIGNATURE: 'missing_signature',                   // 400
  INVALID_SIGNATURE: 'invalid_signature',                   // 400, not 0x + 65 bytes (e.g. a Safe signature)
  WRONG_PRIMARY_TYPE: 'wrong_primary_type',                 // 400, another flow's signature
  WRONG_CHAIN_ID: 'wrong_chain_id',                         // 400, chainId is not the node's
  WRONG_DOMAIN: 'wrong_domain',                             // 400, name/version not Sigil ChainSecured / 1
  ISSUED_AT_OUT_OF_WINDOW: 'issued_at_out_of_window',       // 401, outside +-300 s
  SIGNATURE_MISMATCH: 'signature_mismatch',                 // 401, does not recover to message.address (also ERC-1271)
  SIGNER_MISMATCH: 'signer_mismatch',                       // 401, conversion signed by another wallet
  INVALID_NEW_ADMIN_WALLET_ADDRESS: 'invalid_new_admin_wallet_address', // 400
  UNKNOWN_ACCOUNT: 'unknown_account',                       // 404, the signer administers no account
  ADMIN_TAKEN: 'admin_taken',                               // 409, the wallet administers another account
  ALREADY_UNMANAGED: 'already_unmanaged',                   // 409, conversion of a ChainSecured account
  NOT_MANAGED: 'not_managed',                               // 403, relayed admin write on a ChainSecured account
  // keys and scopes
  MISSING_API_KEY: 'missing_api_key',                       // 401
  INVALID_API_KEY: 'invalid_api_key',                       // 401, unknown, expired, or a dead master key
  KEY_EXPIRED: 'key_expired',                               // 401
  OWNER_ONLY: 'owner_only',                                 // 403, add/update/revoke keys, conversion
  MISSING_SCOPE: 'missing_scope',                           // 403, the key lacks the scope for the group
  NOT_AUTHORIZED: 'not_authorized',                         // 403
  PKP_KEY_MISMATCH: 'pkp_key_mismatch',                     // 403, PKP not derived for (account, path)
  // resources
  UNKNOWN_GROUP: 'unknown_group',
  UNKNOWN_KEY: 'unknown_key',
  UNKNOWN_PKP: 'unknown_pkp',
  UNKNOWN_ACTION: 'unknown_action',
  NOTHING_TO_CHANGE: 'nothing_to_change',
  // billing (DESIGN.md section 9)
  INSUFFICIENT_CREDIT: 'insufficient_credit',               // 402
  PAYMENT_NOT_COMPLETED: 'payment_not_completed',           // 402, confirm_payment before the payment is done
  SPEND_CAP_REACHED: 'spend_cap_reached',                   // 402, the usage key's on-chain balance is spent
  PAYMENT_ALREADY_CREDITED: 'payment_already_credited',     // 409
  UNKNOWN_PAYMENT_INTENT: 'unknown_payment_intent',         // 404 (also another account's)
  INVALID_AMOUNT: 'invalid_amount',                         // 400, amount_cents below 500 or not an integer
  INVALID_WALLET_AUTH: 'invalid_wallet_auth',               // 400
  BILLING_DISABLED: 'billing_disabled',                     // 503
  TOO_MANY_RUNS: 'too_many_runs',                           // 429, the key's concurrent-runs cap
  RATE_LIMITED: 'rate_limited',                             // 429, nginx's per-address limit or a key's guardrail rates (retryAfter)
  ORIGIN_NOT_ALLOWED: 'origin_not_allowed',                 // 403, the key's guardrails list other Origins
  GUARDRAILS_UNAVAILABLE: 'guardrails_unavailable',         // 503, the ledger that keeps key guardrails is unreachable
  IDEMPOTENCY_KEY_REUSED: 'idempotency_key_reused',         // 422, the same key with another request
  IDEMPOTENCY_IN_PROGRESS: 'idempotency_in_progress',       // 409
  INVALID_IDEMPOTENCY_KEY: 'invalid_idempotency_key',       // 400
  IDEMPOTENCY_KEYS_EXHAUSTED: 'idempotency_keys_exhausted', // 429, the account's stored answers are at their cap
  PAYMENTS_MISCONFIGURED: 'payments_misconfigured',         // 503, the payment token is not what the processor expects
  // availability
  CHAIN_UNAVAILABLE: 'chain_unavailable',                   // 503
  CHAIN_TIMEOUT: 'chain_timeout',                           // 504
  // the SDK's own
  NETWORK_ERROR: 'network_error',
  INVALID_RESPONSE: 'invalid_response',
  ALREADY_CHAIN_SECURED: 'already_chain_secured',           // the spec: conversion from a ChainSecured client throws
  CHAIN_ID_MISMATCH: 'chain_id_mismatch',                   // the signer's network is not the node's chain
  INVALID_ARGUMENT: 'invalid_argument',
});

/// Builds the SigilError for an HTTP answer that is not a success. `text` is the raw body.
export function errorFromResponse(status, text, requestId = null, headers = null) {
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const e = body && typeof body === 'object' ? body.error : null;
  if (!e || typeof e !== 'object' || typeof e.code !== 'string' || typeof e.message !== 'string') {
    const snippet = String(text ?? '').slice(0, 200).replace(/\s+/g, ' ').trim();
    return new InvalidResponseError(`HTTP ${status} without the API's JSON error body${snippet ? `: ${snippet}` : ''}`,
      { status, code: ErrorCode.INVALID_RESPONSE, requestId, body: text });
  }
  const Cls = errorClassForStatus(status);
  const err = new Cls(e.message, { status, code: e.code, requestId, body });
  // A write whose transaction went out with an unknown outcome: retry with the same Idempotency-Key
  // (client.idempotent(key)) to follow it instead of writing again.
  if (typeof e.tx_hash === 'string') err.txHash = e.tx_hash;
  if (Cls === RateLimitError || Cls === UnavailableError) {
    const retry = Number(headers?.get?.('retry-after'));
    if (Number.isFinite(retry) && retry >= 0) err.retryAfter = retry;
  }
  return err;
}
