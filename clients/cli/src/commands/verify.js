// sigil verify: sigil-verify (clients/js/src/verify/cli.js), the spec's attestation rules 1-8, on the
// profile's service. Its own flags pass through; --dev adds what scripts/start's banner passes for
// its simulated TEE (the expected measurements it wrote, simulated quotes allowed, rules 4 and 7 not
// checkable on loopback).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../profile.js';
import { CliError } from '../output.js';

const VERIFY = join(REPO, 'clients/js/src/verify/cli.js');

export const COMMANDS = [
  {
    path: ['verify'], usage: '[URL] [--dev] [sigil-verify flags...]', passthrough: true,
    summary: "check the deployment's attestation (TEE quote, compose hash, certificate, governance): sigil-verify",
    help: 'Runs sigil-verify on URL (default: the profile\'s), with the profile\'s --ca-file. --dev adds the dev\n' +
      "stack's --expect, --allow-simulated, --allow-unchecked 4,7 and --governance-rpc. Every other flag is\n" +
      "sigil-verify's own (below).",
    async run(ctx, args) {
      const rest = [...args];
      const dev = rest.includes('--dev');
      const out = rest.filter((a) => a !== '--dev' && a !== '--json');
      if (ctx.out.json) out.push('--json');
      if (!out[0] || out[0].startsWith('-')) out.unshift(ctx.settings.url);
      if (!out.includes('--ca-file') && !out.includes('--insecure') && ctx.settings.ca_file) out.push('--ca-file', ctx.settings.ca_file);
      if (dev) {
        const expect = join(ctx.settings.dev_home, 'expect.json');
        if (!existsSync(expect)) throw new CliError('stack_not_running', `${expect} is missing: --dev needs a stack started by scripts/start`, 'start it: scripts/start');
        let rpc = ctx.settings.rpc_url;
        try { rpc = JSON.parse(readFileSync(join(ctx.settings.dev_home, 'chain.json'), 'utf8')).rpc_url; } catch { /* the profile's */ }
        out.push('--expect', expect, '--allow-simulated', '--allow-unchecked', '4,7');
        if (rpc && !out.includes('--governance-rpc')) out.push('--governance-rpc', rpc);
      }
      return await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [VERIFY, ...out], { stdio: 'inherit' });
        child.on('error', reject);
        child.on('close', (code) => resolve(code ?? 1));
      });
    },
  },
];
