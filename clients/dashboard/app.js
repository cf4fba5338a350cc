// The dashboard's entry point: one page visible at a time, chosen by the URL's #fragment, and pages
// that need a sign-in shown only after one. Each page module has init() (wire its forms once) and
// show() (load what it lists).
import { session, Kind } from './session.js';
import { $, describeError, say } from './ui.js';
import * as signin from './pages/signin.js';
import * as keys from './pages/keys.js';
import * as groups from './pages/groups.js';
import * as pkps from './pages/pkps.js';
import * as actions from './pages/actions.js';
import * as run from './pages/run.js';
import * as billing from './pages/billing.js';
import * as attestation from './pages/attestation.js';

const PAGES = { keys, groups, pkps, actions, run, billing, attestation };
// What each sign-in may open: managing keys is the owner's alone (the account key, the admin wallet);
// runs need a key, so a wallet makes a usage key on the keys page and signs in with it to run.
const ALLOWED = {
  [Kind.Account]: Object.keys(PAGES),
  [Kind.Usage]: ['groups', 'pkps', 'actions', 'run', 'billing', 'attestation'],
  [Kind.Wallet]: ['keys', 'groups', 'pkps', 'actions', 'billing', 'attestation'],
  none: ['attestation'],
};

function allowed() { return ALLOWED[session.kind ?? 'none']; }

async function route() {
  const want = window.location.hash.replace(/^#/, '');
  const name = allowed().includes(want) ? want : null;
  $('#page-signin').hidden = session.signedIn && name !== null;
  for (const [n] of Object.entries(PAGES)) $(`#page-${n}`).hidden = n !== name;
  for (const a of document.querySelectorAll('#nav a')) {
    a.parentElement.hidden = !allowed().includes(a.dataset.page);
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (name) {
    try {
      await PAGES[name].show();
    } catch (e) {
      say($('#signin-status'), describeError(e), { error: true });
    }
  }
}

function onSessionChange() {
  $('#whoami').textContent = signin.describeSession();
  if (session.notice) {
    say($('#signin-status'), session.notice, { error: true });
    session.notice = '';
  }
  $('#sign-out').hidden = !session.signedIn;
  $('#nav').hidden = false;
  route();
}

signin.init({
  onSignedIn: () => {
    const first = allowed()[0];
    if (window.location.hash === `#${first}`) route();
    else window.location.hash = first;
  },
});
for (const page of Object.values(PAGES)) page.init?.();
session.addEventListener('change', onSessionChange);
$('#sign-out').addEventListener('click', () => { billing.signedOut(); session.signOut(); window.location.hash = ''; });
window.addEventListener('hashchange', route);
onSessionChange();
document.body.dataset.ready = 'true';
