// js_bundle.mjs: joins npm packages written as CommonJS modules into one ES5 script for the
// sandbox heap, at build time (js_embed.cmake then embeds the result). Each module is lowered
// with buble (the same one the sandbox uses for actions) and wrapped in a function keyed by its
// resolved path; require() resolves with Node's own rules from the requiring file. The script
// evaluates to nothing: it calls __sigil_modules_install (globals.js) with a function that
// returns each entry's exports by its name. The free names Buffer (whatwg-url uses a few of its
// members) and __sigil_glue (what patches call) are bound to __sigil_bundle_Buffer and
// __sigil_bundle_glue, which globals.js defines.
//
//   node js_bundle.mjs <out.js> <name>=<module> ... [--alias <builtin>=<module>]
//                      [--patches <patches.mjs>]
//   (a Node builtin a package requires, e.g. punycode, is mapped to an npm module by --alias;
//   --patches names a patch list in npm_patch.mjs's format, applied to the files it names as
//   they are joined: an upgraded package that moved a patched text fails the build instead of
//   running unpatched)
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPatches, patchText, resolvePatchedFile } from './npm_patch.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const rootRequire = createRequire(join(here, '..', '..', '..', 'package.json'));
const buble = rootRequire('buble');
const acorn = rootRequire('acorn');
const MagicString = rootRequire('magic-string');

// buble lowers for-of as an index loop over an array (dangerousForOf) and spread as concat/apply;
// the packages also iterate iterators (tuples.entries()) and spread typed arrays, so the right
// side of every for-of and every spread argument goes through Array.from first. A destructuring
// for-of binding moves into the body (`for (const $of1 of ...) { const [k, v] = $of1; ...`):
// buble 0.20 renames a shadowed name in the body but not in such a binding.
function ArrayFromForOf(source) {
  const ast = acorn.parse(source, { ecmaVersion: 2019, sourceType: 'script', allowHashBang: true });
  const out = new MagicString(source);
  let temps = 0;
  (function walk(node) {
    if (!node || typeof node.type !== 'string') return;
    if (node.type === 'ForOfStatement' && node.left.type === 'VariableDeclaration' &&
        node.left.declarations[0].id.type !== 'Identifier') {
      const pattern = node.left.declarations[0].id;
      const temp = `$sigil_of${++temps}`;
      const binding = `${node.left.kind} ${source.slice(pattern.start, pattern.end)} = ${temp};`;
      out.overwrite(pattern.start, pattern.end, temp);
      if (node.body.type === 'BlockStatement') {
        out.appendLeft(node.body.start + 1, ` ${binding}`);
      } else {
        out.appendLeft(node.body.start, `{ ${binding} `);
        out.prependRight(node.body.end, ' }');
      }
    }
    const wrapped = node.type === 'ForOfStatement' ? node.right
      : node.type === 'SpreadElement' ? node.argument : null;
    if (wrapped) {
      out.appendLeft(wrapped.start, 'Array.from(');
      out.prependRight(wrapped.end, ')');
    }
    for (const key of Object.keys(node)) {
      const v = node[key];
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v.type === 'string') walk(v);
    }
  })(ast);
  return out.toString();
}

const [out, ...args] = process.argv.slice(2);
const entries = [];
const aliases = new Map();
const patches = new Map();  // resolved path -> [entry, ...] (npm_patch.mjs's format)
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--alias') {
    const [name, target] = args[++i].split('=');
    aliases.set(name, rootRequire.resolve(target));
  } else if (args[i] === '--patches') {
    for (const entry of await loadPatches(args[++i])) {
      const path = resolvePatchedFile(entry.file);
      patches.set(path, [...(patches.get(path) ?? []), entry]);
    }
  } else {
    const [name, target] = args[i].split('=');
    entries.push([name, rootRequire.resolve(target)]);
  }
}
if (!out || entries.length === 0) {
  console.error('usage: node js_bundle.mjs <out.js> <name>=<module> ... [--alias builtin=module]');
  process.exit(2);
}

const ids = new Map();  // resolved path -> index
const bodies = [];
function Add(path) {
  if (ids.has(path)) return ids.get(path);
  const id = bodies.length;
  ids.set(path, id);
  bodies.push(null);
  let source = readFileSync(path, 'utf8');
  source = patchText(source, patches.get(path) ?? [], path);
  const from = createRequire(path);
  const deps = {};
  // Only literal require('x') calls: the packages bundled here use no other form.
  for (const m of source.matchAll(/\brequire\(\s*(['"])([^'"]+)\1\s*\)/g)) {
    const spec = m[2];
    const resolved = aliases.get(spec) ?? from.resolve(spec);
    if (resolved === spec) throw new Error(`${path}: requires the Node builtin '${spec}': map it with --alias`);
    deps[spec] = Add(resolved);
  }
  const code = path.endsWith('.json')
    ? 'module.exports = ' + source + ';'
    : buble.transform(ArrayFromForOf(source), { transforms: { dangerousForOf: true, asyncAwait: false }, objectAssign: 'Object.assign' }).code;
  bodies[id] = `[function (module, exports, require) {\n${code}\n}, ${JSON.stringify(deps)}]`;
  return id;
}
const named = entries.map(([name, path]) => [name, Add(path)]);
for (const path of patches.keys()) {
  if (!ids.has(path)) throw new Error(`--patches names ${path}, which no entry requires`);
}

const text = `// Generated by workers/sandbox/build/js_bundle.mjs from ${entries.map(([n]) => n).join(', ')}; do not edit.
(function (Buffer, __sigil_glue) {
var defs = [
${bodies.join(',\n')}
];
var cache = [];
function load(id) {
  if (cache[id]) return cache[id].exports;
  var module = { exports: {} };
  cache[id] = module;
  var deps = defs[id][1];
  defs[id][0].call(module.exports, module, module.exports, function (spec) {
    if (!(spec in deps)) throw new Error('bundle: unknown module ' + spec);
    return load(deps[spec]);
  });
  return module.exports;
}
var entries = ${JSON.stringify(Object.fromEntries(named))};
__sigil_modules_install(function (name) { return load(entries[name]); });
})(typeof __sigil_bundle_Buffer !== 'undefined' ? __sigil_bundle_Buffer : undefined,
  typeof __sigil_bundle_glue !== 'undefined' ? __sigil_bundle_glue : undefined);
`;
writeFileSync(out + '.tmp', text);
renameSync(out + '.tmp', out);
