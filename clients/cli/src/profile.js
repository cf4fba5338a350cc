// Profiles: where the CLI finds the service, its key, the CA that signs its certificate, the chain's
// RPC and a wallet for paying. Stored as JSON in $SIGIL_CLI_CONFIG (default
// ~/.config/sigil/profiles.json); keys themselves never go into it, only the file or the environment
// variable that holds them. Without a profile the CLI talks to the stack scripts/start runs from
// this checkout ($SIGIL_HOME, default <repo>/.sigil): its URL, certificate, chain and gateway.
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from './output.js';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/// The fields a profile may hold, with what each means (`sigil profile set --help` prints them).
export const PROFILE_FIELDS = {
  url: 'the service root, e.g. https://127.0.0.1:8443',
  key_file: 'a file holding the API key (master or usage key); kept out of the profile itself',
  key_env: 'the name of an environment variable holding the API key',
  ca_file: 'a PEM file of the CA (or self-signed certificate) to trust for the service',
  rpc_url: 'the JSON-RPC URL of the service\'s chain (for `sigil credits buy`)',
  wallet_key_file: 'a file holding the private key (0x + 64 hex) of the wallet that pays on chain',
  wallet_key_env: 'the name of an environment variable holding that private key',
  gateway_dir: 'a folder the IPFS gateway serves, files named by CID (where `sigil action deploy` uploads)',
};

export function configPath() {
  if (process.env.SIGIL_CLI_CONFIG) return resolve(process.env.SIGIL_CLI_CONFIG);
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'sigil', 'profiles.json');
}

export function loadConfig() {
  const path = configPath();
  if (!existsSync(path)) return { current: 'default', profiles: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8'));
    return { current: parsed.current ?? 'default', profiles: parsed.profiles ?? {} };
  } catch (e) {
    throw new CliError('bad_profile_file', `${path} is not valid JSON (${e.message})`,
      `fix or delete that file (it only holds profiles), or point SIGIL_CLI_CONFIG elsewhere`);
  }
}

export function saveConfig(config) {
  const path = configPath();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
}

/// The development stack's state folder (scripts/start's SIGIL_HOME).
export function devHome() {
  return resolve(process.env.SIGIL_HOME ?? join(REPO, '.sigil'));
}

function readJson(path) {
  try { return JSON.parse(readFileSync(path, 'utf8')); } catch { return null; }
}

/// The settings in force: command-line flags, then the environment, then the profile, then the
/// development stack of this checkout. Each value says where it came from (`sigil profile show`).
export function resolveSettings(flags) {
  const config = loadConfig();
  const name = flags.profile ?? process.env.SIGIL_PROFILE ?? config.current;
  if (flags.profile && !config.profiles[flags.profile]) {
    throw new CliError('unknown_profile', `no profile named "${flags.profile}" in ${configPath()}`,
      `create it: sigil profile set --profile ${flags.profile} --url https://HOST`);
  }
  const profile = config.profiles[name] ?? {};
  const home = devHome();
  const chain = readJson(join(home, 'chain.json'));
  const out = { profile: name, sources: {} };
  const pick = (field, flag, env, dev) => {
    for (const [value, source] of [[flag, 'flag'], [env, 'environment'], [profile[field], `profile ${name}`], [dev, `dev stack ${home}`]]) {
      if (value !== undefined && value !== null && value !== '') {
        out[field] = value;
        out.sources[field] = source;
        return;
      }
    }
  };
  const devPort = process.env.SIGIL_PORT ?? '8443';
  pick('url', flags.url, process.env.SIGIL_URL, `https://127.0.0.1:${devPort}`);
  const devCert = join(home, 'nginx/tls/cert.pem');
  const isDevUrl = /^https:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/?$/.test(out.url);
  pick('ca_file', flags['ca-file'], process.env.SIGIL_CA_FILE, isDevUrl && existsSync(devCert) ? devCert : undefined);
  pick('rpc_url', flags['rpc-url'], process.env.SIGIL_RPC_URL, chain?.rpc_url);
  pick('gateway_dir', flags['gateway-dir'], process.env.SIGIL_GATEWAY_DIR, existsSync(join(home, 'ipfs')) ? join(home, 'ipfs') : undefined);
  // The key: its value never sits in the profile, only where to find it (a file or a variable).
  const set = (field, value, source) => { out[field] = value; out.sources[field] = source; };
  if (flags['key-file']) set('key_file', flags['key-file'], 'flag');
  else if (flags['key-env']) set('key_env', flags['key-env'], 'flag');
  else if (process.env.SIGIL_API_KEY) set('key_env', 'SIGIL_API_KEY', 'environment');
  else if (profile.key_file) set('key_file', profile.key_file, `profile ${name}`);
  else if (profile.key_env) set('key_env', profile.key_env, `profile ${name}`);
  if (flags['wallet-key-file']) set('wallet_key_file', flags['wallet-key-file'], 'flag');
  else if (process.env.SIGIL_WALLET_KEY) set('wallet_key_env', 'SIGIL_WALLET_KEY', 'environment');
  else if (profile.wallet_key_file) set('wallet_key_file', profile.wallet_key_file, `profile ${name}`);
  else if (profile.wallet_key_env) set('wallet_key_env', profile.wallet_key_env, `profile ${name}`);
  out.dev_home = home;
  out.dev_live_gateway_dir = (() => {
    try { return readFileSync(join(home, 'gateway_dir'), 'utf8').trim() || null; } catch { return null; }
  })();
  return out;
}

/// The API key the settings point at, or null.
export function readApiKey(settings) {
  if (settings.key_env) {
    const v = process.env[settings.key_env];
    if (!v) {
      throw new CliError('missing_api_key', `the environment variable ${settings.key_env} is empty`,
        `export ${settings.key_env}=<your key>, or point the profile at a key file: sigil profile set --key-file FILE`);
    }
    return v.trim();
  }
  if (settings.key_file) {
    try {
      return readFileSync(settings.key_file, 'utf8').trim();
    } catch (e) {
      throw new CliError('missing_api_key', `cannot read the key file ${settings.key_file} (${e.code ?? e.message})`,
        'create an account with `sigil account create --save-key FILE`, or fix the path: sigil profile set --key-file FILE');
    }
  }
  return null;
}

/// The paying wallet's private key, or null.
export function readWalletKey(settings) {
  if (settings.wallet_key_env) return process.env[settings.wallet_key_env]?.trim() || null;
  if (settings.wallet_key_file) {
    try { return readFileSync(settings.wallet_key_file, 'utf8').trim(); } catch (e) {
      throw new CliError('missing_wallet_key', `cannot read the wallet key file ${settings.wallet_key_file} (${e.code ?? e.message})`,
        'fix the path: sigil profile set --wallet-key-file FILE');
    }
  }
  return null;
}
