// sigil run FILE|CID: run an action on the service (with the profile's key; charged per started
// second) or, with --local, in the real sandbox on this machine (sigil-worker --run-local: the same
// sigil-sandbox runtime and [actions] limits, throw-away keys, no account, no chain, no charge).
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../output.js';
import { REPO } from '../profile.js';
import { isCid, pkpId } from './groups.js';
import { readActionFile } from './actions.js';

function parseParams(text) {
  if (text === undefined) return undefined;
  let value;
  try { value = JSON.parse(text); } catch (e) {
    throw new CliError('usage', `--params is not JSON (${e.message})`, `quote it for the shell: --params '{"name":"world"}'`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError('usage', '--params must be a JSON object', `e.g. --params '{"name":"world"}'`);
  }
  return value;
}

/// sigil-worker of this checkout's build (SIGIL_BUILD_DIR, default <repo>/build), or of an install.
export function findWorker() {
  const candidates = [join(process.env.SIGIL_BUILD_DIR ?? join(REPO, 'build'), 'bin/sigil-worker'), '/usr/local/bin/sigil-worker', '/usr/bin/sigil-worker'];
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new CliError('sandbox_missing', `sigil-worker and sigil-sandbox are not built (looked in ${candidates[0]})`,
      'build them: cmake -S . -B build && cmake --build build -j2 --target sigil-worker (scripts/start builds them too), or set SIGIL_BUILD_DIR');
  }
  return found;
}

function runLocal(file, params, config, modules) {
  const args = ['--run-local', file, '--params', JSON.stringify(params ?? {})];
  if (config) args.push('--config', config);
  if (modules) args.push('--modules', modules);
  return new Promise((resolve, reject) => {
    const child = spawn(findWorker(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) {
        try { resolve(JSON.parse(stdout)); } catch { reject(new CliError('sandbox_failed', `sigil-worker answered no JSON: ${stdout}${stderr}`)); }
        return;
      }
      // The worker's own error line (its warnings come before it).
      const why = stderr.trim().split('\n').pop().replace(/^sigil-worker: /, '');
      const imports = /^ipfs_(unavailable|cid_mismatch)\b/.test(why);
      reject(new CliError(code === 2 ? 'usage' : imports ? why.split(':')[0] : 'sandbox_failed', why || `sigil-worker exited with ${code}`,
        code === 2 ? 'sigil run --help'
          : imports ? 'give the module with --modules DIR (a file named by its CID) or a gateway that has it ([actions] ipfs_gateways of --config)'
            : 'is the build complete (sigil-sandbox beside sigil-worker)?'));
    });
  });
}

function show(run, extra) {
  const lines = [];
  const response = typeof run.response === 'string' ? run.response : JSON.stringify(run.response);
  lines.push(`response: ${response}`);
  const logs = (run.logs ?? '').replace(/\n$/, '');
  if (logs) lines.push('logs:', ...logs.split('\n').map((l) => `  ${l}`));
  if (run.has_error) lines.push(`error: ${run.error.code}: ${run.error.message}`, ...(run.error.stack ? [run.error.stack.replace(/^/gm, '  ')] : []));
  lines.push(...extra);
  return lines;
}

