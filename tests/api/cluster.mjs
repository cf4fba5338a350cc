// Shared fixture of the cluster tests (not a test): several full Sigil instances of one service on
// loopback, the way scripts/cluster runs them, built from stack.mjs's startStack:
//   one PostgreSQL ledger (Debian's server, initdb into a temporary folder, started here),
//   one dev chain (anvil with AccountConfig; started by instance 0's stack, joined by the others),
//   one root key: each instance's keyd asks its own simulated TEE agent (sigil-tee-sim's GetKey, the
//     same app id and simulator secret everywhere), as instances of one app in real TEEs would,
//   per instance its own keyd, lowerer, supervisor + workers and nginx, with [chain] instance_index /
//     instance_count so each sends only from its own share of the payer wallets,
//   and one nginx load balancer (nginx/render-balancer.sh) in front of the instances' nginx.
//
//   const cluster = await startCluster({instances: 2, workers: 2, payers: 8, billingLines: [...]});
//   cluster.url                      the balancer's https URL
//   cluster.request(method, path, opts)         through the balancer (stack.mjs's request options)
//   cluster.instances[i].request(...)           straight to instance i's nginx (a stack.mjs handle)
//   await cluster.kill(i)            SIGKILL of every process of instance i (keyd, lowerer, tee-sim,
//                                    supervisor, workers, zygotes, sandbox children, nginx master and workers)
//   await cluster.restart(i)         starts instance i again on the same nginx port (the balancer's entry)
//   await cluster.sql(query)         the ledger's answer rows (psql -At, '|' between columns)
//   cluster.payerShare(i)            the payer addresses instance i may send from
//   await cluster.stop()
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, chmodSync, chownSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { startStack, httpsRequest, freePort, launch, stopChild, SOURCE_DIR, BUILD_DIR } from './stack.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// The newest /usr/lib/postgresql/<version>/bin holding initdb and postgres ($SIGIL_POSTGRES_BINDIR first),
/// as tests/support/postgres_server.h finds it.
export function postgresBinDir() {
  const env = process.env.SIGIL_POSTGRES_BINDIR;
  const usable = (d) => existsSync(join(d, 'postgres')) && existsSync(join(d, 'initdb'));
  if (env) {
    if (usable(env)) return env;
    throw new Error(`SIGIL_POSTGRES_BINDIR=${env} holds no postgres and initdb`);
  }
  let versions = [];
  try { versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).map(Number).sort((a, b) => a - b); } catch { /* none */ }
  const found = versions.map((v) => `/usr/lib/postgresql/${v}/bin`).filter(usable);
  if (!found.length) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: run scripts/setup (package postgresql)');
  return found[found.length - 1];
}

