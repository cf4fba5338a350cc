// Shared fixture of the API tests (not a test): starts the whole Sigil stack the way scripts/start
// does (keyd's payers, anvil with AccountConfig via scripts/devchain.mjs, sigil-keyd,
// sigil-supervisor with its workers, nginx with a self-signed certificate) on free loopback ports
// under a temporary directory, and talks HTTPS to it.
//
//   const stack = await startStack({workers});   // waits for /health 200
//   stack.url, stack.rpcUrl, stack.chainId, stack.contract, stack.home
//   stack.gatewayDir: files named by their CID there are served by the dev gateway the workers use
//   startStack({actions: ['max_fetch_count = 2']}) adds lines to the [actions] section
//   startStack({ipfsGateways: [url, ...]}) replaces the dev gateway in ipfs_gateways (stack.gatewayUrl still serves)
//   await stack.request(method, path, {key, bearer, body, rawBody, contentType, headers, query})
//     -> {status, headers, json, text}   (path relative to /core/v1 unless it starts with '/core' or
//                                         is '/health', '/attestation', '/info' or under '/evidences';
//                                         json is null when the body is not JSON)
//   await stack.stop()                           // stops everything, also after a failed start
//   stack.pidOf(name)   the pid of the running 'devchain', 'keyd', 'lowerer', 'supervisor' or 'nginx' (the master), or null
//   await stack.restart(name, {signal, downMs})  stops that child with `signal` (default SIGTERM),
//                        waits downMs, starts it again with the same arguments and waits until it is
//                        ready (keyd, lowerer: listening; devchain: the chain is back on the same port)
//   startStack({chainState: true}) keeps anvil's state in <home>/chain (as scripts/start does), which
//                        restart('devchain') needs: anvil comes back with every account, key and group
//   stack.governance     the AppGovernance address (the app id), deployed on every stack
//   startStack({teeSim: true}) also runs sigil-tee-sim (the simulated guest agent, as scripts/start does)
//                        with evidence/dev/app-compose.json, its compose hash allowed by AppGovernance:
//                        stack.teeSocket (its unix socket), stack.composeHash (0x + 64 hex); both null without;
//                        the workers relay it ([worker] dstack_socket) and sigil-evidence writes the set nginx
//                        serves at /evidences/ (stack.evidenceDir; acme-account.json names ACME_ACCOUNT_URI)
//   startStack({workerOptions: ['attestation_cache_ms = 0']}) adds lines to the [worker] section
//   startStack({supervisorOptions: ['request_hard_timeout_s = 6']}) adds lines to the [supervisor] section
//   startStack({workers: 2, maxWorkers: 6}): the pool's floor and ceiling ([supervisor] max_workers,
//                        default 256), which is also nginx's bound on requests in flight
//   startStack({billing: {lines: ['starter_credit_cents = 100'], database}}) turns billing on with the chain
//                        processor (tUSD and Payments on the dev chain) and a SQLite ledger in the home
//                        (or `database`, e.g. postgresql://...); `lines` go to the [billing] section;
//                        `tokenAddress: (chain) => address` replaces the token the processor is told of;
//                        `processor: 'stripe'` names another processor (its settings go in `lines`)
//   startStack({rpcUrl: (chain) => url}) points the workers at another node URL (e.g. a counting proxy in
//                        front of chain.rpc_url); stack.rpcUrl stays anvil's
//   startStack({ledgerDatabase: 'postgresql://...'}) sets [billing] database with billing off: the key
//                        guardrails' store only (issue 26)
//   startStack({runsPerKey: 0}) sets [billing] max_concurrent_runs_per_key (0: no cap; billing on or off), so a
//                        benchmark can run one key at more than the default 8 runs in flight
//   startStack({nginxEnv: {SIGIL_MINT_RATE: '1r/s', SIGIL_MINT_BURST: '3'}}) passes nginx/render-dev.sh settings
//   startStack({lowerer: false}) runs no sigil-lowerer: sandbox children lower every CID's first run
//                        (by default the daemon runs, as scripts/start runs it: stack.lowererSocket, or null)
//   stack.operatorUrl    http://127.0.0.1:<port>: nginx's operator listener (GET /metrics for Prometheus)
//   startStack({metrics: ['enabled = false']}) adds lines to the [metrics] section; {evidenceMetrics: true} adds
//                        evidence_dir = the stack's evidence folder (/metrics then reports the set's age)
//   startStack({rootKeyFile, joinChain: other.chainInfo, port}) for several instances of one service
//                        (tests/api/cluster.mjs): keyd's root key from that file (created if missing) instead of
//                        the home's; no dev chain of its own but the one `other` started (its chain.json fields);
//                        nginx on that port (a restarted instance keeps its balancer entry). stack.chainInfo: the
//                        chain.json fields of the chain this stack uses
//   startStack({keySource: 'tee-sim'}): keyd's root key from sigil-tee-sim's GetKey (--tee-key-service, as
//                        scripts/start does by default) instead of a key file; implies teeSim and chainState.
//                        The payers are known only once the simulator (app id = AppGovernance) is up: the chain
//                        starts with anvil's dev payers and keyd's are registered then (devchain deploy --state)
//   startStack({history: ['keep_seconds = 2']}) adds lines to the [history] section (the run history; by
//                        default in the ledger's database, so with billing off it needs `database = FILE`)
//   configKnows('supervisor', 'max_workers', 96)  whether the build's configuration has that key (a build
//                        from before it refuses it), so a benchmark can also run the build it is compared with
//
// Environment: SIGIL_BUILD_DIR (default <repo>/build), SIGIL_SOURCE_DIR (default <repo>).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, chmodSync, writeFileSync, appendFileSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import https from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

