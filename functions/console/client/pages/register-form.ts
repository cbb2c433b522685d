import { apiRequest } from '../api.ts';
import { el, field, replaceChildren } from '../dom.ts';
import { announce } from '../live.ts';
import { clearFieldErrors, showProblem } from '../problem-view.ts';
import type { AccountJson } from '../types.ts';

/** Registers a driver-defined account (POST /vendor/accounts), for account managers; each field error shows beside its field. */
export function registerForm(onRegistered: () => Promise<void>): HTMLElement {
  const name = el('input', { name: 'name', type: 'text', required: true, autocomplete: 'off' });
  const zoneId = el('input', { name: 'zoneId', type: 'text', autocomplete: 'off', list: 'zone-options' });
  const kubeconfigFile = el('input', { name: 'kubeconfigFile', type: 'text', autocomplete: 'off' });
  const activate = el('input', { type: 'checkbox', name: 'activate', id: 'register-activate' });
  const problems = el('div', { class: 'problem-slot' });
  const result = el('div', { class: 'result-slot' });
  const form = el(
    'form',
    { class: 'card register', 'aria-labelledby': 'register-title', novalidate: true },
    el('h2', { id: 'register-title' }, 'Register an account'),
    el('p', { class: 'hint' }, 'Registers a driver-defined account for migration to the agents (INACTIVE), and activates it when asked.'),
    field('Account name', name),
    field('Zone', zoneId, 'The zone of the agents that are to hold it (<deployment>_<namespace>); empty for any agent.'),
    field('Kubeconfig reference', kubeconfigFile, 'A file path or a secret reference on the agents, never the kubeconfig itself.'),
    el('label', { for: 'register-activate', class: 'check' }, activate, ' Activate it at once'),
    problems,
    el('button', { type: 'submit' }, 'Register'),
    result,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearFieldErrors(form);
    replaceChildren(problems);
    const record: Record<string, string> = { name: name.value.trim() };
    if (zoneId.value.trim() !== '') record.zoneId = zoneId.value.trim();
    if (kubeconfigFile.value.trim() !== '') record.kubeconfigFile = kubeconfigFile.value.trim();
    try {
      let [account] = await apiRequest<AccountJson[]>('POST', '/vendor/accounts', { body: [record] });
      if (activate.checked) [account] = await apiRequest<AccountJson[]>('PATCH', '/vendor/accounts', { body: [{ name: record.name, state: 'ACTIVE' }] });
      const message = `${account?.name ?? record.name} is ${account?.state ?? 'registered'}`;
      replaceChildren(result, el('p', { class: 'success' }, message));
      announce(message);
      await onRegistered();
    } catch (err) {
      showProblem(problems, err, form);
      (form.querySelector<HTMLElement>('[aria-invalid]') ?? name).focus();
    }
  });
  return form;
}
