// Sign-in page: an API key, a browser wallet (and creating a ChainSecured account for it), or a new
// API-mode account whose key is shown once.
import { session, Kind } from '../session.js';
import { $, busy, say, shortHash } from '../ui.js';

export function describeSession() {
  switch (session.kind) {
    case Kind.Account: return `Signed in with the account key ${shortHash(session.keyHash)}.`;
    case Kind.Usage: return `Signed in with a usage key ${shortHash(session.keyHash)} (what it may do is its scopes').`;
    case Kind.Wallet: return session.account
      ? `Signed in with the wallet ${session.wallet.address}, admin of the ChainSecured account ${session.account.accountHashHex}.`
      : `Wallet ${session.wallet.address} connected; it administers no account yet.`;
    default: return 'Not signed in.';
  }
}

export function init({ onSignedIn }) {
  const status = () => $('#signin-status');
  $('#signin-key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('#signin-key-submit'), status(), async () => {
      await session.signInWithKey($('#signin-key').value);
      $('#signin-key').value = '';
      say(status(), '');
      onSignedIn();
    });
  });
  $('#signin-wallet').addEventListener('click', () => busy($('#signin-wallet'), status(), async () => {
    await session.signInWithWallet();
    $('#wallet-no-account').hidden = session.account !== null;
    say(status(), '');
    if (session.account) onSignedIn();
  }));
  $('#create-chain-secured').addEventListener('click', () => busy($('#create-chain-secured'), status(), async () => {
    await session.createChainSecuredAccount();
    $('#wallet-no-account').hidden = true;
    say(status(), `account ${session.account.accountHashHex} created`);
    onSignedIn();
  }));
  $('#new-account').addEventListener('click', () => busy($('#new-account'), status(), async () => {
    const { api_key } = await session.publicClient().newAccount({ account_name: 'dashboard', account_description: '' });
    $('#new-account-key').value = api_key;
    $('#new-account-out').hidden = false;
    say(status(), 'account created: copy its key now, then sign in with it');
  }));
}
