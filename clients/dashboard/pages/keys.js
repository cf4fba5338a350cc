// Keys page: the account's usage keys with their scopes as checkboxes and their guardrails, new keys
// (the value shown once), scope changes and revocation, all by the key's hash (listing never returns values).
import { $, el, fill, busy, say, shortHash } from '../ui.js';
import { listGroups, listKeys, addUsageKey, updateUsageKeyScopes, removeUsageKey } from './account_ops.js';
import { scopeEditor } from './scopes.js';
import { guardrailsEditor } from './guardrails.js';

let addEditor = null;

async function render() {
  const status = $('#keys-status');
  const groups = await listGroups();
  addEditor = scopeEditor(groups);
  fill($('#key-add-scopes'), addEditor.node);
  const keys = await listKeys();
  const rows = keys.map((k) => {
    const editor = scopeEditor(groups, k);
    const save = el('button', { type: 'button', class: 'key-save' }, 'Save scopes');
    const revoke = el('button', { type: 'button', class: 'key-revoke' }, 'Revoke');
    save.addEventListener('click', () => busy(save, status, async () => {
      await updateUsageKeyScopes(k, editor.value());
      say(status, `scopes of ${k.name || shortHash(k.api_key_hash)} saved`);
    }));
    revoke.addEventListener('click', () => busy(revoke, status, async () => {
      if (!window.confirm(`Revoke the key ${k.name || k.api_key_hash}? Runs with it stop at once.`)) return;
      await removeUsageKey(k.api_key_hash);
      say(status, `key ${k.name || shortHash(k.api_key_hash)} revoked`);
      await render();
    }));
    return el('tr', { 'data-key-hash': k.api_key_hash },
      el('td', {}, k.name || '(unnamed)'),
      el('td', { class: 'hash', title: k.api_key_hash }, shortHash(k.api_key_hash)),
      el('td', {}, editor.node, guardrailsEditor(k, status)),
      el('td', {}, save, ' ', revoke));
  });
  fill($('#keys-table tbody'), rows.length ? rows : el('tr', {}, el('td', { colspan: 4 }, 'No usage keys yet.')));
}

export function init() {
  $('#key-add-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const status = $('#keys-status');
    busy($('#key-add'), status, async () => {
      const usage_api_key = await addUsageKey({ name: $('#key-name').value, description: $('#key-description').value, permissions: addEditor.value() });
      $('#key-new-value').value = usage_api_key;
      $('#key-new-out').hidden = false;
      $('#key-name').value = '';
      $('#key-description').value = '';
      say(status, 'key created: copy its value now, it is not shown again');
      await render();
    });
  });
}

export async function show() {
  $('#key-new-out').hidden = true;
  await busy($('#key-add'), $('#keys-status'), async () => { await render(); say($('#keys-status'), ''); });
}