export const SOURCE_DIR = process.env.SIGIL_SOURCE_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILD_DIR = process.env.SIGIL_BUILD_DIR ?? join(SOURCE_DIR, 'build');
const require = createRequire(join(SOURCE_DIR, 'package.json'));
export const { ethers } = require('ethers');

// What the dev stack's acme-account.json says (a self-signed certificate has no CA account).
export const ACME_ACCOUNT_URI = 'https://localhost/acme/acct/self-signed-development';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

// Every child of every stack, so a crashing test process still kills them on exit.
const liveChildren = new Set();
// anvil is devchain's child: a SIGKILLed devchain would leave it behind, so it is listed by pid.
const livePids = new Set();
process.on('exit', () => {
  for (const c of liveChildren) {
    try { c.kill('SIGKILL'); } catch { /* already gone */ }
  }
  for (const pid of livePids) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
  }
});

/// Starts `cmd` (its output appended to logFile), killed when this process exits; `spawnOptions` adds
/// to spawn's (e.g. uid and gid). Also used by tests/api/cluster.mjs.
export function launch(name, cmd, args, logFile, env = process.env, spawnOptions = {}) {
  const out = logFile ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'ignore', 'ignore'];
  const child = spawn(cmd, args, { stdio: out, env, ...spawnOptions });
  child.name = name;
  child.spec = { cmd, args, logFile, env };
  child.exited = false;
  child.exitPromise = new Promise((r) => child.on('exit', (code, signal) => {
    child.exited = true;
    child.exitInfo = signal ?? code;
    liveChildren.delete(child);
    r();
  }));
  if (logFile) {
    const sink = (d) => appendFileSync(logFile, d);
    child.stdout.on('data', sink);
    child.stderr.on('data', sink);
  }
  liveChildren.add(child);
  return child;
}

export async function stopChild(child, graceMs = 5000) {
  if (!child || child.exited) return;
  try { child.kill('SIGTERM'); } catch { /* gone */ }
  const t = setTimeout(() => { try { child.kill('SIGKILL'); } catch { /* gone */ } }, graceMs);
  await child.exitPromise;
  clearTimeout(t);
}

function tail(file, n = 20) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}

/// Sends one HTTPS request. Returns {status, headers, json, text, raw (the body's bytes)}.
export function httpsRequest(agent, url, method, { headers = {}, body = null } = {}) {
  return new Promise((res, rej) => {
    const req = https.request(url, { method, agent, headers, rejectUnauthorized: false }, (resp) => {
      const chunks = [];
      resp.on('data', (d) => chunks.push(d));
      resp.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { json = null; }
        res({ status: resp.statusCode, headers: resp.headers, json, text, raw });
      });
      resp.on('error', rej);
    });
    req.on('error', rej);
    req.setTimeout(60000, () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    if (body !== null) req.write(body);
    req.end();
  });
}

