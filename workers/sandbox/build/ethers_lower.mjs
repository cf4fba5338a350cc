// ethers_lower.mjs: turns ethers v5's browser build (node_modules/ethers5/dist/ethers.umd.js)
// into what Duktape 2.7 runs, at build time (CMake runs it with Node; the result is embedded).
//   node ethers_lower.mjs <buble dir> <ethers.umd.js> <out.js>
// The UMD file is ES5 except for scrypt-js (const, let, arrows), which buble lowers. A few
// textual patches (below, each checked to match exactly once or as often as counted) make ENS
// tables lazy, route secp256k1, keccak256, HMAC and PBKDF2 to the sandbox's natives, and make
// the action's BigInts (JSBI instances) read as native bigints. The result is wrapped in a function that
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
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { patchOnce } from './text_patch.mjs';

const [, , bubleDir, input, output] = process.argv;
if (!bubleDir || !input || !output) {
  console.error('usage: node ethers_lower.mjs <buble dir> <ethers.umd.js> <out.js>');
  process.exit(2);
}
const require = createRequire(join(bubleDir, 'package.json'));
const buble = require(bubleDir);
// Textual patches of the pinned build, each required to match exactly once (a new ethers
// version that changes these lines fails the build here rather than loading unpatched).
const patch = (text, from, to, why) => patchOnce(text, from, to, why, 'ethers_lower.mjs', input);
let source = readFileSync(input, 'utf8');
// ENS normalisation decodes its Unicode tables when ethers loads ("@TODO: This should be
// lazily loaded" in ethers): 36 MiB of heap and about a second in Duktape, for every zygote,
// while only ENS names use them. Decoded on the first ENS name instead, and only when the runtime
// can normalise strings (the last step needs String.prototype.normalize): without it an ENS name
// fails at once rather than after building the tables.
source = patch(source, `var r = (0, include.getData)();

	// @TODO: This should be lazily loaded
	var VALID = new Set((0, decoder.read_member_array)(r));
	var IGNORED = new Set((0, decoder.read_member_array)(r));
	var MAPPED = (0, decoder.read_mapped_map)(r);
	var EMOJI_ROOT = (0, decoder.read_emoji_trie)(r);`, `var VALID, IGNORED, MAPPED, EMOJI_ROOT;
	function __sigil_ens_tables() {
	    if (VALID) return;
	    if (typeof String.prototype.normalize !== "function") {
	        throw new Error("ENS names need String.prototype.normalize, which this runtime does not have");
	    }
	    var r = (0, include.getData)();
	    VALID = new Set((0, decoder.read_member_array)(r));
	    IGNORED = new Set((0, decoder.read_member_array)(r));
	    MAPPED = (0, decoder.read_mapped_map)(r);
	    EMOJI_ROOT = (0, decoder.read_emoji_trie)(r);
	}`, 'lazy ENS tables');
source = patch(source, `function normalize(name, emoji_filter) {
	    var input = explode_cp(name).reverse();`, `function normalize(name, emoji_filter) {
	    __sigil_ens_tables();
	    var input = explode_cp(name).reverse();`, 'lazy ENS tables (use)');
// Native fast paths in @ethersproject/signing-key: a SigningKey's public keys, signDigest,
// recoverPublicKey and computePublicKey. elliptic in Duktape takes tens of milliseconds per
// point multiplication; the native one, microseconds.
source = patch(source, `	        var keyPair = getCurve().keyFromPrivate((0, lib$1.arrayify)(this.privateKey));
	        (0, lib$3.defineReadOnly)(this, "publicKey", "0x" + keyPair.getPublic(false, "hex"));
	        (0, lib$3.defineReadOnly)(this, "compressedPublicKey", "0x" + keyPair.getPublic(true, "hex"));`,
`	        var fast = __sigil_fast("publicKey", { key: this.privateKey });
	        if (fast) {
	            (0, lib$3.defineReadOnly)(this, "publicKey", fast.publicKey);
	            (0, lib$3.defineReadOnly)(this, "compressedPublicKey", fast.compressedPublicKey);
	        } else {
	        var keyPair = getCurve().keyFromPrivate((0, lib$1.arrayify)(this.privateKey));
	        (0, lib$3.defineReadOnly)(this, "publicKey", "0x" + keyPair.getPublic(false, "hex"));
	        (0, lib$3.defineReadOnly)(this, "compressedPublicKey", "0x" + keyPair.getPublic(true, "hex"));
	        }`, 'native SigningKey public keys');
