// Running actions through the whole stack (POST /core/v1/sigil_action): the example
// actions, the action API with every signature checked by ethers (never by our own code), the
// execution-flow authorization, every limit, fetch and its address policy, runs by CID from the
// development gateway, and isolation between runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { writeFileSync, readFileSync, statSync, rmSync, mkdtempSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import {
  startStack, ethers, assertError, assertOk, newAccount, addGroup, addUsageKey, createWallet, keccakText,
} from './stack.mjs';

let stack;
let codeCacheDir;
let server; // a local HTTP server for fetch
let serverUrl;
const hits = [];
const s = {};

const ACTION_TIMEOUT_MS = 2000;

before(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    hits.push(url.pathname + url.search);
    if (url.pathname === '/hang') return;  // never answers
    if (url.pathname === '/json') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Test': 'yes' });
      res.end(JSON.stringify({ hello: 'world', method: req.method }));
    } else if (url.pathname === '/big') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('x'.repeat(5000));
    } else if (url.pathname === '/redirect') {
      res.writeHead(302, { Location: url.searchParams.get('to') });
      res.end();
    } else if (url.pathname === '/echo') {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null }));
      });
    } else {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('hit');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  serverUrl = `http://127.0.0.1:${server.address().port}`;

  const codeCache = codeCacheDir = mkdtempSync('/tmp/sigil-codecache-');
  stack = await startStack({
    workers: 2,
    actions: [
      `timeout_ms = ${ACTION_TIMEOUT_MS}`, 'memory_bytes = 16777216', 'max_code_bytes = 200000',
      'max_js_params_bytes = 1024', 'max_response_bytes = 4096', 'max_log_bytes = 2048', 'max_fetch_count = 4',
      'max_key_requests = 10', 'fetch_max_response_bytes = 1000', 'fetch_timeout_ms = 3000',
      'fetch_allowed_addresses = 127.0.0.1', `code_cache_dir = ${codeCache}`,
    ],
  });
  s.owner = (await newAccount(stack, 'actions')).api_key;
  s.group = await addGroup(stack, s.owner, 'runners');
  s.other = await addGroup(stack, s.owner, 'other');
  s.pkp = (await createWallet(stack, s.owner)).toLowerCase();
  s.pkpOutside = (await createWallet(stack, s.owner)).toLowerCase(); // in no group
  assertOk(await stack.request('POST', 'add_pkp_to_group', { key: s.owner, body: { group_id: s.group, pkp_id: s.pkp } }));
  s.executor = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
  s.otherExecutor = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.other)] });
  s.noExecute = await addUsageKey(stack, s.owner, { can_create_groups: true });
  // A second account with its own PKP and group.
  s.b = (await newAccount(stack, 'actions b')).api_key;
  s.bGroup = await addGroup(stack, s.b, 'b runners');
  s.bPkp = (await createWallet(stack, s.b)).toLowerCase();
  assertOk(await stack.request('POST', 'add_pkp_to_group', { key: s.b, body: { group_id: s.bGroup, pkp_id: s.bPkp } }));
});

after(async () => {
  await stack?.stop();
  if (codeCacheDir) rmSync(codeCacheDir, { recursive: true, force: true });
  server?.closeAllConnections();
  server?.close();
});

const allowed = new Set();
async function cidOf(code) {
  const r = await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(code) });
  return assertOk(r, 'get_sigil_action_ipfs_id');
}
/// Lists the code's CID in `group` (the runners group by default); returns the CID.
async function allow(code, group = s.group, key = s.owner) {
  const cid = await cidOf(code);
  const tag = `${group}:${cid}`;
  if (!allowed.has(tag)) {
    assertOk(await stack.request('POST', 'add_action_to_group', { key, body: { group_id: group, action_ipfs_cid: cid } }));
    allowed.add(tag);
  }
  return cid;
}
async function run(code, { key = s.executor, pkp = s.pkp, params, status = 200, allowIt = true } = {}) {
  if (allowIt) await allow(code);
  const body = { code };
  if (pkp) body.pkp_id = pkp;
  if (params !== undefined) body.js_params = params;
  const r = await stack.request('POST', 'sigil_action', { key, body });
  assert.equal(r.status, status, `sigil_action -> ${r.status} ${r.text.slice(0, 400)}`);
  return r.json;
}
function assertRunError(j, code) {
  assert.equal(j.has_error, true, JSON.stringify(j));
  assert.equal(j.error.code, code, JSON.stringify(j));
  assert.ok(j.error.message.length > 0);
}

