// The seven scopes of a usage key (spec "Scopes") as checkboxes: three account-wide ones, and four
// per-group ones with one box per group plus "all groups" (the id 0 wildcard).
import { el } from '../ui.js';

export const ACCOUNT_SCOPES = [
  ['can_create_groups', 'create groups (group:create)'],
  ['can_delete_groups', 'delete groups (group:delete)'],
  ['can_create_pkps', 'create PKPs (pkp:create)'],
];
export const GROUP_SCOPES = [
  ['execute_in_groups', 'can_execute_in_groups', 'run actions (execute)'],
  ['manage_ipfs_ids_in_groups', 'can_manage_ipfs_ids_in_groups', 'add and remove actions (group:manageActions)'],
  ['add_pkp_to_groups', 'can_add_pkp_to_groups', 'add PKPs (group:addPkp)'],
  ['remove_pkp_from_groups', 'can_remove_pkp_from_groups', 'remove PKPs (group:removePkp)'],
];

let serial = 0;

/// Checkboxes for every scope, set from `key` (a list_api_keys entry, or null for none) ->
/// {node, value()}; value() gives the seven fields of add_usage_api_key / update_usage_api_key.
export function scopeEditor(groups, key = null, { disabled = false } = {}) {
  const id = `scopes-${++serial}`;
  const boxes = new Map();
  const box = (name, label, checked) => {
    const boxId = `${id}-${name}`;
    const input = el('input', { type: 'checkbox', id: boxId, name, checked: Boolean(checked), disabled });
    boxes.set(name, input);
    return el('label', { for: boxId }, input, ` ${label}`);
  };
  const node = el('div', { class: 'scopes', id });
  node.append(...ACCOUNT_SCOPES.map(([field, label]) => box(field, label, key?.[field])));
  for (const [field, listed, label] of GROUP_SCOPES) {
    const have = new Set((key?.[listed] ?? []).map(String));
    const items = [['0', 'all groups'], ...groups.map((g) => [String(g.id), `${g.id}: ${g.name}`])];
    node.append(el('fieldset', {}, el('legend', {}, label),
      items.map(([gid, text]) => box(`${field}:${gid}`, text, have.has(gid)))));
  }
  const value = () => {
    const out = {};
    for (const [field] of ACCOUNT_SCOPES) out[field] = boxes.get(field).checked;
    for (const [field] of GROUP_SCOPES) {
      out[field] = [...boxes.entries()].filter(([n, b]) => n.startsWith(`${field}:`) && b.checked).map(([n]) => Number(n.split(':')[1]));
      // [0] already means every group: other ids beside it would only be noise in the key.
      if (out[field].includes(0)) out[field] = [0];
    }
    return out;
  };
  return { node, value };
}
