import { ApiProblem, NetworkFailure } from './api.ts';
import { el, replaceChildren } from './dom.ts';

/** The problem as the API stated it: title, detail and every field error, or that the network failed. */
export function problemBlock(err: unknown): HTMLElement {
  if (err instanceof ApiProblem) {
    return el(
      'div',
      { class: 'problem', role: 'alert' },
      el('p', { class: 'problem-title' }, `${err.title} (${err.status})`),
      err.detail === '' ? null : el('p', {}, err.detail),
      err.errors.length === 0 ? null : el('ul', {}, ...err.errors.map((e) => el('li', {}, el('code', {}, e.path), ': ', e.message))),
    );
  }
  if (err instanceof NetworkFailure) return el('div', { class: 'problem', role: 'alert' }, el('p', { class: 'problem-title' }, 'Network failure'), el('p', {}, err.message));
  return el('div', { class: 'problem', role: 'alert' }, el('p', { class: 'problem-title' }, 'Something went wrong in the console'), el('p', {}, err instanceof Error ? err.message : String(err)));
}

/**
 * Shows the problem in `slot`, and each field error beside the field it names: a form field whose
 * `name` is the error's path (or its last part, `[0].zoneId` → `zoneId`) gets the message.
 */
export function showProblem(slot: HTMLElement, err: unknown, form?: HTMLFormElement): void {
  replaceChildren(slot, problemBlock(err));
  if (form === undefined) return;
  clearFieldErrors(form);
  if (!(err instanceof ApiProblem)) return;
  for (const e of err.errors) {
    const target = fieldNamesOf(e.path)
      .map((name) => form.querySelector<HTMLElement>(`[data-error-for="${CSS.escape(name)}"]`))
      .find((t) => t !== null);
    if (target === undefined) continue;
    target.textContent = e.message;
    target.hidden = false;
    form.querySelector(`[name="${CSS.escape(target.dataset.errorFor ?? '')}"]`)?.setAttribute('aria-invalid', 'true');
  }
}

/** The form fields an error path may mean, closest first: `[0].zoneId` → zoneId, `targets[0].name` → name, `manifests[1]` → manifests. */
function fieldNamesOf(path: string): string[] {
  const withoutIndex = path.replace(/^\[\d+\]\.?/, '');
  const last = withoutIndex.split('.').pop() ?? withoutIndex;
  return [path, withoutIndex, last.replace(/\[\d+\]$/, '')].filter((n) => n !== '');
}

export function clearFieldErrors(form: HTMLFormElement): void {
  for (const target of form.querySelectorAll<HTMLElement>('[data-error-for]')) {
    target.textContent = '';
    target.hidden = true;
  }
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
}
