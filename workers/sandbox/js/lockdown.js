// lockdown.js: the last script of every run heap's set-up (child.cpp's SetUpGlobals, after the
// natives, shims.js, lower_runtime.js, globals.js, the web packages, prelude.js and ethers), so it
// sees every global the runtime defines. Evaluated as eval code with no file name, as the C++
// string it was before; embedded at build time (LOCKDOWN_JS).
//
// Hides what a script must not reach and freezes every built-in it can reach (but BigInt's
// prototype), so nothing a script does can change how the natives or later code behave.
//
// Freezing alone breaks ordinary code through the "override mistake" (ES5.1 8.12.4): an
// assignment to a property an object inherits as non-writable fails, so `E.prototype.constructor
// = E` (every class buble lowers), `this.name = ...` on an error, `o.toString = f` and a class's
// own toString() fail, silently in sloppy code and with a TypeError in strict code. As SES does
// ("enablePropertyOverrides", its moderate list), the properties such code assigns become
// accessors before the freeze: the getter answers the original value, the setter gives the
// receiver an own data property (as the assignment would on an unfrozen prototype) and refuses
// the prototype itself. Each read of one of them is a getter call, so the list stays short:
// `constructor` of every frozen prototype, Error's and each native error's name, message and
// toString, Object.prototype's methods an object commonly redefines, and Function's and Array's
// toString.
//
// Proxy stays (bundled libraries build on it at load). Each run is its own confined child, and
// a Proxy's traps (get, set, has, deleteProperty, ownKeys, apply, construct) only run script
// code where a getter or setter could already. No native looks through one: natives are reached
// only through the runtime's wrappers and take strings, numbers, booleans and buffer objects
// through duk_require_* and duk_get_buffer_data, which refuse a Proxy without any trap running;
// the wrappers hand them fresh views made from what a Proxy answers, which the engine range-checks;
// ToString of one (TextEncoder, the log) runs its traps before the native holds any pointer into
// the result. Duktape 2.7 has no getPrototypeOf, setPrototypeOf, isExtensible, preventExtensions,
// getOwnPropertyDescriptor or defineProperty trap and no Proxy.revocable; Object.keys, for-in
// and JSON.stringify list only the target's keys, and a Proxy is neither target nor handler.
// Babel's class helpers construct through Reflect.construct with a newTarget once Proxy exists;
// shims.js makes that work.
(function (g) {
  delete g.Duktape; delete g.CBOR;
  Object.defineProperty(Math, 'random', { value: g.__sigil_random, writable: false, configurable: false });
  delete g.__sigil_random;
  var hasOwn = Object.prototype.hasOwnProperty, defineProperty = Object.defineProperty;
  function Overridable(o, name, label) {
    var d = Object.getOwnPropertyDescriptor(o, name);
    if (!d || !('value' in d) || !d.configurable) return;
    var value = d.value;
    defineProperty(o, name, {
      get: function () { return value; },
      set: function (v) {
        'use strict';
        if (this === o) throw new TypeError("Cannot assign to read only property '" + name + "' of object '" + label + "'");
        if (this === null || (typeof this !== 'object' && typeof this !== 'function')) return;
        if (hasOwn.call(this, name)) this[name] = v;
        else defineProperty(this, name, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable, configurable: true
    });
  }
  ['Error', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError', 'TypeError', 'URIError', 'AggregateError'].forEach(function (n) {
    if (typeof g[n] !== 'function') return;
    ['name', 'message', 'toString'].forEach(function (k) { Overridable(g[n].prototype, k, n + '.prototype'); });
  });
  ['toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString'].forEach(function (k) {
    Overridable(Object.prototype, k, 'Object.prototype');
  });
  Overridable(Function.prototype, 'toString', 'Function.prototype');
  Overridable(Array.prototype, 'toString', 'Array.prototype');
  var seen = [];
  // BigInt.prototype (lower_runtime.js) stays open as in V8: actions define
  // BigInt.prototype.toJSON to return BigInts. Only the run's own code sees it.
  if (g.__sigil_BigInt) seen.push(g.__sigil_BigInt.prototype);
  function freeze(o) {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function')) return;
    if (o === g || seen.indexOf(o) >= 0) return;
    seen.push(o);
    // A prototype, whichever way the walk reaches it first (a constructor or an instance).
    var c = Object.getOwnPropertyDescriptor(o, 'constructor');
    if (c && typeof c.value === 'function' && c.value.prototype === o) {
      Overridable(o, 'constructor', (c.value.name || 'anonymous') + '.prototype');
    }
    Object.freeze(o);
    if (typeof o === 'function' && o.prototype) freeze(o.prototype);
    freeze(Object.getPrototypeOf(o));
  }
  Object.getOwnPropertyNames(g).forEach(function (n) {
    var d = Object.getOwnPropertyDescriptor(g, n);
    if (d && 'value' in d) freeze(d.value);
    if (n.indexOf('__sigil_') === 0) Object.defineProperty(g, n, { writable: false, configurable: false });
  });
})(this);
