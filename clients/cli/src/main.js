// The command table and argument parsing (node:util parseArgs): `sigil GROUP [SUBCOMMAND] ARGS
// [--options]`. Each command declares its options, usage and help next to its code (src/commands/).
import { parseArgs } from 'node:util';
import { Context } from './context.js';
import { Output, CliError } from './output.js';
import { COMMANDS as PROFILE } from './commands/profile.js';
import { COMMANDS as ACCOUNT } from './commands/account.js';
import { COMMANDS as KEYS } from './commands/keys.js';
import { COMMANDS as GROUPS } from './commands/groups.js';
import { COMMANDS as PKPS } from './commands/pkps.js';
import { COMMANDS as ACTIONS } from './commands/actions.js';
import { COMMANDS as RUN } from './commands/run.js';
import { COMMANDS as CREDITS } from './commands/credits.js';
import { COMMANDS as VERIFY } from './commands/verify.js';
import { COMMANDS as RUNS } from './commands/runs.js';

export const ALL_COMMANDS = [...PROFILE, ...ACCOUNT, ...KEYS, ...GROUPS, ...PKPS, ...ACTIONS, ...RUN, ...CREDITS, ...VERIFY, ...RUNS];

/// Options every command takes.
export const GLOBAL_OPTIONS = {
  json: { type: 'boolean', help: 'print the answer (or the error) as JSON on stdout, for scripts' },
  help: { type: 'boolean', short: 'h', help: 'explain the command' },
  profile: { type: 'string', help: 'use this profile instead of the current one' },
  url: { type: 'string', help: 'the service root (overrides the profile)' },
  'key-file': { type: 'string', help: 'read the API key from this file' },
  'key-env': { type: 'string', help: 'read the API key from this environment variable' },
  'ca-file': { type: 'string', help: "trust this PEM file for the service's certificate" },
};

function globalHelp() {
  const width = Math.max(...ALL_COMMANDS.map((c) => c.path.join(' ').length));
  const lines = [
    'usage: sigil COMMAND [ARGS] [--json] [--profile NAME] [--url URL] [--key-file FILE | --key-env VAR] [--ca-file PEM]',
    '',
    'Sigil runs JavaScript actions with wallet keys (PKPs) under per-account groups. Commands:',
    '',
  ];
  for (const c of ALL_COMMANDS) lines.push(`  sigil ${c.path.join(' ').padEnd(width)}  ${c.summary}`);
  lines.push('', 'Every command takes --help. Without a profile, sigil talks to the stack scripts/start runs from',
    'this checkout (https://127.0.0.1:8443, its certificate, chain and gateway; SIGIL_HOME as for scripts/start).',
    'Try: sigil account create --save-key ~/.sigil-key; sigil credits buy 500; sigil run --local action.js');
  return lines.join('\n');
}

function commandHelp(command) {
  const lines = [`usage: sigil ${command.path.join(' ')} ${command.usage ?? ''}`.trimEnd(), '', command.help ?? command.summary, ''];
  const options = Object.entries(command.options ?? {});
  if (options.length) {
    lines.push('options:');
    for (const [name, o] of options) lines.push(`  --${name}${o.type === 'string' ? ' ' + (o.valueName ?? 'VALUE') : ''}`.padEnd(28) + ` ${o.help ?? ''}`);
  }
  lines.push('common options:');
  for (const [name, o] of Object.entries(GLOBAL_OPTIONS)) {
    lines.push(`  --${name}${o.type === 'string' ? ' VALUE' : ''}`.padEnd(28) + ` ${o.help}`);
  }
  return lines.join('\n');
}

