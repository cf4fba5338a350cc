// verifyDeployment: the spec's verification rules 1-8 ("Attestation and evidence") against a running
// Sigil deployment. See clients/js/README.md, "Verifying a deployment", and evidence/README.md.
import { createHash, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { parseEventLog, replayRtmr3, hexBytes } from './eventlog.js';
import { parseQuote, verifyQuoteSignature, tdDebug, DEFAULT_TCB_STATUSES } from './quote.js';
import {
  deploymentClient, getOk, getJson, liveCertificate, resolveCaaSet, allowedComposeHash, sha256Hex,
} from './net.js';

export { digestV1, digestV2, canonicalJson, replayRtmr3, parseEventLog, RUNTIME_EVENT_TYPE } from './eventlog.js';
export {
  parseQuote, attestationSignatureValid, verifyQuoteSignature, tdDebug, judgeTcbStatus, SIMULATED_VENDOR_ID, DEFAULT_PCCS_URL,
  DEFAULT_TCB_STATUSES,
} from './quote.js';
export { ALLOWED_COMPOSE_HASHES_SELECTOR } from './net.js';

export const RULES = {
  1: 'the quotes are genuine (Intel chain, allowed TCB), not debug, fresh, with the expected OS measurements; the event log replays to RTMR3 and names the expected app id and the compose hash',
  2: 'compose_hash is the SHA-256 of tcb_info.app_compose',
  3: 'every image in the compose file is pinned by an @sha256: digest',
  4: 'images carry their keyless CI signatures',
  5: 'the evidence files match sha256sum.txt, whose hash is the report_data of quote.json\'s genuine quote',
  6: 'the live TLS certificate is the attested one',
  7: 'CAA restricts issuance to one CA, DNS-01/TLS-ALPN-01, and the attested ACME account',
  8: 'the governance contract allows the compose hash',
};

/// The label of a nonce quote's report_data (DESIGN.md section 6; evidence/agent/report_data.h).
export const NONCE_REPORT_DATA_LABEL = 'sigil/attestation-nonce/v1';
/// The OS measurements a deployment is compared with (values the caller gives, never the deployment's).
export const MEASUREMENTS = Object.freeze(['mrtd', 'rtmr0', 'rtmr1', 'rtmr2']);

const PASS = 'pass';
const FAIL = 'fail';
const NOT_CHECKED = 'not_checked';

/// Folds the results of a rule's checks: any fail fails, else any not_checked is not checked, else pass.
function fold(rule, checks) {
  const failed = checks.filter((c) => c.status === FAIL);
  const unchecked = checks.filter((c) => c.status === NOT_CHECKED);
  const status = failed.length ? FAIL : unchecked.length ? NOT_CHECKED : PASS;
  const reasons = (failed.length ? failed : unchecked.length ? unchecked : checks).map((c) => c.reason).filter(Boolean);
  return { rule, status, reason: reasons.join('; '), checks };
}

const pass = (reason) => ({ status: PASS, reason });
const fail = (reason) => ({ status: FAIL, reason });
const notChecked = (reason) => ({ status: NOT_CHECKED, reason });

const lowerHex = (text, what, bytes) => {
  const b = hexBytes(String(text ?? ''), what);
  if (bytes !== undefined && b.length !== bytes) throw new Error(`${what} is ${b.length} bytes, not ${bytes}`);
  return b.toString('hex');
};

/// Checks a GetQuote answer ({quote, event_log, ...}): the quote's signature (simulated or through
/// @phala/dcap-qvl, with its TCB policy), the TD debug attribute, its report_data (==
/// expectedReportData, hex of 64 bytes), the OS measurements against `expect` (those it holds), the
/// event log replayed to its RTMR3, the trusted app-id event against expect.appId and the
/// compose-hash event against /info's compose_hash. `what` names it in reasons.
/// Returns [checks], and the parsed quote as checks.quote.
export async function checkQuoteAnswer(answer, { what, expectedReportData, reportDataMeaning, info, expect = {}, options }) {
  const checks = [];
  let quote;
  try {
    if (!answer || typeof answer !== 'object') throw new Error('the answer is not a JSON object');
    quote = parseQuote(String(answer.quote ?? ''));
  } catch (e) {
    checks.push(fail(`${what}: ${e.message}`));
    return checks;
  }
  checks.quote = quote;
  const sig = await verifyQuoteSignature(quote, options);
  checks.push({ ...sig, reason: `${what}: ${sig.reason}` });
  checks.push(tdDebug(quote)
    ? fail(`${what}: the TD runs with the DEBUG attribute (td_attributes ${quote.body.td_attributes.toString('hex')}): the host can read and change it`)
    : pass(`${what}: not a debug TD`));
  const compared = MEASUREMENTS.filter((m) => expect[m]);
  const wrong = compared.filter((m) => quote.body[m].toString('hex') !== expect[m]);
  if (wrong.length) {
    checks.push(fail(`${what}: ${wrong.map((m) => `${m} is ${quote.body[m].toString('hex')}, expected ${expect[m]}`).join('; ')}`));
  } else if (compared.length) {
    checks.push(pass(`${what}: ${compared.join(', ')} are the expected values`));
  }

  const rd = quote.body.report_data.toString('hex');
  if (expectedReportData !== undefined) {
    checks.push(rd === expectedReportData
      ? pass(`${what}: report_data is ${reportDataMeaning}`)
      : fail(`${what}: report_data is not ${reportDataMeaning} (quote has ${rd}, expected ${expectedReportData})`));
  }

  let replay;
  try {
    const events = parseEventLog(answer.event_log);
    replay = replayRtmr3(events);
    if (!replay.rtmr3.equals(quote.body.rtmr3)) {
      // An empty digest may stand for a V2 digest on agents that log V2.
      const v2 = replayRtmr3(events, { emptyDigest: 'v2' });
      if (v2.rtmr3.equals(quote.body.rtmr3)) replay = v2;
    }
  } catch (e) {
    checks.push(fail(`${what}: event log refused: ${e.message}`));
    return checks;
  }
  if (!replay.rtmr3.equals(quote.body.rtmr3)) {
    checks.push(fail(`${what}: the event log replays to RTMR3 ${replay.rtmr3.toString('hex')}, the quote's RTMR3 is ${quote.body.rtmr3.toString('hex')}`));
    return checks;
  }
  checks.push(pass(`${what}: the event log replays to the quote's RTMR3`));
  if (!replay.systemReady) {
    checks.push(fail(`${what}: the event log has no system-ready event, so no event can be trusted by name`));
    return checks;
  }
  // The compose hash is the deployment's to name (rules 2, 3 and 8 judge it); the app id is the
  // caller's expectation, never /info's.
  const named = [['compose-hash', () => lowerHex(info?.compose_hash, '/info compose_hash', 32), "/info's compose_hash"]];
  if (expect.appId) named.push(['app-id', () => expect.appId, 'the expected app id']);
  for (const [event, expectedOf, meaning] of named) {
    const payload = replay.named.get(event);
    let expected;
    try {
      expected = expectedOf();
    } catch (e) {
      checks.push(fail(`${what}: ${e.message}`));
      continue;
    }
    if (payload === undefined) checks.push(fail(`${what}: no ${event} event before system-ready`));
    else if (payload !== expected) checks.push(fail(`${what}: the ${event} event's payload ${payload} is not ${meaning} ${expected}`));
    else checks.push(pass(`${what}: the ${event} event is ${meaning} ${expected}`));
  }
  return checks;
}

/// The hex report_data of a quote bound to `nonce` (hex, 1 to 64 bytes): SHA-512(label || nonce), so
/// no nonce can yield the evidence quote's SHA-256(sha256sum.txt) || zeros (DESIGN.md section 6).
export function nonceReportData(nonceHex) {
  return createHash('sha512').update(NONCE_REPORT_DATA_LABEL).update(hexBytes(nonceHex, 'nonce')).digest('hex');
}

/// The caller's expectations in one form: {appId, governance, mrtd, rtmr0, rtmr1, rtmr2} as lower-case
/// hex without 0x (app id and governance: 20 bytes; measurements: 48), each absent when not given.
/// Throws a TypeError naming the field for a malformed value.
export function normalizeExpectations({ appId, governance, mrtd, rtmr0, rtmr1, rtmr2 } = {}) {
  const out = {};
  const take = (key, value, bytes, what) => {
    if (value === undefined || value === null || value === '') return;
    out[key] = lowerHex(value, what, bytes);
  };
  take('appId', appId, 20, 'the expected app id');
  take('governance', governance, 20, 'the governance address');
  for (const [key, value] of Object.entries({ mrtd, rtmr0, rtmr1, rtmr2 })) take(key, value, 48, `the expected ${key}`);
  return out;
}

/// Rule 3's check of a docker compose file: [] when every service's image is pinned by
/// @sha256:<64 hex>, else the reasons.
export function unpinnedImages(composeYaml) {
  const doc = parseYaml(composeYaml, { maxAliasCount: 100 });
  if (!doc || typeof doc !== 'object' || !doc.services || typeof doc.services !== 'object') {
    return ['the compose file has no services'];
  }
  const problems = [];
  const services = Object.entries(doc.services);
  if (services.length === 0) problems.push('the compose file has no services');
  for (const [name, svc] of services) {
    const image = svc?.image;
    if (typeof image !== 'string' || image === '') problems.push(`service ${name} has no image (a build is not pinned)`);
    else if (!/@sha256:[0-9a-f]{64}$/.test(image)) problems.push(`service ${name}: image ${image} is not pinned by @sha256:<digest>`);
  }
  return problems;
}

/// Parses CAA records (as node's resolveCaa gives them) and checks them against the ACME account
/// URI. Returns {status, reason}.
export function judgeCaa(records, accountUri) {
  const issuing = records.filter((r) => typeof r.issue === 'string' || typeof r.issuewild === 'string')
    .map((r) => parseCaaValue(r.issue ?? r.issuewild, r.issue !== undefined ? 'issue' : 'issuewild'));
  const cas = new Set(issuing.map((r) => r.ca).filter(Boolean));
  if (issuing.length === 0) return fail('no CAA issue record: any CA may issue');
  if (cas.size !== 1) return fail(`CAA names ${cas.size} certificate authorities (${[...cas].join(', ') || 'none'}), not exactly one`);
  const accounts = new Set();
  for (const r of issuing) {
    if (!r.ca) continue; // ";" forbids issuance: stricter, fine
    const methods = r.params.validationmethods;
    if (!methods) return fail(`CAA ${r.tag} "${r.value}" has no validationmethods: any validation method is allowed`);
    const bad = methods.split(',').map((m) => m.trim()).filter((m) => m !== 'dns-01' && m !== 'tls-alpn-01');
    if (bad.length) return fail(`CAA ${r.tag} "${r.value}" allows validation methods other than dns-01 and tls-alpn-01: ${bad.join(', ')}`);
    if (!r.params.accounturi) return fail(`CAA ${r.tag} "${r.value}" has no accounturi: any account at ${r.ca} may issue`);
    accounts.add(r.params.accounturi);
  }
  if (!accounts.has(accountUri)) {
    return fail(`acme-account.json's account ${accountUri} is not among the CAA accounturi values (${[...accounts].join(', ')})`);
  }
  return pass(`CAA: one CA (${[...cas][0]}), validation ${[...new Set(issuing.map((r) => r.params.validationmethods))].join(' / ')}, account ${accountUri}`);
}

function parseCaaValue(value, tag) {
  const [ca, ...rest] = value.split(';');
  const params = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i > 0) params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim();
  }
  return { tag, value, ca: ca.trim().toLowerCase(), params };
}

