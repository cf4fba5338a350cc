// The web globals' npm packages (js_bundle.mjs joins them into web_packages.js), patched in
// npm_patch.mjs's format.
export default [
// whatwg-url-without-unicode leaves out UTS #46 (no tr46): host names get globals.js's lowercase
// + punycode, through the bundle's glue.
{ file: 'whatwg-url-without-unicode/lib/url-state-machine.js', why: 'host names through domainToASCII',
  old: `  const result = domain;`,
  new: `  const result = __sigil_glue.domainToASCII(domain);` },
];
