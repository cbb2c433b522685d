import { replaceChildren, type Child } from './dom.ts';

/**
 * Replaces a region's content on a refresh without losing the keyboard user's place: the control
 * that had focus is found again by its `data-focus-key` and focused.
 */
export function replaceKeepingFocus(region: HTMLElement, ...children: Child[]): void {
  const active = document.activeElement;
  const key = active instanceof HTMLElement && region.contains(active) ? active.dataset.focusKey : undefined;
  replaceChildren(region, ...children);
  if (key === undefined) return;
  region.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(key)}"]`)?.focus();
}
