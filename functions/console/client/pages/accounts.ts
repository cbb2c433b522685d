import { apiGet, apiRequest, withQuery } from '../api.ts';
import { el, field, navLink, replaceChildren, type Child } from '../dom.ts';
import { sinceText } from '../format.ts';
import { announce } from '../live.ts';
import { startPolling } from '../poll.ts';
import { clearFieldErrors, showProblem } from '../problem-view.ts';
import { replaceKeepingFocus } from '../refresh-focus.ts';
import { UI_BASE, type PageVisit } from '../router.ts';
import type { AccountSummaryJson, AccountJson, AccountPageJson, CallerJson } from '../types.ts';
import { registerForm } from './register-form.ts';

const STATES = ['ACTIVE', 'INACTIVE', 'FAILED'] as const;
const SOURCES = ['driver', 'static-agent-config'] as const;
const PAGE_SIZES = ['25', '50', '100', '200'];
const REFRESH_MS = 5_000;

export interface AccountsPageDeps {
  caller: CallerJson;
  go(path: string): void;
}

interface Filters {
  namePrefix: string;
  state: string[];
  zoneId: string;
  source: string;
  page: number;
  limit: string;
}

function filtersOf(query: URLSearchParams): Filters {
  const page = Number(query.get('page') ?? '1');
  return {
    namePrefix: query.get('namePrefix') ?? '',
    state: (query.get('state') ?? '').split(',').filter((s) => s !== ''),
    zoneId: query.get('zoneId') ?? '',
    source: query.get('source') ?? '',
    page: Number.isInteger(page) && page > 0 ? page : 1,
    limit: PAGE_SIZES.includes(query.get('limit') ?? '') ? (query.get('limit') as string) : '50',
  };
}

function queryOf(f: Filters): Record<string, string | undefined> {
  return {
    namePrefix: f.namePrefix || undefined,
    state: f.state.length > 0 ? f.state.join(',') : undefined,
    zoneId: f.zoneId || undefined,
    source: f.source || undefined,
    page: f.page > 1 ? String(f.page) : undefined,
    limit: f.limit === '50' ? undefined : f.limit,
  };
}

function summaryView(summary: AccountSummaryJson): HTMLElement {
  const count = (label: string, n: number, cls = '') => el('div', { class: `count ${cls}` }, el('span', { class: 'n' }, n), el('span', { class: 'label' }, label));
  const zones = Object.entries(summary.byZone).sort(([a], [b]) => a.localeCompare(b));
  return el(
    'section',
    { class: 'summary', 'aria-labelledby': 'summary-title' },
    el('h2', { id: 'summary-title', class: 'visually-hidden' }, 'Summary'),
    el(
      'div',
      { class: 'counts' },
      count('accounts', summary.total),
      ...STATES.map((s) => count(s.toLowerCase(), summary.byState[s] ?? 0, `state-${s.toLowerCase()}`)),
      count('not migrated', summary.withoutState),
      ...SOURCES.map((s) => count(s, summary.bySource[s] ?? 0)),
    ),
    zones.length === 0 ? null : el('p', { class: 'zones' }, 'Zones: ', ...zones.flatMap(([zone, n], i) => [i === 0 ? '' : ', ', el('code', {}, zone), ` (${n})`]), summary.withoutZone > 0 ? `, no zone (${summary.withoutZone})` : ''),
  );
}

export function stateBadge(state: string | undefined): HTMLElement {
  return el('span', { class: `badge state-${(state ?? 'none').toLowerCase()}` }, state ?? 'not migrated');
}

function agentsCell(account: AccountJson): Child {
  if (account.agents.length === 0) return el('span', { class: 'muted' }, 'none');
  return el('ul', { class: 'plain' }, ...account.agents.map((a) => el('li', {}, navLink(`${UI_BASE}/agents/${encodeURIComponent(a.agentId)}`, a.agentId), a.caching ? el('span', { class: 'badge caching' }, 'caching') : null)));
}

function clusterCell(account: AccountJson): Child {
  if (account.cluster === undefined) return el('span', { class: 'muted' }, '—');
  return account.cluster.reachable
    ? el('span', { class: 'ok' }, 'reachable')
    : el('span', { class: 'bad', title: account.cluster.error }, `${account.cluster.reason ?? 'unreachable'} ${sinceText(account.cluster.since)}`);
}

