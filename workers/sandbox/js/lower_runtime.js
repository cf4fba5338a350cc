// Runtime of the code lower.js emits, evaluated in every action heap after shims.js and after
// JSBI (node_modules/jsbi, loaded by the sandbox as the global JSBI). Plain ES5.1.
//
// Helpers of the syntax rewrites:
//   __sigil_oc(v, f)            v?.<rest>: undefined when v is null or undefined, else f(v)
//   __sigil_ocall(o, get, k)    o.m?.(args): f = get(o); undefined when f is nullish, else k(f, o)
//   __sigil_nc(v, f)            v ?? <f()>
//   __sigil_la(o, key, op, f)   o[key] ??= / ||= / &&= <f()> (op 0, 1, 2)
//   __sigil_pf(o, key, v, enumerable)   class field definition
//   __sigil_await_all(xs)       for await (x of xs): the elements (of an array, an iterable or
//                               an async iterable such as a ReadableStream), each awaited
//   __sigil_spread(x)           ...x in arrays and calls, and for-of's object: an array as it
//                               is; strings (by code point), Sets, Maps, iterators, array-likes
//                               as new arrays
//   __sigil_tpl(cooked, raw)    the strings argument of a tagged template
// BigInt (only code that mentions BigInt is rewritten onto these):
//   __sigil_BigInt(x)           the BigInt function (BigInt(x), BigInt.asUintN/asIntN)
//   __sigil_Number(x)           Number(x) that converts BigInts
//   __sigil_b.<op>(a, b)        every arithmetic, bitwise and comparison operator, typeof,
//                               ++/--, compound assignment, template interpolation
//   __sigil_b.mulmod(a, b, m)   a * b % m when m is a name or a literal
// BigInt values are JSBI instances: exact arbitrary precision, V8's error types and messages
// for mixing, division by zero, negative exponents and JSON.stringify. DataView.prototype's
// getBigInt64/getBigUint64/setBigInt64/setBigUint64 read and write them.
(function (global) {
    'use strict';

    function Define(name, value) {
        Object.defineProperty(global, name, { value: value, writable: false, enumerable: false, configurable: false });
    }

    Define('__sigil_oc', function (v, f) { return v === null || v === undefined ? undefined : f(v); });
    Define('__sigil_ocall', function (o, get, k) {
        var f = get(o);
        return f === null || f === undefined ? undefined : k(f, o);
    });
    Define('__sigil_nc', function (v, f) { return v === null || v === undefined ? f() : v; });
    Define('__sigil_la', function (o, key, op, f) {
        var v = o[key];
        if (op === 0 ? (v !== null && v !== undefined) : op === 1 ? v : !v) return v;
        return (o[key] = f());
    });
    Define('__sigil_pf', function (o, key, v, enumerable) {
        Object.defineProperty(o, key, { value: v, writable: true, enumerable: !!enumerable, configurable: true });
    });
    Define('__sigil_spread', function (x) { return Array.isArray(x) ? x : Array.from(x); });
    Define('__sigil_tpl', function (cooked, raw) {
        Object.defineProperty(cooked, 'raw', { value: Object.freeze(raw) });
        return Object.freeze(cooked);
    });
    // Symbol.asyncIterator (Duktape has none): ReadableStream (web-streams-polyfill, loaded
    // after this file) defines its async iteration under it, and code may name it.
    if (typeof Symbol === 'function' && Symbol.asyncIterator === undefined) {
        Object.defineProperty(Symbol, 'asyncIterator', { value: Symbol('Symbol.asyncIterator') });
    }
    // for await (x of xs): an async iterable (a ReadableStream) is read to its end first, each
    // step awaited; anything else is walked as for-of walks it, each element awaited. (The loop's
    // body runs after the whole stream is read: await settles synchronously here anyway.)
    Define('__sigil_await_all', function (xs) {
        var out = [];
        var asyncIterator = typeof Symbol === 'function' ? Symbol.asyncIterator : undefined;
        if (asyncIterator !== undefined && xs !== null && xs !== undefined && !Array.isArray(xs) &&
            typeof xs[asyncIterator] === 'function') {
            var it = xs[asyncIterator]();
            for (;;) {
                var step = __sigil_await(it.next());
                if (step.done) return out;
                out.push(step.value);
            }
        }
        xs = global.__sigil_spread(xs);
        for (var i = 0; i < xs.length; i++) out.push(__sigil_await(xs[i]));
        return out;
    });

    var J = global.JSBI;
    if (typeof J !== 'function') throw new Error('JSBI is not loaded');
    // The sandbox's BigInt natives (bigint_arith.h) when present; see Arith below.
    var natives = typeof global.__sigil_bigint_arith === 'function' ? global.__sigil_bigint_arith(J.prototype) : null;
    if (natives !== null) delete global.__sigil_bigint_arith;
    var ZERO = J.BigInt(0);
    var ONE = J.BigInt(1);

    function IsBig(x) { return x instanceof J; }
    function Mix() { throw new TypeError('Cannot mix BigInt and other types, use explicit conversions'); }

    // JSBI extends Array; JSON.stringify must refuse BigInts as V8 does (code may still define
    // BigInt.prototype.toJSON, which replaces this one).
    function Unserializable() { return new TypeError('Do not know how to serialize a BigInt'); }
    // Whether the JSON.stringify under way has a replacer function (see below).
    var replacing = false;
    Object.defineProperty(J.prototype, 'toJSON', {
        value: function () {
            if (replacing) return this;
            throw Unserializable();
        },
        writable: true, enumerable: false, configurable: true
    });
    // V8 hands a replacer function the BigInt itself (BigInts have no toJSON) and refuses only a
    // BigInt the replacer leaves, so JSON.stringify(x, (k, v) => typeof v === 'bigint' ?
    // v.toString() : v) works. Here the toJSON above runs before the replacer, so under such a
    // call it passes the value on, and the replacer is wrapped to refuse a BigInt it answers.
    var nativeStringify = JSON.stringify;
    Object.defineProperty(JSON, 'stringify', {
        value: function stringify(value, replacer, space) {
            var outer = replacing;
            var f = replacer;
            replacing = typeof replacer === 'function';
            if (replacing) {
                f = function (key, v) {
                    var out = replacer.call(this, key, v);
                    if (out instanceof J) throw Unserializable();
                    return out;
                };
            }
            try {
                return nativeStringify(value, f, space);
            } finally {
                replacing = outer;
            }
        },
        writable: true, enumerable: false, configurable: true
    });

    // ToNumber of a BigInt (Math.max(1n), 1n * 1 through valueOf) is V8's TypeError.
    Object.defineProperty(J.prototype, 'valueOf', {
        value: function () { throw new TypeError('Cannot convert a BigInt value to a number'); },
        writable: true, enumerable: false, configurable: true
    });

    // Decimal text: small values through numbers, others through the sandbox's native (OpenSSL
    // BN, hex in, decimal out) when there is one; JSBI's own conversion is slow in Duktape
    // (milliseconds for 300 bits) and stays for other radixes and very long values.
    var hexToDec = typeof global.__sigil_bigint_hex_to_dec === 'function' ? global.__sigil_bigint_hex_to_dec : null;
    var jsbiToString = J.prototype.toString;
    var MAX_NATIVE_HEX = 16384;
    var nativeText = natives !== null ? natives.text : null;
    Object.defineProperty(J.prototype, 'toString', {
        value: function (radix) {
            // Hex and decimal text from the native (JSBI's costs 300 ms at 64 Ki bits: each
            // character concatenated copies the string); undefined past its size limit.
            if (nativeText !== null && (radix === undefined || radix === 10 || radix === 16)) {
                var text = nativeText(this, radix === 16 ? 16 : 10);
                if (text !== undefined) return text;
            }
            if (radix === undefined || radix === 10) {
                if (this.length <= 1) return String(J.toNumber(this));  // one 30-bit digit
                if (hexToDec !== null) {
                    var negative = this.sign;
                    var hex = jsbiToString.call(negative ? J.unaryMinus(this) : this, 16);
                    if (hex.length <= MAX_NATIVE_HEX) return (negative ? '-' : '') + hexToDec(hex);
                }
            }
            return jsbiToString.call(this, radix);
        },
        writable: true, enumerable: false, configurable: true
    });

    var nativeParse = natives !== null ? natives.parse : null;
    var HEX_TEXT = /^0[xX][0-9a-fA-F]+$/;
    var DEC_TEXT = /^[0-9]+$/;
    function BigIntFn(x) {
        if (this instanceof BigIntFn) throw new TypeError('BigInt is not a constructor');
        if (IsBig(x)) return x;
        if (typeof x === 'number') {
            if (!isFinite(x) || Math.floor(x) !== x) {
                throw new RangeError('The number ' + x + ' cannot be converted to a BigInt because it is not an integer');
            }
            return J.BigInt(x);
        }
        if (typeof x === 'string') {
            // 0x-prefixed hex (how EC code reads bytes as numbers) and plain decimal through the
            // native; everything else (signs, spaces, other prefixes, bad text) through JSBI.
            if (nativeParse !== null) {
                var parsed = HEX_TEXT.test(x) ? nativeParse(x.slice(2), 16) : DEC_TEXT.test(x) ? nativeParse(x, 10) : undefined;
                if (parsed !== undefined) return parsed;
            }
            try {
                return J.BigInt(x);
            } catch (e) {
                throw new SyntaxError('Cannot convert ' + x + ' to a BigInt');
            }
        }
        if (typeof x === 'boolean') return x ? ONE : ZERO;
        if (x !== null && typeof x === 'object') {
            var prim = x.valueOf();
            if (prim === x || (prim !== null && typeof prim === 'object' && !IsBig(prim))) prim = String(x);
            return BigIntFn(prim);
        }
        throw new TypeError('Cannot convert ' + x + ' to a BigInt');
    }
    function ToBig(x) {
        if (IsBig(x)) return x;
        if (typeof x === 'boolean') return x ? ONE : ZERO;
        if (typeof x === 'string') return BigIntFn(x);
        throw new TypeError('Cannot convert ' + x + ' to a BigInt');
    }
    function Index(bits) {
        bits = Number(bits);
        if (bits !== bits) return 0;
        if (bits < 0 || bits > 9007199254740991) throw new RangeError('Invalid value: not (convertible to) a safe integer');
        return Math.floor(bits);
    }
    BigIntFn.prototype = J.prototype;
    BigIntFn.asUintN = function (bits, x) { return J.asUintN(Index(bits), ToBig(x)); };
    BigIntFn.asIntN = function (bits, x) { return J.asIntN(Index(bits), ToBig(x)); };
    Define('__sigil_BigInt', BigIntFn);

    // ToBigInt of the specification (what DataView's setters apply): numbers are refused, objects
    // give their primitive first.
    function ToBigInt(x) {
        if (x !== null && typeof x === 'object' && !IsBig(x)) {
            var prim = x.valueOf();
            if (prim === x || (prim !== null && typeof prim === 'object' && !IsBig(prim))) prim = x.toString();
            x = prim;
        }
        if (typeof x === 'number') throw new TypeError('Cannot convert ' + x + ' to a BigInt');
        return ToBig(x);
    }

    // DataView's BigInt accessors (ES2020; Duktape has none) over JSBI's: the bounds are checked
    // before anything is written, as V8 does (JSBI writes the two halves one after the other), and
    // set wraps its value to 64 bits (BigInt.asUintN / asIntN). BigInt64Array and BigUint64Array
    // are not here: their elements would need a Proxy.
    var NativeDataView = global.DataView;
    var OUT_OF_BOUNDS = 'Offset is outside the bounds of the DataView';
    // The receiver check and ToIndex of the offset, in the specification's order.
    function ViewIndex(view, offset, method) {
        if (!(view instanceof NativeDataView)) {
            throw new TypeError('Method DataView.prototype.' + method + ' called on incompatible receiver ' + String(view));
        }
        var n = offset === undefined ? 0 : Number(offset);
        n = n !== n ? 0 : n < 0 ? Math.ceil(n) : Math.floor(n);
        if (n < 0 || n > 9007199254740991) throw new RangeError(OUT_OF_BOUNDS);
        return n;
    }
    function InBounds(view, index) {
        if (index + 8 > view.byteLength) throw new RangeError(OUT_OF_BOUNDS);
        return index;
    }
    function DefineOn(target, name, value) {
        Object.defineProperty(target, name, { value: value, writable: true, enumerable: false, configurable: true });
    }
    if (typeof NativeDataView === 'function' && typeof NativeDataView.prototype.getBigInt64 !== 'function') {
        var viewProto = NativeDataView.prototype;
        DefineOn(viewProto, 'getBigInt64', function getBigInt64(byteOffset) {
            return J.DataViewGetBigInt64(this, InBounds(this, ViewIndex(this, byteOffset, 'getBigInt64')), !!arguments[1]);
        });
        DefineOn(viewProto, 'getBigUint64', function getBigUint64(byteOffset) {
            return J.DataViewGetBigUint64(this, InBounds(this, ViewIndex(this, byteOffset, 'getBigUint64')), !!arguments[1]);
        });
        DefineOn(viewProto, 'setBigInt64', function setBigInt64(byteOffset, value) {
            var index = ViewIndex(this, byteOffset, 'setBigInt64');
            var v = ToBigInt(value);
            J.DataViewSetBigInt64(this, InBounds(this, index), v, !!arguments[2]);
        });
        DefineOn(viewProto, 'setBigUint64', function setBigUint64(byteOffset, value) {
            var index = ViewIndex(this, byteOffset, 'setBigUint64');
            var v = ToBigInt(value);
            J.DataViewSetBigUint64(this, InBounds(this, index), v, !!arguments[2]);
        });
    }

    Define('__sigil_Number', function (x) {
        if (arguments.length === 0) return 0;
        return IsBig(x) ? J.toNumber(x) : Number(x);
    });

    // The sandbox's arithmetic natives (bigint_arith.h, OpenSSL BN) when there are some: each
    // answers a new JSBI value, or undefined when the operation is JSBI's to do (an operand over
    // 64 Ki bits, a result too large, a zero divisor, a negative exponent), and JSBI then does it
    // as before, with V8's errors. The call beats JSBI in the interpreter at every size, one
    // 30-bit digit included (bench_bigint's crossover), so every BigInt operation takes it.
    function Native(op) { return natives !== null ? natives[op] : null; }

    // a op b for the operators where both sides must be of one numeric type; `op` names the
    // native, if any, that takes two BigInts. (instanceof J is IsBig inlined: a call costs more
    // than the test in Duktape, and this is the path of every BigInt operation.)
    function Arith(big, native, op) {
        var fast = op === undefined ? null : Native(op);
        if (fast === null) {
            return function (a, b) {
                if (typeof a === 'number' && typeof b === 'number') return native(a, b);
                var ba = a instanceof J;
                var bb = b instanceof J;
                if (ba && bb) return big(a, b);
                if (ba || bb) Mix();
                return native(a, b);
            };
        }
        return function (a, b) {
            if (typeof a === 'number' && typeof b === 'number') return native(a, b);
            var ba = a instanceof J;
            var bb = b instanceof J;
            if (ba && bb) {
                var r = fast(a, b);
                return r !== undefined ? r : big(a, b);
            }
            if (ba || bb) Mix();
            return native(a, b);
        };
    }
    // The other side of a comparison with a BigInt, as JSBI's comparisons take it: null and
    // undefined are never equal to one (== null is false) and compare as 0 and NaN; booleans as 0/1.
    function Operand(x) {
        if (x === null) return 0;
        if (x === undefined) return NaN;
        if (typeof x === 'boolean') return x ? 1 : 0;
        return x;
    }
    // -1, 0 or 1 for two JSBI values, from their signs, lengths and digits (JSBI's own compare is
    // the same walk under several more calls, which is most of a comparison's cost in Duktape; noble
    // compares with 0n around every field operation). Zero has no digits and is never negative.
    function Order(a, b) {
        if (a.sign !== b.sign) return a.sign ? -1 : 1;
        var s = a.sign ? -1 : 1;
        if (a.length !== b.length) return a.length > b.length ? s : -s;
        for (var i = a.length - 1; i >= 0; i--) {
            if (a[i] !== b[i]) return a[i] > b[i] ? s : -s;
        }
        return 0;
    }
    function Compare(big, native, equality, test) {
        return function (a, b) {
            if (typeof a === 'number' && typeof b === 'number') return native(a, b);
            if (a instanceof J && b instanceof J) return test(Order(a, b));
            if (IsBig(a) || IsBig(b)) {
                if (equality && (a === null || a === undefined || b === null || b === undefined)) return native(a, b);
                return big(Operand(a), Operand(b));
            }
            return native(a, b);
        };
    }

    var nativeAdd = Native('add');
    var nativeMulMod = Native('mulmod');
    var b = {
        add: function (a, c) {
            if (typeof a === 'number' && typeof c === 'number') return a + c;
            var ba = a instanceof J;
            var bc = c instanceof J;
            if (ba && bc && nativeAdd !== null) {
                var r = nativeAdd(a, c);
                if (r !== undefined) return r;
            }
            if (ba || bc) return J.ADD(a, c);
            return a + c;
        },
        sub: Arith(J.subtract, function (a, c) { return a - c; }, 'sub'),
        mul: Arith(J.multiply, function (a, c) { return a * c; }, 'mul'),
        div: Arith(J.divide, function (a, c) { return a / c; }, 'div'),
        mod: Arith(J.remainder, function (a, c) { return a % c; }, 'mod'),
        pow: Arith(J.exponentiate, function (a, c) { return Math.pow(a, c); }, 'pow'),
        and: Arith(J.bitwiseAnd, function (a, c) { return a & c; }, 'and'),
        or: Arith(J.bitwiseOr, function (a, c) { return a | c; }, 'or'),
        xor: Arith(J.bitwiseXor, function (a, c) { return a ^ c; }, 'xor'),
        shl: Arith(J.leftShift, function (a, c) { return a << c; }, 'shl'),
        sar: Arith(J.signedRightShift, function (a, c) { return a >> c; }, 'sar'),
        shr: function (a, c) {
            if (IsBig(a) && IsBig(c)) throw new TypeError('BigInts have no unsigned right shift, use >> instead');
            if (IsBig(a) || IsBig(c)) Mix();
            return a >>> c;
        },
        lt: Compare(J.LT, function (a, c) { return a < c; }, false, function (o) { return o < 0; }),
        le: Compare(J.LE, function (a, c) { return a <= c; }, false, function (o) { return o <= 0; }),
        gt: Compare(J.GT, function (a, c) { return a > c; }, false, function (o) { return o > 0; }),
        ge: Compare(J.GE, function (a, c) { return a >= c; }, false, function (o) { return o >= 0; }),
        eq: Compare(J.EQ, function (a, c) { return a == c; }, true, function (o) { return o === 0; }),  // eslint-disable-line eqeqeq
        ne: Compare(J.NE, function (a, c) { return a != c; }, true, function (o) { return o !== 0; }),  // eslint-disable-line eqeqeq
        seq: function (a, c) { return a instanceof J && c instanceof J ? Order(a, c) === 0 : a === c; },
        sne: function (a, c) { return a instanceof J && c instanceof J ? Order(a, c) !== 0 : a !== c; },
        neg: function (a) { return IsBig(a) ? J.unaryMinus(a) : -a; },
        not: function (a) { return IsBig(a) ? J.bitwiseNot(a) : ~a; },
        pos: function (a) {
            if (IsBig(a)) throw new TypeError('Cannot convert a BigInt value to a number');
            return +a;
        },
        lnot: function (a) { return a instanceof J ? a.length === 0 : !a; },
        truth: function (a) { return a instanceof J ? a.length !== 0 : !!a; },
        land: function (a, f) { return (a instanceof J ? a.length !== 0 : a) ? f() : a; },
        lor: function (a, f) { return (a instanceof J ? a.length !== 0 : a) ? a : f(); },
        type: function (a) { return IsBig(a) ? 'bigint' : typeof a; },
        inc: function (a) { return IsBig(a) ? J.add(a, ONE) : +a + 1; },
        dec: function (a) { return IsBig(a) ? J.subtract(a, ONE) : +a - 1; },
        // x++: the old value (as a numeric), after the assignment in the second argument ran.
        post: function (old) { return IsBig(old) ? old : +old; },
        upd: function (o, key, step, prefix) {
            var old = o[key];
            var next = step > 0 ? b.inc(old) : b.dec(old);
            o[key] = next;
            return prefix ? next : b.post(old);
        },
        ca: function (o, key, op, f) {
            var old = o[key];
            return (o[key] = b[op](old, f()));
        },
        str: function (a) { return IsBig(a) ? a.toString() : a; },
        // a * b % m (lower.js fuses it when m is a name or a literal): one native call when all
        // three are BigInts, else the two operators in order, with their errors.
        mulmod: function (a, c, m) {
            if (nativeMulMod !== null && a instanceof J && c instanceof J && m instanceof J) {
                var r = nativeMulMod(a, c, m);
                if (r !== undefined) return r;
            }
            return b.mod(b.mul(a, c), m);
        }
    };
    Define('__sigil_b', b);
})(this);
