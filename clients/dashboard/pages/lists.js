// The account's groups and PKPs, which several pages offer in <select>s (add a PKP to a group, add an
// action to a group, pick a run's PKP). Read through the service with the signed-in key.
import { session } from '../session.js';
import { el, fill } from '../ui.js';

const PAGE = 100;

/// Every page of a list endpoint (page_number counts from 0) until a short page.
async function all(fetchPage) {
  const out = [];
  for (let page = 0; ; page += 1) {
    const items = await fetchPage({ page_number: page, page_size: PAGE });
    out.push(...items);
    if (items.length < PAGE) return out;
  }
}

export const listGroups = () => all((q) => session.client.listGroups(q));
export const listPkps = () => all((q) => session.client.listWallets(q));
export const listActions = () => all((q) => session.client.listActions(q));
/// A PKP's id as the dashboard shows and sends it: its address in lower case (the API takes any case).
export const pkpIdOf = (p) => String(p.pkp_id ?? p.wallet_address).toLowerCase();
export const listKeys = () => all((q) => session.client.listApiKeys(q));

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
