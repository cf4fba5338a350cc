// sigil-lowerer: the sandbox's lowering (buble, acorn 8 and lower.js, which
// lowerer/lowerer_bundle.mjs puts before this file into bin/sigil-lowerer.cjs as the
// string SIGIL_LOWERING_SOURCE) served by Node.js on a unix socket. It is the same __sigil_lower the sandbox child runs in Duktape, under V8's compiler: a
// worker sends it the source of a CID it has no lowered text for, so the first run of that CID
// does not pay the interpreter's lowering; when this daemon is not there, slow or gone, the
// worker lets the sandbox child lower as before (workers/actions/lowerer_client.h).
//
//   node sigil-lowerer.cjs --socket PATH [--warmup N] [--threads N] [--deadline-ms MS]
//                          [--deadline-ms-per-kib MS]
//
// It holds no secret and needs no network: systemd/sigil-lowerer.service runs it with neither.
// The socket is created 0660 (umask 0117); a leftover socket nobody answers on is replaced.
//
// Every account's source passes through here, so each request is lowered in a context of its own
// on one of --threads worker threads (default 2), under a deadline of --deadline-ms plus
// --deadline-ms-per-kib per KiB of source (default 900 + 25: 100 ms under the 1000 + 25 a worker
// waits, lowerer_client.h, so the worker hears why); past it the request's thread is terminated and
// replaced, and the others go on serving (lowerer_pool.js).
//
// Protocol, per connection, one request after another:
//   request:  u32 big-endian length (at most MAX_SOURCE_BYTES), then that many bytes of UTF-8 source
//   answer:   u32 big-endian length, then a kind byte and its payload
//             'C' + the lowered code (UTF-8)
//             'E' + "<line>\t<column>\t<message>" (the source does not lower; 0 = no location)
//             'T' + a message: not lowered here (the deadline passed, waiting for a thread
//                   included, or the lowering's thread died); the worker lets the child lower it
// A request over the limit closes the connection.
// Each thread, once started, lowers a built-in sample N times (default 2), so V8 has compiled the
// lowering's functions to bytecode before real sources arrive, and logs "warmed up"; a request
// that arrives meanwhile waits for at most one of those rounds. More rounds would warm nothing a
// request keeps: each fresh context starts the lowering's functions again without the optimised
// code of earlier contexts (only their bytecode is shared).
(function () {
    'use strict';
    var net = require('net');
    var fs = require('fs');

    var MAX_SOURCE_BYTES = 4 * 1024 * 1024;

    function Option(name, fallback) {
        var at = process.argv.indexOf('--' + name);
        return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
    }
    var socketPath = Option('socket', '');
    var warmups = Number(Option('warmup', '2'));
    var threads = Number(Option('threads', '2'));
    var deadlineMs = Number(Option('deadline-ms', '900'));
    var deadlineMsPerKiB = Number(Option('deadline-ms-per-kib', '25'));
    if (!socketPath || !(warmups >= 0) || !(Number.isInteger(threads) && threads >= 1 && threads <= 64) || !(deadlineMs > 0) || !(deadlineMsPerKiB >= 0)) {
        process.stderr.write('usage: node sigil-lowerer.cjs --socket PATH [--warmup N] [--threads N] [--deadline-ms MS] ' +
                             '[--deadline-ms-per-kib MS]\n');
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

    var warmupSources = [];
    for (var round = 0; round < warmups; round++) warmupSources.push(WarmUpSource(round));

    // One line per request: a CID reaches the daemon once per pool, so this is the lowering's cost.
    function Log(line) { process.stderr.write('sigil-lowerer: ' + line + '\n'); }

    function Answer(socket, kind, text) {
        var payload = Buffer.from(text, 'utf8');
        var frame = Buffer.allocUnsafe(5 + payload.length);
        frame.writeUInt32BE(payload.length + 1, 0);
        frame[4] = kind.charCodeAt(0);
        payload.copy(frame, 5);
        if (!socket.destroyed) socket.write(frame);
    }

    // The heap a thread may grow to: a 1 MiB source (the most a worker sends) lowers in far less;
    // past it the thread dies (its request answered 'T') and is replaced, not the daemon, and two
    // threads stay under the unit's MemoryMax (systemd/sigil-lowerer.service).
    var pool = new LoweringPool(SIGIL_LOWERING_SOURCE, {
        threads: threads, warmupSources: warmupSources, log: Log,
        resourceLimits: { maxOldGenerationSizeMb: 256 },
        fatal: function (why) {
            Log(why + '; refusing to start');
            process.exit(70);
        }
    });

    function DeadlineMs(bytes) { return Math.round(deadlineMs + deadlineMsPerKiB * (bytes / 1024)); }

    // Requests of one connection are answered in order, one at a time; connections are served
    // side by side by the pool's threads.
    function Serve(socket) {
        var pending = Buffer.alloc(0);
        var busy = false;
        var current = null;  // the request being lowered or waiting for a thread
        function Next() {
            if (busy || socket.destroyed) return;
            if (pending.length < 4) return;
            var size = pending.readUInt32BE(0);
            if (size > MAX_SOURCE_BYTES) {
                socket.destroy();
                return;
            }
            if (pending.length < 4 + size) return;
            var source = pending.toString('utf8', 4, 4 + size);
            pending = pending.subarray(4 + size);
            busy = true;
            var started = process.hrtime.bigint();
            current = pool.lower(source, DeadlineMs(size), function (answer) {
                current = null;
                var ms = (Number(process.hrtime.bigint() - started) / 1e6).toFixed(1);
                if (answer.code !== undefined) {
                    Answer(socket, 'C', answer.code);
                    Log('lowered ' + size + ' bytes in ' + ms + ' ms');
                } else if (answer.error !== undefined) {
                    Answer(socket, 'E', answer.line + '\t' + answer.column + '\t' + answer.error);
                    Log('refused ' + size + ' bytes in ' + ms + ' ms: line ' + answer.line + ': ' + answer.error);
                } else {
                    Answer(socket, 'T', answer.gaveUp);
                    Log('gave up on ' + size + ' bytes after ' + ms + ' ms: ' + answer.gaveUp);
                }
                busy = false;
                Next();
            });
        }
        socket.on('data', function (chunk) {
            pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
            Next();
        });
        socket.on('error', function () { socket.destroy(); });  // the worker gave up or went away
        socket.on('close', function () { if (current !== null) pool.cancel(current); });
    }

    function Listen() {
        var server = net.createServer(Serve);
        process.umask(0o117);
        server.listen(socketPath, function () {
            Log('listening on ' + socketPath + ' (node ' + process.version + ', ' + threads + ' lowering threads)');
        });
        server.on('error', function (e) {
            Log(socketPath + ': ' + e.message);
            process.exit(1);
        });
        var stop = function () {
            server.close();
            pool.close();
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
