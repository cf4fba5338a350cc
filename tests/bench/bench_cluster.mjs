// Several instances behind one load balancer (issue 24; not a test, run by hand):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_cluster.mjs [--runs-instances 1,2,3] [--writes-instances 1,3]
//     [--workers 2] [--clients 8] [--seconds 15] [--inflight 24] [--payers 24] [--block-time 2]
// For each count in --runs-instances: a cluster (tests/api/cluster.mjs: that many full instances, one
// PostgreSQL ledger, one chain, an nginx balancer), --clients clients running a hello-world action
// through the balancer for --seconds; prints runs/s and where the CPU went meanwhile (user + system
// seconds per process class, from /proc, over the measured window) with the load average.
// For each count in --writes-instances: a cluster with a block every --block-time s, --inflight new_account
// calls (one relayed write each) in flight through the balancer for --seconds; prints writes/s, the nonce
// errors (must be 0) and checks each acknowledged account exists.
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { arg, summary } from './support.mjs';
import { startCluster } from '../api/cluster.mjs';
import { newAccount, addGroup, actionRunner, chainRpc } from '../api/stack.mjs';

const list = (name, fallback) => String(arg(name, fallback)).split(',').map(Number).filter((n) => n > 0);
const RUNS_INSTANCES = list('runs-instances', '1,2,3');
const WRITES_INSTANCES = list('writes-instances', '1,3');
const WORKERS = arg('workers', 2);
const CLIENTS = arg('clients', 8);
const SECONDS = arg('seconds', 15);
const INFLIGHT = arg('inflight', 24);
const PAYERS = arg('payers', 24);
const BLOCK_TIME = arg('block-time', 2);
const TICK = 100;  // USER_HZ

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mintOpen = { nginxEnv: { SIGIL_MINT_RATE: '100000r/s', SIGIL_MINT_BURST: '100000' }, runsPerKey: 0 };

// The machine's busy CPU ticks now (every process, ours and others': the machine is shared).
function machineTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];  // user nice system irq softirq steal
}

// CPU ticks (user + system) of this benchmark's processes (the bench and everything it started: the
// cluster), by class, and of the machine's other processes as 'rest of the machine'.
function cpuByClass() {
  const procs = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      procs.set(Number(d), { ppid: Number(rest[1]), ticks: Number(rest[11]) + Number(rest[12]), comm, cmd });
    } catch { /* gone */ }
  }
  const classOf = (pid, p) => {
    if (p.comm.startsWith('nginx')) {
      const master = p.cmd.includes('master') ? p : procs.get(p.ppid);
      return master?.cmd.includes('/balancer/') ? 'nginx (balancer)' : 'nginx (instances)';
    }
    if (p.comm.startsWith('sigil-worker')) return 'sigil-worker';
    if (p.comm.startsWith('sigil-sandbox')) return 'sigil-sandbox (zygotes + runs)';
    if (p.comm.startsWith('sigil-superv')) return 'sigil-supervisor';
    if (p.comm.startsWith('sigil-keyd')) return 'sigil-keyd';
    if (p.comm.startsWith('postgres')) return 'postgres';
    if (p.comm.startsWith('anvil')) return 'anvil';
    if (p.comm === 'node' || p.comm.startsWith('MainThread')) return p.cmd.includes('bench_cluster') ? 'bench client (node)' : 'node (lowerer, devchain)';
    return 'other';
  };
  // Only the bench's own process tree.
  const ours = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of procs) if (!ours.has(pid) && ours.has(p.ppid)) { ours.add(pid); grew = true; }
  }
  for (const pid of [...procs.keys()]) if (!ours.has(pid)) procs.delete(pid);
  const out = new Map();
  for (const [pid, p] of procs) {
    const c = classOf(pid, p);
    out.set(c, (out.get(c) ?? 0) + p.ticks);
  }
  // Children already reaped (sandbox children exit per run) are counted in their parent's cumulative
  // times (cutime/cstime) only once waited for: add each process's waited-for children too.
  for (const d of procs.keys()) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const reaped = Number(rest[13]) + Number(rest[14]);
      if (reaped) {
        const p = procs.get(d);
        const c = p.comm.startsWith('sigil-sandbox') || p.comm.startsWith('sigil-worker') ? 'sigil-sandbox (zygotes + runs)' : classOf(d, p);
        out.set(c, (out.get(c) ?? 0) + reaped);
      }
    } catch { /* gone */ }
  }
  let mine = 0;
  for (const t of out.values()) mine += t;
  out.set('rest of the machine (other users)', machineTicks() - mine);
  return out;
}

function cpuReport(before, after, seconds) {
  const rows = [];
  for (const [c, t] of after) {
    const used = (t - (before.get(c) ?? 0)) / TICK;
    if (used > 0.05) rows.push([c, used]);
  }
  rows.sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, u]) => s + u, 0);  // the machine's busy time in the window
  return rows.map(([c, u]) => `    ${c.padEnd(36)} ${u.toFixed(1).padStart(6)} s CPU  ${(100 * u / total).toFixed(0).padStart(3)}%  (${(u / seconds).toFixed(2)} cores)`).join('\n');
}

