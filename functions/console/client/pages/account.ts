import { apiGet, enc, withQuery } from '../api.ts';
import { fetchCaller, mayWrite } from '../caller.ts';
import { dataTable, el, navLink, replaceChildren, type Child } from '../dom.ts';
import { ageText, jsonText, sinceText, timeText, watchText } from '../format.ts';
import { problemBlock, showProblem } from '../problem-view.ts';
import { UI_BASE, type PageVisit } from '../router.ts';
import type { AccountJson, AccountOperationPageJson, CacheHealthJson, CacheKindJson, MetricsJson } from '../types.ts';
import { stateBadge } from './accounts.ts';
import { operationForms } from './operation-forms.ts';
import { operationStateBadge } from './operation-view.ts';
import { resourcesBrowser } from './resources-browser.ts';

function section(id: string, title: string, ...children: Child[]): HTMLElement {
  return el('section', { class: 'card', 'aria-labelledby': id }, el('h2', { id }, title), ...children);
}

function watchCell(kind: CacheKindJson): HTMLElement {
  const { text, complete } = watchText(kind);
  return el('span', { class: complete ? 'ok' : 'bad' }, text);
}

function cacheSection(health: CacheHealthJson | undefined, err: unknown): HTMLElement {
  if (health === undefined) return section('cache-title', 'Cache health', problemBlock(err));
  const rows = health.kinds.map((k): Child[] => [
    k.group === '' ? k.kind : `${k.kind}.${k.group}`,
    watchCell(k),
    k.objects,
    ageText(k.lastEventAgeMs),
    k.relists,
    k.lastError === null ? (k.lastErrorAgeMs === null ? '—' : `none now (last ${ageText(k.lastErrorAgeMs)})`) : el('span', { class: 'bad' }, `${k.lastError} (${ageText(k.lastErrorAgeMs)})`),
  ]);
  return section(
    'cache-title',
    'Cache health',
    el('p', { class: 'muted' }, health.cachingAgentId === null ? 'No caching agent has reported yet.' : `Caching agent ${health.cachingAgentId}, reported ${sinceText(health.reportedAt)}.`),
    rows.length === 0 ? null : dataTable('Cache health per kind', ['Kind', 'Watch', 'Objects', 'Last event', 'Relists', 'Error'], rows, { captionHidden: true }),
  );
}

function metricsSection(metrics: MetricsJson | undefined): HTMLElement | null {
  if (metrics === undefined) return null;
  const rows = metrics.pods.flatMap((p) => p.containers.map((c): Child[] => [`${p.namespace}/${p.name}`, c.name, c.cpu, c.memory, timeText(p.timestamp)]));
  return section('metrics-title', 'Pod metrics', rows.length === 0 ? el('p', { class: 'muted' }, 'No pod metrics stored yet.') : dataTable('Pod metrics', ['Pod', 'Container', 'CPU', 'Memory', 'At'], rows, { captionHidden: true }));
}

async function operationsSection(account: string, signal: AbortSignal): Promise<HTMLElement> {
  try {
    const page = await apiGet<AccountOperationPageJson>(withQuery(`/vendor/accounts/${enc(account)}/operations`, { limit: 20 }), signal);
    const rows = page.items.map((op): Child[] => [navLink(`${UI_BASE}/operations/${enc(op.id)}`, timeText(op.createdAt)), op.action, operationStateBadge(op.state), op.objects, op.errorCode ?? '—', op.message ?? '—']);
    return section('operations-title', 'Operations', rows.length === 0 ? el('p', { class: 'muted' }, 'No operation yet.') : dataTable('Latest operations', ['Created', 'Action', 'State', 'Objects', 'Error', 'Message'], rows, { captionHidden: true }));
  } catch (err) {
    return section('operations-title', 'Operations', problemBlock(err));
  }
}

function detailsSection(account: AccountJson): HTMLElement {
  const term = (label: string, value: Child) => [el('dt', {}, label), el('dd', {}, value)];
  return el(
    'dl',
    { class: 'facts' },
    ...term('State', stateBadge(account.state)),
    ...term('Source', account.source),
    ...term('Zone', account.zoneId ?? 'any'),
    ...term('Agents', account.agents.length === 0 ? 'none' : el('span', {}, ...account.agents.flatMap((a, i) => [i === 0 ? '' : ', ', navLink(`${UI_BASE}/agents/${enc(a.agentId)}`, a.agentId), a.caching ? ' (caching)' : '']))),
    ...term('Cluster', account.cluster === undefined ? '—' : account.cluster.reachable ? `reachable since ${timeText(account.cluster.since)}` : `${account.cluster.reason ?? 'unreachable'} since ${timeText(account.cluster.since)}: ${account.cluster.error ?? ''}`),
    ...term('Last assignment message', account.lastAssignmentMsg === '' ? '—' : account.lastAssignmentMsg),
    ...(account.permissionsIgnored ? term('Permissions', el('span', { class: 'bad' }, `not applied: ${account.permissionsIgnoredReason ?? ''}`)) : []),
  );
}

/** One account (docs/console.md#one-account): its settings, cache, resources, metrics, operations and actions. */
export async function accountPage(main: HTMLElement, visit: PageVisit): Promise<void> {
  const name = visit.params.name ?? '';
  const problems = el('div', { class: 'problem-slot' });
  replaceChildren(main, el('nav', { 'aria-label': 'Breadcrumb', class: 'crumbs' }, navLink(`${UI_BASE}/`, 'Accounts'), ' / ', name), el('h1', {}, name), problems);
  let account: AccountJson;
  try {
    account = await apiGet<AccountJson>(`/vendor/accounts/${enc(name)}`, visit.signal);
  } catch (err) {
    showProblem(problems, err);
    return;
  }
  const base = `/vendor/accounts/${enc(name)}`;
  const [caller, health, metrics, operations] = await Promise.all([
    fetchCaller([name], visit.signal).catch(() => undefined),
    apiGet<CacheHealthJson>(`${base}/cache`, visit.signal).then((h) => ({ h }), (e: unknown) => ({ e })),
    account.config.metrics === true ? apiGet<MetricsJson>(`${base}/metrics`, visit.signal).catch(() => undefined) : Promise.resolve(undefined),
    operationsSection(name, visit.signal),
  ]);
  const kinds = 'h' in health ? health.h.kinds : [];
  const operationsSlot = el('div', {}, operations);
  const refreshOperations = () => void operationsSection(name, visit.signal).then((s) => replaceChildren(operationsSlot, s));
  main.append(
    detailsSection(account),
    caller !== undefined && mayWrite(caller, name) ? operationForms(name, refreshOperations) : '',
    cacheSection('h' in health ? health.h : undefined, 'e' in health ? health.e : undefined),
    resourcesBrowser(name, kinds, visit.signal),
    metricsSection(metrics) ?? '',
    operationsSlot,
    section('settings-title', 'Settings as served', el('pre', { class: 'object', tabindex: 0, 'aria-label': 'The account definition’s settings' }, jsonText(account.config))),
  );
}