/// Starts the stack. Options: workers (default 2), maxWorkers (default 256), chainPayers ([chain] payers,
/// default 8: the payer wallets registered, funded and leased per relayed write).
export async function startStack({ workers = 2, maxWorkers = 256, chainPayers = 8, testRoutes = false, actions = [], chainOptions = [], ipfsGateways = null,
  chainState = false, teeSim = false, workerOptions = [], supervisorOptions = [], billing = null, nginxEnv = {},
  lowerer = true, runsPerKey = null, rpcUrl = null, metrics = [], evidenceMetrics = false,
  rootKeyFile = null, joinChain = null, port: fixedPort = null, keySource = 'file', history = [],
  ledgerDatabase = null } = {}) {
  if (!['file', 'tee-sim'].includes(keySource)) throw new Error(`keySource must be 'file' or 'tee-sim', not ${keySource}`);
  const teeKey = keySource === 'tee-sim';
  if (teeKey) {
    teeSim = true;
    chainState = true;
  }
  const home = mkdtempSync('/tmp/sigil-apitest-');
  // nginx's workers run as nobody when we are root: the socket folder must be reachable.
  chmodSync(home, 0o755);
  const logs = join(home, 'logs');
  const run = join(home, 'run');
  mkdirSync(logs);
  mkdirSync(join(home, 'keyd'), { mode: 0o700 });
  mkdirSync(run, { mode: 0o755 });
  mkdirSync(join(run, 'evidence'));
  mkdirSync(join(run, 'keyd'), { mode: 0o700 });
  chmodSync(run, 0o755);

  const children = [];
  const agent = new https.Agent({ keepAlive: true, maxSockets: 32, rejectUnauthorized: false });
  let stopped = false;
  let anvilPid = null;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    agent.destroy();
    for (let i = children.length - 1; i >= 0; i--) await stopChild(children[i]);
    // devchain stops anvil on SIGTERM; forget the pid only then (pids are reused).
    if (anvilPid) livePids.delete(anvilPid);
    if (!process.env.SIGIL_KEEP_STACK) rmSync(home, { recursive: true, force: true });
  };

  try {
    const keydBin = join(BUILD_DIR, 'keyd/sigil-keyd');
    const supervisorBin = join(BUILD_DIR, 'bin/sigil-supervisor');
    for (const f of [keydBin, supervisorBin, join(BUILD_DIR, 'contracts/AccountConfig.abi.json')]) {
      if (!existsSync(f)) throw new Error(`missing ${f}: build sigil-keyd sigil-supervisor sigil-worker contracts first`);
    }
    // 1. keyd's payer wallets: exactly [chain] payers (leased per relayed write, as scripts/start).
    const payers = chainPayers;
    const rootKey = rootKeyFile ?? join(home, 'keyd/root.key');
    let keySourceArgs = ['--root-key-file', rootKey];
    const printPayers = () => JSON.parse(execFileSync(keydBin, ['--print-payers', ...keySourceArgs, '--payers', String(payers)],
      { stdio: ['ignore', 'pipe', 'pipe'] }).toString());
    let payersJson = teeKey ? null : printPayers();

    // 2. anvil with AccountConfig deployed and the payers registered and funded.
    const chainFile = join(home, 'chain.json');
    if (chainState) mkdirSync(join(home, 'chain'));
    const teeSimBin = join(SOURCE_DIR, 'evidence/tee-sim/sigil-tee-sim.mjs');
    const appCompose = join(SOURCE_DIR, 'evidence/dev/app-compose.json');
    const composeHash = teeSim
      ? '0x' + execFileSync(process.execPath, [teeSimBin, '--compose', appCompose, '--print-compose-hash']).toString().trim()
      : null;
    if (!joinChain) children.push(launch('devchain', process.execPath, [join(SOURCE_DIR, 'scripts/devchain.mjs'), 'start',
      '--config', chainFile, '--build-dir', BUILD_DIR,
      ...(payersJson ? ['--api-payers', payersJson.api_payers.join(','), '--admin-payer', payersJson.admin_payer] : []),
      ...(chainState ? ['--state', join(home, 'chain')] : []),
      ...(teeSim ? ['--compose-hash', composeHash] : [])],
      join(logs, 'devchain.log')));
    if (joinChain) writeFileSync(chainFile, JSON.stringify(joinChain));
    for (let i = 0; i < 600 && !existsSync(chainFile); i++) {
      if (children[0].exited) break;
      await sleep(50);
    }
    if (!existsSync(chainFile)) throw new Error(`the dev chain did not come up:\n${tail(join(logs, 'devchain.log'))}`);
    const chain = JSON.parse(readFileSync(chainFile, 'utf8'));
    // A joined chain belongs to the stack that started it: this one never stops its anvil.
    anvilPid = joinChain ? null : chain.anvil_pid ?? null;
    if (anvilPid) livePids.add(anvilPid);

    // 2b. The simulated TEE guest agent; its app id is the governance contract's address.
    const teeSocket = teeSim ? join(run, 'tee/dstack.sock') : null;
    if (teeSim) {
      const sim = launch('tee-sim', process.execPath, [teeSimBin, '--socket', teeSocket, '--app-id', chain.governance_address,
        '--compose', appCompose], join(logs, 'tee-sim.log'));
      children.push(sim);
      for (let i = 0; i < 200 && !existsSync(teeSocket) && !sim.exited; i++) await sleep(25);
      if (!existsSync(teeSocket)) throw new Error(`sigil-tee-sim did not come up:\n${tail(join(logs, 'tee-sim.log'))}`);
    }
    // 2c. keyd's root key from the simulator's GetKey: its payers, registered and funded on the running chain.
    if (teeKey && joinChain) {
      // Another instance's chain: it registered the payers of the same key (same app id, same simulator
      // secret), so this keyd's must be exactly those.
      keySourceArgs = ['--tee-key-service', teeSocket];
      payersJson = printPayers();
      if (payersJson.admin_payer.toLowerCase() !== String(chain.admin_payer).toLowerCase()) {
        throw new Error(`this instance's simulated TEE key differs from the joined chain's (admin payer ${payersJson.admin_payer}, not ${chain.admin_payer})`);
      }
    } else if (teeKey) {
      keySourceArgs = ['--tee-key-service', teeSocket];
      payersJson = printPayers();
      execFileSync(process.execPath, [join(SOURCE_DIR, 'scripts/devchain.mjs'), 'deploy', '--config', join(home, 'chain-payers.json'),
        '--rpc-url', chain.rpc_url, '--build-dir', BUILD_DIR, '--state', join(home, 'chain'),
        '--api-payers', payersJson.api_payers.join(','), '--admin-payer', payersJson.admin_payer, '--compose-hash', composeHash],
      { stdio: ['ignore', 'ignore', 'pipe'] });
      chain.api_payers = payersJson.api_payers;
      chain.admin_payer = payersJson.admin_payer;
    }

    // 3. keyd.
    const keydSocket = join(run, 'keyd/keyd.sock');
    children.push(launch('keyd', keydBin, ['--socket', keydSocket, ...keySourceArgs,
      '--allowed-uid', String(process.getuid()), '--chain-id', String(chain.chain_id),
      '--contract', chain.contract_address, '--payers', String(payers)], join(logs, 'keyd.log')));

    // 3b. sigil-lowerer, as scripts/start runs it (lowerer: false leaves lowering to the sandbox child).
    const lowererSocket = lowerer ? join(run, 'lowerer.sock') : null;
    if (lowerer) {
      const daemon = launch('lowerer', process.execPath, [join(BUILD_DIR, 'bin/sigil-lowerer.cjs'), '--socket', lowererSocket],
        join(logs, 'lowerer.log'));
      children.push(daemon);
      for (let i = 0; i < 400 && !existsSync(lowererSocket) && !daemon.exited; i++) await sleep(25);
      if (!existsSync(lowererSocket)) throw new Error(`sigil-lowerer did not come up:\n${tail(join(logs, 'lowerer.log'))}`);
    }

    // 4. supervisor and workers (with the development IPFS gateway nginx serves below).
    const gatewayPort = await freePort();
    const gatewayDir = join(run, 'ipfs');
    mkdirSync(gatewayDir, { mode: 0o755 });
    const fcgiSocket = join(run, 'fcgi.sock');
    const conf = join(home, 'sigil.conf');
    const runsPerKeyLine = runsPerKey === null ? [] : [`max_concurrent_runs_per_key = ${runsPerKey}`];
    writeFileSync(conf, [
      '[supervisor]', `socket_path = ${fcgiSocket}`, 'socket_mode = 0666', `workers = ${workers}`,
      `max_workers = ${maxWorkers}`, ...supervisorOptions, '',
      '[worker]', 'max_body_bytes = 1048576', `test_routes = ${testRoutes}`,
      ...(teeSim ? [`dstack_socket = ${teeSocket}`] : []), ...workerOptions, '',
      '[chain]', `rpc_url = ${rpcUrl?.(chain) ?? chain.rpc_url}`, `contract_address = ${chain.contract_address}`,
      `chain_id = ${chain.chain_id}`, `payers = ${payers}`, ...chainOptions, '',
      '[keyd]', `socket_path = ${keydSocket}`, '',
      '[actions]', `ipfs_gateways = ${(ipfsGateways ?? [`http://127.0.0.1:${gatewayPort}/ipfs/`]).join(', ')}`,
      ...(lowerer ? [`lowerer_socket = ${lowererSocket}`] : []), ...actions, '',
      ...(billing ? ['[billing]', 'enabled = true', `database = ${billing.database ?? join(home, 'ledger.sqlite')}`,
        `processor = ${billing.processor ?? 'chain'}`, `token_address = ${billing.tokenAddress?.(chain) ?? chain.token_address}`,
        `payments_address = ${chain.payments_address}`,
        'confirmations = 1', ...(billing.lines ?? []), ...runsPerKeyLine, ''] : []),
      ...(!billing && (runsPerKeyLine.length || ledgerDatabase)
        ? ['[billing]', ...runsPerKeyLine, ...(ledgerDatabase ? [`database = ${ledgerDatabase}`] : []), ''] : []),
      // nginx's refusal tallies (nginx/sigil.conf.template) are in its prefix's logs, as scripts/start sets it
      // (left out for a build from before the key, so a benchmark can still run it).
      '[metrics]', ...(configKnows('metrics', 'nginx_tally_dir', '/tmp') ? [`nginx_tally_dir = ${join(home, 'nginx', 'logs')}`] : []),
      ...metrics,
      ...(evidenceMetrics ? [`evidence_dir = ${join(run, 'evidence')}`] : []), '',
      ...(history.length ? ['[history]', ...history, ''] : []),
    ].join('\n'));
    children.push(launch('supervisor', supervisorBin, ['-c', conf], join(logs, 'supervisor.log')));

    // 5. nginx.
    const port = fixedPort ?? await freePort();
    const operatorPort = await freePort();
    const prefix = join(home, 'nginx');
    execFileSync(join(SOURCE_DIR, 'nginx/render-dev.sh'), [prefix, String(port), fcgiSocket, join(run, 'evidence')],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SIGIL_DEV_GATEWAY: `${gatewayPort}:${gatewayDir}`,
        SIGIL_MAX_INFLIGHT: String(maxWorkers), SIGIL_OPERATOR_LISTEN: `127.0.0.1:${operatorPort}`, ...nginxEnv } });
    // The evidence set, as scripts/start writes it (needs the agent for quote.json).
    const evidenceDir = join(run, 'evidence');
    if (teeSim) {
      // receipt-key.json asks keyd for the receipt key's address.
      for (let i = 0; i < 400 && !existsSync(keydSocket); i++) await sleep(25);
      execFileSync(join(BUILD_DIR, 'bin/sigil-evidence'), ['--dir', evidenceDir, '--cert', join(prefix, 'tls/cert.pem'),
        '--domain', 'localhost', '--acme-account-uri', ACME_ACCOUNT_URI, '--agent-socket', teeSocket,
        '--keyd-socket', keydSocket],
        { stdio: ['ignore', 'ignore', 'pipe'] });
    }
    children.push(launch('nginx', 'nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'],
      join(logs, 'nginx.log')));

    const url = `https://127.0.0.1:${port}`;
    let healthy = false;
    for (let i = 0; i < 300 && !healthy; i++) {
      const dead = children.find((c) => c.exited);
      if (dead) throw new Error(`${dead.name} exited (${dead.exitInfo}) during start-up:\n${tail(join(logs, dead.name + '.log'))}`);
      try {
        const r = await httpsRequest(agent, `${url}/health`, 'GET');
        healthy = r.status === 200;
      } catch { /* not listening yet */ }
      if (!healthy) await sleep(100);
    }
    if (!healthy) throw new Error(`/health did not answer 200:\n${tail(join(logs, 'supervisor.log'))}`);

    const request = (method, path, opts = {}) => {
      // origin and via: another server's URL and agent (tests/api/cluster.mjs's balancer), same request.
      const { key, bearer, body, rawBody, contentType, headers = {}, query, origin = url, agent: via = agent } = opts;
      const atRoot = ['/health', '/attestation', '/info'].includes(path) || path.startsWith('/evidences');
      let full = path.startsWith('/core') || atRoot ? path
        : `/core/v1${path.startsWith('/') ? '' : '/'}${path}`;
      if (query) {
        const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
        full += (full.includes('?') ? '&' : '?') + qs;
      }
      const h = { ...headers };
      if (key !== undefined) h['X-Api-Key'] = key;
      if (bearer !== undefined) h.Authorization = `Bearer ${bearer}`;
      let payload = null;
      if (rawBody !== undefined) payload = Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody);
      else if (body !== undefined) payload = Buffer.from(JSON.stringify(body));
      if (payload !== null) {
        if (contentType !== null) h['Content-Type'] = contentType ?? 'application/json';
        h['Content-Length'] = String(payload.length);
      } else if (method === 'POST') {
        h['Content-Length'] = '0';
      }
      return httpsRequest(via, origin + full, method, { headers: h, body: payload });
    };

    const pidOf = (name) => {
      const c = children.find((x) => x.name === name && !x.exited);
      return c ? c.pid : null;
    };
    const logLines = (name, text) => {
      try { return readFileSync(join(logs, `${name}.log`), 'utf8').split(text).length - 1; } catch { return 0; }
    };
    const restart = async (name, { signal = 'SIGTERM', downMs = 0 } = {}) => {
      if (stopped) throw new Error('the stack is stopped');
      const i = children.findIndex((x) => x.name === name);
      if (i < 0) throw new Error(`no child named ${name}`);
      const old = children[i];
      const { cmd, args, logFile, env } = old.spec;
      let newArgs = args;
      if (name === 'devchain') {
        if (!chainState) throw new Error("restart('devchain') needs startStack({chainState: true})");
        // Same port, so the workers' rpc_url stays right; --state brings the chain back.
        newArgs = [...args.filter((a, k) => a !== '--port' && args[k - 1] !== '--port'),
          '--port', new URL(handle.rpcUrl).port];
      }
      const listeningBefore = name === 'keyd' || name === 'lowerer' ? logLines(name, 'listening on') : 0;
      if (!old.exited) {
        try { old.kill(signal); } catch { /* gone */ }
        const t = setTimeout(() => { try { old.kill('SIGKILL'); } catch { /* gone */ } }, 10000);
        await old.exitPromise;
        clearTimeout(t);
      }
      if (name === 'devchain' && handle.anvilPid) {
        // devchain stops anvil on SIGTERM; after a SIGKILL of devchain, anvil is still there.
        try { process.kill(handle.anvilPid, 'SIGKILL'); } catch { /* gone */ }
        livePids.delete(handle.anvilPid);
        rmSync(chainFile, { force: true });
      }
      if (downMs > 0) await sleep(downMs);
      const child = launch(name, cmd, newArgs, logFile, env);
      children[i] = child;
      if (stopped) {  // stop() ran meanwhile and did not see this child
        await stopChild(child);
        throw new Error('the stack was stopped during a restart');
      }
      const deadline = Date.now() + 30000;
      const ready = () => {
        if (name === 'keyd' || name === 'lowerer') return logLines(name, 'listening on') > listeningBefore;
        if (name === 'devchain') return existsSync(chainFile);
        return true;
      };
      while (!ready()) {
        if (child.exited) throw new Error(`${name} exited (${child.exitInfo}) on restart:\n${tail(logFile)}`);
        if (Date.now() > deadline) throw new Error(`${name} was not ready 30 s after its restart:\n${tail(logFile)}`);
        await sleep(20);
      }
      if (name === 'devchain') {
        const again = JSON.parse(readFileSync(chainFile, 'utf8'));
        if (again.contract_address !== chain.contract_address) {
          throw new Error(`the restarted chain has AccountConfig at ${again.contract_address}, not ${chain.contract_address}`);
        }
        handle.anvilPid = anvilPid = again.anvil_pid ?? null;
        if (anvilPid) livePids.add(anvilPid);
      }
      return child.pid;
    };

    const handle = {
      url, home, logs, agent, request, stop, gatewayDir, pidOf, restart,
      gatewayUrl: `http://127.0.0.1:${gatewayPort}/ipfs/`,
      operatorUrl: `http://127.0.0.1:${operatorPort}`,
      rpcUrl: chain.rpc_url,
      anvilPid,
      chainInfo: chain,
      port,
      chainId: chain.chain_id,
      contract: chain.contract_address,
      apiPayers: chain.api_payers,
      adminPayer: chain.admin_payer,
      governance: chain.governance_address,
      // The `chain` billing processor (scripts/devchain.mjs): tUSD (open mint), Payments, its treasury.
      token: chain.token_address,
      payments: chain.payments_address,
      treasury: chain.treasury_address,
      evidenceDir,
      acmeAccountUri: teeSim ? ACME_ACCOUNT_URI : null,
      teeSocket,
      lowererSocket,
      composeHash,
      keydSocket,  // for tests that speak to keyd as a (compromised) worker would
      keySource,
    };
    return handle;
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the test files.

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const HASH32 = /^0x[0-9a-f]{64}$/;
export const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/// keccak256(utf8(s)) as 0x + 64 hex: an API key's hash, or a hashed CID.
export const keccakText = (s) => ethers.keccak256(ethers.toUtf8Bytes(s));