test('hello world (the first example, modern syntax, inline code)', async () => {
  const j = await run('async function main() { return "Hello World!"; }');
  assert.deepEqual(j, { response: 'Hello World!', logs: '', has_error: false });
});

test('Encrypt then Decrypt round trip (the second and third examples)', async () => {
  const enc = await run('async function main({ pkpId, challenge }) { const result = await Lit.Actions.Encrypt({ pkpId, message: challenge }); return result; }',
    { params: { pkpId: s.pkp, challenge: 'the secret ✓' } });
  assert.equal(enc.has_error, false, JSON.stringify(enc));
  assert.match(enc.response, /^[0-9a-f]{58,}$/); // nonce(12) || ciphertext || tag(16)
  const dec = await run('async function main({ pkpId, ciphertext }) { return await Lit.Actions.Decrypt({ pkpId, ciphertext }); }',
    { params: { pkpId: s.pkp, ciphertext: enc.response } });
  assert.equal(dec.response, 'the secret ✓');
  // Another PKP's key cannot open it; tampering is refused.
  const tampered = enc.response.slice(0, -2) + (enc.response.endsWith('00') ? '01' : '00');
  const bad = await run('async function main({ pkpId, ciphertext }) { return await Lit.Actions.Decrypt({ pkpId, ciphertext }); }',
    { params: { pkpId: s.pkp, ciphertext: tampered } });
  assertRunError(bad, 'script_error');
  assert.match(bad.error.message, /decryption failed/);
});

test('action key + ethers.Wallet (the fourth example): ethers verifies the signature', async () => {
  const code = 'async function main() { const pk = await Lit.Actions.getLitActionPrivateKey(); const wallet = new ethers.Wallet(pk); const signature = await wallet.signMessage("Chipotle Rocks!"); return { wallet_address: wallet.address, signature, publicKey: wallet.publicKey }; }';
  const cid = await allow(code);
  const j = await run(code, { allowIt: false });
  assert.equal(j.has_error, false, JSON.stringify(j));
  const { wallet_address, signature, publicKey } = j.response;
  assert.equal(ethers.verifyMessage('Chipotle Rocks!', signature), wallet_address);
  assert.equal(ethers.computeAddress(publicKey), wallet_address);
  // The action key functions agree with each other, for this CID and when asked by CID.
  const agree = await run(`async function main() {
      const pk = await Lit.Actions.getLitActionPrivateKey();
      return { pub: await Lit.Actions.getLitActionPublicKey({ ipfsId: '${cid}' }),
               addr: await Lit.Actions.getLitActionWalletAddress({ ipfsId: '${cid}' }),
               mine: new ethers.Wallet(pk).address,
               sigilAddr: Sigil.Actions.getActionWalletAddress({ ipfsId: '${cid}' }) }; }`);
  assert.equal(agree.has_error, false, JSON.stringify(agree));
  assert.equal(agree.response.addr, wallet_address);
  assert.equal(agree.response.sigilAddr, wallet_address);
  assert.equal(ethers.computeAddress(agree.response.pub), wallet_address);
  // ...and the running action's own key differs from the other CID's.
  assert.notEqual(agree.response.mine, wallet_address);
});

