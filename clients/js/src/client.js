// SigilClient: one method per endpoint of the interface spec and DESIGN.md section 4, over fetch.
// Bodies and answers keep the API's own field names (snake_case), exactly as the spec and
// /core/v1/openapi.json document them; every failure is a SigilError (errors.js).
import { ethers } from 'ethers';
import {
  ClientError, ErrorCode, InvalidResponseError, NetworkError, errorFromResponse,
} from './errors.js';
import { PrimaryType, signTypedData, signWalletAuth } from './typed_data.js';
import { checkReceipt } from './receipt.js';
import ACCOUNT_CONFIG_ABI from '../abi/AccountConfig.json' with { type: 'json' };

/// The two account modes of the spec. A client is in ChainSecured mode when it was made for a
/// ChainSecured account (mode option, a usage key of such an account) or after it converted its account.
export const Mode = Object.freeze({ Api: 'api', ChainSecured: 'chainSecured' });

/// keccak256(utf8(key)): an API key's on-chain hash (the account's apiKeyHash for a master key).
export const apiKeyHash = (key) => ethers.keccak256(ethers.toUtf8Bytes(String(key)));
/// keccak256(utf8(cid)): the hashed CID that update/delete endpoints and groups take.
export const hashCid = (cid) => ethers.keccak256(ethers.toUtf8Bytes(String(cid)));

const API_PREFIX = '/core/v1';

function isEnvelope(x) {
  return x && typeof x === 'object' && 'typed_data' in x && 'signature' in x && typeof x.signTypedData !== 'function';
}

export class SigilClient {
  #baseUrl;
  #apiKey;
  #fetch;
  #mode;
  #provider;
  #timeoutMs;
  #headers;
  #chainConfig = null;

  /// baseUrl: the service root (https://host:port; a trailing /core/v1 is accepted). apiKey: a master
  /// or usage key, sent as X-Api-Key. fetch: a WHATWG fetch (default globalThis.fetch). mode:
  /// Mode.Api (default) or Mode.ChainSecured. provider: an ethers Provider on the service's chain, used
  /// to read the account's mode before a conversion. timeoutMs: per request (default 60 s). headers:
  /// sent with every request (e.g. X-Correlation-Id).
  constructor({ baseUrl, apiKey = null, fetch = globalThis.fetch, mode = Mode.Api, provider = null,
    timeoutMs = 60000, headers = {} } = {}) {
    if (typeof baseUrl !== 'string' || !/^https?:\/\//.test(baseUrl)) {
      throw new ClientError('baseUrl must be an http(s) URL', { code: ErrorCode.INVALID_ARGUMENT });
    }
    if (typeof fetch !== 'function') {
      throw new ClientError('no fetch: pass options.fetch', { code: ErrorCode.INVALID_ARGUMENT });
    }
    if (!Object.values(Mode).includes(mode)) {
      throw new ClientError(`mode must be ${Object.values(Mode).join(' or ')}`, { code: ErrorCode.INVALID_ARGUMENT });
    }
    this.#baseUrl = baseUrl.replace(/\/+$/, '').replace(/\/core\/v1$/, '');
    this.#apiKey = apiKey;
    this.#fetch = fetch;
    this.#mode = mode;
    this.#provider = provider;
    this.#timeoutMs = timeoutMs;
    this.#headers = { ...headers };
  }

