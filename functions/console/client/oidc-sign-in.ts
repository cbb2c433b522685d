import { el } from './dom.ts';
import { beginSignIn, completeSignIn, currentSession, isCallback, SESSION_KEY, signOut, type OidcBrowser, type OidcSignIn } from './oidc.ts';
import { showProblem } from './problem-view.ts';
import { UI_BASE } from './router.ts';
import { forgetToken, storeToken } from './session.ts';
import type { ConsoleClientSettings } from './settings.ts';
import type { SignInWay } from './sign-in.ts';

/**
 * OpenID Connect in the console (docs/console.md#signing-in-with-openid-connect): the "Sign in with
 * <issuer>" button, the callback on `/ui/`, the end of the session at the token's expiry, and sign-out
 * at the issuer. The access token becomes the console's bearer token (session.ts).
 */

const browser: OidcBrowser = {
  storage: sessionStorage,
  fetch: (input, init) => fetch(input, { ...init, credentials: 'omit', cache: 'no-store' }),
  now: () => Date.now(),
  navigate: (url) => location.assign(url),
};

/** The console's one redirect URI: its base, where the shell reads the answer. */
const redirectUri = () => `${location.origin}${UI_BASE}/`;

function oidcOf(settings: ConsoleClientSettings): OidcSignIn | undefined {
  return settings.signIn.oidc;
}

/** The issuer as a person reads it: its host, and path when it has one. */
function issuerName(issuer: string): string {
  const url = new URL(issuer);
  return `${url.host}${url.pathname === '/' ? '' : url.pathname}`;
}

export const oidcSignInWay: SignInWay = {
  id: 'oidc',
  enabled: (settings) => oidcOf(settings) !== undefined,
  render(settings) {
    const oidc = oidcOf(settings) as OidcSignIn;
    const problems = el('div', { class: 'problem-slot' });
    const button = el('button', { type: 'button', class: 'sign-in-oidc' }, `Sign in with ${issuerName(oidc.issuer)}`);
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const here = location.pathname.startsWith(UI_BASE) ? `${location.pathname}${location.search}` : `${UI_BASE}/`;
        await beginSignIn(oidc, browser, redirectUri(), here);
      } catch (err) {
        button.disabled = false;
        showProblem(problems, err);
      }
    });
    return el(
      'section',
      { class: 'sign-in-oidc', 'aria-labelledby': 'sign-in-oidc-title' },
      el('h2', { id: 'sign-in-oidc-title' }, 'With your organisation'),
      el('p', {}, 'Sign in at your identity provider; the console keeps the token in this tab only.'),
      problems,
      button,
    );
  },
};

/**
 * On the redirect URI after the provider: exchanges the code, stores the token and takes the address
 * back to where sign-in started (without the code). Returns an error to show on the sign-in page when
 * the answer is refused, undefined otherwise (also when this is no callback).
 */
export async function completeOidcCallback(settings: ConsoleClientSettings): Promise<Error | undefined> {
  const oidc = oidcOf(settings);
  if (oidc === undefined || !isCallback(location.href)) return undefined;
  try {
    const { session, returnTo } = await completeSignIn(oidc, browser, location.href);
    storeToken(session.accessToken);
    history.replaceState(null, '', returnTo.startsWith(`${UI_BASE}/`) ? returnTo : `${UI_BASE}/`);
    return undefined;
  } catch (err) {
    history.replaceState(null, '', `${UI_BASE}/`);
    return err as Error;
  }
}

let expiryTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * Whether this tab signed in with OIDC and the token has expired since (a reload, a laptop that slept):
 * the token is then forgotten, and the console shows the sign-in page instead of using it.
 */
export function oidcSignInExpired(): boolean {
  const signedInHere = browser.storage.getItem(SESSION_KEY) !== null;
  if (!signedInHere || currentSession(browser.storage, browser.now()) !== undefined) return false;
  forgetToken();
  return true;
}

/** At the token's expiry the console forgets it and `expired` shows the sign-in page. */
export function watchOidcExpiry(expired: () => void): void {
  clearTimeout(expiryTimer);
  const session = currentSession(browser.storage, browser.now());
  if (session === undefined) return;
  expiryTimer = setTimeout(() => {
    if (oidcSignInExpired()) expired();
  }, Math.max(0, session.expiresAt - browser.now()));
}

/** Whether the signed-in operator came through OIDC (then signing out ends the issuer's session too). */
export function signedInWithOidc(): boolean {
  return currentSession(browser.storage, browser.now()) !== undefined;
}

/** Forgets the token and ends the session at the issuer, which sends the browser back to `/ui/`. */
export async function oidcSignOut(settings: ConsoleClientSettings): Promise<void> {
  clearTimeout(expiryTimer);
  forgetToken();
  const oidc = oidcOf(settings);
  if (oidc !== undefined) await signOut(oidc, browser, redirectUri());
}
