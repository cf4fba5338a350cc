#!/usr/bin/env node
// sigil-verify: checks a Sigil deployment against the spec's verification rules 1-8.
// Usage: see USAGE below and clients/js/README.md ("Verifying a deployment").
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { verifyDeployment } from './index.js';

const USAGE = `usage: sigil-verify https://host[:port] [--json] [--allow-simulated]
                    [--collateral FILE | --pccs-url URL] [--governance-rpc URL] [--governance 0x..]
                    [--dns-server host:port] [--domain NAME] [--ca-file PEM | --insecure] [--timeout-ms N]
Checks the deployment against the interface spec's rules 1-8 and prints one line per rule:
"rule N pass", "rule N FAIL <reason>" or "rule N not checked <reason>" (--json: the whole report).
Exit status: 0 when every rule it could check passed, 1 otherwise, 2 for a usage error.`;

class UsageError extends Error {}
class HelpRequest extends Error {}

export function parseArgs(argv) {
  const opts = {};
  let url = null;
  const valueFlags = {
    '--collateral': 'collateralFile', '--pccs-url': 'pccsUrl', '--governance-rpc': 'governanceRpc',
    '--governance': 'governance', '--dns-server': 'dnsServer', '--domain': 'domain', '--ca-file': 'caFile',
    '--timeout-ms': 'timeoutMs',
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
      opts[valueFlags[arg]] = v;
    } else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
    else if (url === null) url = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (url === null) throw new UsageError('the deployment URL is missing');
  let parsed;
  try { parsed = new URL(url); } catch { throw new UsageError(`${url} is not a URL`); }
  if (parsed.protocol !== 'https:') throw new UsageError(`${url}: the deployment is reached over https://`);
  if (opts.collateralFile && opts.pccsUrl) throw new UsageError('--collateral and --pccs-url exclude each other');
  if (opts.caFile && opts.insecure) throw new UsageError('--ca-file and --insecure exclude each other');
  if (opts.governance && !/^0x[0-9a-fA-F]{40}$/.test(opts.governance)) throw new UsageError('--governance takes a 0x address of 20 bytes');
  if (opts.governanceRpc && !/^https?:\/\//.test(opts.governanceRpc)) throw new UsageError('--governance-rpc takes an http(s):// URL');
  if (opts.timeoutMs !== undefined) {
    opts.timeoutMs = Number(opts.timeoutMs);
    if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs <= 0) throw new UsageError('--timeout-ms takes a positive integer');
  }
  return { url, opts };
}

export function formatReport(report) {
  return report.rules.map((r) => {
    if (r.status === 'pass') return `rule ${r.rule} pass`;
    if (r.status === 'fail') return `rule ${r.rule} FAIL ${r.reason}`;
    return `rule ${r.rule} not checked ${r.reason}`;
  }).join('\n');
}

export async function main(argv, { stdout = process.stdout, stderr = process.stderr } = {}) {
  let url;
  let opts;
  try {
    ({ url, opts } = parseArgs(argv));
  } catch (e) {
    if (e instanceof HelpRequest) {
      stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (!(e instanceof UsageError)) throw e;
    stderr.write(`sigil-verify: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  const options = {
    allowSimulated: opts.allowSimulated, pccsUrl: opts.pccsUrl, governanceRpc: opts.governanceRpc,
    governance: opts.governance, dnsServer: opts.dnsServer, domain: opts.domain, insecure: opts.insecure,
    timeoutMs: opts.timeoutMs,
  };
  try {
    if (opts.caFile) options.ca = readFileSync(opts.caFile, 'utf8');
    if (opts.collateralFile) options.collateral = JSON.parse(readFileSync(opts.collateralFile, 'utf8'));
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
  if (opts.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    stdout.write(`${formatReport(report)}\n`);
    if (report.simulated && opts.allowSimulated) stderr.write('sigil-verify: warning: simulated quotes accepted (--allow-simulated): no TEE vouches for this deployment\n');
  }
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
