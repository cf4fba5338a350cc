// The shipped ABI (abi/AccountConfig.json, written by scripts/sync-abi.mjs) is the compiled contract's
// ABI of this build, and has the direct-path functions with the spec's exact parameter lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { ACCOUNT_CONFIG_ABI } from '@sigil/sdk';

const here = dirname(fileURLToPath(import.meta.url));
const buildDir = process.env.SIGIL_BUILD_DIR ?? resolve(here, '../../../build');

test('abi/AccountConfig.json equals the build\'s compiled ABI (run npm run sync-abi after changing the contract)', () => {
  const built = JSON.parse(readFileSync(join(buildDir, 'contracts/AccountConfig.abi.json'), 'utf8'));
  const shipped = JSON.parse(readFileSync(join(here, '../abi/AccountConfig.json'), 'utf8'));
  assert.deepEqual(shipped, built);
  assert.deepEqual(ACCOUNT_CONFIG_ABI, built);
});

test('the direct-path functions have the spec\'s parameter lists', () => {
  const iface = new ethers.Interface(ACCOUNT_CONFIG_ABI);
  for (const sig of [
    'registerWalletDerivation(uint256,address,uint256,string,string)',
    'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,bool,bool,bool,uint256[],uint256[],uint256[],uint256[])',
    'convertToChainSecuredAccount(uint256,address)',
    'newChainSecuredAccount()',
    'transferOwnership(address)',
    'acceptOwnership(uint256)',
  ]) {
    assert.ok(iface.getFunction(sig), sig);
  }
});
