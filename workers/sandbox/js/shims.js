/*
 * shims.js: the ES2015+ library pieces the buble transpiler (and lowered action code) uses that
 * Duktape 2.7 (ES5.1 plus a few ES2015 bits) lacks. Each shim is installed only when missing,
 * is non-enumerable like the built-in it stands in for, and is written in plain ES5.1.
 *
 * Map/Set keep insertion order in an entry array; lookups go through a dictionary keyed by
 * type + value for primitives and a hidden per-object id for objects, so the large tables buble
 * builds at load (unicode property maps) stay O(1) per access.
 */
(function (global) {
    'use strict';

    function define(target, name, value) {
        if (typeof target[name] !== 'undefined') return;
        Object.defineProperty(target, name, {
            value: value, writable: true, configurable: true, enumerable: false
        });
    }

    // --- Object ---------------------------------------------------------------------------
    define(Object, 'assign', function assign(target) {
        if (target === null || target === undefined) {
            throw new TypeError('Cannot convert undefined or null to object');
        }
        var to = Object(target);
        for (var i = 1; i < arguments.length; i++) {
            var source = arguments[i];
            if (source === null || source === undefined) continue;
            var keys = Object.keys(Object(source));
            for (var k = 0; k < keys.length; k++) to[keys[k]] = source[keys[k]];
        }
        return to;
    });
    define(Object, 'entries', function entries(obj) {
        return Object.keys(obj).map(function (k) { return [k, obj[k]]; });
    });
    define(Object, 'values', function values(obj) {
        return Object.keys(obj).map(function (k) { return obj[k]; });
    });
    define(Object, 'is', function is(a, b) {
        if (a === b) return a !== 0 || 1 / a === 1 / b;
        return a !== a && b !== b;
    });

    // --- Number ---------------------------------------------------------------------------
    define(Number, 'isInteger', function isInteger(v) {
        return typeof v === 'number' && isFinite(v) && Math.floor(v) === v;
    });
    define(Number, 'isSafeInteger', function isSafeInteger(v) {
        return Number.isInteger(v) && Math.abs(v) <= 9007199254740991;
    });
    define(Number, 'isFinite', function (v) { return typeof v === 'number' && isFinite(v); });
    define(Number, 'isNaN', function (v) { return typeof v === 'number' && v !== v; });
    define(Number, 'MAX_SAFE_INTEGER', 9007199254740991);
    define(Number, 'MIN_SAFE_INTEGER', -9007199254740991);
    define(Number, 'EPSILON', Math.pow(2, -52));
    define(Math, 'trunc', function (v) { v = +v; return v < 0 ? Math.ceil(v) : Math.floor(v); });
    define(Math, 'sign', function (v) { v = +v; return v > 0 ? 1 : v < 0 ? -1 : v; });

    // --- String ---------------------------------------------------------------------------
    var sp = String.prototype;
    define(sp, 'repeat', function repeat(count) {
        var s = String(this);
        count = Math.floor(+count) || 0;
        if (count < 0 || count === Infinity) throw new RangeError('Invalid count value');
        var out = '';
        while (count > 0) {
            if (count & 1) out += s;
            count >>>= 1;
            if (count) s += s;
        }
        return out;
    });
    define(sp, 'startsWith', function startsWith(search, pos) {
        var s = String(this);
        pos = Math.max(0, Math.min(pos | 0, s.length));
        search = String(search);
        return s.substr(pos, search.length) === search;
    });
    define(sp, 'endsWith', function endsWith(search, end) {
        var s = String(this);
        end = end === undefined ? s.length : Math.max(0, Math.min(end | 0, s.length));
        search = String(search);
        var start = end - search.length;
        return start >= 0 && s.substring(start, end) === search;
    });
    define(sp, 'includes', function includes(search, pos) {
        return String(this).indexOf(String(search), pos | 0) !== -1;
    });
    define(sp, 'trimStart', function trimStart() { return String(this).replace(/^\s+/, ''); });
    define(sp, 'trimEnd', function trimEnd() { return String(this).replace(/\s+$/, ''); });
    define(sp, 'padStart', function padStart(len, fill) {
        var s = String(this);
        fill = fill === undefined ? ' ' : String(fill);
        if (s.length >= len || fill === '') return s;
        var pad = fill.repeat(Math.ceil((len - s.length) / fill.length));
        return pad.slice(0, len - s.length) + s;
    });
    define(sp, 'padEnd', function padEnd(len, fill) {
        var s = String(this);
        fill = fill === undefined ? ' ' : String(fill);
        if (s.length >= len || fill === '') return s;
        var pad = fill.repeat(Math.ceil((len - s.length) / fill.length));
        return s + pad.slice(0, len - s.length);
    });

    // --- Array ----------------------------------------------------------------------------
    var ap = Array.prototype;
    define(ap, 'includes', function includes(value, from) {
        var len = this.length >>> 0;
        for (var i = Math.max(from | 0, 0); i < len; i++) {
            if (this[i] === value || (value !== value && this[i] !== this[i])) return true;
        }
        return false;
    });
    define(ap, 'find', function find(pred, self) {
        for (var i = 0; i < this.length; i++) {
            if (pred.call(self, this[i], i, this)) return this[i];
        }
        return undefined;
    });
    define(ap, 'findIndex', function findIndex(pred, self) {
        for (var i = 0; i < this.length; i++) {
            if (pred.call(self, this[i], i, this)) return i;
        }
        return -1;
    });
    define(ap, 'fill', function fill(value, start, end) {
        var len = this.length >>> 0;
        start = start === undefined ? 0 : start | 0;
        end = end === undefined ? len : end | 0;
        if (start < 0) start = Math.max(len + start, 0);
        if (end < 0) end = Math.max(len + end, 0);
        for (var i = start; i < Math.min(end, len); i++) this[i] = value;
        return this;
    });

    // Iterates arrays, strings (by code point, as their iterator does), array-likes and objects
    // with a next()-style iterator (our Map and Set, or anything exposing a Symbol.iterator
    // method where Duktape has Symbol).
    function ForEachIterable(iterable, fn) {
        if (iterable === null || iterable === undefined) return;
        if (typeof iterable === 'string' || iterable instanceof String) {
            var s = String(iterable);
            for (var j = 0; j < s.length; j++) {
                var c = s.charCodeAt(j);
                var pair = c >= 0xd800 && c <= 0xdbff && j + 1 < s.length &&
                           s.charCodeAt(j + 1) >= 0xdc00 && s.charCodeAt(j + 1) <= 0xdfff;
                fn(pair ? s.substr(j++, 2) : s.charAt(j));
            }
            return;
        }
        if (typeof iterable.length === 'number') {
            for (var i = 0; i < iterable.length; i++) fn(iterable[i]);
            return;
        }
        var iter = null;
        if (typeof Symbol === 'function' && Symbol.iterator && typeof iterable[Symbol.iterator] === 'function') {
            iter = iterable[Symbol.iterator]();
        } else if (typeof iterable.__sigil_iterator === 'function') {
            iter = iterable.__sigil_iterator();  // our Map and Set where Duktape has no Symbol.iterator
        } else if (typeof iterable.next === 'function') {
            iter = iterable;  // an iterator
        } else if (typeof iterable.entries === 'function') {
            iter = iterable.entries();  // iterable only by entries() where Duktape has no Symbol.iterator
        }
        if (iter === null) throw new TypeError('object is not iterable');
        for (var step = iter.next(); !step.done; step = iter.next()) fn(step.value);
    }
    define(Array, 'from', function from(iterable, mapFn, self) {
        var out = [];
        ForEachIterable(iterable, function (v) {
            out.push(mapFn ? mapFn.call(self, v, out.length) : v);
        });
        return out;
    });
    define(Array, 'of', function of() { return ap.slice.call(arguments); });

    // --- ES2019-ES2023 library additions published actions use ------------------------------
    // (flat, flatMap, Object.fromEntries, replaceAll, at, Object.hasOwn, findLast, matchAll),
    // as the specification defines them; matchAll answers an array of its matches rather than
    // an iterator (for-of, spread, Array.from and indexing all work on it).
    function RelativeIndex(index, len) {
        var k = Math.trunc(+index) || 0;
        return k < 0 ? len + k : k;
    }
    function At(index) {
        var len = this.length >>> 0, k = RelativeIndex(index, len);
        return k < 0 || k >= len ? undefined : this[k];
    }
    define(ap, 'at', At);
    define(sp, 'at', function at(index) {
        var s = String(this), k = RelativeIndex(index, s.length);
        return k < 0 || k >= s.length ? undefined : s.charAt(k);
    });
    function Flatten(out, source, depth) {
        for (var i = 0; i < source.length; i++) {
            if (!(i in source)) continue;
            var v = source[i];
            if (depth > 0 && Array.isArray(v)) Flatten(out, v, depth - 1);
            else out.push(v);
        }
        return out;
    }
    define(ap, 'flat', function flat(depth) {
        var d = depth === undefined ? 1 : Math.trunc(+depth) || 0;
        return Flatten([], Object(this), d);
    });
    define(ap, 'flatMap', function flatMap(fn, self) {
        if (typeof fn !== 'function') throw new TypeError('flatMap mapper is not a function');
        var o = Object(this), mapped = [];
        for (var i = 0; i < (o.length >>> 0); i++) if (i in o) mapped.push(fn.call(self, o[i], i, o));
        return Flatten([], mapped, 1);
    });
    function FindLast(fn, self, wantIndex) {
        if (typeof fn !== 'function') throw new TypeError('predicate is not a function');
        for (var i = (this.length >>> 0) - 1; i >= 0; i--) {
            if (fn.call(self, this[i], i, this)) return wantIndex ? i : this[i];
        }
        return wantIndex ? -1 : undefined;
    }
    define(ap, 'findLast', function findLast(fn, self) { return FindLast.call(this, fn, self, false); });
    define(ap, 'findLastIndex', function findLastIndex(fn, self) { return FindLast.call(this, fn, self, true); });
    define(Object, 'fromEntries', function fromEntries(iterable) {
        if (iterable === null || iterable === undefined) throw new TypeError(iterable + ' is not iterable');
        var out = {};
        ForEachIterable(iterable, function (entry) {
            if (entry === null || (typeof entry !== 'object' && typeof entry !== 'function')) {
                throw new TypeError('Iterator value ' + entry + ' is not an entry object');
            }
            out[entry[0]] = entry[1];
        });
        return out;
    });
    define(Object, 'hasOwn', function hasOwn(obj, key) {
        if (obj === null || obj === undefined) throw new TypeError('Cannot convert undefined or null to object');
        return Object.prototype.hasOwnProperty.call(Object(obj), key);
    });
    // GetSubstitution of the specification: $$, $&, $` and $' in a replacement string.
    function Substitute(replacement, matched, position, str) {
        return replacement.replace(/\$([$&`'])/g, function (all, c) {
            if (c === '$') return '$';
            if (c === '&') return matched;
            if (c === '`') return str.slice(0, position);
            return str.slice(position + matched.length);
        });
    }
    function IsRegExp(v) { return Object.prototype.toString.call(v) === '[object RegExp]'; }
    define(sp, 'replaceAll', function replaceAll(search, replacement) {
        if (IsRegExp(search)) {
            if (search.flags === undefined ? !search.global : search.flags.indexOf('g') < 0) {
                throw new TypeError('replaceAll must be called with a global RegExp');
            }
            return String(this).replace(search, replacement);
        }
        var str = String(this), find = String(search), out = '', from = 0;
        var step = Math.max(find.length, 1);
        var positions = [];
        for (var at = str.indexOf(find, 0); at !== -1 && at <= str.length; at = str.indexOf(find, at + step)) {
            positions.push(at);
            if (find.length === 0 && at >= str.length) break;
        }
        for (var i = 0; i < positions.length; i++) {
            var p = positions[i];
            out += str.slice(from, p) + (typeof replacement === 'function'
                ? String(replacement(find, p, str)) : Substitute(String(replacement), find, p, str));
            from = p + find.length;
        }
        return out + str.slice(from);
    });
    define(sp, 'matchAll', function matchAll(re) {
        if (IsRegExp(re) && !re.global) throw new TypeError('String.prototype.matchAll called with a non-global RegExp argument');
        // A copy with the RegExp's own flags, as the specification makes it (RegExp with the u or v
        // flag, regexp.js, keeps its pattern that way).
        var rx = IsRegExp(re) ? new RegExp(re, String(re.flags))
                              : new RegExp(re === undefined ? '(?:)' : String(re), 'g');
        rx.lastIndex = IsRegExp(re) ? re.lastIndex : 0;
        var str = String(this), out = [], m;
        while ((m = rx.exec(str)) !== null) {
            out.push(m);
            if (m[0] === '') rx.lastIndex++;
        }
        return out;
    });

    // --- Typed arrays ---------------------------------------------------------------------
    // Duktape's typed arrays have only set and subarray: the ES2015 methods go on the shared
    // %TypedArray% prototype and constructor, so every element type gets them. slice, map and
    // filter return a new array of the receiver's own type, as in ES2015.
    if (typeof Uint8Array === 'function') {
        var TypedArray = Object.getPrototypeOf(Uint8Array);
        var tp = Object.getPrototypeOf(Uint8Array.prototype);
        var Clamp = function (v, len, dflt) {
            if (v === undefined) return dflt;
            v = Math.trunc(+v) || 0;
            return v < 0 ? Math.max(len + v, 0) : Math.min(v, len);
        };
        define(tp, 'slice', function slice(start, end) {
            var len = this.length;
            var from = Clamp(start, len, 0), to = Clamp(end, len, len);
            var out = new this.constructor(Math.max(to - from, 0));
            for (var i = from; i < to; i++) out[i - from] = this[i];
            return out;
        });
        define(tp, 'fill', ap.fill);
        define(tp, 'indexOf', ap.indexOf);
        define(tp, 'lastIndexOf', ap.lastIndexOf);
        define(tp, 'includes', ap.includes);
        define(tp, 'join', function join(sep) { return ap.join.call(this, sep === undefined ? ',' : sep); });
        define(tp, 'toString', function toString() { return ap.join.call(this, ','); });
        define(tp, 'forEach', ap.forEach);
        define(tp, 'every', ap.every);
        define(tp, 'some', ap.some);
        define(tp, 'reduce', ap.reduce);
        define(tp, 'reduceRight', ap.reduceRight);
        define(tp, 'find', ap.find);
        define(tp, 'findIndex', ap.findIndex);
        define(tp, 'at', At);
        define(tp, 'findLast', ap.findLast);
        define(tp, 'findLastIndex', ap.findLastIndex);
        define(tp, 'reverse', ap.reverse);
        define(tp, 'map', function map(fn, self) {
            var out = new this.constructor(this.length);
            for (var i = 0; i < this.length; i++) out[i] = fn.call(self, this[i], i, this);
            return out;
        });
        define(tp, 'filter', function filter(fn, self) {
            var kept = [];
            for (var i = 0; i < this.length; i++) if (fn.call(self, this[i], i, this)) kept.push(this[i]);
            return new this.constructor(kept);
        });
        define(tp, 'sort', function sort(compare) {
            var sorted = ap.slice.call(this).sort(compare || function (a, b) { return a - b; });
            for (var i = 0; i < sorted.length; i++) this[i] = sorted[i];
            return this;
        });
        define(tp, 'copyWithin', function copyWithin(target, start, end) {
            var len = this.length;
            var to = Clamp(target, len, 0), from = Clamp(start, len, 0), last = Clamp(end, len, len);
            var copy = ap.slice.call(this, from, last);
            for (var i = 0; i < copy.length && to + i < len; i++) this[to + i] = copy[i];
            return this;
        });
        define(TypedArray, 'from', function from(source, mapFn, self) {
            return new this(Array.from(source, mapFn, self));
        });
        define(TypedArray, 'of', function of() { return new this(ap.slice.call(arguments)); });
    }

    // --- Map / Set / WeakMap --------------------------------------------------------------
    var next_object_id = 1;
    var ID_KEY = '__sigil_shim_id';

    // Dictionary key for a value; null when the value is a non-extensible object (those fall
    // back to a linear scan of the entries).
    function KeyOf(value) {
        var type = typeof value;
        if (value === null || (type !== 'object' && type !== 'function')) {
            if (value !== value) return 'n:NaN';
            return type.charAt(0) + ':' + String(value);
        }
        if (!Object.prototype.hasOwnProperty.call(value, ID_KEY)) {
            if (!Object.isExtensible(value)) return null;
            Object.defineProperty(value, ID_KEY, { value: 'o:' + (next_object_id++) });
        }
        return value[ID_KEY];
    }

    function MakeIterator(entries, project) {
        var index = 0;
        var it = {
            next: function () {
                while (index < entries.length) {
                    var e = entries[index++];
                    if (!e.deleted) return { value: project(e), done: false };
                }
                return { value: undefined, done: true };
            }
        };
        if (typeof Symbol === 'function' && Symbol.iterator) {
            it[Symbol.iterator] = function () { return it; };
        }
        return it;
    }

    function Store() {
        this.index = Object.create(null);
        this.entries = [];
        this.size = 0;
    }
    Store.prototype.find = function (key) {
        var k = KeyOf(key);
        if (k !== null) return this.index[k] || null;
        for (var i = 0; i < this.entries.length; i++) {
            var e = this.entries[i];
            if (!e.deleted && e.key === key) return e;
        }
        return null;
    };
    Store.prototype.put = function (key, value) {
        var e = this.find(key);
        if (e) { e.value = value; return; }
        e = { key: key, value: value, deleted: false };
        this.entries.push(e);
        var k = KeyOf(key);
        if (k !== null) this.index[k] = e;
        this.size++;
    };
    Store.prototype.remove = function (key) {
        var e = this.find(key);
        if (!e) return false;
        e.deleted = true;
        var k = KeyOf(key);
        if (k !== null) delete this.index[k];
        this.size--;
        return true;
    };
    Store.prototype.clear = function () {
        for (var i = 0; i < this.entries.length; i++) this.entries[i].deleted = true;
        this.index = Object.create(null);
        this.entries = [];
        this.size = 0;
    };

    function DefineCollection(name, isMap) {
        if (typeof global[name] === 'function') return;
        var Ctor = function (iterable) {
            if (!(this instanceof Ctor)) throw new TypeError(name + ' requires new');
            Object.defineProperty(this, '_store', { value: new Store() });
            var self = this;
            ForEachIterable(iterable, function (v) {
                if (isMap) self.set(v[0], v[1]); else self.add(v);
            });
        };
        var p = Ctor.prototype;
        Object.defineProperty(p, 'size', { get: function () { return this._store.size; } });
        define(p, 'has', function (key) { return this._store.find(key) !== null; });
        define(p, 'delete', function (key) { return this._store.remove(key); });
        define(p, 'clear', function () { this._store.clear(); });
        define(p, 'forEach', function (fn, self) {
            var entries = this._store.entries;
            for (var i = 0; i < entries.length; i++) {
                var e = entries[i];
                if (!e.deleted) fn.call(self, e.value, e.key, this);
            }
        });
        if (isMap) {
            define(p, 'get', function (key) {
                var e = this._store.find(key);
                return e ? e.value : undefined;
            });
            define(p, 'set', function (key, value) { this._store.put(key, value); return this; });
            define(p, 'keys', function () { return MakeIterator(this._store.entries, function (e) { return e.key; }); });
            define(p, 'values', function () { return MakeIterator(this._store.entries, function (e) { return e.value; }); });
            define(p, 'entries', function () { return MakeIterator(this._store.entries, function (e) { return [e.key, e.value]; }); });
        } else {
            define(p, 'add', function (value) { this._store.put(value, value); return this; });
            define(p, 'values', function () { return MakeIterator(this._store.entries, function (e) { return e.value; }); });
            define(p, 'keys', p.values);
            define(p, 'entries', function () { return MakeIterator(this._store.entries, function (e) { return [e.value, e.value]; }); });
        }
        define(p, '__sigil_iterator', isMap ? p.entries : p.values);
        if (typeof Symbol === 'function' && Symbol.iterator) {
            p[Symbol.iterator] = isMap ? p.entries : p.values;
        }
        define(global, name, Ctor);
    }
    DefineCollection('Map', true);
    DefineCollection('Set', false);

    // WeakMap without weak references: the entries live as long as the map, which is bounded
    // by one heap's lifetime here.
    if (typeof global.WeakMap !== 'function') {
        var WeakMapShim = function () {
            Object.defineProperty(this, '_store', { value: new Store() });
        };
        define(WeakMapShim.prototype, 'get', function (k) { var e = this._store.find(k); return e ? e.value : undefined; });
        define(WeakMapShim.prototype, 'set', function (k, v) { this._store.put(k, v); return this; });
        define(WeakMapShim.prototype, 'has', function (k) { return this._store.find(k) !== null; });
        define(WeakMapShim.prototype, 'delete', function (k) { return this._store.remove(k); });
        define(global, 'WeakMap', WeakMapShim);
    }

    // WeakSet, the same way.
    if (typeof global.WeakSet !== 'function') {
        var WeakSetShim = function () {
            Object.defineProperty(this, '_store', { value: new Store() });
        };
        var CheckWeakKey = function (v) {
            if (v === null || (typeof v !== 'object' && typeof v !== 'function')) throw new TypeError('Invalid value used in weak set');
        };
        define(WeakSetShim.prototype, 'add', function (v) { CheckWeakKey(v); this._store.put(v, true); return this; });
        define(WeakSetShim.prototype, 'has', function (v) { return this._store.find(v) !== null; });
        define(WeakSetShim.prototype, 'delete', function (v) { return this._store.remove(v); });
        define(global, 'WeakSet', WeakSetShim);
    }

    // --- ES2023-ES2024 additions: change-array-by-copy, groupBy, and a few older stragglers ----
    define(ap, 'toReversed', function toReversed() { return ap.slice.call(Object(this)).reverse(); });
    define(ap, 'toSorted', function toSorted(compare) {
        if (compare !== undefined && typeof compare !== 'function') throw new TypeError('The comparison function must be either a function or undefined');
        var copy = [];
        var o = Object(this);
        for (var i = 0; i < (o.length >>> 0); i++) copy.push(o[i]);
        return copy.sort(compare);
    });
    define(ap, 'toSpliced', function toSpliced() {
        var o = Object(this), copy = [];
        for (var i = 0; i < (o.length >>> 0); i++) copy.push(o[i]);
        ap.splice.apply(copy, arguments.length === 0 ? [copy.length, 0] : arguments);
        return copy;
    });
    define(ap, 'with', function (index, value) {
        var o = Object(this), len = o.length >>> 0, k = RelativeIndex(index, len);
        if (k < 0 || k >= len) throw new RangeError('Invalid index : ' + index);
        var copy = [];
        for (var i = 0; i < len; i++) copy.push(i === k ? value : o[i]);
        return copy;
    });
    define(Object, 'groupBy', function groupBy(items, callback) {
        var out = Object.create(null), n = 0;
        ForEachIterable(items, function (v) {
            var key = callback(v, n++);
            key = typeof key === 'symbol' ? key : String(key);
            (out[key] = out[key] || []).push(v);
        });
        return out;
    });
    define(global.Map, 'groupBy', function groupBy(items, callback) {
        var out = new global.Map(), n = 0;
        ForEachIterable(items, function (v) {
            var key = callback(v, n++);
            var list = out.get(key);
            if (!list) { list = []; out.set(key, list); }
            list.push(v);
        });
        return out;
    });
    define(Object, 'getOwnPropertyDescriptors', function getOwnPropertyDescriptors(obj) {
        var out = {};
        Object.getOwnPropertyNames(obj).forEach(function (k) { out[k] = Object.getOwnPropertyDescriptor(obj, k); });
        return out;
    });
    define(String, 'raw', function raw(strings) {
        var r = Object(strings.raw), len = r.length >>> 0, out = '';
        for (var i = 0; i < len; i++) {
            out += String(r[i]);
            if (i + 1 < len && i + 1 < arguments.length) out += String(arguments[i + 1]);
        }
        return out;
    });
    if (typeof Float32Array === 'function') {
        var f32 = new Float32Array(1);
        define(Math, 'fround', function fround(x) { f32[0] = x; return f32[0]; });
    }
    define(Math, 'expm1', function expm1(x) {
        x = +x;
        return Math.abs(x) < 1e-5 ? x + x * x / 2 + x * x * x / 6 : Math.exp(x) - 1;
    });

    // --- Promise --------------------------------------------------------------------------
    // Duktape 2.7 has no Promise. Jobs (reactions, thenable adoption, timers) go into one
    // queue that nothing runs on its own: the action runtime (prelude.js) runs it through
    // __sigil_jobs whenever it awaits a promise and after main returns, so a promise settles
    // in the same order as in a real engine, just without an event loop behind it.
    if (typeof global.Promise !== 'function') {
        var PENDING = 0, FULFILLED = 1, REJECTED = 2;
        var microtasks = [];
        var timers = [];        // {at, seq, fn, args}; virtual time, advanced when run
        var timerSeq = 0;
        var virtualNow = 0;

        var hidden = function (o, name, value) {
            Object.defineProperty(o, name, { value: value, writable: true, configurable: false, enumerable: false });
        };
        var Settle = function (p, state, value) {
            if (p.__state !== PENDING) return;
            p.__state = state;
            p.__value = value;
            var reactions = p.__reactions;
            p.__reactions = null;
            for (var i = 0; i < reactions.length; i++) Schedule(p, reactions[i]);
        };
        var Resolve = function (p, x) {
            if (x === p) return Settle(p, REJECTED, new TypeError('Chaining cycle detected for promise'));
            if (x !== null && (typeof x === 'object' || typeof x === 'function')) {
                var then;
                try { then = x.then; } catch (e) { return Settle(p, REJECTED, e); }
                if (typeof then === 'function') {
                    microtasks.push(function () {
                        var called = false;
                        try {
                            then.call(x, function (y) {
                                if (called) return;
                                called = true;
                                Resolve(p, y);
                            }, function (r) {
                                if (called) return;
                                called = true;
                                Settle(p, REJECTED, r);
                            });
                        } catch (e) {
                            if (!called) { called = true; Settle(p, REJECTED, e); }
                        }
                    });
                    return;
                }
            }
            Settle(p, FULFILLED, x);
        };
        var Schedule = function (p, reaction) {
            microtasks.push(function () {
                var handler = p.__state === FULFILLED ? reaction.onFulfilled : reaction.onRejected;
                if (typeof handler !== 'function') {
                    if (p.__state === FULFILLED) reaction.resolve(p.__value);
                    else reaction.reject(p.__value);
                    return;
                }
                var result;
                try { result = handler(p.__value); } catch (e) { reaction.reject(e); return; }
                reaction.resolve(result);
            });
        };

        var PromiseShim = function Promise(executor) {
            if (!(this instanceof PromiseShim)) throw new TypeError("Promise constructor cannot be invoked without 'new'");
            if (typeof executor !== 'function') throw new TypeError('Promise resolver ' + executor + ' is not a function');
            hidden(this, '__state', PENDING);
            hidden(this, '__value', undefined);
            hidden(this, '__reactions', []);
            var self = this, done = false;
            try {
                executor(function (v) {
                    if (done) return;
                    done = true;
                    Resolve(self, v);
                }, function (r) {
                    if (done) return;
                    done = true;
                    Settle(self, REJECTED, r);
                });
            } catch (e) {
                if (!done) { done = true; Settle(self, REJECTED, e); }
            }
        };
        define(PromiseShim.prototype, 'then', function then(onFulfilled, onRejected) {
            var resolve, reject;
            var next = new PromiseShim(function (a, b) { resolve = a; reject = b; });
            var reaction = { onFulfilled: onFulfilled, onRejected: onRejected, resolve: resolve, reject: reject };
            if (this.__state === PENDING) this.__reactions.push(reaction);
            else Schedule(this, reaction);
            return next;
        });
        define(PromiseShim.prototype, 'catch', function (onRejected) { return this.then(undefined, onRejected); });
        define(PromiseShim.prototype, 'finally', function (onFinally) {
            if (typeof onFinally !== 'function') return this.then(onFinally, onFinally);
            return this.then(function (v) {
                return PromiseShim.resolve(onFinally()).then(function () { return v; });
            }, function (r) {
                return PromiseShim.resolve(onFinally()).then(function () { throw r; });
            });
        });
        define(PromiseShim, 'resolve', function resolve(v) {
            if (v instanceof PromiseShim) return v;
            return new PromiseShim(function (ok) { ok(v); });
        });
        define(PromiseShim, 'reject', function reject(r) {
            return new PromiseShim(function (ok, fail) { fail(r); });
        });
        var Combine = function (iterable, onItem, onEmpty) {
            return new PromiseShim(function (resolve, reject) {
                var items = [];
                ForEachIterable(iterable, function (v) { items.push(v); });
                if (items.length === 0) return onEmpty(resolve, reject);
                var state = { left: items.length, out: new Array(items.length) };
                for (var i = 0; i < items.length; i++) onItem(PromiseShim.resolve(items[i]), i, state, resolve, reject);
            });
        };
        define(PromiseShim, 'all', function all(iterable) {
            return Combine(iterable, function (p, i, st, resolve, reject) {
                p.then(function (v) { st.out[i] = v; if (--st.left === 0) resolve(st.out); }, reject);
            }, function (resolve) { resolve([]); });
        });
        define(PromiseShim, 'allSettled', function allSettled(iterable) {
            return Combine(iterable, function (p, i, st, resolve) {
                p.then(function (v) {
                    st.out[i] = { status: 'fulfilled', value: v };
                    if (--st.left === 0) resolve(st.out);
                }, function (r) {
                    st.out[i] = { status: 'rejected', reason: r };
                    if (--st.left === 0) resolve(st.out);
                });
            }, function (resolve) { resolve([]); });
        });
        define(PromiseShim, 'race', function race(iterable) {
            return Combine(iterable, function (p, i, st, resolve, reject) { p.then(resolve, reject); }, function () {});
        });
        // AggregateError comes from globals.js, evaluated after this file (looked up per call).
        var AllRejected = function (errors) {
            if (typeof global.AggregateError === 'function') return new global.AggregateError(errors, 'All promises were rejected');
            var e = new Error('All promises were rejected');
            e.name = 'AggregateError';
            e.errors = errors;
            return e;
        };
        define(PromiseShim, 'any', function any(iterable) {
            return Combine(iterable, function (p, i, st, resolve, reject) {
                p.then(resolve, function (r) {
                    st.out[i] = r;
                    if (--st.left === 0) reject(AllRejected(st.out));
                });
            }, function (resolve, reject) {
                reject(AllRejected([]));
            });
        });
        define(PromiseShim, 'withResolvers', function withResolvers() {
            var out = {};
            out.promise = new this(function (resolve, reject) { out.resolve = resolve; out.reject = reject; });
            return out;
        });
        define(global, 'Promise', PromiseShim);

        // Timers run in virtual time: once no other job is left, the earliest is due.
        define(global, 'setTimeout', function setTimeout(fn, ms) {
            var args = Array.prototype.slice.call(arguments, 2);
            var delay = Math.max(0, Number(ms) || 0);
            timers.push({ at: virtualNow + delay, seq: ++timerSeq, fn: fn, args: args });
            return timerSeq;
        });
        define(global, 'clearTimeout', function clearTimeout(id) {
            for (var i = 0; i < timers.length; i++) {
                if (timers[i].seq === id) { timers.splice(i, 1); return; }
            }
        });
        // setInterval re-arms one timeout per tick under the interval's own id. An interval
        // nobody clears keeps the run going until its time limit, as it would keep a process.
        var intervals = {};
        define(global, 'setInterval', function setInterval(fn, ms) {
            var args = Array.prototype.slice.call(arguments, 2);
            var id = ++timerSeq;
            var tick = function () {
                intervals[id] = global.setTimeout(tick, ms);
                if (typeof fn === 'function') fn.apply(undefined, args);
            };
            intervals[id] = global.setTimeout(tick, ms);
            return id;
        });
        define(global, 'clearInterval', function clearInterval(id) {
            if (!Object.prototype.hasOwnProperty.call(intervals, id)) return;
            global.clearTimeout(intervals[id]);
            delete intervals[id];
        });
        define(global, 'queueMicrotask', function queueMicrotask(fn) {
            if (typeof fn !== 'function') throw new TypeError('queueMicrotask needs a function');
            microtasks.push(fn);
        });

        // For the action runtime only (prelude.js takes and deletes it):
        //   runOne() runs the next job and returns true, or returns false when none is left;
        //   state(p) is [0 pending | 1 fulfilled | 2 rejected, value] for a shim promise.
        define(global, '__sigil_jobs', {
            runOne: function () {
                if (microtasks.length > 0) {
                    microtasks.shift()();
                    return true;
                }
                if (timers.length === 0) return false;
                var first = 0;
                for (var i = 1; i < timers.length; i++) {
                    if (timers[i].at < timers[first].at ||
                        (timers[i].at === timers[first].at && timers[i].seq < timers[first].seq)) first = i;
                }
                var t = timers.splice(first, 1)[0];
                if (t.at > virtualNow) virtualNow = t.at;
                if (typeof t.fn === 'function') t.fn.apply(undefined, t.args);
                return true;
            },
            state: function (p) { return [p.__state, p.__value]; },
            isPromise: function (p) { return p instanceof PromiseShim; }
        });
    }

    // --- Error constructors as the super of an ES5-lowered class ------------------------------
    // buble lowers `class E extends Error { constructor(m) { super(m); } }` to `function E(m) {
    // Error.call(this, m); }` (`Error.apply(this, args)` with class fields), as TypeScript's ES5
    // output does (`_super.call(this, m) || this`). Duktape's Error, called as a function,
    // ignores `this` and returns a new error, so the instance got no message and no cause. Error
    // gets its own call and apply (the other error constructors and every subclass inherit them
    // through their prototype chain): on an instance of a subclass of the constructor they do to
    // `this` what super(message, options) does in V8 and answer `this`; anything else goes to
    // Function.prototype's. The constructors stay Duktape's own, so `new Error(m)`, `Error(m)`
    // and the errors the engine raises are exactly as before. The instance needs no stack from
    // here: Duktape gives every object a `new` expression makes that inherits Error.prototype a
    // traceback once its constructor returns, starting at that `new` and headed, when read, by
    // the subclass's name and message, as V8 prints a derived class's stack.
    var NativeApply = Function.prototype.apply;
    var ERROR_CONSTRUCTORS = [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError];
    function HiddenData(o, name, value) {
        Object.defineProperty(o, name, { value: value, writable: true, enumerable: false, configurable: true });
    }
    function CallError(ctor, self, args) {
        var asSuper = ERROR_CONSTRUCTORS.indexOf(ctor) >= 0 && self instanceof ctor &&
                      Object.getPrototypeOf(self) !== ctor.prototype && args !== null && typeof args === 'object';
        if (!asSuper) return NativeApply.call(ctor, self, args);
        var message = args[0], options = args[1];
        if (message !== undefined) HiddenData(self, 'message', String(message));
        // ES2022 InstallErrorCause: an own `cause` whenever the options object has one.
        if (options !== null && typeof options === 'object' && 'cause' in options) HiddenData(self, 'cause', options.cause);
        return self;
    }
    if (!Object.prototype.hasOwnProperty.call(Error, 'call')) {
        HiddenData(Error, 'call', function call(self) {
            return CallError(this, self, Array.prototype.slice.call(arguments, 1));
        });
        HiddenData(Error, 'apply', function apply(self, args) {
            return CallError(this, self, args === null || args === undefined ? [] : args);
        });
    }

    // --- Reflect.construct(target, args, newTarget) ------------------------------------------
    // Duktape 2.7 refuses a newTarget other than the target ("unsupported"). Babel's class helpers
    // (_createSuper, _wrapNativeSuper, as bundled libraries carry them) construct every subclass
    // instance that way once `typeof Proxy === 'function'`, which it is in the action heap. Here
    // an ECMAScript target runs on an object that has newTarget's prototype from the start, as
    // `new` gives a subclass; a built-in or bound target builds its object, which then takes
    // newTarget's prototype (Babel's own fallback, and what a built-in makes in V8).
    if (typeof Reflect === 'object' && Reflect !== null && typeof Reflect.construct === 'function') {
        var NativeConstruct = Reflect.construct;
        var FunctionText = Function.prototype.toString;
        HiddenData(Reflect, 'construct', function construct(target, args, newTarget) {
            if (arguments.length < 3 || newTarget === target) return NativeConstruct(target, args);
            if (typeof target !== 'function' || typeof newTarget !== 'function') {
                throw new TypeError('Reflect.construct: target and newTarget must be constructors');
            }
            if (args === null || typeof args !== 'object') throw new TypeError('CreateListFromArrayLike called on non-object');
            var proto = newTarget.prototype;
            if (proto === null || (typeof proto !== 'object' && typeof proto !== 'function')) proto = target.prototype;
            if (FunctionText.call(target).indexOf('[ecmascript code]') >= 0) {
                var self = Object.create(proto);
                var out = NativeApply.call(target, self, args);
                return out !== null && (typeof out === 'object' || typeof out === 'function') ? out : self;
            }
            return Object.setPrototypeOf(NativeConstruct(target, args), proto);
        });
    }

    // V8's Error.captureStackTrace(target, constructorOpt), which libraries call unguarded: an
    // own `stack` on target, headed by its name and message, with the caller's frames (without
    // those above and including the most recent call of constructorOpt, matched by its name).
    define(Error, 'captureStackTrace', function captureStackTrace(target, constructorOpt) {
        if (target === null || (typeof target !== 'object' && typeof target !== 'function')) {
            throw new TypeError('Invalid argument');
        }
        // The trace's first line is its header; this function's own frame (shims.js) is not in it,
        // since stacks show the script's frames only (prelude.js).
        var frames = String(new Error().stack).split('\n').slice(1);
        var skipTo = typeof constructorOpt === 'function' ? constructorOpt.name : '';
        if (skipTo) {
            for (var i = 0; i < frames.length; i++) {
                if (frames[i].indexOf('    at ' + skipTo + ' (') === 0) {
                    frames = frames.slice(i + 1);
                    break;
                }
            }
        }
        var name = target.name === undefined ? 'Error' : String(target.name);
        var message = target.message === undefined ? '' : String(target.message);
        var header = name === '' ? message : message === '' ? name : name + ': ' + message;
        HiddenData(target, 'stack', [header].concat(frames).join('\n'));
    });

    // --- V8's wording for the errors the engine raises ---------------------------------------
    // Actions report e.message in their answers and some test it ("is not defined"), as written
    // for V8; Duktape words the same errors its own way. Its errCreate hook sees every error as it
    // is made, so the common ones get V8's message (the expression V8 quotes, `o.f` in "o.f is not
    // a function", is not known here: the property name stands for it). Others keep Duktape's.
    // The hook stays in force after the Duktape object is hidden from actions (child.cpp).
    var V8_MESSAGES = [
        [/^identifier '(.*)' undefined$/, function (m) { return m[1] + ' is not defined'; }],
        [/^.* not callable \(property '(.*)' of .*\)$/, function (m) { return m[1] + ' is not a function'; }],
        [/^(undefined|null|[^ ]+) not callable$/, function (m) { return m[1] + ' is not a function'; }],
        [/^cannot read property (?:'(.*)'|(\S+)) of (undefined|null)$/, function (m) {
            return 'Cannot read properties of ' + m[3] + " (reading '" + (m[1] !== undefined ? m[1] : m[2]) + "')";
        }],
        [/^cannot write property (?:'(.*)'|(\S+)) of (undefined|null)$/, function (m) {
            return 'Cannot set properties of ' + m[3] + " (setting '" + (m[1] !== undefined ? m[1] : m[2]) + "')";
        }]
    ];
    if (typeof Duktape === 'object' && Duktape !== null && !('errCreate' in Duktape)) {
        Duktape.errCreate = function (e) {
            if (!(e instanceof TypeError || e instanceof ReferenceError) || typeof e.message !== 'string') return e;
            for (var i = 0; i < V8_MESSAGES.length; i++) {
                var m = V8_MESSAGES[i][0].exec(e.message);
                if (m === null) continue;
                try {
                    e.message = V8_MESSAGES[i][1](m);
                } catch (ignored) {
                    // A non-writable message stays as it is.
                }
                break;
            }
            return e;
        };
    }
})(this);
