// sigil pkp ...: PKPs, the wallets whose keys actions use (derived on demand; never exported).
import { groupId } from './groups.js';

export const COMMANDS = [
  {
    path: ['pkp', 'create'], usage: '[--name NAME] [--description TEXT]', summary: 'create a PKP (it can sign once a group lists it)',
    options: { name: { type: 'string', help: 'PKP name' }, description: { type: 'string', help: 'PKP description' } },
    async run(ctx, _args, flags) {
      const pkp = await ctx.client().createWallet({ name: flags.name, description: flags.description });
      ctx.out.result(pkp, (p) => [`PKP ${p.wallet_address}`, `next: sigil group add-pkp GROUP_ID ${p.wallet_address}`]);
    },
  },
  {
    path: ['pkp', 'list'], usage: '[--group ID]', summary: "the account's PKPs (or those in one group)",
    options: { group: { type: 'string', help: 'only the PKPs in this group' }, page: { type: 'string', help: 'page number (default 0)' } },
    async run(ctx, _args, flags) {
      const page = { page_number: flags.page ?? 0, page_size: 100 };
      const client = ctx.client();
      const list = flags.group ? await client.listWalletsInGroup({ group_id: groupId(flags.group), ...page }) : await client.listWallets(page);
      ctx.out.result(list, (l) => l.length ? l.map((p) => `${p.wallet_address ?? p.id}  ${p.name ?? ''}`) : 'no PKPs: sigil pkp create');
    },
  },
];
