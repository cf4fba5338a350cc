// Benchmark of issue 23 (concurrency: a run that waits holds no worker, a slow chain stalls nothing).
// Not a test; run by hand (tests/bench/README.md):
//   SIGIL_BUILD_DIR=build node tests/bench/bench_concurrency.mjs [--parts ceiling,hello,fetch,memory,chain]
//     [--seconds 15] [--warmup 3] [--connections 16,256] [--delay-ms 200] [--hello-seconds 10]
//     [--chain-inflight 64] [--pause-seconds 10] [--chain-bound list_groups|run] [--memory-inflight 256]
//     [--runs-per-key 4] [--workers 4] [--max-workers N] [--min-spare-workers N] [--max-spare-workers N] [--reserve-workers N]
//     [--zygotes N] [--payers N] [--circuit-slow-ms N] [--tx-replace-after-ms N]
//     [--supervisor-option 'key = value']... [--chain-option ...] [--actions-option ...] [--worker-option ...]
// One stack (tests/api/stack.mjs: anvil, keyd, sigil-lowerer, supervisor and workers, nginx over TLS)
// carries every part, in this order, each through nginx with keep-alive HTTPS connections:
//   memory (idle)  the stack's PSS per role (/proc/PID/smaps_rollup) once set up and warm, no load;
//   ceiling        nginx alone (its /evidences/ listing) at the largest of --connections for 5 s: what
//                  this client, TLS and nginx carry on this machine, the bound of every figure below;
//   hello          hello world and signMessage with a PKP: runs/s and p50/p99 at --hello-concurrency (16);
//   fetch          an action that awaits one fetch of a local server answering after --delay-ms (200):
//                  runs/s and p50/p99 at each of --connections, --warmup s unmeasured then --seconds s;
//   memory (load)  PSS per role with --memory-inflight (256) slow-fetch runs kept in flight (sampled
//                  during the fetch part at that many connections, or on its own load);
//   chain          the chain node paused (SIGSTOP anvil) for --pause-seconds with --chain-inflight (64)
//                  chain-bound requests kept in flight (list_groups with the owner key, or with
//                  --chain-bound run a run by CID, which needs canExecute; each sent again when it ends):
//                  p50/p99 of /core/v1/version, /health and the CID helper measured meanwhile, the status
//                  and time of every chain-bound answer (issue 23: all typed 503/504 within 2.5 s), and
//                  after SIGCONT the time until a chain-bound request succeeds again. First, as a control,
//                  the same load and probes for up to 5 s with the node running: a chain-free request's
//                  latency under this load when nothing stalls.
// Runs are spread over usage keys, --runs-per-key connections each (one key may have only [billing]
// max_concurrent_runs_per_key, default 8, runs in flight across the pool; more answer 429).
// Every run's answer is checked (200, has_error false, the expected response); failures are counted
// by status and code and printed, never retried. The last line is `BENCH_CONCURRENCY {json}`.
// The new pool's keys ([supervisor] max_workers, ...; [chain] payers, ...) go into the stack's
// configuration only when given, so the same script runs on a build that does not know them.
import { performance } from 'node:perf_hooks';
import https from 'node:https';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { startStack, newAccount, addGroup, addUsageKey, createWallet, actionCid, httpsRequest } from '../api/stack.mjs';
import { startSlowServer } from '../api/slow_server.mjs';
import { arg, summary } from './support.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/// The text after `--name`, else `fallback`; every occurrence with `all`.
function text(name, fallback = null) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
function texts(name) {
  const out = [];
  process.argv.forEach((a, i) => { if (a === `--${name}` && i + 1 < process.argv.length) out.push(process.argv[i + 1]); });
  return out;
}

