// TDX quote v4 (Intel's DCAP quote format, evidence/README.md "Quotes"): parsing, the simulated
// quote's signature check, and real quotes through @phala/dcap-qvl.
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { createRequire } from 'node:module';
import { hexBytes } from './eventlog.js';

export const HEADER_LEN = 48;
export const BODY_LEN = 584;
/// The QE vendor id of sigil-tee-sim's quotes.
export const SIMULATED_VENDOR_ID = Buffer.from('SIGIL-SIMULATED!', 'ascii');
export const TEE_TYPE_TDX = 0x81;
export const ATTESTATION_KEY_ECDSA_P256 = 2;

// The TD report body: [name, length] in order.
const BODY_FIELDS = [
  ['tee_tcb_svn', 16], ['mrseam', 48], ['mrsignerseam', 48], ['seam_attributes', 8], ['td_attributes', 8],
  ['xfam', 8], ['mrtd', 48], ['mrconfigid', 48], ['mrowner', 48], ['mrownerconfig', 48],
  ['rtmr0', 48], ['rtmr1', 48], ['rtmr2', 48], ['rtmr3', 48], ['report_data', 64],
];

/// Parses a TDX v4 quote (Buffer or hex string, 0x allowed). Returns {raw, header: {version,
/// attestation_key_type, tee_type, qe_vendor_id, user_data}, body: {mrtd, rtmr0..3, report_data, ...}
/// (Buffers), signed (header||body), signature (r||s), attestation_key (x||y), cert_type, cert_data,
/// simulated}. Throws on anything that is not that layout.
export function parseQuote(input) {
  const raw = typeof input === 'string' ? hexBytes(input.trim(), 'the quote') : Buffer.from(input);
  if (raw.length < HEADER_LEN + BODY_LEN + 4) throw new Error(`the quote is ${raw.length} bytes, shorter than a TDX v4 quote`);
  const header = {
    version: raw.readUInt16LE(0),
    attestation_key_type: raw.readUInt16LE(2),
    tee_type: raw.readUInt32LE(4),
    qe_vendor_id: raw.subarray(12, 28),
    user_data: raw.subarray(28, 48),
  };
  if (header.version !== 4) throw new Error(`quote version ${header.version}, not 4`);
  if (header.tee_type !== TEE_TYPE_TDX) throw new Error(`quote TEE type 0x${header.tee_type.toString(16)}, not TDX (0x81)`);
  if (header.attestation_key_type !== ATTESTATION_KEY_ECDSA_P256) {
    throw new Error(`quote attestation key type ${header.attestation_key_type}, not ECDSA P-256 (2)`);
  }
  const body = {};
  let off = HEADER_LEN;
  for (const [name, len] of BODY_FIELDS) {
    body[name] = raw.subarray(off, off + len);
    off += len;
  }
  const sigLen = raw.readUInt32LE(off);
  off += 4;
  if (raw.length < off + sigLen) throw new Error('the quote is shorter than its signature data length says');
  if (sigLen < 64 + 64 + 6) throw new Error('the quote signature data is too short');
  const sig = raw.subarray(off, off + sigLen);
  const certType = sig.readUInt16LE(128);
  const certSize = sig.readUInt32LE(130);
  if (134 + certSize > sig.length) throw new Error('the quote certification data is longer than its signature data');
  return {
    raw,
    header,
    body,
    signed: raw.subarray(0, HEADER_LEN + BODY_LEN),
    signature: sig.subarray(0, 64),
    attestation_key: sig.subarray(64, 128),
    cert_type: certType,
    cert_data: sig.subarray(134, 134 + certSize),
    simulated: header.qe_vendor_id.equals(SIMULATED_VENDOR_ID),
  };
}

/// The ECDSA P-256 signature (SHA-256 over header||body, raw r||s) by the quote's embedded
/// attestation key (x||y). True or false.
export function attestationSignatureValid(quote) {
  const key = createPublicKey({
    key: {
      kty: 'EC', crv: 'P-256',
      x: quote.attestation_key.subarray(0, 32).toString('base64url'),
      y: quote.attestation_key.subarray(32, 64).toString('base64url'),
    },
    format: 'jwk',
  });
  return cryptoVerify('sha256', quote.signed, { key, dsaEncoding: 'ieee-p1363' }, quote.signature);
}

let s_qvl = null;
function qvl() {
  if (!s_qvl) s_qvl = createRequire(import.meta.url)('@phala/dcap-qvl');
  return s_qvl;
}

