// Builds the keychain action (keychain_action.mjs) the way the published keychain bundles are built:
// esbuild (pinned npm) bundles it with zod and noble into one ES2020 script, not minified. The
// script defines `main(params)` as an action does; `params()` gives the fixed inputs the test and the
// benchmark run it on. Node runs the same text (nodeMain) for the reference answer and timing.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
// The repository's node_modules (NODE_PATH under ctest; the worktree's link otherwise).
const require = createRequire(join(here, '..', '..', '..', 'package.json'));

export async function buildKeychainBundle() {
  const esbuild = require('esbuild');
  const result = await esbuild.build({
    entryPoints: [join(here, 'keychain_action.mjs')],
    absWorkingDir: join(here, '..', '..', '..'),
    bundle: true,
    write: false,
    format: 'iife',
    globalName: '__keychain',
    target: 'es2020',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    minify: false,
    // Whole modules, as the published bundles carry them (their size is part of what is measured).
    treeShaking: false,
    legalComments: 'none',
    footer: { js: 'async function main(params) { return __keychain.main(params); }' },
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

export function keychainParams(rounds = 1, curves = undefined) {
  return {
    seed: '0x' + '11'.repeat(16) + '2f'.repeat(16),
    peerSeed: 'a5'.repeat(32),
    message: 'transfer 1.5 ETH to the keychain of alice',
    rounds,
    ...(curves ? { curves } : {}),
  };
}

// The bundle's main in Node (V8's native BigInt, Node's WebCrypto): the reference answer.
export function nodeMain(bundle) {
  return new Function(`${bundle}\nreturn main;`)();
}