source = patch(source, `	    SigningKey.prototype.signDigest = function (digest) {
	        var keyPair`, `	    SigningKey.prototype.signDigest = function (digest) {
	        var fastDigest = (0, lib$1.arrayify)(digest);
	        if (fastDigest.length === 32) {
	            var fast = __sigil_fast("signDigest", { privateKey: this.privateKey, digest: (0, lib$1.hexlify)(fastDigest) });
	            if (fast) return (0, lib$1.splitSignature)(fast);
	        }
	        var keyPair`, 'native signDigest');
source = patch(source, `	    var sig = (0, lib$1.splitSignature)(signature);
	    var rs = { r: (0, lib$1.arrayify)(sig.r), s: (0, lib$1.arrayify)(sig.s) };`,
`	    var sig = (0, lib$1.splitSignature)(signature);
	    var fastDigest = (0, lib$1.arrayify)(digest);
	    if (fastDigest.length === 32) {
	        var fast = __sigil_fast("recover", { digest: (0, lib$1.hexlify)(fastDigest), signature: (0, lib$1.joinSignature)(sig) });
	        if (fast) return fast.publicKey;
	    }
	    var rs = { r: (0, lib$1.arrayify)(sig.r), s: (0, lib$1.arrayify)(sig.s) };`, 'native recoverPublicKey');
source = patch(source, `	function computePublicKey(key, compressed) {
	    var bytes = (0, lib$1.arrayify)(key);`, `	function computePublicKey(key, compressed) {
	    var bytes = (0, lib$1.arrayify)(key);
	    if (bytes.length === 32 || bytes.length === 33 || bytes.length === 65) {
	        var fast = __sigil_fast("publicKey", { key: (0, lib$1.hexlify)(bytes) });
	        if (fast) return compressed ? fast.compressedPublicKey : fast.publicKey;
	    }`, 'native computePublicKey');
// computeAddress (@ethersproject/transactions; Wallet's constructor, recoverAddress and
// verifyMessage use it): the native answers the EIP-55 address of a key in one call.
source = patch(source, `	function computeAddress(key) {
	    var publicKey = (0, lib$g.computePublicKey)(key);`, `	function computeAddress(key) {
	    if (typeof key === "string" && /^0x([0-9a-fA-F]{64}|[0-9a-fA-F]{66}|[0-9a-fA-F]{130})$/.test(key)) {
	        var fast = __sigil_fast("publicKey", { key: key });
	        if (fast) return fast.address;
	    }
	    var publicKey = (0, lib$g.computePublicKey)(key);`, 'native computeAddress');
// Wallet.signMessage and _signTypedData join the signature signDigest has just split; with the
// native, its 65-byte answer is that joined form already (splitting and joining again costs more
// than the signature itself in Duktape).
source = patch(source, `return [2 /*return*/, (0, lib$1.joinSignature)(this._signingKey().signDigest((0, lib$c.hashMessage)(message)))];`,
  `return [2 /*return*/, __sigil_signed(this._signingKey(), (0, lib$c.hashMessage)(message), lib$1.joinSignature)];`,
  'native Wallet.signMessage');
source = patch(source, `return [2 /*return*/, (0, lib$1.joinSignature)(this._signingKey().signDigest(lib$c._TypedDataEncoder.hash(populated.domain, types, populated.value)))];`,
  `return [2 /*return*/, __sigil_signed(this._signingKey(), lib$c._TypedDataEncoder.hash(populated.domain, types, populated.value), lib$1.joinSignature)];`,
  'native Wallet._signTypedData');
// toUtf8Bytes (@ethersproject/strings): Duktape keeps a non-BMP character that arrives as
// UTF-8 (action source, js_params) as one code unit above 0xFFFF where V8 has a surrogate
// pair; both must encode to the same four bytes.
source = patch(source, `	            result.push((pair & 0x3f) | 0x80);
	        }
	        else {
	            result.push((c >> 12) | 0xe0);`, `	            result.push((pair & 0x3f) | 0x80);
	        }
	        else if (c > 0xffff) {
	            result.push((c >> 18) | 0xf0);
	            result.push(((c >> 12) & 0x3f) | 0x80);
	            result.push(((c >> 6) & 0x3f) | 0x80);
	            result.push((c & 0x3f) | 0x80);
	        }
	        else {
	            result.push((c >> 12) | 0xe0);`, 'toUtf8Bytes of non-BMP code units');
