// sigil runs ...: the run history (issue 26). The account's master key sees every run of the account,
// a usage key its own; `runs logs on|off` (master key) decides whether runs keep their logs.
import { CliError } from '../output.js';

const STATUSES = ['ok', 'script_error', 'time_limit', 'memory_limit', 'response_limit', 'log_limit', 'op_limit',
  'stopped', 'crashed', 'refused', 'failed'];

function line(r) {
  const when = new Date(r.started_ms).toISOString();
  const ending = r.error_code && r.error_code !== r.status ? `${r.status} (${r.error_code})` : r.status;
  return `${when}  ${r.request_id}  ${ending.padEnd(14)} ${String(r.duration_ms).padStart(6)} ms  ${r.cost_cents} cr  ` +
    `${r.cid ?? '-'}  key ${r.key_hash.slice(0, 10)}…`;
}

export const COMMANDS = [
  {
    path: ['runs', 'list'], summary: 'runs newest first: when, request id, ending, time, cost, CID, key',
    usage: '[--status S] [--key-hash H] [--cid CID] [--since MS] [--until MS] [--limit N] [--cursor C]',
    options: {
      status: { type: 'string', help: `only runs that ended so: ${STATUSES.join(', ')}` },
      'key-hash': { type: 'string', valueName: 'HASH', help: "only this key's runs (0x + 64 hex; sigil key list)" },
      cid: { type: 'string', help: 'only runs of this action CID' },
      since: { type: 'string', valueName: 'MS', help: 'runs started at or after this unix time (milliseconds)' },
      until: { type: 'string', valueName: 'MS', help: 'runs started before this unix time (milliseconds)' },
      limit: { type: 'string', valueName: 'N', help: 'runs per page, 1-100 (default 20)' },
      cursor: { type: 'string', help: 'the next page: the cursor a previous list printed' },
    },
    async run(ctx, _args, flags) {
      if (flags.status !== undefined && !STATUSES.includes(flags.status)) {
        throw new CliError('usage', `--status takes one of ${STATUSES.join(', ')}`, 'sigil runs list --status script_error');
      }
      const page = await ctx.client().listRuns({ status: flags.status, key_hash: flags['key-hash'], cid: flags.cid,
        since: flags.since, until: flags.until, limit: flags.limit, cursor: flags.cursor });
      ctx.out.result(page, (p) => [...(p.runs.length ? p.runs.map(line) : ['no runs']),
        ...(p.next_cursor ? [`more: sigil runs list --cursor ${p.next_cursor}`] : [])]);
    },
  },
  {
    path: ['runs', 'get'], usage: 'REQUEST_ID', args: [1, 1],
    summary: "one run by its request id (the X-Request-Id of its answer), with its logs when the account keeps them",
    async run(ctx, [id]) {
      const r = await ctx.client().getRun({ request_id: id });
      ctx.out.result(r, (v) => [line(v), `response sha256 ${v.response_sha256 ?? '-'}, ${v.request_bytes} bytes in, ` +
        `${v.response_bytes} out`, ...(v.pkp_id ? [`pkp ${v.pkp_id}`] : []),
        ...(v.logs !== undefined ? [`logs${v.logs_truncated ? ' (cut)' : ''}:`, v.logs] : [])]);
    },
  },
  {
    path: ['runs', 'logs'], usage: 'on|off', args: [1, 1],
    summary: "keep the logs of the account's runs in the history, or not (the master key)",
    async run(ctx, [state]) {
      if (state !== 'on' && state !== 'off') throw new CliError('usage', 'sigil runs logs takes on or off', 'sigil runs logs on');
      const s = await ctx.client().setRunHistorySettings({ record_logs: state === 'on' });
      ctx.out.result(s, (v) => `runs ${v.record_logs ? 'keep' : 'do not keep'} their logs (at most ${v.log_bytes} bytes each); ` +
        `runs are kept ${Math.round(v.keep_seconds / 86400 * 10) / 10} days`);
    },
  },
];