const PARTS = new Set((text('parts') ?? 'ceiling,hello,fetch,memory,chain').split(',').map((s) => s.trim()));
for (const p of PARTS) if (!['ceiling', 'hello', 'fetch', 'memory', 'chain'].includes(p)) throw new Error(`--parts: unknown part ${p}`);
const SECONDS = arg('seconds', 15);
const WARMUP = arg('warmup', 3);
const CONNECTIONS = (text('connections') ?? '16,256').split(',').map(Number);
const DELAY_MS = arg('delay-ms', 200);
const HELLO_SECONDS = arg('hello-seconds', 10);
const HELLO_CONCURRENCY = arg('hello-concurrency', 16);
const CHAIN_INFLIGHT = arg('chain-inflight', 64);
const PAUSE_SECONDS = arg('pause-seconds', 10);
const CHAIN_BOUND = text('chain-bound', 'list_groups');
if (!['list_groups', 'run'].includes(CHAIN_BOUND)) throw new Error('--chain-bound: list_groups or run');
const MEMORY_INFLIGHT = arg('memory-inflight', 256);
const WORKERS = arg('workers', 4);
// One key may have only [billing] max_concurrent_runs_per_key (default 8) runs in flight across the pool,
// and a full instance serves many callers: runs are spread over usage keys, this many connections each.
const RUNS_PER_KEY = arg('runs-per-key', 4);

// The stack's configuration: the new pool's keys only when given (an old build refuses unknown keys).
// A key that tests/api/stack.mjs writes itself when it has an option for it (max_workers, which is
// also nginx's bound, as maxWorkers; [chain] payers, which keyd and the dev chain must match, as
// chainPayers) goes through that option; a stack.mjs without the option gets the line instead.
const supervisorOptions = [];
const chainOptions = [];
const stackOptions = {};
const stackTakes = (name) => new RegExp(`\\b${name}\\b`).test(startStack.toString());
for (const [flag, key, lines, option] of [['max-workers', 'max_workers', supervisorOptions, 'maxWorkers'],
  ['min-spare-workers', 'min_spare_workers', supervisorOptions], ['max-spare-workers', 'max_spare_workers', supervisorOptions],
  ['reserve-workers', 'reserve_workers', supervisorOptions], ['zygotes', 'zygotes', supervisorOptions],
  ['payers', 'payers', chainOptions, 'chainPayers'], ['circuit-slow-ms', 'circuit_slow_ms', chainOptions],
  ['tx-replace-after-ms', 'tx_replace_after_ms', chainOptions]]) {
  const v = text(flag);
  if (v !== null) {
    if (!/^[0-9]+$/.test(v)) throw new Error(`--${flag} needs a whole number`);
    if (option && stackTakes(option)) stackOptions[option] = Number(v);
    else lines.push(`${key} = ${v}`);
  }
}
supervisorOptions.push(...texts('supervisor-option'));
chainOptions.push(...texts('chain-option'));
const actionsOptions = ['fetch_allowed_addresses = 127.0.0.1', ...texts('actions-option')];
const workerOptions = texts('worker-option');

const FETCH_CODE = 'async function main({ url }) { const r = await fetch(url); return await r.text(); }';
const HELLO_CODE = 'async function main() { return "Hello World!"; }';
const SIGN_CODE = 'async function main({ pkpId }) { return await Lit.Actions.signMessage({ pkpId, message: "bench" }); }';

// --- process memory ------------------------------------------------------------------------------

/// pid -> {ppid, comm} of every process (from /proc).
function processTable() {
  const table = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = st.lastIndexOf(')');
      table.set(Number(d), { comm: st.slice(st.indexOf('(') + 1, close), ppid: Number(st.slice(close + 2).split(' ')[1]) });
    } catch { /* exited meanwhile */ }
  }
  return table;
}

