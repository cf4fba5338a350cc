// Small DOM helpers every page of the dashboard uses: building elements without innerHTML (no markup
// from the service or the user is ever parsed), showing a failure with the fix the service gave, and
// a busy state for buttons so a write is never sent twice by a double click.

/// The one element matching `selector` (throws when the page lacks it: a broken page should say so).
export function $(selector, root = document) {
  const found = root.querySelector(selector);
  if (!found) throw new Error(`dashboard: no element ${selector}`);
  return found;
}

/// el('td', {class: 'hash'}, 'text', childNode...): attributes are set as attributes, except
/// properties named in PROPS; children are strings (text nodes) or nodes; null/false children are skipped.
const PROPS = new Set(['checked', 'disabled', 'value', 'hidden']);
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (PROPS.has(k)) node[k] = v;
    else if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/// Replaces the children of `node`.
export function fill(node, ...children) {
  node.replaceChildren();
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/// A failure as one line a user can act on: the service's code and message (which carry the fix),
/// the HTTP status and the request id to quote in a report. Wallet refusals (EIP-1193 4001) say so.
export function describeError(e) {
  if (e?.code === 4001 || e?.code === 'ACTION_REJECTED' || e?.info?.error?.code === 4001) {
    return 'the wallet request was rejected; nothing was sent';
  }
  const head = [e?.status ? `HTTP ${e.status}` : null, typeof e?.code === 'string' ? e.code : null].filter(Boolean).join(' ');
  const message = e?.shortMessage ?? e?.message ?? String(e);
  return `${head ? `${head}: ` : ''}${message}${e?.requestId ? ` (request id ${e.requestId})` : ''}`;
}

/// Shows `message` in a status region (role=status or role=alert in the page), as an error or not.
export function say(region, message, { error = false } = {}) {
  region.textContent = message;
  region.classList.toggle('error', error);
}

/// Runs `fn` while `button` is disabled and marked busy; a failure is shown in `region` and returned
/// as undefined, so a handler is one line: `busy(btn, out, async () => ...)`.
export async function busy(button, region, fn) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  if (region) say(region, 'working…');
  try {
    const result = await fn();
    return result;
  } catch (e) {
    if (region) say(region, describeError(e), { error: true });
    return undefined;
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/// A value for display: bigints and objects as JSON, strings as they are.
export function show(v) {
  if (typeof v === 'string') return v;
  return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x), 2);
}

/// "0x1234…abcd" for long hashes in tables (the full value stays in the title attribute).
export function shortHash(h) {
  const s = String(h);
  return s.length > 18 ? `${s.slice(0, 10)}…${s.slice(-6)}` : s;
}
