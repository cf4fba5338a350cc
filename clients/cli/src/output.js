// What the CLI prints: answers as text for people or as JSON for scripts (--json), and every error
// as one line with its code and message, then the fix (on stderr; --json: {"error": {...}} on stdout).
import { SigilError } from '../../js/src/index.js';

/// An error the CLI raises itself: a code, what went wrong, and what to do about it.
export class CliError extends Error {
  constructor(code, message, fix = '') {
    super(message);
    this.code = code;
    this.fix = fix;
  }
}

/// The fix for an API error code, in the CLI's own commands. `settings` names the service.
export function fixFor(error, settings = {}) {
  const url = settings.url ?? 'the service';
  switch (error.code) {
    case 'missing_api_key':
      return 'give a key: sigil account create --save-key FILE (new account), or sigil profile set --key-file FILE, or export SIGIL_API_KEY=...';
    case 'invalid_api_key':
      return 'the key is unknown, revoked or expired: check `sigil profile show`, or create an account: sigil account create --save-key FILE';
    case 'insufficient_credit':
      return 'buy credits: sigil credits buy 500 (then sigil credits balance)';
    case 'spend_cap_reached':
      return "the usage key's spend cap is used up: raise it with the owner's key (sigil key update HASH --balance N)";
    case 'not_authorized':
      return 'put the action and the PKP into a group this key may execute on: sigil group add-action ID CID; sigil group add-pkp ID PKP (sigil group list shows the groups)';
    case 'missing_scope':
    case 'owner_only':
      return "use the account's master key for this, or give the usage key the scope (sigil key update HASH ...)";
    case 'too_many_runs':
    case 'rate_limited':
    case 'overloaded':
      return `try again in ${error.retryAfter ?? 1} s`;
    case 'billing_disabled':
      return 'this deployment runs without billing: there is nothing to buy';
    case 'network_error':
      return networkFix(error, settings);
    case 'invalid_response':
      return `${url} did not answer with Sigil's JSON: is the URL the service root (sigil profile set --url https://HOST)?`;
    default:
      if (error.status === 502 || error.status === 503 || error.status === 504) return 'the service or its chain is busy or down: try again shortly';
      return '';
  }
}

function networkFix(error, settings) {
  const cause = `${error.cause?.code ?? ''} ${error.cause?.message ?? error.message}`;
  if (/CERT|certificate|self.signed|UNABLE_TO_VERIFY/i.test(cause)) {
    return `the service's certificate is not trusted: give its CA with --ca-file (scripts/start: ${settings.dev_home ?? '.sigil'}/nginx/tls/cert.pem), or sigil profile set --ca-file FILE`;
  }
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH/.test(cause)) {
    return `nothing answers at ${settings.url}: start the stack (scripts/start) or point the profile at the service: sigil profile set --url https://HOST`;
  }
  return `no answer from ${settings.url}: check the URL (sigil profile show) and the network`;
}

export class Output {
  constructor({ json = false, out = process.stdout, err = process.stderr } = {}) {
    this.json = json;
    this.out = out;
    this.err = err;
  }

  /// Prints `value`: as JSON with --json, else `human(value)` (a string or lines).
  result(value, human) {
    if (this.json) {
      this.out.write(JSON.stringify(value, null, 2) + '\n');
      return;
    }
    const text = human ? human(value) : defaultText(value);
    const lines = Array.isArray(text) ? text : [text];
    for (const line of lines) if (line !== null && line !== undefined) this.out.write(line + '\n');
  }

  /// A progress line for people (stderr, so --json output stays one document).
  note(line) {
    if (!this.json) this.err.write(line + '\n');
  }

  /// Prints an error and returns the exit status (1; 2 for usage errors).
  error(e, settings) {
    let body;
    if (e instanceof SigilError) {
      body = { code: e.code, message: e.message, status: e.status, request_id: e.requestId ?? undefined, fix: fixFor(e, settings) || undefined };
    } else if (e instanceof CliError) {
      body = { code: e.code, message: e.message, fix: e.fix || undefined };
    } else {
      body = { code: 'internal', message: e?.stack ?? String(e) };
    }
    if (this.json) {
      this.out.write(JSON.stringify({ error: body }, null, 2) + '\n');
    } else {
      const status = body.status ? ` (HTTP ${body.status})` : '';
      this.err.write(`sigil: ${body.code}${status}: ${body.message}\n`);
      if (body.fix) this.err.write(`  fix: ${body.fix}\n`);
    }
    return body.code === 'usage' ? 2 : 1;
  }
}

function defaultText(value) {
  if (value === null || value === undefined) return 'ok';
  if (typeof value !== 'object') return String(value);
  return JSON.stringify(value, null, 2);
}
