import './styles.css';
import { whenUnauthenticated } from './api.ts';
import { fetchCaller } from './caller.ts';
import { el, navLink, replaceChildren } from './dom.ts';
import { consoleLayout } from './layout.ts';
import { accountPage } from './pages/account.ts';
import { accountsPage } from './pages/accounts.ts';
import { agentPage, agentsPage } from './pages/agents.ts';
import { operationPage } from './pages/operation.ts';
import { problemBlock } from './problem-view.ts';
import { ConsoleRouter, route, UI_BASE } from './router.ts';
import { forgetToken, storedToken } from './session.ts';
import { loadConsoleSettings, type ConsoleClientSettings } from './settings.ts';
import { completeOidcCallback, oidcSignInExpired, oidcSignInWay, oidcSignOut, signedInWithOidc, watchOidcExpiry } from './oidc-sign-in.ts';
import { addSignInWay, renderSignIn } from './sign-in.ts';
import type { CallerJson } from './types.ts';

const app = document.getElementById('app') as HTMLElement;
/** A 401 sends a signed-in operator back to sign-in; while signing in, the form shows it itself. */
let signedIn = false;
/** The router of the signed-in console; a new one is made at each sign-in. */
let router: ConsoleRouter | undefined;

function showSignIn(settings: ConsoleClientSettings, reason?: string): void {
  signedIn = false;
  router?.dispose();
  router = undefined;
  const { root, main } = consoleLayout(undefined, () => {});
  replaceChildren(app, root);
  renderSignIn(main, settings, () => void start(settings), reason);
  main.querySelector<HTMLElement>('h1')?.setAttribute('tabindex', '-1');
  main.querySelector<HTMLElement>('input')?.focus();
  document.title = 'Sign in · vendor-agent console';
}

function showConsole(settings: ConsoleClientSettings, caller: CallerJson): void {
  const signOut = () => {
    // Signed in at the issuer: its end-session endpoint brings the browser back to the console.
    if (signedInWithOidc()) return void oidcSignOut(settings);
    forgetToken();
    history.replaceState(null, '', `${UI_BASE}/`);
    showSignIn(settings, 'You are signed out.');
  };
  signedIn = true;
  watchOidcExpiry(() => showSignIn(settings, SIGN_IN_EXPIRED));
  const { root, main } = consoleLayout(caller, signOut);
  replaceChildren(app, root);
  const current: ConsoleRouter = new ConsoleRouter(
    main,
    [
      route('', (m, v) => accountsPage(m, v, { caller, go: (p) => current.go(p) })),
      route('/accounts/:name', accountPage),
      route('/agents', agentsPage),
      route('/agents/:id', agentPage),
      route('/operations/:id', operationPage),
    ],
    (m) => replaceChildren(m, el('h1', {}, 'Not found'), el('p', {}, 'The console has no page here. '), navLink(`${UI_BASE}/`, 'Back to the accounts')),
  );
  router = current;
  void current.show();
}

const SIGN_IN_EXPIRED = 'Your sign-in has expired: sign in again.';

async function start(settings: ConsoleClientSettings): Promise<void> {
  if (oidcSignInExpired()) return showSignIn(settings, SIGN_IN_EXPIRED);
  if (storedToken() === undefined) return showSignIn(settings);
  try {
    showConsole(settings, await fetchCaller());
  } catch (err) {
    if (storedToken() === undefined) return; // a 401: whenUnauthenticated has shown the sign-in page
    const { root, main } = consoleLayout(undefined, () => {});
    replaceChildren(app, root);
    replaceChildren(main, el('h1', {}, 'The console cannot start'), problemBlock(err), el('button', { type: 'button', onclick: () => void start(settings) }, 'Try again'));
  }
}

const settings = await loadConsoleSettings();
addSignInWay(oidcSignInWay);
const oidcRefused = await completeOidcCallback(settings);
whenUnauthenticated(() => {
  if (signedIn) showSignIn(settings, 'Your session has ended or the token was refused: sign in again.');
});
if (oidcRefused === undefined) await start(settings);
else showSignIn(settings, oidcRefused.message);
