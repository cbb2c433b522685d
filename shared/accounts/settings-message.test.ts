import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { accountSettingsMessage, DEFAULT_SETTINGS_MESSAGE, staticAccountSettings } from './settings-message.ts';
import { accountSettingsSchema } from './settings.ts';

describe('account settings in the protocol', () => {
  it('sends a key left out at its default, and 0 for maxResumableResourceAgeMs (the wire form of the default)', () => {
    expect(accountSettingsMessage({})).toEqual(DEFAULT_SETTINGS_MESSAGE);
    expect(DEFAULT_SETTINGS_MESSAGE).toMatchObject({ context: '', serviceAccount: false, maxResumableResourceAgeMs: 0, permissions: { read: [], write: [] } });
    expect(accountSettingsMessage({ customResourceDefinitions: [{ kind: 'Rollout.argoproj.io' }] }).customResourceDefinitions).toEqual([
      { kind: 'Rollout.argoproj.io', scope: 'Namespaced' },
    ]);
  });

  it('merges permission entries into one READ and one WRITE list', () => {
    const message = accountSettingsMessage({ permissions: [{ READ: ['dev'] }, { READ: ['ops'], WRITE: ['ops'] }] });
    expect(message.permissions).toEqual({ read: ['dev', 'ops'], write: ['ops'] });
  });

  it('reads a static account back with the defaults left out, an empty CRD scope as Namespaced', () => {
    const settings = { ...DEFAULT_SETTINGS_MESSAGE, namespaces: ['shop'], customResourceDefinitions: [{ kind: 'Rollout.argoproj.io', scope: '' }], maxResumableResourceAgeMs: 60_000 };
    const read = staticAccountSettings({ name: 'prod', settings });
    expect(read).toEqual({ name: 'prod', namespaces: ['shop'], customResourceDefinitions: [{ kind: 'Rollout.argoproj.io', scope: 'Namespaced' }], maxResumableResourceAgeMs: 60_000 });
    expect(v.safeParse(accountSettingsSchema, read).success).toBe(true);
    expect(staticAccountSettings({ name: 'bare', settings: null })).toEqual({ name: 'bare' });
  });

  it('never carries a kubeconfig', () => {
    const message = accountSettingsMessage({ kubeconfigFile: '/etc/kube/prod', serviceAccount: false } as Parameters<typeof accountSettingsMessage>[0]);
    expect(JSON.stringify(message)).not.toContain('/etc/kube/prod');
  });
});
