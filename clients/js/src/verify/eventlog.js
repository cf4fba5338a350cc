// The RTMR3 event log (evidence/README.md, "The guest agent's API"; the spec's rule 1): event digests
// in dstack's two formats and the replay.
import { createHash } from 'node:crypto';

/// The event type of runtime events (IMR 3).
export const RUNTIME_EVENT_TYPE = 0x08000001;
/// The event after which names are no longer trusted.
export const SYSTEM_READY = 'system-ready';

const sha384 = (...parts) => {
  const h = createHash('sha384');
  for (const p of parts) h.update(p);
  return h.digest();
};

/// "V1" (the spec's rule 1): SHA-384 over the event type as 4 little-endian bytes, ':', the name, ':',
/// the payload bytes.
export function digestV1(eventType, name, payload) {
  const type = Buffer.alloc(4);
  type.writeUInt32LE(eventType >>> 0);
  return sha384(type, ':', Buffer.from(name, 'utf8'), ':', toBytes(payload));
}

/// "V2" (dstack's newer format): SHA-384 of the JCS (RFC 8785) JSON {name, payload: <lower-case hex>, type}.
export function digestV2(eventType, name, payload) {
  return sha384(Buffer.from(canonicalJson({ name, payload: toBytes(payload).toString('hex'), type: eventType >>> 0 }), 'utf8'));
}

/// RFC 8785 (JCS) for JSON values: keys sorted by UTF-16 code units, ECMAScript serialization of
/// strings and numbers (JSON.stringify implements both), no whitespace.
export function canonicalJson(value) {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JCS: a number must be finite');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  throw new TypeError(`JCS: cannot serialize a ${typeof value}`);
}

/// Bytes from a Buffer/Uint8Array or a hex string (with or without 0x).
export function toBytes(x) {
  if (x === undefined || x === null) return Buffer.alloc(0);
  if (Buffer.isBuffer(x)) return x;
  if (x instanceof Uint8Array) return Buffer.from(x);
  if (typeof x === 'string') return hexBytes(x, 'hex');
  throw new TypeError('expected bytes or a hex string');
}

/// Strict hex (even length, hex digits, optional 0x) to bytes; throws with `what` in the message.
export function hexBytes(text, what = 'value') {
  if (typeof text !== 'string') throw new TypeError(`${what} is not a hex string`);
  const h = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text;
  if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) throw new TypeError(`${what} is not hex`);
  return Buffer.from(h, 'hex');
}

/// The event log as an array: the agent gives it as a JSON string; an already decoded array is accepted.
export function parseEventLog(eventLog) {
  const events = typeof eventLog === 'string' ? JSON.parse(eventLog) : eventLog;
  if (!Array.isArray(events)) throw new TypeError('the event log is not a JSON array');
  return events;
}

/// Replays the IMR-3 events of `events` (the event log array) into RTMR3 and collects the events
/// trusted by name. Returns {rtmr3 (Buffer, 48 bytes), named (Map name -> payload hex, only runtime
/// events before system-ready), systemReady (bool), formats ([{index, name, format: 'v1'|'v2'|'given'}])}.
/// Throws (a message naming the event) when an event is malformed, a given runtime digest is neither
/// V1 nor V2, or a runtime event name appears twice.
/// `emptyDigest` chooses the format recomputed for an empty digest: 'v1' (the spec's) or 'v2'.
export function replayRtmr3(events, { emptyDigest = 'v1' } = {}) {
  let rtmr3 = Buffer.alloc(48);
  const named = new Map();
  const seen = new Set();
  const formats = [];
  let systemReady = false;
  events.forEach((ev, i) => {
    if (ev === null || typeof ev !== 'object') throw new TypeError(`event ${i} is not an object`);
    if (Number(ev.imr) !== 3) return;
    const type = Number(ev.event_type);
    if (!Number.isInteger(type) || type < 0 || type > 0xffffffff) throw new TypeError(`event ${i}: bad event_type`);
    const name = typeof ev.event === 'string' ? ev.event : '';
    const label = `event ${i} (${JSON.stringify(name)})`;
    const given = hexBytes(ev.digest ?? '', `${label} digest`);
    if (given.length !== 0 && given.length !== 48) throw new TypeError(`${label}: the digest is not 48 bytes`);
    let digest;
    if (type === RUNTIME_EVENT_TYPE) {
      const payload = hexBytes(ev.event_payload ?? '', `${label} payload`);
      const v1 = digestV1(type, name, payload);
      const v2 = digestV2(type, name, payload);
      if (given.length === 0) {
        digest = emptyDigest === 'v2' ? v2 : v1;
        formats.push({ index: i, name, format: emptyDigest });
      } else if (given.equals(v1)) {
        digest = v1;
        formats.push({ index: i, name, format: 'v1' });
      } else if (given.equals(v2)) {
        digest = v2;
        formats.push({ index: i, name, format: 'v2' });
      } else {
        throw new Error(`${label}: the digest is neither the V1 nor the V2 digest of its type, name and payload`);
      }
      if (seen.has(name)) throw new Error(`${label}: the event name appears twice`);
      seen.add(name);
      if (!systemReady) {
        if (name === SYSTEM_READY) systemReady = true;
        else named.set(name, payload.toString('hex'));
      }
    } else {
      // Not a runtime event: its digest cannot be recomputed here; it counts in the replay as given
      // and is never trusted by name.
      if (given.length === 0) throw new Error(`${label}: an empty digest on an event that is not a runtime event`);
      digest = given;
      formats.push({ index: i, name, format: 'given' });
    }
    rtmr3 = createHash('sha384').update(rtmr3).update(digest).digest();
  });
  return { rtmr3, named, systemReady, formats };
}
