// sigil-lowerer's lowering workers: every request is lowered in a V8 context made for it alone,
// on one of a few worker threads, under a deadline past which its thread is terminated and
// replaced. The lowering parses any account's source, so one source can neither hold the daemon
// (a slow one costs its own thread until its deadline, while the others serve the rest) nor leave
// anything behind for the next (a fresh context per request: nothing a lowering sets on its
// globals or built-in prototypes is there for the next one).
//
//   var pool = new LoweringPool(LOWERING_SOURCE, { threads: 2, warmupSources: [...], log: fn, fatal: fn,
//                                                  resourceLimits: {...} });
//   var request = pool.lower(source, deadlineMs, function (answer) { ... });
//   pool.cancel(request);   // the asker went away (a request still waiting is dropped)
// answer is one of
//   { code: '...' }                          the lowered text
//   { error: '...', line: n, column: n }     the source does not lower (0 = no location)
//   { gaveUp: '...' }                        not lowered here: the deadline passed (waiting for a
//                                            thread counts) or the lowering's thread died
// `lowering` is the text of buble, acorn 8 and lower.js joined (lowerer_bundle.mjs); it must
// define __sigil_lower on its global object. It runs with no require, process or Buffer, and
// with eval and new Function refused; a thread that finds otherwise calls options.fatal.
// Joined into the daemon's bundle before lowerer_main.js; tests/api/lowerer_pool.test.mjs loads it alone.
var LoweringPool = (function () {
    'use strict';
    var Worker = require('worker_threads').Worker;

    // The thread's program (evaluated in the worker as the string of this function).
    function ThreadMain() {
        var threads = require('worker_threads');
        var vm = require('vm');
        var port = threads.parentPort;
        var data = threads.workerData;
        // Compiled once per thread: each context runs the same compiled script, so a request pays
        // for a new global object and the lowering's top level, not for parsing it again.
        var script = new vm.Script(data.lowering, { filename: 'sigil-lowering.js' });

        function FreshLowering() {
            var context = vm.createContext({}, { name: 'lowering', codeGeneration: { strings: false, wasm: false } });
            script.runInContext(context);
            return context;
        }

        function Isolated(context) {
            var refused = false;
            try { vm.runInContext('new Function("return 1")', context); } catch (e) { refused = e && e.name === 'EvalError'; }
            return typeof context.__sigil_lower === 'function' && refused &&
                   vm.runInContext('typeof require + typeof process + typeof Buffer', context) === 'undefinedundefinedundefined';
        }

        // A context is made while the thread is idle, so a request pays for its lowering alone; it
        // has lowered nothing before the request it serves.
        var spare = null;
        function TakeFresh() {
            var context = spare !== null ? spare : FreshLowering();
            spare = null;
            return context;
        }
        // The pool prefers a thread that has its next context made (`spare` messages).
        function MakeSpare() {
            if (spare !== null) return;
            spare = FreshLowering();
            port.postMessage({ spare: true });
        }

        // Only strings and numbers leave the context, each property read once.
        function Lower(source) {
            var result = Object(TakeFresh().__sigil_lower(source));
            var code = result.code;
            if (typeof code === 'string') return { code: code };
            var line = result.line;
            var column = result.column;
            return {
                error: String(result.error),
                line: typeof line === 'number' ? line : 0,
                column: typeof column === 'number' ? column : 0
            };
        }

        if (!Isolated(FreshLowering())) {
            port.postMessage({ fatal: 'the lowering context is not isolated' });
            return;
        }
        port.postMessage({ ready: true });
        port.on('message', function (request) {
            var started = process.hrtime.bigint();
            var answer = Lower(request.source);
            answer.id = request.id;
            answer.ms = Number(process.hrtime.bigint() - started) / 1e6;
            port.postMessage(answer);
            setImmediate(MakeSpare);
        });
        // Warm-up: V8 compiles the lowering's functions to bytecode (shared by every context of this
        // thread) before real sources arrive. One round at a time, so a request that arrives
        // meanwhile waits for at most one.
        var rounds = data.warmupSources.length;
        var warmStarted = Date.now();
        (function WarmUp() {
            if (rounds <= 0) {
                MakeSpare();
                if (data.warmupSources.length > 0) {
                    port.postMessage({ warmedUp: data.warmupSources.length, ms: Date.now() - warmStarted });
                }
                return;
            }
            rounds--;
            var answer = Lower(data.warmupSources[rounds]);
            if (typeof answer.code !== 'string') throw new Error('the warm-up sample does not lower: ' + answer.error);
            setImmediate(WarmUp);
        })();
    }

    function LoweringPool(lowering, options) {
        this.lowering = lowering;
        this.options = options;
        this.slots = [];
        this.queue = [];
        this.nextId = 1;
        for (var i = 0; i < options.threads; i++) this.slots.push(this.Start(i, options.warmupSources));
    }

    // A thread for slot `index`, which lowers `warmupSources` before it is idle; a replacement
    // lowers fewer (Rewarm: it replaces one that was killed, and replacing threads must not cost
    // more than the deadlines that caused it).
    LoweringPool.prototype.Start = function (index, warmupSources) {
        var pool = this;
        var slot = { index: index, ready: false, spare: false, request: null, worker: null, failure: null, started: Date.now() };
        slot.worker = new Worker('(' + ThreadMain.toString() + ')();', {
            eval: true, workerData: { lowering: pool.lowering, warmupSources: warmupSources || [] },
            resourceLimits: pool.options.resourceLimits
        });
        slot.worker.on('message', function (m) { pool.OnMessage(slot, m); });
        slot.worker.on('error', function (e) { slot.failure = e && e.message ? e.message : String(e); });
        slot.worker.on('exit', function () { pool.OnExit(slot); });
        return slot;
    };

    LoweringPool.prototype.OnMessage = function (slot, m) {
        if (m.fatal) return this.Fatal(m.fatal);
        if (m.spare) {
            slot.spare = true;
        } else if (m.ready) {
            slot.ready = true;
            this.options.log('thread ' + slot.index + ' ready in ' + (Date.now() - slot.started) + ' ms');
        } else if (m.warmedUp) {
            this.options.log('thread ' + slot.index + ' warmed up: ' + m.warmedUp + ' rounds in ' + m.ms + ' ms');
        } else if (slot.request !== null && m.id === slot.request.id) {
            var request = slot.request;
            slot.request = null;
            slot.spare = false;  // it used it; it says when the next one is made
            var answer = m.code !== undefined ? { code: m.code } : { error: m.error, line: m.line, column: m.column };
            answer.ms = m.ms;
            this.Finish(request, answer);
        }
        this.Dispatch();
    };

    // A thread that ended (terminated at a deadline, out of memory, or broken) is replaced; the
    // request it held, if still waiting, is answered.
    LoweringPool.prototype.OnExit = function (slot) {
        if (this.slots[slot.index] !== slot || this.failed) return;  // already replaced, or stopping
        // One that never got ready would fail again (the lowering does not load): stop.
        if (!slot.ready) return this.Fatal('a lowering thread did not start: ' + (slot.failure || 'it ended'));
        var request = slot.request;
        slot.request = null;
        if (request !== null) this.Finish(request, { gaveUp: 'the lowering stopped: ' + (slot.failure || 'its thread ended') });
        this.slots[slot.index] = this.Start(slot.index, this.Rewarm());
        this.Dispatch();
    };

    // Once: the daemon stops on it (a thread that found the lowering unsafe also ends).
    LoweringPool.prototype.Fatal = function (why) {
        if (this.failed) return;
        this.failed = true;
        this.options.fatal(why);
    };

    LoweringPool.prototype.Rewarm = function () { return (this.options.warmupSources || []).slice(0, 4); };

    LoweringPool.prototype.Finish = function (request, answer) {
        if (request.done === null) return;
        clearTimeout(request.timer);
        var done = request.done;
        request.done = null;
        done(answer);
    };

    // Each waiting request goes to a free thread, first to one whose next context is already made
    // (one still making it would make the request wait for that).
    LoweringPool.prototype.Dispatch = function () {
        while (this.queue.length > 0) {
            var chosen = null;
            for (var i = 0; i < this.slots.length; i++) {
                var slot = this.slots[i];
                if (slot === null || !slot.ready || slot.request !== null) continue;
                if (chosen === null || (slot.spare && !chosen.spare)) chosen = slot;
            }
            if (chosen === null) return;
            var request = this.queue.shift();
            chosen.request = request;
            chosen.spare = false;
            request.slot = chosen;
            chosen.worker.postMessage({ id: request.id, source: request.source });
        }
    };

    LoweringPool.prototype.lower = function (source, deadlineMs, done) {
        var pool = this;
        var request = { id: this.nextId++, source: source, done: done, slot: null, timer: null };
        request.timer = setTimeout(function () { pool.Expire(request, deadlineMs); }, deadlineMs);
        this.queue.push(request);
        this.Dispatch();
        return request;
    };

    // The asker went away: a request still waiting for a thread is dropped, unanswered (one being
    // lowered runs on to its answer or deadline: killing its thread would cost a new one).
    LoweringPool.prototype.cancel = function (request) {
        var at = this.queue.indexOf(request);
        if (at < 0 || request.done === null) return;
        this.queue.splice(at, 1);
        clearTimeout(request.timer);
        request.done = null;
    };

    // Past its deadline: a request still waiting leaves the queue; one being lowered has its thread
    // terminated (V8 stops the thread's JavaScript wherever it is) and the slot gets a new one.
    LoweringPool.prototype.Expire = function (request, deadlineMs) {
        if (request.done === null) return;
        var slot = request.slot;
        if (slot === null) {
            this.queue.splice(this.queue.indexOf(request), 1);
            this.Finish(request, { gaveUp: 'no lowering thread was free within ' + deadlineMs + ' ms' });
            return;
        }
        this.Finish(request, { gaveUp: 'the lowering took longer than ' + deadlineMs + ' ms' });
        slot.request = null;
        this.slots[slot.index] = this.Start(slot.index, this.Rewarm());
        slot.worker.terminate();
    };

    LoweringPool.prototype.close = function () {
        for (var i = 0; i < this.slots.length; i++) {
            var slot = this.slots[i];
            this.slots[i] = null;
            slot.worker.terminate();
        }
    };

    return LoweringPool;
})();