// keccak256 (@ethersproject/keccak256), which every address, hash and signature goes through.
source = patch(source, `	function keccak256(data) {
	    return '0x' + js_sha3_1.default.keccak_256((0, lib$1.arrayify)(data));`, `	function keccak256(data) {
	    if (__sigil_keccak) return __sigil_keccak((0, lib$1.arrayify)(data));
	    return '0x' + js_sha3_1.default.keccak_256((0, lib$1.arrayify)(data));`, 'native keccak256');

// HMAC (utils.computeHmac) and PBKDF2 (mnemonic seeds, JSON wallets) on OpenSSL: in Duktape,
// ethers' hash.js took about 8 s for one BIP-39 seed (2048 HMAC-SHA512 rounds).
source = patch(source, `	function computeHmac(algorithm, key, data) {
	    if (!types.SupportedAlgorithm[algorithm]) {`, `	function computeHmac(algorithm, key, data) {
	    var fast = types.SupportedAlgorithm[algorithm] ? __sigil_fast('computeHmac',
	        { algorithm: algorithm, key: (0, lib$1.hexlify)(key), data: (0, lib$1.hexlify)(data) }) : null;
	    if (fast !== null) return fast;
	    if (!types.SupportedAlgorithm[algorithm]) {`, 'native HMAC');
source = patch(source, `	function pbkdf2(password, salt, iterations, keylen, hashAlgorithm) {
	    password = (0, lib$1.arrayify)(password);
	    salt = (0, lib$1.arrayify)(salt);`, `	function pbkdf2(password, salt, iterations, keylen, hashAlgorithm) {
	    password = (0, lib$1.arrayify)(password);
	    salt = (0, lib$1.arrayify)(salt);
	    var fast = __sigil_fast('pbkdf2', { algorithm: hashAlgorithm, password: (0, lib$1.hexlify)(password),
	        salt: (0, lib$1.hexlify)(salt), iterations: iterations, keylen: keylen });
	    if (fast !== null) return fast;`, 'native PBKDF2');

// An action's BigInt values are JSBI instances (lower_runtime.js), Arrays of 30-bit digits,
// where ethers v5 expects native bigints; read as arrays they went wrong quietly (isBytes took
// the digits of 2n ** 30n + 5n for the bytes of 1281) or loudly (300n: "invalid BigNumber
// value"). So ethers reads them as Node's ethers reads bigints: its three typeof "bigint" checks
// (hexlify, isBigNumberish, BigNumber.from) recognise them; Array.isArray (every call in the
// file: RLP items, ABI arrays, topic lists, deepCopy), isBytes and a tuple's named values refuse
// them; deepCopy keeps them whole; a zero value override is false (Contract calls and
// deployments then leave tx.value unset). Each check is one instanceof (in Array.isArray's, only
// for arrays), so runs without BigInt do not pay measurably (bench_sandbox's ethers runs).
// Counted patches, like patch(): a new ethers with more or fewer such sites fails the build.
function patchAll(text, pattern, to, count, why) {
  const found = text.match(pattern)?.length ?? 0;
  if (found !== count) {
    console.error(`ethers_lower.mjs: patch "${why}" matches ${input} ${found} times, not ${count}`);
    process.exit(1);
  }
  return text.replace(pattern, to);
}
source = patchAll(source, /typeof \(([\w$]+)\) === "bigint"/g, '($1 instanceof __sigil_JSBI)', 3, 'BigInt checks');
source = patchAll(source, /Array\.isArray\(([\w$.]+)\)/g, '(Array.isArray($1) && !($1 instanceof __sigil_JSBI))', 31,
  'Array.isArray refuses BigInts');
source = patch(source, `	    if (typeof (value) === "string") {
	        return false;
	    }
	    if (!isInteger(value.length) || value.length < 0) {`, `	    if (typeof (value) === "string" || value instanceof __sigil_JSBI) {
	        return false;
	    }
	    if (!isInteger(value.length) || value.length < 0) {`, 'isBytes refuses BigInts');
source = patch(source, `	    else if (values && typeof (values) === "object") {`,
  `	    else if (values && typeof (values) === "object" && !(values instanceof __sigil_JSBI)) {`,
  'a BigInt is no tuple');
source = patch(source, `	    if (object === undefined || object === null || opaque[typeof (object)]) {`,
  `	    if (object === undefined || object === null || opaque[typeof (object)] || object instanceof __sigil_JSBI) {`,
  'deepCopy keeps BigInts');
source = patchAll(source, /if \((ro|tx)\.value\) \{/g, 'if (__sigil_truthy($1.value)) {', 2, 'a zero BigInt value is false');

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