test('the anchor\'s API: Lit.Actions answer promises (then, catch, rejections); its natives deriveEthAddress and signMessage(privateKey, message) answer what ethers answers', async () => {
  // The native variant of the anchor's published ecdsa-sign action, and its ethers variant.
  const native = `async function main() {
      const privateKey = await Lit.Actions.getLitActionPrivateKey();
      const { address, publicKey } = Lit.Actions.deriveEthAddress(privateKey);
      const signature = Lit.Actions.signMessage(privateKey, "Chipotle Rocks!");
      const bare = Lit.Actions.deriveEthAddress(privateKey.slice(2)).address;
      return { wallet_address: address, signature, publicKey, bare, privateKey }; }`;
  const j = await run(native);
  assert.equal(j.has_error, false, JSON.stringify(j));
  const wallet = new ethers.Wallet(j.response.privateKey);
  assert.equal(j.response.wallet_address, wallet.address);
  assert.equal(j.response.bare, wallet.address);
  assert.equal(j.response.publicKey, wallet.signingKey.publicKey);
  assert.equal(j.response.signature, await wallet.signMessage('Chipotle Rocks!'));
  // Promises: then and catch chain on any operation; a failed one rejects (await throws it);
  // Sigil.Actions keeps answering values.
  const promised = await run(`async function main({ pkpId }) {
      const p = Lit.Actions.getLitActionPrivateKey();
      const length = await p.then((k) => k.length);
      const caught = await Lit.Actions.Decrypt({ pkpId, ciphertext: '00' }).catch((e) => 'caught: ' + e.message);
      let thrown = null;
      try { await Lit.Actions.getPublicKey({ pkpId: 'not a key' }); } catch (e) { thrown = e.message; }
      return { thenable: typeof p.then, length, caught, thrown, direct: typeof Sigil.Actions.getPublicKey({ pkpId }),
               response: Lit.Actions.setResponse({ response: 'x' }) }; }`, { params: { pkpId: s.pkp } });
  assert.equal(promised.has_error, false, JSON.stringify(promised));
  assert.equal(promised.response.thenable, 'function');
  assert.equal(promised.response.length, 66);
  assert.match(promised.response.caught, /^caught: ./);
  assert.ok(promised.response.thrown, JSON.stringify(promised.response));
  assert.equal(promised.response.direct, 'string');
  assert.equal('response' in promised.response, false, 'setResponse answers nothing, synchronously');
});

