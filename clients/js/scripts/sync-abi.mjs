// Copies the compiled AccountConfig ABI from a build into the package (abi/AccountConfig.json), so the
// SDK ships the ABI of the contract it talks to. test/abi.test.mjs fails when the two differ.
//   node scripts/sync-abi.mjs [BUILD_DIR]      (default: SIGIL_BUILD_DIR, else <repo>/build)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const buildDir = process.argv[2] ?? process.env.SIGIL_BUILD_DIR ?? resolve(here, '../../../build');
const abi = JSON.parse(readFileSync(join(buildDir, 'contracts/AccountConfig.abi.json'), 'utf8'));
const out = join(here, '../abi/AccountConfig.json');
writeFileSync(out, `${JSON.stringify(abi, null, 2)}\n`);
console.log(`wrote ${out} (${abi.length} entries) from ${buildDir}`);