export const COMMANDS = [
  {
    path: ['run'], usage: 'FILE|CID [--params JSON] [--pkp ADDR] [--receipt OUT] [--local [--config sigil.conf] [--modules DIR]]', args: [1, 1],
    summary: 'run an action (a file inline, or a CID) and print its response, logs and time; --local tries it on this machine',
    help: 'Runs an action with the profile\'s key (POST /core/v1/sigil_action): a FILE is sent inline, a CID is\n' +
      'fetched by the service from its gateways. A group the key may execute on must list the CID (and the PKP).\n' +
      'Charged per started second; the credits it cost are shown when billing is on.\n\n' +
      '--local runs FILE in the real sandbox here (the build\'s sigil-sandbox: same runtime and limits as the\n' +
      'service; --config takes a sigil.conf whose [actions] limits apply) with throw-away keys: one PKP whose\n' +
      'address is js_params.pkpId unless you give one, and a throw-away action key. No account, no chain write,\n' +
      'nothing charged; fetch follows the same address policy. Imports by ipfs://CID resolve as on the service:\n' +
      'from --modules DIR (files named by their CID) or the gateways of --config\'s [actions] ipfs_gateways, each\n' +
      'checked against its CID. Exit status 1 when the action ended with an error.',
    options: {
      params: { type: 'string', valueName: 'JSON', help: 'js_params: the object main() receives' },
      pkp: { type: 'string', valueName: 'ADDR', help: 'the PKP the run may use (pkp_id)' },
      local: { type: 'boolean', help: 'run in the sandbox on this machine, with throw-away keys' },
      config: { type: 'string', valueName: 'FILE', help: 'with --local: a sigil.conf whose [actions] limits apply' },
      modules: { type: 'string', valueName: 'DIR', help: 'with --local: modules imported by ipfs://CID, each a file named by its CID' },
      receipt: { type: 'string', valueName: 'OUT', help: 'ask for a signed receipt (docs/receipts.md) and write the run answer holding it to OUT; check it with sigil-verify URL --receipt OUT' },
    },
    async run(ctx, [target], flags) {
      const params = parseParams(flags.params);
      if (flags.local) {
        if (isCid(target) && !existsSync(target)) throw new CliError('usage', '--local runs a file, not a CID', 'sigil run --local action.js');
        if (flags.pkp) throw new CliError('usage', '--local has one throw-away PKP (js_params.pkpId); --pkp names a real one', 'drop --pkp');
        if (flags.receipt) throw new CliError('usage', '--local runs sign no receipt: only a deployment\'s receipt key does', 'drop --receipt');
        readActionFile(target);
        const run = await runLocal(target, params, flags.config, flags.modules);
        ctx.out.result(run, (r) => show(r, [`time: ${r.time_ms} ms in the local sandbox, lowering included (cid ${r.cid}; throw-away PKP ${r.pkp_id}; nothing charged)`]));
        return run.has_error ? 1 : 0;
      }
      if (flags.modules) throw new CliError('usage', '--modules is for --local runs: the service fetches imports from its own gateways', 'add --local, or drop --modules');
      const client = ctx.client();
      const body = isCid(target) && !existsSync(target) ? { ipfs_id: target } : { code: readActionFile(target) };
      if (flags.pkp) body.pkp_id = pkpId(flags.pkp);
      if (params) body.js_params = params;
      if (flags.receipt) body.receipt = true;
      const before = await balanceOrNull(client);
      const started = performance.now();
      const run = await client.runAction(body);
      const timeMs = Math.round((performance.now() - started) * 10) / 10;
      const after = before === null ? null : await balanceOrNull(client);
      const value = { ...run, time_ms: timeMs, ...(after !== null ? { cost_cents: before - after, balance_cents: after } : {}) };
      const receiptLines = [];
      if (flags.receipt) {
        writeFileSync(flags.receipt, `${JSON.stringify(run)}\n`);
        receiptLines.push(run.receipt
          ? `receipt: signed by ${run.receipt.signer}, written to ${flags.receipt} (check it: sigil-verify ${ctx.settings.url} --receipt ${flags.receipt})`
          : `receipt: none (${run.receipt_error?.code ?? 'not answered'}: ${run.receipt_error?.message ?? ''}); the answer is in ${flags.receipt}`);
      }
      ctx.out.result(value, (r) => show(r, [`time: ${r.time_ms} ms round trip` +
        (r.cost_cents !== undefined ? `; cost: ${r.cost_cents} credit${r.cost_cents === 1 ? '' : 's'} (balance ${r.balance_cents})` : ''), ...receiptLines]));
      return run.has_error ? 1 : 0;
    },
  },
];

async function balanceOrNull(client) {
  try { return (await client.balance()).balance_cents; } catch (e) {
    if (e.code === 'billing_disabled') return null;
    throw e;
  }
}
