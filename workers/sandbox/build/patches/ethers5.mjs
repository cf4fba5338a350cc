// The build's patches of ethers v5's browser build (npm, pinned), in npm_patch.mjs's format;
// ethers_lower.mjs applies them before buble lowers the file. They make the ENS tables lazy,
// route secp256k1, keccak256, HMAC and PBKDF2 to the sandbox's natives, and make the action's
// BigInts (JSBI instances) read as native bigints; ethers_lower.mjs's prologue defines the names
// they call (__sigil_fast, __sigil_keccak, __sigil_signed, __sigil_JSBI, __sigil_truthy).
const file = 'ethers5/dist/ethers.umd.js';

export default [
// ENS normalisation decodes its Unicode tables when ethers loads ("@TODO: This should be
// lazily loaded" in ethers): 36 MiB of heap and about a second in Duktape, for every zygote,
// while only ENS names use them. Decoded on the first ENS name instead, and only when the runtime
// can normalise strings (the last step needs String.prototype.normalize): without it an ENS name
// fails at once rather than after building the tables.
{ file, why: 'lazy ENS tables',
  old: `var r = (0, include.getData)();

	// @TODO: This should be lazily loaded
	var VALID = new Set((0, decoder.read_member_array)(r));
	var IGNORED = new Set((0, decoder.read_member_array)(r));
	var MAPPED = (0, decoder.read_mapped_map)(r);
	var EMOJI_ROOT = (0, decoder.read_emoji_trie)(r);`,
  new: `var VALID, IGNORED, MAPPED, EMOJI_ROOT;
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
	}` },
{ file, why: 'lazy ENS tables (use)',
  old: `function normalize(name, emoji_filter) {
	    var input = explode_cp(name).reverse();`,
  new: `function normalize(name, emoji_filter) {
	    __sigil_ens_tables();
	    var input = explode_cp(name).reverse();` },
// Native fast paths in @ethersproject/signing-key: a SigningKey's public keys, signDigest,
// recoverPublicKey and computePublicKey. elliptic in Duktape takes tens of milliseconds per
// point multiplication; the native one, microseconds.
{ file, why: 'native SigningKey public keys',
  old: `	        var keyPair = getCurve().keyFromPrivate((0, lib$1.arrayify)(this.privateKey));
	        (0, lib$3.defineReadOnly)(this, "publicKey", "0x" + keyPair.getPublic(false, "hex"));
	        (0, lib$3.defineReadOnly)(this, "compressedPublicKey", "0x" + keyPair.getPublic(true, "hex"));`,
  new: `	        var fast = __sigil_fast("publicKey", { key: this.privateKey });
	        if (fast) {
	            (0, lib$3.defineReadOnly)(this, "publicKey", fast.publicKey);
	            (0, lib$3.defineReadOnly)(this, "compressedPublicKey", fast.compressedPublicKey);
	        } else {
	        var keyPair = getCurve().keyFromPrivate((0, lib$1.arrayify)(this.privateKey));
	        (0, lib$3.defineReadOnly)(this, "publicKey", "0x" + keyPair.getPublic(false, "hex"));
	        (0, lib$3.defineReadOnly)(this, "compressedPublicKey", "0x" + keyPair.getPublic(true, "hex"));
	        }` },
{ file, why: 'native signDigest',
  old: `	    SigningKey.prototype.signDigest = function (digest) {
	        var keyPair`,
  new: `	    SigningKey.prototype.signDigest = function (digest) {
	        var fastDigest = (0, lib$1.arrayify)(digest);
	        if (fastDigest.length === 32) {
	            var fast = __sigil_fast("signDigest", { privateKey: this.privateKey, digest: (0, lib$1.hexlify)(fastDigest) });
	            if (fast) return (0, lib$1.splitSignature)(fast);
	        }
	        var keyPair` },
{ file, why: 'native recoverPublicKey',
  old: `	    var sig = (0, lib$1.splitSignature)(signature);
	    var rs = { r: (0, lib$1.arrayify)(sig.r), s: (0, lib$1.arrayify)(sig.s) };`,
  new: `	    var sig = (0, lib$1.splitSignature)(signature);
	    var fastDigest = (0, lib$1.arrayify)(digest);
	    if (fastDigest.length === 32) {
	        var fast = __sigil_fast("recover", { digest: (0, lib$1.hexlify)(fastDigest), signature: (0, lib$1.joinSignature)(sig) });
	        if (fast) return fast.publicKey;
	    }
	    var rs = { r: (0, lib$1.arrayify)(sig.r), s: (0, lib$1.arrayify)(sig.s) };` },
{ file, why: 'native computePublicKey',
  old: `	function computePublicKey(key, compressed) {
	    var bytes = (0, lib$1.arrayify)(key);`,
  new: `	function computePublicKey(key, compressed) {
	    var bytes = (0, lib$1.arrayify)(key);
	    if (bytes.length === 32 || bytes.length === 33 || bytes.length === 65) {
	        var fast = __sigil_fast("publicKey", { key: (0, lib$1.hexlify)(bytes) });
	        if (fast) return compressed ? fast.compressedPublicKey : fast.publicKey;
	    }` },
// computeAddress (@ethersproject/transactions; Wallet's constructor, recoverAddress and
// verifyMessage use it): the native answers the EIP-55 address of a key in one call.
{ file, why: 'native computeAddress',
  old: `	function computeAddress(key) {
	    var publicKey = (0, lib$g.computePublicKey)(key);`,
  new: `	function computeAddress(key) {
	    if (typeof key === "string" && /^0x([0-9a-fA-F]{64}|[0-9a-fA-F]{66}|[0-9a-fA-F]{130})$/.test(key)) {
	        var fast = __sigil_fast("publicKey", { key: key });
	        if (fast) return fast.address;
	    }
	    var publicKey = (0, lib$g.computePublicKey)(key);` },
// Wallet.signMessage and _signTypedData join the signature signDigest has just split; with the
// native, its 65-byte answer is that joined form already (splitting and joining again costs more
// than the signature itself in Duktape).
{ file, why: 'native Wallet.signMessage',
  old: `return [2 /*return*/, (0, lib$1.joinSignature)(this._signingKey().signDigest((0, lib$c.hashMessage)(message)))];`,
  new: `return [2 /*return*/, __sigil_signed(this._signingKey(), (0, lib$c.hashMessage)(message), lib$1.joinSignature)];` },
{ file, why: 'native Wallet._signTypedData',
  old: `return [2 /*return*/, (0, lib$1.joinSignature)(this._signingKey().signDigest(lib$c._TypedDataEncoder.hash(populated.domain, types, populated.value)))];`,
  new: `return [2 /*return*/, __sigil_signed(this._signingKey(), lib$c._TypedDataEncoder.hash(populated.domain, types, populated.value), lib$1.joinSignature)];` },
// toUtf8Bytes (@ethersproject/strings): Duktape keeps a non-BMP character that arrives as
// UTF-8 (action source, js_params) as one code unit above 0xFFFF where V8 has a surrogate
// pair; both must encode to the same four bytes.
{ file, why: 'toUtf8Bytes of non-BMP code units',
  old: `	            result.push((pair & 0x3f) | 0x80);
	        }
	        else {
	            result.push((c >> 12) | 0xe0);`,
  new: `	            result.push((pair & 0x3f) | 0x80);
	        }
	        else if (c > 0xffff) {
	            result.push((c >> 18) | 0xf0);
	            result.push(((c >> 12) & 0x3f) | 0x80);
	            result.push(((c >> 6) & 0x3f) | 0x80);
	            result.push((c & 0x3f) | 0x80);
	        }
	        else {
	            result.push((c >> 12) | 0xe0);` },
// keccak256 (@ethersproject/keccak256), which every address, hash and signature goes through.
{ file, why: 'native keccak256',
  old: `	function keccak256(data) {
	    return '0x' + js_sha3_1.default.keccak_256((0, lib$1.arrayify)(data));`,
  new: `	function keccak256(data) {
	    if (__sigil_keccak) return __sigil_keccak((0, lib$1.arrayify)(data));
	    return '0x' + js_sha3_1.default.keccak_256((0, lib$1.arrayify)(data));` },

// HMAC (utils.computeHmac) and PBKDF2 (mnemonic seeds, JSON wallets) on OpenSSL: in Duktape,
// ethers' hash.js took about 8 s for one BIP-39 seed (2048 HMAC-SHA512 rounds).
{ file, why: 'native HMAC',
  old: `	function computeHmac(algorithm, key, data) {
	    if (!types.SupportedAlgorithm[algorithm]) {`,
  new: `	function computeHmac(algorithm, key, data) {
	    var fast = types.SupportedAlgorithm[algorithm] ? __sigil_fast('computeHmac',
	        { algorithm: algorithm, key: (0, lib$1.hexlify)(key), data: (0, lib$1.hexlify)(data) }) : null;
	    if (fast !== null) return fast;
	    if (!types.SupportedAlgorithm[algorithm]) {` },
{ file, why: 'native PBKDF2',
  old: `	function pbkdf2(password, salt, iterations, keylen, hashAlgorithm) {
	    password = (0, lib$1.arrayify)(password);
	    salt = (0, lib$1.arrayify)(salt);`,
  new: `	function pbkdf2(password, salt, iterations, keylen, hashAlgorithm) {
	    password = (0, lib$1.arrayify)(password);
	    salt = (0, lib$1.arrayify)(salt);
	    var fast = __sigil_fast('pbkdf2', { algorithm: hashAlgorithm, password: (0, lib$1.hexlify)(password),
	        salt: (0, lib$1.hexlify)(salt), iterations: iterations, keylen: keylen });
	    if (fast !== null) return fast;` },

// An action's BigInt values are JSBI instances (lower_runtime.js), Arrays of 30-bit digits,
// where ethers v5 expects native bigints; read as arrays they went wrong quietly (isBytes took
// the digits of 2n ** 30n + 5n for the bytes of 1281) or loudly (300n: "invalid BigNumber
// value"). So ethers reads them as Node's ethers reads bigints: its three typeof "bigint" checks
// (hexlify, isBigNumberish, BigNumber.from) recognise them; Array.isArray (every call in the
// file: RLP items, ABI arrays, topic lists, deepCopy), isBytes and a tuple's named values refuse
// them; deepCopy keeps them whole; a zero value override is false (Contract calls and
// deployments then leave tx.value unset). Each check is one instanceof (in Array.isArray's, only
// for arrays), so runs without BigInt do not pay measurably (bench_sandbox's ethers runs).
// Counted patches (count): a new ethers with more or fewer such sites fails the build.
{ file, why: 'BigInt checks', count: 3,
  old: /typeof \(([\w$]+)\) === "bigint"/g,
  new: '($1 instanceof __sigil_JSBI)' },
{ file, why: 'Array.isArray refuses BigInts', count: 31,
  old: /Array\.isArray\(([\w$.]+)\)/g,
  new: '(Array.isArray($1) && !($1 instanceof __sigil_JSBI))' },
{ file, why: 'isBytes refuses BigInts',
  old: `	    if (typeof (value) === "string") {
	        return false;
	    }
	    if (!isInteger(value.length) || value.length < 0) {`,
  new: `	    if (typeof (value) === "string" || value instanceof __sigil_JSBI) {
	        return false;
	    }
	    if (!isInteger(value.length) || value.length < 0) {` },
{ file, why: 'a BigInt is no tuple',
  old: `	    else if (values && typeof (values) === "object") {`,
  new: `	    else if (values && typeof (values) === "object" && !(values instanceof __sigil_JSBI)) {` },
{ file, why: 'deepCopy keeps BigInts',
  old: `	    if (object === undefined || object === null || opaque[typeof (object)]) {`,
  new: `	    if (object === undefined || object === null || opaque[typeof (object)] || object instanceof __sigil_JSBI) {` },
{ file, why: 'a zero BigInt value is false', count: 2,
  old: /if \((ro|tx)\.value\) \{/g,
  new: 'if (__sigil_truthy($1.value)) {' },
];
