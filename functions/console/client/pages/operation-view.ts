import { el, navLink } from '../dom.ts';
import { timeText } from '../format.ts';
import { UI_BASE } from '../router.ts';
import type { OperationJson } from '../types.ts';

export function operationStateBadge(state: string): HTMLElement {
  return el('span', { class: `badge op-${state.toLowerCase()}` }, state);
}

/** An operation's status and its result per manifest. */
export function operationDetails(op: OperationJson, options: { link?: boolean } = {}): HTMLElement {
  const term = (label: string, value: Node | string | number | undefined) => (value === undefined ? [] : [el('dt', {}, label), el('dd', {}, value)]);
  return el(
    'div',
    { class: 'operation', 'data-operation-id': op.id },
    el(
      'dl',
      { class: 'facts' },
      ...term('State', operationStateBadge(op.state)),
      ...term('Operation', options.link ? navLink(`${UI_BASE}/operations/${encodeURIComponent(op.id)}`, op.id) : el('code', {}, op.id)),
      ...term('Account', navLink(`${UI_BASE}/accounts/${encodeURIComponent(op.account)}`, op.account)),
      ...term('Action', op.action),
      ...term('Objects', op.objects),
      ...term('Error code', op.errorCode === undefined ? undefined : el('code', {}, op.errorCode)),
      ...term('Message', op.message),
      ...term('Idempotency-Key', el('code', {}, op.idempotencyKey)),
      ...term('Agent', op.agentId),
      ...term('Attempts', op.attempts),
      ...term('Created', timeText(op.createdAt)),
      ...term('Finished', op.finishedAt === undefined ? undefined : timeText(op.finishedAt)),
    ),
    op.outcomes.length === 0
      ? el('p', { class: 'muted' }, 'No result per manifest yet.')
      : el(
          'table',
          { class: 'outcomes' },
          el('caption', {}, 'Result per manifest'),
          el('thead', {}, el('tr', {}, ...['#', 'Kind', 'Namespace', 'Name', 'Result', 'Code', 'Message'].map((h) => el('th', { scope: 'col' }, h)))),
          el(
            'tbody',
            {},
            ...op.outcomes.map((o) =>
              el(
                'tr',
                { class: o.result === 'failed' ? 'failed' : undefined },
                el('td', {}, o.index),
                el('td', {}, `${o.kind} (${o.apiVersion})`),
                el('td', {}, o.namespace ?? '—'),
                el('td', {}, o.name),
                el('td', {}, o.result),
                el('td', {}, o.code ?? '—'),
                el('td', {}, [o.reason, o.message].filter(Boolean).join(': ') || '—'),
              ),
            ),
          ),
        ),
  );
}
