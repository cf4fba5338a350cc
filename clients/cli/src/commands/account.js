// sigil account ...: create an account (its master key shown once, or saved to a file) and show it.
import { writeFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, saveConfig } from '../profile.js';
import { CliError } from '../output.js';

export const COMMANDS = [
  {
    path: ['account', 'create'], usage: '[--name NAME] [--description TEXT] [--save-key FILE]',
    summary: "create an API-mode account; --save-key writes its master key to FILE (0600) and makes it the profile's key",
    help: 'Creates an account on the service (POST /core/v1/new_account). The master key is shown once: keep it.\n' +
      'With --save-key FILE it is written to FILE instead of printed, and the current profile reads it from there.',
    options: {
      name: { type: 'string', help: 'account name' },
      description: { type: 'string', help: 'account description' },
      'save-key': { type: 'string', valueName: 'FILE', help: 'write the master key to FILE (mode 0600) and use it' },
    },
    async run(ctx, _args, flags) {
      const file = flags['save-key'] ? resolve(flags['save-key']) : null;
      if (file && existsSync(file)) {
        throw new CliError('file_exists', `${file} already exists; it may hold another account's key`, 'pick another --save-key FILE, or move that one away');
      }
      const client = ctx.client({ needKey: false });
      const account = await client.newAccount({ account_name: flags.name, account_description: flags.description });
      if (file) {
        writeFileSync(file, account.api_key + '\n', { mode: 0o600, flag: 'wx' });
        const config = loadConfig();
        const name = ctx.settings.profile;
        config.profiles[name] = { ...(config.profiles[name] ?? {}), key_file: file };
        delete config.profiles[name].key_env;
        if (ctx.flags.url) config.profiles[name].url = ctx.flags.url;
        if (ctx.flags['ca-file']) config.profiles[name].ca_file = resolve(ctx.flags['ca-file']);
        saveConfig(config);
      }
      const shown = file ? { wallet_address: account.wallet_address, key_file: file } : account;
      ctx.out.result(shown, (a) => file
        ? [`account created: owner wallet ${a.wallet_address}`, `master key saved in ${file} (profile ${ctx.settings.profile} uses it)`]
        : [`account created: owner wallet ${a.wallet_address}`, `master key (shown once, keep it): ${a.api_key}`]);
    },
  },
  {
    path: ['account', 'show'], summary: 'whether the key belongs to an account, and its credit balance',
    async run(ctx) {
      const client = ctx.client();
      const exists = await client.accountExists();
      let balance = null;
      try { balance = await client.balance(); } catch (e) { if (e.code !== 'billing_disabled') throw e; }
      const value = { account_exists: exists === true, balance };
      ctx.out.result(value, (v) => [v.account_exists ? 'the key belongs to an account' : 'the key belongs to no account',
        v.balance ? `balance: ${v.balance.balance_cents} credits (${v.balance.balance_display})` : 'billing: off on this deployment']);
    },
  },
];
