/*
 * prelude.js: the action-side API, evaluated in each run's fresh heap after shims.js and before
 * the action. It defines Sigil.Actions, the Lit.Actions / LitActions aliases, console and fetch
 * on top of two natives the sandbox registers as globals beforehand:
 *   __sigil_op(name, json_arg) -> json_result   one key, fetch or response operation; throws an
 *                                                Error (message safe to show) when it fails
 *   __sigil_log(text)                            appends one console line to the run's log
 * Both are captured here and removed from the global object when configurable, so actions
 * normally see only this API. Evaluation order in a run heap: natives, shims.js, globals.js and
 * web_packages.js (the web globals: fetch below answers their Response), prelude.js,
 * then anything that freezes the built-ins (shims.js extends their prototypes).
 * Every op is synchronous. Sigil.Actions answers values directly, and `await` on them works;
 * Lit.Actions and LitActions answer promises, as the anchor's runtime does (published actions call
 * .then and .catch on them), with its two synchronous natives: deriveEthAddress(privateKey) and
 * signMessage(privateKey, message).
 */
(function (global) {
    'use strict';

    var nativeOp = global.__sigil_op;
    var nativeLog = global.__sigil_log;
    var jobs = global.__sigil_jobs;
    var lowerSource = global.__sigil_lower_source;
    if (typeof nativeOp !== 'function' || typeof nativeLog !== 'function' || typeof jobs !== 'object') {
        throw new Error('prelude: __sigil_op, __sigil_log and shims.js must come first');
    }
    // Hidden when the sandbox left them configurable; a sandbox that pins them
    // (non-configurable) keeps them, which grants nothing this API does not.
    ['__sigil_op', '__sigil_log', '__sigil_jobs', '__sigil_lower_source'].forEach(function (name) {
        var d = Object.getOwnPropertyDescriptor(global, name);
        if (d && d.configurable) delete global[name];
    });

    // Byte arrays (Uint8Array, ArrayBuffer, Duktape buffers) travel as plain number arrays.
    function IsBytes(v) {
        return (typeof Uint8Array === 'function' && v instanceof Uint8Array) ||
               (typeof ArrayBuffer === 'function' && v instanceof ArrayBuffer) ||
               (typeof Duktape === 'object' && typeof v === 'buffer');
    }
    function BytesToArray(v) {
        var view = typeof Uint8Array === 'function' ? new Uint8Array(v) : v;
        var out = new Array(view.length);
        for (var i = 0; i < view.length; i++) out[i] = view[i];
        return out;
    }
    function Replacer(key, value) {
        return IsBytes(value) ? BytesToArray(value) : value;
    }

    function Op(name, arg) {
        var json = JSON.stringify(arg === undefined ? {} : arg, Replacer);
        var result = nativeOp(name, json);
        if (result === undefined || result === null || result === '') return undefined;
        return JSON.parse(result);
    }

    function Bind(name) {
        return function (arg) { return Op(name, arg); };
    }

    function Async(f) {
        return function () {
            try {
                return Promise.resolve(f.apply(this, arguments));
            } catch (e) {
                return Promise.reject(e);
            }
        };
    }

    // ethers v5, preloaded in the zygote's heap (looked up when used: prelude.js may run first).
    function Ethers() {
        if (!global.ethers || !global.ethers.utils) throw new Error('ethers is not available in this runtime');
        return global.ethers;
    }

    // A private key as 0x-hex, with or without the prefix, as the anchor's natives take it.
    function PrivateKeyHex(key) {
        if (typeof key !== 'string') throw new TypeError('the private key must be a hex string');
        return key.slice(0, 2) === '0x' || key.slice(0, 2) === '0X' ? '0x' + key.slice(2) : '0x' + key;
    }

    var SIGIL_OPS = [
        'signEcdsa', 'signMessage', 'signTypedData', 'getPublicKey', 'getPrivateKey',
        'encrypt', 'decrypt', 'getActionPrivateKey', 'getActionPublicKey',
        'getActionWalletAddress'
    ];
    var actions = {};
    for (var i = 0; i < SIGIL_OPS.length; i++) actions[SIGIL_OPS[i]] = Bind(SIGIL_OPS[i]);
    // The response is kept here rather than sent: main's return value wins when it is not
    // undefined, else the last setResponse (see __sigil_run_main).
    var responseSet = false;
    var responseValue;
    actions.setResponse = function (arg) {
        if (arg === null || typeof arg !== 'object') throw new TypeError('setResponse expects { response }');
        responseValue = arg.response;
        responseSet = true;
    };
    // Who called this run (issue 26): {apiKeyHash, accountHash, clientAddress} as the worker
    // authenticated the request, set once by __sigil_set_params from the RUN message before the
    // script runs (never from the request's body); frozen, so the script cannot change it. All null
    // when the worker gives none (`sigil run --local`).
    var callerInfo = Object.freeze({ apiKeyHash: null, accountHash: null, clientAddress: null });
    actions.caller = function () { return callerInfo; };

    // The anchor's names, so existing actions run unmodified; the Sigil names work there too.
    var LIT_ALIASES = {
        Encrypt: 'encrypt',
        Decrypt: 'decrypt',
        getPrivateKey: 'getPrivateKey',
        getLitActionPrivateKey: 'getActionPrivateKey',
        getLitActionPublicKey: 'getActionPublicKey',
        getLitActionWalletAddress: 'getActionWalletAddress',
        setResponse: 'setResponse'
    };
    var litActions = {};
    for (var name in actions) litActions[name] = actions[name];
    for (var alias in LIT_ALIASES) litActions[alias] = actions[LIT_ALIASES[alias]];
    // The anchor answers an action's public key as compressed SEC1 (0x02/0x03 + x, 33 bytes);
    // Sigil's own name keeps the uncompressed form of every other public key it returns.
    litActions.getLitActionPublicKey = function (arg) {
        var key = actions.getActionPublicKey(arg);
        if (typeof key !== 'string' || key.length !== 132 || key.slice(0, 4) !== '0x04') return key;
        return (parseInt(key.charAt(131), 16) & 1 ? '0x03' : '0x02') + key.slice(4, 68);
    };
    // The deployed implementation's open request for the caller's address (LIT-Protocol/chipotle#630)
    // names it requesterIpAddress(), answering a promise of the address as a string.
    litActions.requesterIpAddress = function () { return callerInfo.clientAddress; };
    // The anchor's operations answer promises: a failure rejects rather than throws.
    for (var op in litActions) {
        if (op !== 'setResponse') litActions[op] = Async(litActions[op]);
    }
    // The anchor's synchronous natives over a private key the action holds (its own, from
    // getLitActionPrivateKey): the address and public key as ethers' Wallet answers them, and an
    // EIP-191 signature as Wallet.signMessage answers it, without a Wallet (ethers' SigningKey
    // signs natively).
    litActions.deriveEthAddress = function (privateKey) {
        var signingKey = new (Ethers().utils.SigningKey)(PrivateKeyHex(privateKey));
        return { address: Ethers().utils.computeAddress(signingKey.publicKey), publicKey: signingKey.publicKey };
    };
    var signMessageOp = litActions.signMessage;
    litActions.signMessage = function (first, message) {
        if (typeof first !== 'string') return signMessageOp(first);  // { pkpId, message }
        var utils = Ethers().utils;
        return utils.joinSignature(new utils.SigningKey(PrivateKeyHex(first)).signDigest(utils.hashMessage(message)));
    };

    // Lit.Auth / LitAuth: the deployed implementation's authentication context, with the fields its
    // actions read. The CID stack holds the running action's CID (filled in by __sigil_set_params,
    // once, before the script runs); Sigil runs no action from another, so it never holds more. No
    // session signatures or auth methods reach a run here, so those fields are empty.
    var auth = {
        actionIpfsIdStack: [],
        authSigAddress: null,
        authMethodContexts: Object.freeze([]),
        resources: Object.freeze([]),
        customAuthResource: ''
    };

    global.Sigil = Object.freeze({ Actions: Object.freeze(actions) });
    global.Lit = Object.freeze({ Actions: Object.freeze(litActions), Auth: auth });
    global.LitActions = global.Lit.Actions;
    global.LitAuth = auth;

    // --- Errors show the script's own frames only ----------------------------------------------
    // Duktape's traceback also lists the C source position a native threw from ("at [anon]
    // (/.../workers/sandbox/child.cpp:207) internal"), the runtime's own files (shims.js,
    // prelude.js, ethers5.js, ...) and native functions, and .fileName/.lineNumber may name that C
    // file: server paths and internals that are not the script's business. The accessors on
    // Error.prototype (every error's stack goes through them, the sandbox's own report included)
    // keep the header and the frames of code the script brought: its action.js, and what it
    // compiled at run time (eval, new Function). Fail closed: a frame in any other file is dropped.
    (function () {
        var proto = global.Error.prototype;
        var stackDesc = Object.getOwnPropertyDescriptor(proto, 'stack');
        if (!stackDesc || typeof stackDesc.get !== 'function') {
            throw new Error('prelude: Error.prototype.stack is not the engine\'s accessor');
        }
        var rawStack = stackDesc.get;
        var FRAME = /^\s+at /;
        // action.js: the run's code; ipfs://<CID>: a module it imported; input: what eval and the
        // lowering new Function evaluate; compile: Duktape's own new Function.
        var SCRIPT_FRAME = /^\s+at .*\((action\.js|ipfs:\/\/Qm[1-9A-HJ-NP-Za-km-z]{44}|input|compile):(\d+)\)/;
        function Frames(self) {
            var text = rawStack.call(self);
            if (typeof text !== 'string') return { text: text, first: null };
            var lines = text.split('\n'), out = [], first = null, inFrames = false;
            for (var i = 0; i < lines.length; i++) {
                var line = lines[i];
                if (FRAME.test(line)) inFrames = true;
                if (!inFrames) { out.push(line); continue; }
                var m = SCRIPT_FRAME.exec(line);
                if (!m) continue;
                if (first === null) first = { file: m[1], line: Number(m[2]) };
                out.push(line);
            }
            return { text: out.join('\n'), first: first };
        }
        Object.defineProperty(proto, 'stack', {
            get: function stack() { return Frames(this).text; },
            set: stackDesc.set, enumerable: stackDesc.enumerable, configurable: stackDesc.configurable
        });
        ['fileName', 'lineNumber'].forEach(function (name) {
            var d = Object.getOwnPropertyDescriptor(proto, name);
            if (!d || typeof d.get !== 'function') return;
            Object.defineProperty(proto, name, {
                get: function () {
                    var first = Frames(this).first;
                    return first === null ? undefined : name === 'fileName' ? first.file : first.line;
                },
                set: d.set, enumerable: d.enumerable, configurable: d.configurable
            });
        });
    })();

    // --- Function: code built at run time -----------------------------------------------------
    // Libraries compile code at run time with new Function (zod's fast path, ajv), in the syntax
    // of their day; Duktape's Function takes ES5 only. A body it refuses is lowered as an action's
    // code is (the zygote's transpiler, the run's deadline and memory) and evaluated; others are
    // Duktape's own functions, unchanged. The wrapper shares Function.prototype, so instanceof and
    // (function () {}).constructor hold.
    if (typeof lowerSource === 'function') {
        var NativeFunction = global.Function;
        var indirectEval = global.eval;
        var LoweringFunction = function Function() {
            var args = Array.prototype.slice.call(arguments);
            try {
                return NativeFunction.apply(null, args);
            } catch (e) {
                if (!(e instanceof SyntaxError)) throw e;
                var body = args.length > 0 ? String(args.pop()) : '';
                var params = args.map(String).join(',');
                return indirectEval(lowerSource('(function anonymous(' + params + '\n) {\n' + body + '\n})'));
            }
        };
        LoweringFunction.prototype = NativeFunction.prototype;
        Object.defineProperty(NativeFunction.prototype, 'constructor', {
            value: LoweringFunction, writable: true, enumerable: false, configurable: true
        });
        Object.defineProperty(global, 'Function', {
            value: LoweringFunction, writable: true, enumerable: false, configurable: true
        });
    }

    // --- console: node-like formatting, one line per call ---------------------------------
    function FormatValue(v) {
        if (typeof v === 'string') return v;
        if (v === undefined) return 'undefined';
        if (typeof v === 'function') return '[Function: ' + (v.name || '(anonymous)') + ']';
        if (v instanceof Error) return v.stack || String(v);
        if (v !== null && typeof v === 'object') {
            var tag = Object.prototype.toString.call(v);
            if (tag === '[object Object]' || tag === '[object Array]' || IsBytes(v)) {
                try {
                    var json = JSON.stringify(v, Replacer);
                    if (json !== undefined) return json;
                } catch (e) {
                    // Cycles and the like: fall through to String().
                }
            }
        }
        return String(v);
    }
    function MakeLogger(prefix) {
        return function () {
            var parts = [];
            for (var i = 0; i < arguments.length; i++) parts.push(FormatValue(arguments[i]));
            nativeLog(prefix + parts.join(' '));
        };
    }
    global.console = {
        log: MakeLogger(''),
        info: MakeLogger(''),
        debug: MakeLogger(''),
        warn: MakeLogger(''),
        error: MakeLogger(''),
        // As Node: nothing when the condition holds, else one line.
        assert: function (condition) {
            if (condition) return;
            var rest = Array.prototype.slice.call(arguments, 1).map(FormatValue);
            nativeLog('Assertion failed' + (rest.length ? ': ' + rest.join(' ') : ''));
        }
    };

    // --- fetch: through the worker, which applies the count, size, time and address limits --
    // The answer is a web Response (globals.js) with its Headers; request headers may be a
    // Headers, an array of pairs or a plain object, as in a browser. Content-Length is dropped,
    // as browsers drop it (a forbidden request header): the worker sets the body's true length
    // (ethers v5's providers send one).
    var WebHeaders = global.Headers, WebResponse = global.Response, WebRequest = global.Request;
    var WebReadableStream = global.ReadableStream;
    function PlainHeaders(h) {
        var out = {};
        if (h === undefined || h === null) return out;
        new WebHeaders(h).forEach(function (value, name) {
            if (name !== 'content-length') out[name] = value;
        });
        return out;
    }

    // The request runs at once (the worker applies its limits); the answer arrives as a promise
    // settled from a timer as long (virtual time, at least 1 ms) as the request took, as network
    // I/O would: timers due meanwhile run first, as in an event loop (ethers' JsonRpcProvider
    // clears its per-tick cache from a 0 ms timer and would otherwise answer from it forever).
    var setTimer = global.setTimeout;
    function FetchNow(input, init) {
        init = init || {};
        var request = input instanceof WebRequest ? input : null;
        var url = request ? request.url : String(input);
        var method = init.method || (request ? request.method : 'GET');
        var headers = init.headers !== undefined ? init.headers : request ? request.headers : undefined;
        var body = init.body;
        // The worker sends a request body whole; a stream's chunks would arrive later, so one is
        // refused rather than sent empty.
        if (body instanceof WebReadableStream || (body === undefined && request && request._bodyInit instanceof WebReadableStream)) {
            throw new TypeError('fetch: a ReadableStream request body is not supported here; send text or bytes');
        }
        if (body === undefined && request && typeof request._bodyText === 'string' && request._bodyText !== '') body = request._bodyText;
        if (body !== undefined && body !== null && typeof body !== 'string') {
            body = IsBytes(body) ? BytesToArray(body) : String(body);
        }
        var reply = Op('fetch', {
            url: url,
            method: String(method).toUpperCase(),
            headers: PlainHeaders(headers),
            body: body === null ? undefined : body
        }) || {};
        var status = reply.status | 0;
        // whatwg-fetch's Response refuses statuses outside 200-599; a real fetch never gives one.
        return new WebResponse(typeof reply.body === 'string' ? reply.body : '', {
            status: status >= 200 && status <= 599 ? status : 200,
            statusText: reply.statusText || '',
            headers: reply.headers || {},
            url: reply.url || url
        });
    }
    // An AbortSignal ({signal} or the Request's) already aborted refuses the fetch with its
    // reason; one aborted before the answer's time comes rejects it then.
    global.fetch = function (input, init) {
        var signal = init && init.signal ? init.signal : input instanceof WebRequest ? input.signal : undefined;
        if (signal && signal.aborted) return Promise.reject(signal.reason);
        var ok = true, value, started = Date.now();
        try {
            value = FetchNow(input, init);
        } catch (e) {
            ok = false;
            value = e;
        }
        return new Promise(function (resolve, reject) {
            var done = false;
            if (signal && typeof signal.addEventListener === 'function') {
                signal.addEventListener('abort', function () { if (!done) { done = true; reject(signal.reason); } });
            }
            setTimer(function () {
                if (done) return;
                done = true;
                if (ok) resolve(value); else reject(value);
            }, Math.max(1, Date.now() - started));
        });
    };

    // --- js_params as globals --------------------------------------------------------------
    // Lit actions read their params as globals (`toSign`, `publicKey`) or as `jsParams`; the
    // sandbox calls this with js_params before the action's code runs. A param never replaces
    // a global that exists (Lit, ethers, console...).
    var authSet = false;
    global.__sigil_set_params = function (paramsJson, cid, callerJson) {
        if (!authSet) {  // the first call is the sandbox's, before the script: a script cannot add a CID
            authSet = true;
            if (typeof callerJson === 'string' && callerJson !== '') {
                var who = JSON.parse(callerJson);
                callerInfo = Object.freeze({
                    apiKeyHash: typeof who.apiKeyHash === 'string' ? who.apiKeyHash : null,
                    accountHash: typeof who.accountHash === 'string' ? who.accountHash : null,
                    clientAddress: typeof who.clientAddress === 'string' ? who.clientAddress : null
                });
            }
            if (typeof cid === 'string' && cid !== '') auth.actionIpfsIdStack.push(cid);
            Object.freeze(auth.actionIpfsIdStack);
            Object.freeze(auth);
        }
        var params = JSON.parse(paramsJson);
        if (params === null || typeof params !== 'object') return;
        if (!('jsParams' in global)) global.jsParams = params;
        for (var key in params) {
            if (Object.prototype.hasOwnProperty.call(params, key) && !(key in global)) global[key] = params[key];
        }
    };

    // --- Modules imported by CID ----------------------------------------------------------
    // The sandbox links the run's modules (each its lowered text compiled as the function
    // (module, exports, require, __sigil_exports), workers/sandbox/child.cpp) before the script
    // runs; the lowered script imports them with __sigil_import("ipfs://<CID>") (js/lower.js). A
    // module is evaluated once, when first imported. An ES module's namespace is the object its
    // exports were assigned to (copies, not live bindings); a CommonJS module's is
    // {default: module.exports, ...its own properties}, as Node imports one. A module imported while
    // it is still being evaluated (a cycle) answers what it has exported so far, as CommonJS does.
    var modules = {};
    var modulesLinked = false;
    var hasOwnKey = Object.prototype.hasOwnProperty;
    global.__sigil_define_modules = function (list) {
        if (modulesLinked) throw new Error('modules are linked once, before the script runs');
        modulesLinked = true;
        for (var i = 0; i < list.length; i++) {
            modules['ipfs://' + list[i].cid] = { factory: list[i].factory, esm: list[i].esm, state: 0, ns: null };
        }
    };
    function CommonJsNamespace(exports) {
        var ns = {};
        if (exports !== null && (typeof exports === 'object' || typeof exports === 'function')) {
            for (var key in exports) if (hasOwnKey.call(exports, key) && key !== 'default') ns[key] = exports[key];
        }
        ns['default'] = exports;
        return ns;
    }
    function Require(specifier) {
        var record = hasOwnKey.call(modules, specifier) ? modules[specifier] : null;
        if (record === null) {
            throw new Error('require("' + specifier + '") is not available: import modules by CID ' +
                            '(import x from "ipfs://<CID>")');
        }
        var ns = Import(specifier);
        return record.esm ? ns : record.module.exports;
    }
    function Import(specifier) {
        var record = hasOwnKey.call(modules, specifier) ? modules[specifier] : null;
        if (record === null) throw new Error('the module ' + specifier + ' is not linked into this run');
        if (record.state === 3) throw record.error;
        if (record.state === 0) {
            record.state = 1;
            record.exports = {};
            record.module = { exports: {} };
            try {
                record.factory.call(record.esm ? undefined : record.module.exports, record.module, record.module.exports,
                                    Require, record.exports);
            } catch (e) {
                record.state = 3;
                record.error = e;
                throw e;
            }
            record.state = 2;
        }
        if (record.esm) return record.exports;
        if (record.state === 1) return CommonJsNamespace(record.module.exports);
        if (record.ns === null) record.ns = CommonJsNamespace(record.module.exports);
        return record.ns;
    }
    global.__sigil_import = Import;
    global.__sigil_import_async = function (specifier) {
        return new Promise(function (resolve) { resolve(Import(specifier)); });
    };
    global.__sigil_export_all = function (target, ns) {
        for (var key in ns) if (hasOwnKey.call(ns, key) && key !== 'default') target[key] = ns[key];
    };

    // --- await and main ------------------------------------------------------------------
    // The transpiler turns `await x` into `__sigil_await(x)`: a value that is not a thenable is
    // returned as is; a promise is settled by running queued jobs (reactions, timers) until it
    // is, then its value returned or its reason thrown, all synchronously. Every Sigil op
    // already returns its value, so awaiting one costs nothing.
    function Await(value) {
        if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return value;
        var then = value.then;
        if (typeof then !== 'function') return value;
        var promise = jobs.isPromise(value) ? value : Promise.resolve(value);
        var state = jobs.state(promise);
        while (state[0] === 0 && jobs.runOne()) state = jobs.state(promise);
        if (state[0] === 0) throw new Error('await: the promise can never settle (nothing left to run)');
        if (state[0] === 2) throw state[1];
        return state[1];
    }
    global.__sigil_await = Await;

    // Called by the sandbox with js_params as JSON; returns the response as JSON text, or
    // undefined when there is none. Pending jobs run before the answer is taken, as an event
    // loop would run them before the process ends.
    global.__sigil_run_main = function (paramsJson) {
        var main = global.main;
        var result;
        if (typeof main === 'function') result = Await(main(JSON.parse(paramsJson)));
        while (jobs.runOne()) { /* drain */ }
        if (result === undefined && responseSet) result = responseValue;
        if (result === undefined) return undefined;
        return JSON.stringify(result, Replacer);
    };

    // The sandbox defines `ethers` (ethers v5) after this prelude; its providers reach
    // JSON-RPC nodes through the fetch above. Nothing in this file depends on it.
})(this);
