import { apiGet, enc, withQuery } from '../api.ts';
import { el, field, replaceChildren } from '../dom.ts';
import { jsonText, timeText } from '../format.ts';
import { announce } from '../live.ts';
import { showProblem } from '../problem-view.ts';
import type { CacheKindJson, ResourceJson, ResourcePageJson } from '../types.ts';

const PAGE = 100;

/** A browser of an account's cached resources by kind, namespace and name, showing the object chosen. */
export function resourcesBrowser(account: string, kinds: CacheKindJson[], signal: AbortSignal): HTMLElement {
  const kindNames = [...new Set(kinds.map((k) => (k.group === '' ? k.kind : `${k.kind}.${k.group}`)))].sort();
  const kind = el('select', { name: 'kind' }, el('option', { value: '' }, 'every kind'), ...kindNames.map((k) => el('option', { value: k }, k)));
  const namespace = el('input', { name: 'namespace', type: 'text', autocomplete: 'off' });
  const name = el('input', { name: 'name', type: 'text', autocomplete: 'off' });
  const problems = el('div', { class: 'problem-slot' });
  const list = el('div', { class: 'resource-list' });
  const objectView = el('div', { class: 'object-view' });
  const form = el(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Browse cached resources' },
    field('Kind', kind),
    field('Namespace', namespace),
    field('Name', name),
    el('div', { class: 'filter-actions' }, el('button', { type: 'submit' }, 'Show resources')),
  );

  const show = (item: ResourceJson) => {
    replaceChildren(
      objectView,
      el('h3', { id: 'object-title', tabindex: -1 }, `${item.kind} ${item.namespace === undefined ? '' : `${item.namespace}/`}${item.name}`),
      el('p', { class: 'muted' }, `${item.apiVersion} · resourceVersion ${item.resourceVersion} · stored ${timeText(item.updatedAt)}`),
      el('pre', { class: 'object', tabindex: 0, 'aria-label': 'The object as cached' }, jsonText(item.object)),
    );
    objectView.querySelector<HTMLElement>('#object-title')?.focus();
  };

  const load = async (cursor?: string, rows: HTMLElement[] = []) => {
    try {
      const page = await apiGet<ResourcePageJson>(
        withQuery(`/vendor/accounts/${enc(account)}/resources`, { kind: kind.value, namespace: namespace.value.trim(), name: name.value.trim(), limit: PAGE, cursor }),
        signal,
      );
      replaceChildren(problems);
      const all = [
        ...rows,
        ...page.items.map((item) =>
          el(
            'tr',
            {},
            el('td', {}, item.kind),
            el('td', {}, item.namespace ?? '—'),
            el('th', { scope: 'row' }, el('button', { type: 'button', class: 'link', onclick: () => show(item) }, item.name)),
            el('td', {}, timeText(item.updatedAt)),
          ),
        ),
      ];
      const more = page.nextCursor === undefined ? null : el('button', { type: 'button', class: 'secondary', onclick: () => void load(page.nextCursor, all) }, 'More');
      replaceChildren(
        list,
        all.length === 0
          ? el('p', { class: 'empty' }, 'No cached resource matches.')
          : el(
              'table',
              { class: 'resources' },
              el('caption', {}, `Cached resources (${all.length}${page.nextCursor === undefined ? '' : '+'})`),
              el('thead', {}, el('tr', {}, ...['Kind', 'Namespace', 'Name', 'Stored'].map((h) => el('th', { scope: 'col' }, h)))),
              el('tbody', {}, ...all),
            ),
        more,
      );
      announce(`${all.length} resources shown`);
    } catch (err) {
      if (!signal.aborted) showProblem(problems, err, form);
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replaceChildren(objectView);
    void load();
  });
  return el('section', { class: 'card', 'aria-labelledby': 'resources-title' }, el('h2', { id: 'resources-title' }, 'Cached resources'), form, problems, list, objectView);
}
