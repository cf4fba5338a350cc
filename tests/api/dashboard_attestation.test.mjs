// The dashboard's attestation page in a real browser against a stack with the simulated TEE
// (sigil-tee-sim) and the evidence set sigil-evidence wrote: rules 2, 3 and 5 computed in the page with
// WebCrypto, rule 8 read from the governance contract through the (injected, test-only) wallet, the
// others named as out of a page's reach; an evidence file changed after the quote fails rule 5.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, ethers } from './stack.mjs';
import { openBrowser } from './browser.mjs';

let stack;
let browser;

before(async () => {
  stack = await startStack({ workers: 2, teeSim: true });
  const provider = new ethers.JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
  browser = await openBrowser({ wallet: ethers.Wallet.createRandom().connect(provider) });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function checkRules() {
  const { page } = browser;
  await page.click('#attestation-run');
  await page.waitForFunction(() => document.querySelector('#attestation-run').getAttribute('aria-busy') === null
    && document.querySelectorAll('#attestation-table tbody tr').length === 8);
  const rows = {};
  for (let r = 1; r <= 8; r += 1) {
    const cells = await page.locator(`#attestation-table tr[data-rule="${r}"] td`).allInnerTexts();
    rows[r] = { status: cells[1], detail: cells[2] };
  }
  return rows;
}

test('without signing in, the page checks rules 2, 3, 5 and 8 of the simulated deployment and names the rest', async () => {
  const { page } = browser;
  await page.goto(`${stack.url}/dashboard/#attestation`);
  await page.locator('#page-attestation').waitFor({ state: 'visible' });
  const rows = await checkRules();
  assert.equal(rows[2].status, 'pass', rows[2].detail);
  assert.ok(rows[2].detail.includes(stack.composeHash.replace(/^0x/, '')), rows[2].detail);
  assert.equal(rows[3].status, 'pass', rows[3].detail);
  assert.equal(rows[5].status, 'pass', rows[5].detail);
  assert.equal(rows[8].status, 'pass', rows[8].detail);
  for (const r of [1, 4, 6, 7]) {
    assert.equal(rows[r].status, 'not checked', `rule ${r}`);
    assert.match(rows[r].detail, /sigil-verify/);
  }
  assert.deepEqual(browser.pageErrors, []);
});

test('an evidence file changed after the quote fails rule 5 in the browser', async () => {
  appendFileSync(join(stack.evidenceDir, 'acme-account.json'), ' ');
  const rows = await checkRules();
  assert.equal(rows[5].status, 'fail');
  assert.match(rows[5].detail, /acme-account\.json: served SHA-256 [0-9a-f]{64}, sha256sum\.txt says/);
  assert.match(await browser.page.locator('#attestation-status').innerText(), /1 rule\(s\) failed/);
});
