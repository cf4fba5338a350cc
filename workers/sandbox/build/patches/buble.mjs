// Fixes in buble 0.20 (npm, pinned) that the lowering needs, in npm_patch.mjs's format, applied at
// build time to its browser bundle (`node npm_patch.mjs patches/buble.mjs <out.js>`); the result is
// what the sandbox embeds and sigil-lowerer joins (one lowering for both). Part of the lowering's
// digest (runtime_level.h), with js/lower.js.
const file = 'buble/dist/buble-browser-deps.umd.js';

export default [
// A loop whose body a closure captures runs its body as a function, and buble writes the loop
// variables the body reassigns back to the loop only at the body's end. A `continue` becomes that
// function's `return`, which skipped the write-back: `for (let a = 0; a < 6;) { f(() => a); if (a < 3)
// { a++; continue; } a += 2; }` never ended. The continue now writes them back first. (Our BigInt
// and ?? rewrites add closures, so minified loops such as noble-hashes' met this.)
{ file, why: 'continue writes the loop variables back',
  old: `  			code.overwrite(this.start, this.start + 8, 'return');`,
  new: `  			var updates = loop.reassigned && loop.aliases ? Object.keys(loop.reassigned).filter(function (name) {
  				return loop.aliases[name];
  			}).map(function (name) { return loop.aliases[name].outer + ' = ' + loop.aliases[name].inner + ';'; }) : [];
  			if (updates.length) {
  				code.overwrite(this.start, this.start + 8, '{ ' + updates.join(' ') + ' return');
  				code.appendLeft(this.end, ' }');
  			} else {
  				code.overwrite(this.start, this.start + 8, 'return');
  			}` },
// A block's indentation starts at the line break before it, which buble found by stepping back
// one character at a time: on one line (minified code, or our rewrites' arrows) every block
// stepped back to the start of the source, quadratic in its length (20 KB of `a?.b;` took buble
// 2 s, 40 KB 10 s). The line breaks are now listed once per program and searched by halving.
{ file, why: 'indentation without stepping back through the line',
  old: `  \t\t\twhile (c && source[c] !== '\\n') { c -= 1; }`,
  new: `  \t\t\tvar lineBreaks = this.program.sigilLineBreaks;
  \t\t\tif (!lineBreaks) {
  \t\t\t\tlineBreaks = this.program.sigilLineBreaks = [];
  \t\t\t\tfor (var at = source.indexOf('\\n'); at >= 0; at = source.indexOf('\\n', at + 1)) { lineBreaks.push(at); }
  \t\t\t}
  \t\t\t// The last line break at or before c, else 0 (what the step-back loop gave).
  \t\t\tvar low = 0, high = lineBreaks.length;
  \t\t\twhile (low < high) {
  \t\t\t\tvar middle = (low + high) >> 1;
  \t\t\t\tif (lineBreaks[middle] <= c) { low = middle + 1; } else { high = middle; }
  \t\t\t}
  \t\t\tc = low > 0 ? lineBreaks[low - 1] : 0;` },
];
