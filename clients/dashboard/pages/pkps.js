// PKPs page: the account's PKPs (wallets whose keys the service derives for runs) and new ones.
import { $, el, fill, busy, say } from '../ui.js';
import { pkpIdOf } from './lists.js';
import { listPkps, createPkp } from './account_ops.js';

async function render() {
  const pkps = await listPkps();
  const rows = pkps.map((p) => el('tr', { 'data-pkp-id': pkpIdOf(p) },
    el('td', {}, p.name || '(unnamed)'), el('td', { class: 'hash' }, pkpIdOf(p)), el('td', {}, p.description ?? '')));
  fill($('#pkps-table tbody'), rows.length ? rows : el('tr', {}, el('td', { colspan: 3 }, 'No PKPs yet.')));
}

export function init() {
  $('#pkp-add-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const status = $('#pkps-status');
    busy($('#pkp-add'), status, async () => {
      const wallet_address = await createPkp({ name: $('#pkp-name').value, description: $('#pkp-description').value });
      say(status, `PKP ${wallet_address.toLowerCase()} created`);
      await render();
    });
  });
}

export async function show() {
  await busy($('#pkp-add'), $('#pkps-status'), async () => { await render(); say($('#pkps-status'), ''); });
}