/// The file names linked from a directory listing (nginx autoindex HTML or JSON).
export function listingNames(body) {
  const text = body.toString('utf8');
  try {
    const json = JSON.parse(text);
    if (Array.isArray(json)) return json.map((e) => (typeof e === 'string' ? e : e?.name)).filter((n) => typeof n === 'string');
  } catch { /* HTML */ }
  const names = [];
  for (const m of text.matchAll(/href\s*=\s*"([^"]+)"/gi)) {
    let n = m[1];
    try { n = decodeURIComponent(n); } catch { /* keep as is */ }
    if (!n.includes('/') && n !== '..') names.push(n);
  }
  return names;
}

/// Lines of a sha256sum file: [{hash, name}]; throws on a malformed line.
export function parseSha256sum(text) {
  const out = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.replace(/\r$/, ''));
    if (!m) throw new Error(`sha256sum.txt line ${i + 1} is not "<sha256>  <file>"`);
    out.push({ hash: m[1].toLowerCase(), name: m[2] });
  }
  return out;
}

function pemFirstCertDer(pem) {
  const m = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(pem);
  if (!m) throw new Error('no PEM certificate in it');
  return Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
}

function decodeTcbInfo(info) {
  const t = info?.tcb_info;
  if (typeof t === 'string') return JSON.parse(t);
  if (t && typeof t === 'object') return t;
  throw new Error('/info has no tcb_info');
}