/// Asserts a JSON error body {"error":{"code","message"},"message"} with this status (and code, if given).
export function assertError(res, status, code, context = '') {
  const where = `${context} -> ${res.status} ${res.text.slice(0, 300)}`;
  assert.equal(res.status, status, `status ${where}`);
  assert.ok(res.json && typeof res.json === 'object' && res.json.error && typeof res.json.error === 'object',
    `JSON error body ${where}`);
  assert.equal(typeof res.json.error.code, 'string', `error.code ${where}`);
  assert.match(res.json.error.code, /^[a-z][a-z0-9_]*$/, `snake_case code ${where}`);
  assert.equal(typeof res.json.error.message, 'string', `error.message ${where}`);
  assert.ok(res.json.error.message.length > 0, `non-empty message ${where}`);
  // The same text at the top level: what clients of the deployed implementation read (issue 28).
  assert.equal(res.json.message, res.json.error.message, `top-level message ${where}`);
  if (code !== undefined) assert.equal(res.json.error.code, code, `error code ${where}`);
}

/// Asserts 200 {"success": true, ...} and returns the JSON.
export function assertSuccess(res, context = '') {
  assert.equal(res.status, 200, `${context} -> ${res.status} ${res.text.slice(0, 300)}`);
  assert.equal(res.json?.success, true, `${context}: success true -> ${res.text.slice(0, 300)}`);
  return res.json;
}

