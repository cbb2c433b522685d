import { el, navLink } from './dom.ts';
import { liveRegion } from './live.ts';
import { UI_BASE } from './router.ts';
import type { CallerJson } from './types.ts';

export interface ConsoleLayout {
  root: HTMLElement;
  main: HTMLElement;
}

/** Header with the navigation and who is signed in, the main landmark, and the live region. */
export function consoleLayout(caller: CallerJson | undefined, onSignOut: () => void): ConsoleLayout {
  const main = el('main', { id: 'main', tabindex: -1 });
  const who =
    caller === undefined
      ? null
      : el(
          'div',
          { class: 'who' },
          el('span', { class: 'subject', title: caller.roles.length > 0 ? `roles: ${caller.roles.join(', ')}` : undefined }, caller.subject),
          caller.manager ? el('span', { class: 'badge' }, 'account manager') : null,
          el('button', { type: 'button', class: 'secondary', id: 'sign-out', onclick: onSignOut }, 'Sign out'),
        );
  const header = el(
    'header',
    { class: 'top' },
    el('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    el('span', { class: 'brand' }, 'vendor-agent'),
    caller === undefined
      ? null
      : el('nav', { 'aria-label': 'Console' }, el('ul', {}, el('li', {}, navLink(`${UI_BASE}/`, 'Accounts')), el('li', {}, navLink(`${UI_BASE}/agents`, 'Agents and zones')))),
    who,
  );
  const root = el('div', { class: 'layout' }, header, main, liveRegion);
  return { root, main };
}
