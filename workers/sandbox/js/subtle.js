/*
 * subtle.js: crypto.subtle and CryptoKey, the Web Crypto API over OpenSSL natives (web_crypto.cpp,
 * web_crypto_ec.cpp):
 *   digest                 SHA-1, SHA-256, SHA-384, SHA-512
 *   sign, verify           HMAC
 *   encrypt, decrypt       AES-GCM
 *   deriveBits, deriveKey  HKDF, PBKDF2, ECDH (P-256), X25519; deriveKey makes AES-GCM, HMAC,
 *                          HKDF and PBKDF2 keys
 *   importKey, exportKey   raw and jwk (HMAC, AES-GCM); raw (HKDF, PBKDF2; never extractable);
 *                          raw (public), spki, pkcs8 and jwk (ECDH P-256, X25519)
 *   generateKey            HMAC, AES-GCM, ECDH P-256, X25519
 * Every method answers a promise; a refusal rejects it with the error Node's Web Crypto gives:
 * TypeError for a missing or mistyped member, else the DOMException the specification names
 * (NotSupportedError, SyntaxError, InvalidAccessError, DataError, OperationError). Not here:
 * RSA, ECDSA, Ed25519, ECDH on P-384/P-521, X448, AES-CBC/CTR/KW, wrapKey/unwrapKey
 * (NotSupportedError).
 *
 * Evaluated right after globals.js (crypto, DOMException), in the same source. Plain ES5.1.
 */
