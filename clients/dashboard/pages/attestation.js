// Attestation page: the interface specification's verification rules, checked in this browser where a
// page can (SHA-256 with WebCrypto over what the deployment serves, the governance contract through
// the wallet), and named with the reason where it cannot. sigil-verify (clients/js/src/verify) checks
// all eight outside the browser; the checks here follow its rules with the browser's own tools.
import { ethers } from 'ethers';
import { session } from '../session.js';
import { $, el, fill, busy, say } from '../ui.js';

const PASS = 'pass';
const FAIL = 'fail';
const NOT_CHECKED = 'not checked';

const TITLES = {
  1: 'the quotes are genuine, not debug, and the event log replays to RTMR3',
  2: 'compose_hash is the SHA-256 of tcb_info.app_compose',
  3: 'every image in the compose file is pinned by an @sha256: digest',
  4: 'images carry their keyless CI signatures',
  5: 'the evidence files match sha256sum.txt, whose SHA-256 is quote.json\'s report_data',
  6: 'the live TLS certificate is the attested one',
  7: 'CAA restricts issuance to one CA and the attested ACME account',
  8: 'the governance contract allows the compose hash',
};

// Why a page cannot check a rule itself.
const OUT_OF_REACH = {
  1: 'verifying a TDX quote needs Intel\'s collateral and the quote verification library: run sigil-verify',
  4: 'image signatures live in a transparency log outside this origin: run sigil-verify',
  6: 'page scripts never see the bytes of the TLS certificate: run sigil-verify',
  7: 'a browser cannot read DNS CAA records: run sigil-verify',
};

async function sha256Hex(data) {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  return ethers.hexlify(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))).slice(2);
}

async function get(path) {
  const res = await fetch(path, { cache: 'no-store' });
  if (!res.ok) {
    let code = '';
    try { code = (await res.json())?.error?.code ?? ''; } catch { /* not JSON */ }
    throw new Error(`${path} answered ${res.status}${code ? ` ${code}` : ''}`);
  }
  return res;
}

// yaml (some sixty modules) is loaded when a check first needs it, not with every page.
async function unpinned(composeYaml) {
  const { parse: parseYaml } = await import('yaml');
  const doc = parseYaml(composeYaml, { maxAliasCount: 100 });
  const services = Object.entries(doc?.services ?? {});
  if (services.length === 0) return ['the compose file has no services'];
  return services.flatMap(([name, svc]) => (typeof svc?.image === 'string' && /@sha256:[0-9a-f]{64}$/.test(svc.image)
    ? [] : [`service ${name}: image ${svc?.image ?? '(none)'} is not pinned by @sha256:<digest>`]));
}

async function rulesFromInfo(results) {
  let info;
  try {
    info = await (await get('/info')).json();
  } catch (e) {
    for (const r of [2, 3, 8]) results[r] = [NOT_CHECKED, `${e.message}: this server has no TEE to describe`];
    return;
  }
  const compose = info?.tcb_info?.app_compose;
  if (typeof compose !== 'string') {
    for (const r of [2, 3, 8]) results[r] = [FAIL, '/info has no tcb_info.app_compose string'];
    return;
  }
  const hash = await sha256Hex(compose);
  const claimed = String(info.compose_hash ?? '').replace(/^0x/, '').toLowerCase();
  results[2] = hash === claimed ? [PASS, `SHA-256(app_compose) = ${hash}`] : [FAIL, `SHA-256(app_compose) is ${hash}, compose_hash says ${claimed}`];
  try {
    const problems = await unpinned(JSON.parse(compose).docker_compose_file);
    results[3] = problems.length ? [FAIL, problems.join('; ')] : [PASS, 'every service\'s image is pinned by @sha256'];
  } catch (e) {
    results[3] = [FAIL, `the compose file does not parse: ${e.message}`];
  }
  const provider = await chainReader();
  if (typeof provider === 'string') {
    results[8] = [NOT_CHECKED, provider];
  } else {
    const gov = new ethers.Contract(ethers.getAddress(`0x${String(info.app_id).replace(/^0x/, '')}`),
      ['function allowedComposeHashes(bytes32) view returns (bool)'], provider);
    const allowed = await gov.allowedComposeHashes(`0x${claimed}`);
    results[8] = allowed ? [PASS, `governance ${info.app_id} allows 0x${claimed}`] : [FAIL, `governance ${info.app_id} does not allow 0x${claimed}`];
  }
}