/// {pss, priv} in KiB: proportional set size, and private (clean + dirty) memory, which unlike PSS does
/// not depend on how many other processes on the machine (another stack of the same build) map a page.
function memKiB(pid) {
  try {
    const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+([0-9]+) kB`, 'm').exec(t)?.[1] ?? 0);
    return { pss: field('Pss'), priv: field('Private_Clean') + field('Private_Dirty') };
  } catch { return { pss: 0, priv: 0 }; }  // exited meanwhile
}

const ROLES = ['nginx', 'supervisor', 'workers', 'zygotes', 'run children', 'keyd', 'other'];
/// The stack's PSS by role, MiB, and the number of processes of each: nginx (master and workers),
/// the supervisor, sigil-worker processes, sandbox zygotes (a sigil-sandbox whose parent is not one;
/// a worker's own on the old shape, the supervisor's on the new), run children (a sigil-sandbox forked by
/// a zygote), keyd, and anything else under the supervisor. sigil-lowerer (a Node daemon, optional) is
/// reported on its own, outside the total; anvil is the chain, not the service.
function memory(stack) {
  const table = processTable();
  const kids = new Map();
  for (const [pid, p] of table) {
    if (!kids.has(p.ppid)) kids.set(p.ppid, []);
    kids.get(p.ppid).push(pid);
  }
  const subtree = (root) => {
    const out = [];
    const todo = root ? [root] : [];
    while (todo.length) {
      const pid = todo.pop();
      if (!table.has(pid)) continue;
      out.push(pid);
      todo.push(...(kids.get(pid) ?? []));
    }
    return out;
  };
  const roles = Object.fromEntries([...ROLES, 'lowerer'].map((r) => [r, { n: 0, kib: 0, priv: 0 }]));
  const add = (role, pid) => {
    const m = memKiB(pid);
    roles[role].n++;
    roles[role].kib += m.pss;
    roles[role].priv += m.priv;
  };
  for (const pid of subtree(stack.pidOf('nginx'))) add('nginx', pid);
  for (const pid of subtree(stack.pidOf('keyd'))) add('keyd', pid);
  for (const pid of subtree(stack.pidOf('lowerer'))) add('lowerer', pid);
  const sup = stack.pidOf('supervisor');
  for (const pid of subtree(sup)) {
    const p = table.get(pid);
    if (pid === sup) add('supervisor', pid);
    else if (p.comm.startsWith('sigil-worker')) add('workers', pid);
    else if (p.comm.startsWith('sigil-sandbox')) add(table.get(p.ppid)?.comm.startsWith('sigil-sandbox') ? 'run children' : 'zygotes', pid);
    else add('other', pid);
  }
  const mib = (k) => +(k / 1024).toFixed(1);
  const out = { total_mib: mib(ROLES.reduce((s, r) => s + roles[r].kib, 0)),
    private_mib: mib(ROLES.reduce((s, r) => s + roles[r].priv, 0)), roles: {} };
  for (const [r, v] of Object.entries(roles)) out.roles[r] = { n: v.n, mib: mib(v.kib), private_mib: mib(v.priv) };
  return out;
}

function printMemory(label, m) {
  const parts = [...ROLES, 'lowerer'].filter((r) => m.roles[r].n > 0)
    .map((r) => `${r} ${m.roles[r].mib} (${m.roles[r].n})`);
  console.log(`memory ${label}: PSS total ${m.total_mib} MiB, private ${m.private_mib} MiB (without sigil-lowerer); ` +
    `PSS by role MiB (processes): ${parts.join(', ')}; private by role MiB: ` +
    [...ROLES, 'lowerer'].filter((r) => m.roles[r].n > 0).map((r) => `${r} ${m.roles[r].private_mib}`).join(', '));
}

// --- load ----------------------------------------------------------------------------------------

/// What went wrong with a run's answer, or null when it is right.
function runVerdict(r, expect) {
  if (r.status !== 200) return `${r.status} ${r.json?.error?.code ?? 'untyped'}`;
  if (r.json?.has_error !== false) return `200 run_${r.json?.error?.code ?? 'not_json'}`;
  if (expect !== undefined && !expect(r.json.response)) return '200 wrong_response';
  return null;
}

/// Keeps `concurrency` requests in flight for warmupMs + measureMs over its own keep-alive connections;
/// counts the answers that arrive in the measured window. `during(t)` is called at the given fractions
/// of the window (memory samples). Returns {rate, lat (summary), failures {kind: n}, done, ...}.
async function load(stack, { concurrency, warmupMs, measureMs, send, verdict, during = null, at = [] }) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, rejectUnauthorized: false });
  const samples = [];
  const t0 = performance.now();
  const tMeasure = t0 + warmupMs;
  const tEnd = tMeasure + measureMs;
  const probes = during ? at.map(async (f) => {
    await sleep(tMeasure + f * measureMs - performance.now());
    return during(f);
  }) : [];
  await Promise.all(Array.from({ length: concurrency }, async (_, connection) => {
    while (performance.now() < tEnd) {
      const s = performance.now();
      let bad;
      let retryAfter = 0;
      try {
        const res = await send(agent, connection);
        bad = verdict(res);
        // A full service says when to come back (503 overloaded, Retry-After: 1); a client that
        // honours it does not spin on refusals.
        if (bad && res.headers['retry-after']) retryAfter = Math.min(1000, 1000 * Number(res.headers['retry-after']) || 0);
      } catch (e) {
        bad = `error ${e.code ?? e.message.slice(0, 40)}`;
      }
      samples.push({ s, e: performance.now(), bad });
      if (retryAfter > 0) await sleep(retryAfter);
    }
  }));
  const drainedMs = performance.now() - tEnd;
  agent.destroy();
  const counted = samples.filter((x) => x.e >= tMeasure && x.e <= tEnd);
  const good = counted.filter((x) => !x.bad);
  const failures = {};
  for (const x of samples) if (x.bad) failures[x.bad] = (failures[x.bad] ?? 0) + 1;
  return {
    concurrency, rate: good.length / (measureMs / 1000), answers: counted.length, ok: good.length,
    lat: summary(good.map((x) => x.e - x.s)), failures, drainedMs, probes: await Promise.all(probes),
  };
}

const r1 = (x) => (Number.isFinite(x) ? +x.toFixed(1) : null);
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
function printLoad(name, r, unit = 'runs/s') {
  const fails = Object.keys(r.failures).length ? ` FAILURES ${JSON.stringify(r.failures)}` : '';
  console.log(`${name.padEnd(28)} c=${String(r.concurrency).padEnd(4)} ${r.rate.toFixed(1).padStart(8)} ${unit.padEnd(6)}   p50 ${f1(r.lat.p50).padStart(8)} ms` +
    `   p99 ${f1(r.lat.p99).padStart(8)} ms   max ${f1(r.lat.max).padStart(8)} ms   (${r.ok} ok in the window)${fails}`);
}

function loadavg() {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

// --- the benchmark -------------------------------------------------------------------------------

const results = { load_start: loadavg(), nproc: Number(execSync('nproc').toString().trim()), workers: WORKERS,
  stack_options: stackOptions, supervisor_options: supervisorOptions, chain_options: chainOptions };
const slow = await startSlowServer({ delayMs: DELAY_MS });
const stack = await startStack({ workers: WORKERS, ...stackOptions, supervisorOptions, chainOptions, actions: actionsOptions, workerOptions });
try {
  const { api_key: key } = await newAccount(stack, 'bench concurrency');
  const pkp = await createWallet(stack, key);
  const group = await addGroup(stack, key, 'bench', { pkp_ids_permitted: [pkp], cid_hashes_permitted: [] });
  const cids = {};
  for (const [name, code] of Object.entries({ fetch: FETCH_CODE, hello: HELLO_CODE, sign: SIGN_CODE })) {
    cids[name] = await actionCid(stack, code);
    const r = await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cids[name] } });
    if (r.status !== 200) throw new Error(`add_action_to_group: ${r.status} ${r.text}`);
  }
  const body = (code) => Buffer.from(JSON.stringify({ code, pkp_id: pkp, js_params: { pkpId: pkp, url: slow.url } }));
  const bodies = { fetch: body(FETCH_CODE), hello: body(HELLO_CODE), sign: body(SIGN_CODE) };
  // Usage keys allowed to run in the group: connection i runs with keys[i % keys.length].
  const most = Math.max(1, ...(PARTS.has('fetch') ? CONNECTIONS : []), PARTS.has('hello') ? HELLO_CONCURRENCY : 0,
    PARTS.has('memory') ? MEMORY_INFLIGHT : 0, PARTS.has('chain') && CHAIN_BOUND === 'run' ? CHAIN_INFLIGHT : 0);
  const keys = [];
  while (keys.length < Math.ceil(most / RUNS_PER_KEY)) {
    const n = Math.min(4, Math.ceil(most / RUNS_PER_KEY) - keys.length);
    keys.push(...await Promise.all(Array.from({ length: n }, (_, i) =>
      addUsageKey(stack, key, { execute_in_groups: [Number(group)] }, `runner ${keys.length + i}`))));
  }
  const runRequest = (which) => (agent, connection = 0) => httpsRequest(agent, `${stack.url}/core/v1/sigil_action`, 'POST', {
    headers: { 'X-Api-Key': keys[connection % keys.length], 'Content-Type': 'application/json', 'Content-Length': String(bodies[which].length) }, body: bodies[which] });
  const expect = {
    fetch: (resp) => resp === `slow ${DELAY_MS}`,
    hello: (resp) => resp === 'Hello World!',
    sign: (resp) => /^0x[0-9a-f]{130}$/.test(resp ?? ''),
  };
  // Warm: every worker lowers and caches each action; a failure here is a broken stack.
  for (const which of ['fetch', 'hello', 'sign']) {
    for (let i = 0; i < 3 * WORKERS; i++) {
      const bad = runVerdict(await runRequest(which)(stack.agent), expect[which]);
      if (bad) throw new Error(`warm-up run of ${which}: ${bad}`);
    }
  }

  results.keys = keys.length;
  const shape = [`${WORKERS} workers`, `${keys.length} usage keys`, ...Object.entries(stackOptions).map(([k, v]) => `${k} ${v}`), ...supervisorOptions, ...chainOptions].join(', ');
  console.log(`Sigil concurrency benchmark (issue 23): ${shape}; build ${process.env.SIGIL_BUILD_DIR ?? 'build'}; ` +
    `nproc ${results.nproc}; load average at start ${results.load_start}`);

  if (PARTS.has('memory')) {
    await sleep(2000);
    results.memory_idle = memory(stack);
    printMemory('idle', results.memory_idle);
  }

  if (PARTS.has('ceiling')) {
    const c = Math.max(...CONNECTIONS);
    const r = await load(stack, { concurrency: c, warmupMs: 1000, measureMs: 5000,
      send: (agent) => httpsRequest(agent, `${stack.url}/evidences/`, 'GET'), verdict: (res) => (res.status === 200 ? null : `${res.status}`) });
    results.ceiling = { concurrency: c, rate: r1(r.rate), p50: r1(r.lat.p50), p99: r1(r.lat.p99), failures: r.failures };
    printLoad('nginx alone (/evidences/)', r, 'req/s');
  }

  if (PARTS.has('hello')) {
    results.hello = {};
    for (const which of ['hello', 'sign']) {
      const r = await load(stack, { concurrency: HELLO_CONCURRENCY, warmupMs: 2000, measureMs: HELLO_SECONDS * 1000,
        send: runRequest(which), verdict: (res) => runVerdict(res, expect[which]) });
      results.hello[which] = { concurrency: r.concurrency, rate: r1(r.rate), p50: r1(r.lat.p50), p99: r1(r.lat.p99), failures: r.failures };
      printLoad(which === 'hello' ? 'hello world' : 'signMessage (PKP)', r);
    }
  }

  // Samples the memory of the stack during a load: the sample with the most run children alive.
  const memoryDuring = async (lo) => {
    const samples = lo.probes.filter(Boolean);
    return samples.sort((a, b) => b.roles['run children'].n - a.roles['run children'].n)[0] ?? null;
  };
  if (PARTS.has('fetch')) {
    results.fetch = {};
    for (const c of CONNECTIONS) {
      const sampleHere = PARTS.has('memory') && c === MEMORY_INFLIGHT;
      const r = await load(stack, { concurrency: c, warmupMs: WARMUP * 1000, measureMs: SECONDS * 1000,
        send: runRequest('fetch'), verdict: (res) => runVerdict(res, expect.fetch),
        during: sampleHere ? () => memory(stack) : null, at: [0.4, 0.6, 0.8] });
      results.fetch[c] = { rate: r1(r.rate), p50: r1(r.lat.p50), p99: r1(r.lat.p99), max: r1(r.lat.max), ok: r.ok, failures: r.failures,
        drained_ms: Math.round(r.drainedMs) };
      printLoad(`${DELAY_MS} ms fetch action`, r);
      if (sampleHere) results.memory_load = await memoryDuring(r);
    }
  }
  if (PARTS.has('memory')) {
    if (!results.memory_load) {
      const r = await load(stack, { concurrency: MEMORY_INFLIGHT, warmupMs: WARMUP * 1000, measureMs: 6000,
        send: runRequest('fetch'), verdict: (res) => runVerdict(res, expect.fetch), during: () => memory(stack), at: [0.3, 0.6, 0.9] });
      printLoad(`${DELAY_MS} ms fetch (memory load)`, r);
      results.memory_load = await memoryDuring(r);
    }
    printMemory(`with ${MEMORY_INFLIGHT} slow-fetch runs kept in flight by the client`, results.memory_load);
  }

  if (PARTS.has('chain')) results.chain = await chainPaused(stack, { key, keys, pkp, cid: cids.hello });
} finally {
  if (stack.anvilPid) try { process.kill(stack.anvilPid, 'SIGCONT'); } catch { /* gone */ }
  await stack.stop();
  await slow.stop();
}
results.load_end = loadavg();
console.log(`load average at the end ${results.load_end}`);
console.log(`BENCH_CONCURRENCY ${JSON.stringify(results)}`);

/// Part c: the chain node paused with CHAIN_INFLIGHT chain-bound requests kept in flight.
async function chainPaused(stack, { key, keys, pkp, cid }) {
  const chainBound = CHAIN_BOUND === 'run'
    ? (agent, i = 0) => {
      const b = Buffer.from(JSON.stringify({ ipfs_id: cid, pkp_id: pkp }));
      return httpsRequest(agent, `${stack.url}/core/v1/sigil_action`, 'POST',
        { headers: { 'X-Api-Key': keys[i % keys.length], 'Content-Type': 'application/json', 'Content-Length': String(b.length) }, body: b });
    }
    : (agent) => httpsRequest(agent, `${stack.url}/core/v1/list_groups?page_number=0&page_size=10`, 'GET', { headers: { 'X-Api-Key': key } });
  // The run by CID needs its code from the gateway the first time; it is cached afterwards.
  writeFileSync(`${stack.gatewayDir}/${cid}`, HELLO_CODE, { mode: 0o644 });
  const before = await chainBound(stack.agent);
  if (before.status !== 200) throw new Error(`chain-bound request before the pause: ${before.status} ${before.text.slice(0, 200)}`);

  const cidBody = Buffer.from(JSON.stringify(HELLO_CODE));
  const chainFree = {
    version: (agent) => httpsRequest(agent, `${stack.url}/core/v1/version`, 'GET'),
    health: (agent) => httpsRequest(agent, `${stack.url}/health`, 'GET'),
    cid_helper: (agent) => httpsRequest(agent, `${stack.url}/core/v1/get_sigil_action_ipfs_id`, 'POST',
      { headers: { 'Content-Type': 'application/json', 'Content-Length': String(cidBody.length) }, body: cidBody }),
  };
  const loadAgent = new https.Agent({ keepAlive: true, maxSockets: CHAIN_INFLIGHT, rejectUnauthorized: false });
  const probeAgent = new https.Agent({ keepAlive: true, maxSockets: 8, rejectUnauthorized: false });
  // Open the probes' connections first, so a TLS handshake is not measured as a stall.
  await Promise.all(Object.values(chainFree).map((f) => f(probeAgent)));

  const startLoad = () => {
    const load = { stop: false, answers: [] };  // every chain-bound answer: {s, e, status, code}
    load.done = Promise.all(Array.from({ length: CHAIN_INFLIGHT }, async (_, i) => {
      while (!load.stop) {
        const s = performance.now();
        let status = 0;
        let code = null;
        try {
          const r = await chainBound(loadAgent, i);
          status = r.status;
          code = r.status === 200 ? (r.json?.has_error ? `run_${r.json.error?.code}` : null) : (r.json?.error?.code ?? 'untyped');
        } catch (e) {
          code = `error ${e.code ?? e.message.slice(0, 40)}`;
        }
        load.answers.push({ s, e: performance.now(), status, code });
      }
    }));
    return load;
  };
  // The chain-free probes, each every 20 ms for `ms`: their latencies and failures.
  const probe = async (ms, onHealth = () => {}) => {
    const lat = Object.fromEntries(Object.keys(chainFree).map((k) => [k, []]));
    const bad = {};
    const from = performance.now();
    await Promise.all(Object.entries(chainFree).map(async ([name, send]) => {
      while (performance.now() - from < ms) {
        const s = performance.now();
        try {
          const r = await send(probeAgent);
          if (r.status === 200) {
            lat[name].push(performance.now() - s);
            if (name === 'health') onHealth(r.json, performance.now() - from);
          } else bad[`${name} ${r.status} ${r.json?.error?.code ?? ''}`] = (bad[`${name} ${r.status} ${r.json?.error?.code ?? ''}`] ?? 0) + 1;
        } catch (e) {
          bad[`${name} ${e.code ?? e.message.slice(0, 40)}`] = (bad[`${name} ${e.code ?? e.message.slice(0, 40)}`] ?? 0) + 1;
        }
        await sleep(20);
      }
    }));
    return { lat, bad };
  };
  const pauseMs = PAUSE_SECONDS * 1000;
  // Control: the same load and probes with the node running, so the pause's cost is read against
  // what the machine gives chain-free requests under this load anyway (a slow VM's fork alone is ms).
  const control = startLoad();
  const running = await probe(Math.min(pauseMs, 5000));
  control.stop = true;
  await control.done;

  process.kill(stack.anvilPid, 'SIGSTOP');
  const pausedAt = performance.now();
  let resumedAt = Infinity;
  const load = startLoad();
  const answers = load.answers;
  let healthSeen = null;
  const { lat: probeLat, bad: probeBad } = await probe(pauseMs, (json, at) => {
    if (at > pauseMs / 2 && !healthSeen) healthSeen = json;
  });
  const left = pauseMs - (performance.now() - pausedAt);
  if (left > 0) await sleep(left);

  process.kill(stack.anvilPid, 'SIGCONT');
  resumedAt = performance.now();
  // Recovery: a fresh chain-bound request every 50 ms until one succeeds (the load keeps going).
  let recoveredMs = null;
  while (performance.now() - resumedAt < 15000) {
    const r = await chainBound(probeAgent).catch(() => null);
    if (r?.status === 200 && !r.json?.has_error) { recoveredMs = performance.now() - resumedAt; break; }
    await sleep(50);
  }
  load.stop = true;
  await load.done;
  loadAgent.destroy();
  probeAgent.destroy();

  // The answers to requests that ended while the node was paused: each must be a typed 503/504
  // within 2.5 s (issue 23).
  // A 200 that began within the event watch's window after the pause (2 x [chain] event_poll_ms, 250 ms
  // by default, plus a poll's budget) came from the pool's cache, as designed (common/shared_cache.h):
  // counted apart, not as a failure to fail closed.
  const watchWindowMs = 2 * 250 + 200;
  const fromCache = answers.filter((a) => a.e < resumedAt && a.status === 200 && !a.code && a.s < pausedAt + watchWindowMs);
  const paused = answers.filter((a) => a.e < resumedAt && !fromCache.includes(a));
  const byStatus = {};
  for (const a of paused) byStatus[`${a.status} ${a.code ?? ''}`.trim()] = (byStatus[`${a.status} ${a.code ?? ''}`.trim()] ?? 0) + 1;
  const lat = summary(paused.map((a) => a.e - a.s));
  const untypedOrWrong = paused.filter((a) => ![503, 504].includes(a.status) || !a.code || /^(untyped|error|run_)/.test(a.code)).length;
  const slowOnes = paused.filter((a) => a.e - a.s > 2500).length;
  const firstLoadOk = answers.filter((a) => a.s >= resumedAt && a.status === 200 && !a.code).sort((x, y) => x.e - y.e)[0];
  const out = {
    inflight: CHAIN_INFLIGHT, chain_bound: CHAIN_BOUND, pause_s: PAUSE_SECONDS,
    chain_free: Object.fromEntries(Object.entries(probeLat).map(([k, v]) => {
      const s = summary(v);
      return [k, { n: s.n, p50: r1(s.p50), p99: r1(s.p99), max: r1(s.max) }];
    })),
    chain_free_failures: probeBad,
    chain_free_running: Object.fromEntries(Object.entries(running.lat).map(([k, v]) => {
      const s = summary(v);
      return [k, { n: s.n, p50: r1(s.p50), p99: r1(s.p99), max: r1(s.max) }];
    })),
    chain_bound_answers: paused.length, chain_bound_from_cache_in_watch_window: fromCache.length, chain_bound_status: byStatus, chain_bound_p50: r1(lat.p50), chain_bound_p99: r1(lat.p99),
    chain_bound_max: r1(lat.max), chain_bound_over_2500ms: slowOnes, chain_bound_not_typed_503_504: untypedOrWrong,
    recovered_ms: recoveredMs === null ? null : Math.round(recoveredMs),
    first_load_ok_after_resume_ms: firstLoadOk ? Math.round(firstLoadOk.e - resumedAt) : null,
    health_during_pause: healthSeen,
  };
  console.log(`chain node paused ${PAUSE_SECONDS} s, ${CHAIN_INFLIGHT} chain-bound requests (${CHAIN_BOUND}) kept in flight:`);
  for (const [k, v] of Object.entries(out.chain_free)) {
    console.log(`  ${k.padEnd(11)} n=${String(v.n).padEnd(5)} p50 ${f1(v.p50).padStart(8)} ms   p99 ${f1(v.p99).padStart(8)} ms   max ${f1(v.max).padStart(8)} ms`);
  }
  for (const [k, v] of Object.entries(out.chain_free_running)) {
    console.log(`  ${k.padEnd(11)} with the node running (control): n=${String(v.n).padEnd(5)} p50 ${f1(v.p50).padStart(8)} ms   p99 ${f1(v.p99).padStart(8)} ms   max ${f1(v.max).padStart(8)} ms`);
  }
  if (Object.keys(probeBad).length) console.log(`  chain-free failures: ${JSON.stringify(probeBad)}`);
  console.log(`  chain-bound answers from the pool's cache in the watch window (${watchWindowMs} ms after the pause): ${fromCache.length}`);
  console.log(`  chain-bound answers while paused: ${paused.length}, ${JSON.stringify(byStatus)}; p50 ${f1(lat.p50)} ms, p99 ${f1(lat.p99)} ms, ` +
    `max ${f1(lat.max)} ms; over 2.5 s: ${slowOnes}; not a typed 503/504: ${untypedOrWrong}`);
  console.log(`  after SIGCONT: a chain-bound request succeeded after ${out.recovered_ms ?? 'NEVER (15 s)'} ms ` +
    `(first success of the load: ${out.first_load_ok_after_resume_ms ?? '-'} ms)`);
  if (healthSeen) console.log(`  /health during the pause: ${JSON.stringify(healthSeen).slice(0, 400)}`);
  return out;
}
