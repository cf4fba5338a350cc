// The account's groups and PKPs as several pages offer them in <select>s (add a PKP to a group, add
// an action to a group, pick a run's PKP); account_ops.js reads them.
import { el, fill } from '../ui.js';

/// A PKP's id as the dashboard shows and sends it: its address in lower case (the API takes any case).
export const pkpIdOf = (p) => String(p.pkp_id ?? p.wallet_address).toLowerCase();

/// Fills every select.group-select / select.pkp-select in `root` (a data-none attribute adds an empty choice).
export function fillSelects(root, { groups, pkps }) {
  const fillOne = (select, items, label) => {
    const keep = select.value;
    const none = select.dataset.none ? [el('option', { value: '' }, select.dataset.none)] : [];
    fill(select, none, items.map((x) => el('option', { value: label(x).value }, label(x).text)));
    if ([...select.options].some((o) => o.value === keep)) select.value = keep;
  };
  if (groups) for (const s of root.querySelectorAll('select.group-select')) fillOne(s, groups, (g) => ({ value: String(g.id), text: `${g.id}: ${g.name}` }));
  if (pkps) for (const s of root.querySelectorAll('select.pkp-select')) fillOne(s, pkps, (p) => ({ value: pkpIdOf(p), text: `${p.name || '(unnamed)'} ${pkpIdOf(p)}` }));
}
