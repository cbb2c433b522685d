import { describe, expect, it } from 'vitest';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import { staticAccountsForHello, type AgentAccountConfig } from './hello.ts';

describe('staticAccountsForHello', () => {
  it('carries names and non-secret settings, and leaves kubeconfig paths on the agent', () => {
    const account = {
      name: 'prod',
      kubeConfigFile: 'encryptedFile:vault/prod-kubeconfig',
      context: 'prod-admin',
      namespaces: ['web', 'api'],
      customResourceDefinitions: [{ kind: 'Rollout.argoproj.io' }],
      permissions: [{ READ: ['dev', 'ops'] }, { WRITE: ['ops'] }],
      metrics: true,
    } satisfies AgentAccountConfig & { kubeConfigFile: string };
    const [hello] = staticAccountsForHello([account, { name: 'staging', serviceAccount: true }]);
    expect(hello).toMatchObject({
      name: 'prod',
      settings: {
        context: 'prod-admin',
        namespaces: ['web', 'api'],
        customResourceDefinitions: [{ kind: 'Rollout.argoproj.io', scope: 'Namespaced' }],
        permissions: { read: ['dev', 'ops'], write: ['ops'] },
        metrics: true,
      },
    });
    const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
    const wire = connect.requestSerialize({ hello: { staticAccounts: staticAccountsForHello([account]) } });
    expect(wire.toString('latin1')).not.toContain('vault/prod-kubeconfig');
  });
});