test('PKP signatures recover to the PKP address in ethers (signMessage, signTypedData, signEcdsa, getPublicKey)', async () => {
  const domain = { name: 'Sigil Test', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' };
  const types = { Person: [{ name: 'name', type: 'string' }, { name: 'wallet', type: 'address' }],
    Mail: [{ name: 'from', type: 'Person' }, { name: 'to', type: 'Person' }, { name: 'contents', type: 'string' }] };
  const value = { from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' }, contents: 'Hello, Bob!' };
  const digest = ethers.keccak256(ethers.toUtf8Bytes('digest to sign'));
  const j = await run(`async function main({ pkpId, domain, types, value, digest }) {
      const A = Sigil.Actions;
      return { message: await A.signMessage({ pkpId, message: 'hello sigil' }),
               bytes: A.signMessage({ pkpId, message: new Uint8Array([1, 2, 3]) }),
               typed: await A.signTypedData({ pkpId, domain, types, value }),
               ecdsa: A.signEcdsa({ pkpId, toSign: digest }),
               pub: A.getPublicKey({ pkpId }) }; }`, { params: { pkpId: s.pkp, domain, types, value, digest } });
  assert.equal(j.has_error, false, JSON.stringify(j));
  const r = j.response;
  const pkp = ethers.getAddress(s.pkp);
  assert.equal(ethers.verifyMessage('hello sigil', r.message), pkp);
  assert.equal(ethers.verifyMessage(new Uint8Array([1, 2, 3]), r.bytes), pkp);
  assert.equal(ethers.verifyTypedData(domain, types, value, r.typed), pkp);
  const sig = ethers.getBytes(r.ecdsa);
  assert.ok(sig[64] === 0 || sig[64] === 1, 'signEcdsa v is the recovery id');
  assert.equal(ethers.recoverAddress(digest, ethers.Signature.from({ r: ethers.hexlify(sig.slice(0, 32)), s: ethers.hexlify(sig.slice(32, 64)), yParity: sig[64] })), pkp);
  assert.equal(ethers.computeAddress(r.pub), pkp);
});

test('js_params, logs, setResponse and a thrown exception', async () => {
  const j = await run(`async function main({ a, b }) {
      console.log('sum', a + b, { a });
      Lit.Actions.setResponse({ response: JSON.stringify({ sum: a + b }) }); }`, { params: { a: 2, b: 40 } });
  assert.equal(j.has_error, false);
  // A string response holding JSON is answered parsed (DESIGN.md section 4, issue 28).
  assert.deepEqual(j.response, { sum: 42 });
  assert.equal(j.logs, 'sum 42 {"a":2}\n');
  const obj = await run('function main(p) { return { echoed: p, list: [1, "two", null] }; }', { params: { x: [1, { y: 'z' }] } });
  assert.deepEqual(obj.response, { echoed: { x: [1, { y: 'z' }] }, list: [1, 'two', null] });
  const thrown = await run('async function main() { console.log("before"); const o = null; return o.field; }');
  assertRunError(thrown, 'script_error');
  assert.equal(thrown.error.name, 'TypeError');
  assert.match(thrown.error.stack, /main/);
  assert.equal(thrown.logs, 'before\n');
  const syntax = await run('async function main() { return [1, 2; }');
  assertRunError(syntax, 'syntax_error');
  assert.match(syntax.error.message, /line 1/);
});

test('error stacks name the script\'s own frames only: no server source path, no runtime internals', async () => {
  // An op the worker refuses (its error is made by a native in the sandbox), an engine TypeError
  // inside a built-in's callback, and both read by the script itself and reported uncaught.
  const code = `function inner(pkpId) { const r = Sigil.Actions.encrypt({ pkpId, message: 'm' }); return r; }
async function main({ pkpId }) {
  const seen = [];
  try { inner(pkpId); } catch (e) { seen.push(e.stack, String(e.fileName), String(e.lineNumber)); }
  try { [1].forEach(() => null.x); } catch (e) { seen.push(e.stack); }
  seen.push(new Error('here').stack);
  console.log(JSON.stringify(seen));
  inner(pkpId);
}`;
  const j = await run(code, { params: { pkpId: s.pkpOutside } });
  assertRunError(j, 'script_error');
  const texts = [...JSON.parse(j.logs || '[]'), j.error.stack];
  assert.equal(texts.length, 6, JSON.stringify(j));
  for (const text of texts) {
    assert.ok(!/[\/]|\.cpp|\.c:|\.h:|duktape|prelude\.js|shims\.js|ethers5\.js| internal\b/.test(text), `leaks: ${text}`);
  }
  assert.match(texts[0], /not_authorized|no group/);
  assert.match(texts[0], /at inner \(action\.js:\d+\)/);
  assert.match(texts[0], /at main \(action\.js:\d+\)/);
  assert.equal(texts[1], 'action.js');
  assert.match(texts[2], /^\d+$/);
  assert.match(texts[3], /TypeError/);
  assert.match(texts[4], /^Error: here\n {4}at main \(action\.js:\d+\)/);
  assert.match(j.error.stack, /at inner \(action\.js:\d+\)/);
});

test('modules: an import of anything but ipfs://<CID> is refused before the run with import_not_allowed naming the module and the way out; exports without modules run', async () => {
  for (const [code, module, line] of [
    ['import { z } from "zod@3.22.4";\nasync function main() { return 1; }', 'zod@3.22.4', 1],
    ['const x = 1;\nexport * from "./lit-action-core.js";\nasync function main() { return 1; }', './lit-action-core.js', 2],
    ['async function main() { const m = await import("https://cdn.example/m.js"); return 1; }', 'https://cdn.example/m.js', 1],
  ]) {
    const j = await run(code);
    assertRunError(j, 'import_not_allowed');
    assert.equal(j.error.name, 'SyntaxError');
    assert.ok(j.error.message.startsWith(`line ${line}, column `), j.error.message);
    assert.ok(j.error.message.includes(`"${module}"`), j.error.message);
    assert.match(j.error.message, /import it as "ipfs:\/\/<its CID>"/);
  }
  const exported = await run('const helper = (v) => v * 2;\nexport async function main({ v }) { return helper(v) + K; }\nexport const K = 1;\nexport {\n helper };\n',
    { params: { v: 20 } });
  assert.deepEqual([exported.has_error, exported.response], [false, 41], JSON.stringify(exported));
  const byDefault = await run('export default async function main({ v }) { return v; }', { params: { v: 'd' } });
  assert.equal(byDefault.response, 'd', JSON.stringify(byDefault));
  // A line that only mentions the words is not a module.
  assert.equal((await run('// import and export nothing\nasync function main() { return "plain"; }')).response, 'plain');
  assertRunError(await run('export default async () => 1;'), 'syntax_error');
});

test('every limit ends the run with its own error, and the worker keeps serving', async () => {
  const t0 = Date.now();
  assertRunError(await run('async function main() { while (true) {} }'), 'time_limit');
  assert.ok(Date.now() - t0 < ACTION_TIMEOUT_MS + 1500, `time limit took ${Date.now() - t0} ms`);
  assertRunError(await run('function main() { var a = []; while (true) a.push("x".repeat(10000) + a.length); }'), 'memory_limit');
  assertRunError(await run('function main() { return "x".repeat(5000); }'), 'response_limit');
  assertRunError(await run('function main() { for (var i = 0; i < 100; i++) console.log("0123456789012345678901234567890123456789"); }'), 'log_limit');
  assertRunError(await run(`async function main() { for (let i = 0; i < 5; i++) await fetch('${serverUrl}/count'); }`), 'fetch_limit');
  assertRunError(await run('async function main({ pkpId }) { for (let i = 0; i < 11; i++) Sigil.Actions.getPublicKey({ pkpId }); }',
    { params: { pkpId: s.pkp } }), 'key_request_limit');
  // Request-side limits: refused before anything runs.
  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: 'function main(){}', js_params: { x: 'y'.repeat(2000) } } }),
    413, 'js_params_too_large');
  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: '//' + 'x'.repeat(300000) } }),
    413, 'code_too_large');
  // Still serving, on every worker.
  for (let i = 0; i < 4; i++) assert.equal((await run('function main() { return 1; }')).response, 1);
});

