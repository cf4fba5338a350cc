// Groups page: the account's groups with their PKPs and action CID hashes, new groups, and adding a
// PKP or an action (raw CID) to one.
import { $, el, fill, busy, say, shortHash } from '../ui.js';
import { fillSelects } from './lists.js';
import { listGroups, listPkps, addGroup, removeGroup, addPkpToGroup, addActionToGroup } from './account_ops.js';

async function render() {
  const [groups, pkps] = await Promise.all([listGroups(), listPkps()]);
  const status = $('#groups-status');
  const rows = groups.map((g) => {
    const remove = el('button', { type: 'button', class: 'group-remove' }, 'Delete');
    remove.addEventListener('click', () => busy(remove, status, async () => {
      if (!window.confirm(`Delete group ${g.id} (${g.name})? Keys lose what it allowed.`)) return;
      await removeGroup(g.id);
      say(status, `group ${g.id} deleted`);
      await render();
    }));
    return el('tr', { 'data-group-id': String(g.id) },
      el('td', {}, String(g.id)), el('td', {}, g.name),
      el('td', { class: 'hash' }, (g.pkp_ids_permitted ?? []).map((x) => String(x).toLowerCase()).join('\n') || '—'),
      el('td', { class: 'hash' }, (g.cid_hashes_permitted ?? []).map((h) => el('div', { title: h }, shortHash(h)))),
      el('td', {}, remove));
  });
  fill($('#groups-table tbody'), rows.length ? rows : el('tr', {}, el('td', { colspan: 5 }, 'No groups yet.')));
  fillSelects(document, { groups, pkps });
}

export function init() {
  const status = () => $('#groups-status');
  $('#group-add-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('#group-add'), status(), async () => {
      const group_id = await addGroup({ name: $('#group-name').value, description: $('#group-description').value });
      say(status(), `group ${group_id} created`);
      await render();
    });
  });
  $('#group-pkp-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('#group-pkp-add'), status(), async () => {
      const group_id = Number($('#group-pkp-group').value);
      const pkp_id = $('#group-pkp-pkp').value;
      if (!pkp_id) throw new Error('create a PKP first (PKPs page)');
      await addPkpToGroup({ group_id, pkp_id });
      say(status(), `PKP ${pkp_id} added to group ${group_id}`);
      await render();
    });
  });
  $('#group-action-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('#group-action-add'), status(), async () => {
      const group_id = Number($('#group-action-group').value);
      await addActionToGroup({ group_id, action_ipfs_cid: $('#group-action-cid').value.trim() });
      say(status(), `action added to group ${group_id}`);
      await render();
    });
  });
}

export async function show() {
  await busy($('#group-add'), $('#groups-status'), async () => { await render(); say($('#groups-status'), ''); });
}