/// Asserts 200 and returns the JSON.
export function assertOk(res, context = '') {
  assert.equal(res.status, 200, `${context} -> ${res.status} ${res.text.slice(0, 300)}`);
  return res.json;
}

/// Creates an API-mode account; returns {api_key, wallet_address}.
export async function newAccount(stack, name = 'test account') {
  const r = await stack.request('POST', 'new_account', { body: { account_name: name, account_description: 'api tests' } });
  const j = assertOk(r, 'new_account');
  assert.equal(typeof j.api_key, 'string');
  assert.match(j.wallet_address, ADDRESS);
  return j;
}

/// The seven permission fields, all off, overridden by `p`.
export function perms(p = {}) {
  return {
    can_create_groups: false, can_delete_groups: false, can_create_pkps: false,
    manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [], execute_in_groups: [],
    ...p,
  };
}

/// Adds a usage key with the owner key; returns the key string.
export async function addUsageKey(stack, ownerKey, p = {}, name = 'usage', description = 'a usage key') {
  const r = await stack.request('POST', 'add_usage_api_key', { key: ownerKey, body: { name, description, ...perms(p) } });
  const j = assertSuccess(r, 'add_usage_api_key');
  assert.equal(typeof j.usage_api_key, 'string');
  return j.usage_api_key;
}

