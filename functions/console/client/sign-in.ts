import { apiGet } from './api.ts';
import { el, field, replaceChildren } from './dom.ts';
import { showProblem } from './problem-view.ts';
import { forgetToken, storeToken } from './session.ts';
import type { ConsoleClientSettings } from './settings.ts';
import type { CallerJson } from './types.ts';

/**
 * Another way of signing in, shown beside the token form when the settings turn it on (OpenID Connect
 * registers one). `render` returns its part of the page; it ends by storing a token and calling `done`.
 */
export interface SignInWay {
  id: string;
  enabled(settings: ConsoleClientSettings): boolean;
  render(settings: ConsoleClientSettings, done: () => void): HTMLElement;
}

const otherWays: SignInWay[] = [];

export function addSignInWay(way: SignInWay): void {
  otherWays.push(way);
}

/** The token form: the admin token `npm start` names, or any bearer token the API accepts. */
function tokenForm(done: () => void): HTMLElement {
  const input = el('input', { type: 'password', name: 'token', autocomplete: 'off', spellcheck: 'false', required: true });
  const problems = el('div', { class: 'problem-slot' });
  const form = el(
    'form',
    { class: 'sign-in-token', 'aria-labelledby': 'sign-in-token-title', novalidate: true },
    el('h2', { id: 'sign-in-token-title' }, 'With a token'),
    field('Bearer token', input, 'With npm start: the api.auth.adminToken of its vendor-driver.yml. The token stays in this tab only, and is forgotten when you sign out or close the tab.'),
    problems,
    el('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (token === '') {
      showProblem(problems, new Error('Enter a token.'));
      input.focus();
      return;
    }
    storeToken(token);
    try {
      await apiGet<CallerJson>('/vendor/caller');
      input.value = '';
      done();
    } catch (err) {
      forgetToken();
      showProblem(problems, err, form);
      input.focus();
    }
  });
  return form;
}

/** The sign-in page: the token form, and each other way the settings turn on. */
export function renderSignIn(main: HTMLElement, settings: ConsoleClientSettings, done: () => void, reason?: string): void {
  const ways = otherWays.filter((w) => w.enabled(settings));
  replaceChildren(
    main,
    el(
      'section',
      { class: 'sign-in card', 'aria-labelledby': 'sign-in-title' },
      el('h1', { id: 'sign-in-title' }, 'Sign in to the console'),
      reason === undefined ? null : el('p', { class: 'notice', role: 'status' }, reason),
      ...ways.map((w) => el('div', { class: 'sign-in-way', 'data-way': w.id }, w.render(settings, done))),
      settings.signIn.token ? tokenForm(done) : null,
    ),
  );
}
