// The docs work as written: the runnable code blocks of README.md, clients/js/README.md and
// docs/actions.md, run against a stack with scripts/start's settings (billing on with the chain
// processor, a starter credit of 1000, sigil-lowerer, the simulated TEE; on free ports, so the one
// change made to a block is scripts/start's URL https://127.0.0.1:8443 -> the stack's).
//   README.md, clients/js/README.md: blocks fenced as ```sh verbatim / ```js verbatim, in order,
//     the shell ones in one bash session per file (as a user types them), with the CLI as `sigil`
//     and SIGIL_HOME/SIGIL_PORT naming the stack as scripts/start's would.
//   docs/actions.md: every ```js action block, in the local sandbox (sigil run --local) and on the
//     stack (with a PKP, in a group listing the block's CID); a following ```json response block is
//     the exact answer; `error=CODE` in the fence is the error the run must end with.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, httpsRequest, SOURCE_DIR, BUILD_DIR, ethers } from './stack.mjs';
import https from 'node:https';

const SIGIL = join(SOURCE_DIR, 'clients/cli/sigil.mjs');
const DEV_URL = 'https://127.0.0.1:8443';
const DEV_MNEMONIC = 'test test test test test test test test test test test junk';

/// The fenced blocks of a Markdown file: [{info, body}] in order.
export function codeBlocks(markdown) {
  const out = [];
  const re = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (let m; (m = re.exec(markdown));) out.push({ info: m[1].trim(), body: m[2] });
  return out;
}

let stack;
let work;

function sh(script, env, cwd) {
  return new Promise((resolve) => {
    execFile('bash', ['-euo', 'pipefail', '-c', script], { env: { ...process.env, ...env }, cwd, timeout: 400000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }));
  });
}

