// Run page: runs the Actions page's code or a CID with a PKP and JSON params, and shows the answer:
// the response, the logs, the error a run of failing code gives (a 200: it ran), the time as this
// browser measured it, and the cost as the change in the account's balance when billing is on.
import { session } from '../session.js';
import { $, busy, say, show as showValue } from '../ui.js';
import { fillSelects } from './lists.js';
import { listPkps } from './account_ops.js';
import { currentCode } from './actions.js';

// The balance in cents, or null when the server runs without billing (404 billing_disabled) or the
// key may not read it: the cost is then not shown rather than guessed.
async function balanceCents() {
  try {
    return (await session.client.balance()).balance_cents;
  } catch {
    return null;
  }
}

function parseParams(text) {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`params are not JSON: ${e.message}`);
  }
}

export function init() {
  $('#run-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const status = $('#run-status');
    busy($('#run-submit'), status, async () => {
      for (const id of ['#run-response', '#run-logs', '#run-error', '#run-time', '#run-cost']) $(id).textContent = '';
      const body = { js_params: parseParams($('#run-params').value) };
      if ($('#run-source-cid').checked) body.ipfs_id = $('#run-cid').value.trim();
      else body.code = currentCode();
      const pkp = $('#run-pkp').value;
      if (pkp) body.pkp_id = pkp;
      const before = await balanceCents();
      const started = performance.now();
      const answer = await session.client.runAction(body);
      const ms = performance.now() - started;
      $('#run-response').textContent = showValue(answer.response);
      $('#run-logs').textContent = answer.logs || '(none)';
      $('#run-error').textContent = answer.has_error ? `${answer.error?.code}: ${answer.error?.message}` : 'none';
      $('#run-time').textContent = `${ms.toFixed(0)} ms (round trip from this browser)`;
      const after = before === null ? null : await balanceCents();
      $('#run-cost').textContent = before === null || after === null
        ? 'not shown: billing is off on this server, or this key may not read the balance'
        : `${before - after} cents (balance ${before} -> ${after}; the account's other runs meanwhile count too)`;
      say(status, answer.has_error ? 'the action ran and failed' : 'the action ran');
    });
  });
}

export async function show() {
  await busy($('#run-submit'), $('#run-status'), async () => {
    fillSelects($('#page-run'), { pkps: await listPkps() });
    say($('#run-status'), '');
  });
}