/// A throw-away PostgreSQL server on a free loopback port (as the `postgres` user when we are root,
/// since PostgreSQL refuses root), or on `port`. Returns {url, port, dir, psql(query), stop()}.
export async function startPostgres({ port: fixedPort = null } = {}) {
  const bin = postgresBinDir();
  const dir = mkdtempSync('/tmp/sigil-cluster-pg-');
  const asRoot = process.getuid() === 0;
  let uid = null;
  let gid = null;
  if (asRoot) {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
    if (!line) throw new Error('running as root, and PostgreSQL refuses root: the `postgres` user (Debian package postgresql) is missing');
    [uid, gid] = line.split(':').slice(2, 4).map(Number);
    chownSync(dir, uid, gid);
  }
  const as = asRoot ? { uid, gid } : {};
  const log = join(dir, 'postgres.log');
  execFileSync(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C',
    '--no-sync', '--no-instructions'], { stdio: ['ignore', 'ignore', 'pipe'], ...as });
  const port = fixedPort ?? await freePort();
  const server = launch('postgres', join(bin, 'postgres'), ['-D', join(dir, 'data'), '-p', String(port), '-k', dir,
    '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=300'], log, process.env, as);
  const psqlArgs = ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-At'];
  for (let i = 0; ; i++) {
    if (server.exited) throw new Error(`postgres exited at start:\n${readFileSync(log, 'utf8').slice(-2000)}`);
    try {
      execFileSync('pg_isready', ['-h', '127.0.0.1', '-p', String(port), '-q'], { stdio: 'ignore' });
      break;
    } catch { /* not yet */ }
    if (i > 600) throw new Error('postgres did not accept connections within 60 s');
    await sleep(100);
  }
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    psql: (query) => execFileSync('psql', [...psqlArgs, '-c', query]).toString().trim().split('\n').filter((l) => l !== ''),
    stop: async () => {
      // SIGINT: PostgreSQL's fast shutdown.
      if (!server.exited) {
        try { server.kill('SIGINT'); } catch { /* gone */ }
        const t = setTimeout(() => { try { server.kill('SIGKILL'); } catch { /* gone */ } }, 10000);
        await server.exitPromise;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/// Every descendant of `pid` (from /proc), deepest last.
function descendants(pid) {
  const children = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch { /* gone meanwhile */ }
  }
  const out = [];
  const walk = (p) => { for (const c of children.get(p) ?? []) { out.push(c); walk(c); } };
  walk(pid);
  return out;
}

/// Starts `instances` instances of one service and the balancer in front. Options: workers and maxWorkers
/// per instance (small: this machine has 2 cores), payers (the [chain] payers shared by all, each
/// instance leasing its own share), billingLines ([billing] lines; billing is always on, in PostgreSQL),
/// chainOptions / workerOptions / supervisorOptions (lines added to every instance's sections), stackOptions
/// (more startStack options for every instance, e.g. {runsPerKey: 0, nginxEnv}), failTimeoutS (the balancer's
/// fail_timeout).
export async function startCluster({ instances = 2, workers = 2, maxWorkers = 16, payers = 8, billingLines = [],
  chainOptions = [], workerOptions = [], supervisorOptions = [], failTimeoutS = 5, stackOptions = {} } = {}) {
  const dir = mkdtempSync('/tmp/sigil-cluster-');
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'keyd'), { mode: 0o700 });
  mkdirSync(join(dir, 'logs'));
  let pg = null;
  let pgUrl = null;
  let balancer = null;
  const stacks = [];
  const ports = [];  // each instance's nginx port, kept across a kill for its restart
  const agent = new https.Agent({ keepAlive: true, maxSockets: 64, rejectUnauthorized: false });
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    agent.destroy();
    await stopChild(balancer);
    // Instance 0 owns the chain: stop it last.
    for (let i = stacks.length - 1; i >= 0; i--) if (stacks[i]) await stacks[i].stop();
    if (pg) await pg.stop();
    if (!process.env.SIGIL_KEEP_STACK) rmSync(dir, { recursive: true, force: true });
  };

  const instanceOptions = (i, extra) => ({
    workers, maxWorkers, chainPayers: payers, keySource: 'tee-sim',
    chainOptions: [`instance_index = ${i}`, `instance_count = ${instances}`, ...chainOptions],
    workerOptions, supervisorOptions,
    billing: { database: pgUrl, lines: billingLines },
    ...stackOptions,
    ...extra,
  });

  try {
    // The ledger and instance 0 (with the chain) start together: initdb alone takes seconds here, and
    // the workers open the ledger only when a request needs it.
    const pgPort = await freePort();
    pgUrl = `postgresql://postgres@127.0.0.1:${pgPort}/postgres`;
    const [pgStarted, first] = await Promise.allSettled([startPostgres({ port: pgPort }), startStack(instanceOptions(0, {}))]);
    if (pgStarted.status === 'fulfilled') pg = pgStarted.value;
    if (first.status === 'fulfilled') stacks.push(first.value);
    if (pgStarted.status === 'rejected') throw pgStarted.reason;
    if (first.status === 'rejected') throw first.reason;
    const chainInfo = stacks[0].chainInfo;
    // The others join instance 0's chain; started together (each waits for its own /health).
    const rest = await Promise.allSettled(Array.from({ length: instances - 1 },
      (_, k) => startStack(instanceOptions(k + 1, { joinChain: chainInfo }))));
    for (const r of rest) if (r.status === 'fulfilled') stacks.push(r.value);
    const failed = rest.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;

    ports.push(...stacks.map((s) => s.port));
    const port = await freePort();
    const prefix = join(dir, 'balancer');
    execFileSync(join(SOURCE_DIR, 'nginx/render-balancer.sh'), [prefix, String(port), ...stacks.map((s) => String(s.port))],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SIGIL_LB_FAIL_TIMEOUT: String(failTimeoutS) } });
    balancer = launch('balancer', 'nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], join(dir, 'logs/balancer.log'));
    const url = `https://127.0.0.1:${port}`;
    let healthy = false;
    for (let i = 0; i < 300 && !healthy; i++) {
      if (balancer.exited) throw new Error(`the balancer exited:\n${readFileSync(join(dir, 'logs/balancer.log'), 'utf8')}`);
      try { healthy = (await httpsRequest(agent, `${url}/health`, 'GET')).status === 200; } catch { /* not yet */ }
      if (!healthy) await sleep(100);
    }
    if (!healthy) throw new Error('the balancer did not answer /health 200');

    const request = (method, path, opts = {}) => {
      // The instances' request() builds the path and headers; only the origin differs.
      return stacks.find((s) => s).request(method, path, { ...opts, origin: url, agent });
    };

    const kill = async (i) => {
      if (i === 0) throw new Error('instance 0 hosts the shared dev chain: kill another one');
      const s = stacks[i];
      const roots = ['tee-sim', 'keyd', 'lowerer', 'supervisor', 'nginx'].map((n) => s.pidOf(n)).filter((p) => p);
      const all = [...roots, ...roots.flatMap(descendants)];
      for (const pid of all) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
      await s.stop();  // reaps the killed children, removes the instance's folder
      stacks[i] = null;
      return all.length;
    };
    const restart = async (i) => {
      stacks[i] = await startStack(instanceOptions(i, { joinChain: chainInfo, port: ports[i] }));
      return stacks[i];
    };

    const share = (i) => {
      const first = Math.floor(i * payers / instances);
      const end = Math.floor((i + 1) * payers / instances);
      return chainInfo.api_payers.slice(first, end).map((a) => a.toLowerCase());
    };

    return {
      url, dir, agent, request, kill, restart, stop,
      instances: stacks,
      pgUrl,
      sql: (q) => pg.psql(q),
      payerShare: share,
      chain: { rpcUrl: chainInfo.rpc_url, contract: chainInfo.contract_address, chainId: chainInfo.chain_id },  // for chainRpc()
      balancerLog: join(prefix, 'logs/access.log'),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export { BUILD_DIR };
