// sigil key ...: usage keys. Listing shows hashes only (the service never returns key values), so
// update, rename and revoke take a key's hash (0x + 64 hex, from `sigil key list`) or its value.
import { CliError } from '../output.js';
import { apiKeyHash } from '../../../js/src/index.js';

const PERMISSION_OPTIONS = {
  execute: { type: 'string', valueName: 'IDS', help: 'groups the key may run actions in (comma list; "all" = every group)' },
  'manage-actions': { type: 'string', valueName: 'IDS', help: 'groups where it may add and remove action CIDs' },
  'add-pkp': { type: 'string', valueName: 'IDS', help: 'groups where it may add PKPs' },
  'remove-pkp': { type: 'string', valueName: 'IDS', help: 'groups where it may remove PKPs' },
  'create-groups': { type: 'boolean', help: 'may create groups' },
  'delete-groups': { type: 'boolean', help: 'may delete groups' },
  'create-pkps': { type: 'boolean', help: 'may create PKPs' },
  expiration: { type: 'string', valueName: 'UNIX_SECONDS', help: 'when the key stops working (0 = never)' },
  balance: { type: 'string', valueName: 'N', help: "the key's spend cap in credits (0 = none)" },
};

/// "1,2" -> [1, 2]; "all" -> [0] (the wildcard); "" -> [].
export function groupIds(text, option) {
  if (text === undefined) return [];
  if (text === 'all') return [0];
  if (text === '') return [];
  const ids = text.split(',').map((s) => s.trim());
  if (!ids.every((s) => /^[0-9]{1,19}$/.test(s))) {
    throw new CliError('usage', `--${option} takes group ids separated by commas, or "all" (got "${text}")`, 'sigil group list shows the ids');
  }
  return ids.map((s) => Number(s));
}

function permissions(flags) {
  const body = {
    can_create_groups: Boolean(flags['create-groups']),
    can_delete_groups: Boolean(flags['delete-groups']),
    can_create_pkps: Boolean(flags['create-pkps']),
    execute_in_groups: groupIds(flags.execute, 'execute'),
    manage_ipfs_ids_in_groups: groupIds(flags['manage-actions'], 'manage-actions'),
    add_pkp_to_groups: groupIds(flags['add-pkp'], 'add-pkp'),
    remove_pkp_from_groups: groupIds(flags['remove-pkp'], 'remove-pkp'),
  };
  for (const f of ['expiration', 'balance']) {
    if (flags[f] === undefined) continue;
    if (!/^[0-9]{1,19}$/.test(flags[f])) throw new CliError('usage', `--${f} takes a whole number`, `sigil key add --help`);
    body[f] = flags[f];
  }
  return body;
}

/// A key named by hash (0x + 64 hex) or by value, as the service's usage_api_key field takes it.
function keyRef(text) {
  if (/^0x[0-9a-fA-F]{64}$/.test(text)) return text;
  if (/^[A-Za-z0-9+/=_-]{8,}$/.test(text)) return text;
  throw new CliError('usage', `"${text}" is neither a key hash (0x + 64 hex, from sigil key list) nor a key value`, 'sigil key list shows the hashes');
}

function scopeText(k) {
  const ids = (a) => (a?.length ? (a.length === 1 && Number(a[0]) === 0 ? 'all' : a.join(',')) : '-');
  const flags = [k.can_create_groups && 'create-groups', k.can_delete_groups && 'delete-groups', k.can_create_pkps && 'create-pkps'].filter(Boolean);
  return `execute:${ids(k.can_execute_in_groups)} manage-actions:${ids(k.can_manage_ipfs_ids_in_groups)} add-pkp:${ids(k.can_add_pkp_to_groups)} remove-pkp:${ids(k.can_remove_pkp_from_groups)}${flags.length ? ' ' + flags.join(' ') : ''}`;
}

