/*
 * ethers.js: the subset of ethers (v6 names, plus ethers.utils with the v5 names) that actions
 * use most, on top of the native __sigil_crypto(name, argsJson) -> resultJson that the sandbox
 * registers beforehand (workers/sandbox_crypto.h lists its operations). All hashing, keys and
 * signatures are native (common/); this file only shapes values the way ethers does.
 * Evaluation order in a run heap: natives, shims.js, prelude.js, this file, then the built-ins
 * are frozen. Plain ES5.1 (Duktape 2.7 has no Promise): methods that return Promises in ethers
 * return their values directly, and `await` on them works.
 * Bytes are Uint8Array; byte strings are "0x"-prefixed hex, as in ethers.
 */
(function (global) {
    'use strict';

    var nativeCrypto = global.__sigil_crypto;
    if (typeof nativeCrypto !== 'function') {
        throw new Error('ethers.js: __sigil_crypto must be registered first');
    }
    (function () {
        var d = Object.getOwnPropertyDescriptor(global, '__sigil_crypto');
        if (d && d.configurable) delete global.__sigil_crypto;
    })();

    var VERSION = '6.17.0';
    var HEX = '0123456789abcdef';
    var REDACTED = '[ REDACTED ]';

    // --- Errors (shaped like ethers' makeError) -----------------------------------------------
    function describe(value) {
        if (value === REDACTED) return REDACTED;
        try {
            var text = JSON.stringify(value, function (k, v) {
                return (v instanceof Uint8Array) ? hexlifyBytes(v) : v;
            });
            if (text === undefined) text = String(value);
            return text.length > 100 ? text.substring(0, 100) + '...' : text;
        } catch (e) {
            return '[unprintable]';
        }
    }

    function argError(shortMessage, argument, value) {
        var e = new TypeError(shortMessage + ' (argument=' + JSON.stringify(argument) + ', value=' +
                              describe(value) + ', code=INVALID_ARGUMENT, version=' + VERSION + ')');
        e.code = 'INVALID_ARGUMENT';
        e.shortMessage = shortMessage;
        e.argument = argument;
        return e;
    }

    function assertArgument(check, shortMessage, argument, value) {
        if (!check) throw argError(shortMessage, argument, value);
    }

    // One native call; a native failure becomes an INVALID_ARGUMENT error naming `argument`.
    function replacer(key, value) {
        if (value instanceof Uint8Array) return hexlifyBytes(value);
        if (value !== null && typeof value === 'object' && typeof value._hex === 'string' && value._isBigNumber) {
            return value._hex;  // ethers v5 BigNumber
        }
        return value;
    }

    function crypto(name, args, argument, value) {
        var result;
        try {
            result = nativeCrypto(name, JSON.stringify(args, replacer));
        } catch (e) {
            throw argError(String(e && e.message !== undefined ? e.message : e), argument, value);
        }
        return JSON.parse(result);
    }

    // --- Bytes ------------------------------------------------------------------------------
    function hexlifyBytes(bytes) {
        var out = '0x';
        for (var i = 0; i < bytes.length; i++) out += HEX.charAt(bytes[i] >> 4) + HEX.charAt(bytes[i] & 15);
        return out;
    }

    function isHexString(value, length) {
        if (typeof value !== 'string' || !/^0x[0-9A-Fa-f]*$/.test(value)) return false;
        if (typeof length === 'number' && value.length !== 2 + 2 * length) return false;
        if (length === true && (value.length % 2) !== 0) return false;
        return true;
    }

    function decodeHex(hex) {
        var out = new Uint8Array((hex.length - 2) / 2);
        for (var i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 + 2 * i, 2), 16);
        return out;
    }

    // ethers v6 getBytes: a Uint8Array (returned as is) or even-length 0x-hex.
    function getBytes(value, name) {
        if (value instanceof Uint8Array) return value;
        if (typeof value === 'string' && value.length % 2 === 0 && isHexString(value)) return decodeHex(value);
        throw argError('invalid BytesLike value', name || 'value', value);
    }

    function getBytesCopy(value, name) {
        return new Uint8Array(getBytes(value, name));
    }

    function hexlify(data) {
        return hexlifyBytes(getBytes(data));
    }

    function dataLength(data) {
        return getBytes(data).length;
    }

    function concat(datas) {
        var parts = [], total = 0, i;
        for (i = 0; i < datas.length; i++) {
            parts.push(getBytes(datas[i]));
            total += parts[i].length;
        }
        var out = new Uint8Array(total), offset = 0;
        for (i = 0; i < parts.length; i++) {
            out.set(parts[i], offset);
            offset += parts[i].length;
        }
        return hexlifyBytes(out);
    }

    function pad(data, length, left) {
        var bytes = getBytes(data);
        if (length > bytes.length) {
            var out = new Uint8Array(length);
            out.set(bytes, left ? length - bytes.length : 0);
            return hexlifyBytes(out);
        }
        if (length < bytes.length) {
            var e = new RangeError('padding exceeds data length (code=BUFFER_OVERRUN, version=' + VERSION + ')');
            e.code = 'BUFFER_OVERRUN';
            throw e;
        }
        return hexlifyBytes(bytes);
    }

    function zeroPadValue(data, length) { return pad(data, length, true); }
    function zeroPadBytes(data, length) { return pad(data, length, false); }

    function dataSlice(data, start, end) {
        var bytes = getBytes(data);
        if (end != null && end > bytes.length) {
            var e = new RangeError('cannot slice beyond data bounds (code=BUFFER_OVERRUN, version=' + VERSION + ')');
            e.code = 'BUFFER_OVERRUN';
            throw e;
        }
        return hexlifyBytes(bytes.subarray(start == null ? 0 : start, end == null ? bytes.length : end));
    }

    // A non-negative safe integer, as bytes (v5 arrayify/hexlify accept numbers).
    function numberBytes(value, name) {
        assertArgument(value >= 0 && Math.floor(value) === value && value <= 9007199254740991,
                       'invalid arrayify value', name, value);
        var out = [];
        while (value > 0) {
            out.unshift(value % 256);
            value = Math.floor(value / 256);
        }
        if (out.length === 0) out.push(0);
        return new Uint8Array(out);
    }

    // ethers v5 arrayify: also accepts numbers, arrays of bytes and objects with toHexString.
    function arrayify(value) {
        if (typeof value === 'number') return numberBytes(value, 'value');
        if (value !== null && typeof value === 'object' && typeof value.toHexString === 'function') {
            value = value.toHexString();
        }
        if (value instanceof Uint8Array) return new Uint8Array(value);
        if (Array.isArray(value)) {
            for (var i = 0; i < value.length; i++) {
                var v = value[i];
                assertArgument(typeof v === 'number' && v >= 0 && v < 256 && Math.floor(v) === v,
                               'invalid arrayify value', 'value', value);
            }
            return new Uint8Array(value);
        }
        if (typeof value === 'string' && isHexString(value)) {
            assertArgument(value.length % 2 === 0, 'hex data is odd-length', 'value', value);
            return decodeHex(value);
        }
        throw argError('invalid arrayify value', 'value', value);
    }

    function hexlifyV5(value) {
        if (typeof value === 'string' && isHexString(value)) {
            assertArgument(value.length % 2 === 0, 'hex data is odd-length', 'value', value);
            return value.toLowerCase();
        }
        return hexlifyBytes(arrayify(value));
    }

    // --- UTF-8 --------------------------------------------------------------------------------
    // Duktape keeps a non-BMP character from UTF-8 source as one code point above 0xFFFF, and
    // "\uD83D\uDE00" escapes as a surrogate pair; both encode to the same four bytes.
    function toUtf8Bytes(str) {
        assertArgument(typeof str === 'string', 'invalid string value', 'str', str);
        var out = [];
        for (var i = 0; i < str.length; i++) {
            var c = str.charCodeAt(i);
            if (c < 0x80) {
                out.push(c);
            } else if (c < 0x800) {
                out.push((c >> 6) | 0xc0, (c & 0x3f) | 0x80);
            } else if ((c & 0xfc00) === 0xd800 && c <= 0xffff) {
                i++;
                var c2 = i < str.length ? str.charCodeAt(i) : -1;
                assertArgument(c2 >= 0 && (c2 & 0xfc00) === 0xdc00, 'invalid surrogate pair', 'str', str);
                pushCodePoint(out, 0x10000 + ((c & 0x3ff) << 10) + (c2 & 0x3ff));
            } else {
                pushCodePoint(out, c);
            }
        }
        return new Uint8Array(out);
    }

    function pushCodePoint(out, cp) {
        if (cp < 0x10000) {
            out.push((cp >> 12) | 0xe0, ((cp >> 6) & 0x3f) | 0x80, (cp & 0x3f) | 0x80);
        } else {
            assertArgument(cp <= 0x10ffff, 'invalid codepoint', 'str', cp);
            out.push((cp >> 18) | 0xf0, ((cp >> 12) & 0x3f) | 0x80, ((cp >> 6) & 0x3f) | 0x80, (cp & 0x3f) | 0x80);
        }
    }

    // Strict decoding, as ethers' default error function: any malformed sequence throws.
    function toUtf8String(data) {
        var bytes = getBytes(data, 'bytes');
        var out = '';
        var i = 0;
        function bad(reason) { throw argError('invalid codepoint at offset ' + i + '; ' + reason, 'bytes', data); }
        while (i < bytes.length) {
            var c = bytes[i], extra, min, cp;
            if (c < 0x80) { out += String.fromCharCode(c); i++; continue; }
            if ((c & 0xe0) === 0xc0) { extra = 1; min = 0x80; cp = c & 0x1f; }
            else if ((c & 0xf0) === 0xe0) { extra = 2; min = 0x800; cp = c & 0x0f; }
            else if ((c & 0xf8) === 0xf0) { extra = 3; min = 0x10000; cp = c & 0x07; }
            else bad((c & 0xc0) === 0x80 ? 'UNEXPECTED_CONTINUE' : 'BAD_PREFIX');
            if (i + extra >= bytes.length) bad('OVERRUN');
            for (var j = 1; j <= extra; j++) {
                var b = bytes[i + j];
                if ((b & 0xc0) !== 0x80) bad('MISSING_CONTINUE');
                cp = (cp << 6) | (b & 0x3f);
            }
            if (cp > 0x10ffff) bad('OUT_OF_RANGE');
            if (cp >= 0xd800 && cp <= 0xdfff) bad('UTF16_SURROGATE');
            if (cp < min) bad('OVERLONG');
            if (cp < 0x10000) {
                out += String.fromCharCode(cp);
            } else {
                cp -= 0x10000;
                out += String.fromCharCode(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            }
            i += extra + 1;
        }
        return out;
    }

    // --- Hashes -------------------------------------------------------------------------------
    function keccak256(data) {
        return crypto('keccak256', { data: hexlify(getBytes(data, 'data')) }, 'data', data);
    }

    function sha256(data) {
        return crypto('sha256', { data: hexlify(getBytes(data, 'data')) }, 'data', data);
    }

    function id(text) {
        return keccak256(toUtf8Bytes(text));
    }

    function messageBytes(message) {
        return typeof message === 'string' ? toUtf8Bytes(message) : getBytes(message, 'message');
    }

    function hashMessage(message) {
        return crypto('hashMessage', { message: hexlifyBytes(messageBytes(message)) }, 'message', message);
    }

    // --- Addresses ----------------------------------------------------------------------------
    function getAddress(address) {
        assertArgument(typeof address === 'string', 'invalid address', 'address', address);
        return crypto('getAddress', { address: address }, 'address', address);
    }

    function isAddress(value) {
        try {
            getAddress(value);
            return true;
        } catch (e) {
            return false;
        }
    }

    function isAddressable(value) {
        return value !== null && typeof value === 'object' && typeof value.getAddress === 'function';
    }

    // ethers computeAddress: a public key (33 or 65 bytes) or a private key (32 bytes).
    function computeAddress(key) {
        var hex = hexlify(getBytes(key, 'key'));
        return crypto('publicKey', { key: hex }, 'key', hex.length === 66 ? REDACTED : key).address;
    }

    // --- Signatures ---------------------------------------------------------------------------
    // A 65-byte 0x-hex signature from a hex string, bytes, or an {r, s, v | yParity} object.
    function signatureHex(sig) {
        if (sig !== null && typeof sig === 'object' && !(sig instanceof Uint8Array)) {
            if (typeof sig.serialized === 'string') return sig.serialized;
            assertArgument(isHexString(sig.r, 32) && isHexString(sig.s, 32), 'invalid signature', 'signature', sig);
            var parity = sig.yParity != null ? Number(sig.yParity) : Number(sig.v);
            if (parity === 27 || parity === 28) parity -= 27;
            assertArgument(parity === 0 || parity === 1, 'invalid signature', 'signature', sig);
            return sig.r.toLowerCase() + sig.s.substring(2).toLowerCase() + (parity ? '1c' : '1b');
        }
        var bytes = getBytes(sig, 'signature');
        assertArgument(bytes.length === 64 || bytes.length === 65, 'invalid raw signature length', 'signature', sig);
        return hexlifyBytes(bytes);
    }

    function makeSignature(serialized) {
        var v = parseInt(serialized.substring(130, 132), 16);
        var sig = {
            r: '0x' + serialized.substring(2, 66),
            s: '0x' + serialized.substring(66, 130),
            v: v,
            yParity: v - 27,
            serialized: serialized
        };
        return Object.freeze(sig);
    }

    var Signature = Object.freeze({
        from: function (sig) {
            var hex = signatureHex(sig);
            if (hex.length === 130) {
                // EIP-2098 compact: yParity is the top bit of s.
                var top = parseInt(hex.substring(66, 68), 16);
                var s = HEX.charAt((top & 0x7f) >> 4) + HEX.charAt(top & 15) + hex.substring(68);
                hex = hex.substring(0, 66) + s + ((top & 0x80) ? '1c' : '1b');
            }
            var v = parseInt(hex.substring(130, 132), 16);
            if (v === 0 || v === 1) hex = hex.substring(0, 130) + (v ? '1c' : '1b');
            assertArgument(/1[bc]$/.test(hex), 'invalid signature', 'signature', sig);
            return makeSignature(hex);
        }
    });

    function recoverInfo(digest, signature) {
        var d = hexlify(getBytes(digest, 'digest'));
        assertArgument(d.length === 66, 'invalid digest length', 'digest', digest);
        return crypto('recover', { digest: d, signature: signatureHex(signature) }, 'signature', signature);
    }

    function recoverAddress(digest, signature) {
        return recoverInfo(digest, signature).address;
    }

    function verifyMessage(message, signature) {
        return recoverAddress(hashMessage(message), signature);
    }

    // --- EIP-712 ------------------------------------------------------------------------------
    var DOMAIN_FIELDS = { name: 1, version: 1, chainId: 1, verifyingContract: 1, salt: 1 };

    function typedDataArgs(domain, types, value) {
        assertArgument(domain !== null && typeof domain === 'object', 'invalid domain', 'domain', domain);
        assertArgument(types !== null && typeof types === 'object', 'invalid types', 'types', types);
        assertArgument(value !== null && typeof value === 'object', 'invalid value', 'value', value);
        var cleanDomain = {};
        for (var key in domain) {
            if (!Object.prototype.hasOwnProperty.call(domain, key) || domain[key] == null) continue;
            assertArgument(DOMAIN_FIELDS[key] === 1, 'invalid typed-data domain key: ' + JSON.stringify(key),
                           'domain', domain);
            cleanDomain[key] = domain[key];
        }
        return { domain: cleanDomain, types: types, value: value };
    }

    function typedDataInfo(domain, types, value) {
        return crypto('typedDataHash', typedDataArgs(domain, types, value), 'value', value);
    }

    var TypedDataEncoder = Object.freeze({
        hash: function (domain, types, value) { return typedDataInfo(domain, types, value).digest; },
        getPrimaryType: function (types) {
            // The one struct no other struct references (ethers' rule).
            var names = Object.keys(types), referenced = {}, i, j;
            for (i = 0; i < names.length; i++) {
                var fields = types[names[i]];
                for (j = 0; j < fields.length; j++) {
                    var base = String(fields[j].type).replace(/(\[[0-9]*\])+$/, '');
                    if (base !== names[i]) referenced[base] = true;
                }
            }
            var roots = names.filter(function (n) { return !referenced[n]; });
            assertArgument(roots.length === 1, roots.length === 0 ? 'missing primary type' :
                           'ambiguous primary types or unused types', 'types', types);
            return roots[0];
        },
        hashDomainAndStruct: function (domain, types, value) {
            var info = typedDataInfo(domain, types, value);
            return { domain: info.domainSeparator, struct: info.messageHash };
        },
        encodeType: function (domain, types, value) { return typedDataInfo(domain, types, value).encodedType; }
    });

    function verifyTypedData(domain, types, value, signature) {
        return recoverAddress(TypedDataEncoder.hash(domain, types, value), signature);
    }

    // --- Keys and wallets ---------------------------------------------------------------------
    function normalizePrivateKey(key) {
        if (key instanceof Uint8Array) key = hexlifyBytes(key);
        if (key !== null && typeof key === 'object' && typeof key.privateKey === 'string') key = key.privateKey;
        if (typeof key === 'string' && key.substring(0, 2) !== '0x' && key.substring(0, 2) !== '0X') key = '0x' + key;
        assertArgument(typeof key === 'string' && isHexString('0x' + key.substring(2), 32),
                       'invalid private key', 'privateKey', REDACTED);
        return '0x' + key.substring(2).toLowerCase();
    }

    function defineReadOnly(target, name, value, enumerable) {
        Object.defineProperty(target, name, { value: value, enumerable: !!enumerable, writable: false, configurable: false });
    }

    function SigningKey(privateKey) {
        if (!(this instanceof SigningKey)) throw new TypeError("Class constructor SigningKey cannot be invoked without 'new'");
        var key = normalizePrivateKey(privateKey);
        var info = crypto('publicKey', { key: key }, 'privateKey', REDACTED);
        defineReadOnly(this, 'privateKey', key, false);
        defineReadOnly(this, 'publicKey', info.publicKey, false);
        defineReadOnly(this, 'compressedPublicKey', info.compressedPublicKey, false);
        defineReadOnly(this, 'address', info.address, false);
    }
    SigningKey.prototype.sign = function (digest) {
        var d = hexlify(getBytes(digest, 'digest'));
        assertArgument(d.length === 66, 'invalid digest length', 'digest', digest);
        return makeSignature(crypto('signDigest', { privateKey: this.privateKey, digest: d }, 'digest', digest));
    };
    SigningKey.computePublicKey = function (key, compressed) {
        var hex = hexlify(getBytes(key, 'key'));
        var info = crypto('publicKey', { key: hex }, 'key', hex.length === 66 ? REDACTED : key);
        return compressed ? info.compressedPublicKey : info.publicKey;
    };
    SigningKey.recoverPublicKey = function (digest, signature) {
        return recoverInfo(digest, signature).publicKey;
    };
    Object.freeze(SigningKey.prototype);
    Object.freeze(SigningKey);

    // A transaction quantity as a decimal or 0x-hex string for the native (getBigInt's inputs).
    function quantity(value, name) {
        if (value == null) return undefined;
        if (typeof value === 'number') {
            assertArgument(Math.floor(value) === value && value >= 0, 'invalid BigNumberish value', name, value);
            assertArgument(value <= 9007199254740991, 'overflow', name, value);
            return String(value);
        }
        if (value !== null && typeof value === 'object') {
            if (typeof value._hex === 'string') return value._hex;
            if (typeof value.toHexString === 'function') return value.toHexString();
        }
        assertArgument(typeof value === 'string' && (/^0x[0-9a-fA-F]+$/.test(value) || /^[0-9]+$/.test(value)),
                       'invalid BigNumberish value', name, value);
        return value;
    }

    // ethers 6's Transaction.inferType: an explicit type wins; else maxFeePerGas or
    // maxPriorityFeePerGas means 2, a gasPrice alone means 1 (EIP-2930), nothing means 2.
    function transactionType(tx) {
        var hasFee = tx.maxFeePerGas != null || tx.maxPriorityFeePerGas != null;
        var hasGasPrice = tx.gasPrice != null;
        if (tx.type != null) {
            var type = Number(quantity(tx.type, 'tx.type'));
            assertArgument(!hasFee || (type !== 0 && type !== 1),
                           'transaction type cannot have maxFeePerGas or maxPriorityFeePerGas', 'tx', tx);
            assertArgument(type !== 0 || tx.accessList == null, 'legacy transaction cannot have accessList', 'tx', tx);
            assertArgument(type === 0 || type === 1 || type === 2, 'unsupported transaction type', 'tx.type', tx.type);
            return type;
        }
        if (hasFee) return 2;
        return hasGasPrice ? 1 : 2;
    }

    function Wallet(privateKey, provider) {
        if (!(this instanceof Wallet)) throw new TypeError("Class constructor Wallet cannot be invoked without 'new'");
        var signingKey = privateKey instanceof SigningKey ? privateKey : new SigningKey(privateKey);
        defineReadOnly(this, 'provider', provider == null ? null : provider, true);
        defineReadOnly(this, 'address', signingKey.address, true);
        defineReadOnly(this, 'signingKey', signingKey, false);
        defineReadOnly(this, 'privateKey', signingKey.privateKey, false);
        // ethers v5's Wallet.publicKey (v6 keeps it on signingKey only).
        defineReadOnly(this, 'publicKey', signingKey.publicKey, false);
        Object.freeze(this);
    }
    Wallet.prototype.getAddress = function () { return this.address; };
    Wallet.prototype.connect = function (provider) { return new Wallet(this.signingKey, provider); };
    Wallet.prototype.signMessage = function (message) {
        var bytes = messageBytes(message);
        return crypto('signMessage', { privateKey: this.privateKey, message: hexlifyBytes(bytes) }, 'message', message);
    };
    Wallet.prototype.signMessageSync = Wallet.prototype.signMessage;
    Wallet.prototype.signTypedData = function (domain, types, value) {
        var args = typedDataArgs(domain, types, value);
        args.privateKey = this.privateKey;
        return crypto('signTypedData', args, 'value', value);
    };
    Wallet.prototype._signTypedData = Wallet.prototype.signTypedData;
    Wallet.prototype.signTransaction = function (tx) {
        assertArgument(tx !== null && typeof tx === 'object', 'invalid transaction', 'tx', tx);
        if (tx.from != null) {
            assertArgument(getAddress(tx.from) === this.address, 'transaction from address mismatch', 'tx.from', tx.from);
        }
        assertArgument(tx.accessList == null || (Array.isArray(tx.accessList) && tx.accessList.length === 0),
                       'non-empty accessList is not supported', 'tx.accessList', tx.accessList);
        var type = transactionType(tx);
        var gasLimit = tx.gasLimit != null ? tx.gasLimit : tx.gas;
        var fields = {
            type: type,
            chainId: quantity(tx.chainId, 'tx.chainId'),
            nonce: quantity(tx.nonce, 'tx.nonce'),
            gasLimit: quantity(gasLimit, 'tx.gasLimit'),
            value: quantity(tx.value, 'tx.value'),
            to: tx.to == null ? null : getAddress(tx.to),
            data: tx.data == null ? undefined : hexlify(getBytes(tx.data, 'tx.data'))
        };
        if (type === 2) {
            fields.maxFeePerGas = quantity(tx.maxFeePerGas, 'tx.maxFeePerGas');
            fields.maxPriorityFeePerGas = quantity(tx.maxPriorityFeePerGas, 'tx.maxPriorityFeePerGas');
        } else {
            fields.gasPrice = quantity(tx.gasPrice, 'tx.gasPrice');
        }
        return crypto('signTransaction', { privateKey: this.privateKey, tx: fields }, 'tx', tx);
    };
    Object.freeze(Wallet.prototype);
    Object.freeze(Wallet);

    // --- Exports ------------------------------------------------------------------------------
    var utils = Object.freeze({
        arrayify: arrayify,
        hexlify: hexlifyV5,
        isHexString: isHexString,
        hexDataLength: dataLength,
        hexConcat: concat,
        hexZeroPad: zeroPadValue,
        keccak256: keccak256,
        sha256: sha256,
        id: id,
        toUtf8Bytes: toUtf8Bytes,
        toUtf8String: toUtf8String,
        verifyMessage: verifyMessage,
        verifyTypedData: verifyTypedData,
        recoverAddress: recoverAddress,
        hashMessage: hashMessage,
        getAddress: getAddress,
        isAddress: isAddress,
        computeAddress: computeAddress,
        computePublicKey: SigningKey.computePublicKey,
        recoverPublicKey: SigningKey.recoverPublicKey,
        splitSignature: Signature.from,
        _TypedDataEncoder: TypedDataEncoder
    });

    var ethers = {
        version: VERSION,
        Wallet: Wallet,
        SigningKey: SigningKey,
        Signature: Signature,
        TypedDataEncoder: TypedDataEncoder,
        keccak256: keccak256,
        sha256: sha256,
        id: id,
        toUtf8Bytes: toUtf8Bytes,
        toUtf8String: toUtf8String,
        hexlify: hexlify,
        getBytes: getBytes,
        getBytesCopy: getBytesCopy,
        arrayify: arrayify,
        isHexString: isHexString,
        isBytesLike: function (v) { return (v instanceof Uint8Array) || isHexString(v, true); },
        dataLength: dataLength,
        dataSlice: dataSlice,
        concat: concat,
        zeroPadValue: zeroPadValue,
        zeroPadBytes: zeroPadBytes,
        hashMessage: hashMessage,
        verifyMessage: verifyMessage,
        recoverAddress: recoverAddress,
        verifyTypedData: verifyTypedData,
        getAddress: getAddress,
        isAddress: isAddress,
        isAddressable: isAddressable,
        computeAddress: computeAddress,
        ZeroAddress: '0x0000000000000000000000000000000000000000',
        ZeroHash: '0x0000000000000000000000000000000000000000000000000000000000000000',
        utils: utils
    };
    Object.defineProperty(global, 'ethers', {
        value: Object.freeze(ethers), writable: false, enumerable: false, configurable: false
    });
})(this);