test('every byte a run returns is capped: logs with their newlines, error message and stack cut with a marker', async () => {
  // What a run's HTTP body may hold at most with this stack's limits: response 4096 + logs 2048 +
  // error name/message/stack caps (128 + 4096 + 8192) + framing.
  const MAX_BODY = 4096 + 2048 + 128 + 4096 + 8192 + 1024;
  const raw = async (code) => {
    await allow(code);
    const r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code, pkp_id: s.pkp } });
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.ok(r.raw.length <= MAX_BODY, `a ${r.raw.length}-byte body`);
    return r.json;
  };
  // Empty lines are lines: a loop of console.log() hits the log limit (it returned 16 MB before).
  const empty = await raw('function main() { for (;;) console.log(); }');
  assertRunError(empty, 'log_limit');
  assert.ok(empty.logs.length <= 2048);
  const thrown = await raw('function main() { throw new Error("e".repeat(500000)); }');
  assertRunError(thrown, 'script_error');
  assert.ok(thrown.error.message.length <= 4096, `message of ${thrown.error.message.length}`);
  assert.match(thrown.error.message, /^e+ \[\.\.\. 500000 bytes, cut\]$/);
  assert.ok(!thrown.error.stack || thrown.error.stack.length <= 8192);
  // A thrown non-Error with a huge string, and a long error name.
  const named = await raw('function main() { var e = new Error("m"); e.name = "N".repeat(100000); throw e; }');
  assert.equal(named.has_error, true);
  assert.ok(named.error.name.length <= 128, `name of ${named.error.name.length}`);
});

