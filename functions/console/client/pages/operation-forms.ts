import { apiRequest, enc, NetworkFailure } from '../api.ts';
import { el, field, replaceChildren } from '../dom.ts';
import { announce } from '../live.ts';
import { clearFieldErrors, showProblem } from '../problem-view.ts';
import type { OperationJson } from '../types.ts';
import { operationDetails } from './operation-view.ts';

type ActionName = 'deploy' | 'delete' | 'scale' | 'rolloutRestart' | 'rolloutUndo';

const ACTIONS: { value: ActionName; label: string }[] = [
  { value: 'deploy', label: 'Deploy manifests' },
  { value: 'delete', label: 'Delete an object' },
  { value: 'scale', label: 'Scale' },
  { value: 'rolloutRestart', label: 'Rollout restart' },
  { value: 'rolloutUndo', label: 'Rollout undo' },
];

/** How long one POST waits for the operation to finish (`?wait`, at most 60). */
const WAIT_SECONDS = 30;

/** A fresh Idempotency-Key for one operation the page sends; kept for retries of that same request. */
function newIdempotencyKey(): string {
  return `console-${crypto.randomUUID()}`;
}

/**
 * The operations a WRITE holder may run on an account (docs/operations.md), each sent with an
 * Idempotency-Key the page makes: a retry after a network failure sends the same key, so the operation
 * runs once; the key changes once the API has answered.
 */
export function operationForms(account: string, onFinished: () => void): HTMLElement {
  const action = el('select', { name: 'action' }, ...ACTIONS.map((a) => el('option', { value: a.value }, a.label)));
  const manifests = el('textarea', { name: 'manifests', rows: 10, spellcheck: 'false', placeholder: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: example\ndata:\n  key: value' });
  const namespace = el('input', { name: 'namespace', type: 'text', autocomplete: 'off' });
  const apiVersion = el('input', { name: 'apiVersion', type: 'text', value: 'apps/v1', autocomplete: 'off' });
  const kind = el('input', { name: 'kind', type: 'text', value: 'Deployment', autocomplete: 'off' });
  const name = el('input', { name: 'name', type: 'text', autocomplete: 'off' });
  const replicas = el('input', { name: 'replicas', type: 'number', min: 0, max: 1000000, value: 1 });
  const toRevision = el('input', { name: 'toRevision', type: 'number', min: 0, value: 0 });
  const problems = el('div', { class: 'problem-slot' });
  const result = el('div', { class: 'result-slot', 'aria-live': 'polite' });
  const keyText = el('code', { id: 'idempotency-key' });
  let key = newIdempotencyKey();
  keyText.textContent = key;

  const groups: Record<string, HTMLElement> = {
    manifests: field('Manifests (YAML)', manifests, 'One or more documents separated by ---.'),
    namespace: field('Namespace', namespace, 'Deploy: applied to every namespaced manifest. Otherwise: the object’s namespace.'),
    apiVersion: field('API version', apiVersion),
    kind: field('Kind', kind),
    name: field('Name', name),
    replicas: field('Replicas', replicas),
    toRevision: field('To revision', toRevision, '0: the revision before the current one.'),
  };
  const shownFor: Record<ActionName, string[]> = {
    deploy: ['manifests', 'namespace'],
    delete: ['apiVersion', 'kind', 'namespace', 'name'],
    scale: ['apiVersion', 'kind', 'namespace', 'name', 'replicas'],
    rolloutRestart: ['apiVersion', 'kind', 'namespace', 'name'],
    rolloutUndo: ['namespace', 'name', 'toRevision'],
  };
  const showFields = () => {
    const shown = shownFor[action.value as ActionName];
    for (const [groupName, group] of Object.entries(groups)) group.hidden = !shown.includes(groupName);
  };
  action.addEventListener('change', showFields);

  const target = () => ({ apiVersion: apiVersion.value.trim(), kind: kind.value.trim(), ...(namespace.value.trim() === '' ? {} : { namespace: namespace.value.trim() }), name: name.value.trim() });
  const requestBody = (): Record<string, unknown> => {
    switch (action.value as ActionName) {
      case 'deploy':
        return { action: 'deploy', manifests: manifests.value, ...(namespace.value.trim() === '' ? {} : { namespace: namespace.value.trim() }) };
      case 'delete':
        return { action: 'delete', targets: [target()] };
      case 'scale':
        return { action: 'scale', targets: [target()], replicas: Number(replicas.value) };
      case 'rolloutRestart':
        return { action: 'rolloutRestart', targets: [target()] };
      case 'rolloutUndo':
        return { action: 'rolloutUndo', target: { apiVersion: 'apps/v1', kind: 'Deployment', ...(namespace.value.trim() === '' ? {} : { namespace: namespace.value.trim() }), name: name.value.trim() }, ...(Number(toRevision.value) > 0 ? { toRevision: Number(toRevision.value) } : {}) };
    }
  };

  const submit = el('button', { type: 'submit' }, 'Run');
  const form = el(
    'form',
    { class: 'card operations-form', 'aria-labelledby': 'run-title', novalidate: true },
    el('h2', { id: 'run-title' }, 'Run an operation'),
    field('Action', action),
    ...Object.values(groups),
    el('p', { class: 'hint' }, 'Idempotency-Key: ', keyText),
    problems,
    submit,
    result,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    replaceChildren(problems);
    replaceChildren(result, el('p', { class: 'muted' }, 'Sending…'));
    submit.disabled = true;
    try {
      const op = await apiRequest<OperationJson>('POST', `/vendor/accounts/${enc(account)}/operations?wait=${WAIT_SECONDS}`, { body: requestBody(), headers: { 'Idempotency-Key': key } });
      key = newIdempotencyKey();
      keyText.textContent = key;
      replaceChildren(result, el('h3', {}, 'Result'), operationDetails(op, { link: true }));
      announce(`Operation ${op.action}: ${op.state}`);
      onFinished();
    } catch (err) {
      replaceChildren(result);
      showProblem(problems, err, form);
      // The API answered: the same key would now be refused for a changed request, so take a new one.
      if (!(err instanceof NetworkFailure)) {
        key = newIdempotencyKey();
        keyText.textContent = key;
      }
      problems.querySelector<HTMLElement>('[role=alert]')?.setAttribute('tabindex', '-1');
      problems.querySelector<HTMLElement>('[role=alert]')?.focus();
    } finally {
      submit.disabled = false;
    }
  });
  showFields();
  return form;
}
