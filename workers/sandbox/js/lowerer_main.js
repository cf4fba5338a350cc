// sigil-lowerer: the sandbox's lowering (buble, acorn 8 and lower.js, which
// workers/sandbox/js/lowerer_bundle.mjs puts before this file into bin/sigil-lowerer.cjs as the
// string SIGIL_LOWERING_SOURCE) served by Node.js on a unix socket. It is the same __sigil_lower the sandbox child runs in Duktape, under V8's compiler: a
// worker sends it the source of a CID it has no lowered text for, so the first run of that CID
// does not pay the interpreter's lowering; when this daemon is not there, slow or gone, the
// worker lets the sandbox child lower as before (workers/actions/lowerer_client.h).
//
//   node sigil-lowerer.cjs --socket PATH [--warmup N]
//
// It holds no secret and needs no network: systemd/sigil-lowerer.service runs it with neither.
// The socket is created 0660 (umask 0117); a leftover socket nobody answers on is replaced.
//
// Protocol, per connection, one request after another:
//   request:  u32 big-endian length (at most MAX_SOURCE_BYTES), then that many bytes of UTF-8 source
//   answer:   u32 big-endian length, then a kind byte and its payload
//             'C' + the lowered code (UTF-8)
//             'E' + "<line>\t<column>\t<message>" (the source does not lower; 0 = no location)
// A request over the limit closes the connection.
// After it starts listening it lowers a built-in sample N times (default 24, about a second of
// CPU), so V8 has compiled the lowering's hot functions before real sources arrive, and logs
// "warmed up"; a request that arrives meanwhile waits for at most one of those rounds.
(function () {
    'use strict';
    var net = require('net');
    var fs = require('fs');
    var vm = require('vm');

    var MAX_SOURCE_BYTES = 4 * 1024 * 1024;
    // The lowering runs in a context of its own: its global object has no require, process or
    // Buffer, and eval / new Function are refused there, so nothing a crafted source could make
    // the lowering do reaches beyond the text it returns.
    var lowering = vm.createContext({}, { name: 'lowering', codeGeneration: { strings: false, wasm: false } });
    vm.runInContext(SIGIL_LOWERING_SOURCE, lowering, { filename: 'sigil-lowering.js' });
    var lower = lowering.__sigil_lower;
    (function CheckIsolation() {
        var refused = false;
        try { vm.runInContext('new Function("return 1")', lowering); } catch (e) { refused = e && e.name === 'EvalError'; }
        if (typeof lower !== 'function' || !refused || vm.runInContext('typeof require + typeof process', lowering) !== 'undefinedundefined') {
            process.stderr.write('sigil-lowerer: the lowering context is not isolated; refusing to start\n');
            process.exit(70);
        }
    })();

    function Option(name, fallback) {
        var at = process.argv.indexOf('--' + name);
        return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
    }
    var socketPath = Option('socket', '');
    var warmups = Number(Option('warmup', '24'));
    if (!socketPath || !(warmups >= 0)) {
        process.stderr.write('usage: node sigil-lowerer.cjs --socket PATH [--warmup N]\n');
        process.exit(64);
    }

    var WARMUP_SAMPLE = [
        'const DEFAULTS = { retries: 3, timeoutMs: 1_000, tags: ["a", "b"] };',
        'class Limiter { static made = 0; #hits = 0; limit = 10;',
        '  constructor(limit) { this.limit = limit ?? this.limit; Limiter.made++; }',
        '  hit() { this.#hits += 1; return this.#hits <= this.limit; } get hits() { return this.#hits; } }',
        'function pick(obj, ...keys) { const out = {}; for (const k of keys) if (obj?.[k] !== undefined) out[k] = obj[k]; return out; }',
        'const merge = (a, b) => ({ ...a, ...b, tags: [...(a?.tags ?? []), ...(b?.tags ?? [])] });',
        'async function fetchJson(url, { method = "GET", body } = {}) {',
        '  try { const res = await fetch(url, { method, body: body ? JSON.stringify(body) : undefined }); return await res.json(); }',
        '  catch { return null; } }',
        'const total = (items = []) => { let t = 0n, n = 0; for (const { amount = 0, meta } of items) { t += BigInt(amount) ** 2n; n ||= meta?.n; }',
        '  return `t=${t} n=${n ?? 0} first=${items[0]?.name?.toUpperCase?.() ?? "-"}`; };',
        'const main = async ({ op = "sum", ...rest }) => { const l = new Limiter(rest?.retries); let c = rest.cache; c ??= {}; c.n ??= 0;',
        '  const [first, second = 2] = rest.list ?? []; return { first, second, hit: l.hit(), p: pick(rest, "a"), m: merge(DEFAULTS, rest),',
        '    s: total(rest.items), d: op ? await fetchJson(rest.url) : null }; };'
    ].join('\n');

    // About 8 KB of distinct copies of the sample: V8 compiles what a real action's size
    // exercises (and the heap grows to it) before the first one arrives.
    function WarmUpSource(round) {
        var text = '';
        for (var copy = 0; copy < 6; copy++) {
            text += WARMUP_SAMPLE.replace(/\b(DEFAULTS|Limiter|pick|merge|fetchJson|total|main)\b/g, '$1_' + round + '_' + copy) + '\n';
        }
        return text;
    }

    var warmUpStarted = 0;
    var warmUpRounds = 0;
    function WarmUp() {
        if (warmups <= 0) {
            if (warmUpRounds > 0) Log('warmed up: ' + warmUpRounds + ' rounds in ' + (Date.now() - warmUpStarted) + ' ms');
            return;
        }
        if (warmUpRounds++ === 0) warmUpStarted = Date.now();
        warmups--;
        var result = lower(WarmUpSource(warmups));
        if (typeof result.code !== 'string') throw new Error('the warm-up sample does not lower: ' + result.error);
        setImmediate(WarmUp);  // requests that arrived meanwhile are served first
    }

    // One line per request: a CID reaches the daemon once per pool, so this is the lowering's cost.
    function Log(line) { process.stderr.write('sigil-lowerer: ' + line + '\n'); }

    function Answer(socket, kind, text) {
        var payload = Buffer.from(text, 'utf8');
        var frame = Buffer.allocUnsafe(5 + payload.length);
        frame.writeUInt32BE(payload.length + 1, 0);
        frame[4] = kind.charCodeAt(0);
        payload.copy(frame, 5);
        socket.write(frame);
    }

    function Serve(socket) {
        var pending = Buffer.alloc(0);
        socket.on('data', function (chunk) {
            pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
            while (pending.length >= 4) {
                var size = pending.readUInt32BE(0);
                if (size > MAX_SOURCE_BYTES) {
                    socket.destroy();
                    return;
                }
                if (pending.length < 4 + size) return;
                var source = pending.toString('utf8', 4, 4 + size);
                pending = pending.subarray(4 + size);
                var started = process.hrtime.bigint();
                var result = lower(source);
                var ms = (Number(process.hrtime.bigint() - started) / 1e6).toFixed(1);
                if (typeof result.code === 'string') {
                    Answer(socket, 'C', result.code);
                    Log('lowered ' + size + ' bytes in ' + ms + ' ms');
                } else {
                    Answer(socket, 'E', result.line + '\t' + result.column + '\t' + result.error);
                    Log('refused ' + size + ' bytes in ' + ms + ' ms: line ' + result.line + ': ' + result.error);
                }
            }
        });
        socket.on('error', function () { socket.destroy(); });  // the worker gave up or went away
    }

    function Listen() {
        var server = net.createServer(Serve);
        process.umask(0o117);
        server.listen(socketPath, function () {
            Log('listening on ' + socketPath + ' (node ' + process.version + ')');
            setImmediate(WarmUp);
        });
        server.on('error', function (e) {
            Log(socketPath + ': ' + e.message);
            process.exit(1);
        });
        var stop = function () {
            server.close();
            try { fs.unlinkSync(socketPath); } catch (e) { /* already gone */ }
            process.exit(0);
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
    }

    // A socket file left by a lowerer that died is replaced; one that answers is another lowerer's.
    if (fs.existsSync(socketPath)) {
        var probe = net.connect(socketPath);
        probe.on('connect', function () {
            Log('another process serves ' + socketPath);
            process.exit(1);
        });
        probe.on('error', function () {
            try { fs.unlinkSync(socketPath); } catch (e) { /* gone meanwhile */ }
            Listen();
        });
    } else {
        Listen();
    }
})();