test('an op never outlives the run: a fetch gets only the time the run has left', async () => {
  // fetch_timeout_ms is 3000, the run's limit 2000: the hanging fetch must end with the run.
  const t0 = Date.now();
  const j = await run(`async function main() { await fetch('${serverUrl}/hang'); return 'unreachable'; }`);
  const ms = Date.now() - t0;
  assert.equal(j.has_error, true, JSON.stringify(j));
  assert.ok(ms < ACTION_TIMEOUT_MS + 800, `the run took ${ms} ms with a ${ACTION_TIMEOUT_MS} ms limit`);
});

test('fetch reaches an allowed server; other loopback addresses, redirects to them and big bodies are refused', async () => {
  const j = await run(`async function main() {
      const r = await fetch('${serverUrl}/json');
      const p = await fetch('${serverUrl}/echo', { method: 'POST', body: 'payload', headers: { Authorization: 'Bearer t' } });
      return { status: r.status, ok: r.ok, header: r.headers.get('x-test'), json: await r.json(), echo: await p.json(), pstatus: p.status }; }`);
  assert.equal(j.has_error, false, JSON.stringify(j));
  assert.deepEqual(j.response, { status: 200, ok: true, header: 'yes', json: { hello: 'world', method: 'GET' },
    echo: { method: 'POST', body: 'payload', auth: 'Bearer t' }, pstatus: 201 });
  const port = new URL(serverUrl).port;
  const refused = await run(`async function main() {
      const out = [];
      for (const url of ['http://127.0.0.2:${port}/x', '${serverUrl}/redirect?to=' + encodeURIComponent('http://127.0.0.2:${port}/y'),
                         '${serverUrl}/big', 'file:///etc/passwd']) {
        try { await fetch(url); out.push('fetched ' + url); } catch (e) { out.push(e.message); }
      }
      return out; }`);
  assert.equal(refused.has_error, false, JSON.stringify(refused));
  const [direct, redirected, big, file] = refused.response;
  assert.match(direct, /not public|refused/i);
  assert.match(redirected, /not public|refused/i);
  assert.match(big, /exceeds 1000 bytes/);
  assert.match(file, /http|scheme|protocol/i);
  assert.ok(!hits.some((h) => h.startsWith('/y')), 'the redirect target was never reached');
});

test('runs by ipfs_id come from the gateway, verified against the CID', async () => {
  const code = 'async function main({ n }) { return `by cid ${n * 2}`; }';
  const cid = await allow(code);
  writeFileSync(join(stack.gatewayDir, cid), code);
  const r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { ipfs_id: cid, pkp_id: s.pkp, js_params: { n: 21 } } });
  assert.equal(assertOk(r).response, 'by cid 42');
  // Cached by CID, for every worker (the shared folder): the run works with the file gone.
  assert.ok(readdirSync(codeCacheDir).includes(cid), 'kept in code_cache_dir');
  rmSync(join(stack.gatewayDir, cid));
  for (let i = 0; i < 4; i++) {
    const again = await stack.request('POST', 'sigil_action', { key: s.executor, body: { ipfs_id: cid, js_params: { n: 1 } } });
    assert.equal(assertOk(again).response, 'by cid 2');
  }
  // A gateway that serves other bytes under a CID is refused, and nothing runs.
  const honest = 'async function main() { return "honest"; }';
  const honestCid = await allow(honest);
  writeFileSync(join(stack.gatewayDir, honestCid), 'async function main() { return "evil"; }');
  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, body: { ipfs_id: honestCid } }), 502, 'ipfs_cid_mismatch');
  // A CID no gateway has.
  const missing = await allow('function main() { return "nowhere"; }');
  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, body: { ipfs_id: missing } }), 502, 'ipfs_unavailable');
});

