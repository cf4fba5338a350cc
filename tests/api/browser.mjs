// Shared by the dashboard's browser tests (not a test): Debian's chromium driven headless by
// playwright-core in a fresh profile, trusting the stack's self-signed certificate, with an optional
// test-only EIP-1193 wallet: window.ethereum in every page, whose requests this process answers with an
// ethers Wallet on the stack's anvil (accounts, transactions, eth_signTypedData_v4; reads go to anvil).
//
//   const browser = await openBrowser({wallet});   // wallet: an ethers Wallet with a provider, or null
//   browser.page, browser.context, browser.pageErrors (uncaught errors and console errors of the page)
//   await browser.close()
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SOURCE_DIR } from './stack.mjs';

const require = createRequire(join(SOURCE_DIR, 'package.json'));
const { chromium } = require('playwright-core');

export const CHROMIUM = process.env.SIGIL_CHROMIUM ?? '/usr/bin/chromium';

// The wallet's side of EIP-1193, for the injected provider.
function walletBackend(wallet) {
  return async (method, params) => {
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [wallet.address];
      case 'eth_sendTransaction': {
        const tx = params[0];
        const sent = await wallet.sendTransaction({
          to: tx.to, data: tx.data, value: BigInt(tx.value ?? 0), gasLimit: tx.gas ? BigInt(tx.gas) : undefined,
        });
        return sent.hash;
      }
      case 'eth_signTypedData_v4': {
        const td = JSON.parse(params[1]);
        const { EIP712Domain, ...types } = td.types;
        return wallet.signTypedData(td.domain, types, td.message);
      }
      default:
        return wallet.provider.send(method, params);
    }
  };
}

export async function openBrowser({ wallet = null } = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (scripts/setup installs it)`);
  const userDataDir = mkdtempSync(join(tmpdir(), 'sigil-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    ignoreHTTPSErrors: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  if (wallet) {
    await context.exposeFunction('__sigilTestWallet', walletBackend(wallet));
    await context.addInitScript(() => {
      // Listeners are kept, so a test can play the wallet switching account: ethereum.emit(name, value).
      const listeners = new Map();
      window.ethereum = {
        request: ({ method, params }) => window.__sigilTestWallet(method, params ?? []),
        on(name, fn) { listeners.set(name, [...(listeners.get(name) ?? []), fn]); },
        removeListener(name, fn) { listeners.set(name, (listeners.get(name) ?? []).filter((f) => f !== fn)); },
        emit(name, value) { for (const fn of listeners.get(name) ?? []) fn(value); },
      };
    });
  }
  const page = context.pages()[0] ?? await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
  page.setDefaultTimeout(30000);
  return {
    context, page, pageErrors,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