/// The PCCS asked for collateral when the caller names neither a file nor another PCCS: Phala's
/// public PCCS, @phala/dcap-qvl's own default (PHALA_PCCS_URL), which mirrors Intel's PCS.
export const DEFAULT_PCCS_URL = 'https://pccs.phala.network';
/// The TCB statuses accepted unless the caller allows more.
export const DEFAULT_TCB_STATUSES = Object.freeze(['UpToDate']);

/// True when the TD runs with the DEBUG attribute (TDATTRIBUTES bit 0, TUD.DEBUG): its memory and
/// registers are open to the host, so nothing it attests to can be trusted.
export function tdDebug(quote) {
  return (quote.body.td_attributes[0] & 0x01) !== 0;
}

/// The TCB policy: {status: 'pass'|'fail', reason} for dcap-qvl's TCB status under the allowed list.
export function judgeTcbStatus(tcbStatus, advisoryIds = [], allowed = DEFAULT_TCB_STATUSES) {
  const advisories = advisoryIds?.length ? ` (advisories ${advisoryIds.join(', ')})` : '';
  if (allowed.includes(tcbStatus)) return { status: 'pass', reason: `TCB ${tcbStatus}${advisories}, allowed (${allowed.join(', ')})` };
  return {
    status: 'fail',
    reason: `TCB ${tcbStatus}${advisories} is not among the allowed statuses (${allowed.join(', ')}); give --allow-tcb-status ${tcbStatus} to accept it`,
  };
}

/// Verifies a parsed quote under the options {allowSimulated, collateral (the Collateral object of
/// @phala/dcap-qvl), pccsUrl (default DEFAULT_PCCS_URL; used only without collateral), now
/// (seconds), cache (an object that keeps collateral fetched from the PCCS for the next quote of the
/// same platform), allowedTcbStatuses (default DEFAULT_TCB_STATUSES)}. Fails closed: a quote is
/// 'pass' only when its Intel signature chain and TCB verify and the TCB status is allowed, or, for
/// a simulated quote under allowSimulated, when its embedded key's signature verifies. Returns
/// {status: 'pass'|'fail', reason, simulated, tcb_status?, advisory_ids?}.
export async function verifyQuoteSignature(quote, options = {}) {
  if (quote.simulated) {
    if (!options.allowSimulated) {
      return { status: 'fail', simulated: true, reason: 'simulated quote (QE vendor id "SIGIL-SIMULATED!", not a TEE): refused without --allow-simulated' };
    }
    let valid;
    try {
      valid = attestationSignatureValid(quote);
    } catch (e) {
      return { status: 'fail', simulated: true, reason: `simulated quote: bad attestation key (${e.message})` };
    }
    return valid
      ? { status: 'pass', simulated: true, reason: 'SIMULATED quote accepted (--allow-simulated): signed by its embedded key; no Intel chain, no TCB status' }
      : { status: 'fail', simulated: true, reason: 'simulated quote: the signature over header||body does not verify with its embedded key' };
  }
  // Quotes of one platform carry the same certification data (its PCK chain) and share collateral.
  const cacheKey = createHash('sha256').update(quote.cert_data).digest('hex');
  let collateral = options.collateral ?? options.cache?.[cacheKey] ?? null;
  if (!collateral) {
    const pccsUrl = options.pccsUrl ?? DEFAULT_PCCS_URL;
    try {
      collateral = await qvl().getCollateral(pccsUrl, quote.raw);
      if (options.cache) options.cache[cacheKey] = collateral;
    } catch (e) {
      return { status: 'fail', simulated: false, reason: `could not fetch collateral from ${pccsUrl}: ${e.message} (give --collateral FILE to verify offline)` };
    }
  }
  let report;
  try {
    const now = options.now ?? Math.floor(Date.now() / 1000);
    report = qvl().verify(quote.raw, collateral, now);
  } catch (e) {
    return { status: 'fail', simulated: false, reason: `quote verification failed (@phala/dcap-qvl): ${e.message}` };
  }
  const tcb = judgeTcbStatus(report.status, report.advisory_ids, options.allowedTcbStatuses ?? DEFAULT_TCB_STATUSES);
  return {
    status: tcb.status, simulated: false, tcb_status: report.status, advisory_ids: report.advisory_ids,
    reason: `Intel signature chain verified by @phala/dcap-qvl; ${tcb.reason}`,
  };
}
