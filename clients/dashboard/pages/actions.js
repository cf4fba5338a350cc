// Actions page: code from a file or typed in, its CID as the service computes it (the same CIDv0 the
// gateways serve it under), registering its metadata, and adding it to a group in the same step.
import { session } from '../session.js';
import { $, el, fill, busy, say, shortHash } from '../ui.js';
import { fillSelects } from './lists.js';
import { listActions, listGroups, addAction, addActionToGroup } from './account_ops.js';

/// The code in the editor (the runner's "code on the Actions page").
export const currentCode = () => $('#action-code').value;

async function computeCid() {
  const cid = await session.publicClient().getActionIpfsId(currentCode());
  $('#action-cid-out').value = cid;
  return cid;
}

async function render() {
  const [actions, groups] = await Promise.all([listActions(), listGroups()]);
  const rows = actions.map((a) => el('tr', { 'data-hashed-cid': a.id },
    el('td', {}, a.name || '(unnamed)'), el('td', { class: 'hash', title: a.id }, shortHash(a.id)), el('td', {}, a.description ?? '')));
  fill($('#actions-table tbody'), rows.length ? rows : el('tr', {}, el('td', { colspan: 3 }, 'No registered actions yet.')));
  fillSelects($('#page-actions'), { groups });
}

export function init() {
  const status = () => $('#actions-status');
  $('#action-file').addEventListener('change', async (ev) => {
    const file = ev.target.files?.[0];
    if (!file) return;
    $('#action-code').value = await file.text();
    $('#action-cid-out').value = '';
    if (!$('#action-name').value) $('#action-name').value = file.name.replace(/\.[^.]*$/, '');
  });
  $('#action-code').addEventListener('input', () => { $('#action-cid-out').value = ''; });
  $('#action-cid').addEventListener('click', () => busy($('#action-cid'), status(), async () => {
    const cid = await computeCid();
    say(status(), `CID ${cid}`);
  }));
  $('#action-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('#action-register'), status(), async () => {
      const cid = await computeCid();
      const hashed_cid = await addAction({ action_ipfs_cid: cid, name: $('#action-name').value, description: $('#action-description').value });
      const group = $('#action-group').value;
      if (group) await addActionToGroup({ group_id: Number(group), action_ipfs_cid: cid });
      say(status(), `action ${cid} registered (hash ${shortHash(hashed_cid)})${group ? ` and added to group ${group}` : ''}`);
      await render();
    });
  });
}

export async function show() {
  await busy($('#action-register'), $('#actions-status'), async () => { await render(); say($('#actions-status'), ''); });
}
