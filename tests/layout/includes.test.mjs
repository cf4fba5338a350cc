// The layout check (docs/layout.json; DESIGN.md section 1, "Layout"): every #include in the
// sources must follow an allowed edge between trust zones, so that, say, sandbox code can never
// reach libcurl or the chain client. Run by ctest as layout_includes; it reads the files and needs
// no build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, ZONES, zoneOf, within } from './layout.mjs';

// The table is docs/layout.json (layout.mjs reads it): per zone, `uses` lists the zones (folders)
// or single headers it may include besides its own zone; `system` lists the third-party headers
// only this zone may include.
const ZONED_SYSTEM = ZONES.flatMap((z) => z.system ?? []);

function sources(dir) {
  const out = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...sources(rel));
    else if (/\.(h|hpp|c|cc|cpp)$/.test(name)) out.push(rel);
  }
  return out;
}

// Every violation in the tree, as "file:line: message" strings.
export function violations() {
  const found = [];
  const folders = ['common', 'keyd', 'supervisor', 'workers', 'lowerer', 'evidence'].filter((d) => {
    try { return statSync(join(ROOT, d)).isDirectory(); } catch { return false; }
  });
  for (const file of folders.flatMap(sources)) {
    const z = zoneOf(file);
    if (!z) { found.push(`${file}: in no zone of the layout table`); continue; }
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = line.match(/^\s*#\s*include\s*([<"])([^>"]+)[>"]/);
      if (!m) return;
      const [, kind, target] = m;
      const where = `${file}:${i + 1}`;
      if (kind === '"' && !target.startsWith('/')) {
        const own = within(target, z.zone) && zoneOf(target) === z;
        if (own || z.uses.some((u) => within(target, u))) return;
        // A header beside the file that is not under the repo root form is a local include.
        if (!target.includes('/')) { found.push(`${where}: write "${target}" from the repo root`); return; }
        found.push(`${where}: ${z.zone} may not include "${target}"`);
      } else {
        const zoned = ZONED_SYSTEM.filter((s) => target === s || (s.endsWith('/') && target.startsWith(s)));
        if (zoned.length && !(z.system ?? []).some((s) => zoned.includes(s))) {
          found.push(`${where}: ${z.zone} may not include <${target}>`);
        }
      }
    });
  }
  return found;
}

test('every #include follows an allowed edge of the layout table', () => {
  assert.deepEqual(violations(), []);
});

test('the check catches a forbidden edge (sandbox -> chain) and a forbidden library (sandbox -> curl)', () => {
  const z = zoneOf('workers/sandbox/child.cpp');
  assert.equal(z.zone, 'workers/sandbox');
  assert.ok(!z.uses.some((u) => within('workers/chain/rpc_client.h', u)));
  assert.ok(!(z.system ?? []).includes('curl/'));
  assert.equal(zoneOf('keyd/client/keyd_client.h').zone, 'keyd/client');
  assert.equal(zoneOf('workers/worker_main.cpp').zone, 'workers');
});

test('actions reaches the sandbox only through its protocol library; the sandbox only common and that', () => {
  const actions = zoneOf('workers/actions/sandbox_host.cpp');
  for (const header of ['workers/sandbox/zygote.h', 'workers/sandbox/child.h', 'workers/sandbox/transpiler.h',
                        'workers/sandbox/natives/crypto.h']) {
    assert.ok(!actions.uses.some((u) => within(header, u)), header);
  }
  assert.ok(actions.uses.some((u) => within('workers/sandbox/protocol/control.h', u)));
  assert.equal(zoneOf('workers/sandbox/protocol/control.h').zone, 'workers/sandbox/protocol');
  assert.deepEqual(zoneOf('workers/sandbox/protocol/protocol.cpp').uses, ['common']);
  const sandbox = zoneOf('workers/sandbox/zygote.cpp');
  assert.deepEqual(sandbox.uses, ['common', 'workers/sandbox/protocol']);
  assert.equal(zoneOf('workers/sandbox/natives/web_crypto.cpp'), sandbox);
});

test('every folder the table names exists', () => {
  for (const { zone } of ZONES) {
    assert.ok(statSync(join(ROOT, zone)).isDirectory(), `${zone} is missing`);
  }
});
