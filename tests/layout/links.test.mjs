// The layout check on the build (docs/layout.json): every product target's sources lie in its
// zone, it links only targets of its own zone or of the zones (and single headers' targets) that
// zone may use, and links only the third-party libraries the table gives that zone, so a CMake
// link line cannot add an edge the include check would refuse. Run by ctest as layout_links on
// the configure step's ${CMAKE_BINARY_DIR}/layout_targets.json (tests/layout/targets.cmake).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TABLE, ZONES, zoneOf, within } from './layout.mjs';

const TARGETS_FILE = process.env.SIGIL_LAYOUT_TARGETS;

// The zone whose `targets` names `target`.
function zoneOfTarget(target) {
  return ZONES.find((z) => z.targets.includes(target));
}

// Every violation in `targets` ({name: {folder, links}}), as strings.
export function linkViolations(targets) {
  const found = [];
  for (const [name, { folder, sources = [], links }] of Object.entries(targets)) {
    const zone = zoneOf(folder) && zoneOfTarget(name);
    if (!zone) { found.push(`${name} (${folder}): in no zone's targets in docs/layout.json`); continue; }
    // Its sources lie in its zone (a target without sources of its own: its CMake folder).
    for (const path of sources.length ? sources : [folder]) {
      if (zoneOf(path) !== zone) found.push(`${name}: ${path} is not in zone ${zone.zone}`);
    }
    for (const link of links) {
      if (link in targets) {
        const to = zoneOfTarget(link);
        if (!to) continue;  // reported as a target of no zone
        const viaHeader = Object.entries(TABLE.header_targets).some(([h, t]) => t === link && zone.uses.includes(h));
        if (to === zone || zone.uses.some((u) => u === to.zone || within(to.zone, u)) || viaHeader) continue;
        found.push(`${name} (${zone.zone}) may not link ${link} (${to.zone})`);
      } else if (!(zone.libraries ?? []).includes(link)) {
        found.push(`${name} (${zone.zone}) may not link the library ${link}`);
      }
    }
  }
  for (const zone of ZONES) {
    for (const t of zone.targets) if (!(t in targets)) found.push(`docs/layout.json names ${t} (${zone.zone}), which the build does not define`);
  }
  return found;
}

test('every target links only along the layout table\'s edges', { skip: !TARGETS_FILE && 'SIGIL_LAYOUT_TARGETS unset (ctest sets it)' }, () => {
  const targets = JSON.parse(readFileSync(TARGETS_FILE, 'utf8'));
  assert.ok(Object.keys(targets).length > 10, 'the configure step listed the targets');
  assert.deepEqual(linkViolations(targets), []);
});

test('the check catches a forbidden link, a forbidden library and a target of no zone', () => {
  const targets = {
    sigil_common: { folder: 'common', links: ['OpenSSL::Crypto'] },
    sigil_chain: { folder: 'workers/chain', links: ['sigil_common', 'CURL::libcurl'] },
    sigil_sandbox_protocol: { folder: 'workers/sandbox', sources: ['workers/sandbox/zygote.cpp'], links: ['sigil_common'] },
    sigil_sandbox: { folder: 'workers/sandbox', links: ['sigil_common', 'sigil_sandbox_protocol', 'sigil_chain', 'CURL::libcurl'] },
    sigil_keyd_protocol: { folder: 'keyd', links: ['sigil_common'] },
    sigil_keyd_client: { folder: 'keyd/client', links: ['sigil_keyd_protocol', 'sigil_common'] },
    sigil_stray: { folder: 'workers', links: [] },
  };
  const found = linkViolations(targets);
  assert.ok(found.includes('sigil_sandbox (workers/sandbox) may not link sigil_chain (workers/chain)'), found.join('\n'));
  assert.ok(found.includes('sigil_sandbox (workers/sandbox) may not link the library CURL::libcurl'), found.join('\n'));
  assert.ok(found.some((f) => f.startsWith('sigil_stray (workers): in no zone')), found.join('\n'));
  // A header edge (keyd/client -> keyd/protocol.h) allows its target; the chain its libcurl.
  assert.ok(!found.some((f) => f.startsWith('sigil_keyd_client ') || f.startsWith('sigil_chain ')), found.join('\n'));
  // A source outside the target's zone is reported.
  assert.ok(found.includes('sigil_sandbox_protocol: workers/sandbox/zygote.cpp is not in zone workers/sandbox/protocol'), found.join('\n'));
});