/// Adds a group; returns its id as a decimal string.
export async function addGroup(stack, key, name = 'group', extra = {}) {
  const r = await stack.request('POST', 'add_group', {
    key, body: { group_name: name, group_description: `${name} description`, pkp_ids_permitted: [], cid_hashes_permitted: [], ...extra },
  });
  const j = assertSuccess(r, 'add_group');
  assert.match(j.group_id, /^[1-9][0-9]*$/);
  return j.group_id;
}

/// Creates a wallet (PKP); returns its address.
export async function createWallet(stack, key) {
  const r = await stack.request('GET', 'create_wallet', { key });
  const j = assertOk(r, 'create_wallet');
  assert.match(j.wallet_address, ADDRESS);
  return j.wallet_address;
}

/// The CIDv0 of inline action code, as the API computes it.
export async function actionCid(stack, code) {
  return assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) }), 'get_sigil_action_ipfs_id');
}

/// A runner of inline action code for tests: run(code, params, { pkp }) lists the code's CID in
/// `group` (once, with the `owner` key), runs it with `key` (pkp_id `pkp` unless null) and returns
/// the whole answer after checking HTTP 200.
export function actionRunner(stack, { owner, group, key, pkp = null }) {
  const listed = new Set();
  return async (code, params, { pkp: pkpId = pkp } = {}) => {
    const cid = await actionCid(stack, code);
    if (!listed.has(cid)) {
      assertOk(await stack.request('POST', 'add_action_to_group', { key: owner, body: { group_id: group, action_ipfs_cid: cid } }));
      listed.add(cid);
    }
    const body = { code };
    if (pkpId) body.pkp_id = pkpId;
    if (params !== undefined) body.js_params = params;
    const r = await stack.request('POST', 'sigil_action', { key, body });
    assert.equal(r.status, 200, `sigil_action -> ${r.status} ${r.text.slice(0, 400)}`);
    return r.json;
  };
}

