// The direct path (spec "Management paths"): the account's admin wallet calls the AccountConfig
// contract itself with the shipped ABI (abi/AccountConfig.json, DESIGN.md section 3), and
// ChainSecuredAccount, which joins the signature endpoints and these calls into the ChainSecured flows.
// Contract reverts become the same typed errors the HTTP API answers (AlreadyUnmanaged -> ConflictError
// already_unmanaged, NotAuthorized -> PermissionDeniedError not_authorized, ...).
import { ethers } from 'ethers';
import ABI from '../abi/AccountConfig.json' with { type: 'json' };
import {
  AuthenticationError, ClientError, ConflictError, ErrorCode, InvalidRequestError, NotFoundError, PermissionDeniedError,
} from './errors.js';
import { Mode, apiKeyHash, hashCid } from './client.js';

export const ACCOUNT_CONFIG_ABI = ABI;

// The contract's custom errors by HTTP meaning, as the worker maps them (workers/chain/account_config.cpp).
const REVERTS = {
  NotAuthorized: PermissionDeniedError, OwnerOnly: PermissionDeniedError, MissingScope: PermissionDeniedError,
  NotManaged: PermissionDeniedError, NotContractOwner: PermissionDeniedError, NotApiPayer: PermissionDeniedError,
  KeyExpired: AuthenticationError,
  UnknownAccount: NotFoundError, UnknownGroup: NotFoundError, UnknownKey: NotFoundError, UnknownAction: NotFoundError,
  UnknownPkp: NotFoundError, NotInGroup: NotFoundError,
  KeyHashTaken: ConflictError, AdminTaken: ConflictError, PathTaken: ConflictError, WalletTaken: ConflictError,
  AlreadyUnmanaged: ConflictError, AlreadyInGroup: ConflictError, ActionExists: ConflictError, PayerExists: ConflictError,
  NothingToChange: ConflictError,
  ZeroKeyHash: InvalidRequestError, ZeroPath: InvalidRequestError, ZeroAddress: InvalidRequestError,
  ZeroCid: InvalidRequestError, NameTooLong: InvalidRequestError, DescriptionTooLong: InvalidRequestError,
  TooMany: InvalidRequestError, Duplicate: InvalidRequestError, InvalidAdmin: InvalidRequestError,
};
const STATUS = new Map([[PermissionDeniedError, 403], [AuthenticationError, 401], [NotFoundError, 404],
  [ConflictError, 409], [InvalidRequestError, 400]]);

const snake = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

// The custom error of a revert: ethers decodes it for calls, but not for a send's gas estimate
// (revert null, the selector only in data), so it is decoded here with the contract's own interface.
const IFACE = new ethers.Interface(ABI);
function revertOf(e) {
  if (e?.revert?.name) return e.revert;
  const data = e?.data ?? e?.info?.error?.data;
  if (typeof data !== 'string' || !/^0x[0-9a-fA-F]{8}/.test(data)) return null;
  try {
    return IFACE.parseError(data);
  } catch {
    return null;
  }
}

/// A contract revert as a typed SigilError (code: the error's name in snake_case, the ethers error as
/// cause); anything else unchanged.
export function contractError(e) {
  const revert = revertOf(e);
  const Cls = revert ? REVERTS[revert.name] : undefined;
  if (!Cls) return e;
  const args = revert.args?.length ? `(${[...revert.args].join(', ')})` : '';
  const err = new Cls(`AccountConfig reverted ${revert.name}${args}`, { status: STATUS.get(Cls), code: snake(revert.name), cause: e });
  err.revert = { name: revert.name, args: [...(revert.args ?? [])] };
  return err;
}

async function mapped(fn) {
  try {
    return await fn();
  } catch (e) {
    throw contractError(e);
  }
}

/// The on-chain hash of an account created by its wallet (newChainSecuredAccount): keccak256 of the
/// 20-byte address.
export const chainSecuredAccountHash = (address) => BigInt(ethers.keccak256(ethers.getAddress(address)));

/// The admin wallet of an API-mode account's master key: the key is base64 of the wallet's private key
/// (DESIGN.md section 2), so its holder can also send the direct-path calls (e.g. a conversion).
export function masterKeyWallet(apiKey, provider = null) {
  const secret = ethers.decodeBase64(apiKey);
  if (secret.length !== 32) {
    throw new ClientError('an API-mode master key is base64 of 32 bytes', { code: ErrorCode.INVALID_API_KEY });
  }
  return new ethers.Wallet(ethers.hexlify(secret), provider);
}

const PERMISSION_DEFAULTS = {
  can_create_groups: false, can_delete_groups: false, can_create_pkps: false,
  manage_ipfs_ids_in_groups: [], add_pkp_to_groups: [], remove_pkp_from_groups: [], execute_in_groups: [],
};

