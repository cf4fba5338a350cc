// regexpu-core and regenerate (js_bundle.mjs joins them into regexpu.js for RegExp's u and v
// flags, js/regexp.js), patched in npm_patch.mjs's format.
export default [
// regexpu-core's one computed require (a property set's module) goes to the joined text of the
// Unicode property sets (unicode_properties.mjs), through the bundle's glue.
{ file: 'regexpu-core/rewrite-pattern.js', why: 'property sets from the joined text',
  old: `return require(`,
  new: `return __sigil_glue.unicodeProperty(` },
// By the time a run compiles the bundle its built-ins are frozen, so regenerate's
// `proto.toString = ...` would fail silently (Object.prototype.toString is read-only: the
// "override mistake"); the property is defined instead.
{ file: 'regenerate/regenerate.js', why: 'define, not assign, over frozen built-ins',
  old: `destination[key] = source[key];`,
  new: `Object.defineProperty(destination, key, { value: source[key], writable: true, enumerable: true, configurable: true });` },
];