before(async () => {
  stack = await startStack({ workers: 2, teeSim: true,
    billing: { lines: ['starter_credit_cents = 1000', 'starter_credit_budget_cents = 100000000'] } });
  work = mkdtempSync(join(tmpdir(), 'sigil-docs-'));
  // What scripts/start leaves in its home for the CLI and scripts/ipfs-add: the gateway's folders.
  mkdirSync(join(stack.home, 'ipfs'), { recursive: true });
  writeFileSync(join(stack.home, 'gateway_dir'), stack.gatewayDir);
  mkdirSync(join(work, 'bin'));
  symlinkSync(SIGIL, join(work, 'bin/sigil'));
});
after(async () => {
  await stack?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

function userEnv() {
  return {
    HOME: join(work, 'home'),
    PATH: `${join(work, 'bin')}:${process.env.PATH}`,
    SIGIL_HOME: stack.home,
    SIGIL_PORT: new URL(stack.url).port,
    SIGIL_BUILD_DIR: BUILD_DIR,
  };
}

test('README.md: the verbatim shell blocks run in one session and no call answers an error', async () => {
  const blocks = codeBlocks(readFileSync(join(SOURCE_DIR, 'README.md'), 'utf8')).filter((b) => b.info === 'sh verbatim');
  assert.ok(blocks.length >= 3, 'README.md marks its runnable blocks ```sh verbatim');
  mkdirSync(join(work, 'home'), { recursive: true });
  const script = blocks.map((b) => b.body.replaceAll(DEV_URL, stack.url)).join('\n');
  const r = await sh(script, userEnv(), join(work, 'home'));
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.doesNotMatch(r.stdout, /"error"\s*:/, r.stdout);
  assert.match(r.stdout, /"has_error":false/);           // the curl run
  assert.match(r.stdout, /^bought 500 credits/m);         // sigil credits buy
  assert.match(r.stdout, /cost: \d+ credits? \(balance/); // sigil run on the stack
});

test('clients/js/README.md: the walkthrough block runs as written (nonce cache off, credits bought)', async () => {
  const blocks = codeBlocks(readFileSync(join(SOURCE_DIR, 'clients/js/README.md'), 'utf8')).filter((b) => b.info === 'js verbatim');
  assert.equal(blocks.length, 1);
  // Saved beside the example, as the README says, so './chain_secured_walkthrough.mjs' and
  // '@sigil/sdk' resolve; removed afterwards.
  const file = join(SOURCE_DIR, 'clients/js/examples', `.verbatim-${process.pid}.mjs`);
  writeFileSync(file, blocks[0].body.replaceAll(DEV_URL, stack.url));
  const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
  try {
    // Two fresh wallets with test ETH, from the dev mnemonic's funded account 0 (the deployer).
    const funder = new ethers.NonceManager(ethers.HDNodeWallet.fromPhrase(DEV_MNEMONIC, undefined, "m/44'/60'/0'/0/0").connect(provider));
    const admin = ethers.Wallet.createRandom();
    const newAdmin = ethers.Wallet.createRandom();
    for (const w of [admin, newAdmin]) await (await funder.sendTransaction({ to: w.address, value: ethers.parseEther('10') })).wait();
    const r = await new Promise((resolve) => execFile(process.execPath, [file], {
      env: { ...process.env, SIGIL_RPC_URL: stack.rpcUrl, ADMIN_KEY: admin.privateKey, NEW_ADMIN_KEY: newAdmin.privateKey,
        NODE_EXTRA_CA_CERTS: join(stack.home, 'nginx/tls/cert.pem') }, timeout: 300000,
    }, (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr })));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^0x[0-9a-f]{130}\n$/);   // the PKP's EIP-191 signature
  } finally {
    provider.destroy();
    rmSync(file, { force: true });
  }
});

test('docs/actions.md: every action block answers as written, locally and on the stack', async () => {
  const blocks = codeBlocks(readFileSync(join(SOURCE_DIR, 'docs/actions.md'), 'utf8'));
  const examples = [];
  blocks.forEach((b, i) => {
    const m = b.info.match(/^js action(?: error=([a-z_]+))?$/);
    if (!m) return;
    const next = blocks[i + 1];
    examples.push({ code: b.body, error: m[1] ?? null, response: next?.info === 'json response' ? JSON.parse(next.body) : undefined });
  });
  assert.ok(examples.length >= 12, 'docs/actions.md has its examples');
  // On the stack: an account (the starter credit pays the runs), a PKP, a group with every CID.
  const account = await stack.request('POST', 'new_account', { body: {} });
  const key = account.json.api_key;
  const pkp = (await stack.request('POST', 'create_wallet', { key, body: {} })).json.wallet_address;
  const files = examples.map((e, i) => {
    const file = join(work, `example-${i}.js`);
    writeFileSync(file, e.code);
    return file;
  });
  const cids = files.map((f) => execFileSync(join(BUILD_DIR, 'bin/sigil-worker'), ['--cid', f]).toString().trim());
  const group = await stack.request('POST', 'add_group', { key, body: {
    group_name: 'docs', group_description: '', pkp_ids_permitted: [pkp],
    cid_hashes_permitted: cids.map((c) => ethers.keccak256(ethers.toUtf8Bytes(c))),
  } });
  assert.equal(group.status, 200, group.text);
  for (const [i, e] of examples.entries()) {
    const label = `example ${i + 1}: ${e.code.split('\n')[0]}`;
    const file = files[i];
    // sigil run --local exits 1 when the action ends with an error; its --json answer is on stdout either way.
    const ran = spawnSync(process.execPath, [SIGIL, 'run', '--local', file, '--json'], { env: { ...process.env, SIGIL_BUILD_DIR: BUILD_DIR } });
    const local = JSON.parse(ran.stdout.toString() || 'null');
    assert.ok(local && local.local === true, `${label} (local): ${ran.stdout}${ran.stderr}`);
    const remote = (await stack.request('POST', 'sigil_action', { key, body: { code: e.code, pkp_id: pkp, js_params: { pkpId: pkp } } }));
    assert.equal(remote.status, 200, `${label}: ${remote.text}`);
    for (const [where, run] of [['local', local], ['stack', remote.json]]) {
      if (e.error) {
        assert.equal(run.has_error, true, `${label} (${where})`);
        assert.equal(run.error.code, e.error, `${label} (${where}): ${JSON.stringify(run.error)}`);
      } else {
        assert.equal(run.has_error, false, `${label} (${where}): ${JSON.stringify(run.error)}`);
        if (e.response !== undefined) assert.deepEqual(run.response, e.response, `${label} (${where})`);
      }
    }
  }
});

test('/ answers a JSON index whose links lead to the OpenAPI document and Swagger UI; the document lists 402/429/503', async () => {
  const agent = new https.Agent({ rejectUnauthorized: false });
  const index = await httpsRequest(agent, `${stack.url}/`, 'GET');
  assert.equal(index.status, 200, index.text);
  assert.match(index.headers['content-type'], /application\/json/);
  assert.equal(index.json.links.dashboard, '/dashboard/');
  const swagger = await httpsRequest(agent, `${stack.url}${index.json.links.swagger_ui}`, 'GET');
  assert.equal(swagger.status, 200);
  const openapi = await httpsRequest(agent, `${stack.url}${index.json.links.openapi}`, 'GET');
  assert.equal(openapi.status, 200);
  const run = openapi.json.paths['/core/v1/sigil_action'].post;
  for (const status of ['402', '403', '429', '503']) assert.ok(run.responses[status]?.content['application/json'].example, status);
  assert.ok(openapi.json.paths['/core/v1/add_group'].post.responses['409']);
  assert.equal(run.requestBody.content['application/json'].schema.oneOf.length, 2);
  // Swagger UI's "Try it out" body is the schema's example: code only, which the service runs.
  const example = run.requestBody.content['application/json'].schema.example;
  const key = (await stack.request('POST', 'new_account', { body: {} })).json.api_key;
  const tried = await stack.request('POST', 'sigil_action', { key, body: example });
  assert.equal(tried.status, 403, tried.text);   // well-formed: refused only because no group lists it
  assert.equal(tried.json.error.code, 'not_authorized');
  agent.destroy();
});
