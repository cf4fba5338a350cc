// A usage key's guardrails on the keys page (issue 26): rates per key and per client address, runs in
// flight, a spending cap over a rolling window and the allowed Origins, read when opened, saved (which
// replaces every guardrail) and cleared by the key's hash. Owner only: the account key, or with a
// wallet an X-Wallet-Auth signature (the billing page's, reused for a few minutes).
import { el, busy, say, shortHash } from '../ui.js';
import { session } from '../session.js';
import { walletAuthOption } from './billing.js';

// [field, label, step]: the numbers set_usage_api_key_guardrails takes (empty: not set).
const NUMBERS = [
  ['requests_per_second', 'Runs per second', 'any'],
  ['burst', 'Burst', '1'],
  ['requests_per_second_per_address', 'Runs per second per client address', 'any'],
  ['burst_per_address', 'Burst per address', '1'],
  ['max_runs_in_flight', 'Runs in flight at most', '1'],
  ['spend_cap_cents', 'Spending cap (cents)', '1'],
  ['spend_window_seconds', 'over a window of (seconds)', '1'],
];

/// A <details> for key `k` ({api_key_hash, name}) whose outcomes are announced in `status`.
export function guardrailsEditor(k, status) {
  const id = (f) => `gr-${f}-${k.api_key_hash.slice(2, 10)}`;
  const inputs = {};
  const fields = NUMBERS.map(([f, label, step]) => {
    inputs[f] = el('input', { id: id(f), name: f, type: 'number', min: '0', step, inputmode: 'decimal' });
    return el('div', { class: 'field' }, el('label', { for: id(f) }, label), ' ', inputs[f]);
  });
  inputs.allowed_origins = el('input', { id: id('origins'), name: 'allowed_origins', placeholder: 'https://app.example, http://localhost:3000' });
  const save = el('button', { type: 'button', class: 'guardrails-save' }, 'Save guardrails');
  const clear = el('button', { type: 'button', class: 'guardrails-clear' }, 'Clear');
  const node = el('details', { class: 'guardrails' }, el('summary', {}, 'Guardrails'), ...fields,
    el('div', { class: 'field' }, el('label', { for: id('origins') }, 'Allowed Origins (comma-separated; empty: any)'), ' ', inputs.allowed_origins),
    save, ' ', clear);
  const name = k.name || shortHash(k.api_key_hash);

  const show = (g) => {
    for (const [f] of NUMBERS) inputs[f].value = g[f] ?? '';
    inputs.allowed_origins.value = (g.allowed_origins ?? []).join(', ');
  };
  const load = async () => show(await session.client.getUsageApiKeyGuardrails(k.api_key_hash, await walletAuthOption()));
  node.addEventListener('toggle', () => {
    if (node.open) busy(save, status, async () => { await load(); say(status, `guardrails of ${name} read`); });
  });
  save.addEventListener('click', () => busy(save, status, async () => {
    const body = { usage_api_key: k.api_key_hash };
    for (const [f] of NUMBERS) if (inputs[f].value !== '') body[f] = Number(inputs[f].value);
    const origins = inputs.allowed_origins.value.split(/[\s,]+/).filter((o) => o);
    if (origins.length) body.allowed_origins = origins;
    show((await session.client.setUsageApiKeyGuardrails(body, await walletAuthOption())).guardrails);
    say(status, `guardrails of ${name} saved`);
  }));
  clear.addEventListener('click', () => busy(clear, status, async () => {
    await session.client.clearUsageApiKeyGuardrails(k.api_key_hash, await walletAuthOption());
    await load();
    say(status, `guardrails of ${name} cleared`);
  }));
  return node;
}
