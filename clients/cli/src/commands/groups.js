// sigil group ...: groups bind PKPs to action CIDs; a key's execute scope names the groups it may run in.
import { hashCid } from '../../../js/src/index.js';
import { CliError } from '../output.js';

export function groupId(text) {
  if (!/^[1-9][0-9]{0,18}$/.test(text)) throw new CliError('usage', `"${text}" is not a group id (a number from 1)`, 'sigil group list shows the ids');
  return text;
}

export function pkpId(text) {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) throw new CliError('usage', `"${text}" is not a PKP id (0x + 40 hex)`, 'sigil pkp list shows them');
  return text;
}

export function isCid(text) { return /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/.test(text); }

/// A CID (Qm...) or its hash (0x + 64 hex) -> the hash the update and remove calls take.
export function cidHash(text) {
  if (/^0x[0-9a-fA-F]{64}$/.test(text)) return text.toLowerCase();
  if (isCid(text)) return hashCid(text);
  throw new CliError('usage', `"${text}" is neither a CID (Qm...) nor a CID hash (0x + 64 hex)`, 'sigil action list shows both');
}

function groupLine(g) {
  return `${g.group_id ?? g.id}  ${g.name}  pkps:${(g.pkp_ids_permitted ?? []).length} actions:${(g.cid_hashes_permitted ?? []).length}${g.description ? '  ' + g.description : ''}`;
}

export const COMMANDS = [
  {
    path: ['group', 'create'], usage: 'NAME [--description TEXT] [--pkp ADDR]... [--action CID]...', args: [1, 1],
    summary: 'create a group, optionally with PKPs and action CIDs in it',
    options: {
      description: { type: 'string', help: 'group description' },
      pkp: { type: 'string', multiple: true, valueName: 'ADDR', help: 'a PKP to list (repeatable)' },
      action: { type: 'string', multiple: true, valueName: 'CID', help: 'an action CID to list (repeatable)' },
    },
    async run(ctx, [name], flags) {
      const answer = await ctx.client().addGroup({
        group_name: name, group_description: flags.description ?? '',
        pkp_ids_permitted: (flags.pkp ?? []).map(pkpId), cid_hashes_permitted: (flags.action ?? []).map(cidHash),
      });
      ctx.out.result(answer, (a) => `group ${a.group_id} created`);
    },
  },
  {
    path: ['group', 'list'], summary: "the account's groups",
    options: { page: { type: 'string', help: 'page number (default 0)' } },
    async run(ctx, _args, flags) {
      const groups = await ctx.client().listGroups({ page_number: flags.page ?? 0, page_size: 100 });
      ctx.out.result(groups, (list) => list.length ? list.map(groupLine) : 'no groups: sigil group create NAME');
    },
  },
  {
    path: ['group', 'show'], usage: 'ID', args: [1, 1], summary: 'the PKPs and actions in a group',
    async run(ctx, [id]) {
      const client = ctx.client();
      const [pkps, actions] = await Promise.all([
        client.listWalletsInGroup({ group_id: groupId(id), page_number: 0, page_size: 100 }),
        client.listActions({ group_id: groupId(id), page_number: 0, page_size: 100 }),
      ]);
      ctx.out.result({ group_id: id, pkps, actions }, (v) => [`group ${v.group_id}`,
        ...(v.pkps.length ? v.pkps.map((p) => `  pkp     ${p.wallet_address ?? p.id}  ${p.name ?? ''}`) : ['  no PKPs']),
        ...(v.actions.length ? v.actions.map((a) => `  action  ${a.hashed_cid ?? a.id}  ${a.name ?? ''}`) : ['  no actions'])]);
    },
  },
  {
    path: ['group', 'remove'], usage: 'ID', args: [1, 1], summary: 'delete a group',
    async run(ctx, [id]) {
      await ctx.client().removeGroup(groupId(id));
      ctx.out.result({ success: true }, () => `group ${id} removed`);
    },
  },
  {
    path: ['group', 'add-pkp'], usage: 'ID PKP', args: [2, 2], summary: 'list a PKP in a group',
    async run(ctx, [id, pkp]) {
      await ctx.client().addPkpToGroup({ group_id: groupId(id), pkp_id: pkpId(pkp) });
      ctx.out.result({ success: true }, () => `PKP ${pkp} added to group ${id}`);
    },
  },
  {
    path: ['group', 'remove-pkp'], usage: 'ID PKP', args: [2, 2], summary: 'take a PKP out of a group',
    async run(ctx, [id, pkp]) {
      await ctx.client().removePkpFromGroup({ group_id: groupId(id), pkp_id: pkpId(pkp) });
      ctx.out.result({ success: true }, () => `PKP ${pkp} removed from group ${id}`);
    },
  },
  {
    path: ['group', 'add-action'], usage: 'ID CID', args: [2, 2], summary: 'list an action CID in a group',
    async run(ctx, [id, cid]) {
      if (!isCid(cid)) throw new CliError('usage', `"${cid}" is not a CID (Qm...)`, 'sigil action cid FILE computes one');
      await ctx.client().addActionToGroup({ group_id: groupId(id), action_ipfs_cid: cid });
      ctx.out.result({ success: true }, () => `action ${cid} added to group ${id}`);
    },
  },
  {
    path: ['group', 'remove-action'], usage: 'ID CID|HASH', args: [2, 2], summary: 'take an action out of a group',
    async run(ctx, [id, cid]) {
      await ctx.client().removeActionFromGroup({ group_id: groupId(id), hashed_cid: cidHash(cid) });
      ctx.out.result({ success: true }, () => `action removed from group ${id}`);
    },
  },
];