/// Verifies the deployment at `url` (https://host[:port]) against rules 1-8, failing closed.
/// options: {appId (the expected app id, 0x + 20 bytes), governance (0x address; default appId),
/// mrtd, rtmr0, rtmr1, rtmr2 (the expected OS measurements, hex of 48 bytes): the caller's values,
/// never read from the deployment; allowSimulated; allowUnchecked (rule numbers whose "not checked"
/// is accepted); allowedTcbStatuses (default ['UpToDate']); collateral (object, @phala/dcap-qvl's
/// Collateral) or pccsUrl (default DEFAULT_PCCS_URL); governanceRpc, dnsServer ("host:port"),
/// domain, ca (PEM), insecure, timeoutMs, now (seconds, for collateral validity)}.
/// Returns {url, ok, simulated, summary, rules: [{rule, title, status, reason, checks}]}: ok only
/// when every rule passed or is "not checked" and named in allowUnchecked.
export async function verifyDeployment(url, options = {}) {
  const base = new URL(url);
  if (base.protocol !== 'https:') throw new TypeError(`${url}: not an https:// URL`);
  const expect = normalizeExpectations(options);
  const allowUnchecked = new Set((options.allowUnchecked ?? []).map(Number));
  const timeoutMs = options.timeoutMs ?? 15000;
  const client = deploymentClient(base, { ca: options.ca, insecure: options.insecure, timeoutMs });
  const quoteOptions = {
    allowSimulated: !!options.allowSimulated, collateral: options.collateral, pccsUrl: options.pccsUrl, now: options.now,
    allowedTcbStatuses: options.allowedTcbStatuses ?? DEFAULT_TCB_STATUSES,
    cache: {}, // collateral fetched from the PCCS once serves every quote of this run
  };
  const results = {};
  let simulated = false;
  let receiptKey = null;
  let receiptKeyError = null;
  try {
    // --- what every rule reads
    let info = null;
    let infoError = null;
    try {
      info = await getJson(client, '/info');
      if (!info || typeof info !== 'object') throw new Error('GET /info: not a JSON object');
    } catch (e) {
      infoError = e.message;
    }
    let tcbInfo = null;
    let tcbError = infoError;
    if (info) {
      try { tcbInfo = decodeTcbInfo(info); } catch (e) { tcbError = `/info tcb_info: ${e.message}`; }
    }
    let composeHash = null;
    let appId = null;
    if (info) {
      try { composeHash = lowerHex(info.compose_hash, '/info compose_hash', 32); } catch (e) { infoError = e.message; }
      try { appId = lowerHex(info.app_id, '/info app_id', 20); } catch (e) { infoError ??= e.message; }
    }

    // --- rule 1: /attestation (report_data all zeros) and /attestation?nonce= (the nonce's labelled hash)
    {
      const checks = [];
      const missing = [!expect.appId && 'app id (--app-id)', ...MEASUREMENTS.filter((m) => !expect[m]).map((m) => `${m} (--${m})`)].filter(Boolean);
      if (missing.length) {
        checks.push(fail(`no expected ${missing.join(', ')}: give them or pin them in --expect FILE; they are never taken from the deployment being checked`));
      }
      if (!info) {
        checks.push(fail(infoError));
      } else {
        if (expect.appId && appId) {
          checks.push(appId === expect.appId
            ? pass(`/info's app_id is the expected 0x${expect.appId}`)
            : fail(`/info's app_id 0x${appId} is not the expected 0x${expect.appId}`));
        }
        try {
          const answer = await getJson(client, '/attestation');
          const c = await checkQuoteAnswer(answer, {
            what: '/attestation', expectedReportData: '00'.repeat(64), reportDataMeaning: 'all zeros', info, expect, options: quoteOptions,
          });
          if (c.quote?.simulated) simulated = true;
          checks.push(...c);
        } catch (e) {
          checks.push(fail(e.message));
        }
        const nonce = randomBytes(32).toString('hex');
        try {
          const answer = await getJson(client, `/attestation?nonce=${nonce}`);
          const c = await checkQuoteAnswer(answer, {
            what: '/attestation?nonce', expectedReportData: nonceReportData(nonce), reportDataMeaning: `SHA-512("${NONCE_REPORT_DATA_LABEL}" || our fresh nonce)`, info, expect, options: quoteOptions,
          });
          if (c.quote?.simulated) simulated = true;
          checks.push(...c);
        } catch (e) {
          checks.push(fail(e.message));
        }
      }
      results[1] = fold(1, dedupeQuoteRefusal(checks));
    }

    // --- rule 2: compose_hash == sha256(app_compose)
    let appCompose = null;
    {
      if (!info || tcbError) results[2] = fold(2, [fail(tcbError ?? infoError)]);
      else if (typeof tcbInfo.app_compose !== 'string') results[2] = fold(2, [fail('tcb_info.app_compose is not a string')]);
      else if (!composeHash) results[2] = fold(2, [fail(infoError)]);
      else {
        appCompose = tcbInfo.app_compose;
        const h = sha256Hex(Buffer.from(appCompose, 'utf8'));
        results[2] = fold(2, [h === composeHash
          ? pass('compose_hash is the SHA-256 of tcb_info.app_compose')
          : fail(`SHA-256 of tcb_info.app_compose is ${h}, /info's compose_hash is ${composeHash}`)]);
      }
    }

    // --- rule 3: images pinned by digest
    {
      let check;
      if (appCompose === null) check = fail(`no app_compose to read (${results[2].reason})`);
      else {
        try {
          const compose = JSON.parse(appCompose);
          if (typeof compose?.docker_compose_file !== 'string') check = fail('app_compose has no docker_compose_file string');
          else {
            const problems = unpinnedImages(compose.docker_compose_file);
            check = problems.length ? fail(problems.join('; ')) : pass('every image is pinned by @sha256');
          }
        } catch (e) {
          check = fail(`app_compose: ${e.message}`);
        }
      }
      results[3] = fold(3, [check]);
    }

    // --- rule 4: signatures (cosign)
    results[4] = fold(4, [notChecked('keyless CI image signatures need cosign and the Sigil CI identity; this verifier does not check them (run cosign verify on each image digest of rule 3)')]);

    // --- rule 5 (and what 6 and 7 read): the evidence directory
    let domain = options.domain ?? null;
    let certDer = null;
    let certError = null;
    let accountUri = null;
    let accountError = null;
    {
      const checks = [];
      let names = null;
      try {
        names = listingNames((await getOk(client, '/evidences/')).body);
      } catch (e) {
        if (!domain) checks.push(fail(`${e.message} (give --domain to skip the listing)`));
      }
      if (!domain && names) {
        const certs = names.map((n) => /^cert-(.+)\.pem$/.exec(n)?.[1]).filter(Boolean);
        if (certs.length === 1) domain = certs[0];
        else if (certs.includes(base.hostname)) domain = base.hostname;
        else checks.push(fail(certs.length === 0 ? 'the /evidences/ listing has no cert-<domain>.pem' : `the /evidences/ listing has several certificates (${certs.join(', ')}): give --domain`));
      }
      const certName = domain ? `cert-${domain}.pem` : null;
      let sums = null;
      let sumsBytes = null;
      try {
        sumsBytes = (await getOk(client, '/evidences/sha256sum.txt')).body;
        sums = parseSha256sum(sumsBytes.toString('utf8'));
      } catch (e) {
        checks.push(fail(e.message));
      }
      const served = new Map();
      if (sums) {
        const bad = [];
        for (const { hash, name } of sums) {
          if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith('.')) {
            bad.push(`${name}: not a plain file name`);
            continue;
          }
          try {
            const body = (await getOk(client, `/evidences/${encodeURIComponent(name)}`)).body;
            served.set(name, body);
            const h = sha256Hex(body);
            if (h !== hash) bad.push(`${name}: served file has SHA-256 ${h}, sha256sum.txt says ${hash}`);
          } catch (e) {
            bad.push(e.message);
          }
        }
        for (const need of [certName, 'acme-account.json']) {
          if (need && !sums.some((s) => s.name === need)) bad.push(`sha256sum.txt does not cover ${need}`);
        }
        checks.push(bad.length ? fail(bad.join('; ')) : pass(`the ${sums.length} files match sha256sum.txt`));
      }
      try {
        const quoteJson = await getJson(client, '/evidences/quote.json');
        if (sumsBytes) {
          const expected = sha256Hex(sumsBytes) + '00'.repeat(32);
          let field;
          try { field = lowerHex(quoteJson?.report_data, 'quote.json report_data', 64); } catch (e) { field = null; checks.push(fail(e.message)); }
          if (field !== null) {
            checks.push(field === expected
              ? pass('quote.json report_data is SHA-256(sha256sum.txt) padded')
              : fail(`quote.json report_data ${field.slice(0, 64)}... is not SHA-256 of the served sha256sum.txt (${expected.slice(0, 64)}): the files changed after the quote`));
          }
          const c = await checkQuoteAnswer(quoteJson, {
            what: 'quote.json', expectedReportData: expected, reportDataMeaning: 'SHA-256(sha256sum.txt) zero padded', info, expect, options: quoteOptions,
          });
          if (c.quote?.simulated) simulated = true;
          checks.push(...c);
        }
      } catch (e) {
        checks.push(fail(e.message));
      }
      // Rule 6 and 7 read the files the checksums cover (the bytes just hashed).
      if (certName) {
        try {
          const pem = served.get(certName) ?? (await getOk(client, `/evidences/${encodeURIComponent(certName)}`)).body;
          certDer = pemFirstCertDer(pem.toString('utf8'));
        } catch (e) {
          certError = `${certName}: ${e.message}`;
        }
      } else {
        certError = 'no attested certificate (no domain)';
      }
      try {
        const body = served.get('acme-account.json') ?? (await getOk(client, '/evidences/acme-account.json')).body;
        const acct = JSON.parse(body.toString('utf8'));
        accountUri = acct?.uri ?? acct?.account_uri;
        if (typeof accountUri !== 'string' || accountUri === '') throw new Error('no uri or account_uri');
      } catch (e) {
        accountError = `acme-account.json: ${e.message}`;
      }
      // The receipt key's address (docs/receipts.md): trusted only as a file sha256sum.txt covers.
      if (sums?.some((x) => x.name === 'receipt-key.json') && served.has('receipt-key.json')) {
        try {
          const key = JSON.parse(served.get('receipt-key.json').toString('utf8'));
          if (typeof key?.address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(key.address)) throw new Error('no address');
          receiptKey = key.address.toLowerCase();
        } catch (e) {
          receiptKeyError = `receipt-key.json: ${e.message}`;
        }
      } else {
        receiptKeyError = 'sha256sum.txt does not cover receipt-key.json: this deployment publishes no receipt key';
      }
      results[5] = fold(5, dedupeQuoteRefusal(checks));
    }

    // --- rule 6: the live certificate is the attested one
    {
      const checks = [];
      if (!certDer) checks.push(fail(certError));
      else {
        const attested = sha256Hex(certDer);
        try {
          const live = await liveCertificate(base.hostname, Number(base.port || 443), {
            servername: isIP(base.hostname.replace(/^\[|\]$/g, '')) ? (domain ?? undefined) : base.hostname, timeoutMs,
          });
          checks.push(live.sha256 === attested
            ? pass(`the live certificate is the attested cert-${domain}.pem (SHA-256 ${attested})`)
            : fail(`the live certificate's SHA-256 ${live.sha256} is not the attested cert-${domain}.pem's ${attested}`));
        } catch (e) {
          checks.push(fail(`TLS handshake: ${e.message}`));
        }
        const others = [...client.seenCerts].filter((h) => h !== attested);
        if (others.length) checks.push(fail(`the connections that fetched the evidence presented another certificate (SHA-256 ${others.join(', ')})`));
      }
      results[6] = fold(6, checks);
    }

    // --- rule 7: CAA
    {
      let check;
      if (!options.dnsServer) check = notChecked('no DNS server to ask (give --dns-server host:port)');
      else if (!domain) check = fail(certError ?? 'no domain');
      else if (accountError) check = fail(accountError);
      else {
        try {
          const set = await resolveCaaSet(domain, options.dnsServer, { timeoutMs: Math.min(timeoutMs, 5000) });
          if (set.records.length === 0) check = fail(`no CAA record for ${domain} (looked at ${set.chain.join(', ')})`);
          else {
            check = judgeCaa(set.records, accountUri);
            if (set.name !== domain) check.reason += ` (CAA of ${set.name}, reached from ${domain})`;
          }
        } catch (e) {
          check = fail(e.message);
        }
      }
      results[7] = fold(7, [check]);
    }

    // --- rule 8: governance
    {
      let check;
      // The governance contract is the caller's (its address is the expected app id unless named),
      // never the deployment's own word.
      const governance = expect.governance ?? expect.appId;
      if (!options.governanceRpc) check = notChecked('no chain to ask (give --governance-rpc URL)');
      else if (!governance) check = fail('no expected app id or governance address (give --app-id or --governance, or pin them in --expect FILE)');
      else if (!composeHash) check = fail(infoError ?? 'no compose_hash');
      else {
        const address = `0x${governance}`;
        try {
          const allowed = await allowedComposeHash(options.governanceRpc, address, composeHash, { timeoutMs });
          check = allowed
            ? pass(`${address} allows compose hash 0x${composeHash}`)
            : fail(`the governance contract ${address} does not allow compose hash 0x${composeHash}`);
        } catch (e) {
          check = fail(`governance contract ${address}: ${e.message}`);
        }
      }
      results[8] = fold(8, [check]);
    }
  } finally {
    client.close();
  }
  const rules = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ rule: n, title: RULES[n], ...results[n] }));
  const accepted = (r) => r.status === PASS || (r.status === NOT_CHECKED && allowUnchecked.has(r.rule));
  const ok = rules.every(accepted);
  // receiptKey: the attested receipt key's address (null with receiptKeyError when the set has none);
  // appId: the expected app id rule 1 compared /info's with. Both feed checkReceipt (../receipt.js).
  return { url: base.origin, ok, simulated, summary: summarize(rules, { ok, simulated, allowUnchecked }), rules,
    receiptKey, receiptKeyError, appId: expect.appId ? `0x${expect.appId}` : null };
}

