// The web dashboard (/dashboard/, issue 25) in a real browser through the whole stack: Debian's
// chromium driven headless by playwright-core against nginx, the workers, keyd and anvil with
// billing on. With a key: sign in, create a PKP and a group, add the PKP, register an action into the
// group, run it and see its answer, logs and cost; keys with their scopes as checkboxes. With a
// wallet: an EIP-1193 provider injected for the test (its requests answered by an ethers Wallet in
// this process) signs in, creates a ChainSecured account, mints a PKP and a usage key through the
// EIP-712 endpoints and sets up a group on chain, and buys credits; every transaction and signature is
// first previewed decoded in the page, and a rejected preview sends nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, ethers, keccakText, assertOk } from './stack.mjs';
import { openBrowser } from './browser.mjs';

const ACTION = `async function main(params) {
  console.log('hi ' + params.name);
  if (params.fail) throw new Error('boom');
  return { greeting: 'hello ' + params.name };
}`;

let stack;
let browser;
let context;
let page;
let pageErrors;
let testWallet;

before(async () => {
  stack = await startStack({ workers: 2, billing: { lines: ['starter_credit_cents = 1000'] } });
  const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  testWallet = ethers.Wallet.createRandom().connect(provider);
  await provider.send('anvil_setBalance', [testWallet.address, '0x8ac7230489e80000']);
  browser = await openBrowser({ wallet: testWallet });
  ({ context, page, pageErrors } = browser);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

const text = (sel) => page.locator(sel).innerText();

// Signs in with `key` and waits until the header says `want`; a refusal fails at once with its message.
async function signIn(key, want) {
  await page.fill('#signin-key', key);
  await page.click('#signin-key-submit');
  await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('#whoami').textContent)
    || document.querySelector('#signin-status').classList.contains('error'), want.source);
  assert.match(await text('#whoami'), want, await text('#signin-status'));
}

async function open(hash) {
  await page.click(`#nav a[data-page="${hash}"]`);
  await page.locator(`#page-${hash}`).waitFor({ state: 'visible' });
}

// Waits until the page's status region says `want` (a RegExp) and returns the text; an error shown
// instead fails at once with it.
async function statusSays(region, want) {
  const loc = page.locator(region);
  await page.waitForFunction(([sel, src]) => {
    const n = document.querySelector(sel);
    return n && (new RegExp(src).test(n.textContent) || n.classList.contains('error'));
  }, [region, want.source]);
  const got = await loc.innerText();
  assert.doesNotMatch(await loc.getAttribute('class') ?? '', /error/, `${region}: ${got}`);
  assert.match(got, want);
  return got;
}

// GET through nginx as the browser's context sees it (the stack's self-signed certificate accepted).
async function get(path) {
  const res = await context.request.get(`${stack.url}${path}`, { maxRedirects: 0 });
  const body = await res.text();
  let json = null;
  try { json = JSON.parse(body); } catch { /* not JSON */ }
  return { status: res.status(), headers: res.headers(), text: body, json };
}

test('nginx serves the dashboard, the SDK modules and ethers, and nothing else of the tree', async () => {
  const index = await get('/dashboard/');
  assert.equal(index.status, 200);
  assert.match(index.headers['content-type'], /^text\/html/);
  assert.equal(index.headers['x-content-type-options'], 'nosniff');
  // The CSP names the import map by its hash: editing one without the other breaks the page.
  const map = /<script type="importmap">(.*?)<\/script>/s.exec(index.text)[1];
  const hash = createHash('sha256').update(map).digest('base64');
  assert.ok(index.text.includes(`'sha256-${hash}'`), 'the CSP meta must carry the import map\'s sha256');
  for (const [path, type] of [['/dashboard/app.js', /javascript/], ['/dashboard/sdk/src/index.js', /javascript/],
    ['/dashboard/sdk/abi/AccountConfig.json', /json/], ['/dashboard/vendor/ethers.js', /javascript/],
    ['/dashboard/vendor/yaml/index.js', /javascript/]]) {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers['content-type'], type, path);
  }
  for (const path of ['/dashboard/nope.js', '/dashboard/sdk/package.json', '/dashboard/sdk/src/../../../package.json', '/dashboard/vendor/ethers.umd.js']) {
    const res = await get(path);
    assert.ok(res.status === 404 || res.status === 400, `${path}: ${res.status}`);
    if (res.status === 404) assert.equal(res.json?.error?.code, 'not_found', path);
  }
  // Compressed (static code only): ethers' build is 522 kB as it is.
  const ethersJs = await context.request.get(`${stack.url}/dashboard/vendor/ethers.js`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(ethersJs.headers()['content-encoding'], 'gzip');
  const bare = await get('/dashboard');
  assert.equal(bare.status, 301);
});

