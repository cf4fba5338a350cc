// The pure pieces of sigil-tee-sim (no I/O): runtime event digests, RTMR replay, the simulated event
// log and the TDX v4 quote layout, as evidence/README.md describes them. Used by the simulator and
// by its tests. The verifier (clients/js) has its own parser and never imports this.
import { createHash, sign } from 'node:crypto';

/// event_type of a dstack runtime event (IMR 3).
export const RUNTIME_EVENT_TYPE = 0x08000001;
/// The QE vendor id that marks a simulated quote (16 ASCII bytes).
export const SIMULATED_VENDOR_ID = Buffer.from('SIGIL-SIMULATED!', 'ascii');

export const QUOTE_VERSION = 4;
export const ATTESTATION_KEY_TYPE_ECDSA_P256 = 2;
export const TEE_TYPE_TDX = 0x00000081;
export const HEADER_BYTES = 48;
/// The TD report body (TDX 1.0 TDREPORT fields of a v4 quote), in order: [name, bytes].
export const BODY_FIELDS = [
  ['tee_tcb_svn', 16], ['mrseam', 48], ['mrsignerseam', 48], ['seam_attributes', 8], ['td_attributes', 8],
  ['xfam', 8], ['mrtd', 48], ['mrconfigid', 48], ['mrowner', 48], ['mrownerconfig', 48],
  ['rtmr0', 48], ['rtmr1', 48], ['rtmr2', 48], ['rtmr3', 48], ['report_data', 64],
];
export const BODY_BYTES = BODY_FIELDS.reduce((n, [, len]) => n + len, 0); // 584

export const sha256 = (...parts) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();
export const sha384 = (...parts) => parts.reduce((h, p) => h.update(p), createHash('sha384')).digest();

/// A runtime event's "V1" digest: SHA-384(event type as 4 LE bytes || ':' || name || ':' || payload).
export function eventDigestV1(eventType, name, payload) {
  const type = Buffer.alloc(4);
  type.writeUInt32LE(eventType);
  return sha384(type, Buffer.from(':'), Buffer.from(name, 'utf8'), Buffer.from(':'), payload);
}

/// An IMR-3 runtime event of the event log, its digest in the V1 form.
export function runtimeEvent(name, payload = Buffer.alloc(0)) {
  return {
    imr: 3,
    event_type: RUNTIME_EVENT_TYPE,
    digest: eventDigestV1(RUNTIME_EVENT_TYPE, name, payload).toString('hex'),
    event: name,
    event_payload: payload.toString('hex'),
  };
}

/// Replays the events of register `imr`: start with 48 zero bytes, then mr = SHA-384(mr || digest)
/// per event in order. A runtime event given with an empty digest counts with its V1 digest.
export function replayRtmr(events, imr = 3) {
  let mr = Buffer.alloc(48);
  for (const e of events) {
    if (e.imr !== imr) continue;
    const digest = e.digest
      ? Buffer.from(e.digest, 'hex')
      : eventDigestV1(e.event_type, e.event, Buffer.from(e.event_payload, 'hex'));
    if (digest.length !== 48) throw new Error(`event ${e.event}: digest is not 48 bytes`);
    mr = sha384(mr, digest);
  }
  return mr;
}

