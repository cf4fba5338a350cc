// Imports by CID through the whole stack (DESIGN section 5): an action imports ES and CommonJS modules
// by "ipfs://<CID>" (named, default, namespace, side-effect and dynamic imports, transitively); the
// worker fetches each from the gateway it is given here (a counting one of our own), verified against
// its CID, lowers it as a module and caches it, so a warm run asks the gateway nothing. A module no
// gateway has fails the run as a missing action CID does, naming the import; one whose bytes do not
// match is refused; a URL, a package name or a path stays refused with the way to pin it. With
// sigil-lowerer gone the sandbox child lowers the graph, one level per round. A real published
// packages (pvutils' ESM build and js-sha3's CommonJS file, from node_modules) run as modules.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, actionRunner, actionCid, newAccount, addGroup, addUsageKey, assertError, eventually, SOURCE_DIR, BUILD_DIR, ethers } from './stack.mjs';

let stack, run, keys, cacheDir, gateway, gatewayUrl;
const served = new Map();    // CID -> bytes the gateway answers with
const requests = new Map();  // CID -> how often the gateway was asked for it

before(async () => {
  gateway = createServer((req, res) => {
    const cid = req.url.replace(/^\/ipfs\//, '');
    requests.set(cid, (requests.get(cid) ?? 0) + 1);
    if (!served.has(cid)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(served.get(cid));
  });
  await new Promise((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  gatewayUrl = `http://127.0.0.1:${gateway.address().port}/ipfs/`;
  cacheDir = mkdtempSync('/tmp/sigil-imports-cache-');
  stack = await startStack({ workers: 1, ipfsGateways: [gatewayUrl], actions: [`code_cache_dir = ${cacheDir}`] });
  const owner = (await newAccount(stack, 'imports')).api_key;
  const group = await addGroup(stack, owner, 'runners');
  const key = await addUsageKey(stack, owner, { execute_in_groups: [Number(group)] });
  keys = { owner, group, key };
  run = actionRunner(stack, keys);
});

after(async () => {
  if (stack) await stack.stop();
  gateway?.close();
  if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
});

// Puts a module on the gateway; its CID.
async function pin(text) {
  const cid = await actionCid(stack, text);
  served.set(cid, text);
  return cid;
}
const asked = (cid) => requests.get(cid) ?? 0;
let serial = 0;
const fresh = () => `/* ${++serial} ${Date.now()} */`;  // a module no run has seen

test('ES modules and CommonJS: named, default, namespace, side-effect, transitive and dynamic imports', async () => {
  const base = await pin(`${fresh()}\nexport const one = 1;\nexport default function twice(x) { return 2 * x; }\nglobalThis.__baseRuns = (globalThis.__baseRuns || 0) + 1;`);
  const mid = await pin(`${fresh()}\nimport twice, { one } from "ipfs://${base}";\nexport const three = twice(one) + one;\nexport class Box { constructor(v) { this.v = v; } get doubled() { return twice(this.v); } }`);
  const cjs = await pin(`${fresh()}\nexports.greet = (name) => 'hello ' + name;\nmodule.exports.kind = 'cjs';`);
  const side = await pin(`${fresh()}\nglobalThis.__sideEffect = 'ran';`);
  const late = await pin(`${fresh()}\nexport const later = 'dynamic';`);
  const action = `import { three, Box } from "ipfs://${mid}";
import * as baseNs from "ipfs://${base}";
import lib, { greet } from "ipfs://${cjs}";
import "ipfs://${side}";
async function main({ name }) {
  const { later } = await import("ipfs://${late}");
  return [three, new Box(4).doubled, baseNs.one, baseNs.default(5), lib.kind, greet(name), globalThis.__sideEffect, later, globalThis.__baseRuns];
}`;
  const j = await run(action, { name: 'sigil' });
  assert.equal(j.has_error, false, JSON.stringify(j));
  assert.deepEqual(j.response, [3, 8, 1, 10, 'cjs', 'hello sigil', 'ran', 'dynamic', 1]);
  for (const cid of [base, mid, cjs, side, late]) assert.equal(asked(cid), 1, `${cid} fetched once`);
  // The modules' lowered text is kept in the shared folder apart from any action's.
  const files = readdirSync(cacheDir);
  assert.ok(files.includes(`${mid}.module.lowered`), files.join(' '));
  assert.ok(!files.includes(`${mid}.lowered`));

  // Warm: the second run asks the gateway nothing.
  const again = await run(action, { name: 'again' });
  assert.deepEqual(again.response, [3, 8, 1, 10, 'cjs', 'hello again', 'ran', 'dynamic', 1]);
  for (const cid of [base, mid, cjs, side, late]) assert.equal(asked(cid), 1, `${cid} not fetched again`);

  // An error inside a module shows the module's frame by its CID, never a server path.
  const thrower = await pin(`${fresh()}\nexport function boom() {\n  throw new Error('module boom');\n}`);
  const failed = await run(`import { boom } from "ipfs://${thrower}";\nfunction main() { boom(); }`);
  assert.equal(failed.error?.code, 'script_error', JSON.stringify(failed));
  assert.match(failed.error.stack, new RegExp(`ipfs://${thrower}:3`));
  assert.doesNotMatch(failed.error.stack, /prelude\.js|child\.cpp/);
});

test('an action run by its CID imports modules the same way', async () => {
  const mod = await pin(`${fresh()}\nexport const answer = 42;`);
  const code = `import { answer } from "ipfs://${mod}";\nfunction main() { return answer; }`;
  const cid = await pin(code);
  assertSuccess(await stack.request('POST', 'add_action_to_group', { key: keys.owner, body: { group_id: keys.group, action_ipfs_cid: cid } }));
  const r = await stack.request('POST', 'sigil_action', { key: keys.key, body: { ipfs_id: cid } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.response, 42, r.text);
});

test('a module no gateway has, or whose bytes do not match its CID, fails the run naming the import', async () => {
  const missing = await actionCid(stack, `${fresh()}\nexport const gone = 1;`);
  const importer = await pin(`${fresh()}\nimport { gone } from "ipfs://${missing}";\nexport const x = gone;`);
  let r = await stack.request('POST', 'sigil_action', {
    key: keys.key, body: { code: await listed(`import { x } from "ipfs://${importer}";\nfunction main() { return x; }`) } });
  assertError(r, 502, 'ipfs_unavailable');
  assert.match(r.json.message, new RegExp(`the module ipfs://${missing} imported by ${importer}`));

  const honest = `${fresh()}\nexport const v = 'honest';`;
  const cid = await actionCid(stack, honest);
  served.set(cid, `${fresh()}\nexport const v = 'evil';`);
  r = await stack.request('POST', 'sigil_action', {
    key: keys.key, body: { code: await listed(`import { v } from "ipfs://${cid}";\nfunction main() { return v; }`) } });
  assertError(r, 502, 'ipfs_cid_mismatch');
  assert.match(r.json.message, new RegExp(`the module ipfs://${cid}`));
});

// Lists inline code's CID in the group (for stack.request calls that check the status themselves).
async function listed(code) {
  const cid = await actionCid(stack, code);
  assertSuccess(await stack.request('POST', 'add_action_to_group', { key: keys.owner, body: { group_id: keys.group, action_ipfs_cid: cid } }));
  return code;
}
function assertSuccess(r) {
  assert.ok(r.status === 200, `${r.status} ${r.text}`);
  return r.json;
}

test('an import graph past 64 modules or 8 MiB is refused before the run', async () => {
  const many = [];
  for (let i = 0; i < 65; i++) many.push(await pin(`${fresh()}\nmodule.exports = ${i};`));
  let r = await stack.request('POST', 'sigil_action', {
    key: keys.key, body: { code: await listed(many.map((cid, i) => `import m${i} from "ipfs://${cid}";`).join('\n') + '\nfunction main() { return m0; }') } });
  assertError(r, 413, 'imports_too_large');
  assert.match(r.json.message, /more than 64 modules/);
  // Larger than the API's body cap for get_sigil_action_ipfs_id: its CID from sigil-worker --cid.
  const hugeText = `${fresh()}\nmodule.exports = "${'x'.repeat(8.5 * 1024 * 1024)}";`;
  const hugeFile = join(cacheDir, 'huge.js');
  writeFileSync(hugeFile, hugeText);
  const huge = execFileSync(join(BUILD_DIR, 'bin/sigil-worker'), ['--cid', hugeFile], { encoding: 'utf8' }).trim();
  rmSync(hugeFile);
  served.set(huge, hugeText);
  r = await stack.request('POST', 'sigil_action', {
    key: keys.key, body: { code: await listed(`import h from "ipfs://${huge}";\nfunction main() { return h.length; }`) } });
  assertError(r, 413, 'imports_too_large');
  assert.match(r.json.message, /more than 8 MiB/);
  // 64 modules are fine.
  const j = await run(many.slice(0, 64).map((cid, i) => `import m${i} from "ipfs://${cid}";`).join('\n') +
    `\nfunction main() { return [${many.slice(0, 64).map((_, i) => `m${i}`).join(', ')}].reduce((a, b) => a + b, 0); }`);
  assert.equal(j.response, (63 * 64) / 2, JSON.stringify(j).slice(0, 300));
});

test('a URL, a package name or a path stays refused, saying how to pin it; so is a dynamic import of a computed name', async () => {
  for (const [code, module] of [
    ['import { ethers } from "https://cdn.example/ethers.js";\nfunction main() {}', 'https://cdn.example/ethers.js'],
    ['import _ from "lodash";\nfunction main() {}', 'lodash'],
    ['export * from "./lib.js";\nfunction main() {}', './lib.js'],
  ]) {
    const j = await run(code);
    assert.equal(j.error?.code, 'import_not_allowed', JSON.stringify(j));
    assert.ok(j.error.message.includes(`"${module}"`), j.error.message);
    assert.match(j.error.message, /import it as "ipfs:\/\/<its CID>"/);
  }
  const dynamic = await run('async function main({ m }) { return await import(m); }', { m: 'ipfs://x' });
  assert.equal(dynamic.error?.code, 'import_not_allowed', JSON.stringify(dynamic));
  assert.match(dynamic.error.message, /string literal/);
});

test('published packages as modules: pvutils 1.2.0 (its ESM build) and js-sha3 0.8.0 (CommonJS)', async () => {
  const pvutils = await pin(readFileSync(join(SOURCE_DIR, 'node_modules/pvutils/build/utils.es.js'), 'utf8'));
  const sha3 = await pin(readFileSync(join(SOURCE_DIR, 'node_modules/js-sha3/src/sha3.js'), 'utf8'));
  const j = await run(`import { toBase64, fromBase64, bufferToHexCodes } from "ipfs://${pvutils}";
import sha3, { keccak256 } from "ipfs://${sha3}";
function main({ text }) {
  return [toBase64(text), fromBase64(toBase64(text)), bufferToHexCodes(new Uint8Array([1, 171, 255]).buffer),
          '0x' + keccak256(text), '0x' + sha3.sha3_256(text)];
}`, { text: 'sigil imports' });
  assert.equal(j.has_error, false, JSON.stringify(j));
  assert.deepEqual(j.response, [Buffer.from('sigil imports').toString('base64'), 'sigil imports', '01ABFF',
    ethers.keccak256(ethers.toUtf8Bytes('sigil imports')), '0x' + createHash('sha3-256').update('sigil imports').digest('hex')]);
});

test('without sigil-lowerer the sandbox child lowers the graph, one level per round, and it is cached', async () => {
  process.kill(stack.pidOf('lowerer'), 'SIGKILL');
  await eventually(() => stack.pidOf('lowerer') === null, 5000, 20);
  try {
    const leaf = await pin(`${fresh()}\nexport const leaf = 'leaf';`);
    const mid = await pin(`${fresh()}\nimport { leaf } from "ipfs://${leaf}";\nexport const mid = leaf + '+mid';`);
    const action = `import { mid } from "ipfs://${mid}";\nconst main = async () => mid + '+action';`;
    const j = await run(action);
    assert.equal(j.has_error, false, JSON.stringify(j));
    assert.equal(j.response, 'leaf+mid+action');
    assert.equal(asked(leaf), 1);
    assert.equal(asked(mid), 1);
    const again = await run(action);
    assert.equal(again.response, 'leaf+mid+action');
    assert.equal(asked(leaf) + asked(mid), 2);
    // A syntax error inside a module names it.
    const broken = await pin(`${fresh()}\nexport const x = ;`);
    const bad = await run(`import { x } from "ipfs://${broken}";\nfunction main() { return x; }`);
    assert.equal(bad.error?.code, 'syntax_error', JSON.stringify(bad));
    assert.match(bad.error.message, new RegExp(`line 2, column \\d+: .*in the module ipfs://${broken}`));
  } finally {
    await stack.restart('lowerer');
  }
});
