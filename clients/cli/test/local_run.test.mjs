// `sigil run --local FILE`: the real sandbox (the build's sigil-worker --run-local and sigil-sandbox)
// with throw-away keys, no account, no chain: answers, logs, time, the PKP, the limits and their
// errors, and the CLI's errors with their fixes. No stack runs here.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { sigil, cliHome } from './support.mjs';

const require = createRequire(import.meta.url);
const { ethers } = require('ethers');
const home = cliHome();
after(() => home.remove());

function action(name, code) {
  const file = join(home.dir, name);
  writeFileSync(file, code);
  return file;
}

test('a hello-world run prints its response and time, and --json gives the whole answer', async () => {
  const file = action('hello.js', 'async function main() { console.log("hi", {a: 1}); return "Hello World!"; }');
  const text = await sigil(['run', '--local', file], { env: home.env });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^response: Hello World!\nlogs:\n  hi \{"a":1\}\ntime: [0-9.]+ ms in the local sandbox, lowering included \(cid Qm\w{44}; throw-away PKP 0x[0-9a-fA-F]{40}; nothing charged\)\n$/);
  const json = await sigil(['run', '--local', file, '--json'], { env: home.env });
  assert.equal(json.code, 0);
  assert.equal(json.json.response, 'Hello World!');
  assert.equal(json.json.logs, 'hi {"a":1}\n');
  assert.equal(json.json.has_error, false);
  assert.equal(json.json.local, true);
  assert.ok(json.json.time_ms > 0);
  const cid = execCid(file);
  assert.equal(json.json.cid, cid);
});

function execCid(file) {
  const { execFileSync } = require('node:child_process');
  const worker = join(process.env.SIGIL_BUILD_DIR ?? join(import.meta.dirname, '../../../build'), 'bin/sigil-worker');
  return execFileSync(worker, ['--cid', file]).toString().trim();
}

test('params reach main, and the throw-away PKP signs as the service would (EIP-191, recoverable)', async () => {
  const file = action('sign.js', 'async function main({ pkpId, message }) { return { pkpId, sig: await Sigil.Actions.signMessage({ pkpId, message }) }; }');
  const run = await sigil(['run', '--local', file, '--params', '{"message":"local hi"}', '--json'], { env: home.env });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.json.response.pkpId, run.json.pkp_id);
  assert.equal(ethers.verifyMessage('local hi', run.json.response.sig), run.json.pkp_id);
  // Each run draws new keys: nothing is kept between runs.
  const again = await sigil(['run', '--local', file, '--params', '{"message":"local hi"}', '--json'], { env: home.env });
  assert.notEqual(again.json.pkp_id, run.json.pkp_id);
});

test('another PKP is refused as an unauthorized one is on the service; the action key is there', async () => {
  const file = action('other.js', `async function main() {
    const key = Sigil.Actions.getActionPrivateKey();
    let refused = '';
    try { Sigil.Actions.signMessage({ pkpId: '0x${'11'.repeat(20)}', message: 'x' }); } catch (e) { refused = e.message; }
    return { same: new ethers.Wallet(key).address === Sigil.Actions.getActionWalletAddress(), refused };
  }`);
  const run = await sigil(['run', '--local', file, '--json'], { env: home.env });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.json.response.same, true);
  assert.match(run.json.response.refused, /throw-away PKP/);
});

test('limits end the run with their codes and exit status 1; --config applies [actions] limits', async () => {
  const big = await sigil(['run', '--local', action('big.js', 'function main() { return "x".repeat(200 * 1024); }'), '--json'], { env: home.env });
  assert.equal(big.code, 1);
  assert.equal(big.json.error.code, 'response_limit');
  const syntax = await sigil(['run', '--local', action('bad.js', 'function main( {')], { env: home.env });
  assert.equal(syntax.code, 1);
  assert.match(syntax.stdout, /^error: syntax_error: /m);
  const conf = join(home.dir, 'sigil.conf');
  writeFileSync(conf, '[actions]\ntimeout_ms = 300\n');
  const started = Date.now();
  const loop = await sigil(['run', '--local', action('loop.js', 'function main() { for (;;) {} }'), '--config', conf, '--json'], { env: home.env });
  assert.equal(loop.json.error.code, 'time_limit');
  assert.ok(Date.now() - started < 20000, 'the 300 ms limit applied, not the 30 s default');
});

test('bad input: clear errors with the fix, exit status 2 for usage', async () => {
  const missing = await sigil(['run', '--local', join(home.dir, 'nope.js')], { env: home.env });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no_such_file: .*nope\.js: no such file\n  fix: /);
  const params = await sigil(['run', '--local', action('p.js', 'function main(){}'), '--params', '{oops'], { env: home.env });
  assert.equal(params.code, 2);
  assert.match(params.stderr, /--params is not JSON .*\n  fix: quote it for the shell/);
  const array = await sigil(['run', '--local', action('p2.js', 'function main(){}'), '--params', '[1]', '--json'], { env: home.env });
  assert.equal(array.json.error.code, 'usage');
  const pkp = await sigil(['run', '--local', action('p3.js', 'function main(){}'), '--pkp', '0x' + '11'.repeat(20)], { env: home.env });
  assert.match(pkp.stderr, /throw-away PKP/);
});