/// The simulator's event log: made-up firmware, boot loader and kernel events in IMR 0-2 (digest =
/// SHA-384 of a label, so the values are fixed), then the runtime events in IMR 3 in dstack's order.
/// appId: 20 bytes; composeHash: 32 bytes; instanceId: bytes; keyProvider: bytes (its info JSON).
export function simulatedEventLog({ appId, composeHash, instanceId, keyProvider }) {
  const madeUp = (imr, eventType, label) => {
    const payload = Buffer.from(`sigil-tee-sim: ${label}`);
    return { imr, event_type: eventType, digest: sha384(payload).toString('hex'), event: '', event_payload: payload.toString('hex') };
  };
  return [
    madeUp(0, 0x80000001, 'firmware configuration'),  // EV_EFI_VARIABLE_DRIVER_CONFIG
    madeUp(0, 0x80000008, 'firmware volume'),         // EV_EFI_PLATFORM_FIRMWARE_BLOB
    madeUp(1, 0x80000003, 'boot loader'),             // EV_EFI_BOOT_SERVICES_APPLICATION
    madeUp(2, 0x0000000d, 'kernel command line'),     // EV_IPL
    madeUp(2, 0x0000000d, 'initrd'),
    runtimeEvent('system-preparing'),
    runtimeEvent('app-id', appId),
    runtimeEvent('compose-hash', composeHash),
    runtimeEvent('instance-id', instanceId),
    runtimeEvent('boot-mr-done'),
    runtimeEvent('key-provider', keyProvider),
    runtimeEvent('system-ready'),
  ];
}

/// The simulator's OS measurements, fixed made-up values: mrtd = SHA-384("sigil-tee-sim: mrtd") and
/// rtmr0-2 the replays of its made-up IMR 0-2 events (which name no app, compose or instance).
/// {mrtd, rtmr0, rtmr1, rtmr2} as Buffers. A verifier pins these (sigil-tee-sim --print-measurements).
export function simulatedMeasurements() {
  const events = simulatedEventLog({ appId: Buffer.alloc(20), composeHash: Buffer.alloc(32), instanceId: Buffer.alloc(0), keyProvider: Buffer.alloc(0) });
  return {
    mrtd: sha384(Buffer.from('sigil-tee-sim: mrtd')),
    rtmr0: replayRtmr(events, 0),
    rtmr1: replayRtmr(events, 1),
    rtmr2: replayRtmr(events, 2),
  };
}

/// report_data from hex (upper or lower case, no 0x): zero padded on the right to 64 bytes.
/// Throws on anything that is not hex or is longer than 64 bytes.
export function reportDataFromHex(hex) {
  if (typeof hex !== 'string' || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new Error('report_data must be hex (an even number of 0-9a-f digits, no 0x)');
  }
  if (hex.length > 128) throw new Error(`report_data is ${hex.length / 2} bytes, at most 64 allowed`);
  const out = Buffer.alloc(64);
  Buffer.from(hex, 'hex').copy(out);
  return out;
}

/// The raw public key x||y (64 bytes) of a P-256 KeyObject (public or private).
export function publicKeyRaw(key) {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')]);
}

/// A TDX v4 quote: header || TD report body || LE32 length || signature data, where the signature
/// data is ECDSA-P256-SHA256(header || body) as r||s, the attestation key x||y, then certification
/// data type 0 (LE16) with size 0 (LE32). `fields` maps body field names to Buffers of their exact
/// size (missing ones are zeros); `vendorId` defaults to the simulation marker.
export function buildQuote({ privateKey, fields, vendorId = SIMULATED_VENDOR_ID }) {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt16LE(QUOTE_VERSION, 0);
  header.writeUInt16LE(ATTESTATION_KEY_TYPE_ECDSA_P256, 2);
  header.writeUInt32LE(TEE_TYPE_TDX, 4);
  // 8..11: two reserved 16-bit fields, zero.
  vendorId.copy(header, 12, 0, 16);
  // 28..47: user data, zero.
  const body = Buffer.alloc(BODY_BYTES);
  let at = 0;
  for (const [name, len] of BODY_FIELDS) {
    const value = fields[name];
    if (value !== undefined) {
      if (value.length !== len) throw new Error(`quote field ${name} must be ${len} bytes`);
      value.copy(body, at);
    }
    at += len;
  }
  const signed = Buffer.concat([header, body]);
  const signature = sign('sha256', signed, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  const certification = Buffer.alloc(6); // type 0 (LE16), size 0 (LE32), no data
  const sigData = Buffer.concat([signature, publicKeyRaw(privateKey), certification]);
  const sigLen = Buffer.alloc(4);
  sigLen.writeUInt32LE(sigData.length);
  return Buffer.concat([signed, sigLen, sigData]);
}