let ownerKey;
let pkpId;
let groupId;
let cid;

test('key sign-in: create an account, a PKP, a group with the PKP and an action, run it and see the answer', async () => {
  await page.goto(`${stack.url}/dashboard/`);
  await page.locator('body[data-ready="true"]').waitFor();
  assert.equal(await text('#whoami'), 'Not signed in.');

  // A new account from the page: its key is shown once.
  await page.click('#new-account');
  await statusSays('#signin-status', /account created/);
  ownerKey = await text('#new-account-key');
  assert.match(ownerKey, /^[A-Za-z0-9+/]{43}=$/);
  await signIn(ownerKey, /account key/);
  assert.ok((await text('#whoami')).includes(keccakText(ownerKey).slice(0, 10)));

  await open('pkps');
  await page.fill('#pkp-name', 'dash pkp');
  await page.click('#pkp-add');
  const created = await statusSays('#pkps-status', /PKP 0x[0-9a-f]{40} created/);
  pkpId = /0x[0-9a-f]{40}/.exec(created)[0];
  await page.locator(`#pkps-table tr[data-pkp-id="${pkpId}"]`).waitFor();

  await open('groups');
  await page.fill('#group-name', 'dash group');
  await page.click('#group-add');
  groupId = /group (\d+) created/.exec(await statusSays('#groups-status', /group \d+ created/))[1];
  await page.selectOption('#group-pkp-group', groupId);
  await page.selectOption('#group-pkp-pkp', pkpId);
  await page.click('#group-pkp-add');
  await statusSays('#groups-status', /added to group/);
  assert.match(await text(`#groups-table tr[data-group-id="${groupId}"]`), new RegExp(pkpId));

  await open('actions');
  await page.fill('#action-code', ACTION);
  await page.fill('#action-name', 'greeter');
  await page.selectOption('#action-group', groupId);
  await page.click('#action-register');
  await statusSays('#actions-status', /registered .* and added to group/);
  cid = await text('#action-cid-out');
  const expected = await stack.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(ACTION) });
  assert.equal(cid, expected.json);
  await page.locator(`#actions-table tr[data-hashed-cid="${keccakText(cid)}"]`).waitFor();
  // The service's own view: the group lists the PKP and the CID's hash.
  const groups = await stack.request('GET', 'list_groups', { key: ownerKey });
  const g = groups.json.find((x) => String(x.id) === groupId);
  assert.deepEqual(g.cid_hashes_permitted.map((h) => h.toLowerCase()), [keccakText(cid)]);

  await open('run');
  await page.selectOption('#run-pkp', pkpId);
  await page.fill('#run-params', '{"name": "dash"}');
  await page.click('#run-submit');
  await statusSays('#run-status', /the action ran$/);
  assert.deepEqual(JSON.parse(await text('#run-response')), { greeting: 'hello dash' });
  assert.match(await text('#run-logs'), /hi dash/);
  assert.equal(await text('#run-error'), 'none');
  assert.match(await text('#run-time'), /^\d+ ms/);
  assert.match(await text('#run-cost'), /^[1-9]\d* cents \(balance \d+ -> \d+;/);

  // Params that are not JSON are refused in the page; nothing is sent.
  await page.fill('#run-params', '{name: dash}');
  await page.click('#run-submit');
  await page.locator('#run-status.error').waitFor();
  assert.match(await text('#run-status'), /^params are not JSON: /);
  assert.equal(await text('#run-response'), '');

  // By CID: the service fetches the code from its gateway (scripts/ipfs-add's folder on a dev stack).
  writeFileSync(join(stack.gatewayDir, cid), ACTION);
  await page.check('#run-source-cid');
  await page.fill('#run-cid', cid);
  await page.fill('#run-params', '{"name": "by cid"}');
  await page.click('#run-submit');
  await statusSays('#run-status', /the action ran$/);
  assert.deepEqual(JSON.parse(await text('#run-response')), { greeting: 'hello by cid' });
  await page.check('#run-source-code');

  // Code that throws ran all the same: a 200 with the error shown.
  await page.fill('#run-params', '{"name": "dash", "fail": true}');
  await page.click('#run-submit');
  await statusSays('#run-status', /ran and failed/);
  assert.match(await text('#run-error'), /script_error: .*boom/);

  // Code no group lists is refused before it runs, and the page says why.
  await open('actions');
  await page.fill('#action-code', 'async function main() { return 1; }');
  await open('run');
  await page.click('#run-submit');
  await page.locator('#run-status.error').waitFor();
  assert.match(await text('#run-status'), /^HTTP 403 not_authorized: no group on which this key may execute lists both action Qm\w+ and PKP 0x[0-9a-f]{40} \(request id [0-9a-f-]{36}\)$/);
  assert.deepEqual(pageErrors.filter((e) => !/Failed to load resource/.test(e)), [], 'no script errors in the page');
});