/// AccountConfig through an ethers runner (a Signer for writes, a Provider for reads). Writes wait for
/// their receipt and return it.
export class AccountConfig {
  constructor(address, runner) {
    this.address = ethers.getAddress(address);
    this.contract = new ethers.Contract(this.address, ABI, runner);
  }

  /// The contract the service uses (GET /get_node_chain_config).
  /// Refuses (ClientError chain_id_mismatch) a runner whose provider is on another chain.
  static async fromClient(client, runner) {
    const { contract_address, chain_id } = await client.getNodeChainConfig();
    const provider = runner?.provider ?? (typeof runner?.getNetwork === 'function' ? runner : null);
    if (provider) {
      const { chainId } = await provider.getNetwork();
      if (BigInt(chainId) !== BigInt(chain_id)) {
        throw new ClientError(`the wallet is on chain ${chainId}, the service on chain ${chain_id}`,
          { code: ErrorCode.CHAIN_ID_MISMATCH });
      }
    }
    return new AccountConfig(contract_address, runner);
  }

  async #send(method, ...args) {
    return mapped(async () => (await this.contract[method](...args)).wait());
  }

  /// Creates a ChainSecured account administered by the runner's wallet -> {accountHash, receipt}.
  async newChainSecuredAccount() {
    const receipt = await this.#send('newChainSecuredAccount');
    return { accountHash: chainSecuredAccountHash(receipt.from), receipt };
  }

  /// The account a wallet administers (0n: none).
  accountOfAdmin(address) { return mapped(() => this.contract.adminAccount(address)); }

  /// {adminWalletAddress, managed, exists}.
  async getAccount(accountHash) {
    const [adminWalletAddress, managed, exists] = await mapped(() => this.contract.getAccount(BigInt(accountHash)));
    return { adminWalletAddress, managed, exists };
  }

  /// registerWalletDerivation(adminHash, wallet, derivationPath, name, description), by the admin wallet.
  registerWalletDerivation({ accountHash, walletAddress, derivationPath, name = '', description = '' }) {
    return this.#send('registerWalletDerivation', BigInt(accountHash), walletAddress, BigInt(derivationPath), name, description);
  }

  /// setUsageApiKey(adminHash, usageKeyHash, expiration, balance, name, description, ...permissions), by the
  /// admin wallet. usageApiKey (the base64 value; its keccak256 is stored) or usageKeyHash; permissions
  /// in the API's field names (the seven of add_usage_api_key; absent = off / empty).
  setUsageApiKey({ accountHash, usageApiKey, usageKeyHash, expiration = 0, balance = 0, name = '', description = '',
    permissions = {} }) {
    if (usageKeyHash === undefined) {
      if (typeof usageApiKey !== 'string') {
        throw new ClientError('usageApiKey or usageKeyHash is required', { code: ErrorCode.INVALID_ARGUMENT });
      }
      usageKeyHash = apiKeyHash(usageApiKey);
    }
    const p = { ...PERMISSION_DEFAULTS, ...permissions };
    const ids = (list) => list.map((x) => BigInt(x));
    return this.#send('setUsageApiKey', BigInt(accountHash), BigInt(usageKeyHash), BigInt(expiration), BigInt(balance), name,
      description, p.can_create_groups, p.can_delete_groups, p.can_create_pkps, ids(p.manage_ipfs_ids_in_groups),
      ids(p.add_pkp_to_groups), ids(p.remove_pkp_from_groups), ids(p.execute_in_groups));
  }

  /// addGroup by the admin wallet -> {groupId, receipt}. cids: raw CIDs (hashed here) or cidHashes.
  async addGroup({ accountHash, name, description = '', pkpIds = [], cids = [], cidHashes = [] }) {
    const hashes = [...cids.map(hashCid), ...cidHashes];
    const receipt = await this.#send('addGroup', BigInt(accountHash), 0n, name, description, pkpIds, hashes);
    const event = receipt.logs.map((l) => { try { return this.contract.interface.parseLog(l); } catch { return null; } })
      .find((l) => l?.name === 'GroupAdded');
    return { groupId: event ? event.args.groupId : null, receipt };
  }

  /// updateGroup by the admin wallet (replaces both lists).
  updateGroup({ accountHash, groupId, name, description = '', pkpIds = [], cids = [], cidHashes = [] }) {
    return this.#send('updateGroup', BigInt(accountHash), 0n, BigInt(groupId), name, description, pkpIds,
      [...cids.map(hashCid), ...cidHashes]);
  }

  /// convertToChainSecuredAccount(apiKeyHash, newAdmin) sent by the current admin wallet (the direct
  /// form of the conversion; reverts AlreadyUnmanaged -> ConflictError for a ChainSecured account) ->
  /// {converted, receipt}. Naming the sending wallet itself converts at once (converted: true); naming
  /// another wallet only proposes it (ConversionProposed, converted: false): that wallet completes the
  /// conversion with acceptConversion(accountHash), so no wallet becomes an admin without its consent.
  async convertToChainSecuredAccount({ accountHash, newAdmin }) {
    const receipt = await this.#send('convertToChainSecuredAccount', BigInt(accountHash), newAdmin);
    const names = receipt.logs.map((l) => { try { return this.contract.interface.parseLog(l)?.name; } catch { return null; } });
    return { converted: names.includes('AccountConverted'), receipt };
  }
  /// Step two of a proposed conversion, by the proposed wallet: it becomes the admin and the account
  /// ChainSecured.
  acceptConversion(accountHash) { return this.#send('acceptConversion', BigInt(accountHash)); }
  /// The wallet a conversion was proposed to (ZeroAddress when none).
  pendingConversion(accountHash) { return mapped(() => this.contract.pendingConversion(BigInt(accountHash))); }

  /// Step one of the ownership transfer, by the admin wallet: proposes newOwner.
  transferOwnership(newOwner) { return this.#send('transferOwnership', newOwner); }
  /// Step two, by the proposed wallet: completes it. Then the old master key has no owner rights.
  acceptOwnership(accountHash) { return this.#send('acceptOwnership', BigInt(accountHash)); }
  /// The proposed owner (ZeroAddress when none).
  pendingOwner(accountHash) { return mapped(() => this.contract.pendingOwner(BigInt(accountHash))); }
}

/// A ChainSecured account driven by its admin wallet: the signature endpoints of the service and the
/// direct-path calls that attach what they mint.
export class ChainSecuredAccount {
  constructor({ client, signer, accountConfig, accountHash }) {
    this.client = client;
    this.signer = signer;
    this.accountConfig = accountConfig;
    this.accountHash = BigInt(accountHash);
  }

  /// Creates a new account on chain administered by `signer` (newChainSecuredAccount).
  static async create({ client, signer }) {
    const accountConfig = await AccountConfig.fromClient(client, signer);
    const { accountHash } = await accountConfig.newChainSecuredAccount();
    return new ChainSecuredAccount({ client, signer, accountConfig, accountHash });
  }

  /// The account `signer` administers (after a conversion, or created earlier); NotFoundError if none.
  static async connect({ client, signer }) {
    const accountConfig = await AccountConfig.fromClient(client, signer);
    const address = await signer.getAddress();
    const accountHash = await accountConfig.accountOfAdmin(address);
    if (accountHash === 0n) {
      throw new NotFoundError(`${address} administers no account`, { status: 404, code: ErrorCode.UNKNOWN_ACCOUNT });
    }
    return new ChainSecuredAccount({ client, signer, accountConfig, accountHash });
  }

  /// The account hash as 0x + 64 hex (the api_key_hash of the API).
  get accountHashHex() { return ethers.toBeHex(this.accountHash, 32); }

  /// Mints a PKP with a CreateWallet signature and registers it from the admin wallet ->
  /// {wallet_address, derivation_path, receipt}.
  async mintPkp({ name = '', description = '' } = {}) {
    const minted = await this.client.createWalletWithSignature(this.signer);
    const receipt = await this.accountConfig.registerWalletDerivation({
      accountHash: this.accountHash, walletAddress: minted.wallet_address, derivationPath: minted.derivation_path,
      name, description,
    });
    return { ...minted, receipt };
  }

  /// Mints a usage key with an AddUsageApiKey signature, then from the admin wallet registers its wallet
  /// and attaches it with setUsageApiKey -> {usage_api_key, wallet_address, derivation_path}. It works at once.
  async addUsageKey({ name = '', description = '', expiration = 0, balance = 0, permissions = {} } = {}) {
    const minted = await this.client.addUsageApiKeyWithSignature(this.signer);
    await this.accountConfig.registerWalletDerivation({
      accountHash: this.accountHash, walletAddress: minted.wallet_address, derivationPath: minted.derivation_path,
      name, description,
    });
    await this.accountConfig.setUsageApiKey({
      accountHash: this.accountHash, usageApiKey: minted.usage_api_key, expiration, balance, name, description, permissions,
    });
    return minted;
  }

  /// Adds a group from the admin wallet -> its id (bigint). cids are raw CIDs.
  async addGroup({ name, description = '', pkpIds = [], cids = [], cidHashes = [] }) {
    const { groupId } = await this.accountConfig.addGroup({ accountHash: this.accountHash, name, description, pkpIds, cids, cidHashes });
    return groupId;
  }

  /// A client that sends this usage key (ChainSecured mode).
  usageClient(usageApiKey) { return this.client.withApiKey(usageApiKey, { mode: Mode.ChainSecured }); }
}
