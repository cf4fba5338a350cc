// npm_patch.mjs: the build's one way of patching pinned npm files. A patch list is a module under
// patches/ whose default export is an array of entries
//   { file, why, old, new, count }
//   file   the patched file as a module path from the repo root (e.g. 'buble/dist/buble.umd.js')
//   why    what the patch is for, named when it fails
//   old    the exact text replaced, or a global RegExp (its matches replaced as String.replace does)
//   new    the replacement
//   count  how many times `old` must occur; 1 when left out
// applied in order. When `old` occurs any other number of times the build stops, naming the file
// and the patch: an upgraded package that moved the text fails here instead of running unpatched.
//
// Two uses:
//   import { patchText } from './npm_patch.mjs';   // js_bundle.mjs, ethers_lower.mjs
//   node npm_patch.mjs <patches.mjs> <out.js>      // one file's patched copy (buble)
import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const rootRequire = createRequire(join(here, '..', '..', '..', 'package.json'));

/// The resolved path of an entry's file (node_modules of the repo root).
export function resolvePatchedFile(file) {
  return rootRequire.resolve(file);
}

function Fail(message) {
  console.error(`npm_patch.mjs: ${message}`);
  process.exit(1);
}

/// `text` (the contents of `label`) with every entry of `patches` applied in order.
export function patchText(text, patches, label) {
  for (const p of patches) {
    const expected = p.count ?? 1;
    if (p.old instanceof RegExp) {
      if (!p.old.global) Fail(`patch "${p.why}": a RegExp must be global (/.../g)`);
      const found = text.match(p.old)?.length ?? 0;
      if (found !== expected) Fail(`patch "${p.why}" matches ${label} ${found} times, not ${expected}`);
      text = text.replace(p.old, p.new);
    } else {
      const parts = text.split(p.old);
      if (parts.length - 1 !== expected) Fail(`patch "${p.why}" matches ${label} ${parts.length - 1} times, not ${expected}`);
      text = parts.join(p.new);
    }
  }
  return text;
}

/// A patch list module's entries.
export async function loadPatches(path) {
  const list = (await import(pathToFileURL(resolve(path)).href)).default;
  if (!Array.isArray(list)) Fail(`${path} exports no array of patches`);
  for (const p of list) {
    if (typeof p.file !== 'string' || typeof p.why !== 'string' || typeof p.new !== 'string' ||
        !(typeof p.old === 'string' || p.old instanceof RegExp) || p.old === '') {
      Fail(`${path}: an entry needs file, why, old and new`);
    }
  }
  return list;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [patchesPath, output] = process.argv.slice(2);
  if (!patchesPath || !output) {
    console.error('usage: node npm_patch.mjs <patches.mjs> <out.js>');
    process.exit(2);
  }
  const patches = await loadPatches(patchesPath);
  const files = [...new Set(patches.map((p) => p.file))];
  if (files.length !== 1) Fail(`${patchesPath}: the command line form patches one file, not ${files.length}`);
  const input = resolvePatchedFile(files[0]);
  writeFileSync(output + '.tmp', patchText(readFileSync(input, 'utf8'), patches, input));
  renameSync(output + '.tmp', output);
}