let usageKey;

test('keys page: a new usage key with scopes ticked as checkboxes, listed by hash, and it runs the action', async () => {
  await open('keys');
  await page.fill('#key-name', 'runner');
  await page.check(`#key-add-scopes input[name="execute_in_groups:${groupId}"]`);
  await page.click('#key-add');
  await statusSays('#keys-status', /key created/);
  usageKey = await text('#key-new-value');
  const hash = keccakText(usageKey);
  const row = page.locator(`#keys-table tr[data-key-hash="${hash}"]`);
  await row.waitFor();
  assert.equal(await row.locator(`input[name="execute_in_groups:${groupId}"]`).isChecked(), true);
  assert.equal(await row.locator('input[name="can_create_groups"]').isChecked(), false);
  assert.equal(await row.locator('input[name="execute_in_groups:0"]').isChecked(), false);
  const listed = await stack.request('GET', 'list_api_keys', { key: ownerKey });
  assert.deepEqual(listed.json.find((k) => k.api_key_hash === hash).can_execute_in_groups.map(String), [groupId]);

  // Signed in with the usage key, the run page runs the registered action by its code.
  await page.click('#sign-out');
  await signIn(usageKey, /usage key/);
  assert.equal(await page.locator('#nav a[data-page="keys"]').isVisible(), false, 'a usage key gets no keys page');
  await open('actions');
  await page.fill('#action-code', ACTION);
  await open('run');
  await page.selectOption('#run-pkp', pkpId);
  await page.fill('#run-params', '{"name": "usage"}');
  await page.click('#run-submit');
  await statusSays('#run-status', /the action ran$/);
  assert.deepEqual(JSON.parse(await text('#run-response')), { greeting: 'hello usage' });
});

test('keys page: a key\'s guardrails read, saved and cleared by its hash (issue 26)', async () => {
  await page.click('#sign-out');
  await signIn(ownerKey, /account key/);
  await open('keys');
  const hash = keccakText(usageKey);
  const row = page.locator(`#keys-table tr[data-key-hash="${hash}"]`);
  await row.locator('details.guardrails summary').click();
  await statusSays('#keys-status', /guardrails of runner read/);
  assert.equal(await row.locator('input[name="max_runs_in_flight"]').inputValue(), '');
  await row.locator('input[name="max_runs_in_flight"]').fill('3');
  await row.locator('input[name="spend_cap_cents"]').fill('500');
  await row.locator('input[name="allowed_origins"]').fill('https://app.example, http://127.0.0.1:3000');
  await row.locator('button.guardrails-save').click();
  await statusSays('#keys-status', /guardrails of runner saved/);
  let got = await stack.request('GET', 'get_usage_api_key_guardrails', { key: ownerKey, query: { usage_api_key: hash } });
  assert.equal(got.json.set, true);
  assert.equal(got.json.max_runs_in_flight, 3);
  assert.equal(got.json.spend_cap_cents, 500);
  assert.deepEqual(got.json.allowed_origins, ['https://app.example', 'http://127.0.0.1:3000']);
  // What the service answered is what the form shows (the default window filled in).
  assert.equal(await row.locator('input[name="spend_window_seconds"]').inputValue(), '86400');
  await row.locator('button.guardrails-clear').click();
  await statusSays('#keys-status', /guardrails of runner cleared/);
  got = await stack.request('GET', 'get_usage_api_key_guardrails', { key: ownerKey, query: { usage_api_key: hash } });
  assert.equal(got.json.set, false);
  assert.equal(await row.locator('input[name="max_runs_in_flight"]').inputValue(), '');
});

