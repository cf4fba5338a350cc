// sigil profile ...: where the CLI finds the service, its key, its CA, the chain and the gateway.
import { loadConfig, saveConfig, configPath, PROFILE_FIELDS } from '../profile.js';
import { CliError } from '../output.js';
import { resolve } from 'node:path';

const SET_OPTIONS = Object.fromEntries(Object.entries(PROFILE_FIELDS)
  .filter(([f]) => !['url', 'key_file', 'key_env', 'ca_file'].includes(f))
  .map(([f, help]) => [f.replaceAll('_', '-'), { type: 'string', help }]));

const FILE_FIELDS = new Set(['key_file', 'ca_file', 'wallet_key_file', 'gateway_dir']);

export const COMMANDS = [
  {
    path: ['profile', 'show'], summary: 'the settings in force and where each comes from (never the key itself)',
    run(ctx) {
      const s = ctx.settings;
      const fields = ['url', 'ca_file', 'key_file', 'key_env', 'rpc_url', 'wallet_key_file', 'wallet_key_env', 'gateway_dir'];
      const value = { profile: s.profile, config_file: configPath(), ...Object.fromEntries(fields.filter((f) => s[f]).map((f) => [f, s[f]])), sources: s.sources };
      ctx.out.result(value, (v) => [`profile: ${v.profile} (${v.config_file})`,
        ...fields.filter((f) => v[f]).map((f) => `  ${f.padEnd(16)} ${v[f]}   [${v.sources[f]}]`),
        ...(v.key_file || v.key_env ? [] : ['  (no API key configured: sigil account create --save-key FILE, or sigil profile set --key-file FILE)'])]);
    },
  },
  {
    path: ['profile', 'set'], usage: '[--profile NAME] [--url URL] [--key-file FILE | --key-env VAR] [--ca-file PEM] [...]',
    summary: 'create or change a profile (the current one unless --profile names another)',
    help: 'Stores where things are, never key values: the key stays in its file or environment variable.\n' +
      Object.entries(PROFILE_FIELDS).map(([f, h]) => `  ${f}: ${h}`).join('\n'),
    options: SET_OPTIONS,
    run(ctx, _args, flags) {
      const config = loadConfig();
      const name = flags.profile ?? config.current;
      const profile = { ...(config.profiles[name] ?? {}) };
      const given = { url: flags.url, key_file: flags['key-file'], key_env: flags['key-env'], ca_file: flags['ca-file'] };
      for (const f of Object.keys(SET_OPTIONS)) given[f.replaceAll('-', '_')] = flags[f];
      let changed = 0;
      for (const [field, value] of Object.entries(given)) {
        if (value === undefined) continue;
        profile[field] = FILE_FIELDS.has(field) && value !== '' ? resolve(value) : value;
        if (value === '') delete profile[field];
        if (field === 'key_file' && value) delete profile.key_env;
        if (field === 'key_env' && value) delete profile.key_file;
        changed++;
      }
      if (!changed) throw new CliError('usage', 'nothing to set', 'sigil profile set --help lists the fields');
      if (profile.url && !/^https?:\/\//.test(profile.url)) {
        throw new CliError('invalid_url', `"${profile.url}" is not an http(s) URL`, 'give the service root, e.g. --url https://sigil.example');
      }
      config.profiles[name] = profile;
      if (!config.profiles[config.current]) config.current = name;
      saveConfig(config);
      ctx.out.result({ profile: name, ...profile }, () => `profile ${name} saved in ${configPath()}`);
    },
  },
  {
    path: ['profile', 'use'], usage: 'NAME', args: [1, 1], summary: 'make NAME the current profile',
    run(ctx, [name]) {
      const config = loadConfig();
      if (!config.profiles[name]) {
        throw new CliError('unknown_profile', `no profile named "${name}"`, `create it: sigil profile set --profile ${name} --url https://HOST`);
      }
      config.current = name;
      saveConfig(config);
      ctx.out.result({ current: name }, () => `current profile: ${name}`);
    },
  },
  {
    path: ['profile', 'list'], summary: 'the saved profiles',
    run(ctx) {
      const config = loadConfig();
      ctx.out.result(config, (c) => Object.keys(c.profiles).length
        ? Object.entries(c.profiles).map(([n, p]) => `${n === c.current ? '*' : ' '} ${n}  ${p.url ?? '(dev stack)'}`)
        : `no profiles in ${configPath()}: the dev stack of this checkout is used`);
    },
  },
];