  get baseUrl() { return this.#baseUrl; }
  get apiKey() { return this.#apiKey; }
  get mode() { return this.#mode; }

  /// A client with the same settings and another key (e.g. a usage key); mode defaults to this one's.
  withApiKey(apiKey, { mode = this.#mode } = {}) {
    const c = new SigilClient({
      baseUrl: this.#baseUrl, apiKey, fetch: this.#fetch, mode, provider: this.#provider,
      timeoutMs: this.#timeoutMs, headers: this.#headers,
    });
    c.#chainConfig = this.#chainConfig;
    return c;
  }

  /// A client that also sends `headers` with every request (the same key, mode and settings).
  withHeaders(headers) {
    const c = this.withApiKey(this.#apiKey);
    c.#headers = { ...this.#headers, ...headers };
    return c;
  }

  /// A client whose requests carry `Idempotency-Key: key` (DESIGN.md section 9): a write retried with
  /// the same key and body returns the first answer (Idempotent-Replayed: true) and is neither executed
  /// nor charged again; the same key with another body is a 422 with code ErrorCode.IDEMPOTENCY_KEY_REUSED.
  /// Use one key per logical write, e.g. `await client.idempotent(crypto.randomUUID()).addGroup({...})`.
  idempotent(key) {
    if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key)) {
      throw new ClientError('an Idempotency-Key is 1 to 255 printable ASCII characters without spaces',
        { code: ErrorCode.INVALID_ARGUMENT });
    }
    return this.withHeaders({ 'Idempotency-Key': key });
  }

  // ---- transport ----

  /// Sends one request and returns the parsed JSON answer. path: relative to /core/v1 unless it
  /// starts with '/' and not '/core' (the attestation group, /health). Options: body (JSON), rawBody
  /// (string, sent as application/json), query, headers, auth (false: send no API key).
  async request(method, path, { body, rawBody, query, headers = {}, auth = true } = {}) {
    let url = this.#baseUrl + (path.startsWith('/') ? path : `${API_PREFIX}/${path}`);
    if (query) {
      const entries = Object.entries(query).filter(([, v]) => v !== undefined && v !== null);
      if (entries.length) url += `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)]))}`;
    }
    const h = { Accept: 'application/json', ...this.#headers, ...headers };
    if (auth && this.#apiKey) h['X-Api-Key'] = this.#apiKey;
    let payload;
    if (rawBody !== undefined) payload = rawBody;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) h['Content-Type'] = 'application/json';
    const what = `${method} ${path}`;
    let res;
    let text;
    try {
      const init = { method, headers: h, body: payload };
      if (this.#timeoutMs && typeof AbortSignal?.timeout === 'function') init.signal = AbortSignal.timeout(this.#timeoutMs);
      // Called on globalThis: a browser's fetch throws "Illegal invocation" when called as a method of
      // another object (this client), which the default (globalThis.fetch) would otherwise be.
      res = await this.#fetch.call(globalThis, url, init);
      text = await res.text();
    } catch (cause) {
      throw new NetworkError(`${what}: no answer from ${this.#baseUrl}: ${cause?.message ?? cause}`,
        { code: ErrorCode.NETWORK_ERROR, cause });
    }
    const requestId = res.headers?.get?.('x-request-id') ?? null;
    if (res.status < 200 || res.status > 299) throw errorFromResponse(res.status, text, requestId, res.headers);
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new InvalidResponseError(`${what}: HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`,
        { status: res.status, code: ErrorCode.INVALID_RESPONSE, requestId, body: text, cause });
    }
  }

  // ---- accounts and usage keys ----

  /// POST /new_account -> {api_key, wallet_address}. The key is shown once. When the chain does not
  /// confirm in time the answer also has pending: true and tx_hash: keep the key, it works once that
  /// transaction is mined (the same holds for addUsageApiKey and createWallet).
  newAccount({ account_name, account_description, email } = {}) {
    const body = Object.fromEntries(Object.entries({ account_name, account_description, email }).filter(([, v]) => v !== undefined));
    return this.request('POST', 'new_account', { body, auth: false });
  }
  /// GET /account_exists -> boolean: whether this client's key is a live key of some account.
  accountExists() { return this.request('GET', 'account_exists'); }
  /// POST /add_usage_api_key {name, description, expiration?, balance?, ...the seven permission fields}
  /// -> {success, usage_api_key} (master key only; the value is shown once).
  addUsageApiKey(body) { return this.request('POST', 'add_usage_api_key', { body }); }
  /// POST /update_usage_api_key {usage_api_key, ...permissions}: replaces every permission.
  updateUsageApiKey(body) { return this.request('POST', 'update_usage_api_key', { body }); }
  /// POST /update_usage_api_key_metadata {usage_api_key, name, description}.
  updateUsageApiKeyMetadata(body) { return this.request('POST', 'update_usage_api_key_metadata', { body }); }
  /// POST /remove_usage_api_key {usage_api_key}.
  removeUsageApiKey(usage_api_key) {
    return this.request('POST', 'remove_usage_api_key', { body: { usage_api_key } });
  }
  /// GET /list_api_keys -> [usage-key metadata] (never key values).
  listApiKeys({ page_number, page_size } = {}) { return this.request('GET', 'list_api_keys', { query: { page_number, page_size } }); }

  // ---- key guardrails (issue 26): owner only, the master key or walletAuth (ChainSecured) ----
  /// POST /set_usage_api_key_guardrails {usage_api_key (value or hash), requests_per_second?, burst?,
  /// requests_per_second_per_address?, burst_per_address?, max_runs_in_flight?, spend_cap_cents?,
  /// spend_window_seconds?, allowed_origins?} -> {success, guardrails}; replaces every guardrail.
  async setUsageApiKeyGuardrails(body, { walletAuth } = {}) {
    return this.request('POST', 'set_usage_api_key_guardrails', { body, headers: await this.#billingHeaders(walletAuth), auth: !walletAuth });
  }
  /// GET /get_usage_api_key_guardrails?usage_api_key= -> {api_key_hash, set, requests_per_second, ...}.
  async getUsageApiKeyGuardrails(usage_api_key, { walletAuth } = {}) {
    return this.request('GET', 'get_usage_api_key_guardrails', { query: { usage_api_key }, headers: await this.#billingHeaders(walletAuth), auth: !walletAuth });
  }
  /// POST /clear_usage_api_key_guardrails {usage_api_key} -> {success, cleared}.
  async clearUsageApiKeyGuardrails(usage_api_key, { walletAuth } = {}) {
    return this.request('POST', 'clear_usage_api_key_guardrails', { body: { usage_api_key }, headers: await this.#billingHeaders(walletAuth), auth: !walletAuth });
  }

  // ---- wallets (PKPs), groups, actions ----

  /// POST /create_wallet {name?, description?} -> {wallet_address, derivation_path} (scope pkp:create).
  createWallet({ name, description } = {}) {
    const body = Object.fromEntries(Object.entries({ name, description }).filter(([, v]) => v !== undefined));
    return this.request('POST', 'create_wallet', { body });
  }
  /// GET /list_wallets -> [{id, name, description, wallet_address, pkp_id, derivation_path}].
  listWallets({ page_number, page_size } = {}) { return this.request('GET', 'list_wallets', { query: { page_number, page_size } }); }
  /// GET /list_wallets_in_group?group_id.
  listWalletsInGroup({ group_id, page_number, page_size }) {
    return this.request('GET', 'list_wallets_in_group', { query: { group_id, page_number, page_size } });
  }
  /// POST /add_group {group_name, group_description, pkp_ids_permitted?, cid_hashes_permitted?} -> {success, group_id}.
  addGroup({ group_name, group_description = '', pkp_ids_permitted = [], cid_hashes_permitted = [] }) {
    return this.request('POST', 'add_group', { body: { group_name, group_description, pkp_ids_permitted, cid_hashes_permitted } });
  }
  /// POST /update_group {group_id, name, description, pkp_ids_permitted?, cid_hashes_permitted?}
  /// (an omitted list is kept; [] empties it).
  updateGroup(body) { return this.request('POST', 'update_group', { body }); }
  /// POST /remove_group {group_id}.
  removeGroup(group_id) { return this.request('POST', 'remove_group', { body: { group_id } }); }
  /// GET /list_groups -> [{id, name, description, pkp_ids_permitted, cid_hashes_permitted}].
  listGroups({ page_number, page_size } = {}) { return this.request('GET', 'list_groups', { query: { page_number, page_size } }); }
  /// POST /add_pkp_to_group {group_id, pkp_id}.
  addPkpToGroup({ group_id, pkp_id }) { return this.request('POST', 'add_pkp_to_group', { body: { group_id, pkp_id } }); }
  /// POST /remove_pkp_from_group {group_id, pkp_id}.
  removePkpFromGroup({ group_id, pkp_id }) { return this.request('POST', 'remove_pkp_from_group', { body: { group_id, pkp_id } }); }
  /// POST /add_action_to_group {group_id, action_ipfs_cid} (the raw CID).
  addActionToGroup({ group_id, action_ipfs_cid }) {
    return this.request('POST', 'add_action_to_group', { body: { group_id, action_ipfs_cid } });
  }
  /// POST /remove_action_from_group {group_id, hashed_cid}.
  removeActionFromGroup({ group_id, hashed_cid }) {
    return this.request('POST', 'remove_action_from_group', { body: { group_id, hashed_cid } });
  }
  /// POST /add_action {action_ipfs_cid, name, description} -> {success, hashed_cid}.
  addAction({ action_ipfs_cid, name = '', description = '' }) {
    return this.request('POST', 'add_action', { body: { action_ipfs_cid, name, description } });
  }
  /// POST /update_action_metadata {hashed_cid, name, description}.
  updateActionMetadata({ hashed_cid, name, description }) {
    return this.request('POST', 'update_action_metadata', { body: { hashed_cid, name, description } });
  }
  /// POST /delete_action {hashed_cid}.
  deleteAction(hashed_cid) { return this.request('POST', 'delete_action', { body: { hashed_cid } }); }
  /// GET /list_actions?[group_id] -> [{id (hashed CID), name, description, ...}].
  listActions({ group_id, page_number, page_size } = {}) {
    return this.request('GET', 'list_actions', { query: { group_id, page_number, page_size } });
  }
  /// POST /get_sigil_action_ipfs_id with the code as a JSON string -> its CIDv0 (no key needed).
  getActionIpfsId(code) {
    return this.request('POST', 'get_sigil_action_ipfs_id', { rawBody: JSON.stringify(String(code)), auth: false });
  }

  // ---- runs ----

  /// POST /sigil_action {code | ipfs_id, pkp_id?, js_params?} -> {response, logs, has_error, error?}.
  /// A run whose own code failed is a 200 with has_error true (it ran); refusals are SigilErrors.
  /// A string response that holds JSON (an action's setResponse({response: JSON.stringify(...)})) arrives
  /// parsed, as the deployed implementation answers it; any other string stays a string.
  /// With receipt: true the answer also holds `receipt`, the deployment's signed receipt of the run
  /// (docs/receipts.md; check it with verifyReceipt).
  runAction({ code, ipfs_id, pkp_id, js_params, receipt } = {}) {
    const body = Object.fromEntries(Object.entries({ code, ipfs_id, pkp_id, js_params, receipt }).filter(([, v]) => v !== undefined));
    return this.request('POST', 'sigil_action', { body });
  }
  /// Checks a run receipt offline (receipt.js checkReceipt): its signature must recover to the
  /// attested receipt key, given as `evidence` (sigil-verify's verifyDeployment report, which must
  /// have passed, or {receiptKey, appId}) or `signer`; `params` / `response` check the hashes (the run
  /// answer itself may be passed, and then its response is checked). -> {ok, checks, message}.
  verifyReceipt(receipt, { evidence, signer, appId, params, response, chainId, contract } = {}) {
    if (!evidence && !signer) throw new ClientError('verifyReceipt needs the attested evidence (or the receipt key address as signer)', { code: 'invalid_argument' });
    if (evidence && evidence.rules && !evidence.ok) throw new ClientError('the evidence report did not verify: its receipt key is not attested', { code: 'invalid_argument' });
    return checkReceipt(receipt, { evidence, signer, appId, params, response, chainId, contract });
  }
  /// GET /get_action_client_config -> the limits every run is held to, and `runtime`: {engine,
  /// syntax_level, lowering, ethers_version, web_globals} (what an action's code can use).
  getActionClientConfig() { return this.request('GET', 'get_action_client_config', { auth: false }); }

  // ---- configuration and public information ----

  /// GET /get_node_chain_config -> {chain_name, chain_id, is_evm, testnet, token, contract_address}
  /// (cached: it is the chain id every signature is made for).
  async getNodeChainConfig({ refresh = false } = {}) {
    if (!this.#chainConfig || refresh) this.#chainConfig = await this.request('GET', 'get_node_chain_config', { auth: false });
    return this.#chainConfig;
  }
  /// GET /get_api_payers -> [address].
  getApiPayers() { return this.request('GET', 'get_api_payers', { auth: false }); }
  /// GET /get_admin_api_payer -> address.
  getAdminApiPayer() { return this.request('GET', 'get_admin_api_payer', { auth: false }); }
  /// GET /openapi.json -> the OpenAPI 3 document.
  openApi() { return this.request('GET', 'openapi.json', { auth: false }); }
  /// GET /core/v1/version -> {service, version, api}.
  version() { return this.request('GET', 'version', { auth: false }); }
  /// GET /health -> {status, version, keyd?, workers?}.
  health() { return this.request('GET', '/health', { auth: false }); }
  /// GET /: the service's index of links (OpenAPI, Swagger UI, the dashboard, the docs).
  index() { return this.request('GET', '/', { auth: false }); }
  /// GET /attestation -> {quote, event_log, vm_config} (503 attestation_unavailable without a TEE).
  attestation({ nonce } = {}) { return this.request('GET', '/attestation', { query: { nonce }, auth: false }); }
  /// GET /info -> {app_id, compose_hash, tcb_info} (503 attestation_unavailable without a TEE).
  info() { return this.request('GET', '/info', { auth: false }); }

  // ---- billing (spec "Billing", DESIGN.md section 9) ----
  // Account auth is this client's master key, or walletAuth: an X-Wallet-Auth value (signWalletAuth)
  // or an ethers Signer to make one (ChainSecured accounts).

  async #billingHeaders(walletAuth) {
    if (!walletAuth) return {};
    const value = typeof walletAuth === 'string' ? walletAuth
      : await signWalletAuth(walletAuth, { chainId: await this.#chainId(walletAuth) });
    return { 'X-Wallet-Auth': value };
  }
  /// GET /billing/payments_config -> {processor, publishable_key?, ...}.
  paymentsConfig() { return this.request('GET', 'billing/payments_config', { auth: false }); }
  /// GET /billing/balance -> {balance_cents, balance_display}.
  async balance({ walletAuth } = {}) {
    return this.request('GET', 'billing/balance', { headers: await this.#billingHeaders(walletAuth), auth: !walletAuth });
  }
  /// POST /billing/create_payment_intent {amount_cents >= 500} -> {payment_intent_id, client_secret, amount_cents, pay?}.
  async createPaymentIntent({ amount_cents, walletAuth } = {}) {
    return this.request('POST', 'billing/create_payment_intent',
      { body: { amount_cents }, headers: await this.#billingHeaders(walletAuth), auth: !walletAuth });
  }
  /// POST /billing/confirm_payment {payment_intent_id} -> {success, credited_cents, balance_cents}.
  async confirmPayment({ payment_intent_id, walletAuth } = {}) {
    return this.request('POST', 'billing/confirm_payment',
      { body: { payment_intent_id }, headers: await this.#billingHeaders(walletAuth), auth: !walletAuth });
  }

  // ---- run history (issue 26): the owner (master key, or walletAuth for a ChainSecured admin) sees
  // every run of the account, a usage key its own ----

  /// GET /list_runs?key_hash&cid&status&since&until&cursor&limit -> {runs: [...], next_cursor}; newest
  /// first, since/until in unix ms, next_cursor null on the last page.
  async listRuns({ key_hash, cid, status, since, until, cursor, limit, walletAuth } = {}) {
    return this.request('GET', 'list_runs', { query: { key_hash, cid, status, since, until, cursor, limit },
      headers: await this.#billingHeaders(walletAuth), auth: !walletAuth });
  }
  /// Every run that list_runs answers for these filters, following next_cursor (an async iterator).
  async *allRuns(filters = {}) {
    let cursor;
    do {
      const page = await this.listRuns({ ...filters, cursor });
      yield* page.runs;
      cursor = page.next_cursor;
    } while (cursor);
  }
  /// GET /get_run?request_id -> one run (404 run_not_found for another account's or another key's).
  async getRun({ request_id, walletAuth } = {}) {
    return this.request('GET', 'get_run', { query: { request_id }, headers: await this.#billingHeaders(walletAuth),
      auth: !walletAuth });
  }
  /// GET /get_run_history_settings -> {record_logs, log_bytes, keep_seconds}.
  async getRunHistorySettings({ walletAuth } = {}) {
    return this.request('GET', 'get_run_history_settings', { headers: await this.#billingHeaders(walletAuth),
      auth: !walletAuth });
  }
  /// POST /set_run_history_settings {record_logs} (owner only) -> {record_logs, log_bytes, keep_seconds}.
  async setRunHistorySettings({ record_logs, walletAuth } = {}) {
    return this.request('POST', 'set_run_history_settings', { body: { record_logs },
      headers: await this.#billingHeaders(walletAuth), auth: !walletAuth });
  }

  // ---- ChainSecured: the signature-authorized endpoints ----

  // The node's chain id, checked against the signer's own network when it has one (spec rule 6:
  // clients check chainId against get_node_chain_config).
  async #chainId(signer) {
    const { chain_id } = await this.getNodeChainConfig();
    const provider = signer?.provider;
    if (provider && typeof provider.getNetwork === 'function') {
      const network = await provider.getNetwork();
      if (BigInt(network.chainId) !== BigInt(chain_id)) {
        throw new ClientError(`the signer is on chain ${network.chainId}, the service on chain ${chain_id}`,
          { code: ErrorCode.CHAIN_ID_MISMATCH });
      }
    }
    return chain_id;
  }

  /// {typed_data, signature} of a flow, signed by `signer` for the service's chain.
  async signFlow(signer, primaryType, { issuedAt } = {}) {
    return signTypedData(signer, primaryType, { chainId: await this.#chainId(signer), issuedAt });
  }

  async #envelope(signerOrEnvelope, primaryType, issuedAt) {
    if (isEnvelope(signerOrEnvelope)) return { typed_data: signerOrEnvelope.typed_data, signature: signerOrEnvelope.signature };
    return this.signFlow(signerOrEnvelope, primaryType, { issuedAt });
  }

  /// POST /create_wallet_with_signature (CreateWallet; no API key) -> {wallet_address, derivation_path}.
  /// The PKP belongs to no account until the admin wallet calls registerWalletDerivation
  /// (AccountConfig.registerWalletDerivation, or ChainSecuredAccount.mintPkp which does both).
  /// Takes an ethers Signer (the account's admin wallet) or a ready {typed_data, signature}.
  async createWalletWithSignature(signerOrEnvelope, { issuedAt } = {}) {
    const body = await this.#envelope(signerOrEnvelope, PrimaryType.CreateWallet, issuedAt);
    return this.request('POST', 'create_wallet_with_signature', { body, auth: false });
  }

  /// POST /add_usage_api_key_with_signature (AddUsageApiKey; no API key) ->
  /// {usage_api_key, wallet_address, derivation_path}. The key works once the admin wallet has called
  /// registerWalletDerivation and setUsageApiKey (ChainSecuredAccount.addUsageKey does all three).
  async addUsageApiKeyWithSignature(signerOrEnvelope, { issuedAt } = {}) {
    const body = await this.#envelope(signerOrEnvelope, PrimaryType.AddUsageApiKey, issuedAt);
    return this.request('POST', 'add_usage_api_key_with_signature', { body, auth: false });
  }

  /// POST /convert_to_chain_secured_account (ConvertAccount; this client's master key) ->
  /// {success, api_key_hash}. `newAdmin` is the new admin wallet's Signer (an EOA: it signs the
  /// ConvertAccount message), or a ready {typed_data, signature} with newAdminWalletAddress.
  /// Throws (ClientError already_chain_secured) when this client is in ChainSecured mode or its
  /// account is already ChainSecured on chain (spec: "the client throws"); afterwards the client is in
  /// ChainSecured mode and the master key authorizes no write any more.
  async convertToChainSecuredAccount(newAdmin, { newAdminWalletAddress, issuedAt } = {}) {
    if (this.#mode === Mode.ChainSecured) {
      throw new ClientError('this client is in ChainSecured mode: there is no way back, and nothing to convert',
        { code: ErrorCode.ALREADY_CHAIN_SECURED });
    }
    if (!this.#apiKey) {
      throw new ClientError('conversion needs the account\'s master API key (apiKey)', { code: ErrorCode.INVALID_ARGUMENT });
    }
    await this.#refuseIfChainSecured(isEnvelope(newAdmin) ? null : newAdmin);
    const envelope = await this.#envelope(newAdmin, PrimaryType.ConvertAccount, issuedAt);
    const new_admin_wallet_address = newAdminWalletAddress ?? envelope.typed_data?.message?.address;
    const answer = await this.request('POST', 'convert_to_chain_secured_account',
      { body: { new_admin_wallet_address, ...envelope } });
    this.#mode = Mode.ChainSecured;
    return answer;
  }

  // With a provider at hand (options.provider, or the signer's), reads the account's mode on chain.
  async #refuseIfChainSecured(signer) {
    const provider = this.#provider ?? signer?.provider ?? null;
    if (!provider) return;
    const { contract_address } = await this.getNodeChainConfig();
    const contract = new ethers.Contract(contract_address, ACCOUNT_CONFIG_ABI, provider);
    const [, managed, exists] = await contract.getAccount(BigInt(apiKeyHash(this.#apiKey)));
    if (exists && !managed) {
      this.#mode = Mode.ChainSecured;
      throw new ClientError('the account is already ChainSecured (managed = false on chain): conversion has no reverse path',
        { code: ErrorCode.ALREADY_CHAIN_SECURED });
    }
  }
}
