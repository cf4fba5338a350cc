/*
 * globals.js: the web globals actions written for V8/Deno use (DESIGN.md section 5), put together
 * from npm packages that the build joins into web_packages.js (js_bundle.mjs):
 *   URL, URLSearchParams        whatwg-url-without-unicode (the WHATWG URL Standard's reference
 *                               implementation, less IDNA mapping: punycode only)
 *   TextEncoder, TextDecoder    text-encoding-utf-8 (the Encoding Standard's UTF-8 with fatal,
 *                               ignoreBOM and stream)
 *   atob, btoa                  base-64
 *   Headers, Request, Response  whatwg-fetch (its fetch is not used: prelude.js has the real one),
 *                               with bodies as streams (StreamBodies below)
 *   ReadableStream, WritableStream, TransformStream and their readers, writers, controllers and
 *   queuing strategies         web-streams-polyfill (its ES5 build)
 *   structuredClone             @ungap/structured-clone
 * and thin glue here: DOMException with the legacy codes, crypto.getRandomValues over a native
 * that reads the kernel's getrandom, crypto.randomUUID, AggregateError for Promise.any.
 * crypto.subtle is subtle.js's, evaluated right after this file.
 *
 * Evaluation order in the prepared heap: natives, shims.js, this file and subtle.js (one source:
 * WebGlobalsSource), web_packages.js (which calls __sigil_modules_install below), prelude.js.
 * Everything here is plain ES5.1.
 */