export const COMMANDS = [
  {
    path: ['key', 'add'], usage: '--name NAME [--execute IDS] [...]',
    summary: 'add a usage key with the given scopes (its value is shown once)',
    help: 'Adds a usage key (POST /core/v1/add_usage_api_key; owner only). Scopes not given are off.\n' +
      'Example: sigil key add --name runner --execute 1,2',
    options: { name: { type: 'string', help: 'key name' }, description: { type: 'string', help: 'key description' }, ...PERMISSION_OPTIONS },
    async run(ctx, _args, flags) {
      if (!flags.name) throw new CliError('usage', '--name is required', 'sigil key add --name runner --execute 1');
      const body = { name: flags.name, description: flags.description ?? '', ...permissions(flags) };
      const answer = await ctx.client().addUsageApiKey(body);
      const value = { usage_api_key: answer.usage_api_key, api_key_hash: apiKeyHash(answer.usage_api_key) };
      ctx.out.result(value, (v) => [`usage key (shown once, keep it): ${v.usage_api_key}`, `hash (what sigil key list shows): ${v.api_key_hash}`]);
    },
  },
  {
    path: ['key', 'list'], summary: "the account's usage keys: hash, name, scopes (never values)",
    options: { page: { type: 'string', help: 'page number (default 0)' } },
    async run(ctx, _args, flags) {
      const keys = await ctx.client().listApiKeys({ page_number: flags.page ?? 0, page_size: 100 });
      ctx.out.result(keys, (list) => list.length ? list.map((k) => `${k.api_key_hash}  ${k.name}  ${scopeText(k)}`) : 'no usage keys');
    },
  },
  {
    path: ['key', 'update'], usage: 'HASH|KEY [--execute IDS] [...]', args: [1, 1],
    summary: "replace a usage key's scopes (every scope not given is turned off)",
    options: PERMISSION_OPTIONS,
    async run(ctx, [ref], flags) {
      await ctx.client().updateUsageApiKey({ usage_api_key: keyRef(ref), ...permissions(flags) });
      ctx.out.result({ success: true }, () => 'scopes replaced');
    },
  },
  {
    path: ['key', 'rename'], usage: 'HASH|KEY --name NAME [--description TEXT]', args: [1, 1],
    summary: "change a usage key's name and description",
    options: { name: { type: 'string', help: 'new name' }, description: { type: 'string', help: 'new description' } },
    async run(ctx, [ref], flags) {
      if (!flags.name) throw new CliError('usage', '--name is required', 'sigil key rename HASH --name NAME');
      await ctx.client().updateUsageApiKeyMetadata({ usage_api_key: keyRef(ref), name: flags.name, description: flags.description ?? '' });
      ctx.out.result({ success: true }, () => 'renamed');
    },
  },
  {
    path: ['key', 'revoke'], usage: 'HASH|KEY', args: [1, 1], summary: 'revoke a usage key at once, on every worker',
    async run(ctx, [ref]) {
      await ctx.client().removeUsageApiKey(keyRef(ref));
      ctx.out.result({ success: true }, () => 'revoked');
    },
  },
  {
    path: ['key', 'guardrails'], usage: 'HASH|KEY [--rate N --burst N] [--address-rate N] [--in-flight N] [--spend-cap CENTS] [--origins LIST] | --clear',
    args: [1, 1], summary: "show, replace (any option given) or clear a usage key's guardrails",
    help: 'Key guardrails (README "Key guardrails"; owner only). Without options: shows them. With any option: replaces\n' +
      'every guardrail (those not given are unset). Example: sigil key guardrails 0xabc... --rate 5 --spend-cap 500 --origins https://app.example',
    options: {
      rate: { type: 'string', valueName: 'N', help: 'runs per second for the key (all instances together)' },
      burst: { type: 'string', valueName: 'N', help: 'runs at once after a quiet time (default: one second of --rate)' },
      'address-rate': { type: 'string', valueName: 'N', help: 'runs per second per client address' },
      'address-burst': { type: 'string', valueName: 'N', help: 'the per-address burst' },
      'in-flight': { type: 'string', valueName: 'N', help: 'runs in flight at once (0 = no cap)' },
      'spend-cap': { type: 'string', valueName: 'CENTS', help: 'what runs may cost per window' },
      window: { type: 'string', valueName: 'SECONDS', help: 'the spend window (default 86400)' },
      origins: { type: 'string', valueName: 'LIST', help: 'allowed Origins, comma separated' },
      clear: { type: 'boolean', help: 'remove every guardrail of the key' },
    },
    async run(ctx, [ref], flags) {
      const key = keyRef(ref);
      const hash = /^0x[0-9a-fA-F]{64}$/.test(key) ? key : apiKeyHash(key);
      const show = (g) => !g.set ? 'no guardrails' : [
        `rate: ${g.requests_per_second ?? '-'}/s burst ${g.burst ?? '-'}`,
        `per address: ${g.requests_per_second_per_address ?? '-'}/s burst ${g.burst_per_address ?? '-'}`,
        `runs in flight: ${g.max_runs_in_flight ?? `default (${g.default_max_runs_in_flight})`}`,
        `spend cap: ${g.spend_cap_cents === null ? '-' : `${g.spend_cap_cents} cents per ${g.spend_window_seconds} s`}`,
        `origins: ${g.allowed_origins.length ? g.allowed_origins.join(', ') : 'any'}`,
      ];
      if (flags.clear) {
        const r = await ctx.client().clearUsageApiKeyGuardrails(hash);
        return ctx.out.result(r, (v) => (v.cleared ? 'guardrails cleared' : 'the key had no guardrails'));
      }
      const num = (name, field, integer) => {
        if (flags[name] === undefined) return {};
        const n = Number(flags[name]);
        if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new CliError('usage', `--${name} takes a number`, 'sigil key guardrails --help');
        return { [field]: n };
      };
      const body = {
        ...num('rate', 'requests_per_second'), ...num('burst', 'burst', true),
        ...num('address-rate', 'requests_per_second_per_address'), ...num('address-burst', 'burst_per_address', true),
        ...num('in-flight', 'max_runs_in_flight', true), ...num('spend-cap', 'spend_cap_cents', true), ...num('window', 'spend_window_seconds', true),
        ...(flags.origins !== undefined ? { allowed_origins: flags.origins.split(',').map((o) => o.trim()).filter(Boolean) } : {}),
      };
      if (Object.keys(body).length === 0) return ctx.out.result(await ctx.client().getUsageApiKeyGuardrails(hash), show);
      const r = await ctx.client().setUsageApiKeyGuardrails({ usage_api_key: key, ...body });
      ctx.out.result(r.guardrails, show);
    },
  },
];
