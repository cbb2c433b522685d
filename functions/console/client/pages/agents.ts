import { apiGet, enc, withQuery } from '../api.ts';
import { dataTable, el, navLink, replaceChildren, type Child } from '../dom.ts';
import { sinceText, timeText } from '../format.ts';
import { announce } from '../live.ts';
import { startPolling } from '../poll.ts';
import { showProblem } from '../problem-view.ts';
import { replaceKeepingFocus } from '../refresh-focus.ts';
import { UI_BASE, type PageVisit } from '../router.ts';
import type { AgentJson, AgentPageJson } from '../types.ts';

const REFRESH_MS = 10_000;

function accountsOf(agent: AgentJson): Child {
  if (agent.accounts.length === 0) return el('span', { class: 'muted' }, 'none');
  return el('ul', { class: 'plain' }, ...agent.accounts.map((a) => el('li', {}, navLink(`${UI_BASE}/accounts/${enc(a.name)}`, a.name), a.caching ? el('span', { class: 'badge caching' }, 'caching') : null)));
}

/** Agents and zones (docs/console.md#agents-and-zones): the live agents grouped by zone. */
export async function agentsPage(main: HTMLElement, visit: PageVisit): Promise<void> {
  const problems = el('div', { class: 'problem-slot' });
  const body = el('div', {});
  replaceChildren(main, el('h1', {}, 'Agents and zones'), problems, body);
  let last = '';
  let lastSaid = '';
  const load = async () => {
    try {
      const agents: AgentJson[] = [];
      for (let page = 1; ; page++) {
        const answer = await apiGet<AgentPageJson>(withQuery('/vendor/agents', { page, limit: 500 }), visit.signal);
        agents.push(...answer.items);
        if (agents.length >= answer.total || answer.items.length === 0) break;
      }
      replaceChildren(problems);
      const shown = JSON.stringify(agents);
      if (shown === last) return;
      // Heartbeats change every few seconds: only agents coming and going are read out.
      const said = agents.map((a) => a.agentId).join(',');
      if (last !== '' && said !== lastSaid) announce(`Agents updated: ${agents.length} live`);
      last = shown;
      lastSaid = said;
      const zones = new Map<string, AgentJson[]>();
      for (const a of agents) zones.set(a.zoneId, [...(zones.get(a.zoneId) ?? []), a]);
      replaceKeepingFocus(
        body,
        dataTable('Zones', ['Zone', 'Live agents', 'Accounts held', 'Accounts cached'], [...zones].map(([zone, list]): Child[] => [el('code', {}, zone), list.length, new Set(list.flatMap((a) => a.accounts.map((x) => x.name))).size, list.reduce((n, a) => n + a.caching, 0)])),
        agents.length === 0
          ? el('p', { class: 'empty' }, 'No agent is live.')
          : dataTable('Live agents', ['Agent', 'Zone', 'Identity', 'Version', 'Replica', 'Connected', 'Last heartbeat', 'Accounts'], agents.map((a): Child[] => [navLink(`${UI_BASE}/agents/${enc(a.agentId)}`, a.agentId), el('code', {}, a.zoneId), a.identity ?? '—', a.version, a.replicaId, sinceText(a.connectedAt), sinceText(a.lastHeartbeatAt), accountsOf(a)])),
      );
    } catch (err) {
      if (!visit.signal.aborted) showProblem(problems, err);
    }
  };
  await load();
  const poller = startPolling(load, REFRESH_MS);
  visit.onLeave(() => poller.stop());
}

/** One live agent. */
export async function agentPage(main: HTMLElement, visit: PageVisit): Promise<void> {
  const id = visit.params.id ?? '';
  const problems = el('div', { class: 'problem-slot' });
  replaceChildren(main, el('nav', { 'aria-label': 'Breadcrumb', class: 'crumbs' }, navLink(`${UI_BASE}/agents`, 'Agents and zones'), ' / ', id), el('h1', {}, id), problems);
  try {
    const a = await apiGet<AgentJson>(`/vendor/agents/${enc(id)}`, visit.signal);
    const term = (label: string, value: Child) => [el('dt', {}, label), el('dd', {}, value)];
    main.append(
      el(
        'dl',
        { class: 'facts' },
        ...term('Zone', el('code', {}, a.zoneId)),
        ...term('Identity', a.identity ?? '—'),
        ...term('Version', a.version),
        ...term('Driver replica', a.replicaId),
        ...term('Connected', timeText(a.connectedAt)),
        ...term('Last heartbeat', `${timeText(a.lastHeartbeatAt)} (${sinceText(a.lastHeartbeatAt)})`),
        ...term('Caching', `${a.caching} of ${a.accounts.length} accounts`),
      ),
      el('section', { class: 'card', 'aria-labelledby': 'held-title' }, el('h2', { id: 'held-title' }, 'Accounts held'), accountsOf(a)),
    );
  } catch (err) {
    showProblem(problems, err);
  }
}