test('authorization: every refusal is a 403 and nothing runs', async () => {
  const marker = (tag) => `async function main() { await fetch('${serverUrl}/ran?tag=${tag}'); return 'ran'; }`;
  const ran = (tag) => hits.some((h) => h === `/ran?tag=${tag}`);
  // CID in no executable group.
  let r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: marker('nocid'), pkp_id: s.pkp } });
  assertError(r, 403, 'not_authorized');
  // PKP not in the group.
  await allow(marker('nopkp'));
  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: marker('nopkp'), pkp_id: s.pkpOutside } }), 403, 'not_authorized');
  // A key without execute, and a key executing only on another group.
  await allow(marker('noexec'));
  assertError(await stack.request('POST', 'sigil_action', { key: s.noExecute, body: { code: marker('noexec'), pkp_id: s.pkp } }), 403, 'not_authorized');
  assertError(await stack.request('POST', 'sigil_action', { key: s.otherExecutor, body: { code: marker('noexec'), pkp_id: s.pkp } }), 403, 'not_authorized');
  // A key of another account, with this account's PKP; and this account's key with the other's PKP.
  await allow(marker('xacct'), s.bGroup, s.b);
  await allow(marker('xacct'));
  assertError(await stack.request('POST', 'sigil_action', { key: s.b, body: { code: marker('xacct'), pkp_id: s.pkp } }), 403, 'not_authorized');
  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, body: { code: marker('xacct'), pkp_id: s.bPkp } }), 403, 'not_authorized');
  // Missing and unknown keys.
  assertError(await stack.request('POST', 'sigil_action', { body: { code: marker('nokey') } }), 401);
  assertError(await stack.request('POST', 'sigil_action', { key: 'bm90IGEga2V5', body: { code: marker('nokey') } }), 401);
  for (const tag of ['nocid', 'nopkp', 'noexec', 'xacct', 'nokey']) assert.ok(!ran(tag), `${tag} must not have run`);
  // The owner key executes on every group; the authorized run does reach the server.
  assert.equal((await run(marker('owner'), { key: s.owner })).response, 'ran');
  assert.ok(ran('owner'));
  // Inside a run, each PKP is checked on its own: one outside the groups, or another account's, is refused.
  const inside = await run(`async function main({ outside, foreign }) {
      const out = [];
      for (const pkpId of [outside, foreign]) {
        try { Sigil.Actions.signMessage({ pkpId, message: 'x' }); out.push('signed'); } catch (e) { out.push(e.message); }
      }
      return out; }`, { params: { outside: s.pkpOutside, foreign: s.bPkp } });
  assert.equal(inside.has_error, false, JSON.stringify(inside));
  for (const m of inside.response) assert.match(m, /no group on which this key may execute/);
});

test('bad requests get clear JSON errors', async () => {
  const bad = [
    [{}, 400, 'invalid_input'],
    [{ code: 'function main(){}', ipfs_id: 'QmRgutAxd8t7oGkSm4wmeuByG6M51wcTso6cubDdQtuEfL' }, 400, 'invalid_input'],
    [{ code: '' }, 400, 'invalid_field'],
    [{ code: 42 }, 400, 'invalid_field'],
    [{ ipfs_id: 'not-a-cid' }, 400, 'invalid_ipfs_id'],
    [{ ipfs_id: 7 }, 400, 'invalid_ipfs_id'],
    [{ code: 'function main(){}', pkp_id: '0x1234' }, 400, 'invalid_pkp_id'],
    [{ code: 'function main(){}', pkp_id: 12 }, 400, 'invalid_pkp_id'],
  ];
  for (const [body, status, code] of bad) {
    assertError(await stack.request('POST', 'sigil_action', { key: s.executor, body }), status, code, JSON.stringify(body));
  }
  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, rawBody: '{"code":', contentType: 'application/json' }), 422);
  assertError(await stack.request('POST', 'sigil_action', { key: s.executor, rawBody: 'code', contentType: 'text/plain' }), 415);
  assertError(await stack.request('GET', 'sigil_action', { key: s.executor }), 405);
});

test('runs are isolated: no globals survive from one run to the next', async () => {
  const set = await run('leaked = "secret"; Object.prototype.polluted = 1; function main() { return typeof leaked; }');
  assert.equal(set.response, 'string');
  for (let i = 0; i < 4; i++) {
    const seen = await run('function main() { return [typeof leaked, ({}).polluted === undefined]; }');
    assert.deepEqual(seen.response, ['undefined', true]);
  }
});