/** The accounts page (docs/console.md#accounts): filters, summary, the list with paging, live refresh. */
export async function accountsPage(main: HTMLElement, visit: PageVisit, deps: AccountsPageDeps): Promise<void> {
  const filters = filtersOf(visit.query);
  const summarySlot = el('div', { class: 'summary-slot' });
  const listSlot = el('div', { class: 'list-slot' });
  const problems = el('div', { class: 'problem-slot' });
  const actionProblems = el('div', { class: 'problem-slot' });
  const zoneList = el('datalist', { id: 'zone-options' });

  const apply = (changes: Partial<Filters>) => deps.go(withQuery(`${UI_BASE}/`, queryOf({ ...filters, ...changes })));

  const namePrefix = el('input', { name: 'namePrefix', type: 'search', value: filters.namePrefix, autocomplete: 'off' });
  const zoneId = el('input', { name: 'zoneId', type: 'text', value: filters.zoneId, list: 'zone-options', autocomplete: 'off' });
  const source = el('select', { name: 'source' }, el('option', { value: '' }, 'any'), ...SOURCES.map((s) => el('option', { value: s, selected: filters.source === s }, s)));
  const limit = el('select', { name: 'limit' }, ...PAGE_SIZES.map((s) => el('option', { value: s, selected: filters.limit === s }, s)));
  const stateBoxes = STATES.map((s) => el('input', { type: 'checkbox', name: 'state', value: s, checked: filters.state.includes(s), id: `state-${s}` }));
  const filterForm = el(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter accounts' },
    field('Name starts with', namePrefix),
    el(
      'fieldset',
      { class: 'states' },
      el('legend', {}, 'State'),
      ...stateBoxes.map((box) => el('label', { for: box.id, class: 'check' }, box, ` ${box.value}`)),
      el('p', { class: 'field-error', 'data-error-for': 'state', hidden: true }),
    ),
    field('Zone', zoneId),
    field('Source', source),
    field('Per page', limit),
    el('div', { class: 'filter-actions' }, el('button', { type: 'submit' }, 'Apply filters'), navLink(`${UI_BASE}/`, 'Clear')),
    zoneList,
  );
  filterForm.addEventListener('submit', (event) => {
    event.preventDefault();
    apply({
      namePrefix: namePrefix.value.trim(),
      zoneId: zoneId.value.trim(),
      source: source.value,
      limit: limit.value,
      state: stateBoxes.filter((b) => b.checked).map((b) => b.value),
      page: 1,
    });
  });

  const liveToggle = el('input', { type: 'checkbox', id: 'live-refresh', checked: true });
  const refreshedAt = el('span', { class: 'muted', id: 'refreshed-at' });

  let lastShown = '';
  let lastSaid = '';
  const load = async (initial: boolean) => {
    try {
      const [page, summary] = await Promise.all([
        apiGet<AccountPageJson>(withQuery('/vendor/accounts', { ...queryOf(filters), page: String(filters.page), limit: filters.limit }), visit.signal),
        apiGet<AccountSummaryJson>('/vendor/account-summary', visit.signal),
      ]);
      replaceChildren(problems);
      clearFieldErrors(filterForm);
      replaceChildren(zoneList, ...Object.keys(summary.byZone).map((z) => el('option', { value: z })));
      const shown = JSON.stringify([page, summary]);
      refreshedAt.textContent = `Updated ${new Date().toLocaleTimeString()}`;
      if (shown === lastShown) return;
      lastShown = shown;
      replaceKeepingFocus(summarySlot, summaryView(summary));
      replaceKeepingFocus(listSlot, listView(page));
      // Read out what an operator acts on (the accounts and their states), not every report time.
      const said = JSON.stringify([page.total, page.items.map((a) => [a.name, a.state, a.agents.length])]);
      if (initial) announce(`${page.total} accounts`);
      else if (said !== lastSaid) announce(`Accounts updated: ${page.total} accounts`);
      lastSaid = said;
    } catch (err) {
      if (visit.signal.aborted) return;
      showProblem(problems, err, filterForm);
    }
  };

  const rowActions = (account: AccountJson): Child => {
    if (!deps.caller.manager) return null;
    const buttons: HTMLElement[] = [];
    const act = async (label: string, run: () => Promise<unknown>) => {
      try {
        await run();
        replaceChildren(actionProblems);
        announce(`${label}: ${account.name}`);
        await load(false);
      } catch (err) {
        showProblem(actionProblems, err);
        actionProblems.querySelector<HTMLElement>('[role=alert]')?.focus();
      }
    };
    if (account.source === 'driver' && (account.state === 'INACTIVE' || account.state === 'FAILED')) {
      buttons.push(el('button', { type: 'button', 'data-focus-key': `activate:${account.name}`, 'aria-label': `Activate ${account.name}`, onclick: () => act('Activated', () => apiRequest('PATCH', '/vendor/accounts', { body: [{ name: account.name, state: 'ACTIVE' }] })) }, 'Activate'));
    }
    if (account.source === 'driver' && account.state === undefined) {
      buttons.push(el('button', { type: 'button', class: 'secondary', 'data-focus-key': `register:${account.name}`, 'aria-label': `Register ${account.name}`, onclick: () => act('Registered', () => apiRequest('POST', '/vendor/accounts', { body: [{ name: account.name }] })) }, 'Register'));
    }
    if (account.state !== undefined) {
      buttons.push(
        el('button', {
          type: 'button',
          class: 'danger',
          'data-focus-key': `remove:${account.name}`,
          'aria-label': `Remove ${account.name}`,
          onclick: () => {
            if (window.confirm(`Remove the registration of ${account.name}? Its agents drop it.`)) void act('Removed', () => apiRequest('DELETE', `/vendor/accounts/${encodeURIComponent(account.name)}`));
          },
        }, 'Remove'),
      );
    }
    return buttons.length === 0 ? null : el('div', { class: 'row-actions' }, ...buttons);
  };

  const listView = (page: AccountPageJson): HTMLElement => {
    const pages = Math.max(1, Math.ceil(page.total / page.limit));
    const headers = ['Name', 'State', 'Source', 'Zone', 'Agents', 'Cluster', 'Last assignment message'];
    if (deps.caller.manager) headers.push('Actions');
    const rows = page.items.map((a) => {
      const cells: Child[] = [
        navLink(`${UI_BASE}/accounts/${encodeURIComponent(a.name)}`, a.name),
        stateBadge(a.state),
        a.source,
        a.zoneId === undefined ? el('span', { class: 'muted' }, 'any') : el('code', {}, a.zoneId),
        agentsCell(a),
        clusterCell(a),
        a.lastAssignmentMsg === '' ? el('span', { class: 'muted' }, '—') : el('span', { class: 'message' }, a.lastAssignmentMsg),
      ];
      if (deps.caller.manager) cells.push(rowActions(a));
      return cells;
    });
    const pager = el(
      'nav',
      { class: 'pager', 'aria-label': 'Pages of accounts' },
      el('button', { type: 'button', class: 'secondary', disabled: page.page <= 1, 'data-focus-key': 'prev', onclick: () => apply({ page: page.page - 1 }) }, '← Previous'),
      el('span', { id: 'page-status' }, `Page ${page.page} of ${pages} · ${page.total} accounts`),
      el('button', { type: 'button', class: 'secondary', disabled: page.page >= pages, 'data-focus-key': 'next', onclick: () => apply({ page: page.page + 1 }) }, 'Next →'),
    );
    if (page.items.length === 0) return el('div', {}, el('p', { class: 'empty' }, page.total === 0 ? 'No account matches these filters.' : 'This page is past the end.'), pager);
    const table = el('div', { class: 'table-wrap' });
    replaceChildren(table, tableOf(headers, rows));
    return el('div', {}, table, pager);
  };

  replaceChildren(
    main,
    el('div', { class: 'page-head' }, el('h1', {}, 'Accounts'), el('div', { class: 'live-controls' }, el('label', { for: 'live-refresh', class: 'check' }, liveToggle, ' Live refresh'), refreshedAt)),
    summarySlot,
    filterForm,
    problems,
    actionProblems,
    listSlot,
    deps.caller.manager ? registerForm(() => load(false)) : null,
  );
  await load(true);
  const poller = startPolling(() => load(false), REFRESH_MS);
  liveToggle.addEventListener('change', () => poller.setPaused(!liveToggle.checked));
  visit.onLeave(() => poller.stop());
}

function tableOf(headers: string[], rows: Child[][]): HTMLTableElement {
  return el(
    'table',
    { class: 'accounts' },
    el('caption', { class: 'visually-hidden' }, 'Accounts'),
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((cell, i) => (i === 0 ? el('th', { scope: 'row' }, cell) : el('td', {}, cell)))))),
  );
}