// Needs update_usage_api_key / remove_usage_api_key to take the key's hash (compat's commit "api: usage
// keys by hash"): the dashboard never has a key's value after creating it.
test('keys page: scopes saved and the key revoked by its hash', async () => {
  await page.click('#sign-out');
  await signIn(ownerKey, /account key/);
  await open('keys');
  const hash = keccakText(usageKey);
  const row = page.locator(`#keys-table tr[data-key-hash="${hash}"]`);
  await row.locator('input[name="can_create_pkps"]').check();
  await row.locator('button.key-save').click();
  await statusSays('#keys-status', /scopes of runner saved/);
  let listed = await stack.request('GET', 'list_api_keys', { key: ownerKey });
  assert.equal(listed.json.find((k) => k.api_key_hash === hash).can_create_pkps, true);
  page.once('dialog', (d) => d.accept());
  await row.locator('button.key-revoke').click();
  await statusSays('#keys-status', /revoked/);
  listed = await stack.request('GET', 'list_api_keys', { key: ownerKey });
  assert.equal(listed.json.some((k) => k.api_key_hash === hash), false);
  const run = await stack.request('POST', 'sigil_action', { key: usageKey, body: { code: ACTION, pkp_id: pkpId, js_params: { name: 'x' } } });
  assert.equal(run.status, 401);
});

// Waits for the wallet preview dialog and checks it names everything in `wants`.
async function previewSays(...wants) {
  const dialog = page.locator('#wallet-preview[open]');
  await dialog.waitFor();
  const shown = await dialog.innerText();
  for (const want of wants) assert.match(shown, want);
  return shown;
}

// Presses Sign in the preview after checking it names everything in `wants`.
async function approve(...wants) {
  await previewSays(...wants);
  await page.click('#wallet-preview-sign');
}

