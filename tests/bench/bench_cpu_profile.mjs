// Where one hello-world run's CPU goes, by process class (not a test; run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_cpu_profile.mjs [--runs 300] [--concurrency 4] [--billing]
// Starts a stack (tests/api/stack.mjs), makes RUNS runs of hello world through nginx and TLS, and
// reads each of the stack's processes' CPU time and page faults from /proc before and after: user +
// system time of nginx, the supervisor, the workers, the zygotes, their run children (reaped by the
// zygotes, so counted in the zygotes' cutime/cstime), keyd, the lowerer and the chain node; and the
// client's own (Node, TLS). CPU time is what the run costs whatever else the machine is doing, so
// this profile holds on a shared, loaded machine where wall-clock figures do not.
import { readFileSync, readdirSync } from 'node:fs';
import { startStack, newAccount, addGroup } from '../api/stack.mjs';
import { arg } from './support.mjs';

const RUNS = arg('runs', 300);
const CONCURRENCY = arg('concurrency', 4);
const BILLING = process.argv.includes('--billing');
const TICK_MS = 1000 / 100;  // USER_HZ: /proc counts CPU time in ticks of 10 ms

/// Every process's stat: pid -> {ppid, comm, minflt, cminflt, utime, stime, cutime, cstime}.
function snapshot() {
  const all = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let text;
    try { text = readFileSync(`/proc/${name}/stat`, 'utf8'); } catch { continue; }  // gone meanwhile
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const f = text.slice(close + 2).split(' ');  // f[0] is field 3 (state)
    all.set(Number(name), { ppid: Number(f[1]), comm, minflt: Number(f[7]), cminflt: Number(f[8]),
      utime: Number(f[11]), stime: Number(f[12]), cutime: Number(f[13]), cstime: Number(f[14]) });
  }
  return all;
}

/// The pids of `roots` and all their descendants in `all`, each with the class of the root or its
/// command name (workers and zygotes are both the supervisor's children).
function tree(all, roots) {
  const classOf = new Map();
  for (const [pid, cls] of roots) if (all.has(pid)) classOf.set(pid, cls);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of all) {
      if (classOf.has(pid) || !classOf.has(p.ppid)) continue;
      const parent = classOf.get(p.ppid);
      classOf.set(pid, parent === 'supervisor' ? (p.comm.startsWith('sigil-sandbox') ? 'zygotes' : p.comm.startsWith('sigil-worker') ? 'workers' : p.comm) : parent);
      grew = true;
    }
  }
  return classOf;
}

/// CPU ms and faults of each class between two snapshots. A process that appeared meanwhile counts
/// from zero; children reaped meanwhile show in their parent's cutime/cstime and cminflt.
function delta(before, after, classOf) {
  const out = new Map();
  for (const [pid, cls] of classOf) {
    const b = before.get(pid) ?? { utime: 0, stime: 0, cutime: 0, cstime: 0, minflt: 0, cminflt: 0 };
    const a = after.get(pid);
    if (a === undefined) continue;
    // A zygote's own time (its forks) and its reaped run children's, apart.
    const parts = cls === 'zygotes' ? [['zygotes (fork, reap)', false], ['run children', true]] : [[cls, null]];
    for (const [name, children] of parts) {
      const e = out.get(name) ?? { user: 0, sys: 0, faults: 0 };
      if (children !== true) {
        e.user += (a.utime - b.utime) * TICK_MS;
        e.sys += (a.stime - b.stime) * TICK_MS;
        e.faults += a.minflt - b.minflt;
      }
      if (children !== false) {
        e.user += (a.cutime - b.cutime) * TICK_MS;
        e.sys += (a.cstime - b.cstime) * TICK_MS;
        e.faults += a.cminflt - b.cminflt;
      }
      out.set(name, e);
    }
  }
  return out;
}

const stack = await startStack({
  workers: 2,
  runsPerKey: 0,
  billing: BILLING ? { lines: ['starter_credit_cents = 100000000', 'starter_credit_budget_cents = 1000000000000'] } : null,
});
try {
  const { api_key: key } = await newAccount(stack, 'bench cpu');
  const code = 'async function main() { return "Hello World!"; }';
  const cid = JSON.parse((await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) })).text);
  await addGroup(stack, key, 'bench', { pkp_ids_permitted: [], cid_hashes_permitted: [] });
  const added = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: '1', action_ipfs_cid: cid } });
  if (added.status !== 200) throw new Error(`add_action_to_group: ${added.status} ${added.text}`);
  const runOnce = async () => {
    const r = await stack.request('POST', 'sigil_action', { key, body: { code, js_params: {} } });
    if (r.status !== 200 || r.json?.has_error !== false) throw new Error(`run failed: ${r.status} ${r.text.slice(0, 300)}`);
  };
  for (let i = 0; i < 20; i++) await runOnce();  // every worker lowers and caches it; keep-alive opened
  const roots = [[stack.pidOf('nginx'), 'nginx'], [stack.pidOf('supervisor'), 'supervisor'], [stack.pidOf('keyd'), 'keyd'],
    [stack.pidOf('lowerer'), 'lowerer'], [stack.pidOf('devchain'), 'chain node']];
  // What the stack spends doing nothing (timers, polls), per second, to tell it from the runs' cost.
  const IDLE_SECONDS = 5;
  const idleBefore = snapshot();
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const idleAfter = snapshot();
  const idle = delta(idleBefore, idleAfter, tree(idleAfter, roots));
  const before = snapshot();
  const clientBefore = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (next++ < RUNS) await runOnce(); }));
  const seconds = (performance.now() - t0) / 1000;
  const client = process.cpuUsage(clientBefore);
  const after = snapshot();
  const rows = [...delta(before, after, tree(after, roots))].sort((x, y) => (y[1].user + y[1].sys) - (x[1].user + x[1].sys));
  rows.push(['client (node, TLS)', { user: client.user / 1000, sys: client.system / 1000, faults: NaN }]);
  const total = rows.slice(0, -1).reduce((s, [, e]) => s + e.user + e.sys, 0);
  console.log(`hello world, ${RUNS} runs at ${CONCURRENCY} connections, billing ${BILLING ? 'on' : 'off'}, ` +
    `${(RUNS / seconds).toFixed(1)} runs/s, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.log(`${'process class'.padEnd(24)} ${'CPU ms/run'.padStart(10)} ${'user'.padStart(7)} ${'sys'.padStart(7)} ${'share'.padStart(6)} ${'faults/run'.padStart(10)} ${'idle ms/s'.padStart(10)}`);
  for (const [cls, e] of rows) {
    const cpu = e.user + e.sys;
    const share = cls.startsWith('client') ? '' : `${(100 * cpu / total).toFixed(0)}%`;
    console.log(`${cls.padEnd(24)} ${(cpu / RUNS).toFixed(2).padStart(10)} ${(e.user / RUNS).toFixed(2).padStart(7)} ` +
      `${(e.sys / RUNS).toFixed(2).padStart(7)} ${share.padStart(6)} ${Number.isNaN(e.faults) ? ''.padStart(10) : (e.faults / RUNS).toFixed(0).padStart(10)}` +
      (idle.has(cls) ? ` ${((idle.get(cls).user + idle.get(cls).sys) / IDLE_SECONDS).toFixed(1).padStart(10)}` : ''));
  }
  console.log(`${'stack total'.padEnd(24)} ${(total / RUNS).toFixed(2).padStart(10)}`);
} finally {
  await stack.stop();
}