/// The command named by the leading words of argv, and the rest.
function findCommand(argv) {
  const words = [];
  let i = 0;
  while (i < argv.length && (argv[i] === '--json' || argv[i] === '--help' || argv[i] === '-h')) i++;
  const lead = argv.slice(0, i);
  for (let j = i; j < argv.length && !argv[j].startsWith('-'); j++) words.push(argv[j]);
  for (let n = Math.min(words.length, 2); n >= 1; n--) {
    const path = words.slice(0, n);
    const command = ALL_COMMANDS.find((c) => c.path.length === n && c.path.every((w, k) => w === path[k]));
    if (command) return { command, rest: [...lead, ...argv.slice(i + n)] };
  }
  return { command: null, rest: argv, words };
}

function stripHelp(options) {
  return Object.fromEntries(Object.entries(options).map(([k, { type, short, multiple }]) =>
    [k, Object.fromEntries(Object.entries({ type, short, multiple }).filter(([, v]) => v !== undefined))]));
}

/// Runs the CLI on `argv` and answers the exit status (0 ok, 1 failed, 2 usage error).
export async function main(argv, { stdout = process.stdout, stderr = process.stderr } = {}) {
  const wantsJson = argv.includes('--json');
  const out = new Output({ json: wantsJson, out: stdout, err: stderr });
  const { command, rest, words } = findCommand(argv);
  if (!command) {
    if (argv.length === 0 || argv.every((a) => a === '--help' || a === '-h')) {
      stdout.write(globalHelp() + '\n');
      return argv.length === 0 ? 2 : 0;
    }
    const group = ALL_COMMANDS.filter((c) => c.path[0] === words?.[0]);
    if (group.length && (argv.includes('--help') || argv.includes('-h') || words.length === 1)) {
      stdout.write(`sigil ${words[0]} commands:\n` + group.map((c) => `  sigil ${c.path.join(' ')} ${c.usage ?? ''}\n      ${c.summary}`).join('\n') + '\n');
      return words.length === 1 && !argv.includes('--help') && !argv.includes('-h') ? 2 : 0;
    }
    return out.error(new CliError('usage', `unknown command "${(words ?? []).join(' ') || argv[0]}"`, 'sigil --help lists the commands'));
  }
  if (command.passthrough) return runPassthrough(command, rest, out, stdout);
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: stripHelp({ ...GLOBAL_OPTIONS, ...(command.options ?? {}) }), allowPositionals: true, strict: true });
  } catch (e) {
    return out.error(new CliError('usage', e.message.replace(/\. To specify a positional.*$/s, ''), `sigil ${command.path.join(' ')} --help`));
  }
  if (parsed.values.help) {
    stdout.write(commandHelp(command) + '\n');
    return 0;
  }
  const [min, max] = command.args ?? [0, 0];
  if (parsed.positionals.length < min || parsed.positionals.length > max) {
    return out.error(new CliError('usage', `usage: sigil ${command.path.join(' ')} ${command.usage ?? ''}`.trimEnd(),
      `sigil ${command.path.join(' ')} --help`));
  }
  let ctx;
  try {
    ctx = new Context(parsed.values, out);
    const status = await command.run(ctx, parsed.positionals, parsed.values);
    return typeof status === 'number' ? status : 0;
  } catch (e) {
    return out.error(e, ctx?.settings);
  }
}

/// A command whose flags belong to another program (sigil verify): only the CLI's own global
/// options are taken out; the rest goes through untouched.
async function runPassthrough(command, rest, out, stdout) {
  const flags = {};
  const args = [];
  for (let i = 0; i < rest.length; i++) {
    const name = rest[i].startsWith('--') ? rest[i].slice(2) : null;
    if (name && GLOBAL_OPTIONS[name]?.type === 'string' && i + 1 < rest.length) flags[name] = rest[++i];
    else if (name === 'json') flags.json = true;
    else args.push(rest[i]);
  }
  if (args.includes('--help') || args.includes('-h')) {
    stdout.write(commandHelp(command) + '\n\n');
  }
  let ctx;
  try {
    ctx = new Context(flags, out);
    return await command.run(ctx, args, flags);
  } catch (e) {
    return out.error(e, ctx?.settings);
  }
}