/// Polls fn() until it returns a truthy value or timeoutMs passes; returns the last value.
export async function eventually(fn, timeoutMs = 5000, stepMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let v;
  for (;;) {
    v = await fn();
    if (v || Date.now() > deadline) return v;
    await sleep(stepMs);
  }
}

/// The receipt of a transaction the test sent, once the node has mined it (anvil mines at once,
/// but a loaded machine may answer the receipt query first).
export async function minedReceipt(stack, hash, timeoutMs = 10000) {
  const receipt = await eventually(() => chainRpc(stack, 'eth_getTransactionReceipt', [hash]), timeoutMs, 50);
  if (!receipt) throw new Error(`transaction ${hash} was not mined within ${timeoutMs} ms`);
  return receipt;
}

/// Whether this build's configuration knows [section] key: sigil-supervisor --check refuses an unknown key,
/// so a script can run a build from before a key existed (issue 23's baseline) by leaving the key out.
export function configKnows(section, key, value) {
  const dir = mkdtempSync('/tmp/sigil-conf-probe-');
  try {
    writeFileSync(join(dir, 'probe.conf'), `[${section}]\n${key} = ${value}\n`);
    execFileSync(join(BUILD_DIR, 'bin/sigil-supervisor'), ['-c', join(dir, 'probe.conf'), '--check'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/// Reads the compiled AccountConfig ABI.
/// A Sigil ChainSecured envelope (DESIGN.md section 4) signed by `signer` with ethers: {typed_data,
/// signature} for `primaryType`. Overrides: issuedAt (unix seconds) and address (message.address).
export async function signedEnvelope(stack, signer, primaryType, { issuedAt = Math.floor(Date.now() / 1000), address = signer.address } = {}) {
  const domain = { name: 'Sigil ChainSecured', version: '1', chainId: Number(stack.chainId) };
  const types = { [primaryType]: [{ name: 'address', type: 'address' }, { name: 'issuedAt', type: 'uint256' }] };
  const message = { address, issuedAt };
  const signature = await signer.signTypedData(domain, types, message);
  const typed_data = {
    types: { EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }], ...types },
    primaryType, domain, message,
  };
  return { typed_data, signature };
}

/// The X-Wallet-Auth header value: base64 of a BillingAuth envelope (or `primaryType`'s) signed by `signer`.
export async function walletAuth(stack, signer, { primaryType = 'BillingAuth', ...overrides } = {}) {
  return Buffer.from(JSON.stringify(await signedEnvelope(stack, signer, primaryType, overrides))).toString('base64');
}

export function accountConfigAbi() {
  return JSON.parse(readFileSync(join(BUILD_DIR, 'contracts/AccountConfig.abi.json'), 'utf8'));
}

/// One JSON-RPC call to the stack's node; throws on an error answer.
export async function chainRpc(stack, method, params) {
  const res = await fetch(stack.rpcUrl, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const j = await res.json();
  if (j.error) throw new Error(`${method}: ${JSON.stringify(j.error)}`);
  return j.result;
}

/// Sends AccountConfig calls [fn, args, gasLimit] from `wallet`, in order (one sender's nonces), as
/// bursts of at most 4000 each mined in one block: automine off, the block gas limit raised to the
/// burst's total for that block, then both restored. Sent one at a time with automine they take
/// minutes; sent faster than automine mines them they have left anvil 1.7 mining empty blocks forever;
/// and anvil_mine drops (not delays) what does not fit its block. Nothing else may write meanwhile.
/// Throws naming the first call whose receipt is not a success.
export async function sendBurst(stack, wallet, iface, calls) {
  const rpc = (method, params) => chainRpc(stack, method, params);
  for (let start = 0; start < calls.length; start += 4000) {
    const part = calls.slice(start, start + 4000);
    let nonce = Number(await rpc('eth_getTransactionCount', [wallet.address, 'pending']));
    const raws = [];
    let total = 1_000_000n;
    for (const [fn, args, gas] of part) {
      raws.push(await wallet.signTransaction({
        to: stack.contract, data: iface.encodeFunctionData(fn, args), nonce: nonce++, chainId: stack.chainId, type: 2,
        gasLimit: gas, maxFeePerGas: 50_000_000_000n, maxPriorityFeePerGas: 1n,
      }));
      total += gas;
    }
    const blockGasLimit = (await rpc('eth_getBlockByNumber', ['latest', false])).gasLimit;
    const hashes = [];
    await rpc('evm_setAutomine', [false]);
    try {
      await rpc('evm_setBlockGasLimit', ['0x' + total.toString(16)]);
      for (let i = 0; i < raws.length; i += 100) {
        hashes.push(...(await Promise.all(raws.slice(i, i + 100).map((raw) => rpc('eth_sendRawTransaction', [raw])))));
      }
      await rpc('anvil_mine', ['0x1']);
    } finally {
      await rpc('evm_setBlockGasLimit', [blockGasLimit]);
      await rpc('evm_setAutomine', [true]);
      await rpc('anvil_mine', ['0x1']);  // so the latest block has the usual limit again
    }
    for (let i = 0; i < hashes.length; i += 200) {
      const receipts = await Promise.all(hashes.slice(i, i + 200).map((h) => rpc('eth_getTransactionReceipt', [h])));
      receipts.forEach((r, j) => {
        if (r?.status !== '0x1') throw new Error(`${part[i + j][0]} #${start + i + j} failed`);
      });
    }
  }
}
