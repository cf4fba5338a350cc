// The build's one way of patching pinned npm files (workers/sandbox/build/npm_patch.mjs): a patch
// whose old text does not occur exactly as often as it says stops the build, naming the file and
// the patch; every list in build/patches/ applies to the pinned packages. Run by ctest as
// build_npm_patch; it needs node_modules, not a build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = process.env.SIGIL_SOURCE_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOOL = join(ROOT, 'workers/sandbox/build/npm_patch.mjs');
const { loadPatches, patchText, resolvePatchedFile } = await import(TOOL);
const FILE = 'regenerate/regenerate.js';

function run(entries) {
  const dir = mkdtempSync(join(tmpdir(), 'npm-patch-'));
  try {
    const list = join(dir, 'list.mjs');
    writeFileSync(list, `export default ${entries};\n`);
    const out = join(dir, 'out.js');
    const r = spawnSync(process.execPath, [TOOL, list, out], { encoding: 'utf8' });
    let text = null;
    try { text = readFileSync(out, 'utf8'); } catch { /* not written */ }
    return { status: r.status, stderr: r.stderr, text };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a patch applies its new text where the old text was', () => {
  const r = run(`[{ file: '${FILE}', why: 'demo', old: 'destination[key] = source[key];', new: '/*patched*/' }]`);
  assert.equal(r.status, 0, r.stderr);
  const original = readFileSync(resolvePatchedFile(FILE), 'utf8');
  assert.equal(r.text, original.replace('destination[key] = source[key];', '/*patched*/'));
});

test('old text that is missing, or there more often than counted, fails loudly and writes nothing', () => {
  const missing = run(`[{ file: '${FILE}', why: 'gone', old: 'this text is not in regenerate', new: 'x' }]`);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /patch "gone" matches .*regenerate\.js 0 times, not 1/);
  assert.equal(missing.text, null);
  const twice = run(`[{ file: '${FILE}', why: 'twice', old: 'function', new: 'x' }]`);
  assert.equal(twice.status, 1);
  assert.match(twice.stderr, /patch "twice" matches .* times, not 1/);
  const regexp = run(`[{ file: '${FILE}', why: 'counted', old: /var /g, new: 'let ', count: 1 }]`);
  assert.equal(regexp.status, 1);
  assert.match(regexp.stderr, /patch "counted" matches .* times, not 1/);
});

test('every list in build/patches applies to the pinned packages', async () => {
  const dir = join(ROOT, 'workers/sandbox/build/patches');
  const lists = readdirSync(dir).filter((n) => n.endsWith('.mjs'));
  assert.deepEqual(lists.sort(), ['buble.mjs', 'ethers5.mjs', 'regexpu.mjs', 'web_packages.mjs']);
  for (const name of lists) {
    const entries = await loadPatches(join(dir, name));
    for (const file of new Set(entries.map((e) => e.file))) {
      const path = resolvePatchedFile(file);
      const before = readFileSync(path, 'utf8');
      const after = patchText(before, entries.filter((e) => e.file === file), path);
      assert.notEqual(after, before, `${name}: ${file}`);
    }
  }
});
