// ethers_lower.mjs: turns ethers v5's browser build (node_modules/ethers5/dist/ethers.umd.js)
// into what Duktape 2.7 runs, at build time (CMake runs it with Node; the result is embedded).
//   node ethers_lower.mjs <buble dir> <ethers.umd.js> <out.js>
// The UMD file is ES5 except for scrypt-js (const, let, arrows), which buble lowers. A few
// textual patches (patches/ethers5.mjs, applied by npm_patch.mjs: each checked to match exactly
// once or as often as counted) make ENS tables lazy, route secp256k1, keccak256, HMAC and PBKDF2
// to the sandbox's natives, and make the action's BigInts (JSBI instances) read as native bigints. The result is wrapped in a function that
// gives ethers, and only ethers, these names of its own:
//   atob, btoa  ethers' base64 (utils.base64, ENS tables) uses them; Latin-1 strings as in
//            browsers;
//   self     its random-bytes module takes `self.crypto` at load; this one forwards each call
//            to the global crypto.getRandomValues present at call time (or fails clearly);
//   console  its Logger prints through console.log: nothing while the zygote loads it (there
//            is no run to log to), the run's console afterwards;
//   __sigil_JSBI, BigInt  the action's BigInt (lower_runtime.js): its values are JSBI instances,
//            which ethers must read as Node's ethers reads native bigints (below); toBigInt
//            answers one. Without the runtime (a heap of ethers alone), no value is one;
//   __sigil_fast, __sigil_keccak  the natives (workers/sandbox/natives/crypto.h) when the heap has them,
//            taken from the global object and removed from it. Every fast path answers exactly
//            what ethers' own code answers (tests/unit/workers/sandbox/crypto_tests.cpp runs both
//            on the same inputs); when a native refuses an input, ethers' own code runs, so
//            errors read as ethers' do.
// The epilogue defines the global `ethers` (not writable) and freezes its namespaces.
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { patchText, resolvePatchedFile } from './npm_patch.mjs';
import ethersPatches from './patches/ethers5.mjs';

const [, , bubleDir, input, output] = process.argv;
if (!bubleDir || !input || !output) {
  console.error('usage: node ethers_lower.mjs <buble dir> <ethers.umd.js> <out.js>');
  process.exit(2);
}
const require = createRequire(join(bubleDir, 'package.json'));
const buble = require(bubleDir);
// The patches of the pinned build (patches/ethers5.mjs), each required to match exactly once or
// as often as counted: a new ethers version that changes these lines fails the build here rather
// than loading unpatched.
for (const p of ethersPatches) {
  if (realpathSync(resolvePatchedFile(p.file)) !== realpathSync(input)) {
    console.error(`ethers_lower.mjs: patches/ethers5.mjs patches ${p.file}, not ${input}`);
    process.exit(1);
  }
}
const source = patchText(readFileSync(input, 'utf8'), ethersPatches, input);

const lowered = buble.transform(source, {
  transforms: { dangerousForOf: true, asyncAwait: false, generator: false },
  objectAssign: 'Object.assign',
}).code;

const prologue = `(function (global) {
var __sigil_ethers_loading = true;
var __sigil_take = function (name) {
    var f = global[name];
    var d = Object.getOwnPropertyDescriptor(global, name);
    if (d && d.configurable) delete global[name];
    return typeof f === 'function' ? f : null;
};
// The action's BigInt class and function; without them (ethers alone) nothing is an instance
// and toBigInt refuses as before.
var __sigil_JSBI = typeof global.JSBI === 'function' ? global.JSBI : function () {};
var BigInt = typeof global.__sigil_BigInt === 'function' ? global.__sigil_BigInt : undefined;
// \`if (value)\` as Node reads it, where a bigint zero is false.
var __sigil_truthy = function (value) {
    return value instanceof __sigil_JSBI ? !__sigil_JSBI.equal(value, __sigil_JSBI.BigInt(0)) : !!value;
};
var __sigil_crypto = __sigil_take('__sigil_crypto');
var __sigil_keccak = __sigil_take('__sigil_keccak256');
// One native operation (crypto.h's RunCryptoOp); null when there is no native or it refuses the
// input, and the caller then runs ethers' own code.
var __sigil_fast = function (name, args) {
    if (__sigil_crypto === null) return null;
    var text;
    try { text = __sigil_crypto(name, JSON.stringify(args)); } catch (e) { return null; }
    return JSON.parse(text);
};
// joinSignature(signingKey.signDigest(digest)), from the native when it takes the digest.
var __sigil_signed = function (signingKey, digest, joinSignature) {
    var fast = typeof digest === 'string' && /^0x[0-9a-fA-F]{64}$/.test(digest)
        ? __sigil_fast('signDigest', { privateKey: signingKey.privateKey, digest: digest }) : null;
    return fast !== null ? fast : joinSignature(signingKey.signDigest(digest));
};
var atob = function (text) {
    var ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    text = String(text).replace(/[\\t\\n\\f\\r =]/g, '');
    var out = '', acc = 0, bits = 0;
    for (var i = 0; i < text.length; i++) {
        var v = ALPHABET.indexOf(text.charAt(i));
        if (v < 0) throw new Error('atob: invalid base64');
        acc = ((acc << 6) | v) & 0xffffff;
        bits += 6;
        if (bits >= 8) { bits -= 8; out += String.fromCharCode((acc >> bits) & 255); }
    }
    return out;
};
var btoa = function (text) {
    var ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    text = String(text);
    var out = '';
    for (var i = 0; i < text.length; i += 3) {
        var a = text.charCodeAt(i), b = text.charCodeAt(i + 1), c = text.charCodeAt(i + 2);
        if (a > 255 || b > 255 || c > 255) throw new Error('btoa: character outside Latin-1');
        var n = (a << 16) | ((b || 0) << 8) | (c || 0);
        out += ALPHABET.charAt(n >> 18) + ALPHABET.charAt((n >> 12) & 63) +
               (i + 1 < text.length ? ALPHABET.charAt((n >> 6) & 63) : '=') +
               (i + 2 < text.length ? ALPHABET.charAt(n & 63) : '=');
    }
    return out;
};
var self = { crypto: { getRandomValues: function (buffer) {
    var c = global.crypto;
    if (!c || typeof c.getRandomValues !== 'function') throw new Error('crypto.getRandomValues is not available in this sandbox');
    return c.getRandomValues(buffer);
} } };
var console = { log: function () {
    var c = global.console;
    if (!__sigil_ethers_loading && c && typeof c.log === 'function') c.log.apply(c, arguments);
} };
`;
const epilogue = `
__sigil_ethers_loading = false;
var ethers = global.ethers;
delete global.ethers;
[ethers, ethers.utils, ethers.providers, ethers.constants, ethers.errors, ethers.wordlists].forEach(function (ns) {
    if (ns !== null && typeof ns === 'object') Object.freeze(ns);
});
Object.defineProperty(global, 'ethers', { value: ethers, writable: false, enumerable: false, configurable: false });
}).call(this, this);
`;
writeFileSync(output, `/* Generated by workers/sandbox/build/ethers_lower.mjs from ${input}; do not edit. */\n` +
  prologue + lowered + epilogue);