(function (global) {
    'use strict';

    function TakeNative(name) {
        var f = global[name];
        if (typeof f !== 'function') throw new Error('subtle.js: ' + name + ' must come first');
        delete global[name];
        return f;
    }
    var nativeDigest = TakeNative('__sigil_digest');
    var nativeHmac = TakeNative('__sigil_hmac');
    var nativeAesGcm = TakeNative('__sigil_aes_gcm');
    var nativeHkdf = TakeNative('__sigil_hkdf');
    var nativePbkdf2 = TakeNative('__sigil_pbkdf2');
    var ec = {
        generate: TakeNative('__sigil_ec_generate'),
        publicKey: TakeNative('__sigil_ec_public'),
        publicOf: TakeNative('__sigil_ec_public_of'),
        derive: TakeNative('__sigil_ec_derive'),
        importDer: TakeNative('__sigil_ec_import_der'),
        exportDer: TakeNative('__sigil_ec_export_der')
    };
    var crypto = global.crypto;
    var DOMException = global.DOMException;
    if (!crypto || typeof crypto.getRandomValues !== 'function' || typeof DOMException !== 'function') {
        throw new Error('subtle.js: globals.js must come first');
    }
    var getRandomValues = crypto.getRandomValues;

    function define(target, name, value) {
        Object.defineProperty(target, name, { value: value, writable: true, configurable: true, enumerable: false });
    }

    var DIGESTS = { 'SHA-1': 64, 'SHA-256': 64, 'SHA-384': 128, 'SHA-512': 128 };  // name: block size
    var DIGEST_BYTES = { 'SHA-1': 20, 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 };
    // The key algorithms: their kind (secret keys or key pairs), the usages a key may have, the
    // formats importKey takes, and whether a key may be extractable at all.
    var KEY_ALGORITHMS = {
        HMAC: { usages: ['sign', 'verify'], formats: ['raw', 'jwk'] },
        'AES-GCM': { usages: ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey'], formats: ['raw', 'jwk'] },
        HKDF: { usages: ['deriveKey', 'deriveBits'], formats: ['raw'], neverExtractable: true },
        PBKDF2: { usages: ['deriveKey', 'deriveBits'], formats: ['raw'], neverExtractable: true },
        ECDH: { usages: ['deriveKey', 'deriveBits'], formats: ['raw', 'spki', 'pkcs8', 'jwk'], pair: true },
        X25519: { usages: ['deriveKey', 'deriveBits'], formats: ['raw', 'spki', 'pkcs8', 'jwk'], pair: true }
    };
    var DERIVE_ALGORITHMS = { HKDF: 1, PBKDF2: 1, ECDH: 1, X25519: 1 };
    var CURVES = { 'P-256': { bytes: 32 } };  // ECDH's; X25519's keys are 32 bytes too
    var material = new WeakMap();  // CryptoKey -> Uint8Array (secret) or {secret, pub} (pairs)

    function Reject(message, name) { return Promise.reject(new DOMException(message, name)); }
    function Settle(f) {
        try { return Promise.resolve(f()); } catch (e) { return Promise.reject(e); }
    }
    function Fail(message, name) { throw new DOMException(message, name); }
    function Missing(member, dictionary) {
        throw new TypeError("Failed to normalize algorithm: '" + member + "' is required in '" + dictionary + "'");
    }
    function AlgorithmName(alg) {
        var name = typeof alg === 'string' ? alg : alg && typeof alg === 'object' ? alg.name : undefined;
        if (typeof name !== 'string') throw new TypeError('Algorithm: name is missing');
        var upper = name.toUpperCase();
        for (var known in DIGESTS) if (known === upper) return known;
        if (KEY_ALGORITHMS.hasOwnProperty(upper)) return upper;
        return Fail('Unrecognized algorithm name', 'NotSupportedError');
    }
    function Params(alg) { return typeof alg === 'object' && alg !== null ? alg : {}; }
    function HashName(hash, dictionary) {
        if (hash === undefined) Missing('hash', dictionary);
        var name = AlgorithmName(hash);
        if (!DIGESTS[name]) Fail('Unrecognized hash algorithm', 'NotSupportedError');
        return name;
    }
    function IsBufferSource(data) { return data instanceof ArrayBuffer || (!!data && ArrayBuffer.isView(data)); }
    // A copy of a BufferSource's bytes (the caller may change its buffer afterwards).
    function Bytes(data, what) {
        if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
        if (data && ArrayBuffer.isView(data)) {
            return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
        }
        throw new TypeError(what + ' is not a BufferSource');
    }
    function Member(params, member, dictionary) {
        if (params[member] === undefined) Missing(member, dictionary);
        return Bytes(params[member], member);
    }
    function Equal(a, b) {
        if (a.length !== b.length) return false;
        var diff = 0;
        for (var i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
        return diff === 0;
    }
    function Concat(a, b) {
        var out = new Uint8Array(a.length + b.length);
        out.set(a, 0);
        out.set(b, a.length);
        return out;
    }

    function CryptoKey(type, algorithm, extractable, usages, keyMaterial) {
        define(this, 'type', type);
        define(this, 'extractable', !!extractable);
        define(this, 'algorithm', algorithm);
        define(this, 'usages', usages.slice());
        material.set(this, keyMaterial);
    }
    define(global, 'CryptoKey', CryptoKey);

    // The usages a new key gets, after the checks of the specification: every usage known for the
    // algorithm (SyntaxError), none for a public key and at least one for others (SyntaxError).
    function CheckUsages(name, usages, type) {
        if (!Array.isArray(usages)) throw new TypeError('keyUsages is not a sequence');
        var allowed = type === 'public' ? [] : KEY_ALGORITHMS[name].usages;
        for (var i = 0; i < usages.length; i++) {
            if (allowed.indexOf(usages[i]) < 0) Fail('Unsupported key usage for a ' + name + ' key', 'SyntaxError');
        }
        if (usages.length === 0 && type !== 'public') Fail('Usages cannot be empty when creating a key.', 'SyntaxError');
        return usages.slice();
    }

    function NewSecretKey(name, params, bytes, extractable, usages) {
        var spec = KEY_ALGORITHMS[name];
        if (spec.neverExtractable && extractable) Fail(name + ' keys are not extractable', 'SyntaxError');
        usages = CheckUsages(name, usages, 'secret');
        var algorithm;
        if (name === 'HMAC') {
            var hash = HashName(params.hash, 'HmacImportParams');
            if (params.length !== undefined && params.length !== bytes.length * 8) Fail('Invalid key length', 'DataError');
            if (bytes.length === 0) Fail('Zero-length key is not supported', 'DataError');
            algorithm = { name: 'HMAC', hash: { name: hash }, length: bytes.length * 8 };
        } else if (name === 'AES-GCM') {
            if (bytes.length !== 16 && bytes.length !== 24 && bytes.length !== 32) Fail('Invalid key length', 'DataError');
            algorithm = { name: 'AES-GCM', length: bytes.length * 8 };
        } else {
            algorithm = { name: name };
        }
        return new CryptoKey('secret', algorithm, extractable, usages, bytes);
    }

    // The curve of an ECDH or X25519 algorithm (NotSupportedError for a curve not here).
    function CurveOf(name, params, dictionary) {
        if (name === 'X25519') return 'X25519';
        if (params.namedCurve === undefined) Missing('namedCurve', dictionary);
        var curve = String(params.namedCurve);
        if (!CURVES.hasOwnProperty(curve)) Fail('Unrecognized or unsupported namedCurve ' + curve, 'NotSupportedError');
        return curve;
    }
    function PairAlgorithm(name, curve) { return name === 'X25519' ? { name: 'X25519' } : { name: 'ECDH', namedCurve: curve }; }
    function NewPairKey(name, curve, secret, pub, extractable, usages) {
        var type = secret ? 'private' : 'public';
        usages = CheckUsages(name, usages, type);
        return new CryptoKey(type, PairAlgorithm(name, curve), extractable, usages, { secret: secret, pub: pub });
    }

    function UseKey(key, name, usage) {
        if (!(key instanceof CryptoKey)) throw new TypeError('key is not a CryptoKey');
        if (key.algorithm.name !== name) Fail('Key algorithm mismatch', 'InvalidAccessError');
        if (key.usages.indexOf(usage) < 0) Fail('key does not have ' + usage + ' usage', 'InvalidAccessError');
        return material.get(key);
    }

    function Base64Url(bytes) {
        var s = '';
        for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
        return global.btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    }
    function FromBase64Url(text) {
        if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text)) Fail('Invalid keyData', 'DataError');
        var b = text.replace(/-/g, '+').replace(/_/g, '/');
        while (b.length % 4) b += '=';
        var raw = global.atob(b), out = new Uint8Array(raw.length);
        for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
        return out;
    }
    function JwkAlg(key) {
        if (key.algorithm.name === 'HMAC') return 'HS' + key.algorithm.hash.name.slice(4);
        return 'A' + key.algorithm.length + 'GCM';
    }
    // What a JWK says about extractability and usages must allow what importKey asks for.
    function CheckJwk(jwk, extractable, usages) {
        if (!jwk || typeof jwk !== 'object') throw new TypeError('keyData is not a JsonWebKey');
        if (jwk.ext === false && extractable) Fail('JWK "ext" Parameter and extractable mismatch', 'DataError');
        if (Array.isArray(jwk.key_ops) && Array.isArray(usages)) {
            for (var i = 0; i < usages.length; i++) {
                if (jwk.key_ops.indexOf(usages[i]) < 0) Fail('Key operations and usage mismatch', 'DataError');
            }
        }
    }

    function ImportPair(name, format, keyData, params, extractable, usages) {
        var curve = CurveOf(name, params, 'EcKeyImportParams');
        var secret = null, pub;
        if (format === 'raw') {
            pub = ec.publicKey(curve, Bytes(keyData, 'keyData'));
        } else if (format === 'spki' || format === 'pkcs8') {
            var keys = ec.importDer(format, Bytes(keyData, 'keyData'));
            if (keys === null || keys[0] !== curve) Fail('Invalid keyData', 'DataError');
            secret = keys[1];
            pub = keys[2];
        } else {
            CheckJwk(keyData, extractable, usages);
            var kty = name === 'X25519' ? 'OKP' : 'EC';
            if (keyData.kty !== kty) Fail('Invalid JWK "kty" Parameter', 'DataError');
            if (keyData.crv !== curve) Fail('JWK "crv" does not match the requested algorithm', 'DataError');
            var x = FromBase64Url(keyData.x);
            if (name === 'X25519') {
                pub = ec.publicKey(curve, x);
            } else {
                var y = FromBase64Url(keyData.y);
                if (x.length !== 32 || y.length !== 32) Fail('Invalid keyData', 'DataError');
                pub = ec.publicKey(curve, Concat(Concat(new Uint8Array([4]), x), y));
            }
            if (keyData.d !== undefined) {
                secret = FromBase64Url(keyData.d);
                var derived = ec.publicOf(curve, secret);
                if (derived === null || pub === null || !Equal(new Uint8Array(derived), new Uint8Array(pub))) {
                    Fail('Invalid keyData', 'DataError');
                }
            }
        }
        if (pub === null) Fail('Invalid keyData', 'DataError');
        return NewPairKey(name, curve, secret && new Uint8Array(secret), new Uint8Array(pub), extractable, usages);
    }

    function ExportPair(format, key) {
        var keys = material.get(key);
        var curve = key.algorithm.name === 'X25519' ? 'X25519' : key.algorithm.namedCurve;
        if (format === 'raw' || format === 'spki') {
            if (key.type !== 'public') Fail('Unable to export a ' + format + ' ' + key.algorithm.name + ' private key', 'InvalidAccessError');
            return format === 'raw' ? new Uint8Array(keys.pub).buffer : ec.exportDer('spki', curve, null, keys.pub);
        }
        if (format === 'pkcs8') {
            if (key.type !== 'private') Fail('Unable to export a pkcs8 ' + key.algorithm.name + ' public key', 'InvalidAccessError');
            return ec.exportDer('pkcs8', curve, keys.secret, keys.pub);
        }
        if (format !== 'jwk') return Fail('Unsupported export key format', 'NotSupportedError');
        var jwk = { key_ops: key.usages.slice(), ext: key.extractable };
        if (curve === 'X25519') {
            jwk.crv = 'X25519';
            if (keys.secret) jwk.d = Base64Url(keys.secret);
            jwk.x = Base64Url(keys.pub);
            jwk.kty = 'OKP';
        } else {
            jwk.kty = 'EC';
            jwk.x = Base64Url(keys.pub.subarray(1, 33));
            jwk.y = Base64Url(keys.pub.subarray(33, 65));
            jwk.crv = curve;
            if (keys.secret) jwk.d = Base64Url(keys.secret);
        }
        return jwk;
    }

    function GcmParams(params) {
        var tagLength = params.tagLength === undefined ? 128 : params.tagLength;
        if ([32, 64, 96, 104, 112, 120, 128].indexOf(tagLength) < 0) Fail('Invalid tagLength', 'OperationError');
        return {
            iv: Bytes(params.iv, 'iv'),
            aad: params.additionalData === undefined ? undefined : Bytes(params.additionalData, 'additionalData'),
            tag: tagLength / 8
        };
    }

    // A deriveBits algorithm, normalized before the key is looked at (as Node does): its name and
    // members, with TypeError for a missing one.
    function DeriveParams(algorithm) {
        var name = AlgorithmName(algorithm);
        if (!DERIVE_ALGORITHMS[name]) Fail('Unrecognized algorithm name', 'NotSupportedError');
        var params = Params(algorithm);
        if (name === 'HKDF') {
            return { name: name, hash: HashName(params.hash, 'HkdfParams'), salt: Member(params, 'salt', 'HkdfParams'),
                     info: Member(params, 'info', 'HkdfParams') };
        }
        if (name === 'PBKDF2') {
            var hash = HashName(params.hash, 'Pbkdf2Params');
            var salt = Member(params, 'salt', 'Pbkdf2Params');
            if (params.iterations === undefined) Missing('iterations', 'Pbkdf2Params');
            var iterations = Number(params.iterations);
            if (!isFinite(iterations) || iterations < 0 || iterations > 4294967295) throw new TypeError('iterations is out of range');
            return { name: name, hash: hash, salt: salt, iterations: Math.floor(iterations) };
        }
        if (params['public'] === undefined) Missing('public', 'EcdhKeyDeriveParams');
        if (!(params['public'] instanceof CryptoKey)) throw new TypeError('algorithm.public is not a CryptoKey');
        return { name: name, 'public': params['public'] };
    }
    // The bit length of deriveBits (null: none given).
    function BitLength(length) {
        if (length === undefined || length === null) return null;
        var n = Number(length);
        if (!isFinite(n) || n < 0 || n > 4294967295) throw new TypeError('length is out of range');
        return Math.floor(n);
    }
    function DeriveBits(p, key, length) {
        var secret = UseKey(key, p.name, 'deriveBits');
        if (p.name === 'HKDF' || p.name === 'PBKDF2') {
            if (length === null) Fail('length cannot be null', 'OperationError');
            if (length % 8 !== 0) Fail('length must be a multiple of 8', 'OperationError');
            if (p.name === 'HKDF') {
                if (length > 255 * DIGEST_BYTES[p.hash] * 8) Fail('The operation failed for an operation-specific reason', 'OperationError');
                return nativeHkdf(p.hash, secret, p.salt, p.info, length / 8);
            }
            if (p.iterations === 0) Fail('iterations cannot be zero', 'OperationError');
            if (length > 65536 * 8) Fail('The operation failed for an operation-specific reason', 'OperationError');
            return nativePbkdf2(p.hash, secret, p.salt, p.iterations, length / 8);
        }
        // ECDH, X25519: the shared secret, cut to `length` bits.
        var peer = p['public'];
        if (peer.type !== 'public') Fail('algorithm.public must be a public key', 'InvalidAccessError');
        if (peer.algorithm.name !== key.algorithm.name) Fail('The public and private keys must be of the same type', 'InvalidAccessError');
        if (peer.algorithm.namedCurve !== key.algorithm.namedCurve) Fail('Named curve mismatch', 'InvalidAccessError');
        var curve = p.name === 'X25519' ? 'X25519' : key.algorithm.namedCurve;
        var shared = ec.derive(curve, secret.secret, material.get(peer).pub);
        if (shared === null) Fail('The operation failed for an operation-specific reason', 'OperationError');
        if (length === null) return shared;
        if (length > shared.byteLength * 8) Fail('derived bit length is too small', 'OperationError');
        var bits = new Uint8Array(shared.slice(0, Math.ceil(length / 8)));
        if (length % 8 !== 0) bits[bits.length - 1] &= (0xff << (8 - length % 8)) & 0xff;
        return bits.buffer;
    }
    // The key length deriveKey asks deriveBits for (the specification's "get key length").
    function DerivedKeyLength(name, params) {
        if (name === 'AES-GCM') {
            if (params.length === undefined) Missing('length', 'AesDerivedKeyParams');
            if (params.length !== 128 && params.length !== 192 && params.length !== 256) Fail('Invalid key length', 'OperationError');
            return params.length;
        }
        if (name === 'HMAC') {
            var hash = HashName(params.hash, 'HmacImportParams');
            return params.length !== undefined ? BitLength(params.length) : DIGESTS[hash] * 8;
        }
        return null;  // HKDF, PBKDF2: all the bits there are
    }

    var subtle = {};
    define(subtle, 'digest', function digest(algorithm, data) {
        return Settle(function () {
            var name = AlgorithmName(algorithm);
            if (!DIGESTS[name]) Fail('Unrecognized algorithm name', 'NotSupportedError');
            return nativeDigest(name, Bytes(data, 'data'));
        });
    });
    define(subtle, 'importKey', function importKey(format, keyData, algorithm, extractable, usages) {
        return Settle(function () {
            var name = AlgorithmName(algorithm);
            var spec = KEY_ALGORITHMS[name];
            if (!spec) Fail('Unrecognized algorithm name', 'NotSupportedError');
            if (spec.formats.indexOf(format) < 0) Fail('Unable to import ' + name + ' key with format ' + format, 'NotSupportedError');
            if (spec.pair) return ImportPair(name, format, keyData, Params(algorithm), extractable, usages);
            var bytes;
            if (format === 'raw') {
                bytes = Bytes(keyData, 'keyData');
            } else {
                CheckJwk(keyData, extractable, usages);
                if (keyData.kty !== 'oct') Fail('Invalid keyData', 'DataError');
                bytes = FromBase64Url(keyData.k);
            }
            var key = NewSecretKey(name, Params(algorithm), bytes, extractable, usages);
            if (format === 'jwk' && keyData.alg !== undefined && keyData.alg !== JwkAlg(key)) Fail('Invalid JWK alg', 'DataError');
            return key;
        });
    });
    define(subtle, 'exportKey', function exportKey(format, key) {
        return Settle(function () {
            if (!(key instanceof CryptoKey)) throw new TypeError('key is not a CryptoKey');
            if (!key.extractable) Fail('key is not extractable', 'InvalidAccessError');
            if (KEY_ALGORITHMS[key.algorithm.name].pair) return ExportPair(format, key);
            var bytes = material.get(key);
            if (format === 'raw') return new Uint8Array(bytes).buffer;
            if (format === 'jwk') {
                return { key_ops: key.usages.slice(), ext: true, kty: 'oct', k: Base64Url(bytes), alg: JwkAlg(key) };
            }
            return Fail('Unsupported export key format', 'NotSupportedError');
        });
    });
    define(subtle, 'generateKey', function generateKey(algorithm, extractable, usages) {
        return Settle(function () {
            var name = AlgorithmName(algorithm);
            var spec = KEY_ALGORITHMS[name];
            if (!spec || spec.neverExtractable) Fail('Unrecognized algorithm name', 'NotSupportedError');
            if (spec.pair) {
                var curve = CurveOf(name, Params(algorithm), 'EcKeyGenParams');
                CheckUsages(name, usages, 'private');
                // A generated private key's usages are those asked for, in the specification's order.
                var privateUsages = spec.usages.filter(function (u) { return usages.indexOf(u) >= 0; });
                var keys = ec.generate(curve);
                return {
                    publicKey: NewPairKey(name, curve, null, new Uint8Array(keys[1]), true, []),
                    privateKey: NewPairKey(name, curve, new Uint8Array(keys[0]), new Uint8Array(keys[1]), extractable, privateUsages)
                };
            }
            var bits = name === 'HMAC' ? (algorithm.length !== undefined ? algorithm.length : DIGESTS[HashName(algorithm.hash, 'HmacKeyGenParams')] * 8)
                                       : algorithm.length;
            if (name === 'AES-GCM' && bits !== 128 && bits !== 192 && bits !== 256) Fail('AES key length must be 128, 192 or 256 bits', 'OperationError');
            if (typeof bits !== 'number' || bits <= 0 || bits % 8 !== 0) Fail('Invalid key length', 'OperationError');
            var bytes = new Uint8Array(bits / 8);
            getRandomValues.call(crypto, bytes);
            return NewSecretKey(name, algorithm, bytes, extractable, usages);
        });
    });
    define(subtle, 'sign', function sign(algorithm, key, data) {
        return Settle(function () {
            if (AlgorithmName(algorithm) !== 'HMAC') Fail('Unrecognized algorithm name', 'NotSupportedError');
            var bytes = UseKey(key, 'HMAC', 'sign');
            return nativeHmac(key.algorithm.hash.name, bytes, Bytes(data, 'data'));
        });
    });
    define(subtle, 'verify', function verify(algorithm, key, signature, data) {
        return Settle(function () {
            if (AlgorithmName(algorithm) !== 'HMAC') Fail('Unrecognized algorithm name', 'NotSupportedError');
            var bytes = UseKey(key, 'HMAC', 'verify');
            var expected = new Uint8Array(nativeHmac(key.algorithm.hash.name, bytes, Bytes(data, 'data')));
            return Equal(expected, Bytes(signature, 'signature'));
        });
    });
    define(subtle, 'encrypt', function encrypt(algorithm, key, data) {
        return Settle(function () {
            if (AlgorithmName(algorithm) !== 'AES-GCM') Fail('Unrecognized algorithm name', 'NotSupportedError');
            var p = GcmParams(algorithm);
            return nativeAesGcm(true, UseKey(key, 'AES-GCM', 'encrypt'), p.iv, p.aad, Bytes(data, 'data'), p.tag);
        });
    });
    define(subtle, 'decrypt', function decrypt(algorithm, key, data) {
        return Settle(function () {
            if (AlgorithmName(algorithm) !== 'AES-GCM') Fail('Unrecognized algorithm name', 'NotSupportedError');
            var p = GcmParams(algorithm);
            var out = nativeAesGcm(false, UseKey(key, 'AES-GCM', 'decrypt'), p.iv, p.aad, Bytes(data, 'data'), p.tag);
            if (out === null) Fail('The operation failed for an operation-specific reason', 'OperationError');
            return out;
        });
    });
    define(subtle, 'deriveBits', function deriveBits(algorithm, baseKey, length) {
        return Settle(function () {
            var p = DeriveParams(algorithm);
            if (!(baseKey instanceof CryptoKey)) throw new TypeError('baseKey is not a CryptoKey');
            return DeriveBits(p, baseKey, BitLength(length));
        });
    });
    define(subtle, 'deriveKey', function deriveKey(algorithm, baseKey, derivedKeyAlgorithm, extractable, usages) {
        return Settle(function () {
            var p = DeriveParams(algorithm);
            var derivedName = AlgorithmName(derivedKeyAlgorithm);
            var spec = KEY_ALGORITHMS[derivedName];
            if (!spec || spec.pair) Fail('Unrecognized algorithm name', 'NotSupportedError');
            var derivedParams = Params(derivedKeyAlgorithm);
            if (!(baseKey instanceof CryptoKey)) throw new TypeError('baseKey is not a CryptoKey');
            UseKey(baseKey, p.name, 'deriveKey');
            var length = DerivedKeyLength(derivedName, derivedParams);
            // deriveBits' own usage check is deriveKey's here (the specification derives with the key
            // as it is): a key made for deriveKey alone still derives.
            var bits = DeriveBits(p, WithUsage(baseKey, 'deriveBits'), length);
            return NewSecretKey(derivedName, derivedParams, new Uint8Array(bits), extractable, usages);
        });
    });
    // A stand-in for `key` that has `usage`, for deriveKey's internal deriveBits.
    function WithUsage(key, usage) {
        if (key.usages.indexOf(usage) >= 0) return key;
        return new CryptoKey(key.type, key.algorithm, false, key.usages.concat([usage]), material.get(key));
    }
    ['wrapKey', 'unwrapKey'].forEach(function (method) {
        define(subtle, method, function () { return Reject(method + ' is not supported here', 'NotSupportedError'); });
    });
    define(crypto, 'subtle', subtle);
})(this);
