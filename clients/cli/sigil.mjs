#!/usr/bin/env node
// sigil: the command-line tool of Sigil, on the SDK in clients/js. `sigil --help` lists the
// commands; `sigil COMMAND --help` explains one. Settings come from flags, the environment, a
// profile (src/profile.js) or the development stack of this checkout.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { main } from './src/main.js';

if (realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  process.exitCode = await main(process.argv.slice(2));
}
