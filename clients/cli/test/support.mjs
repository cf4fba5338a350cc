// Shared by the CLI's tests (not a test): runs the real `sigil` (sigil.mjs in a child process) with
// its own profile file, and a stack with scripts/start's settings (billing on with the chain
// processor, a starter credit of 1000, sigil-lowerer, the simulated TEE).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack } from '../../../tests/api/stack.mjs';

export const SIGIL = resolve(dirname(fileURLToPath(import.meta.url)), '../sigil.mjs');

/// scripts/start's [billing] lines (the chain processor and its addresses come from stack.mjs).
export const START_BILLING = { lines: ['starter_credit_cents = 1000', 'starter_credit_budget_cents = 100000000'] };

export function startLikeScriptsStart(options = {}) {
  return startStack({ workers: 2, billing: START_BILLING, teeSim: true, ...options });
}

/// A sandbox for the CLI's state: its profile file, and a SIGIL_HOME with no stack in it (so the
/// dev-stack defaults never reach a developer's own .sigil).
export function cliHome() {
  const dir = mkdtempSync(join(tmpdir(), 'sigil-cli-'));
  return {
    dir,
    env: { SIGIL_CLI_CONFIG: join(dir, 'profiles.json'), SIGIL_HOME: join(dir, 'no-stack') },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/// Runs `sigil ...args`; answers {code, stdout, stderr, json} (json: stdout parsed, or null).
export function sigil(args, { env = {}, timeout = 180000, cwd } = {}) {
  return new Promise((resolveRun) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^SIGIL_(API_KEY|WALLET_KEY|URL|CA_FILE|RPC_URL|PROFILE|GATEWAY_DIR|PORT)$/.test(k)));
    execFile(process.execPath, [SIGIL, ...args], { env: { ...clean, ...env }, timeout, cwd, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      let json = null;
      try { json = JSON.parse(stdout); } catch { /* not JSON */ }
      resolveRun({ code: error ? (error.code ?? 1) : 0, stdout, stderr, json });
    });
  });
}
