// /metrics, issue 29's leftovers: keyd's own counters (one STATS request per scrape, exported as
// sigil_keyd_*), a dead or hung keyd shown as sigil_keyd_up 0 without stalling the scrape, and the
// requests nginx refuses itself (limit_conn's 503 overloaded, limit_req's 429), which never reach a
// worker, counted from nginx's tally files (sigil_nginx_refusals_total{limit}).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { startStack, assertOk, assertError } from './stack.mjs';

let stack;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function scrape() {
  const started = performance.now();
  const r = await fetch(`${stack.operatorUrl}/metrics`);
  assert.equal(r.status, 200);
  return { text: await r.text(), ms: performance.now() - started };
}

// The value of one sample ("name{a="b"}"), or undefined.
function sample(text, series) {
  for (const line of text.split('\n')) {
    if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

// Sum of every sample of a family with labels (name{...}).
function total(text, name) {
  return text.split('\n').filter((l) => l.startsWith(name + '{')).reduce((a, l) => a + Number(l.split(' ').pop()), 0);
}

before(async () => {
  // nginx passes at most max_workers = 4 requests at once; new_account is limited to 1 a minute per
  // address after a burst of 2, so the 4th new_account in a row is nginx's 429.
  stack = await startStack({ workers: 2, maxWorkers: 4, testRoutes: true,
    supervisorOptions: ['min_spare_workers = 1', 'max_spare_workers = 4', 'reserve_workers = 1'],
    nginxEnv: { SIGIL_MINT_RATE: '1r/m', SIGIL_MINT_BURST: '2' } });
});
after(async () => {
  await stack?.stop();
});

test('keyd\'s own counters: requests and failures by kind, its latency histogram, uptime and key source', async () => {
  const first = (await scrape()).text;
  assert.equal(sample(first, 'sigil_keyd_up'), 1);
  assert.equal(sample(first, 'sigil_keyd_key_source{source="file"}'), 1);
  assert.ok(sample(first, 'sigil_keyd_uptime_seconds') > 0);
  assert.match(first, /^# TYPE sigil_keyd_requests_total counter$/m);
  assert.match(first, /^# TYPE sigil_keyd_request_duration_seconds histogram$/m);
  // Every answered request is one latency sample.
  assert.equal(total(first, 'sigil_keyd_requests_total'), sample(first, 'sigil_keyd_request_duration_seconds_count'));
  assert.equal(sample(first, 'sigil_keyd_request_duration_seconds_bucket{le="+Inf"}'),
    sample(first, 'sigil_keyd_request_duration_seconds_count'));
  assert.ok(sample(first, 'sigil_keyd_connections') >= 1);
  assert.equal(sample(first, 'sigil_keyd_connections_refused_total'), 0);

  // A request keyd does not know, sent as a (compromised) worker would: one "unknown", one failure.
  await new Promise((resolve, reject) => {
    const c = createConnection(stack.keydSocket, () => c.write(Buffer.from([0, 0, 0, 1, 0x55])));
    c.once('data', () => { c.destroy(); resolve(); });
    c.once('error', reject);
  });
  const second = (await scrape()).text;
  // The scrape's own STATS is counted once answered: each scrape adds exactly one.
  assert.equal(sample(second, 'sigil_keyd_requests_total{kind="stats"}'), sample(first, 'sigil_keyd_requests_total{kind="stats"}') + 1);
  assert.equal(sample(second, 'sigil_keyd_requests_total{kind="unknown"}'), sample(first, 'sigil_keyd_requests_total{kind="unknown"}') + 1);
  assert.equal(sample(second, 'sigil_keyd_request_failures_total{kind="unknown"}'),
    sample(first, 'sigil_keyd_request_failures_total{kind="unknown"}') + 1);
  assert.equal(sample(second, 'sigil_keyd_request_failures_total{kind="stats"}'), 0);
  assert.ok(sample(second, 'sigil_keyd_uptime_seconds') >= sample(first, 'sigil_keyd_uptime_seconds'));
});

test('nginx\'s own 503 overloaded (limit_conn) is counted, though no worker saw it', async () => {
  const before = (await scrape()).text;
  const held = Array.from({ length: 4 }, () => stack.request('GET', '/core/v1/test/sleep', { query: { ms: 2500 } }));
  await sleep(800);
  const refused = [];
  for (let i = 0; i < 5; i++) refused.push(await stack.request('GET', '/core/v1/version'));
  for (const res of await Promise.all(held)) assertOk(res);
  const n503 = refused.filter((r) => r.status === 503).length;
  for (const r of refused.filter((x) => x.status === 503)) {
    assertError(r, 503, 'overloaded');
    assert.equal(r.headers['retry-after'], '1');
  }
  assert.ok(n503 >= 1, refused.map((r) => r.status).join(','));
  const after = (await scrape()).text;
  const nginxDelta = sample(after, 'sigil_nginx_refusals_total{limit="conn"}') - sample(before, 'sigil_nginx_refusals_total{limit="conn"}');
  const workerDelta = sample(after, 'sigil_overload_refusals_total') - sample(before, 'sigil_overload_refusals_total');
  // Every 503 the client saw was counted once: by nginx, or (a request that got through) by a worker.
  assert.equal(nginxDelta + workerDelta, n503, `nginx ${nginxDelta}, workers ${workerDelta}, client ${n503}`);
  assert.ok(nginxDelta >= 1, 'nginx refused at least one itself');
  // Those never reached a worker: the workers' request count for the route grew by the ones served only.
  const served = refused.filter((r) => r.status === 200).length;
  assert.equal(sample(after, 'sigil_http_requests_total{route="GET /core/v1/version",status="2xx"}') ?? 0,
    (sample(before, 'sigil_http_requests_total{route="GET /core/v1/version",status="2xx"}') ?? 0) + served);
});

test('nginx\'s own 429 (limit_req on new_account) is counted exactly', async () => {
  const before = (await scrape()).text;
  const statuses = [];
  for (let i = 0; i < 5; i++) {
    const r = await stack.request('POST', 'new_account', { body: { account_name: `rl${i}`, account_description: 'limit' } });
    statuses.push(r.status);
    if (r.status === 429) assertError(r, 429, 'rate_limited');
  }
  const n429 = statuses.filter((s) => s === 429).length;
  assert.ok(n429 >= 2, statuses.join(','));
  const after = (await scrape()).text;
  assert.equal(sample(after, 'sigil_nginx_refusals_total{limit="req"}') - sample(before, 'sigil_nginx_refusals_total{limit="req"}'), n429);
  assert.equal(sample(after, 'sigil_nginx_refusals_total{limit="conn"}'), sample(before, 'sigil_nginx_refusals_total{limit="conn"}'));
});

test('a hung keyd and a dead keyd show sigil_keyd_up 0 without stalling the scrape, and keyd comes back', async () => {
  const pid = stack.pidOf('keyd');
  process.kill(pid, 'SIGSTOP');
  let hung;
  try {
    hung = await scrape();
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  assert.equal(sample(hung.text, 'sigil_keyd_up'), 0);
  assert.equal(sample(hung.text, 'sigil_keyd_requests_total{kind="stats"}'), undefined, 'no keyd series without an answer');
  assert.ok(hung.ms < 8000, `the scrape took ${Math.round(hung.ms)} ms with keyd stopped`);
  // The rest of the scrape is there.
  assert.match(hung.text, /^sigil_build_info\{/m);
  assert.match(hung.text, /^sigil_workers_max 4$/m);

  const restarting = stack.restart('keyd', { signal: 'SIGKILL', downMs: 2500 });
  await sleep(500);
  const dead = await scrape();
  await restarting;
  assert.equal(sample(dead.text, 'sigil_keyd_up'), 0);
  assert.ok(dead.ms < 3000, `the scrape took ${Math.round(dead.ms)} ms with keyd dead`);

  const back = (await scrape()).text;
  assert.equal(sample(back, 'sigil_keyd_up'), 1);
  assert.ok(sample(back, 'sigil_keyd_uptime_seconds') < 30, 'a new keyd');
});
