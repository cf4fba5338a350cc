/*
 * regexp.js: RegExp with the u, v and s flags, which Duktape's RegExp does not have. A pattern
 * with the u or v flag is rewritten into one without them by regexpu-core (npm, pinned: the
 * rewriting Babel uses), which regexp_unicode.cpp compiles in a run only when a pattern needs it,
 * with the Unicode property sets that pattern names (\p{...}): astral characters and \u{...}
 * escapes become surrogate pairs, `.` and negated classes match whole code points, \p{...} becomes
 * the property's code points, case-insensitive matching follows Unicode's case folding, and the
 * v flag's set notation ([\p{L}--[a-z]], \q{...}) is expanded. A pattern whose meaning the flag
 * does not change (no astral character, `.`, negated class or escape, \u{...}, \p{...}; neither the
 * i nor the v flag), such as ^[a-z]+$, is compiled with the flag dropped and loads nothing. Each
 * run keeps the rewritten text of each pattern it has seen. The object answers the source, flags,
 * unicode, unicodeSets and dotAll it was given, as V8's does. lower.js sends regular expression
 * literals that buble cannot lower (\p{...} with the u flag; the v flag) here through
 * __sigil_regexp. The s flag alone is lowered without regexpu-core (`.` outside classes becomes
 * [\s\S]), as lower.js does for literals.
 *
 * Not here: the flags' stricter syntax when nothing needs rewriting (a pattern such as \- that the
 * u flag refuses is accepted), named groups, lookbehind and the y and d flags, which Duktape's
 * engine lacks with or without a flag.
 *
 * Evaluated after subtle.js, in the same source (WebGlobalsSource), before the packages and ethers,
 * which so construct their RegExps through it too. Plain ES5.1.
 */
