// The layout table (docs/layout.json) for the layout checks, and docs/layout.md made from it.
//   node tests/layout/layout.mjs --write   rewrites docs/layout.md's table from docs/layout.json
// includes.test.mjs checks every #include against it, links.test.mjs every target's link
// libraries, and layout_doc.test.mjs that docs/layout.md shows what it says.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = process.env.SIGIL_SOURCE_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const TABLE = JSON.parse(readFileSync(join(ROOT, 'docs/layout.json'), 'utf8'));

// Zones, most specific first: a file belongs to the first zone whose folder holds it.
export const ZONES = TABLE.zones;

export function zoneOf(path) {
  return ZONES.find((z) => path === z.zone || path.startsWith(z.zone + '/'));
}

// Whether `target` (a path) is `entry` (a single header) or lies in it (a folder).
export function within(target, entry) {
  return entry.endsWith('.h') ? target === entry : target.startsWith(entry + '/');
}

const BEGIN = '<!-- layout table: generated from docs/layout.json by tests/layout/layout.mjs; do not edit -->';
const END = '<!-- end of layout table -->';

const code = (s) => '`' + s + '`';

/// The Markdown table docs/layout.md shows between its markers.
export function renderTable() {
  const rows = ZONES.map((z) => {
    const uses = z.uses.length ? z.uses.map(code).join(', ') : 'nothing';
    const third = [...(z.system ?? []), ...(z.libraries ?? [])].map(code).join(', ');
    const why = z.why ? `: ${z.why}` : '';
    return `| ${code(z.zone + '/')} | ${z.what} | ${uses}${why} | ${third || '-'} | ${z.targets.map(code).join(', ')} |`;
  });
  return [BEGIN,
    '| folder (zone) | what | may use | third-party headers and libraries of its own | CMake targets |',
    '|---|---|---|---|---|', ...rows, END].join('\n');
}

/// docs/layout.md's text with its table replaced by renderTable().
export function renderDoc(text) {
  const at = text.indexOf(BEGIN), end = text.indexOf(END);
  if (at < 0 || end < at) throw new Error('docs/layout.md: the layout table markers are missing');
  return text.slice(0, at) + renderTable() + text.slice(end + END.length);
}

if (process.argv[2] === '--write') {
  const path = join(ROOT, 'docs/layout.md');
  writeFileSync(path, renderDoc(readFileSync(path, 'utf8')));
}
