// What each page does to the account, by sign-in: with a key through the service's API (the relay
// path), with a ChainSecured admin wallet straight on the AccountConfig contract (the direct path: the
// service cannot write for such an account) and through the EIP-712 signature endpoints for what only
// the service can mint (a PKP's key, a usage key). Reads and answers keep the API's field names, so a
// page renders both the same way. Every wallet transaction and signature goes through the preview.
import { ethers } from 'ethers';
import { contractError, hashCid } from '@sigil/sdk';
import { session, Kind } from '../session.js';

const PAGE = 100;
const direct = () => session.kind === Kind.Wallet;

// The admin wallet's contract with the account's hash; callerKeyHash 0: the sender is the admin.
function chain() {
  if (!session.account) throw new Error('this wallet administers no account yet: create one on the sign-in page');
  return { contract: session.account.accountConfig.contract, hash: session.account.accountHash };
}

async function send(method, ...args) {
  const { contract } = chain();
  try {
    return await (await contract[method](...args)).wait();
  } catch (e) {
    throw contractError(e);
  }
}

// Every page of a list: the API's page_number from 0, the contract's offset, until a short page.
async function all(fetchPage) {
  const out = [];
  for (let page = 0; ; page += 1) {
    const items = await fetchPage(page);
    out.push(...items);
    if (items.length < PAGE) return out;
  }
}
const onChain = (method, map) => all(async (page) => {
  const { contract, hash } = chain();
  const [items] = await contract[method](hash, BigInt(page * PAGE), BigInt(PAGE));
  return items.map(map);
});
const ids = (list) => [...list].map((x) => Number(x));

export const listGroups = () => (direct()
  ? onChain('listGroups', (g) => ({ id: Number(g.id), name: g.name, description: g.description, pkp_ids_permitted: [...g.pkps], cid_hashes_permitted: [...g.cidHashes] }))
  : all((page_number) => session.client.listGroups({ page_number, page_size: PAGE })));
export const listPkps = () => (direct()
  ? onChain('listWallets', (w) => ({ name: w.name, description: w.description, wallet_address: w.wallet, pkp_id: w.wallet }))
  : all((page_number) => session.client.listWallets({ page_number, page_size: PAGE })));
export const listActions = () => (direct()
  ? onChain('listActions', (a) => ({ id: a.cidHash, name: a.name, description: a.description }))
  : all((page_number) => session.client.listActions({ page_number, page_size: PAGE })));
export const listKeys = () => (direct()
  ? onChain('listUsageKeys', (k) => ({
    api_key_hash: ethers.toBeHex(k.keyHash, 32), name: k.name, description: k.description, expiration: String(k.expiration), balance: Number(k.balance),
    can_create_groups: k.canCreateGroups, can_delete_groups: k.canDeleteGroups, can_create_pkps: k.canCreatePkps,
    can_manage_ipfs_ids_in_groups: ids(k.manageIpfsIdsInGroups), can_add_pkp_to_groups: ids(k.addPkpToGroups),
    can_remove_pkp_from_groups: ids(k.removePkpFromGroups), can_execute_in_groups: ids(k.executeInGroups),
  }))
  : all((page_number) => session.client.listApiKeys({ page_number, page_size: PAGE })));

/// -> group id (a number).
export async function addGroup({ name, description }) {
  if (!direct()) return (await session.client.addGroup({ group_name: name, group_description: description })).group_id;
  return Number(await session.account.addGroup({ name, description }));
}
export async function removeGroup(groupId) {
  if (!direct()) return session.client.removeGroup(groupId);
  return send('removeGroup', chain().hash, 0n, BigInt(groupId));
}
export async function addPkpToGroup({ group_id, pkp_id }) {
  if (!direct()) return session.client.addPkpToGroup({ group_id, pkp_id });
  return send('addPkpToGroup', chain().hash, 0n, BigInt(group_id), ethers.getAddress(pkp_id));
}
export async function addActionToGroup({ group_id, action_ipfs_cid }) {
  if (!direct()) return session.client.addActionToGroup({ group_id, action_ipfs_cid });
  return send('addActionToGroup', chain().hash, 0n, BigInt(group_id), hashCid(action_ipfs_cid));
}
/// -> the hashed CID.
export async function addAction({ action_ipfs_cid, name, description }) {
  if (!direct()) return (await session.client.addAction({ action_ipfs_cid, name, description })).hashed_cid;
  await send('addAction', chain().hash, 0n, hashCid(action_ipfs_cid), name, description);
  return hashCid(action_ipfs_cid);
}
/// -> the new PKP's address. With a wallet: a CreateWallet signature, then registerWalletDerivation.
export async function createPkp({ name, description }) {
  if (!direct()) return (await session.client.createWallet({ name, description })).wallet_address;
  chain();
  return (await session.account.mintPkp({ name, description })).wallet_address;
}
/// -> the new key's value (shown once). With a wallet: an AddUsageApiKey signature, then
/// registerWalletDerivation and setUsageApiKey.
export async function addUsageKey({ name, description, permissions }) {
  if (!direct()) return (await session.client.addUsageApiKey({ name, description, ...permissions })).usage_api_key;
  chain();
  return (await session.account.addUsageKey({ name, description, permissions })).usage_api_key;
}
/// Replaces a key's scopes, by its hash (name, description, expiration and balance kept).
export async function updateUsageKeyScopes(key, permissions) {
  if (!direct()) return session.client.updateUsageApiKey({ usage_api_key: key.api_key_hash, ...permissions });
  return session.account.accountConfig.setUsageApiKey({
    accountHash: chain().hash, usageKeyHash: key.api_key_hash, expiration: key.expiration, balance: key.balance,
    name: key.name, description: key.description, permissions,
  });
}
/// Revokes a key by its hash.
export async function removeUsageKey(keyHash) {
  if (!direct()) return session.client.removeUsageApiKey(keyHash);
  return send('removeUsageApiKey', chain().hash, 0n, BigInt(keyHash));
}