(function (global) {
    'use strict';

    function TakeNative(name) {
        var f = global[name];
        if (typeof f !== 'function') throw new Error('regexp.js: ' + name + ' must come first');
        delete global[name];
        return f;
    }
    var loadRegexpu = TakeNative('__sigil_regexpu');
    var loadProperty = TakeNative('__sigil_unicode_property');
    var NativeRegExp = global.RegExp;
    var proto = NativeRegExp.prototype;
    var hasOwn = Object.prototype.hasOwnProperty;

    // regexpu-core's rewritePattern, compiled on first use; each Unicode property set it asks for
    // is compiled when first named.
    var load = null;
    function RewritePattern() {
        if (load === null) {
            var properties = {};
            load = loadRegexpu({
                // regexpu-core's require('regenerate-unicode-properties/<Property>/<Value>.js').
                unicodeProperty: function (file) {
                    var path = String(file).replace(/^regenerate-unicode-properties\//, '').replace(/\.js$/, '');
                    if (hasOwn.call(properties, path)) return properties[path];
                    var factory = loadProperty(path);
                    if (typeof factory !== 'function') throw new Error('Unknown Unicode property ' + path);
                    var module = { exports: {} };
                    factory.call(module.exports, module, module.exports, function (name) {
                        if (name !== 'regenerate') throw new Error('Unknown module ' + name);
                        return load('regenerate');
                    });
                    properties[path] = module.exports;
                    return module.exports;
                }
            });
        }
        return load('regexpu');
    }

    var FLAG_ORDER = 'dgimsuvy';
    // The flags in V8's order; V8's SyntaxError for an unknown or repeated flag, or u with v.
    function CanonicalFlags(flags) {
        var seen = {};
        for (var i = 0; i < flags.length; i++) {
            var c = flags.charAt(i);
            if (FLAG_ORDER.indexOf(c) < 0 || seen[c] || (c === 'u' && seen.v) || (c === 'v' && seen.u)) {
                throw new SyntaxError("Invalid flags supplied to RegExp constructor '" + flags + "'");
            }
            seen[c] = true;
        }
        return FLAG_ORDER.split('').filter(function (c) { return seen[c]; }).join('');
    }

    // Whether the u flag leaves this pattern's meaning as it is without the flag. Conservative:
    // anything the flag may change sends the pattern to regexpu-core.
    function PlainUnderUnicode(source, flags) {
        if (/[isv]/.test(flags)) return false;  // case folding, dotAll, set notation
        var inClass = false;
        for (var i = 0; i < source.length; i++) {
            var code = source.charCodeAt(i);
            if (code >= 0xd800 && code <= 0xdfff) return false;  // an astral character
            var c = source.charAt(i);
            if (c === '\\') {
                var next = source.charAt(i + 1);
                if ('DSWpP'.indexOf(next) >= 0) return false;
                if (next === 'u') {
                    if (source.charAt(i + 2) === '{') return false;
                    var unit = parseInt(source.substr(i + 2, 4), 16);
                    if (unit >= 0xd800 && unit <= 0xdfff) return false;
                }
                i++;
            } else if (inClass) {
                if (c === ']') inClass = false;
            } else if (c === '[') {
                if (source.charAt(i + 1) === '^') return false;
                inClass = true;
            } else if (c === '.') {
                return false;
            }
        }
        return true;
    }

    // dotAll without regexpu-core: `.` outside a class matches any unit.
    function DotAll(source) {
        var out = '', inClass = false;
        for (var i = 0; i < source.length; i++) {
            var c = source.charAt(i);
            if (c === '\\') {
                out += c + source.charAt(i + 1);
                i++;
            } else if (inClass) {
                if (c === ']') inClass = false;
                out += c;
            } else if (c === '[') {
                inClass = true;
                out += c;
            } else {
                out += c === '.' ? '[\\s\\S]' : c;
            }
        }
        return out;
    }

    // What Duktape compiles for (source, flags): {pattern, flags}, kept per pattern for the run.
    var rewritten = {};
    function Rewrite(source, flags) {
        var key = flags + '/' + source;
        if (hasOwn.call(rewritten, key)) return rewritten[key];
        var plain = flags.replace(/[suv]/g, '');
        var pattern = source;
        if (!/[uv]/.test(flags)) {
            pattern = DotAll(source);
        } else if (!PlainUnderUnicode(source, flags)) {
            try {
                pattern = RewritePattern()(source, flags, {
                    unicodeFlag: 'transform', unicodeSetsFlag: 'transform', unicodePropertyEscapes: 'transform',
                    dotAllFlag: 'transform'
                });
            } catch (e) {
                throw new SyntaxError('Invalid regular expression: /' + source + '/' + flags + ': ' + (e && e.message));
            }
        }
        rewritten[key] = { pattern: pattern, flags: plain };
        return rewritten[key];
    }

    // `source` as V8 answers it: '/' and line terminators escaped, (?:) for an empty pattern.
    function EscapedSource(source) {
        if (source === '') return '(?:)';
        return source.replace(/\\[\s\S]|\/|\n|\r|\u2028|\u2029/g, function (m) {
            return m === '/' ? '\\/' : m === '\n' ? '\\n' : m === '\r' ? '\\r' : m === '\u2028' ? '\\u2028' : m === '\u2029' ? '\\u2029' : m;
        });
    }

    // What a rewritten RegExp was made from (the prototype's getters below answer it), under a
    // symbol: no name shows among the object's properties.
    var GIVEN = Symbol('sigil.regexp.given');
    function Given(re) {
        return re !== null && (typeof re === 'object' || typeof re === 'function') && hasOwn.call(re, GIVEN) ? re[GIVEN] : undefined;
    }

    function RegExp(pattern, flags) {
        var isRegExp = pattern instanceof NativeRegExp;
        if (!(this instanceof RegExp) && isRegExp && flags === undefined && pattern.constructor === RegExp) return pattern;
        var source = isRegExp ? pattern.source : pattern === undefined ? '' : String(pattern);
        var f = flags !== undefined ? String(flags) : isRegExp ? pattern.flags : '';
        if (!/[suv]/.test(f)) return isRegExp && flags === undefined ? new NativeRegExp(pattern) : new NativeRegExp(source, f);
        var canonical = CanonicalFlags(f);
        if (isRegExp && Given(pattern) !== undefined) source = Given(pattern).raw;
        var r = Rewrite(source, canonical);
        var re = new NativeRegExp(r.pattern, r.flags);
        Object.defineProperty(re, GIVEN, { value: { raw: source, source: EscapedSource(source), flags: canonical, compiled: r } });
        return re;
    }
    RegExp.prototype = proto;
    Object.defineProperty(RegExp, 'prototype', { writable: false, enumerable: false, configurable: false });
    Object.defineProperty(proto, 'constructor', { value: RegExp, writable: true, enumerable: false, configurable: true });

    ['source', 'flags'].forEach(function (name) {
        var nativeGetter = Object.getOwnPropertyDescriptor(proto, name).get;
        Object.defineProperty(proto, name, {
            get: function () {
                var info = Given(this);
                return info !== undefined ? info[name] : nativeGetter.call(this);
            },
            enumerable: false, configurable: true
        });
    });
    [['unicode', 'u'], ['unicodeSets', 'v'], ['dotAll', 's'], ['sticky', 'y'], ['hasIndices', 'd']].forEach(function (pair) {
        Object.defineProperty(proto, pair[0], {
            get: function () {
                if (this === proto) return undefined;
                if (!(this instanceof NativeRegExp)) throw new TypeError('RegExp.prototype.' + pair[0] + ' getter called on non-RegExp');
                var info = Given(this);
                return info !== undefined && info.flags.indexOf(pair[1]) >= 0;
            },
            enumerable: false, configurable: true
        });
    });
    // Duktape's split copies a RegExp separator through the built-in constructor, which reads its
    // source and flags (a u flag it refuses): it gets a copy of what was compiled instead.
    var nativeSplit = String.prototype.split;
    Object.defineProperty(String.prototype, 'split', {
        value: function split(separator, limit) {
            var info = Given(separator);
            if (info !== undefined) separator = new NativeRegExp(info.compiled.pattern, info.compiled.flags);
            return nativeSplit.call(this, separator, limit);
        },
        writable: true, enumerable: false, configurable: true
    });
    Object.defineProperty(global, 'RegExp', { value: RegExp, writable: true, enumerable: false, configurable: true });
    // Regular expression literals lower.js could not leave to buble (see above).
    Object.defineProperty(global, '__sigil_regexp', {
        value: function (source, flags) { return new RegExp(source, flags); },
        writable: false, enumerable: false, configurable: false
    });
})(this);
