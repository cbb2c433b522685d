import { describe, expect, it } from 'vitest';
import type { AccountRecord } from './model.ts';
import { toAccount } from './view.ts';

const base: AccountRecord = {
  name: 'prod',
  version: 3,
  generation: 2,
  defs: { 'driver-config': { kind: 'driver-config', settings: { kubeconfigFile: '/native.yml', context: 'c' }, at: 1 } },
  agents: {},
  updatedAt: 1,
};

describe('toAccount', () => {
  it('puts the registered kubeconfig reference and zone over the native definition', () => {
    const account = toAccount({ ...base, registration: { zoneId: 'z', kubeconfigFile: 'encrypted:vault!k:x', at: 1 }, state: 'INACTIVE' });
    expect(account).toEqual({
      name: 'prod',
      type: 'kubernetes',
      source: 'driver',
      config: { kubeconfigFile: 'encrypted:vault!k:x', context: 'c' },
      zoneId: 'z',
      agents: [],
      lastAssignmentMsg: '',
      state: 'INACTIVE',
    });
  });

  it('never serves back kubeconfig contents stored before references were checked', () => {
    const contents = 'apiVersion: v1\nusers:\n- user:\n    token: stored-token-3c1d\n';
    const account = toAccount({ ...base, registration: { kubeconfigFile: contents, at: 1 }, state: 'INACTIVE' });
    expect(account.config).toEqual({ kubeconfigFile: '(kubeconfig contents, not shown)', context: 'c' });
    const native = toAccount({ ...base, defs: { 'driver-config': { kind: 'driver-config', settings: { kubeconfigFile: '{"token":"stored-token-3c1d"}' }, at: 1 } } });
    expect(JSON.stringify(native)).not.toContain('stored-token-3c1d');
    const long = `/k/${'x'.repeat(5000)}`;
    expect(toAccount({ ...base, registration: { kubeconfigFile: long, at: 1 }, state: 'INACTIVE' }).config.kubeconfigFile).toBe('(kubeconfig contents, not shown)');
    expect(toAccount({ ...base, registration: { kubeconfigFile: '/k/prod', at: 1 }, state: 'INACTIVE' }).config.kubeconfigFile).toBe('/k/prod');
  });

  it('serves only agents that confirmed the account, sorted by agentId', () => {
    const account = toAccount({
      ...base,
      agents: {
        b: { agentId: 'b', caching: false, ok: true, at: 1 },
        c: { agentId: 'c', caching: false, ok: false, message: 'no route to cluster', at: 1 },
        a: { agentId: 'a', caching: true, ok: true, at: 1 },
      },
      lastAssignmentMsg: 'agent c: no route to cluster',
    });
    expect(account.agents).toEqual([
      { agentId: 'a', caching: true },
      { agentId: 'b', caching: false },
    ]);
    expect(account.lastAssignmentMsg).toBe('agent c: no route to cluster');
  });

  it('a winning static definition shows its agent zone, not the registration', () => {
    const account = toAccount({
      ...base,
      defs: { ...base.defs, 'agent:a1': { kind: 'static-agent-config', agentId: 'a1', zoneId: 'agent-zone', settings: { serviceAccount: true }, at: 2 } },
      registration: { zoneId: 'registered-zone', kubeconfigFile: '/r.yml', at: 1 },
    });
    expect(account).toMatchObject({ source: 'static-agent-config', zoneId: 'agent-zone', config: { serviceAccount: true } });
  });

  it('flags an account whose role names contain whitespace (docs/agent-config.md#permissions)', () => {
    const spaced = toAccount({
      ...base,
      defs: { 'driver-config': { kind: 'driver-config', settings: { permissions: [{ READ: ['dev'] }, { WRITE: ['release team'] }] }, at: 1 } },
    });
    expect(spaced.permissionsIgnored).toBe(true);
    expect(spaced.permissionsIgnoredReason).toContain('"release team"');
    expect(spaced.config).toEqual({ permissions: [{ READ: ['dev'] }, { WRITE: ['release team'] }] });
    const plain = toAccount({ ...base, defs: { 'driver-config': { kind: 'driver-config', settings: { permissions: [{ READ: ['dev'] }] }, at: 1 } } });
    expect(plain).not.toHaveProperty('permissionsIgnored');
    expect(plain).not.toHaveProperty('permissionsIgnoredReason');
  });
});