(function (global) {
    'use strict';

    var nativeRandom = global.__sigil_random_fill;
    if (typeof nativeRandom !== 'function') throw new Error('globals.js: __sigil_random_fill must come first');
    delete global.__sigil_random_fill;
    var nativeUtf8Encode = global.__sigil_utf8_encode;
    if (typeof nativeUtf8Encode !== 'function') throw new Error('globals.js: __sigil_utf8_encode must come first');
    delete global.__sigil_utf8_encode;
    var nativeUtf8Decode = global.__sigil_utf8_decode;
    if (typeof nativeUtf8Decode !== 'function') throw new Error('globals.js: __sigil_utf8_decode must come first');
    delete global.__sigil_utf8_decode;
    function TakeNative(name) {
        var f = global[name];
        if (typeof f !== 'function') throw new Error('globals.js: ' + name + ' must come first');
        delete global[name];
        return f;
    }
    var nativeUnorm = TakeNative('__sigil_unorm');

    function define(target, name, value) {
        Object.defineProperty(target, name, { value: value, writable: true, configurable: true, enumerable: false });
    }

    // --- Array.prototype[Symbol.iterator]: Duktape 2.7 has Symbol.iterator but no array
    // iterator; URLSearchParams' iterators (webidl2js) derive %IteratorPrototype% from one.
    if (typeof Symbol === 'function' && Symbol.iterator && typeof Array.prototype[Symbol.iterator] !== 'function') {
        var IteratorPrototype = {};
        define(IteratorPrototype, Symbol.iterator, function () { return this; });
        var ArrayIteratorPrototype = Object.create(IteratorPrototype);
        define(ArrayIteratorPrototype, 'next', function next() {
            var a = this.__array;
            if (a === undefined || this.__index >= a.length) {
                this.__array = undefined;
                return { value: undefined, done: true };
            }
            var i = this.__index++;
            return { value: this.__kind === 'keys' ? i : this.__kind === 'values' ? a[i] : [i, a[i]], done: false };
        });
        var ArrayIterator = function (array, kind) {
            var it = Object.create(ArrayIteratorPrototype);
            define(it, '__array', Object(array));
            define(it, '__index', 0);
            define(it, '__kind', kind);
            return it;
        };
        var values = function values() { return ArrayIterator(this, 'values'); };
        define(Array.prototype, Symbol.iterator, values);
        if (typeof Array.prototype.values !== 'function') define(Array.prototype, 'values', values);
        if (typeof Array.prototype.keys !== 'function') define(Array.prototype, 'keys', function keys() { return ArrayIterator(this, 'keys'); });
        if (typeof Array.prototype.entries !== 'function') define(Array.prototype, 'entries', function entries() { return ArrayIterator(this, 'entries'); });
    }

    // Object.prototype.toString names shims.js's collections as the built-ins' would
    // ([object Map]); structuredClone tells a Map from a plain object that way.
    if (typeof Symbol === 'function' && Symbol.toStringTag) {
        ['Map', 'Set', 'WeakMap'].forEach(function (name) {
            var C = global[name];
            if (typeof C === 'function' && !Object.prototype.hasOwnProperty.call(C.prototype, Symbol.toStringTag)) {
                Object.defineProperty(C.prototype, Symbol.toStringTag, { value: name, writable: false, configurable: true, enumerable: false });
            }
        });
    }

    // --- DOMException: name, message and the legacy numeric code, as in WebIDL ------------
    var LEGACY_CODES = {
        IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
        NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
        SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
        TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20,
        URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24,
        DataCloneError: 25
    };
    function DOMException(message, name) {
        if (!(this instanceof DOMException)) throw new TypeError("Failed to construct 'DOMException': Please use the 'new' operator");
        var error = new Error(message === undefined ? '' : String(message));
        define(this, 'message', error.message);
        define(this, 'name', name === undefined ? 'Error' : String(name));
        define(this, 'code', LEGACY_CODES[this.name] || 0);
        if (error.stack !== undefined) define(this, 'stack', error.stack);
    }
    DOMException.prototype = Object.create(Error.prototype);
    define(DOMException.prototype, 'constructor', DOMException);
    for (var codeName in LEGACY_CODES) {
        var constant = codeName.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase().replace(/_ERROR$/, '_ERR');
        define(DOMException, constant, LEGACY_CODES[codeName]);
    }
    define(global, 'DOMException', DOMException);

    // --- AggregateError (Promise.any in shims.js rejects with one) ------------------------
    function AggregateError(errors, message) {
        if (!(this instanceof AggregateError)) return new AggregateError(errors, message);
        var error = new Error(message === undefined ? '' : String(message));
        if (message !== undefined) define(this, 'message', error.message);
        define(this, 'errors', Array.from(errors));
        if (error.stack !== undefined) define(this, 'stack', error.stack);
    }
    AggregateError.prototype = Object.create(Error.prototype);
    define(AggregateError.prototype, 'constructor', AggregateError);
    define(AggregateError.prototype, 'name', 'AggregateError');
    define(AggregateError.prototype, 'message', '');
    define(global, 'AggregateError', AggregateError);

    // --- Event, EventTarget, AbortController, AbortSignal: what fetch timeouts and cancellation
    // use (`new AbortController()`, `AbortSignal.timeout(ms)`, `{signal}`), after the DOM Standard:
    // listeners in order, once, removal, handleEvent objects, `on<type>` attributes, reason and
    // throwIfAborted. No capture/bubbling (nothing here has a tree). The npm shims checked
    // (event-target-shim 5 has no Event constructor, 6 needs @babel/runtime or ES2022 classes)
    // did not fit, so this is the small part actions touch.
    function Event(type, init) {
        if (!(this instanceof Event)) throw new TypeError("Failed to construct 'Event': Please use the 'new' operator");
        if (arguments.length === 0) throw new TypeError("Failed to construct 'Event': 1 argument required");
        define(this, 'type', String(type));
        define(this, 'bubbles', !!(init && init.bubbles));
        define(this, 'cancelable', !!(init && init.cancelable));
        define(this, 'defaultPrevented', false);
        define(this, 'target', null);
        define(this, 'currentTarget', null);
        define(this, 'timeStamp', Date.now());
        define(this, 'isTrusted', false);
    }
    define(Event.prototype, 'preventDefault', function preventDefault() {
        if (this.cancelable) define(this, 'defaultPrevented', true);
    });
    define(Event.prototype, 'stopPropagation', function stopPropagation() {});
    define(Event.prototype, 'stopImmediatePropagation', function stopImmediatePropagation() { define(this, '__stopped', true); });
    define(global, 'Event', Event);

    var listenerLists = new WeakMap();
    function EventTarget() {
        if (!(this instanceof EventTarget)) throw new TypeError("Failed to construct 'EventTarget': Please use the 'new' operator");
        listenerLists.set(this, []);
    }
    function Listeners(target) {
        var list = listenerLists.get(target);
        if (!list) { list = []; listenerLists.set(target, list); }
        return list;
    }
    define(EventTarget.prototype, 'addEventListener', function addEventListener(type, callback, options) {
        if (callback === null || callback === undefined) return;
        var list = Listeners(this);
        var once = !!(options && typeof options === 'object' && options.once);
        var signal = options && typeof options === 'object' ? options.signal : undefined;
        if (signal && signal.aborted) return;
        for (var i = 0; i < list.length; i++) if (list[i].type === String(type) && list[i].callback === callback) return;
        var entry = { type: String(type), callback: callback, once: once, removed: false };
        list.push(entry);
        var self = this;
        if (signal) signal.addEventListener('abort', function () { self.removeEventListener(type, callback); });
    });
    define(EventTarget.prototype, 'removeEventListener', function removeEventListener(type, callback) {
        var list = Listeners(this);
        for (var i = 0; i < list.length; i++) {
            if (list[i].type === String(type) && list[i].callback === callback) {
                list[i].removed = true;
                list.splice(i, 1);
                return;
            }
        }
    });
    define(EventTarget.prototype, 'dispatchEvent', function dispatchEvent(event) {
        if (!(event instanceof Event)) throw new TypeError("Failed to execute 'dispatchEvent' on 'EventTarget': parameter 1 is not of type 'Event'.");
        define(event, 'target', this);
        define(event, 'currentTarget', this);
        var handler = this['on' + event.type];
        var list = Listeners(this).slice();
        if (typeof handler === 'function') handler.call(this, event);
        for (var i = 0; i < list.length && !event.__stopped; i++) {
            var entry = list[i];
            if (entry.removed || entry.type !== event.type) continue;
            if (entry.once) this.removeEventListener(entry.type, entry.callback);
            if (typeof entry.callback === 'function') entry.callback.call(this, event);
            else if (entry.callback && typeof entry.callback.handleEvent === 'function') entry.callback.handleEvent(event);
        }
        define(event, 'currentTarget', null);
        return !event.defaultPrevented;
    });
    define(global, 'EventTarget', EventTarget);

    var constructing = false;
    function AbortSignal() {
        if (!constructing) throw new TypeError('Illegal constructor');
        EventTarget.call(this);
        define(this, 'aborted', false);
        define(this, 'reason', undefined);
        this.onabort = null;
    }
    AbortSignal.prototype = Object.create(EventTarget.prototype);
    define(AbortSignal.prototype, 'constructor', AbortSignal);
    function NewSignal() {
        constructing = true;
        try { return new AbortSignal(); } finally { constructing = false; }
    }
    function SignalAbort(signal, reason) {
        if (signal.aborted) return;
        define(signal, 'aborted', true);
        define(signal, 'reason', reason !== undefined ? reason : new DOMException('This operation was aborted', 'AbortError'));
        signal.dispatchEvent(new Event('abort'));
    }
    define(AbortSignal.prototype, 'throwIfAborted', function throwIfAborted() {
        if (this.aborted) throw this.reason;
    });
    define(AbortSignal, 'abort', function abort(reason) {
        var signal = NewSignal();
        SignalAbort(signal, reason);
        return signal;
    });
    define(AbortSignal, 'timeout', function timeout(ms) {
        var signal = NewSignal();
        global.setTimeout(function () {
            SignalAbort(signal, new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
        }, ms);
        return signal;
    });
    define(AbortSignal, 'any', function any(signals) {
        var signal = NewSignal();
        var list = Array.from(signals);
        for (var i = 0; i < list.length; i++) {
            if (list[i].aborted) { SignalAbort(signal, list[i].reason); return signal; }
        }
        list.forEach(function (s) { s.addEventListener('abort', function () { SignalAbort(signal, s.reason); }); });
        return signal;
    });
    define(global, 'AbortSignal', AbortSignal);

    function AbortController() {
        if (!(this instanceof AbortController)) throw new TypeError("Failed to construct 'AbortController': Please use the 'new' operator");
        define(this, 'signal', NewSignal());
    }
    define(AbortController.prototype, 'abort', function abort(reason) { SignalAbort(this.signal, reason); });
    define(global, 'AbortController', AbortController);

    // --- String.prototype.normalize (Duktape has none): unorm from npm, compiled on the first
    // call with non-ASCII text (ASCII is the same in every normalization form). ethers v5 needs it
    // for mnemonics and ENS names.
    var unorm = null;
    define(String.prototype, 'normalize', function normalize() {
        if (this === null || this === undefined) throw new TypeError('String.prototype.normalize called on null or undefined');
        var str = String(this);
        var form = arguments.length === 0 || arguments[0] === undefined ? 'NFC' : String(arguments[0]);
        if (form !== 'NFC' && form !== 'NFD' && form !== 'NFKC' && form !== 'NFKD') {
            throw new RangeError('The normalization form should be one of NFC, NFD, NFKC, NFKD.');
        }
        if (/^[\x00-\x7f]*$/.test(str)) return str;
        if (unorm === null) unorm = nativeUnorm();
        return unorm[form.toLowerCase()](str);
    });

    // --- crypto ---------------------------------------------------------------------------
    var MAX_RANDOM_BYTES = 65536;
    var INTEGER_ARRAYS = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
                          'Int32Array', 'Uint32Array'];
    function IsIntegerArray(v) {
        for (var i = 0; i < INTEGER_ARRAYS.length; i++) {
            var Ctor = global[INTEGER_ARRAYS[i]];
            if (typeof Ctor === 'function' && v instanceof Ctor) return true;
        }
        return false;
    }
    var crypto = {};
    define(crypto, 'getRandomValues', function getRandomValues(array) {
        if (!IsIntegerArray(array)) {
            throw new DOMException('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
        }
        if (array.byteLength > MAX_RANDOM_BYTES) {
            throw new DOMException('The requested length exceeds 65,536 bytes', 'QuotaExceededError');
        }
        nativeRandom(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
        return array;
    });
    var HEX = '0123456789abcdef';
    define(crypto, 'randomUUID', function randomUUID() {
        var b = new Uint8Array(16);
        nativeRandom(b);
        b[6] = (b[6] & 0x0f) | 0x40;  // version 4
        b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
        var s = '';
        for (var i = 0; i < 16; i++) {
            if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
            s += HEX.charAt(b[i] >> 4) + HEX.charAt(b[i] & 15);
        }
        return s;
    });
    define(global, 'crypto', crypto);

    // --- the packages ---------------------------------------------------------------------
    // whatwg-url works on Node Buffers; these few members over UTF-8 byte arrays are all it uses.
    var encoder = null, decoder = null;
    function Bytes(array) {
        define(array, 'byteLength', array.length);
        define(array, 'slice', function (from, to) { return Bytes(Array.prototype.slice.call(this, from, to)); });
        define(array, 'toString', function () { return decoder.decode(new Uint8Array(this)); });
        return array;
    }
    var BufferGlue = {
        alloc: function (n) {
            var a = new Array(n);
            for (var i = 0; i < n; i++) a[i] = 0;
            return Bytes(a);
        },
        from: function (v) {
            if (typeof v === 'string') v = encoder.encode(v);
            return Bytes(Array.prototype.slice.call(v));
        }
    };
    define(global, '__sigil_bundle_Buffer', BufferGlue);

    // Host names: UTS #46 processing reduced to what needs no Unicode tables (the package has no
    // tr46): the ideographic full stops are dots, letters are lowercased, and a label with
    // non-ASCII letters is punycode-encoded. NFC normalisation and the disallowed code points are
    // not applied (Duktape has no String.prototype.normalize).
    var punycode = null;
    define(global, '__sigil_bundle_glue', {
        domainToASCII: function (domain) {
            return domain.replace(/[\u3002\uff0e\uff61]/g, '.').toLowerCase().split('.').map(function (label) {
                return /[^\x00-\x7f]/.test(label) ? 'xn--' + punycode.encode(label) : label;
            }).join('.');
        }
    });

    define(global, '__sigil_modules_install', function (load) {
        delete global.__sigil_modules_install;
        delete global.__sigil_bundle_Buffer;
        delete global.__sigil_bundle_glue;
        punycode = load('punycode');
        var text = load('text-encoding');
        // The package's encode walks code points one by one (seconds for a 44 KB JSON-RPC answer
        // in Duktape): the native gives the same well-formed UTF-8 (lone surrogates as U+FFFD).
        define(text.TextEncoder.prototype, 'encode', function encode(input) {
            return nativeUtf8Encode(input === undefined ? '' : String(input));
        });
        encoder = new text.TextEncoder();
        decoder = new text.TextDecoder();
        define(global, 'TextEncoder', text.TextEncoder);
        // The package knows the label 'utf-8' only; the Encoding Standard's other UTF-8 labels
        // name the same decoder, and an unknown label is a RangeError.
        var UTF8_LABELS = ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8', 'x-unicode20utf8'];
        var PackageDecoder = text.TextDecoder;
        // Whole buffers decode natively (the package's decoder, like its encoder, takes seconds for
        // tens of KB in Duktape); a decoder once used with {stream: true} keeps the package's state.
        var packageDecode = PackageDecoder.prototype.decode;
        define(PackageDecoder.prototype, 'decode', function decode(input, options) {
            if (this._streaming || (options && options.stream)) return packageDecode.call(this, input, options);
            var bytes;
            if (input === undefined) bytes = new Uint8Array(0);
            else if (input instanceof ArrayBuffer) bytes = new Uint8Array(input);
            else if (input && input.buffer instanceof ArrayBuffer) bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
            else return packageDecode.call(this, input, options);  // its TypeError for anything else
            return nativeUtf8Decode(bytes, this.fatal, this.ignoreBOM);
        });
        var TextDecoder = function TextDecoder(label, options) {
            if (!(this instanceof TextDecoder)) throw new TypeError("Class constructor TextDecoder cannot be invoked without 'new'");
            var name = label === undefined ? 'utf-8' : String(label).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '').toLowerCase();
            if (UTF8_LABELS.indexOf(name) < 0) throw new RangeError('The "' + label + '" encoding is not supported');
            return new PackageDecoder('utf-8', options);
        };
        TextDecoder.prototype = PackageDecoder.prototype;
        define(TextDecoder.prototype, 'constructor', TextDecoder);
        define(global, 'TextDecoder', TextDecoder);

        // atob/btoa: the package throws its own InvalidCharacterError; the web throws a DOMException.
        var base64 = load('base64');
        function Web(fn) {
            return function (data) {
                if (arguments.length === 0) throw new TypeError('1 argument required, but only 0 present.');
                try {
                    return fn(String(data));
                } catch (e) {
                    if (e && e.name === 'InvalidCharacterError') throw new DOMException(e.message, 'InvalidCharacterError');
                    throw e;
                }
            };
        }
        define(global, 'atob', Web(base64.decode));
        define(global, 'btoa', Web(base64.encode));

        var url = load('url');
        define(global, 'URL', url.URL);
        define(global, 'URLSearchParams', url.URLSearchParams);

        // structuredClone: what the package cannot serialise (functions, symbols) is the web's
        // DataCloneError.
        var clone = load('structured-clone')['default'];
        define(global, 'structuredClone', function structuredClone(value) {
            if (arguments.length === 0) throw new TypeError("The \"value\" argument must be specified");
            try {
                return clone(value);
            } catch (e) {
                if (e instanceof TypeError && /^unable to serialize/.test(e.message)) throw new DOMException(e.message, 'DataCloneError');
                throw e;
            }
        });

        // The WHATWG Streams that Node has as globals (web-streams-polyfill, its ES5 build).
        var streams = load('streams');
        ['ReadableStream', 'ReadableStreamDefaultReader', 'ReadableStreamBYOBReader', 'ReadableStreamBYOBRequest',
         'ReadableStreamDefaultController', 'ReadableByteStreamController', 'WritableStream', 'WritableStreamDefaultWriter',
         'WritableStreamDefaultController', 'TransformStream', 'TransformStreamDefaultController',
         'ByteLengthQueuingStrategy', 'CountQueuingStrategy'].forEach(function (name) {
            if (typeof streams[name] !== 'function') throw new Error('globals.js: web-streams-polyfill has no ' + name);
            define(global, name, streams[name]);
        });

        var fetchTypes = load('fetch');
        // Iteration follows the Fetch Standard: names sorted (the package keeps insertion order);
        // keys, values and entries go through forEach.
        define(fetchTypes.Headers.prototype, 'forEach', function forEach(callback, thisArg) {
            var names = Object.keys(this.map).sort();
            for (var i = 0; i < names.length; i++) callback.call(thisArg, this.map[names[i]], names[i], this);
        });
        // Header values lose their leading and trailing HTTP whitespace, as the Fetch Standard
        // normalises them (the package keeps them).
        var HeadersProto = fetchTypes.Headers.prototype;
        ['append', 'set'].forEach(function (method) {
            var original = HeadersProto[method];
            define(HeadersProto, method, function (name, value) {
                return original.call(this, name, String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ''));
            });
        });
        define(global, 'Headers', fetchTypes.Headers);
        define(global, 'Request', fetchTypes.Request);
        define(global, 'Response', fetchTypes.Response);
        StreamBodies(fetchTypes, streams.ReadableStream);
    });

    // --- Request and Response bodies as streams, as the Fetch Standard has them ---------------
    // whatwg-fetch keeps a body as text or an ArrayBuffer and has no `body`. Here `body` is a
    // ReadableStream of one Uint8Array chunk (null for a body-less message), made when first read;
    // text(), json() and arrayBuffer() read that stream when there is one, and a Response made
    // from a ReadableStream reads it. bodyUsed is the stream's "disturbed" (or, before there is a
    // stream, whether a reader method ran), so a body is read once, whichever way: a locked or
    // read stream makes text() reject with a TypeError, and a body read by text() gives a locked
    // stream. Text and bytes go through UTF-8 both ways, as in a browser (the package reads an
    // ArrayBuffer as Latin-1 and cannot give text as an ArrayBuffer without Blob).
    function StreamBodies(fetchTypes, ReadableStream) {
        var streams = new WeakMap();  // body -> its stream, once there is one
        var used = new WeakMap();     // body -> true once read without a stream
        var UNUSABLE = 'Body is unusable: Body has already been read';
        function Disturbed(stream) { return stream._disturbed === true; }
        function HasBody(body) { return body._bodyInit !== null && body._bodyInit !== undefined; }
        // The bytes of a text or binary body (a copy: the caller may keep them).
        function BodyBytes(body) {
            if (body._bodyArrayBuffer !== undefined) return new Uint8Array(body._bodyArrayBuffer.slice(0));
            if (typeof body._bodyText === 'string') return encoder.encode(body._bodyText);
            return new Uint8Array(0);
        }
        function Concat(chunks, total) {
            if (chunks.length === 1) return chunks[0];
            var out = new Uint8Array(total), at = 0;
            for (var i = 0; i < chunks.length; i++) { out.set(chunks[i], at); at += chunks[i].byteLength; }
            return out;
        }
        // All of a body's bytes, or a TypeError when it was read before.
        function ReadAll(body) {
            var stream = streams.get(body);
            if (stream === undefined) {
                if (used.get(body)) return Promise.reject(new TypeError(UNUSABLE));
                used.set(body, true);
                return Promise.resolve(null);  // the caller takes the package's fields
            }
            if (stream.locked || Disturbed(stream)) return Promise.reject(new TypeError(UNUSABLE));
            var reader = stream.getReader(), chunks = [], total = 0;
            return new Promise(function (resolve, reject) {
                (function next() {
                    reader.read().then(function (r) {
                        if (r.done) return resolve(Concat(chunks, total));
                        if (!(r.value instanceof Uint8Array)) return reject(new TypeError('Received non-Uint8Array chunk'));
                        chunks.push(r.value);
                        total += r.value.byteLength;
                        next();
                    }, reject);
                })();
            });
        }
        [fetchTypes.Request.prototype, fetchTypes.Response.prototype].forEach(function (proto) {
            // The package assigns bodyUsed on instances (which would throw once the sandbox freezes
            // the prototype): the accessor takes those writes.
            delete proto.bodyUsed;
            Object.defineProperty(proto, 'bodyUsed', {
                get: function () {
                    var stream = streams.get(this);
                    return stream !== undefined ? Disturbed(stream) : used.get(this) === true;
                },
                set: function (v) { used.set(this, !!v); },
                configurable: true, enumerable: false
            });
            Object.defineProperty(proto, 'body', {
                get: function () {
                    var stream = streams.get(this);
                    if (stream !== undefined) return stream;
                    if (!HasBody(this)) return null;
                    var consumed = used.get(this) === true;
                    var bytes = consumed ? null : BodyBytes(this);
                    stream = new ReadableStream({
                        start: function (controller) {
                            if (bytes !== null && bytes.byteLength > 0) controller.enqueue(bytes);
                            controller.close();
                        }
                    });
                    streams.set(this, stream);
                    // Read already: the stream is locked and disturbed, as after a read through it.
                    if (consumed) stream.getReader().read();
                    return stream;
                },
                configurable: true, enumerable: false
            });
            var initBody = proto._initBody;
            define(proto, '_initBody', function (body) {
                if (!(body instanceof ReadableStream)) return initBody.call(this, body);
                if (body.locked || Disturbed(body)) throw new TypeError('Response body object should not be disturbed or locked');
                initBody.call(this, null);
                this._bodyInit = body;
                streams.set(this, body);
            });
            define(proto, 'text', function text() {
                var self = this;
                return ReadAll(this).then(function (bytes) {
                    if (bytes === null && typeof self._bodyText === 'string' && self._bodyArrayBuffer === undefined) return self._bodyText;
                    return decoder.decode(bytes === null ? BodyBytes(self) : bytes);
                });
            });
            define(proto, 'arrayBuffer', function arrayBuffer() {
                var self = this;
                return ReadAll(this).then(function (bytes) {
                    if (bytes === null) bytes = BodyBytes(self);
                    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
                });
            });
            // A stream body is split in two (tee), one for each message; other bodies are copied.
            var clone = proto.clone;
            define(proto, 'clone', function () {
                var stream = streams.get(this);
                if (this.bodyUsed || (stream !== undefined && stream.locked)) {
                    throw new TypeError('Response.clone: Body has already been consumed.');
                }
                if (stream === undefined || this._bodyInit !== stream) return clone.call(this);
                var branches = stream.tee();
                this._bodyInit = branches[1];
                var copy = clone.call(this);
                this._bodyInit = branches[0];
                streams.set(this, branches[0]);
                return copy;
            });
        });
    }
})(this);