/// One line on the outcome: OK or FAIL, SIMULATED when a simulated quote was accepted, and which
/// rules failed or were not checked (allowed or not).
function summarize(rules, { ok, simulated, allowUnchecked }) {
  const list = (rs) => rs.map((r) => r.rule).join(', ');
  const failed = rules.filter((r) => r.status === FAIL);
  const unchecked = rules.filter((r) => r.status === NOT_CHECKED);
  const parts = [`${rules.filter((r) => r.status === PASS).length} of ${rules.length} rules passed`];
  if (failed.length) parts.push(`failed: ${list(failed)}`);
  const allowed = unchecked.filter((r) => allowUnchecked.has(r.rule));
  const refused = unchecked.filter((r) => !allowUnchecked.has(r.rule));
  if (refused.length) parts.push(`not checked: ${list(refused)} (not allowed: give --allow-unchecked ${refused.map((r) => r.rule).join(',')} to accept)`);
  if (allowed.length) parts.push(`not checked: ${list(allowed)} (allowed)`);
  const head = `${ok ? 'OK' : 'FAIL'}${simulated ? ' SIMULATED' : ''}`;
  const warning = simulated ? '; SIMULATED: quotes from sigil-tee-sim (no TEE, no Intel chain, no TCB) vouch for nothing' : '';
  return `${head}: ${parts.join('; ')}${warning}`;
}

// Two quotes refused for being simulated say the same thing: keep one line.
function dedupeQuoteRefusal(checks) {
  const seen = new Set();
  return checks.filter((c) => {
    if (c.status !== FAIL || !/refused without --allow-simulated/.test(c.reason)) return true;
    const key = 'simulated';
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
