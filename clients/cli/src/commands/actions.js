// sigil action ...: an action's CID, publishing it (upload to the gateway, metadata, a group), listing.
import { readFileSync, writeFileSync, renameSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../output.js';
import { cidHash, groupId } from './groups.js';

export function readActionFile(file) {
  let st;
  try { st = statSync(file); } catch {
    throw new CliError('no_such_file', `${file}: no such file`, 'give the path of the action\'s .js file (or a CID: Qm...)');
  }
  if (!st.isFile()) throw new CliError('no_such_file', `${file} is not a file`, 'give the path of the action\'s .js file');
  return readFileSync(file, 'utf8');
}

/// Puts `code` where the gateway serves it as <dir>/<cid> (written whole, then renamed into place).
/// For the dev stack of this checkout that is scripts/ipfs-add's pair of folders, and only while
/// the stack runs (its gateway serves a copy under /tmp).
export function uploadToGateway(settings, cid, code) {
  const dirs = [];
  if (!settings.gateway_dir) {
    throw new CliError('no_gateway', 'no gateway folder is configured to upload the action to',
      'sigil profile set --gateway-dir DIR (a folder your IPFS gateway serves files from, by CID), or pin the file yourself and pass --no-upload');
  }
  dirs.push(settings.gateway_dir);
  if (settings.sources.gateway_dir?.startsWith('dev stack')) {
    const live = settings.dev_live_gateway_dir;
    if (!live || !existsSync(live)) {
      throw new CliError('stack_not_running', `no stack is running from ${settings.dev_home}: its gateway would not serve the action`,
        'start it with scripts/start (same SIGIL_HOME), or set --gateway-dir for another gateway');
    }
    dirs.push(live);
  } else if (!existsSync(settings.gateway_dir)) {
    throw new CliError('no_gateway', `the gateway folder ${settings.gateway_dir} does not exist`, 'sigil profile set --gateway-dir DIR');
  }
  for (const dir of dirs) {
    const tmp = join(dir, `${cid}.${process.pid}.tmp`);
    writeFileSync(tmp, code, { mode: 0o644 });
    renameSync(tmp, join(dir, cid));
  }
  return dirs;
}

export const COMMANDS = [
  {
    path: ['action', 'cid'], usage: 'FILE', args: [1, 1], summary: "the IPFS CID (v0) of an action's file, as the service computes it",
    async run(ctx, [file]) {
      const cid = await ctx.client({ needKey: false }).getActionIpfsId(readActionFile(file));
      ctx.out.result({ cid, hashed_cid: cidHash(cid) }, (v) => v.cid);
    },
  },
  {
    path: ['action', 'deploy'], usage: 'FILE [--group ID] [--name NAME] [--description TEXT] [--no-upload]', args: [1, 1],
    summary: 'publish an action: its CID, upload to the gateway, register its metadata, add it to a group',
    help: 'Computes the CID, uploads the file to the configured gateway folder (the dev stack\'s gateway by default),\n' +
      'registers name and description (add_action), and with --group lists the CID in that group (each a paid write).\n' +
      'Try the action first, for free: sigil run --local FILE',
    options: {
      group: { type: 'string', valueName: 'ID', help: 'list the action in this group' },
      name: { type: 'string', help: 'action name (default: the file name)' },
      description: { type: 'string', help: 'action description' },
      'no-upload': { type: 'boolean', help: 'do not upload (the file is pinned some other way)' },
    },
    async run(ctx, [file], flags) {
      const code = readActionFile(file);
      const client = ctx.client();
      const group = flags.group ? groupId(flags.group) : null;
      const cid = await client.getActionIpfsId(code);
      const uploaded = flags['no-upload'] ? [] : uploadToGateway(ctx.settings, cid, code);
      ctx.out.note(`cid ${cid}${uploaded.length ? `, uploaded to ${uploaded[0]}` : ''}`);
      const name = flags.name ?? file.split('/').pop();
      // Deploying the same file again (the CID names the bytes) is not an error: the metadata is
      // updated and a group that already lists the CID is left as it is.
      try {
        await client.addAction({ action_ipfs_cid: cid, name, description: flags.description ?? '' });
      } catch (e) {
        if (e.status !== 409) throw e;
        await client.updateActionMetadata({ hashed_cid: cidHash(cid), name, description: flags.description ?? '' });
        ctx.out.note('already registered: its metadata was updated');
      }
      if (group) {
        try {
          await client.addActionToGroup({ group_id: group, action_ipfs_cid: cid });
        } catch (e) {
          if (e.status !== 409) throw e;
          ctx.out.note(`group ${group} already lists it`);
        }
      }
      const value = { cid, hashed_cid: cidHash(cid), uploaded_to: uploaded, group_id: group };
      ctx.out.result(value, (v) => [`deployed ${v.cid}${v.group_id ? ` in group ${v.group_id}` : ''}`,
        `run it: sigil run ${v.cid} --params '{}'${v.group_id ? '' : '   (after sigil group add-action ID ' + v.cid + ')'}`]);
    },
  },
  {
    path: ['action', 'list'], usage: '[--group ID]', summary: "the account's registered actions (or those in one group)",
    options: { group: { type: 'string', help: 'only the actions in this group' }, page: { type: 'string', help: 'page number (default 0)' } },
    async run(ctx, _args, flags) {
      const list = await ctx.client().listActions({ group_id: flags.group ? groupId(flags.group) : undefined, page_number: flags.page ?? 0, page_size: 100 });
      ctx.out.result(list, (l) => l.length ? l.map((a) => `${a.hashed_cid ?? a.id}  ${a.name ?? ''}  ${a.description ?? ''}`.trimEnd()) : 'no actions');
    },
  },
  {
    path: ['action', 'remove'], usage: 'CID|HASH', args: [1, 1], summary: "delete an action's registered metadata",
    async run(ctx, [cid]) {
      await ctx.client().deleteAction(cidHash(cid));
      ctx.out.result({ success: true }, () => 'removed');
    },
  },
];
