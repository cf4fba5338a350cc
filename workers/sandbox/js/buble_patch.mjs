// Fixes in buble 0.20 (npm, pinned) that the lowering needs, applied at build time to its browser
// bundle; the result is what the sandbox embeds and sigil-lowerer joins (one lowering for both).
//   node buble_patch.mjs <buble-browser-deps.umd.js> <out.js>
// Each patch must match exactly once, so a new buble fails the build rather than loading unpatched.
import { readFileSync, writeFileSync } from 'node:fs';
import { patchOnce } from './text_patch.mjs';

const [input, output] = process.argv.slice(2);
const patch = (text, from, to, why) => patchOnce(text, from, to, why, 'buble_patch.mjs', input);

let source = readFileSync(input, 'utf8');
// A loop whose body a closure captures runs its body as a function, and buble writes the loop
// variables the body reassigns back to the loop only at the body's end. A `continue` becomes that
// function's `return`, which skipped the write-back: `for (let a = 0; a < 6;) { f(() => a); if (a < 3)
// { a++; continue; } a += 2; }` never ended. The continue now writes them back first. (Our BigInt
// and ?? rewrites add closures, so minified loops such as noble-hashes' met this.)
source = patch(source, `  			code.overwrite(this.start, this.start + 8, 'return');`,
  `  			var updates = loop.reassigned && loop.aliases ? Object.keys(loop.reassigned).filter(function (name) {
  				return loop.aliases[name];
  			}).map(function (name) { return loop.aliases[name].outer + ' = ' + loop.aliases[name].inner + ';'; }) : [];
  			if (updates.length) {
  				code.overwrite(this.start, this.start + 8, '{ ' + updates.join(' ') + ' return');
  				code.appendLeft(this.end, ' }');
  			} else {
  				code.overwrite(this.start, this.start + 8, 'return');
  			}`, 'continue writes the loop variables back');
writeFileSync(output, source);
