// Compiles contracts/*.sol with the pinned solc-js (standard JSON) and writes, for each contract,
// <out dir>/<Name>.abi.json and <out dir>/<Name>.bin (deployment bytecode, hex without 0x).
// Usage: node contracts/compile.mjs <out dir>
// Exit status 1 with solc's messages on stderr on any compile error; warnings are printed too.
import { mkdirSync, readFileSync, readdirSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', 'package.json'));
const solc = require('solc');

const PINNED_SOLC = '0.8.37';
// EIP-170: a contract above this size cannot be deployed on a real chain.
const MAX_RUNTIME_BYTES = 24576;

function main() {
  const outDir = process.argv[2];
  if (!outDir) {
    console.error('usage: node contracts/compile.mjs <out dir>');
    process.exit(2);
  }
  if (!solc.version().startsWith(PINNED_SOLC)) {
    console.error(`compile.mjs: solc ${solc.version()} found, ${PINNED_SOLC} pinned`);
    process.exit(1);
  }

  const sources = {};
  for (const file of readdirSync(here).filter((f) => f.endsWith('.sol')).sort()) {
    sources[file] = { content: readFileSync(join(here, file), 'utf8') };
  }
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      // viaIR: setUsageApiKey's flat parameter list is too deep for the legacy code generator.
      viaIR: true,
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };

  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  let failed = false;
  for (const msg of output.errors ?? []) {
    console.error(msg.formattedMessage ?? msg.message);
    if (msg.severity === 'error') failed = true;
  }
  if (failed) process.exit(1);

  mkdirSync(resolve(outDir), { recursive: true });
  for (const file of Object.keys(output.contracts ?? {})) {
    for (const [name, artifact] of Object.entries(output.contracts[file])) {
      const runtimeBytes = artifact.evm.deployedBytecode.object.length / 2;
      if (runtimeBytes > MAX_RUNTIME_BYTES) {
        console.error(`compile.mjs: ${name} runtime is ${runtimeBytes} bytes, over the EIP-170 limit`);
        process.exit(1);
      }
      // Write then rename so a reader (or make) never sees a half-written artifact.
      writeAtomically(join(outDir, `${name}.abi.json`), JSON.stringify(artifact.abi, null, 2) + '\n');
      writeAtomically(join(outDir, `${name}.bin`), artifact.evm.bytecode.object + '\n');
      console.log(`compile.mjs: ${name}: runtime ${runtimeBytes} bytes`);
    }
  }
}

function writeAtomically(path, text) {
  const tmp = `${path}.tmp${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

main();
