import { el } from './dom.ts';

/** The polite live region: refreshes and results are read out without moving focus. */
export const liveRegion = el('div', { id: 'live', class: 'visually-hidden', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });

export function announce(message: string): void {
  // Emptied first, so the same message said twice is read twice.
  liveRegion.textContent = '';
  window.setTimeout(() => (liveRegion.textContent = message), 50);
}