test('wallet sign-in: a ChainSecured account created and run through the direct path, every transaction and signature previewed decoded first', async () => {
  await page.click('#sign-out');
  await page.click('#signin-wallet');
  await page.locator('#wallet-no-account').waitFor({ state: 'visible' });
  assert.match(await text('#whoami'), new RegExp(`Wallet ${testWallet.address} connected`));

  // Rejected in the preview: nothing reaches the chain.
  const nonce = await testWallet.provider.getTransactionCount(testWallet.address);
  await page.click('#create-chain-secured');
  await previewSays(/newChainSecuredAccount\(\)/, /AccountConfig/);
  await page.click('#wallet-preview-reject');
  await page.waitForFunction(() => /rejected/.test(document.querySelector('#signin-status').textContent));
  assert.equal(await testWallet.provider.getTransactionCount(testWallet.address), nonce);

  await page.click('#create-chain-secured');
  await approve(/newChainSecuredAccount\(\)/);
  await page.waitForFunction(() => /admin of the ChainSecured account 0x[0-9a-f]{64}/.test(document.querySelector('#whoami').textContent));

  // A PKP: the service mints it for a CreateWallet signature, the wallet registers it on chain.
  await open('pkps');
  await page.fill('#pkp-name', 'wallet pkp');
  await page.click('#pkp-add');
  await approve(/CreateWallet/, /Sigil ChainSecured v1/);
  await approve(/registerWalletDerivation\(uint256,address,uint256,string,string\)/, /wallet pkp/);
  const walletPkp = /0x[0-9a-f]{40}/.exec(await statusSays('#pkps-status', /PKP 0x[0-9a-f]{40} created/))[0];
  await page.locator(`#pkps-table tr[data-pkp-id="${walletPkp}"]`).waitFor();

  await open('groups');
  await page.fill('#group-name', 'wallet group');
  await page.click('#group-add');
  await approve(/addGroup\(/, /wallet group/);
  const walletGroup = /group (\d+) created/.exec(await statusSays('#groups-status', /group \d+ created/))[1];
  await page.selectOption('#group-pkp-group', walletGroup);
  await page.selectOption('#group-pkp-pkp', walletPkp);
  await page.click('#group-pkp-add');
  await approve(/addPkpToGroup\(/);
  await statusSays('#groups-status', /added to group/);

  await open('actions');
  await page.fill('#action-code', ACTION);
  await page.fill('#action-name', 'wallet greeter');
  await page.selectOption('#action-group', walletGroup);
  await page.click('#action-register');
  await approve(/addAction\(/, new RegExp(keccakText(cid)));
  await approve(/addActionToGroup\(/);
  await statusSays('#actions-status', /registered .* and added to group/);

  // A usage key: minted for an AddUsageApiKey signature, registered and given its scopes by the wallet.
  await open('keys');
  await page.fill('#key-name', 'wallet runner');
  await page.check(`#key-add-scopes input[name="execute_in_groups:${walletGroup}"]`);
  await page.click('#key-add');
  await approve(/AddUsageApiKey/);
  await approve(/registerWalletDerivation\(/);
  await approve(/setUsageApiKey\(/, /wallet runner/);
  await statusSays('#keys-status', /key created/);
  const walletKey = await text('#key-new-value');
  const row = page.locator(`#keys-table tr[data-key-hash="${keccakText(walletKey)}"]`);
  await row.waitFor();
  assert.equal(await row.locator(`input[name="execute_in_groups:${walletGroup}"]`).isChecked(), true);

  // Billing: the balance needs a BillingAuth signature; credits are bought with the wallet's tokens.
  await open('billing');
  await approve(/BillingAuth/, /Sigil ChainSecured v1/);
  await page.waitForFunction(() => /cents/.test(document.querySelector('#billing-balance').textContent));
  assert.match(await text('#billing-balance'), /\(0 cents\)/);
  // The prices payments_config publishes (cli's "billing: ... prices"), as the page words them.
  const { prices } = (await stack.request('GET', 'billing/payments_config')).json;
  assert.equal(await text('#billing-prices'), `${prices.write_cents} cents per relayed write; ${prices.run_second_cents} cents per started second of a run`);
  await page.fill('#billing-amount', '500');
  // Escape on the preview rejects too (the dialog's cancel), from the keyboard alone.
  await page.click('#billing-mint');
  await previewSays(/mint\(address,uint256\)/);
  await page.keyboard.press('Escape');
  await page.locator('#billing-status.error').waitFor();
  assert.match(await text('#billing-status'), /rejected; nothing was sent/);
  await page.click('#billing-mint');
  await approve(/mint\(address,uint256\)/, /payment token/);
  await statusSays('#billing-status', /minted 5\.0 tokens/);
  await page.click('#billing-buy');
  const approval = await previewSays(/approve\(address,uint256\)/, /5\.0 tokens/);
  assert.match(approval, new RegExp(stack.payments, 'i'));
  await page.click('#wallet-preview-sign');
  await approve(/pay\(bytes32,uint256\)/, /Payments/);
  await statusSays('#billing-status', /credited 500 cents; balance 500 cents/);
  assert.match(await text('#billing-balance'), /\(500 cents\)/);

  // The wallet switching account ends its sign-in: its signer would sign for another account.
  await page.evaluate(() => window.ethereum.emit('accountsChanged', ['0x0000000000000000000000000000000000000001']));
  await page.waitForFunction(() => document.querySelector('#whoami').textContent === 'Not signed in.');
  assert.match(await text('#signin-status'), /the wallet changed account or network: sign in again/);

  // The wallet's usage key runs the action on the wallet's PKP.
  await signIn(walletKey, /usage key/);
  await open('actions');
  await page.fill('#action-code', ACTION);
  await open('run');
  await page.selectOption('#run-pkp', walletPkp);
  await page.fill('#run-params', '{"name": "wallet"}');
  await page.click('#run-submit');
  await statusSays('#run-status', /the action ran$/);
  assert.deepEqual(JSON.parse(await text('#run-response')), { greeting: 'hello wallet' });
  assert.match(await text('#run-cost'), /^[1-9]\d* cents \(balance 500 -> \d+;/);
});

test('the SDK works in the browser with its default fetch (a page\'s own script, through the import map)', async () => {
  const answer = await page.evaluate(async () => {
    const { SigilClient } = await import('@sigil/sdk');
    return new SigilClient({ baseUrl: window.location.origin }).version();
  });
  assert.equal(typeof answer.version, 'string');
});

test('the preview names a transaction to a contract it does not know as such, with its raw data', async () => {
  const shown = await page.evaluate(async () => {
    const { describeTransaction } = await import('/dashboard/wallet.js');
    return describeTransaction({ to: '0x00000000000000000000000000000000000000aa', data: '0xdeadbeef', value: '0x0' }, []);
  });
  assert.equal(shown.decoded, false);
  assert.deepEqual(shown.rows.map(([k]) => k), ['from', 'to', 'value', 'data (not decoded)']);
  assert.match(shown.rows[1][1], /not a contract this dashboard knows/);
  assert.equal(shown.rows[3][1], '0xdeadbeef');
});

test('attestation page: the rules a browser can check, and why the others are not', async () => {
  await open('attestation');
  await page.click('#attestation-run');
  await page.locator('#attestation-table tr[data-rule="8"]').waitFor();
  // This stack runs without a TEE: /info answers 503, and rule 6 needs the certificate's bytes.
  assert.match(await text('#attestation-table tr[data-rule="2"]'), /not checked.*503/s);
  assert.match(await text('#attestation-table tr[data-rule="6"]'), /not checked.*TLS certificate/s);
  assertOk(await stack.request('GET', '/health'));
});