test('get_action_client_config reports the configured limits', async () => {
  const j = assertOk(await stack.request('GET', 'get_action_client_config'));
  assert.equal(j.timeout_ms, ACTION_TIMEOUT_MS);
  assert.equal(j.memory_limit_bytes, 16777216);
  assert.equal(j.max_code_bytes, 200000);
  assert.equal(j.max_js_params_bytes, 1024);
  assert.equal(j.max_response_bytes, 4096);
  assert.equal(j.max_console_log_bytes, 2048);
  assert.equal(j.max_fetch_count, 4);
  assert.equal(j.max_key_requests, 10);
});

test('keyd down under a run: the answer is 502 keyd_unavailable (not the script\'s error), without internal paths', async () => {
  const code = 'async function main({ pkpId }) { return await Lit.Actions.signMessage({ pkpId, message: "hi" }); }';
  await allow(code);
  const restarting = stack.restart('keyd', { signal: 'SIGKILL', downMs: 1500 });
  await new Promise((r) => setTimeout(r, 300));
  try {
    const r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code, pkp_id: s.pkp, js_params: { pkpId: s.pkp } } });
    assertError(r, 502, 'keyd_unavailable');
    assert.ok(!r.text.includes(stack.home) && !r.text.includes('.sock') && !r.text.includes('.cpp'), r.text);
  } finally {
    await restarting;
  }
  const again = await run(code, { params: { pkpId: s.pkp } });
  assert.equal(again.has_error, false, JSON.stringify(again));
});

test('lowered code is shared through code_cache_dir under the pool\'s MAC: new workers reuse it, a planted file is ignored', async () => {
  const code = 'const main = async ({ n } = {}) => ({ doubled: (n ?? 21) * 2, tag: `lowered ${n?.toString() ?? "none"}` });';
  const j = await run(code, { params: { n: 4 } });
  assert.deepEqual(j.response, { doubled: 8, tag: 'lowered 4' });
  const cid = await cidOf(code);
  const file = join(codeCacheDir, `${cid}.lowered`);
  const text = readFileSync(file, 'utf8');
  assert.match(text, /^sigil-lowered 1 [0-9a-f]{64}\n/);
  assert.ok(!text.includes('?.'), 'the stored text is the lowered form');
  const inode = statSync(file).ino;

  // New workers (same supervisor, same key) take it from the folder instead of lowering again:
  // the file is not rewritten (a rewrite renames a new file over it).
  const supervisor = stack.pidOf('supervisor');
  const workers = execFileSync('pgrep', ['-P', String(supervisor), '-x', 'sigil-worker']).toString().trim().split('\n').map(Number);
  for (const pid of workers) process.kill(pid, 'SIGKILL');
  let again;
  for (const deadline = Date.now() + 15000; Date.now() < deadline;) {
    const r = await stack.request('POST', 'sigil_action', { key: s.executor, body: { code, pkp_id: s.pkp, js_params: { n: 5 } } });
    if (r.status === 200) { again = r.json; break; }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.deepEqual(again?.response, { doubled: 10, tag: 'lowered 5' });
  assert.equal(statSync(file).ino, inode, 'taken from the folder, not lowered and written again');

  // A file for another CID whose MAC does not check (here: other code under a made-up MAC) is
  // never run: the real code runs, and its own lowered form replaces the file.
  const other = 'const main = async () => ({ real: 1 ?? 2 });';
  const otherCid = await cidOf(other);
  writeFileSync(join(codeCacheDir, `${otherCid}.lowered`), `sigil-lowered 1 ${'0'.repeat(64)}\nfunction main() { return { planted: true }; }`);
  const real = await run(other);
  assert.deepEqual(real.response, { real: 1 });
  assert.ok(!readFileSync(join(codeCacheDir, `${otherCid}.lowered`), 'utf8').includes('planted'));
});

