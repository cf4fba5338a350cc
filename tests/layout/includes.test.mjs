// The layout check (DESIGN.md section 1, "Layout"): every #include in the sources must follow an
// allowed edge between trust zones, so that, say, sandbox code can never reach libcurl or the chain
// client. Run by ctest as layout_includes; it reads the files and needs no build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = process.env.SIGIL_SOURCE_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// Zones, most specific first: a file belongs to the first zone whose folder holds it.
// `uses` lists the zones (folders) or single headers it may include besides its own zone;
// `system` lists the third-party headers only this zone may include.
export const ZONES = [
  // The client speaks keyd's message codecs, which live beside protocol.md (keyd/protocol.h and the
  // receipts' keyd/receipt_protocol.h).
  { zone: 'keyd/client', uses: ['common', 'keyd/protocol.h', 'keyd/receipt_protocol.h'] },
  // keyd's TEE key source asks the guest agent for GetKey over the agent's one transport.
  { zone: 'keyd', uses: ['common', 'evidence/agent/agent_http.h'] },
  { zone: 'supervisor', uses: ['common'] },
  // fcgi turns FastCGI records into the HTTP model and hands them to the router: it needs http.
  { zone: 'workers/fcgi', uses: ['common', 'workers/http'], system: ['fcgiapp.h', 'fcgi_stdio.h', 'fastcgi.h'] },
  { zone: 'workers/http', uses: ['common'] },
  { zone: 'workers/chain', uses: ['common', 'keyd/client'], system: ['curl/'] },
  { zone: 'workers/billing', uses: ['common', 'workers/chain', 'keyd/client'], system: ['sqlite3.h', 'libpq-fe.h', 'curl/'] },
  // actions hosts the sandbox zygote, a separate executable: it speaks only the protocol headers
  // (and reads the runtime's level, constants of the protocol library, for get_action_client_config,
  // and the lowered text's import header, sans-IO in the protocol library too).
  { zone: 'workers/actions', uses: ['common', 'workers/chain', 'keyd/client', 'workers/sandbox/protocol/protocol.h',
                                    'workers/sandbox/protocol/control.h', 'workers/sandbox/protocol/runtime_level.h',
                                    'workers/sandbox/protocol/import_header.h'], system: ['curl/'] },
  // api builds a run's receipt request (the receipts' codec, keyd/receipt_protocol.h).
  { zone: 'workers/api', uses: ['common', 'workers/http', 'workers/chain', 'workers/billing', 'workers/actions', 'keyd/client',
                                'evidence/agent', 'keyd/receipt_protocol.h'] },
  { zone: 'workers/sandbox', uses: ['common'], system: ['duktape.h', 'duk_config.h', '/usr/share/duktape/', 'linux/seccomp.h', 'linux/filter.h', 'linux/audit.h'] },
  // worker_main.cpp only wires the zones together.
  { zone: 'workers', uses: ['common', 'keyd/client', 'workers/fcgi', 'workers/http', 'workers/chain', 'workers/billing',
                            'workers/actions', 'workers/api'] },
  // The guest agent's client: the worker's /attestation and /info and sigil-evidence share it.
  { zone: 'evidence/agent', uses: ['common'], system: ['curl/'] },
  // sigil-evidence asks keyd for the receipt key's address (receipt-key.json in the evidence set).
  { zone: 'evidence', uses: ['common', 'evidence/agent', 'keyd/client'] },
  { zone: 'common', uses: [] },
];
const ZONED_SYSTEM = ZONES.flatMap((z) => z.system ?? []);

function zoneOf(path) {
  return ZONES.find((z) => path === z.zone || path.startsWith(z.zone + '/'));
}

function within(target, entry) {
  return entry.endsWith('.h') ? target === entry : target.startsWith(entry + '/');
}

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
  const folders = ['common', 'keyd', 'supervisor', 'workers', 'evidence'].filter((d) => {
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

test('actions reaches the sandbox only through its protocol headers; the sandbox only common', () => {
  const actions = zoneOf('workers/actions/sandbox_host.cpp');
  for (const header of ['workers/sandbox/zygote.h', 'workers/sandbox/child.h', 'workers/sandbox/transpiler.h']) {
    assert.ok(!actions.uses.some((u) => within(header, u)), header);
  }
  assert.ok(actions.uses.some((u) => within('workers/sandbox/protocol/control.h', u)));
  const sandbox = zoneOf('workers/sandbox/zygote.cpp');
  assert.deepEqual(sandbox.uses, ['common']);
});

test('every folder the table names exists', () => {
  for (const { zone } of ZONES) {
    assert.ok(statSync(join(ROOT, zone)).isDirectory(), `${zone} is missing`);
  }
});
