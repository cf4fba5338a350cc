// Prometheus metrics (issue 29): /metrics on nginx's operator listener only (never the public one),
// counted in the pool's shared mapping so one scrape sees every worker; a real Prometheus (Debian's
// package) scrapes the stack with ops/sigil-alerts.yml loaded, and its queries after known traffic
// give exact counts. With [metrics] enabled = false there is no /metrics at all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startStack, httpsRequest, assertOk, newAccount, addGroup, actionRunner, eventually, SOURCE_DIR } from './stack.mjs';

const VERSION_CALLS = 7;
const OK_RUNS = 3;
const THROWING_RUNS = 2;
const HELLO = 'function main(p) { return "hello " + p.n; }';
const THROWS = 'function main(p) { throw new Error("no " + p.n); }';

let stack;
let prom;
const s = {};

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => res(port)); });
  });
}

async function scrape(base = stack.operatorUrl) {
  const r = await fetch(`${base}/metrics`);
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
}

// The value of one sample in an exposition ("name{a="b",c="d"}"), or undefined.
function sample(text, series) {
  for (const line of text.split('\n')) {
    if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

async function promQuery(expr) {
  const r = await fetch(`${prom.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const j = await r.json();
  assert.equal(j.status, 'success', JSON.stringify(j));
  return j.data.result;
}

before(async () => {
  stack = await startStack({ workers: 2, maxWorkers: 4, supervisorOptions: ['reserve_workers = 1'], teeSim: true,
    evidenceMetrics: true });
  s.owner = (await newAccount(stack, 'metrics')).api_key;
  s.group = await addGroup(stack, s.owner, 'metrics');
  s.run = actionRunner(stack, { owner: s.owner, group: s.group, key: s.owner });
});
after(async () => {
  if (prom) {
    prom.child.kill('SIGTERM');
    await new Promise((r) => (prom.child.exitCode !== null ? r() : prom.child.once('exit', r)));
    rmSync(prom.home, { recursive: true, force: true });
  }
  await stack?.stop();
});

test('the public listener never serves /metrics, in any spelling', async () => {
  for (const path of ['/metrics', '/metrics?x=1', '//metrics', '/%6detrics', '/metrics/']) {
    const r = await httpsRequest(stack.agent, stack.url + path, 'GET');
    assert.equal(r.status, 404, `${path} -> ${r.status}`);
    assert.ok(!r.text.includes('sigil_'), `${path} leaked metrics`);
    assert.equal(r.json?.error?.code, 'not_found', path);
  }
  // /metrics is not in the public OpenAPI document either.
  const doc = assertOk(await stack.request('GET', '/core/v1/openapi.json'));
  assert.ok(!Object.keys(doc.paths).includes('/metrics'));
});

test('the operator listener serves /metrics and nothing else', async () => {
  const m = await scrape();
  assert.equal(m.status, 200);
  assert.match(m.type, /^text\/plain; version=0\.0\.4/);
  assert.match(m.text, /^sigil_build_info\{version="[^"]+",commit="[0-9a-f]{12}|unknown"\} 1$/m);
  assert.match(m.text, /^# TYPE sigil_runs_total counter$/m);
  assert.equal(sample(m.text, 'sigil_keyd_up'), 1);
  assert.equal(sample(m.text, 'sigil_chain_circuit_open'), 0);
  assert.equal(sample(m.text, 'sigil_workers_max'), 4);
  // The evidence set sigil-evidence wrote at start: present, seconds old, its certificate valid for days.
  assert.equal(sample(m.text, 'sigil_evidence_present'), 1);
  assert.ok(sample(m.text, 'sigil_evidence_age_seconds') < 600);
  assert.ok(sample(m.text, 'sigil_evidence_certificate_expiry_timestamp_seconds') > Date.now() / 1000 + 86400);
  for (const path of ['/health', '/core/v1/version', '/']) {
    const r = await fetch(stack.operatorUrl + path);
    assert.equal(r.status, 404, `operator ${path}`);
  }
  // No label carries an account, a key or a CID.
  assert.ok(!m.text.includes(s.owner));
  assert.ok(!/Qm[1-9A-HJ-NP-Za-km-z]{44}/.test(m.text));
  assert.ok(!/0x[0-9a-f]{40}/i.test(m.text));
});

test('a run that computes shows its CPU time (the zygote\'s wait4)', async () => {
  const before = (await scrape()).text;
  const sumBefore = sample(before, 'sigil_run_cpu_seconds_sum') ?? 0;
  // Busy for a fixed amount of work, not of wall time: a loaded machine stretches the wall time.
  const r = await s.run('function main() { let x = 0; for (let i = 0; i < 3000000; i++) x = (x + i * 7) % 1000003; return x; }', {});
  assert.equal(r.has_error, false, JSON.stringify(r));
  // A run answers before its child is reaped: the worker counts the report at its next run, so
  // every worker of the pool runs once more.
  const after = await eventually(async () => {
    await Promise.all([s.run(HELLO, { n: 0 }), s.run(HELLO, { n: 1 })]);
    const text = (await scrape()).text;
    return sample(text, 'sigil_run_cpu_seconds_sum') - sumBefore >= 0.05 ? text : null;
  }, 20000, 100).catch(() => null) ?? (await scrape()).text;
  const spent = sample(after, 'sigil_run_cpu_seconds_sum') - sumBefore;
  assert.ok(spent >= 0.05, `the computing run cost ${spent} s of CPU by the metric`);
});

test('known traffic gives exact counts, across workers, in one scrape', async () => {
  const before = (await scrape()).text;
  const versionBefore = sample(before, 'sigil_http_requests_total{route="GET /core/v1/version",status="2xx"}') ?? 0;
  const okBefore = sample(before, 'sigil_runs_total{ending="ok"}');
  const errBefore = sample(before, 'sigil_runs_total{ending="script_error"}');
  const unmatchedBefore = sample(before, 'sigil_http_requests_total{route="unmatched",status="4xx"}') ?? 0;
  const cpuCountBefore = sample(before, 'sigil_run_cpu_seconds_count') ?? 0;
  const cpuSumBefore = sample(before, 'sigil_run_cpu_seconds_sum') ?? 0;
  // Two at a time (nginx passes at most max_workers = 4 at once), so both workers serve some of them:
  // the counts are the pool's, not one worker's.
  for (let i = 0; i < VERSION_CALLS; i += 2) {
    await Promise.all(Array.from({ length: Math.min(2, VERSION_CALLS - i) },
      () => stack.request('GET', 'version').then((r) => assertOk(r))));
  }
  for (let i = 0; i < OK_RUNS; i++) assert.equal((await s.run(HELLO, { n: i })).response, `hello ${i}`);
  for (let i = 0; i < THROWING_RUNS; i++) assert.equal((await s.run(THROWS, { n: i })).has_error, true);
  const nope = await stack.request('GET', '/core/v1/no_such_endpoint');
  assert.equal(nope.status, 404);

  const after = (await scrape()).text;
  assert.equal(sample(after, 'sigil_http_requests_total{route="GET /core/v1/version",status="2xx"}'), versionBefore + VERSION_CALLS);
  assert.equal(sample(after, 'sigil_runs_total{ending="ok"}'), okBefore + OK_RUNS);
  assert.equal(sample(after, 'sigil_runs_total{ending="script_error"}'), errBefore + THROWING_RUNS);
  assert.equal(sample(after, 'sigil_http_requests_total{route="unmatched",status="4xx"}'), unmatchedBefore + 1);
  assert.equal(sample(after, 'sigil_http_requests_total{route="POST /core/v1/sigil_action",status="2xx"}'),
    (sample(before, 'sigil_http_requests_total{route="POST /core/v1/sigil_action",status="2xx"}') ?? 0) + OK_RUNS + THROWING_RUNS);
  assert.equal(sample(after, 'sigil_run_duration_seconds_count{ending="ok"}'), okBefore + OK_RUNS);
  // Each run's sandbox child's CPU time, from the zygote's wait4: one sample per run, counted when
  // the worker reads the exit report (the last run of each of the pool's workers at its next run).
  assert.ok(sample(after, 'sigil_run_cpu_seconds_count') >= cpuCountBefore + OK_RUNS + THROWING_RUNS - 2);
  assert.ok(sample(after, 'sigil_zygote_spawn_duration_seconds_count') >= OK_RUNS + THROWING_RUNS);
  // Every run checks its key on chain, and keyd answered the new account's writes.
  assert.ok(sample(after, 'sigil_chain_calls_total{method="eth_call"}') > 0);
  assert.ok(sample(after, 'sigil_dependency_duration_seconds_count{dependency="keyd"}') > 0);
  assert.equal(sample(after, 'sigil_dependency_failures_total{dependency="keyd"}'), 0);
  // The supervisor's own series: the pool's two workers were started by it.
  assert.ok(sample(after, 'sigil_worker_starts_total') >= 2);
  assert.ok(sample(after, 'sigil_zygote_starts_total') >= 1);
  s.after = after;
});

test('a real Prometheus scrapes the stack, loads the alert rules, and its queries give the same counts', async () => {
  assert.ok(s.after, 'needs the traffic test');
  const home = mkdtempSync('/tmp/sigil-prometheus-');
  const port = await freePort();
  const target = new URL(stack.operatorUrl).host;
  writeFileSync(join(home, 'prometheus.yml'), [
    'global:', '  scrape_interval: 1s', '  evaluation_interval: 1s',
    'rule_files:', `  - ${join(SOURCE_DIR, 'ops/sigil-alerts.yml')}`,
    'scrape_configs:', '  - job_name: sigil', '    static_configs:', `      - targets: ['${target}']`, '',
  ].join('\n'));
  execFileSync('promtool', ['check', 'config', join(home, 'prometheus.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const child = spawn('prometheus', [`--config.file=${join(home, 'prometheus.yml')}`, `--storage.tsdb.path=${join(home, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  prom = { child, home, url: `http://127.0.0.1:${port}` };

  const up = await eventually(async () => {
    try { return (await promQuery('up{job="sigil"}'))[0]?.value[1] === '1'; } catch { return false; }
  }, 60000, 500);
  assert.ok(up, `Prometheus never scraped the stack: ${stderr.slice(-2000)}`);

  // No traffic since the last scrape of the test: Prometheus's newest samples hold the same counts.
  const expect = async (expr, value) => {
    const got = await eventually(async () => (await promQuery(expr))[0]?.value[1], 30000, 500);
    assert.equal(Number(got), value, expr);
  };
  await expect('sigil_runs_total{ending="ok"}', sample(s.after, 'sigil_runs_total{ending="ok"}'));
  await expect('sigil_runs_total{ending="script_error"}', sample(s.after, 'sigil_runs_total{ending="script_error"}'));
  await expect('sigil_http_requests_total{route="GET /core/v1/version",status="2xx"}',
    sample(s.after, 'sigil_http_requests_total{route="GET /core/v1/version",status="2xx"}'));
  await expect('sigil_chain_circuit_open', 0);
  await expect('sigil_keyd_up', 1);
  // A histogram quantile over the pool's runs answers a number (the buckets are well formed).
  const q = await promQuery('histogram_quantile(0.5, sum by (le) (sigil_run_duration_seconds_bucket))');
  assert.ok(Number.isFinite(Number(q[0]?.value[1])), JSON.stringify(q));

  // Every rule of ops/sigil-alerts.yml is loaded and healthy; none fires on a well stack.
  const rules = await eventually(async () => {
    const j = await (await fetch(`${prom.url}/api/v1/rules`)).json();
    const all = j.data.groups.flatMap((g) => g.rules);
    return all.length && all.every((r) => r.health === 'ok') ? all : null;
  }, 30000, 500);
  assert.ok(rules, 'the alert rules did not load and evaluate');
  assert.equal(rules.length, 12);
  const firing = rules.filter((r) => r.state === 'firing').map((r) => r.name);
  assert.deepEqual(firing, []);
});

test('with [metrics] enabled = false there is no /metrics, and the stack serves as before', async () => {
  const off = await startStack({ workers: 1, maxWorkers: 2, supervisorOptions: ['reserve_workers = 1'], metrics: ['enabled = false'] });
  try {
    assertOk(await off.request('GET', 'version'));
    const r = await scrape(off.operatorUrl);
    assert.equal(r.status, 404);
    assert.ok(!r.text.includes('sigil_'));
  } finally {
    await off.stop();
  }
});
