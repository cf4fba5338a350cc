#!/usr/bin/env node
// sigil-verify: checks a Sigil deployment against the spec's verification rules 1-8.
// Usage: see USAGE below and clients/js/README.md ("Verifying a deployment").
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { verifyDeployment, DEFAULT_PCCS_URL } from './index.js';
import { checkReceipt } from '../receipt.js';

const USAGE = `usage: sigil-verify https://host[:port] [--expect FILE] [--app-id 0x..] [--governance 0x..]
                    [--mrtd HEX] [--rtmr0 HEX] [--rtmr1 HEX] [--rtmr2 HEX] [--allow-tcb-status S,..]
                    [--allow-unchecked N,..] [--allow-simulated] [--collateral FILE | --pccs-url URL]
                    [--governance-rpc URL] [--dns-server host:port] [--domain NAME]
                    [--ca-file PEM | --insecure] [--timeout-ms N] [--json]
                    [--receipt FILE [--params FILE] [--response FILE]]
Checks the deployment against the interface spec's rules 1-8 and prints one line per rule:
"rule N pass <title>: <what was compared>", "rule N FAIL <title>: <reason>" or
"rule N not checked <title>: <reason>", then a summary line (--json: the whole report).
The expected app id (the governance contract's address unless --governance names another) and OS
measurements (mrtd, rtmr0-2) come from these flags or the --expect FILE (JSON: app_id, governance,
mrtd, rtmr0, rtmr1, rtmr2, tcb_statuses; flags win), never from the deployment. Quotes are verified
by @phala/dcap-qvl with collateral from FILE or the PCCS (default ${DEFAULT_PCCS_URL}); the TCB
must be UpToDate unless --allow-tcb-status names more; debug TDs are refused; simulated quotes
(sigil-tee-sim) only with --allow-simulated, and the summary says SIMULATED.
--receipt FILE (a run's receipt, or the whole run answer holding one) is then checked offline against
the attested evidence: its EIP-712 signature must recover to the receipt key address in
receipt-key.json (covered by sha256sum.txt, so by the evidence quote), its app id must be the expected
one, and the hashes must match the js_params of --params FILE (JSON) and the response of --response
FILE (JSON, the answer's response value) or of the answer itself; one "receipt pass|FAIL" line each.
Exit status: 0 only when every rule passed or is "not checked" and named by --allow-unchecked
(rule 4, cosign, is never checked here); 1 otherwise; 2 for a usage error.`;

const TCB_STATUSES = ['UpToDate', 'SWHardeningNeeded', 'ConfigurationNeeded', 'ConfigurationAndSWHardeningNeeded',
  'OutOfDate', 'OutOfDateConfigurationNeeded', 'Revoked'];
const EXPECT_KEYS = { app_id: 'appId', governance: 'governance', mrtd: 'mrtd', rtmr0: 'rtmr0', rtmr1: 'rtmr1', rtmr2: 'rtmr2', tcb_statuses: 'tcbStatuses' };

class UsageError extends Error {}
class HelpRequest extends Error {}

