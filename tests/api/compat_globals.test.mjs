// The web globals and script shapes of published actions (DESIGN.md section 5, issue 16), through
// the whole stack: each global's behaviour is the answer of Node (which has them all natively)
// running the same code, error cases included (compared by error class, name and DOMException
// code, since messages differ in wording); the script shapes actions use; the runtime's level in
// get_action_client_config.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, assertOk, actionRunner, newAccount, addGroup, addUsageKey, SOURCE_DIR } from './stack.mjs';

let stack;
let server;
let serverUrl;
const s = {};

before(async () => {
  // Echoes what a fetch sent, with a few response headers to read back.
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      if (req.url === '/stream') {
        // A fixed 23-byte answer (the published reader loop counts it).
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end('twenty-three bytes long');
        return;
      }
      const status = req.url.startsWith('/missing') ? 404 : 200;
      res.writeHead(status, 'Status ' + status, { 'Content-Type': 'application/json; charset=utf-8', 'X-Test': 'yes' });
      res.end(JSON.stringify({ method: req.method, url: req.url, body, a: req.headers['x-a'] ?? null, b: req.headers['x-b'] ?? null, text: 'é€😀' }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  serverUrl = `http://127.0.0.1:${server.address().port}`;
  stack = await startStack({ workers: 1, actions: ['fetch_allowed_addresses = 127.0.0.1', 'max_fetch_count = 10'] });
  s.owner = (await newAccount(stack, 'globals')).api_key;
  s.group = await addGroup(stack, s.owner, 'runners');
  s.executor = await addUsageKey(stack, s.owner, { execute_in_groups: [Number(s.group)] });
  run = actionRunner(stack, { owner: s.owner, group: s.group, key: s.executor });
});

after(async () => {
  await stack?.stop();
  server?.closeAllConnections();
  server?.close();
});

let run;  // actionRunner, once the account exists

// The same helpers on both sides: an error becomes its class, name and DOMException code.
const HELPERS = `
function describeError(e) {
  var cls = e instanceof DOMException ? 'DOMException' : e instanceof AggregateError ? 'AggregateError' :
    e instanceof TypeError ? 'TypeError' : e instanceof RangeError ? 'RangeError' : e instanceof SyntaxError ? 'SyntaxError' :
    e instanceof Error ? 'Error' : typeof e;
  return { threw: cls, name: e && e.name, code: e instanceof DOMException ? e.code : undefined };
}
function attempt(f) { try { return { value: f() }; } catch (e) { return describeError(e); } }
async function attemptAsync(f) { try { return { value: await f() }; } catch (e) { return describeError(e); } }
function bytes(v) { return Array.from(new Uint8Array(v.buffer ? v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength) : v)); }
`;

// Runs BODY (the inside of an async function returning a JSON-able value) in the sandbox and in
// Node, and checks the two answers are the same.
async function compareWithNode(body) {
  const j = await run(`${HELPERS}\nasync function main() {\n${body}\n}`);
  assert.equal(j.has_error, false, JSON.stringify(j.error));
  const AsyncFunction = (async () => {}).constructor;
  const expected = JSON.parse(JSON.stringify(await new AsyncFunction(`${HELPERS}\n${body}`)()));
  assert.deepEqual(j.response, expected);
  return expected;
}

test('URL: parsing, relative resolution, components, setters and invalid input as in Node', async () => {
  const r = await compareWithNode(`
    var out = {};
    ['https://user:pw@Example.COM:8080/a/b/../c/./d?x=1&y=%20z&e=\\u00e9#frag', 'http://a.com/b/c/d',
     'HTTP://[::1]:80/x', 'file:///etc/passwd', 'mailto:someone@example.com', 'http://192.168.0.1.:443/',
     'https://example.com/path with spaces/\\u00fc?q=a b', 'http://0x7f.1/', 'data:text/plain,hi'].forEach(function (s) {
      var u = new URL(s);
      out[s] = [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash, u.toJSON(), String(u)];
    });
    out.relative = ['../x', '/root', '?q=1', '#h', '//other.org/p', 'g;x?y#s'].map(function (rel) { return new URL(rel, 'http://a.com/b/c/d;p?q').href; });
    var u = new URL('https://example.com/a?b=1');
    u.pathname = '/x y'; u.search = '?q=a b&c=\\u00e9'; u.hash = 'frag ment'; u.port = '8443'; u.username = 'us er'; u.protocol = 'http';
    u.searchParams.append('added', '1&2');
    out.set = u.href;
    out.params = Array.from(u.searchParams.entries());
    out.errors = ['nope', 'http://[::1', 'http://exa mple.com', '', 'https://:80'].map(function (s) { return attempt(function () { return new URL(s).href; }); });
    out.noBase = attempt(function () { return new URL('/relative').href; });
    out.badBase = attempt(function () { return new URL('/x', 'not a base').href; });
    return out;`);
  assert.equal(r.relative[0], 'http://a.com/b/x'); // the referee itself answered something real
});

test('URLSearchParams: construction forms, mutation, sort, encoding and iteration as in Node', async () => {
  await compareWithNode(`
    var out = {};
    var sp = new URLSearchParams('?a=1&b=2&a=3&c=%20x+y&d=%E2%82%AC&e&=v');
    out.parsed = Array.from(sp.entries());
    out.getAll = sp.getAll('a'); out.get = [sp.get('a'), sp.get('zz'), sp.has('b'), sp.has('zz')];
    sp.append('f', 'a b&c=d\\u00fc+'); sp.set('a', 'only'); sp.delete('b'); sp.sort();
    out.after = sp.toString();
    out.keys = Array.from(sp.keys()); out.values = Array.from(sp.values());
    var seen = []; sp.forEach(function (v, k) { seen.push(k + '=' + v); }); out.forEach = seen;
    out.fromObject = new URLSearchParams({ x: '1', y: 'two words', z: '\\u00e9' }).toString();
    out.fromPairs = new URLSearchParams([['p', '1'], ['p', '2'], ['q', '']]).toString();
    out.fromParams = new URLSearchParams(new URLSearchParams('k=v')).toString();
    out.special = new URLSearchParams({ s: "!'()*~-._ +/?:@&=" }).toString();
    out.badPair = attempt(function () { return new URLSearchParams([['only-one']]).toString(); });
    return out;`);
});

test('TextEncoder and TextDecoder: UTF-8, replacement, BOM, fatal, stream and labels as in Node', async () => {
  await compareWithNode(`
    var out = {};
    var enc = new TextEncoder();
    out.encoding = enc.encoding;
    out.encoded = ['', 'hello', 'h\\u00e9\\u20ac\\ud83d\\ude00', '\\ud800 lone', 'a\\udc00b'].map(function (s) { return bytes(enc.encode(s)); });
    var d = new TextDecoder();
    out.decoderProps = [d.encoding, d.fatal, d.ignoreBOM];
    var samples = [[0x68, 0xc3, 0xa9], [0xef, 0xbb, 0xbf, 0x68, 0x69], [0xff, 0x41, 0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98, 0x80], [0xed, 0xa0, 0x80], [0xc0, 0xaf]];
    out.decoded = samples.map(function (b) { return d.decode(new Uint8Array(b)); });
    out.ignoreBOM = new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]));
    out.arrayBuffer = d.decode(new Uint8Array([0x61, 0x62, 0x63]).buffer);
    out.subarray = d.decode(new Uint8Array([0x61, 0x62, 0x63, 0x64]).subarray(1, 3));
    out.empty = d.decode();
    out.fatal = samples.map(function (b) { return attempt(function () { return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(b)); }); });
    var sd = new TextDecoder();
    out.stream = [sd.decode(new Uint8Array([0xe2, 0x82]), { stream: true }), sd.decode(new Uint8Array([0xac, 0x41]), { stream: true }), sd.decode()];
    // 60 KB each way: a JSON-RPC answer's size (the packages' own codecs took seconds for this).
    var big = 'ab\u00e9\u20ac'.repeat(12000) + '\ud83d\ude00';
    var bigBytes = enc.encode(big);
    out.large = [bigBytes.length, d.decode(bigBytes) === big, d.decode(bigBytes).length, bytes(bigBytes.subarray(-4))];
    out.labels = ['utf8', 'UTF-8', ' unicode-1-1-utf-8 '].map(function (l) { return new TextDecoder(l).encoding; });
    out.badLabel = attempt(function () { return new TextDecoder('no-such-encoding').encoding; });
    return out;`);
});

test('TextEncoder and TextDecoder on 800 KB answer within a second (native UTF-8, not the package\'s per-code-point loop)', async () => {
  const t0 = Date.now();
  const j = await run(`function main() { var s = 'ab\\u00e9'.repeat(200000); var b = new TextEncoder().encode(s); return [b.length, new TextDecoder().decode(b) === s]; }`);
  assert.equal(j.has_error, false, JSON.stringify(j.error));
  assert.deepEqual(j.response, [800000, true]);
  assert.ok(Date.now() - t0 < 1000, `took ${Date.now() - t0} ms`);
});

test('atob and btoa: round trips, whitespace, padding and InvalidCharacterError as in Node', async () => {
  await compareWithNode(`
    var out = {};
    var all = ''; for (var i = 0; i < 256; i++) all += String.fromCharCode(i);
    out.all = btoa(all);
    out.roundTrip = atob(out.all) === all;
    out.values = ['', 'f', 'fo', 'foo', 'hello world'].map(btoa);
    out.decoded = ['aGk=', 'aGk', ' a G k = ', 'aGVsbG8gd29ybGQ=', 'YQ==', '', 'ab\\tcd\\n'].map(function (s) { return attempt(function () { return atob(s); }); });
    out.bad = ['a', 'aGk==', '@@@@', 'aGk=a', '\\u00e9'].map(function (s) { return attempt(function () { return atob(s); }); });
    out.btoaBad = ['\\u0100', '\\u20ac'].map(function (s) { return attempt(function () { return btoa(s); }); });
    out.coerce = [btoa(123), atob(null === null ? 'bnVsbA==' : '')];
    return out;`);
});

test('crypto.getRandomValues and randomUUID: in place, bounded, random, and the errors as in Node', async () => {
  const r = await compareWithNode(`
    var out = {};
    var a = new Uint8Array(64);
    out.same = crypto.getRandomValues(a) === a;
    out.notZero = Array.from(a).some(function (x) { return x !== 0; });
    var b = crypto.getRandomValues(new Uint8Array(64));
    out.differ = Array.from(a).join() !== Array.from(b).join();
    out.kinds = [Int8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array].map(function (T) { return crypto.getRandomValues(new T(4)).length; });
    out.max = crypto.getRandomValues(new Uint8Array(65536)).length;
    out.view = (function () { var buf = new Uint8Array(8); crypto.getRandomValues(buf.subarray(2, 4)); return [buf[0], buf[1], buf[4], buf[7]]; })();
    out.errors = [function () { return crypto.getRandomValues(new Uint8Array(65537)); },
                  function () { return crypto.getRandomValues(new Uint32Array(16385)); },
                  function () { return crypto.getRandomValues(new Float64Array(1)); },
                  function () { return crypto.getRandomValues([1, 2]); }].map(function (f) { var r = attempt(f); return r.value ? 'no error' : r; });
    var re = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    var ids = []; for (var i = 0; i < 20; i++) ids.push(crypto.randomUUID());
    out.uuid = ids.every(function (id) { return re.test(id); });
    out.uuidUnique = ids.filter(function (id, i) { return ids.indexOf(id) === i; }).length;
    return out;`);
  assert.equal(r.uuid, true);
  assert.equal(r.errors[0].name, 'QuotaExceededError');
});

test('Headers, Request and Response: construction, case, combining, bodies and errors as in Node', async () => {
  await compareWithNode(`
    var out = {};
    var h = new Headers({ 'Content-Type': 'text/plain', 'X-A': '1' });
    h.append('x-a', '2'); h.set('X-B', ' padded '); h.append('X-C', 'c');
    h.delete('x-c');
    out.get = [h.get('content-type'), h.get('X-A'), h.get('x-b'), h.get('x-c'), h.has('X-B'), h.has('nope')];
    out.fromPairs = new Headers([['A', '1'], ['a', '2']]).get('a');
    out.fromHeaders = new Headers(h).get('x-a');
    var names = []; h.forEach(function (v, k) { names.push(k + ':' + v); }); out.forEach = names;
    out.entries = Array.from(h.entries()); out.keys = Array.from(h.keys()); out.values = Array.from(h.values());
    out.badName = attempt(function () { return new Headers({ 'a b': 'c' }); });
    out.badPair = attempt(function () { return new Headers([['a']]); });
    var r = new Response('{"a":[1,2],"t":"\\u00e9"}', { status: 201, statusText: 'Created', headers: { 'X-Y': 'z' } });
    out.response = [r.ok, r.status, r.statusText, r.headers.get('x-y'), r.bodyUsed, r.type];
    out.json = await r.json();
    out.used = r.bodyUsed;
    out.again = await attemptAsync(function () { return r.text(); });
    out.text = await new Response('h\\u00e9llo').text();
    out.arrayBuffer = bytes(await new Response('h\\u00e9').arrayBuffer());
    out.fromBytes = await new Response(new Uint8Array([0x68, 0xc3, 0xa9])).text();
    out.notOk = [new Response('', { status: 404 }).ok, new Response(null, { status: 299 }).ok, new Response('').status];
    out.badStatus = attempt(function () { return new Response('', { status: 99 }); });
    var req = new Request('https://example.com/x', { method: 'POST', body: 'payload', headers: { 'X-R': '1' } });
    out.request = [req.url, req.method, req.headers.get('x-r'), await req.text()];
    return out;`);
});

test('Promise.allSettled, Promise.any and AggregateError as in Node', async () => {
  await compareWithNode(`
    var out = {};
    out.settled = await Promise.allSettled([1, Promise.resolve(2), Promise.reject(new Error('no')), new Promise(function (r) { setTimeout(function () { r(4); }, 5); })]);
    out.settled[2].reason = out.settled[2].reason.message;
    out.anyFirst = await Promise.any([Promise.reject(1), Promise.resolve(2), 3]);
    var e = await attemptAsync(function () { return Promise.any([Promise.reject(1), Promise.reject(new TypeError('t'))]); });
    out.anyAllRejected = e;
    try { await Promise.any([Promise.reject('a'), Promise.reject('b')]); } catch (err) { out.errors = err.errors; out.message = err.message; out.isError = err instanceof Error; }
    out.anyEmpty = await attemptAsync(function () { return Promise.any([]); });
    var ae = new AggregateError([1, 2], 'msg');
    out.aggregate = [ae.name, ae.message, ae.errors, ae instanceof Error, String(ae)];
    var order = []; queueMicrotask(function () { order.push('micro'); }); order.push('sync'); await null; out.order = order;
    return out;`);
});

test('structuredClone: deep copies, cycles, built-in types and DataCloneError as in Node', async () => {
  await compareWithNode(`
    var out = {};
    var src = { a: 1, s: 'x', n: null, u: undefined, neg: -0, arr: [1, [2, 3]], d: new Date(86400000), re: /ab+c/gi,
      m: new Map([['k', { v: 1 }]]), set: new Set([1, 'two']), bytes: new Uint8Array([1, 2, 3]), big: 12345678901234567890 };
    src.self = src;
    var c = structuredClone(src);
    out.distinct = [c !== src, c.arr !== src.arr, c.arr[1] !== src.arr[1], c.self === c, c.m !== src.m];
    out.values = [c.a, c.s, c.n, c.u === undefined && 'u' in c, Object.is(c.neg, -0), c.arr, c.d.getTime(), c.d instanceof Date,
      c.re.source, c.re.flags, c.re instanceof RegExp, c.m.get('k'), c.m instanceof Map, Array.from(c.set), c.set instanceof Set,
      Array.from(c.bytes), c.bytes instanceof Uint8Array, c.big];
    var e = structuredClone(new RangeError('bad'));
    out.error = [e instanceof RangeError, e.name, e.message];
    out.fn = attempt(function () { return structuredClone(function () {}); });
    out.nested = attempt(function () { return structuredClone({ f: function () {} }); });
    out.primitive = [structuredClone(5), structuredClone('s'), structuredClone(null)];
    return out;`);
});

test('fetch answers a Response with Headers; request headers as Headers, pairs or an object', async () => {
  const sandboxAndNode = (body) => compareWithNode(`var base = ${JSON.stringify(serverUrl)};\n${body}`);
  await sandboxAndNode(`
    var out = {};
    var r = await fetch(base + '/a?x=1', { headers: new Headers({ 'X-A': 'from-headers' }) });
    out.r = [r instanceof Response, r.ok, r.status, r.statusText, r.headers.get('content-type'), r.headers.get('X-TEST'), r.headers instanceof Headers];
    out.json = await r.json();
    var p = await fetch(base + '/b', { method: 'post', body: 'payload', headers: [['X-A', 'pairs'], ['X-B', 'two']] });
    out.p = await p.json();
    var t = await fetch(base + '/c', { headers: { 'x-b': 'object' } });
    out.text = JSON.parse(await t.text()).b;
    out.bytes = bytes(await (await fetch(base + '/d')).arrayBuffer()).length;
    var m = await fetch(base + '/missing');
    out.missing = [m.ok, m.status, m.statusText];
    out.then = await fetch(base + '/e').then(function (res) { return res.json(); }).then(function (j) { return j.url; });
    return out;`);
});

test('script shapes: no main with setResponse (plain, top-level await, async IIFE), const/let/function main', async () => {
  const shapes = [
    ['Lit.Actions.setResponse({ response: "plain" });', 'plain'],
    ['(async () => { const v = await Promise.resolve("iife"); Lit.Actions.setResponse({ response: v }); })();', 'iife'],
    ['(async function () { const r = await new Promise((ok) => setTimeout(() => ok("timer"), 10)); LitActions.setResponse({ response: r }); })();', 'timer'],
    ['const go = async () => { Lit.Actions.setResponse({ response: JSON.stringify({ n: 42 }) }); };\ngo();', { n: 42 }],
    ['const main = async (params) => { return params.n * 2; };', 42],
    ['let main = async ({ n }) => n + 1;', 22],
    ['var main = function (p) { return "var " + p.n; };', 'var 21'],
    ['function main(params) { return { got: params.n }; }', { got: 21 }],
    ['async function main(params) { const v = await Promise.resolve(params.n); return `v=${v}`; }', 'v=21'],
  ];
  for (const [code, expected] of shapes) {
    const j = await run(code, { n: 21 });
    assert.equal(j.has_error, false, `${code}: ${JSON.stringify(j.error)}`);
    assert.deepEqual(j.response, expected, code);
  }
});

test('script shapes: top-level await with setResponse', async () => {
  const j = await run('const v = await Promise.resolve("top-level");\nLit.Actions.setResponse({ response: v });');
  assert.equal(j.has_error, false, JSON.stringify(j.error));
  assert.equal(j.response, 'top-level');
});

test('js_params reach the code as main\'s argument, as globals and as jsParams; a param never hides a global', async () => {
  const code = `
    Lit.Actions.setResponse({ response: JSON.stringify({
      global: typeof toSign !== 'undefined' ? toSign : null,
      jsParams: jsParams.publicKey,
      consoleKept: typeof console.log,
      litKept: typeof Lit.Actions.setResponse,
    }) });`;
  const j = await run(code, { toSign: [1, 2, 3], publicKey: '0x04ab', console: 'x', Lit: 'y' });
  assert.equal(j.has_error, false, JSON.stringify(j.error));
  assert.deepEqual(j.response, { global: [1, 2, 3], jsParams: '0x04ab', consoleKept: 'function', litKept: 'function' });
  const m = await run('async function main(p) { return [p.toSign, toSign === p.toSign || JSON.stringify(toSign) === JSON.stringify(p.toSign)]; }', { toSign: 'abc' });
  assert.deepEqual(m.response, ['abc', true]);
});

test('get_action_client_config reports the runtime level, and every listed global exists in a run', async () => {
  const j = assertOk(await stack.request('GET', 'get_action_client_config'));
  const ethers5 = JSON.parse(readFileSync(join(SOURCE_DIR, 'node_modules/ethers5/package.json'), 'utf8')).version;
  const buble = JSON.parse(readFileSync(join(SOURCE_DIR, 'node_modules/buble/package.json'), 'utf8')).version;
  assert.match(j.runtime.engine, /^duktape \d+\.\d+\.\d+$/);
  assert.equal(j.runtime.ethers_version, ethers5);
  assert.match(j.runtime.lowering, new RegExp(`^acorn \\d+\\.\\d+\\.\\d+ front pass \\+ buble ${buble.replaceAll('.', '\\.')}, BigInt on jsbi `));
  assert.equal(j.runtime.syntax_level, 'es2022');
  for (const g of ['URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'atob', 'btoa', 'crypto.getRandomValues',
    'crypto.randomUUID', 'crypto.subtle', 'CryptoKey', 'Headers', 'Response', 'Promise.allSettled', 'Promise.any']) {
    assert.ok(j.runtime.web_globals.includes(g), g);
  }
  const probe = await run(`function main() { return ${JSON.stringify(j.runtime.web_globals)}.filter(function (name) {
    var v = globalThis; name.split('.').forEach(function (k) { v = v === undefined ? undefined : v[k]; });
    return typeof v !== 'function' && (typeof v !== 'object' || v === null); }); }`);
  assert.deepEqual(probe.response, []);
  assert.equal(typeof j.timeout_ms, 'number');
});

test('crypto.subtle: SHA digests, HMAC and AES-GCM keys, results and refusals as in Node', async () => {
  await compareWithNode(`
    var enc = new TextEncoder();
    var hex = function (buf) { return Array.from(new Uint8Array(buf)).map(function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join(''); };
    var out = {};
    for (var name of ['SHA-1', 'SHA-256', 'sha-384', { name: 'SHA-512' }]) {
      out[JSON.stringify(name)] = hex(await crypto.subtle.digest(name, enc.encode('hello world')));
    }
    out.emptyDigest = hex(await crypto.subtle.digest('SHA-256', new Uint8Array(0)));
    out.viewDigest = hex(await crypto.subtle.digest('SHA-256', new Uint8Array([1, 2, 3, 4, 5]).subarray(1, 4)));
    out.badDigest = await attemptAsync(function () { return crypto.subtle.digest('MD5', enc.encode('x')); });

    var hmacKey = await crypto.subtle.importKey('raw', enc.encode('secret key'), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);
    out.hmacAlgorithm = [hmacKey.type, hmacKey.extractable, hmacKey.algorithm.name, hmacKey.algorithm.hash.name, hmacKey.algorithm.length, hmacKey.usages];
    var mac = await crypto.subtle.sign('HMAC', hmacKey, enc.encode('message'));
    out.hmac = hex(mac);
    out.verifyGood = await crypto.subtle.verify('HMAC', hmacKey, mac, enc.encode('message'));
    out.verifyBad = await crypto.subtle.verify({ name: 'HMAC' }, hmacKey, mac, enc.encode('messagE'));
    out.verifyShort = await crypto.subtle.verify('HMAC', hmacKey, new Uint8Array(mac).slice(0, 31), enc.encode('message'));
    out.hmac512 = hex(await crypto.subtle.sign('HMAC', await crypto.subtle.importKey('raw', new Uint8Array(200).fill(7),
      { name: 'HMAC', hash: { name: 'SHA-512' } }, false, ['sign']), enc.encode('long key')));
    out.rawExport = hex(await crypto.subtle.exportKey('raw', hmacKey));
    var jwk = await crypto.subtle.exportKey('jwk', hmacKey);
    out.jwk = [jwk.kty, jwk.k, jwk.alg, jwk.ext, jwk.key_ops];
    var fromJwk = await crypto.subtle.importKey('jwk', jwk, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    out.jwkSameMac = hex(await crypto.subtle.sign('HMAC', fromJwk, enc.encode('message'))) === out.hmac;
    // Node names this one InvalidAccessException (the specification: InvalidAccessError); the class is compared.
    out.notExtractable = (await attemptAsync(function () { return crypto.subtle.exportKey('raw', fromJwk); })).threw;
    out.wrongUsage = await attemptAsync(function () { return crypto.subtle.verify('HMAC', fromJwk, mac, enc.encode('message')); });
    out.badUsage = await attemptAsync(function () { return crypto.subtle.importKey('raw', enc.encode('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['encrypt']); });

    var aesKey = await crypto.subtle.importKey('raw', new Uint8Array(32).map(function (_, i) { return i; }), 'AES-GCM', true, ['encrypt', 'decrypt']);
    out.aesAlgorithm = [aesKey.algorithm.name, aesKey.algorithm.length];
    var iv = new Uint8Array(12).fill(9);
    var sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv: iv, additionalData: enc.encode('header') }, aesKey, enc.encode('attack at dawn'));
    out.sealed = hex(sealed);
    out.opened = new TextDecoder().decode(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv, additionalData: enc.encode('header') }, aesKey, sealed));
    var tampered = new Uint8Array(sealed); tampered[0] ^= 1;
    out.tampered = await attemptAsync(function () { return crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv, additionalData: enc.encode('header') }, aesKey, tampered); });
    out.wrongAad = await attemptAsync(function () { return crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv }, aesKey, sealed); });
    out.shortTag = hex(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(16), tagLength: 96 }, aesKey, new Uint8Array(0)));
    out.aes128 = hex(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(16).fill(3) },
      await crypto.subtle.importKey('raw', new Uint8Array(16), { name: 'AES-GCM' }, false, ['encrypt']), enc.encode('x')));
    out.badKeyLength = await attemptAsync(function () { return crypto.subtle.importKey('raw', new Uint8Array(20), 'AES-GCM', false, ['encrypt']); });
    out.aesJwk = (await crypto.subtle.exportKey('jwk', aesKey)).alg;

    var generated = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']);
    var roundTrip = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv }, generated,
      await crypto.subtle.encrypt({ name: 'AES-GCM', iv: iv }, generated, enc.encode('round trip')));
    out.generated = [new TextDecoder().decode(roundTrip), (await crypto.subtle.exportKey('raw', generated)).byteLength];
    var hmacGenerated = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-384' }, true, ['sign']);
    out.hmacGenerated = [hmacGenerated.algorithm.length, (await crypto.subtle.exportKey('raw', hmacGenerated)).byteLength];
    out.unsupported = await attemptAsync(function () { return crypto.subtle.importKey('raw', new Uint8Array(16), { name: 'NOT-AN-ALGORITHM' }, false, ['encrypt']); });
    out.isCryptoKey = aesKey instanceof CryptoKey;
    return out;
  `);
});

test('String.prototype.normalize: the four forms, the default and a bad form as in Node', async () => {
  await compareWithNode(`
    var points = function (s) { return Array.from(s).map(function (c) { return c.codePointAt(0).toString(16); }).join(' '); };
    var samples = ['\\u00e9', 'e\\u0301', '\\ufb01', '\\u212b', '\\ud55c\\uad6d\\uc5b4', '\\u1112\\u1161\\u11ab', '\\uff76\\uff9e', 'abc', '', 'Cafe\\u0301 \\u2460'];
    var out = {};
    samples.forEach(function (s, i) {
      out[i] = ['NFC', 'NFD', 'NFKC', 'NFKD'].map(function (f) { return points(s.normalize(f)); });
    });
    out.defaultIsNfc = 'e\\u0301'.normalize() === '\\u00e9' && 'e\\u0301'.normalize(undefined) === '\\u00e9';
    out.length = String.prototype.normalize.length;
    out.badForm = attempt(function () { return 'x'.normalize('nfc'); });
    out.onNull = attempt(function () { return String.prototype.normalize.call(null); });
    return out;
  `);
});

test('Event, EventTarget, AbortController and AbortSignal as in Node; fetch honours an aborted signal', async () => {
  await compareWithNode(`
    var out = {};
    var t = new EventTarget(), seen = [];
    var handler = { handleEvent: function (e) { seen.push('obj:' + e.type); } };
    var f = function (e) { seen.push('f:' + e.type + ':' + (e.target === t) + ':' + (e.currentTarget === t)); };
    t.addEventListener('ping', f);
    t.addEventListener('ping', f);  // the same listener twice counts once
    t.addEventListener('ping', handler);
    t.addEventListener('ping', function () { seen.push('once'); }, { once: true });
    out.dispatched = [t.dispatchEvent(new Event('ping')), t.dispatchEvent(new Event('ping'))];
    t.removeEventListener('ping', f);
    t.dispatchEvent(new Event('ping'));
    var cancelable = new Event('c', { cancelable: true });
    t.addEventListener('c', function (e) { e.preventDefault(); });
    out.notCanceled = t.dispatchEvent(cancelable);
    out.defaultPrevented = cancelable.defaultPrevented;
    out.seen = seen;
    out.eventShape = (function () { var e = new Event('x'); return [e.type, e.bubbles, e.cancelable, e.defaultPrevented, e.target, typeof e.timeStamp]; })();
    out.eventErrors = [attempt(function () { return new Event(); }), attempt(function () { return Event('x'); }),
                       attempt(function () { return t.dispatchEvent({ type: 'x' }); })];

    var c = new AbortController(), log = [];
    c.signal.addEventListener('abort', function (e) { log.push('listener:' + e.type + ':' + c.signal.aborted); });
    c.signal.onabort = function () { log.push('onabort'); };
    out.before = [c.signal.aborted, c.signal.reason, attempt(function () { c.signal.throwIfAborted(); return 'no throw'; })];
    c.abort();
    c.abort('again');  // a second abort changes nothing
    out.after = [c.signal.aborted, c.signal.reason instanceof DOMException, c.signal.reason.name, c.signal.reason.code, log.sort()];
    out.throwIfAborted = attempt(function () { c.signal.throwIfAborted(); });
    var withReason = new AbortController(); withReason.abort('my reason');
    out.reason = withReason.signal.reason;
    out.staticAbort = [AbortSignal.abort().aborted, AbortSignal.abort(42).reason];
    out.illegal = attempt(function () { return new AbortSignal(); });
    out.any = (function () { var a = new AbortController(), b = new AbortController(); var s = AbortSignal.any([a.signal, b.signal]);
      var was = s.aborted; b.abort('b went'); return [was, s.aborted, s.reason]; })();
    var timeoutSignal = AbortSignal.timeout(5);
    await new Promise(function (r) { setTimeout(r, 20); });
    out.timeout = [timeoutSignal.aborted, timeoutSignal.reason.name, timeoutSignal.reason.code];
    var removedBySignal = [], remover = new AbortController(), t2 = new EventTarget();
    t2.addEventListener('x', function () { removedBySignal.push('x'); }, { signal: remover.signal });
    t2.dispatchEvent(new Event('x')); remover.abort(); t2.dispatchEvent(new Event('x'));
    out.removedBySignal = removedBySignal;

    out.fetchAborted = await attemptAsync(function () { return fetch(URL_BASE + '/a', { signal: AbortSignal.abort() }); });
    var late = new AbortController();
    var pending = fetch(URL_BASE + '/b', { signal: late.signal });
    late.abort();
    out.fetchAbortedInFlight = await attemptAsync(function () { return pending; });
    out.fetchCustomReason = await attemptAsync(function () { return fetch(URL_BASE + '/c', { signal: AbortSignal.abort(new RangeError('r')) }); });
    out.fetchOk = (await fetch(URL_BASE + '/d', { signal: new AbortController().signal })).status;
    return out;
  `.replaceAll('URL_BASE', JSON.stringify(serverUrl)));
});

// The known-answer files of tests/data, as [fields...] per vector line.
function vectorLines(name) {
  return readFileSync(join(SOURCE_DIR, 'tests/data', name), 'utf8').split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#')).map((line) => line.trim().split(/\s+/));
}
const CRYPTO_HELPERS = `
  var hex = function (buf) { return Array.from(new Uint8Array(buf)).map(function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join(''); };
  var unhex = function (s) { var out = new Uint8Array(s === '-' ? 0 : s.length / 2); for (var i = 0; i < out.length; i++) out[i] = parseInt(s.substr(2 * i, 2), 16); return out; };
  var b64u = function (b) { return btoa(String.fromCharCode.apply(null, Array.from(b))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, ''); };
  var s = crypto.subtle;`;

test('crypto.subtle HKDF: the published action, RFC 5869 (SHA-256 and SHA-1) through the sandbox, deriveKey and refusals as in Node', async () => {
  const j = await run('async function main() { const k = await crypto.subtle.importKey("raw", new Uint8Array(32), "HKDF", false, ["deriveBits"]); const b = await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new Uint8Array(0) }, k, 256); return new Uint8Array(b).slice(0, 4).join(","); }');
  assert.equal(j.has_error, false, JSON.stringify(j.error));
  assert.equal(j.response, '223,114,4,84');
  const vectors = [...vectorLines('hkdf_rfc5869.txt').map((v) => ['SHA-256', ...v]), ...vectorLines('hkdf_sha1_rfc5869.txt').map((v) => ['SHA-1', ...v])];
  assert.equal(vectors.length, 7);
  const r = await compareWithNode(`${CRYPTO_HELPERS}
    var out = { rfc: [] };
    for (var v of ${JSON.stringify(vectors)}) {
      var k = await s.importKey('raw', unhex(v[1]), 'HKDF', false, ['deriveBits', 'deriveKey']);
      out.rfc.push(hex(await s.deriveBits({ name: 'HKDF', hash: v[0], salt: unhex(v[2]), info: unhex(v[3]) }, k, Number(v[4]) * 8)));
    }
    var key = await s.importKey('raw', new Uint8Array(32).fill(1), { name: 'hkdf' }, false, ['deriveKey', 'deriveBits']);
    out.key = [key.type, key.extractable, key.algorithm, key.usages, key instanceof CryptoKey];
    var P = { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array([1, 2]), info: new TextEncoder().encode('info') };
    out.hashes = [];
    for (var h of ['SHA-1', 'SHA-256', { name: 'SHA-384' }, 'sha-512']) out.hashes.push(hex(await s.deriveBits(Object.assign({}, P, { hash: h }), key, 264)));
    out.zero = (await s.deriveBits(P, key, 0)).byteLength;
    out.max = (await s.deriveBits(P, key, 255 * 256)).byteLength;
    out.emptyKey = hex(await s.deriveBits(P, await s.importKey('raw', new Uint8Array(0), 'HKDF', false, ['deriveBits']), 128));
    out.salts = hex(await s.deriveBits(Object.assign({}, P, { salt: new Uint8Array(4).buffer, info: new DataView(new ArrayBuffer(3)) }), key, 128));
    var aes = await s.deriveKey(P, key, { name: 'AES-GCM', length: 128 }, true, ['encrypt', 'decrypt']);
    out.aes = [aes.algorithm, aes.usages, aes.extractable, hex(await s.exportKey('raw', aes)),
      hex(await s.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, aes, new TextEncoder().encode('sealed')))];
    var mac = await s.deriveKey(P, key, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']);
    out.hmac = [mac.algorithm, hex(await s.exportKey('raw', mac)), hex(await s.sign('HMAC', mac, new Uint8Array(1)))];
    var mac384 = await s.deriveKey(P, key, { name: 'HMAC', hash: 'SHA-384', length: 256 }, false, ['verify']);
    out.hmac384 = [mac384.algorithm, mac384.extractable];
    out.hkdfFromHkdf = (await s.deriveKey(P, key, 'HKDF', false, ['deriveBits']).catch(describeError));
    var onlyBits = await s.importKey('raw', new Uint8Array(8), 'HKDF', false, ['deriveBits']);
    var errors = {
      nullLength: function () { return s.deriveBits(P, key, null); },
      noLength: function () { return s.deriveBits(P, key); },
      notBytes: function () { return s.deriveBits(P, key, 12); },
      tooLong: function () { return s.deriveBits(P, key, 255 * 256 + 8); },
      noSalt: function () { return s.deriveBits({ name: 'HKDF', hash: 'SHA-256', info: new Uint8Array(0) }, key, 8); },
      noInfo: function () { return s.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0) }, key, 8); },
      noHash: function () { return s.deriveBits({ name: 'HKDF', salt: new Uint8Array(0), info: new Uint8Array(0) }, key, 8); },
      badHash: function () { return s.deriveBits(Object.assign({}, P, { hash: 'MD5' }), key, 8); },
      extractable: function () { return s.importKey('raw', new Uint8Array(8), 'HKDF', true, ['deriveBits']); },
      emptyUsages: function () { return s.importKey('raw', new Uint8Array(8), 'HKDF', false, []); },
      badUsage: function () { return s.importKey('raw', new Uint8Array(8), 'HKDF', false, ['sign']); },
      jwk: function () { return s.importKey('jwk', { kty: 'oct', k: 'AAAA' }, 'HKDF', false, ['deriveBits']); },
      generate: function () { return s.generateKey({ name: 'HKDF' }, false, ['deriveBits']); },
      wrongUsage: function () { return s.deriveKey(P, onlyBits, { name: 'AES-GCM', length: 128 }, true, ['encrypt']); },
      wrongAlgorithm: function () { return s.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(0), iterations: 1 }, key, 8); },
      notAKey: function () { return s.deriveBits(P, {}, 8); },
      aesLength: function () { return s.deriveKey(P, key, { name: 'AES-GCM', length: 100 }, true, ['encrypt']); },
      aesUsage: function () { return s.deriveKey(P, key, { name: 'AES-GCM', length: 128 }, true, ['sign']); },
      aesNoUsage: function () { return s.deriveKey(P, key, { name: 'AES-GCM', length: 128 }, true, []); },
      hmacOddLength: function () { return s.deriveKey(P, key, { name: 'HMAC', hash: 'SHA-256', length: 100 }, true, ['sign']); },
      unknownTarget: function () { return s.deriveKey(P, key, { name: 'NOT-AN-ALGORITHM' }, true, ['encrypt']); },
    };
    out.errors = {};
    for (var name in errors) out.errors[name] = await attemptAsync(errors[name]);
    // Node names this one InvalidAccessException (the specification: InvalidAccessError); the class is compared.
    out.exportHkdf = (await attemptAsync(function () { return s.exportKey('raw', key); })).threw;
    return out;`);
  assert.deepEqual(r.rfc, vectors.map((v) => v[5]));
});

test('crypto.subtle PBKDF2: RFC 6070 through the sandbox, deriveKey and refusals as in Node', async () => {
  const vectors = vectorLines('pbkdf2_sha1_rfc6070.txt');
  const r = await compareWithNode(`${CRYPTO_HELPERS}
    var out = { rfc: [] };
    for (var v of ${JSON.stringify(vectors)}) {
      var k = await s.importKey('raw', unhex(v[0]), 'PBKDF2', false, ['deriveBits']);
      out.rfc.push(hex(await s.deriveBits({ name: 'PBKDF2', hash: 'SHA-1', salt: unhex(v[1]), iterations: Number(v[2]) }, k, Number(v[3]) * 8)));
    }
    var key = await s.importKey('raw', new TextEncoder().encode('correct horse'), 'PBKDF2', false, ['deriveBits', 'deriveKey']);
    out.key = [key.type, key.extractable, key.algorithm, key.usages];
    var P = { name: 'PBKDF2', hash: 'SHA-256', salt: new TextEncoder().encode('NaCl'), iterations: 1000 };
    out.hashes = [];
    for (var h of ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512']) out.hashes.push(hex(await s.deriveBits(Object.assign({}, P, { hash: h }), key, 512)));
    out.zero = (await s.deriveBits(P, key, 0)).byteLength;
    var aes = await s.deriveKey(P, key, { name: 'AES-GCM', length: 256 }, true, ['encrypt']);
    out.aes = [aes.algorithm, hex(await s.exportKey('raw', aes))];
    var mac = await s.deriveKey(P, key, { name: 'HMAC', hash: 'SHA-512' }, true, ['sign']);
    out.hmac = [mac.algorithm, (await s.exportKey('raw', mac)).byteLength];
    var errors = {
      zeroIterations: function () { return s.deriveBits(Object.assign({}, P, { iterations: 0 }), key, 256); },
      nullLength: function () { return s.deriveBits(P, key, null); },
      notBytes: function () { return s.deriveBits(P, key, 12); },
      noIterations: function () { return s.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(1) }, key, 256); },
      noSalt: function () { return s.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', iterations: 1 }, key, 256); },
      extractable: function () { return s.importKey('raw', new Uint8Array(3), 'PBKDF2', true, ['deriveBits']); },
      badUsage: function () { return s.importKey('raw', new Uint8Array(3), 'PBKDF2', false, ['encrypt']); },
      hmacAsBase: function () { return s.importKey('raw', new Uint8Array(3), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']).then(function (k) { return s.deriveBits(P, k, 256); }); },
    };
    out.errors = {};
    for (var name in errors) out.errors[name] = await attemptAsync(errors[name]);
    return out;`);
  assert.deepEqual(r.rfc, vectors.map((v) => v[4]));
});

test('crypto.subtle ECDH (P-256) and X25519: RFC 5903/7748 keys in every format, deriveBits/deriveKey, an HPKE-style seal, generated pairs and refusals as in Node', async () => {
  const vectors = vectorLines('ecdh_rfc5903_rfc7748.txt');
  const r = await compareWithNode(`${CRYPTO_HELPERS}
    var out = {};
    for (var v of ${JSON.stringify(vectors)}) {
      var curve = v[0], alg = curve === 'X25519' ? { name: 'X25519' } : { name: 'ECDH', namedCurve: curve };
      var pubA = unhex(v[2]), pubB = unhex(v[4]);
      var jwkA = curve === 'X25519' ? { kty: 'OKP', crv: curve, d: b64u(unhex(v[1])), x: b64u(pubA) }
        : { kty: 'EC', crv: curve, d: b64u(unhex(v[1])), x: b64u(pubA.subarray(1, 33)), y: b64u(pubA.subarray(33)) };
      var a = await s.importKey('jwk', jwkA, alg, true, ['deriveBits', 'deriveKey']);
      var b = await s.importKey('raw', pubB, alg, true, []);
      var o = out[curve] = {};
      o.keys = [a.type, a.extractable, a.algorithm, a.usages, b.type, b.extractable, b.algorithm, b.usages];
      o.secret = hex(await s.deriveBits({ name: alg.name, public: b }, a, 256));
      o.full = hex(await s.deriveBits({ name: alg.name, public: b }, a, null));
      o.short = [hex(await s.deriveBits({ name: alg.name, public: b }, a, 128)), hex(await s.deriveBits({ name: alg.name, public: b }, a, 100)),
        (await s.deriveBits({ name: alg.name, public: b }, a, 0)).byteLength];
      var pkcs8 = await s.exportKey('pkcs8', a), spki = await s.exportKey('spki', b);
      o.der = [hex(pkcs8), hex(spki), hex(await s.exportKey('raw', b))];
      var jwk = await s.exportKey('jwk', a);
      o.jwk = [jwk.kty, jwk.crv, jwk.x, jwk.y, jwk.d, jwk.ext, jwk.key_ops, (await s.exportKey('jwk', b)).d];
      var a2 = await s.importKey('pkcs8', pkcs8, alg, false, ['deriveBits']), b2 = await s.importKey('spki', spki, alg, false, []);
      o.reimported = [a2.extractable, b2.extractable, hex(await s.deriveBits({ name: alg.name, public: b2 }, a2, 256)) === o.secret];
      // HPKE-style: the shared secret through HKDF into an AES-GCM key that seals a message.
      var ikm = await s.deriveKey({ name: alg.name, public: b }, a, 'HKDF', false, ['deriveKey']);
      var aes = await s.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode('hpke') }, ikm,
        { name: 'AES-GCM', length: 256 }, false, ['encrypt']);
      o.sealed = hex(await s.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, aes, new TextEncoder().encode('hello')));
      o.direct = hex(await s.exportKey('raw', await s.deriveKey({ name: alg.name, public: b }, a, { name: 'AES-GCM', length: 128 }, true, ['encrypt'])));
      var pair = await s.generateKey(alg, false, ['deriveBits', 'deriveKey']), other = await s.generateKey(alg, true, ['deriveKey']);
      o.generated = [Object.keys(pair).sort(), pair.publicKey.type, pair.publicKey.extractable, pair.publicKey.usages, pair.privateKey.type,
        pair.privateKey.extractable, pair.privateKey.usages, pair.privateKey.algorithm, (await s.exportKey('raw', pair.publicKey)).byteLength,
        hex(await s.deriveBits({ name: alg.name, public: other.publicKey }, pair.privateKey, 256)) ===
          hex(await s.deriveBits({ name: alg.name, public: pair.publicKey }, await s.importKey('pkcs8', await s.exportKey('pkcs8', other.privateKey), alg, false, ['deriveBits']), 256))];
      var badPoint = new Uint8Array(pubB); badPoint[badPoint.length - 1] ^= 1;
      var errors = {
        rawPrivate: function () { return s.exportKey('raw', a); },
        spkiPrivate: function () { return s.exportKey('spki', a); },
        pkcs8Public: function () { return s.exportKey('pkcs8', b); },
        publicUsage: function () { return s.importKey('raw', pubB, alg, true, ['deriveBits']); },
        privateNoUsage: function () { return s.importKey('pkcs8', pkcs8, alg, true, []); },
        badUsage: function () { return s.generateKey(alg, true, ['sign']); },
        noUsage: function () { return s.generateKey(alg, true, []); },
        shortRaw: function () { return s.importKey('raw', pubB.subarray(1), alg, true, []); },
        garbageSpki: function () { return s.importKey('spki', new Uint8Array(10), alg, true, []); },
        garbagePkcs8: function () { return s.importKey('pkcs8', new Uint8Array(10), alg, true, ['deriveBits']); },
        jwkWrongD: function () { return s.importKey('jwk', Object.assign({}, jwkA, { d: b64u(new Uint8Array(32).fill(3)) }), alg, true, ['deriveBits']); },
        jwkWrongKty: function () { return s.importKey('jwk', Object.assign({}, jwkA, { kty: 'RSA' }), alg, true, ['deriveBits']); },
        tooLong: function () { return s.deriveBits({ name: alg.name, public: b }, a, 264); },
        publicAsBase: function () { return s.deriveBits({ name: alg.name, public: b }, b, 256); },
        privateAsPublic: function () { return s.deriveBits({ name: alg.name, public: a }, a, 256); },
        noPublic: function () { return s.deriveBits({ name: alg.name }, a, 256); },
        hmacTooLong: function () { return s.deriveKey({ name: alg.name, public: b }, a, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']); },
      };
      if (curve === 'P-256') {
        errors.offCurve = function () { return s.importKey('raw', badPoint, alg, true, []); };
        errors.noCurve = function () { return s.generateKey({ name: 'ECDH' }, true, ['deriveBits']); };
        errors.unknownCurve = function () { return s.generateKey({ name: 'ECDH', namedCurve: 'P-123' }, true, ['deriveBits']); };
        errors.jwkCrv = function () { return s.importKey('jwk', Object.assign({}, jwkA, { crv: 'P-384' }), alg, true, ['deriveBits']); };
        var compressed = new Uint8Array(33); compressed[0] = 2 + (pubB[64] & 1); compressed.set(pubB.subarray(1, 33), 1);
        o.compressed = hex(await s.exportKey('raw', await s.importKey('raw', compressed, alg, true, []))) === hex(pubB);
      } else {
        errors.smallOrder = function () { return s.importKey('raw', new Uint8Array(32), alg, true, []).then(function (zero) { return s.deriveBits({ name: 'X25519', public: zero }, a, 256); }); };
      }
      o.errors = {};
      for (var name in errors) o.errors[name] = await attemptAsync(errors[name]);
    }
    var p256 = await s.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
    var x25519 = await s.generateKey({ name: 'X25519' }, true, ['deriveBits']);
    out.mixed = await attemptAsync(function () { return s.deriveBits({ name: 'ECDH', public: x25519.publicKey }, p256.privateKey, 256); });
    return out;`);
  assert.equal(r['P-256'].secret, vectors[0][5]);
  assert.equal(r.X25519.secret, vectors[1][5]);
});

test('fetch Response.body: the published reader loop, and body streams, bodyUsed, locking and clone as in Node', async () => {
  const published = `async function main() { const url = ${JSON.stringify(serverUrl + '/stream')}; const r = await fetch(url); const rd = r.body.getReader(); let n = 0; for (;;) { const { done, value } = await rd.read(); if (done) break; n += value.byteLength; } return n; }`;
  const j = await run(published);
  assert.equal(j.has_error, false, JSON.stringify(j.error));
  const expected = await (await fetch(serverUrl + '/stream')).arrayBuffer();
  assert.equal(j.response, expected.byteLength);
  await compareWithNode(`var base = ${JSON.stringify(serverUrl)};
    var out = {};
    var chunks = async function (stream) { var rd = stream.getReader(), got = []; for (;;) { var step = await rd.read(); if (step.done) break;
      got.push([step.value instanceof Uint8Array, step.value.byteLength]); } return got; };
    var fetched = await fetch(base + '/body');
    out.fetched = [typeof fetched.body, fetched.body instanceof ReadableStream, fetched.bodyUsed, fetched.body.locked];
    var reader = fetched.body.getReader();
    out.reading = [fetched.bodyUsed, fetched.body.locked];
    var first = await reader.read();
    out.first = [first.done, first.value instanceof Uint8Array, JSON.parse(new TextDecoder().decode(first.value)).url, fetched.bodyUsed];
    out.end = [await reader.read(), await reader.read()];
    out.textAfter = await attemptAsync(function () { return fetched.text(); });
    out.kinds = [await chunks(new Response('abc').body), await chunks(new Response('').body), await chunks(new Response(new Uint8Array([1, 2, 3])).body),
      await chunks(new Response('h\\u00e9').body), new Response().body, new Response(null).body];
    var r = new Response('abc');
    out.same = r.body === r.body;
    out.textThenBody = [await r.text(), r.bodyUsed, r.body.locked, attempt(function () { return r.body.getReader(); })];
    r = new Response('abc'); r.body.getReader();
    out.lockedThenText = [r.bodyUsed, r.body.locked, await attemptAsync(function () { return r.text(); }), await attemptAsync(function () { return r.arrayBuffer(); })];
    r = new Response('abc'); reader = r.body.getReader(); await reader.read(); reader.releaseLock();
    out.readReleaseText = [r.body.locked, r.bodyUsed, await attemptAsync(function () { return r.text(); })];
    r = new Response('{"a":1}'); r.body.getReader().releaseLock();
    out.releaseUnreadJson = [r.body.locked, r.bodyUsed, await r.json(), r.bodyUsed];
    r = new Response('abc'); reader = r.body.getReader();
    out.cancel = [await reader.cancel('why'), await reader.read(), r.bodyUsed];
    r = new Response('abc'); await r.body.cancel();
    out.streamCancel = [r.bodyUsed, r.body.locked, await attemptAsync(function () { return r.text(); })];
    r = new Response('abc'); reader = r.body.getReader(); reader.releaseLock();
    out.readReleased = await attemptAsync(function () { return reader.read(); });
    r = new Response('abc'); r.body.getReader();
    out.secondReader = attempt(function () { return r.body.getReader(); });
    out.cloneLocked = attempt(function () { return r.clone(); });
    r = new Response('abc'); await r.text();
    out.cloneUsed = attempt(function () { return r.clone(); });
    r = new Response('abc'); var copy = r.clone();
    out.clone = [await r.text(), await copy.text()];
    var fromStream = new Response(new ReadableStream({ start: function (c) { c.enqueue(new TextEncoder().encode('st')); c.enqueue(new TextEncoder().encode('ream')); c.close(); } }));
    var streamCopy = fromStream.clone();
    out.fromStream = [fromStream.headers.get('content-type'), await fromStream.text(), bytes(await streamCopy.arrayBuffer()), fromStream.bodyUsed];
    out.badChunk = await attemptAsync(function () { return new Response(new ReadableStream({ start: function (c) { c.enqueue('text'); c.close(); } })).text(); });
    var locked = new ReadableStream(); locked.getReader();
    out.lockedInit = attempt(function () { return new Response(locked); });
    var req = new Request('https://example.com/', { method: 'POST', body: 'hi' });
    out.request = [typeof req.body, await chunks(req.body), req.bodyUsed, new Request('https://example.com/').body];
    r = new Response('abcd'); var n = 0;
    for await (var c of r.body) n += c.byteLength;
    out.forAwait = [n, r.bodyUsed];
    var closed = new Response('a'); reader = closed.body.getReader();
    var whenClosed = reader.closed.then(function () { return 'closed'; });
    await reader.read(); await reader.read();
    out.closed = await whenClosed;
    out.names = [Object.prototype.toString.call(new Response('x').body), Object.prototype.toString.call(new Response('x').body.getReader())];
    var made = new ReadableStream({ pull: function (c) { c.enqueue(new Uint8Array([7])); if (++made.count === 3) c.close(); } }, { highWaterMark: 0 });
    made.count = 0;
    out.pull = await chunks(made);
    var tees = new Response('tee').body.tee();
    out.tee = [await chunks(tees[0]), await chunks(tees[1])];
    var upper = new TransformStream({ transform: function (chunk, c) { c.enqueue(chunk.toUpperCase()); } });
    var writer = upper.writable.getWriter(); writer.write('a'); writer.write('b'); writer.close();
    var seen = []; for await (var v of upper.readable) seen.push(v);
    out.transform = seen;
    var sink = []; var ws = new WritableStream({ write: function (chunk) { sink.push(chunk); } });
    await new ReadableStream({ start: function (c) { c.enqueue(1); c.enqueue(2); c.close(); } }).pipeTo(ws);
    out.pipeTo = sink;
    out.strategy = [new CountQueuingStrategy({ highWaterMark: 3 }).highWaterMark, new ByteLengthQueuingStrategy({ highWaterMark: 8 }).size(new Uint8Array(5))];
    // Node asks for duplex: 'half'; the sandbox sends bodies whole and refuses a stream: both TypeErrors.
    out.streamUpload = await attemptAsync(function () { return fetch(base + '/upload', { method: 'POST', body: new ReadableStream() }); });
    return out;`);
});
