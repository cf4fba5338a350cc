// docs/layout.md shows the layout table docs/layout.json holds (tests/layout/layout.mjs renders
// it): a table edited in one place and not the other fails here. Run by ctest as layout_doc.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, ZONES, renderDoc, renderTable } from './layout.mjs';

test('docs/layout.md\'s table is the one docs/layout.json gives', () => {
  const text = readFileSync(join(ROOT, 'docs/layout.md'), 'utf8');
  assert.equal(text, renderDoc(text), 'run: node tests/layout/layout.mjs --write');
});

test('the table names every zone with its edges, and an edit shows', () => {
  const table = renderTable();
  for (const z of ZONES) assert.ok(table.includes(`| \`${z.zone}/\` |`), z.zone);
  assert.ok(table.includes('`sigil-lowerer`'));
  const text = readFileSync(join(ROOT, 'docs/layout.md'), 'utf8');
  const edited = text.replace('`evidence/agent/agent_http.h`', '`evidence/agent`');
  assert.notEqual(edited, text);
  assert.notEqual(renderDoc(edited), edited);
});
