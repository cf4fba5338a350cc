// Who is signed in: an API key (an account's master key or a usage key) or a browser wallet that
// administers a ChainSecured account. Held in memory only: a reload signs out, so no key is ever
// written to localStorage or a cookie where another script or a shared machine could read it later.
import { SigilClient, apiKeyHash, ChainSecuredAccount, AccountConfig } from '@sigil/sdk';
import { connectWallet } from './wallet.js';


export const Kind = Object.freeze({ Account: 'account', Usage: 'usage', Wallet: 'wallet' });

class Session extends EventTarget {
  client = null;      // SigilClient with the key (or without one in wallet mode)
  kind = null;        // Kind
  keyHash = null;     // keccak256 of the key (0x + 64 hex), key sign-in only
  wallet = null;      // {provider, signer, address} after connectWallet
  account = null;     // ChainSecuredAccount (wallet sign-in, once it administers an account)
  notice = '';        // why the last sign-out happened without the user asking, shown once

  get signedIn() { return this.kind !== null; }

  /// A client for calls that need no key (chain config, CID of code, payments config).
  publicClient() { return new SigilClient({ baseUrl: window.location.origin }); }

  /// Signs in with an API key: the service must know it (account_exists). The account's usage keys
  /// are listed by hash (any key of the account may list them), so a key whose hash is among them is a
  /// usage key and any other known key the account's own.
  async signInWithKey(apiKey) {
    const key = String(apiKey ?? '').trim();
    if (!key) throw new Error('paste an API key first');
    const client = new SigilClient({ baseUrl: window.location.origin, apiKey: key });
    const exists = await client.accountExists();
    if (exists !== true) throw new Error('the service does not know this key (account_exists is false): check it was copied whole');
    const keyHash = apiKeyHash(key);
    const usage = [];
    for (let page = 0; ; page += 1) {
      const items = await client.listApiKeys({ page_number: page, page_size: 100 });
      usage.push(...items.map((k) => String(k.api_key_hash).toLowerCase()));
      if (items.length < 100) break;
    }
    this.#set({ client, kind: usage.includes(keyHash) ? Kind.Usage : Kind.Account, keyHash, account: null });
  }

  /// Signs in with the browser wallet (EIP-1193 window.ethereum): checks its chain against the
  /// service's, then looks up the ChainSecured account it administers (none yet: `account` stays
  /// null and the page offers to create one).
  async signInWithWallet() {
    const client = this.publicClient();
    const wallet = await connectWallet(client, { onChange: () => this.#walletChanged(wallet) });
    const accountConfig = await AccountConfig.fromClient(client, wallet.signer);
    const hash = await accountConfig.accountOfAdmin(wallet.address);
    const account = hash === 0n ? null : new ChainSecuredAccount({ client, signer: wallet.signer, accountConfig, accountHash: hash });
    this.wallet = wallet;
    this.#set({ client, kind: Kind.Wallet, keyHash: null, account });
  }

  /// Creates a ChainSecured account administered by the connected wallet (one transaction, previewed).
  async createChainSecuredAccount() {
    if (!this.wallet) throw new Error('connect a wallet first');
    const account = await ChainSecuredAccount.create({ client: this.client, signer: this.wallet.signer });
    this.#set({ client: this.client, kind: Kind.Wallet, keyHash: null, account });
    return account;
  }

  /// The wallet, connecting it on first use (billing pays with it whatever the sign-in was).
  async ensureWallet() {
    if (!this.wallet) {
      const wallet = await connectWallet(this.publicClient(), { onChange: () => this.#walletChanged(wallet) });
      this.wallet = wallet;
    }
    return this.wallet;
  }

  // The wallet switched account or chain: a wallet sign-in ends (its account is another's now), a key
  // sign-in only forgets the wallet it paid with.
  #walletChanged(wallet) {
    if (this.wallet !== wallet) return;
    this.notice = 'the wallet changed account or network: sign in again';
    if (this.kind === Kind.Wallet) this.signOut();
    else this.wallet = null;
  }

  signOut() { this.#set({ client: null, kind: null, keyHash: null, account: null }); this.wallet = null; }

  #set({ client, kind, keyHash, account }) {
    Object.assign(this, { client, kind, keyHash, account });
    this.dispatchEvent(new Event('change'));
  }
}

export const session = new Session();