// A provider on the service's chain for rule 8's read: the signed-in wallet's, else window.ethereum's
// (a read needs no account, so nothing is asked of the user); a string says why there is none.
async function chainReader() {
  if (session.wallet) return session.wallet.provider;
  if (!window.ethereum?.request) return 'no wallet in this browser to read the governance contract through: run sigil-verify';
  const provider = new ethers.BrowserProvider(window.ethereum);
  const { chain_id } = await session.publicClient().getNodeChainConfig();
  const { chainId } = await provider.getNetwork();
  return BigInt(chainId) === BigInt(chain_id) ? provider : `the wallet is on chain ${chainId}, the service on chain ${chain_id}: switch it to read the governance contract`;
}

async function ruleFive(results) {
  try {
    const sumsBytes = new Uint8Array(await (await get('/evidences/sha256sum.txt')).arrayBuffer());
    const lines = new TextDecoder().decode(sumsBytes).split('\n').filter((l) => l.trim());
    const bad = [];
    for (const line of lines) {
      const m = /^([0-9a-fA-F]{64}) [ *]([A-Za-z0-9._-]+)$/.exec(line);
      if (!m || m[2].startsWith('.')) { bad.push(`malformed line: ${line}`); continue; }
      const served = await sha256Hex(new Uint8Array(await (await get(`/evidences/${m[2]}`)).arrayBuffer()));
      if (served !== m[1].toLowerCase()) bad.push(`${m[2]}: served SHA-256 ${served}, sha256sum.txt says ${m[1]}`);
    }
    const quote = await (await get('/evidences/quote.json')).json();
    const expected = await sha256Hex(sumsBytes);
    const rd = String(quote?.report_data ?? '').replace(/^0x/, '').toLowerCase();
    if (rd.slice(0, 64) !== expected || !/^0*$/.test(rd.slice(64))) bad.push(`quote.json report_data ${rd.slice(0, 16)}… is not SHA-256(sha256sum.txt) ${expected.slice(0, 16)}… zero padded`);
    results[5] = bad.length ? [FAIL, bad.join('; ')]
      : [PASS, `the ${lines.length} files match sha256sum.txt and quote.json binds it (the quote's own signature is rule 1's)`];
  } catch (e) {
    results[5] = [NOT_CHECKED, `${e.message}: no evidence set served`];
  }
}

export async function check() {
  const results = {};
  for (const [r, why] of Object.entries(OUT_OF_REACH)) results[r] = [NOT_CHECKED, why];
  await rulesFromInfo(results);
  await ruleFive(results);
  fill($('#attestation-table tbody'), Object.keys(TITLES).map((r) => {
    const [status, detail] = results[r];
    return el('tr', { 'data-rule': r },
      el('td', {}, `${r}. ${TITLES[r]}`), el('td', { class: status === PASS ? 'pass' : status === FAIL ? 'fail' : '' }, status), el('td', {}, detail));
  }));
  return results;
}

export function init() {
  $('#attestation-origin').textContent = window.location.origin;
  $('#attestation-run').addEventListener('click', () => busy($('#attestation-run'), $('#attestation-status'), async () => {
    const results = await check();
    const failed = Object.values(results).filter(([s]) => s === FAIL).length;
    say($('#attestation-status'), failed ? `${failed} rule(s) failed` : 'no rule failed in the browser\'s checks');
  }));
}

export async function show() {}
