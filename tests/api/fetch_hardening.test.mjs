// Fetch hardening through the whole stack (issue 15): the IPFS gateway client meets the action
// fetch address policy on every redirect and never shows the caller internal error text; an
// action cannot fetch this service's own names; every action fetch carries X-Sigil-Run, which the
// run endpoint refuses (loop protection), also when the request comes back through a relay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import {
  startStack, httpsRequest, assertError, assertOk, newAccount, addGroup, addUsageKey,
} from './stack.mjs';

let stack;
let server; // the first "gateway" and a plain fetch target, on 127.0.0.1
let serverUrl;
let closedPort; // nothing listens here: the second gateway
let redirectTo = null; // where /gw/<cid> redirects; null = 404
const seen = []; // {path, headers} of every request the server got
const s = {};

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

before(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    seen.push({ path: url.pathname, headers: req.headers });
    if (url.pathname.startsWith('/gw/')) {
      if (redirectTo === null) { res.writeHead(404); res.end('no'); return; }
      res.writeHead(302, { Location: redirectTo(url.pathname.slice(4)) });
      res.end();
    } else if (url.pathname === '/echo') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ headers: req.headers }));
    } else if (url.pathname === '/relay') {
      // An open relay: passes the request on to the run endpoint with the caller's headers, as a
      // proxy in front of the service would. The marker must stop the second run.
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', async () => {
        const headers = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
        for (const h of ['x-api-key', 'x-sigil-run']) if (req.headers[h] !== undefined) headers[h] = req.headers[h];
        const r = await httpsRequest(stack.agent, `${stack.url}/core/v1/sigil_action`, 'POST', { headers, body: Buffer.from(body) });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ status: r.status, body: r.json }));
      });
    } else {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('hit');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  serverUrl = `http://127.0.0.1:${server.address().port}`;
  closedPort = await freePort();
  stack = await startStack({
    workers: 2,
    actions: ['fetch_allowed_addresses = 127.0.0.1', 'fetch_timeout_ms = 3000', 'ipfs_timeout_ms = 3000'],
    ipfsGateways: [`${serverUrl}/gw/`, `http://127.0.0.1:${closedPort}/ipfs/`],
  });
  s.owner = (await newAccount(stack, 'fetch hardening')).api_key;
  s.group = await addGroup(stack, s.owner, 'runners');
  s.executor = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
});

after(async () => {
  await stack?.stop();
  server?.close();
});

async function allow(code) {
  const cid = assertOk(await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) }));
  assertOk(await stack.request('POST', 'add_action_to_group', { key: s.owner, body: { group_id: s.group, action_ipfs_cid: cid } }));
  return cid;
}
async function run(code) {
  await allow(code);
  const r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code } });
  return assertOk(r, 'sigil_action');
}

test('gateway redirects meet the action fetch policy; the caller sees no internal text', async () => {
  const gwPort = new URL(stack.gatewayUrl).port;
  const cases = [
    ['127.0.0.2', () => `http://127.0.0.2:${gwPort}/ipfs/x`],
    ['localhost (a name of this service)', (cid) => `http://localhost:${gwPort}/ipfs/${cid}`],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/'],
    ['decimal 127.0.0.2', () => `http://2130706434:${gwPort}/ipfs/x`],
    ['[::1]', (cid) => `http://[::1]:${gwPort}/ipfs/${cid}`],
    ['10.0.0.1', () => 'http://10.0.0.1/'],
  ];
  for (const [i, [label, to]] of cases.entries()) {
    const code = `function main() { return "gateway case ${i}"; }`;
    const cid = await allow(code);
    writeFileSync(join(stack.gatewayDir, cid), code); // reachable, if the redirect were followed
    redirectTo = to;
    const r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { ipfs_id: cid } });
    assertError(r, 502, 'ipfs_unavailable', label);
    const m = r.json.error.message;
    assert.match(m, /gateway 1: redirected to an address that is not allowed/, `${label}: ${m}`);
    assert.match(m, /gateway 2: unreachable/, `${label}: ${m}`);
    for (const secret of ['127.0.0', '169.254', '10.0.0.1', '::1', 'localhost', String(closedPort), gwPort,
                          new URL(serverUrl).port, 'curl', 'Couldn']) {
      assert.ok(!m.includes(secret), `${label}: the message shows ${secret}: ${m}`);
    }
  }
  // Control: a redirect to an allowed address (fetch_allowed_addresses = 127.0.0.1) is followed.
  const code = 'function main() { return "via redirect"; }';
  const cid = await allow(code);
  writeFileSync(join(stack.gatewayDir, cid), code);
  redirectTo = (c) => `http://127.0.0.1:${gwPort}/ipfs/${c}`;
  const ok = await stack.request('POST', 'sigil_action', { key: s.executor, body: { ipfs_id: cid } });
  assert.equal(assertOk(ok).response, 'via redirect');
  redirectTo = null;
});

test("an action cannot fetch the service's own names, even where the address is allowed", async () => {
  const port = new URL(serverUrl).port;
  const j = await run(`async function main() {
      const out = [];
      for (const url of ['http://localhost:${port}/x', 'http://LOCALHOST.:${port}/x', 'http://api.localhost:${port}/x',
                         '${serverUrl}/plain']) {
        try { const r = await fetch(url); out.push('fetched ' + r.status); } catch (e) { out.push(e.message); }
      }
      return out; }`);
  assert.equal(j.has_error, false, JSON.stringify(j));
  const [plain, upper, sub, control] = j.response;
  for (const m of [plain, upper, sub]) assert.match(m, /this service/, m);
  assert.equal(control, 'fetched 200');
  assert.ok(!seen.some((r) => r.path === '/x'), 'no refused fetch reached the server');
});

test('every action fetch carries X-Sigil-Run, and actions cannot set or drop it', async () => {
  const j = await run(`async function main() {
      const r = await fetch('${serverUrl}/echo');
      let own;
      try { await fetch('${serverUrl}/echo', { headers: { 'X-Sigil-Run': '0' } }); own = 'sent'; } catch (e) { own = e.message; }
      return { marker: (await r.json()).headers['x-sigil-run'], own }; }`);
  assert.equal(j.has_error, false, JSON.stringify(j));
  assert.equal(j.response.marker, '1');
  assert.match(j.response.own, /X-Sigil-Run/i);
});

test('the run endpoint refuses a request with the marker: clear 403 JSON, also through a relay', async () => {
  const code = 'function main() { return "should not run"; }';
  await allow(code);
  const direct = await stack.request('POST', 'sigil_action', { key: s.executor, headers: { 'X-Sigil-Run': '1' }, body: { code } });
  assertError(direct, 403, 'run_from_action_refused');
  assert.match(direct.json.error.message, /X-Sigil-Run/);
  // Without the marker the same request runs (the refusal above was the marker's).
  assert.equal(assertOk(await stack.request('POST', 'sigil_action', { key: s.executor, body: { code } })).response,
    'should not run');
  // An action that reaches the run endpoint through a relay (with its own key) is refused the same way.
  const loop = `async function main({ key, code }) {
      const r = await fetch('${serverUrl}/relay', { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' },
                                                    body: JSON.stringify({ code }) });
      return await r.json(); }`;
  await allow(loop);
  const r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: loop, js_params: { key: s.executor, code } } });
  const out = assertOk(r);
  assert.equal(out.has_error, false, JSON.stringify(out));
  assert.equal(out.response.status, 403, JSON.stringify(out.response));
  assert.equal(out.response.body.error.code, 'run_from_action_refused');
});