test('imports by ipfs://CID resolve from --modules or a gateway, checked against the CID, as on the service', async () => {
  const { mkdirSync, copyFileSync } = require('node:fs');
  const { createServer } = require('node:http');
  // Two levels (the action imports lib, which imports base), so a second round resolves what the
  // child's lowering of lib names.
  const base = action('base.mjs', 'export const unit = 21n;\n');
  const baseCid = execCid(base);
  const lib = action('lib.mjs', `import { unit } from "ipfs://${baseCid}";\nexport const twice = (x) => String(2n * unit * BigInt(x));\nexport default "lib";\n`);
  const libCid = execCid(lib);
  const file = action('imports.js', `import name, { twice } from "ipfs://${libCid}";\nasync function main({ k }) { return name + ":" + twice(k); }\n`);
  const dir = join(home.dir, 'modules');
  mkdirSync(dir);
  copyFileSync(base, join(dir, baseCid));
  copyFileSync(lib, join(dir, libCid));
  const offline = join(home.dir, 'offline.conf');
  writeFileSync(offline, '[actions]\nipfs_gateways = http://127.0.0.1:9/ipfs/\nipfs_timeout_ms = 2000\n');
  const fromDir = await sigil(['run', '--local', file, '--modules', dir, '--config', offline, '--params', '{"k":2}', '--json'], { env: home.env });
  assert.equal(fromDir.code, 0, fromDir.stderr);
  assert.equal(fromDir.json.response, 'lib:84');

  // A file whose bytes are not its name's CID is not taken: no gateway has it either, so the run
  // stops with the error naming the module and its importer, and the fix.
  writeFileSync(join(dir, baseCid), 'export const unit = 1n;\n');
  const tampered = await sigil(['run', '--local', file, '--modules', dir, '--config', offline], { env: home.env });
  assert.equal(tampered.code, 1);
  assert.match(tampered.stderr, new RegExp(`ipfs_unavailable: the module ipfs://${baseCid} imported by ${libCid}: `));
  assert.match(tampered.stderr, /fix: give the module with --modules DIR/);

  // From a gateway (loopback HTTP, as the service's tests serve one): what it sends is checked too.
  const served = new Map([[baseCid, 'export const unit = 21n;\n'], [libCid, null]]);
  const gateway = createServer((req, res) => {
    const cid = req.url.replace('/ipfs/', '');
    const text = cid === libCid ? require('node:fs').readFileSync(lib, 'utf8') : served.get(cid);
    if (text === undefined) { res.writeHead(404); res.end(); return; }
    res.end(text);
  });
  await new Promise((r) => gateway.listen(0, '127.0.0.1', r));
  try {
    const online = join(home.dir, 'online.conf');
    writeFileSync(online, `[actions]\nipfs_gateways = http://127.0.0.1:${gateway.address().port}/ipfs/\n`);
    const fromGateway = await sigil(['run', '--local', file, '--config', online, '--params', '{"k":3}', '--json'], { env: home.env });
    assert.equal(fromGateway.code, 0, fromGateway.stderr);
    assert.equal(fromGateway.json.response, 'lib:126');
    served.set(baseCid, 'export const unit = 1n;\n');
    const mismatch = await sigil(['run', '--local', file, '--config', online], { env: home.env });
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.stderr, new RegExp(`ipfs_(cid_mismatch|unavailable): the module ipfs://${baseCid} imported by ${libCid}`));
  } finally {
    gateway.close();
  }
  const noDir = await sigil(['run', '--local', file, '--modules', join(home.dir, 'absent')], { env: home.env });
  assert.equal(noDir.code, 2);
  assert.match(noDir.stderr, /--modules .*absent is not a directory/);
  const notLocal = await sigil(['run', file, '--modules', dir], { env: home.env });
  assert.equal(notLocal.code, 2);
  assert.match(notLocal.stderr, /--modules is for --local runs/);
});

test('scripts/ipfs-add refuses a home with no running stack, naming the fix', async () => {
  const { spawnSync } = require('node:child_process');
  const file = action('add.js', 'function main() { return 1; }');
  const r = spawnSync(join(import.meta.dirname, '../../../scripts/ipfs-add'), [file], { env: { ...process.env, SIGIL_HOME: join(home.dir, 'nothing-here') } });
  assert.equal(r.status, 1);
  assert.equal(r.stdout.toString(), '');
  assert.match(r.stderr.toString(), /^ipfs-add: no stack is running from .*nothing-here \(SIGIL_HOME\); start it with scripts\/start/);
});