export function parseArgs(argv) {
  const opts = {};
  let url = null;
  const valueFlags = {
    '--collateral': 'collateralFile', '--pccs-url': 'pccsUrl', '--governance-rpc': 'governanceRpc',
    '--governance': 'governance', '--dns-server': 'dnsServer', '--domain': 'domain', '--ca-file': 'caFile',
    '--timeout-ms': 'timeoutMs', '--expect': 'expectFile', '--app-id': 'appId', '--mrtd': 'mrtd',
    '--rtmr0': 'rtmr0', '--rtmr1': 'rtmr1', '--rtmr2': 'rtmr2', '--allow-tcb-status': 'tcbStatuses',
    '--allow-unchecked': 'allowUnchecked', '--receipt': 'receiptFile', '--params': 'paramsFile',
    '--response': 'responseFile',
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let inline = null;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) { inline = arg.slice(eq + 1); arg = arg.slice(0, eq); }
    if (arg === '--help' || arg === '-h') throw new HelpRequest();
    else if (arg === '--json') opts.json = true;
    else if (arg === '--allow-simulated') opts.allowSimulated = true;
    else if (arg === '--insecure') opts.insecure = true;
    else if (valueFlags[arg]) {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${arg} needs a value`);
      if (opts[valueFlags[arg]] !== undefined) throw new UsageError(`${arg} given twice`);
      opts[valueFlags[arg]] = v;
    } else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
    else if (url === null) url = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (url === null) throw new UsageError('the deployment URL is missing');
  let parsed;
  try { parsed = new URL(url); } catch { throw new UsageError(`${url} is not a URL`); }
  if (parsed.protocol !== 'https:') throw new UsageError(`${url}: the deployment is reached over https://`);
  if ((opts.paramsFile || opts.responseFile) && !opts.receiptFile) throw new UsageError('--params and --response go with --receipt');
  if (opts.collateralFile && opts.pccsUrl) throw new UsageError('--collateral and --pccs-url exclude each other');
  if (opts.caFile && opts.insecure) throw new UsageError('--ca-file and --insecure exclude each other');
  if (opts.pccsUrl && !/^https?:\/\//.test(opts.pccsUrl)) throw new UsageError('--pccs-url takes an http(s):// URL');
  if (opts.governanceRpc && !/^https?:\/\//.test(opts.governanceRpc)) throw new UsageError('--governance-rpc takes an http(s):// URL');
  if (opts.tcbStatuses !== undefined) opts.tcbStatuses = tcbList(opts.tcbStatuses.split(','), '--allow-tcb-status');
  if (opts.allowUnchecked !== undefined) {
    opts.allowUnchecked = opts.allowUnchecked.split(',').map((n) => n.trim());
    if (!opts.allowUnchecked.every((n) => /^[1-8]$/.test(n))) throw new UsageError('--allow-unchecked takes rule numbers 1-8, e.g. 4,7');
    opts.allowUnchecked = opts.allowUnchecked.map(Number);
  }
  if (opts.timeoutMs !== undefined) {
    opts.timeoutMs = Number(opts.timeoutMs);
    if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs <= 0) throw new UsageError('--timeout-ms takes a positive integer');
  }
  checkExpectations(opts, (key) => `--${key === 'appId' ? 'app-id' : key}`);
  return { url, opts };
}

function tcbList(list, what) {
  const out = list.map((t) => String(t).trim());
  const bad = out.filter((t) => !TCB_STATUSES.includes(t));
  if (bad.length || out.length === 0) throw new UsageError(`${what}: unknown TCB status ${bad.join(', ')} (known: ${TCB_STATUSES.join(', ')})`);
  return out;
}

// Refuses malformed expectations as usage errors, naming where they came from.
function checkExpectations(values, nameOf) {
  for (const key of ['appId', 'governance']) {
    if (values[key] !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(values[key])) throw new UsageError(`${nameOf(key)} takes a 0x address of 20 bytes`);
  }
  for (const key of ['mrtd', 'rtmr0', 'rtmr1', 'rtmr2']) {
    if (values[key] !== undefined && !/^(0x)?[0-9a-fA-F]{96}$/.test(values[key])) throw new UsageError(`${nameOf(key)} takes hex of 48 bytes`);
  }
}

/// The pinned expectations of --expect FILE, as verifyDeployment's option names. Unknown keys are
/// refused, so a misspelt pin cannot silently go unchecked.
export function readExpectFile(file) {
  let json;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`--expect ${file}: ${e.message}`);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new UsageError(`--expect ${file}: not a JSON object`);
  const out = {};
  for (const [key, value] of Object.entries(json)) {
    if (!EXPECT_KEYS[key]) throw new UsageError(`--expect ${file}: unknown key ${key} (known: ${Object.keys(EXPECT_KEYS).join(', ')})`);
    if (key === 'tcb_statuses') {
      if (!Array.isArray(value)) throw new UsageError(`--expect ${file}: tcb_statuses is not an array`);
      out.tcbStatuses = tcbList(value, `--expect ${file}: tcb_statuses`);
    } else {
      if (typeof value !== 'string') throw new UsageError(`--expect ${file}: ${key} is not a string`);
      out[EXPECT_KEYS[key]] = value;
    }
  }
  checkExpectations(out, (k) => `--expect ${file}: ${Object.keys(EXPECT_KEYS).find((x) => EXPECT_KEYS[x] === k)}`);
  return out;
}

export function formatReport(report) {
  const lines = report.rules.map((r) => {
    const status = r.status === 'pass' ? 'pass' : r.status === 'fail' ? 'FAIL' : 'not checked';
    return `rule ${r.rule} ${status} ${r.title}: ${r.reason}`;
  });
  return [...lines, `summary: ${report.summary}`].join('\n');
}

export async function main(argv, { stdout = process.stdout, stderr = process.stderr } = {}) {
  let url;
  let opts;
  let pinned = {};
  try {
    ({ url, opts } = parseArgs(argv));
    if (opts.expectFile) pinned = readExpectFile(opts.expectFile);
  } catch (e) {
    if (e instanceof HelpRequest) {
      stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (!(e instanceof UsageError)) throw e;
    stderr.write(`sigil-verify: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  const expected = (key) => opts[key] ?? pinned[key];
  const options = {
    allowSimulated: opts.allowSimulated, pccsUrl: opts.pccsUrl, governanceRpc: opts.governanceRpc,
    dnsServer: opts.dnsServer, domain: opts.domain, insecure: opts.insecure, timeoutMs: opts.timeoutMs,
    allowUnchecked: opts.allowUnchecked ?? [], allowedTcbStatuses: expected('tcbStatuses'),
    appId: expected('appId'), governance: expected('governance'),
    mrtd: expected('mrtd'), rtmr0: expected('rtmr0'), rtmr1: expected('rtmr1'), rtmr2: expected('rtmr2'),
  };
  try {
    if (opts.caFile) options.ca = readFileSync(opts.caFile, 'utf8');
    if (opts.collateralFile) options.collateral = JSON.parse(readFileSync(opts.collateralFile, 'utf8'));
  } catch (e) {
    stderr.write(`sigil-verify: ${e.message}\n`);
    return 2;
  }
  let receiptInput = null;
  try {
    if (opts.receiptFile) {
      receiptInput = {
        receipt: JSON.parse(readFileSync(opts.receiptFile, 'utf8')),
        params: opts.paramsFile ? JSON.parse(readFileSync(opts.paramsFile, 'utf8')) : undefined,
        response: opts.responseFile ? JSON.parse(readFileSync(opts.responseFile, 'utf8')) : undefined,
      };
    }
  } catch (e) {
    stderr.write(`sigil-verify: ${e.message}\n`);
    return 2;
  }
  let report;
  try {
    report = await verifyDeployment(url, options);
  } catch (e) {
    stderr.write(`sigil-verify: ${e.message}\n`);
    return 1;
  }
  if (receiptInput) {
    // Checked against the attested key only: a deployment that failed verification vouches for nothing.
    const r = checkReceipt(receiptInput.receipt, {
      evidence: report, params: receiptInput.params, response: receiptInput.response,
    });
    if (!report.receiptKey) r.checks.unshift({ status: 'fail', what: 'evidence', reason: report.receiptKeyError });
    if (!report.ok) r.checks.push({ status: 'fail', what: 'evidence', reason: 'the deployment did not verify, so its receipt key is not attested' });
    r.ok = r.checks.every((c) => c.status === 'pass');
    report.receipt = r;
    if (!r.ok) report.ok = false;
  }
  if (opts.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    stdout.write(`${formatReport(report)}\n`);
    if (report.receipt) {
      const lines = report.receipt.checks.map((c) => `receipt ${c.status === 'pass' ? 'pass' : 'FAIL'} ${c.what}: ${c.reason}`);
      stdout.write(`${lines.join('\n')}\nreceipt: ${report.receipt.ok ? 'OK' : 'FAIL'}\n`);
    }
  }
  if (report.simulated && opts.allowSimulated) stderr.write('sigil-verify: warning: simulated quotes accepted (--allow-simulated): no TEE vouches for this deployment\n');
  return report.ok ? 0 : 1;
}

// Run when executed (also through the npm bin symlink).
const self = fileURLToPath(import.meta.url);
let invoked = null;
try { invoked = process.argv[1] ? realpathSync(process.argv[1]) : null; } catch { /* not a file */ }
if (invoked === self) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
    process.stderr.write(`sigil-verify: ${e.stack ?? e}\n`);
    process.exitCode = 1;
  });
}