async function benchRuns(n) {
  const cluster = await startCluster({ instances: n, workers: WORKERS, maxWorkers: Math.max(16, WORKERS * 2), payers: Math.max(8, n),
    billingLines: ['starter_credit_cents = 1000000', 'starter_credit_budget_cents = 1000000000'], stackOptions: mintOpen });
  try {
    const inst0 = cluster.instances[0];
    const acct = await newAccount(inst0, 'bench');
    const group = await addGroup(inst0, acct.api_key, 'bench');
    const code = 'async function main() { return "Hello World!"; }';
    await actionRunner(inst0, { owner: acct.api_key, group, key: acct.api_key })(code);
    const run = () => cluster.request('POST', 'sigil_action', { key: acct.api_key, body: { code } });
    await Promise.all(Array.from({ length: CLIENTS * 2 }, run));  // every instance's workers and zygotes warm
    const cpu0 = cpuByClass();
    const latencies = [];
    const others = new Map();
    const t0 = performance.now();
    const end = t0 + SECONDS * 1000;
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const r = await run();
        if (r.status === 200) latencies.push(performance.now() - t);
        else others.set(`${r.status} ${r.json?.error?.code ?? ''}`, (others.get(`${r.status} ${r.json?.error?.code ?? ''}`) ?? 0) + 1);
      }
    }));
    const elapsed = (performance.now() - t0) / 1000;
    const cpu1 = cpuByClass();
    const s = summary(latencies);
    const load = loadavg().map((x) => x.toFixed(2)).join(' ');
    const p50 = s.p50.toFixed(0);
    const p99 = s.p99.toFixed(0);
    console.log(`runs, ${n} instance(s) x ${WORKERS} workers, ${CLIENTS} clients through the balancer: ` +
      `${(latencies.length / elapsed).toFixed(1)} runs/s, p50 ${p50} ms, p99 ${p99} ms` +
      `${others.size ? `, others ${JSON.stringify(Object.fromEntries(others))}` : ''}; load average ${load}`);
    console.log(cpuReport(cpu0, cpu1, elapsed));
    return latencies.length / elapsed;
  } finally {
    await cluster.stop();
  }
}

async function benchWrites(n) {
  const cluster = await startCluster({ instances: n, workers: WORKERS, maxWorkers: Math.max(16, INFLIGHT), payers: PAYERS,
    billingLines: ['starter_credit_cents = 100', 'starter_credit_budget_cents = 1000000000'], stackOptions: mintOpen });
  try {
    const post = () => cluster.request('POST', 'new_account', { body: { account_name: 'bench', account_description: '' } });
    await Promise.all(Array.from({ length: n * WORKERS }, post));  // warm, automine still on
    await chainRpc(cluster.chain, 'evm_setAutomine', [false]);
    await chainRpc(cluster.chain, 'evm_setIntervalMining', [BLOCK_TIME]);
    const acked = [];
    const others = new Map();
    let nonceErrors = 0;
    const t0 = performance.now();
    const end = t0 + SECONDS * 1000;
    await Promise.all(Array.from({ length: INFLIGHT }, async () => {
      while (performance.now() < end) {
        const r = await post();
        if (r.status === 200 && r.json?.api_key) acked.push(r.json.api_key);
        else {
          const c = `${r.status} ${r.json?.error?.code ?? r.text.slice(0, 60)}`;
          others.set(c, (others.get(c) ?? 0) + 1);
          if (/nonce/i.test(r.text)) nonceErrors++;
          if (r.status === 503) await sleep(200);
        }
      }
    }));
    const elapsed = (performance.now() - t0) / 1000;
    const load = loadavg().map((x) => x.toFixed(2)).join(' ');
    console.log(`writes, ${n} instance(s), ${PAYERS} payers split, ${INFLIGHT} in flight, block time ${BLOCK_TIME} s: ` +
      `${(acked.length / elapsed).toFixed(1)} writes/s acknowledged, nonce errors ${nonceErrors}` +
      `${others.size ? `, others ${JSON.stringify(Object.fromEntries(others))}` : ''}; load average ${load}`);
    await chainRpc(cluster.chain, 'evm_setIntervalMining', [0]);
    await chainRpc(cluster.chain, 'evm_setAutomine', [true]);
    let missing = 0;
    for (let i = 0; i < acked.length; i += 16) {
      const found = await Promise.all(acked.slice(i, i + 16).map(async (k) =>
        (await cluster.request('GET', 'account_exists', { key: k })).json === true));
      missing += found.filter((f) => !f).length;
    }
    console.log(`    every acknowledged account on chain: ${missing === 0 ? 'yes' : `NO, ${missing} missing`}`);
    return acked.length / elapsed;
  } finally {
    await cluster.stop();
  }
}

const runs = new Map();
for (const n of RUNS_INSTANCES) runs.set(n, await benchRuns(n));
if (runs.size > 1) {
  const base = runs.get(Math.min(...runs.keys()));
  console.log('runs/s ratios: ' + [...runs].map(([n, r]) => `${n}: ${(r / base).toFixed(2)}x`).join(', '));
}
const writes = new Map();
for (const n of WRITES_INSTANCES) writes.set(n, await benchWrites(n));
if (writes.size > 1) {
  const base = writes.get(Math.min(...writes.keys()));
  console.log('writes/s ratios: ' + [...writes].map(([n, w]) => `${n}: ${(w / base).toFixed(2)}x`).join(', '));
}
