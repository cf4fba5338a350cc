// The lowering driver, evaluated in the transpiler heap after shims.js, buble (with its acorn 6)
// and acorn 8. Defines __sigil_lower(source) -> {code} | {error, line, column} (1-based line
// and column), so syntax errors never surface as Duktape errors.
//
// Two passes:
//  1. A front pass over acorn 8's syntax tree (ecmaVersion "latest") rewrites what buble 0.20
//     cannot read into ES2019 text: optional chaining, ??, ??=, ||=, &&=, numeric separators,
//     optional catch binding, class fields (instance, static, private #names, static blocks),
//     async functions and await (onto the synchronous __sigil_await of prelude.js), and, when
//     the source mentions BigInt (a BigInt literal or the identifier BigInt), BigInt literals
//     and the operators that may see one (onto the JSBI runtime of lower_runtime.js).
//  2. buble lowers ES2019 to the ES5.1 Duktape runs.
// Source with none of the front pass's markers goes straight to buble (one parse); if buble
// refuses it (class fields have no cheap marker), the front pass runs and buble runs again.
//
// The front pass renders the tree back to text: a node with nothing to lower below it is its
// source slice; other nodes are rebuilt from their children's renderings. Closures stand in
// for temporaries (a ?? b is __sigil_nc(a, () => b)): they are arrows, so buble keeps `this`
// and `arguments`, and `await` inside them is the synchronous __sigil_await. Where a rewrite
// drops line breaks (class bodies) they are appended after it, so line numbers of later code
// stay those of the source.
(function (global) {
    'use strict';
    var buble = global.buble;
    var acorn = global.acorn;
    if (!buble || typeof buble.transform !== 'function') throw new Error('buble is not loaded');
    if (!acorn || typeof acorn.parse !== 'function' || typeof acorn.getLineInfo !== 'function') {
        throw new Error('acorn 8 is not loaded');
    }

    var PARSE_OPTIONS = {
        ecmaVersion: 'latest', sourceType: 'module', allowAwaitOutsideFunction: true,
        allowReturnOutsideFunction: true, allowHashBang: true
    };
    var TRANSFORM_OPTIONS = {
        transforms: { dangerousForOf: true, dangerousTaggedTemplateString: true, asyncAwait: false, generator: true },
        objectAssign: 'Object.assign'
    };

    // Text that may hold something only the front pass lowers. False positives (the words in
    // strings or comments) only cost a parse.
    // Spread (`...`: buble spreads by concat, wrong for strings and Sets), for-of (buble's loop
    // indexes its object, which walks nothing of a Set, a Map or an iterator), tagged templates
    // (buble's have no .raw), loops destructuring their variable, and regular expressions with the
    // s or v flag or a \p{...} are among them.
    // The source is an attacker's, so every scan here is linear in its length: no alternative
    // starts a backtracking loop at every position of a long run (`for(` repeated with no `;`
    // made `for\s*\([^;]*?\sof` quadratic, and `/` before a long run of flag letters made
    // `[dgimsuvy]*[sv][dgimsuvy]*` try every split of it). Since every flag letter is a word
    // character, the flags alternative matches exactly when the whole run after the `/` holds an
    // s or v and no word character follows it, which the lookahead says without backtracking.
    var FRONT_MARKERS = /\?\.(?!\d)|\?\?|\|\|=|&&=|#|\bcatch\s*\{|\basync\b|\bawait\b|\d_\d|\.\.\.|[\w$)\]]\s*`|\bfor\s*\(\s*(const|let|var)\s*[\[{]|\b(?:import|export)\b|[\w$]\([^()]*\)\s*=>|;(?:let|const|var)\s*[\[{]|\/(?=[dgimsuvy]*[sv])[dgimsuvy]*(?![\w$])|\\[pP]\{/;
    // for (x of xs): an ` of` after a `for (` and before the next `;` (what /\bfor\s*\([^;]*?\sof\b/
    // matched), with the next ` of` and the next `;` kept from one head to the next, so each is
    // searched once over the whole source.
    var FOR_HEAD = /\bfor\s*\(/g;
    var OF_WORD = /\sof\b/g;
    function HasForOfHead(source) {
        var of = -1;
        var semicolon = -1;
        FOR_HEAD.lastIndex = 0;
        for (var m = FOR_HEAD.exec(source); m !== null; m = FOR_HEAD.exec(source)) {
            var from = m.index + m[0].length;
            if (of < from) {
                OF_WORD.lastIndex = from;
                var found = OF_WORD.exec(source);
                of = found !== null ? found.index : Infinity;
            }
            if (semicolon < from) {
                semicolon = source.indexOf(';', from);
                if (semicolon < 0) semicolon = Infinity;
            }
            if (of < semicolon) return true;
        }
        return false;
    }
    function HasFrontMarker(source) { return FRONT_MARKERS.test(source) || HasForOfHead(source); }
    var WORD_CHAR = /[\w$]/;
    // BigInt, a BigInt literal, or a typeof test for one (BigInts may come from ethers' toBigInt).
    var BIGINT_MARKERS = /\bBigInt\b|(^|[^\w$.])(0[xXoObB][0-9a-fA-F_]+|\d[\d_]*)n(?![\w$])|(['"])bigint\3/;

    // Binary operators onto the BigInt runtime (__sigil_b in lower_runtime.js).
    var BIGINT_BINARY = {
        '+': 'add', '-': 'sub', '*': 'mul', '/': 'div', '%': 'mod', '**': 'pow', '&': 'and', '|': 'or',
        '^': 'xor', '<<': 'shl', '>>': 'sar', '>>>': 'shr', '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge',
        '==': 'eq', '!=': 'ne', '===': 'seq', '!==': 'sne'
    };
    var BIGINT_UNARY = { '-': 'neg', '~': 'not', '+': 'pos', '!': 'lnot' };
    var LOGICAL_ASSIGN = { '??=': 0, '||=': 1, '&&=': 2 };
    // Statements whose test is a condition (a BigInt zero is false there).
    var TESTS = { IfStatement: 1, ConditionalExpression: 1, WhileStatement: 1, DoWhileStatement: 1, ForStatement: 1 };
    var LOOPS = { ForStatement: 1, ForInStatement: 1, ForOfStatement: 1, WhileStatement: 1, DoWhileStatement: 1 };

    // A regular expression literal buble cannot lower (its regexpu-core has no \p{...} and no v
    // flag) becomes a call of regexp.js's RegExp at run time: __sigil_regexp(pattern, flags).
    function UnicodeAtRunTime(regex) {
        return regex.flags.indexOf('v') >= 0 ||
               (regex.flags.indexOf('u') >= 0 && /(^|[^\\])(\\\\)*\\[pP]\{/.test(regex.pattern));
    }
    // A string literal of `text` for Duktape (ES5): printable ASCII as it is (" and \ escaped),
    // every other UTF-16 unit as \uXXXX, so the text is the same whichever engine lowers (V8's and
    // Duktape's JSON.stringify escape differently, and Duktape reads a character above U+FFFF in
    // the source as one, which is written here as its surrogate pair).
    function Unit(code) { return '\\u' + ('000' + code.toString(16)).slice(-4); }
    function StringLiteral(text) {
        return '"' + text.replace(/[^\x20-\x7e]|["\\]/g, function (c) {
            if (c === '"' || c === '\\') return '\\' + c;
            var code = c.charCodeAt(0);
            if (code <= 0xffff) return Unit(code);
            code -= 0x10000;
            return Unit(0xd800 + (code >> 10)) + Unit(0xdc00 + (code & 0x3ff));
        }) + '"';
    }

    // The pattern of a dotAll (s flag) regular expression for an engine without the flag: every
    // `.` outside a character class becomes [\s\S].
    function DotAll(pattern) {
        var out = '';
        var inClass = false;
        for (var i = 0; i < pattern.length; i++) {
            var c = pattern.charAt(i);
            if (c === '\\') {
                out += c + pattern.charAt(i + 1);
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

    function PrivateName(name) { return '__sigil_private_' + name; }

    // Imports by CID (DESIGN section 5): a module is named by "ipfs://<CIDv0>" and nothing else, so
    // the action's CID fixes every module it may run. Source that starts with MODULE_PRAGMA is
    // lowered as a module (its exports land on __sigil_exports, the module wrapper's parameter;
    // workers/sandbox/child.cpp), the rest as an action (its exports are dropped). Lowered text of
    // either that imports (or is an ES module) starts with IMPORTS_HEADER: "esm" for an ES module,
    // then each "ipfs://<CID>" it imports, statically or dynamically, which is how the worker finds
    // the modules a run needs without parsing JavaScript (workers/actions/imports.h).
    var IPFS_SPECIFIER = /^ipfs:\/\/Qm[1-9A-HJ-NP-Za-km-z]{44}$/;
    var MODULE_PRAGMA = '/*sigil:module*/';
    var IMPORTS_HEADER = '/*sigil-imports';

    function LineBreaks(text) {
        var n = 0;
        for (var i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
        return n;
    }

    function FrontPass(source, ast, bigint, links) {
        var moduleMode = !!(links && links.module);
        if (!links) links = { cids: [], esm: false, prefix: [], suffix: [] };
        var counter = 0;
        function Fresh(prefix) { return '_' + prefix + '$' + (counter++); }
        function Fail(node, message) {
            var error = new SyntaxError(message);
            error.loc = acorn.getLineInfo(source, node.start);
            throw error;
        }

        function IsNode(value) { return value !== null && typeof value === 'object' && typeof value.type === 'string'; }

        // Children in source order; of two starting together the longer first, so a shorthand
        // property's value (a pattern with a default) wins over its key.
        function Children(node) {
            var list = [];
            for (var key in node) {
                if (key === 'loc' || key.charAt(0) === '$' || !Object.prototype.hasOwnProperty.call(node, key)) continue;
                var value = node[key];
                if (value === null || typeof value !== 'object') continue;
                if (Array.isArray(value)) {
                    for (var i = 0; i < value.length; i++) if (IsNode(value[i])) list.push(value[i]);
                } else if (IsNode(value)) {
                    list.push(value);
                }
            }
            list.sort(function (a, b) { return a.start - b.start || b.end - a.end; });
            return list;
        }

        // Whether the node itself needs rewriting (its children are checked separately).
        function NeedsOwn(node, parent, key) {
            switch (node.type) {
            case 'SpreadElement':
                // buble spreads by concat, which assumes arrays: strings and Sets go through Array.from.
                return parent.type !== 'ObjectExpression' && node.argument.type !== 'ArrayExpression';
            case 'ChainExpression': case 'AwaitExpression': case 'PrivateIdentifier': case 'TaggedTemplateExpression':
            case 'PropertyDefinition': case 'StaticBlock':
                return true;
            case 'LogicalExpression':
                return node.operator === '??' || bigint;
            case 'AssignmentExpression':
                return LOGICAL_ASSIGN.hasOwnProperty(node.operator) || (bigint && node.operator !== '=');
            case 'CatchClause':
                return node.param === null;
            case 'Literal':
                return typeof node.bigint === 'string' || (typeof node.value === 'number' && node.raw.indexOf('_') >= 0) ||
                       (!!node.regex && (node.regex.flags.indexOf('s') >= 0 || UnicodeAtRunTime(node.regex)));
            case 'ImportExpression':
                Link(node, node.source);
                return true;
            case 'ImportDeclaration': case 'ExportAllDeclaration':
                links.esm = true;
                Link(node, node.source);
                return true;
            case 'ExportNamedDeclaration':
                links.esm = true;
                if (node.source) Link(node, node.source);
                return true;
            case 'ExportDefaultDeclaration':
                links.esm = true;
                if (!moduleMode && !node.declaration.id) {
                    Fail(node, 'export default of an unnamed value is not supported: an action is a script that ' +
                               'defines main (export default async function main(params) { ... } works)');
                }
                return true;
            case 'ArrowFunctionExpression':
                // `return(a,b)=>f`: buble writes `function` before the `(`, so the arrow is
                // rendered here and Join keeps a space between the two words.
                return node.async || WORD_CHAR.test(source.charAt(node.start - 1));
            case 'FunctionDeclaration': case 'FunctionExpression':
                if (node.generator) Fail(node, 'generators are not supported (Duktape has none)');
                return node.async;
            case 'Property': case 'MethodDefinition':
                return !!(node.value && node.value.async);
            case 'ForOfStatement':
                return !!node.await || DestructuringHead(node) || node.right.type !== 'ArrayExpression';
            case 'ForInStatement':
                return DestructuringHead(node);
            case 'ClassDeclaration': case 'ClassExpression':
                var lowers = false;
                var fields = false;
                var ctor = null;
                for (var i = 0; i < node.body.body.length; i++) {
                    var member = node.body.body[i];
                    if (member.type !== 'MethodDefinition' || member.key.type === 'PrivateIdentifier') lowers = true;
                    if (member.type === 'PropertyDefinition' && !member.static) fields = true;
                    if (member.type === 'MethodDefinition' && member.kind === 'constructor') ctor = member;
                }
                if (fields && node.superClass && ctor !== null && TopLevelSuperCall(ctor.value.body) < 0) {
                    MarkSuperCalls(ctor.value.body, node);
                }
                return lowers;
            case 'BinaryExpression':
                return node.left.type === 'PrivateIdentifier' || (bigint && BIGINT_BINARY.hasOwnProperty(node.operator));
            case 'UnaryExpression':
                return bigint && (BIGINT_UNARY.hasOwnProperty(node.operator) || node.operator === 'typeof');
            case 'UpdateExpression':
                return bigint;
            case 'TemplateLiteral':
                return bigint && node.expressions.length > 0 && parent.type !== 'TaggedTemplateExpression';
            case 'CallExpression':
                return !!node.$superInit || (bigint && node.callee.type === 'Identifier' && node.callee.name === 'Number');
            case 'Identifier':
                if (!bigint || node.name !== 'BigInt') return false;
                // Not a property name.
                if ((parent.type === 'MemberExpression' && key === 'property' && !parent.computed) ||
                    ((parent.type === 'Property' || parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition') &&
                     key === 'key' && !parent.computed)) return false;
                return true;
            }
            return false;
        }

        // Index of the constructor body's `super(...);` statement, or -1.
        function TopLevelSuperCall(block) {
            for (var s = 0; s < block.body.length; s++) {
                var st = block.body[s];
                if (st.type === 'ExpressionStatement' && st.expression.type === 'CallExpression' &&
                    st.expression.callee.type === 'Super') return s;
            }
            return -1;
        }

        // super(...) calls anywhere in a constructor (not in nested functions or classes other
        // than arrows): the instance fields are initialised right after each.
        function MarkSuperCalls(node, classNode) {
            if (node.type === 'CallExpression' && node.callee.type === 'Super') node.$superInit = classNode;
            if (node.type === 'FunctionExpression' || node.type === 'FunctionDeclaration' ||
                node.type === 'ClassExpression' || node.type === 'ClassDeclaration') return;
            for (var key in node) {
                if (key === 'loc' || key.charAt(0) === '$' || !Object.prototype.hasOwnProperty.call(node, key)) continue;
                var value = node[key];
                if (Array.isArray(value)) {
                    for (var i = 0; i < value.length; i++) if (IsNode(value[i])) MarkSuperCalls(value[i], classNode);
                } else if (IsNode(value)) {
                    MarkSuperCalls(value, classNode);
                }
            }
        }

        function DestructuringHead(loop) {
            return loop.left.type === 'VariableDeclaration' && loop.left.declarations[0].id.type !== 'Identifier';
        }

        function Mark(node, parent, parentKey) {
            var dirty = NeedsOwn(node, parent, parentKey);
            // {...x} copies own properties (buble: Object.assign); only array and call spreads iterate.
            if (node.type === 'ObjectExpression') {
                for (var p = 0; p < node.properties.length; p++) {
                    if (node.properties[p].type === 'SpreadElement') node.properties[p].$inObject = true;
                }
            }
            for (var key in node) {
                if (key === 'loc' || key.charAt(0) === '$' || !Object.prototype.hasOwnProperty.call(node, key)) continue;
                var value = node[key];
                if (value === null || typeof value !== 'object') continue;
                if (Array.isArray(value)) {
                    for (var i = 0; i < value.length; i++) {
                        if (IsNode(value[i]) && Mark(value[i], node, key)) dirty = true;
                    }
                } else if (IsNode(value) && Mark(value, node, key)) {
                    dirty = true;
                }
            }
            if (bigint && TESTS.hasOwnProperty(node.type) && node.test) {
                node.test.$d = node.test.$truth = dirty = true;
            }
            // buble 0.20 mangles a loop whose body is a lone statement when a closure captures
            // the loop's let/const variable (the output does not even compile): loop bodies
            // always get braces.
            if (LOOPS.hasOwnProperty(node.type) && node.body.type !== 'BlockStatement') {
                node.body.$wrap = node.body.$d = dirty = true;
            }
            // buble braces a lone if/else branch itself, and loses the closing brace when the next
            // statement starts right where the branch ends and buble rewrites it from its start
            // (minified `if(c)x();let[a,b]=y`: the output does not compile): we brace them first.
            if (node.type === 'IfStatement') {
                if (node.consequent.type !== 'BlockStatement') node.consequent.$wrap = node.consequent.$d = dirty = true;
                var alt = node.alternate;
                if (alt && alt.type !== 'BlockStatement' && alt.type !== 'IfStatement') alt.$wrap = alt.$d = dirty = true;
            }
            node.$d = dirty;
            return dirty;
        }

        // The pieces are joined once at the end: growing one string and reading its last
        // character (Join) made V8 flatten it at every child, quadratic in a node's children
        // (20 KB of `a?.b;` took 1.8 s).
        function Splice(node, injectAfter, injectText) {
            var children = node.$c || (node.$c = Children(node));
            var parts = [];
            var last = '';  // the last character of what parts hold
            function Put(text) {
                if (text === '') return;
                parts.push(text);
                last = text.charAt(text.length - 1);
            }
            function PutJoined(text) {
                if (JoinsWords(last, text)) parts.push(' ');
                Put(text);
            }
            var pos = node.start;
            if (injectAfter === -1) {
                Put(source.slice(pos, pos + 1) + injectText);  // just after the block's '{'
                pos += 1;
            }
            for (var i = 0; i < children.length; i++) {
                var child = children[i];
                if (child.start < pos) continue;
                Put(source.slice(pos, child.start));
                PutJoined(R(child));
                pos = child.end;
                if (i === injectAfter) Put(injectText);
            }
            PutJoined(source.slice(pos, node.end));
            return parts.join('');
        }

        // Whether text written after a piece ending in `lastChar` needs a space first, so that a
        // rewritten piece never runs into a word: minified code writes `return!0`, `case-1:` and
        // `return(a,b)=>f`, and `return` + `__sigil_b.lnot(0)` or buble's `function (a, b)` must
        // stay two tokens.
        function JoinsWords(lastChar, text) {
            return lastChar !== '' && text !== '' && WORD_CHAR.test(lastChar) && WORD_CHAR.test(text.charAt(0));
        }

        function R(node) {
            // acorn's ranges leave out parentheses, so a comma expression placed into a helper's
            // arguments (`(a, b) + 1n`, `if (a || b, c)` in BigInt code) would become two
            // arguments: it is always rendered in parentheses of its own.
            var comma = node.type === 'SequenceExpression';
            if (!node.$d) return comma ? '(' + source.slice(node.start, node.end) + ')' : source.slice(node.start, node.end);
            var handler = HANDLERS.hasOwnProperty(node.type) ? HANDLERS[node.type] : null;
            var text = handler ? handler(node) : undefined;
            if (text === undefined) text = Splice(node);
            if (comma) text = '(' + text + ')';
            if (node.$truth) text = '__sigil_b.truth(' + text + ')';
            if (node.$wrap) text = '{ ' + text + ' }';
            var missing = LineBreaks(source.slice(node.start, node.end)) - LineBreaks(text);
            for (; missing > 0; missing--) text += '\n';
            return text;
        }

        function PropertyName(node) {
            return node.type === 'PrivateIdentifier' ? PrivateName(node.name) : node.name;
        }

        // obj.key as the pieces (object text, key expression text) the runtime helpers take.
        function KeyOf(member) {
            if (member.computed) return R(member.property);
            return JSON.stringify(PropertyName(member.property));
        }

        function Arguments(call) {
            var parts = [];
            for (var i = 0; i < call.arguments.length; i++) parts.push(R(call.arguments[i]));
            return parts.join(', ');
        }

        function ChainText(expression) {
            var ops = [];
            var base = expression;
            while (base.type === 'MemberExpression' || base.type === 'CallExpression') {
                ops.unshift(base);
                base = base.type === 'MemberExpression' ? base.object : base.callee;
            }
            var baseText = R(base);
            if (!(base.type === 'Identifier' || base.type === 'ThisExpression' || base.type === 'Super')) {
                baseText = '(' + baseText + ')';
            }
            // Applies ops[i..] to `acc`; `object` is the text acc's last member access was made
            // on (for this of an optional call), `tail` that access. `handled`: ops[i] is
            // optional but its test is already made.
            function Gen(acc, object, tail, i, handled) {
                for (var j = i; j < ops.length; j++) {
                    var op = ops[j];
                    if (op.optional && !(handled && j === i)) {
                        if (op.type === 'CallExpression' && object !== null) {
                            var o = Fresh('o');
                            var f = Fresh('f');
                            var args = Arguments(op);
                            return '__sigil_ocall(' + object + ', (' + o + ') => ' + o + tail + ', (' + f + ', ' + o + ') => ' +
                                   Gen(f + '.call(' + o + (args ? ', ' + args : '') + ')', null, null, j + 1, false) + ')';
                        }
                        var v = Fresh('v');
                        return '__sigil_oc(' + acc + ', (' + v + ') => ' + Gen(v, null, null, j, true) + ')';
                    }
                    if (op.type === 'MemberExpression') {
                        var access = op.computed ? '[' + R(op.property) + ']' : '.' + PropertyName(op.property);
                        object = acc;
                        tail = access;
                        acc = acc + access;
                    } else {
                        acc = acc + '(' + Arguments(op) + ')';
                        object = null;
                    }
                }
                return acc;
            }
            return Gen(baseText, null, null, 0, false);
        }

        function BigIntBinary(name, left, right) { return '__sigil_b.' + name + '(' + left + ', ' + right + ')'; }

        // Instance fields into the constructor, static ones after the class.
        function ClassText(node, declaration) {
            var name = node.id ? node.id.name : null;
            var ref = name !== null && declaration ? name : Fresh('C');
            var instance = [];
            var statics = [];
            var members = [];
            var ctor = null;
            var body = node.body.body;
            for (var i = 0; i < body.length; i++) {
                var m = body[i];
                if (m.type === 'MethodDefinition' && m.kind === 'constructor') {
                    ctor = m;
                } else if (m.type === 'PropertyDefinition') {
                    var value = m.value ? R(m.value) : 'void 0';
                    var target = m.static ? ref : 'this';
                    var stmt;
                    if (m.key.type === 'PrivateIdentifier') {
                        stmt = '__sigil_pf(' + target + ', ' + JSON.stringify(PrivateName(m.key.name)) + ', ' + value + ');';
                    } else {
                        var keyText = m.computed ? R(m.key)
                            : m.key.type === 'Identifier' ? JSON.stringify(m.key.name) : source.slice(m.key.start, m.key.end);
                        stmt = '__sigil_pf(' + target + ', ' + keyText + ', ' + value + ', true);';
                    }
                    (m.static ? statics : instance).push(stmt);
                } else if (m.type === 'StaticBlock') {
                    var parts = [];
                    for (var k = 0; k < m.body.length; k++) parts.push(R(m.body[k]));
                    statics.push('(function () {' + parts.join(' ') + '}).call(' + ref + ');');
                } else {
                    members.push(R(m));
                }
            }
            var fields = instance.join(' ');
            var ctorText;
            if (ctor === null) {
                ctorText = fields === '' ? ''
                    : node.superClass ? 'constructor(...args) { super(...args); ' + fields + ' }'
                                      : 'constructor() { ' + fields + ' }';
            } else if (fields === '') {
                ctorText = R(ctor);
            } else {
                var block = ctor.value.body;
                var after = node.superClass ? TopLevelSuperCall(block) : -1;
                if (!node.superClass || after >= 0) {
                    // After super(...), which may end without its semicolon (ASI): a `;` of
                    // our own keeps the fields a statement apart (`super(2) x = 1` is no syntax).
                    block.$inject = { after: after, text: (after >= 0 ? '; ' : ' ') + fields + ' ' };
                    block.$d = ctor.value.$d = ctor.$d = true;
                } else {
                    node.$fields = fields;  // after each nested super(...) (MarkSuperCalls)
                }
                ctorText = R(ctor);
            }
            var head = 'class' + (name !== null ? ' ' + name : '') + (node.superClass ? ' extends ' + R(node.superClass) : '');
            var text = head + ' {' + ctorText + (ctorText && members.length ? ' ' : '') + members.join(' ') + '}';
            if (statics.length === 0) return text;
            if (declaration) return text + ' ' + statics.join(' ');
            return '(() => { const ' + ref + ' = ' + text + '; ' + statics.join(' ') + ' return ' + ref + '; })()';
        }

        // An action runs only what its CID names, so it imports modules by their own CIDs and by
        // nothing mutable (a URL, a package name, a path): DESIGN section 5, import_not_allowed. The
        // message names the rule and the way out.
        function ImportRefusal(specifier) {
            return 'import_not_allowed: the module "' + specifier + '" cannot be imported: an action runs only code ' +
                   'its CID names, so modules are imported by their CID (import x from "ipfs://<CID>"). Pin the ' +
                   'module to IPFS (scripts/ipfs-add FILE, or any IPFS upload of the file) and import it as ' +
                   '"ipfs://<its CID>", or bundle it into the action\'s own file';
        }

        // A module specifier: a string literal "ipfs://<CIDv0>" written without escapes (the worker
        // reads the CIDs from the header, and the text must say what the header says).
        function Link(node, literal) {
            if (!literal || literal.type !== 'Literal' || typeof literal.value !== 'string') {
                Fail(node, 'import_not_allowed: a dynamic import must name its module by a string literal ' +
                           '("ipfs://<CID>"), so that the action\'s CID fixes every module it may run');
            }
            if (!IPFS_SPECIFIER.test(literal.value)) Fail(node, ImportRefusal(literal.value));
            if (literal.raw.slice(1, -1) !== literal.value) {
                Fail(node, 'import_not_allowed: the module "' + literal.value + '" must be named without escapes');
            }
            if (links.cids.indexOf(literal.value) < 0) links.cids.push(literal.value);
        }

        function Blank(node) { return source.slice(node.start, node.end).replace(/[^\n]/g, ''); }
        function Name(node) { return node.type === 'Identifier' ? node.name : node.value; }  // ES2022 allows 'strings'
        function ExportAssign(exported, local) { return '__sigil_exports[' + JSON.stringify(exported) + '] = ' + local + ';'; }
        function DeclaredNames(pattern, out) {
            if (!pattern) return out;
            switch (pattern.type) {
            case 'Identifier': out.push(pattern.name); break;
            case 'VariableDeclaration': pattern.declarations.forEach(function (d) { DeclaredNames(d.id, out); }); break;
            case 'ObjectPattern': pattern.properties.forEach(function (p) { DeclaredNames(p.type === 'RestElement' ? p : p.value, out); }); break;
            case 'ArrayPattern': pattern.elements.forEach(function (e) { DeclaredNames(e, out); }); break;
            case 'AssignmentPattern': DeclaredNames(pattern.left, out); break;
            case 'RestElement': DeclaredNames(pattern.argument, out); break;
            }
            return out;
        }
        function Load(literal) { return '__sigil_import(' + JSON.stringify(literal.value) + ')'; }

        // The bindings of an import: evaluated before the module's own code, as ES modules are (they
        // go in front of its first line, so line numbers stay those of the source). Bindings are
        // copies, not live: a module that reassigns an export later is not seen by its importers.
        function ImportText(node) {
            if (node.specifiers.length === 0) {
                links.prefix.push(Load(node.source) + ';');
                return Blank(node);
            }
            var ref = Fresh('m');
            var parts = [ref + ' = ' + Load(node.source)];
            node.specifiers.forEach(function (s) {
                var value = s.type === 'ImportDefaultSpecifier' ? ref + '["default"]'
                          : s.type === 'ImportNamespaceSpecifier' ? ref : ref + '[' + JSON.stringify(Name(s.imported)) + ']';
                parts.push(s.local.name + ' = ' + value);
            });
            links.prefix.push('var ' + parts.join(', ') + ';');
            return Blank(node);
        }

        // An action's exports are dropped (it is a script); a module's land on __sigil_exports: a
        // function's before its code runs (it is hoisted), anything else's after.
        function ExportNamedText(node) {
            if (node.source) {
                var ref = Fresh('m');
                var text = 'var ' + ref + ' = ' + Load(node.source) + ';';
                if (moduleMode) {
                    node.specifiers.forEach(function (s) {
                        text += ' ' + ExportAssign(Name(s.exported), ref + '[' + JSON.stringify(Name(s.local)) + ']');
                    });
                }
                links.prefix.push(text);
                return Blank(node);
            }
            if (!moduleMode) return ExportText(node);
            var d = node.declaration;
            if (d) {
                if (d.type === 'FunctionDeclaration') links.prefix.push(ExportAssign(d.id.name, d.id.name));
                else if (d.type === 'ClassDeclaration') links.suffix.push(ExportAssign(d.id.name, d.id.name));
                else DeclaredNames(d, []).forEach(function (n) { links.suffix.push(ExportAssign(n, n)); });
                return R(d);
            }
            node.specifiers.forEach(function (s) { links.suffix.push(ExportAssign(Name(s.exported), s.local.name)); });
            return Blank(node);
        }

        function ExportAllText(node) {
            var load = Load(node.source);
            if (!moduleMode) links.prefix.push(load + ';');
            else if (node.exported) links.prefix.push(ExportAssign(Name(node.exported), load));
            else links.prefix.push('__sigil_export_all(__sigil_exports, ' + load + ');');
            return Blank(node);
        }

        function ExportDefaultText(node) {
            if (!moduleMode) return ExportText(node);
            var d = node.declaration;
            if (d.id && d.type === 'FunctionDeclaration') {
                links.prefix.push(ExportAssign('default', d.id.name));
                return R(d);
            }
            if (d.id && d.type === 'ClassDeclaration') {
                links.suffix.push(ExportAssign('default', d.id.name));
                return R(d);
            }
            return '__sigil_exports["default"] = (' + R(d) + ');';
        }

        // What remains of an export without a module: the declaration itself, or nothing (with the
        // line breaks it held, so later lines keep their numbers).
        function ExportText(node) {
            if (node.declaration) return R(node.declaration);
            return source.slice(node.start, node.end).replace(/[^\n]/g, '');
        }

        function StripAsync(node) {
            var text = Splice(node);
            return node.async && source.substr(node.start, 5) === 'async' ? text.slice(5) : text;
        }

        function StripAsyncKeyword(node) {
            var text = Splice(node);
            if (!node.value || !node.value.async || node.value.start === node.start) return text;
            var prefix = node.key.start - node.start;
            return text.slice(0, prefix).replace(/\basync\b/, '') + text.slice(prefix);
        }

        function LoopHead(node) {
            var destructure = DestructuringHead(node);
            var iterate = node.type === 'ForOfStatement' && node.right.type !== 'ArrayExpression';
            if (!node.await && !destructure && !iterate) return undefined;
            var head = source.slice(node.start, node.left.start);
            if (node.await) head = head.replace(/\bawait\b/, '');
            var left = R(node.left);
            var prologue = '';
            if (destructure) {
                var item = Fresh('d');
                left = node.left.kind + ' ' + item;
                prologue = node.left.kind + ' ' + R(node.left.declarations[0].id) + ' = ' + item + '; ';
            }
            // for await takes async iterables (streams) too: __sigil_await_all walks those itself.
            var right = node.await ? '__sigil_await_all(' + R(node.right) + ')'
                      : iterate ? '__sigil_spread(' + R(node.right) + ')' : R(node.right);
            return head + left + (node.type === 'ForInStatement' ? ' in ' : ' of ') + right +
                   source.slice(node.right.end, node.body.start) + '{ ' + prologue + R(node.body) + ' }';
        }

        var HANDLERS = {
            ChainExpression: function (node) { return ChainText(node.expression); },
            AwaitExpression: function (node) { return '__sigil_await(' + R(node.argument) + ')'; },
            PrivateIdentifier: function (node) { return PrivateName(node.name); },
            SpreadElement: function (node) { return node.$inObject ? undefined : '...__sigil_spread(' + R(node.argument) + ')'; },
            // tag`a${x}` -> tag(strings with .raw, x): buble's own lowering has no .raw.
            TaggedTemplateExpression: function (node) {
                var cooked = [];
                var raw = [];
                var quasis = node.quasi.quasis;
                for (var i = 0; i < quasis.length; i++) {
                    cooked.push(quasis[i].value.cooked === null ? undefined : quasis[i].value.cooked);
                    raw.push(quasis[i].value.raw);
                }
                var args = [];
                for (var k = 0; k < node.quasi.expressions.length; k++) args.push(R(node.quasi.expressions[k]));
                var cookedText = '[' + cooked.map(function (c) { return c === undefined ? 'void 0' : JSON.stringify(c); }).join(', ') + ']';
                var tagText = node.tag.type === 'MemberExpression' || node.tag.type === 'Identifier' ? R(node.tag) : '(' + R(node.tag) + ')';
                return tagText + '(__sigil_tpl(' + cookedText + ', ' + JSON.stringify(raw) + ')' +
                       (args.length ? ', ' + args.join(', ') : '') + ')';
            },
            FunctionDeclaration: StripAsync,
            FunctionExpression: StripAsync,
            ArrowFunctionExpression: function (node) {
                var text = StripAsync(node);
                return WORD_CHAR.test(source.charAt(node.start - 1)) ? ' ' + text : text;
            },
            Property: StripAsyncKeyword,
            MethodDefinition: StripAsyncKeyword,
            ClassDeclaration: function (node) { return ClassText(node, true); },
            ClassExpression: function (node) { return ClassText(node, false); },
            CatchClause: function (node) {
                if (node.param !== null) return undefined;
                return 'catch (' + Fresh('e') + ') ' + R(node.body);
            },
            BlockStatement: function (node) {
                if (!node.$inject) return undefined;
                return Splice(node, node.$inject.after, node.$inject.text);
            },
            // for (const [k, v] of xs): buble 0.20 breaks two sibling loops destructuring the same
            // names (the second loop's uses are renamed, its declarations not), so the pattern
            // moves into the body: for (const _d of xs) { const [k, v] = _d; body }.
            // for await over an array: each element is awaited (synchronously) first.
            // for (x of xs) where xs may not be an array: for (x of __sigil_spread(xs)), which
            // answers an array as it is and walks anything else as spread does (the iteration
            // protocol; strings by code point), so buble's indexed loop sees every element.
            ForOfStatement: LoopHead,
            ExportNamedDeclaration: ExportNamedText,
            ExportDefaultDeclaration: ExportDefaultText,
            ExportAllDeclaration: ExportAllText,
            ImportDeclaration: ImportText,
            ImportExpression: function (node) { return '__sigil_import_async(' + JSON.stringify(node.source.value) + ')'; },
            ForInStatement: LoopHead,
            Literal: function (node) {
                if (typeof node.bigint === 'string') return '__sigil_BigInt(' + JSON.stringify(node.bigint) + ')';
                if (node.regex && UnicodeAtRunTime(node.regex)) {
                    return '__sigil_regexp(' + StringLiteral(node.regex.pattern) + ', ' + StringLiteral(node.regex.flags) + ')';
                }
                if (node.regex) return '/' + DotAll(node.regex.pattern) + '/' + node.regex.flags.replace('s', '');
                if (typeof node.value === 'number') return node.raw.replace(/_/g, '');
                return undefined;
            },
            LogicalExpression: function (node) {
                if (node.operator === '??') return '__sigil_nc(' + R(node.left) + ', () => (' + R(node.right) + '))';
                // bigint: a && b, a || b test a's truth (0n is false).
                return '__sigil_b.' + (node.operator === '&&' ? 'land' : 'lor') + '(' + R(node.left) + ', () => (' +
                       R(node.right) + '))';
            },
            AssignmentExpression: function (node) {
                var target = node.left;
                if (LOGICAL_ASSIGN.hasOwnProperty(node.operator)) {
                    var value = R(node.right);
                    if (target.type === 'Identifier') {
                        var n = target.name;
                        if (node.operator === '??=') return '(' + n + ' != null ? ' + n + ' : (' + n + ' = ' + value + '))';
                        return '(' + n + (node.operator === '||=' ? ' || ' : ' && ') + '(' + n + ' = ' + value + '))';
                    }
                    return '__sigil_la(' + R(target.object) + ', ' + KeyOf(target) + ', ' + LOGICAL_ASSIGN[node.operator] +
                           ', () => (' + value + '))';
                }
                if (bigint && node.operator !== '=') {
                    var name = BIGINT_BINARY[node.operator.slice(0, -1)];
                    if (target.type === 'Identifier') {
                        return '(' + target.name + ' = ' + BigIntBinary(name, target.name, R(node.right)) + ')';
                    }
                    if (target.type === 'MemberExpression') {
                        return '__sigil_b.ca(' + R(target.object) + ', ' + KeyOf(target) + ', "' + name + '", () => (' +
                               R(node.right) + '))';
                    }
                }
                return undefined;
            },
            BinaryExpression: function (node) {
                if (node.left.type === 'PrivateIdentifier') {
                    return JSON.stringify(PrivateName(node.left.name)) + ' in ' + R(node.right);
                }
                // a * b % m, the step of field arithmetic, in one call (one native: the product
                // never becomes a JSBI value). m must be a name or a literal: evaluating it before
                // the product then changes nothing observable.
                if (bigint && node.operator === '%' && node.left.type === 'BinaryExpression' && node.left.operator === '*' &&
                    (node.right.type === 'Identifier' || node.right.type === 'Literal')) {
                    return '__sigil_b.mulmod(' + R(node.left.left) + ', ' + R(node.left.right) + ', ' + R(node.right) + ')';
                }
                if (bigint && BIGINT_BINARY.hasOwnProperty(node.operator)) {
                    return BigIntBinary(BIGINT_BINARY[node.operator], R(node.left), R(node.right));
                }
                return undefined;
            },
            UnaryExpression: function (node) {
                if (!bigint) return undefined;
                if (node.operator === 'typeof') {
                    if (node.argument.type === 'Identifier') {
                        var n = node.argument.name === 'BigInt' ? '__sigil_BigInt' : node.argument.name;
                        return '(typeof ' + n + ' === "undefined" ? "undefined" : __sigil_b.type(' + n + '))';
                    }
                    return '__sigil_b.type(' + R(node.argument) + ')';
                }
                if (BIGINT_UNARY.hasOwnProperty(node.operator)) {
                    return '__sigil_b.' + BIGINT_UNARY[node.operator] + '(' + R(node.argument) + ')';
                }
                return undefined;
            },
            UpdateExpression: function (node) {
                var step = node.operator === '++' ? 'inc' : 'dec';
                var target = node.argument;
                if (target.type === 'Identifier') {
                    var n = target.name;
                    if (node.prefix) return '(' + n + ' = __sigil_b.' + step + '(' + n + '))';
                    return '__sigil_b.post(' + n + ', ' + n + ' = __sigil_b.' + step + '(' + n + '))';
                }
                return '__sigil_b.upd(' + R(target.object) + ', ' + KeyOf(target) + ', ' + (step === 'inc' ? 1 : -1) + ', ' +
                       node.prefix + ')';
            },
            TemplateLiteral: function (node) {
                if (!bigint) return undefined;
                // ${x} converts with ToString; buble's concatenation would call valueOf.
                var out = '`';
                for (var i = 0; i < node.quasis.length; i++) {
                    out += node.quasis[i].value.raw;
                    if (i < node.expressions.length) out += '${__sigil_b.str(' + R(node.expressions[i]) + ')}';
                }
                return out + '`';
            },
            CallExpression: function (node) {
                if (node.$superInit) {
                    return '(' + Splice(node) + ', (() => { ' + node.$superInit.$fields + ' })())';
                }
                if (bigint && node.callee.type === 'Identifier' && node.callee.name === 'Number') {
                    return '__sigil_Number(' + Arguments(node) + ')';
                }
                return undefined;
            },
            Identifier: function (node) { return node.name === 'BigInt' ? '__sigil_BigInt' : undefined; }
        };

        Mark(ast, null, null);
        var text = R(ast);
        // The suffix on a line of its own (the source may end in a line comment).
        return links.prefix.join(' ') + text + (links.suffix.length ? '\n' + links.suffix.join(' ') : '');
    }

    // Whether a for/while head is followed by something other than a block (the buble bug
    // above). A rough scan (strings and comments are not told apart): a false positive only
    // costs the front pass. One pass over the source with the open parentheses on a stack, each
    // marked whether it opens a loop's head, so a head's `)` is the one that closes it, as
    // counting from the head finds; counting from each head to its `)` was quadratic (720 KB of
    // `while(` took sigil-lowerer 120 s).
    var LOOP_HEAD = /\b(for|while)\s*\(/g;
    var BLANK = /\s/;
    function HasBracelessLoop(source) {
        LOOP_HEAD.lastIndex = 0;
        var head = LOOP_HEAD.exec(source);
        var open = [];
        for (var i = 0; i < source.length; i++) {
            var c = source.charAt(i);
            if (c === '(') {
                while (head !== null && head.index + head[0].length - 1 < i) head = LOOP_HEAD.exec(source);
                open.push(head !== null && head.index + head[0].length - 1 === i);
            } else if (c === ')' && open.length > 0 && open.pop()) {
                // The blanks after two heads' `)` are apart, so this skip is linear overall too.
                var next = i + 1;
                while (next < source.length && BLANK.test(source.charAt(next))) next++;
                var after = source.charAt(next);
                if (after !== '{' && after !== ';' && after !== '') return true;
            }
        }
        return false;
    }

    function Lower(source) {
        var links = { module: source.lastIndexOf(MODULE_PRAGMA, 0) === 0, cids: [], esm: false, prefix: [], suffix: [] };
        if (links.module) source = source.slice(MODULE_PRAGMA.length);
        if (source.lastIndexOf(IMPORTS_HEADER, 0) === 0) {
            var reserved = new SyntaxError('a source may not begin with ' + IMPORTS_HEADER + ' (the lowering\'s own header)');
            reserved.loc = { line: 1, column: 0 };
            throw reserved;
        }
        var bigint = BIGINT_MARKERS.test(source);
        if (!bigint && !HasFrontMarker(source) && !HasBracelessLoop(source)) {
            try {
                return buble.transform(source, TRANSFORM_OPTIONS).code;
            } catch (e) {
                // Syntax newer than buble's (class fields), or a buble failure on valid code:
                // the front pass either lowers it or reports the error where acorn 8 finds it.
            }
        }
        var ast = acorn.parse(source, PARSE_OPTIONS);
        var code = buble.transform(FrontPass(source, ast, bigint, links), TRANSFORM_OPTIONS).code;
        var esm = links.module && links.esm;
        if (links.cids.length === 0 && !esm) return code;
        return IMPORTS_HEADER + (esm ? ' esm' : '') + (links.cids.length ? ' ' + links.cids.join(' ') : '') + '*/' + code;
    }

    // The front pass alone (tests and benchmarks).
    global.__sigil_front_pass = function (source) {
        return FrontPass(source, acorn.parse(source, PARSE_OPTIONS), BIGINT_MARKERS.test(source));
    };

    global.__sigil_lower = function (source) {
        try {
            return { code: Lower(source) };
        } catch (e) {
            var loc = e && e.loc;
            var message = String(e && e.message !== undefined ? e.message : e);
            // acorn appends " (line:column)"; the location is reported separately.
            message = message.replace(/ \(\d+:\d+\)$/, '');
            return {
                error: message,
                line: loc && typeof loc.line === 'number' ? loc.line : 0,
                column: loc && typeof loc.column === 'number' ? loc.column + 1 : 0
            };
        }
    };
})(this);
