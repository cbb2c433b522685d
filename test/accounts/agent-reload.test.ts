import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { parseDriverGrpcConfig } from '../../driver/config.ts';
import { DRIVER_MODULES } from '../../driver/modules.ts';
import { startDriver } from '../../driver/server.ts';
import { AGENT_TOKEN, FAST_ASSIGNMENT, WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();

describe('reloading vendor-agent.yml with the agent connected', () => {
  it('static accounts added, changed and removed follow the file, and the others keep running untouched', async () => {
    await world.fresh([]);
    // Leases and grace as long as in production: on a loaded machine the test world's 5 s lease can
    // lapse, and an agent gone past the grace loses its static accounts, which is another test.
    const driver = await startDriver({
      config: parseDriverGrpcConfig({
        grpc: { host: '127.0.0.1', port: 0 },
        auth: { tokens: [AGENT_TOKEN] },
        assignment: { ...FAST_ASSIGNMENT, handoverGraceMs: 10_000 },
      }),
      table: world.table,
      log: world.driverLogs.log,
      modules: DRIVER_MODULES,
    });
    const target = `127.0.0.1:${driver.port}`;
    // Each kubeconfig written once: rewriting a file the agent may be reading would be a test of its own.
    const files = new Map(['keep', 'change', 'drop', 'add'].map((n) => [n, world.kubeconfig(n)]));
    const account = (name: string, extra: Record<string, unknown> = {}) => ({ name, kubeConfigFile: files.get(name), ...extra });
    const agent = await world.agent('r1', { target, accounts: [account('keep'), account('change'), account('drop')] });
    try {
      const holder = () => agent.holder();
      await vi.waitFor(() => expect(['keep', 'change', 'drop'].map((n) => holder().view(n) !== undefined)).toEqual([true, true, true]), WAIT);
      const kept = holder().view('keep');

      // The same file as the test world writes, with the accounts edited.
      writeFileSync(
        join(world.dir, 'r1.yml'),
        stringify({
          driver: { grpc: target, insecure: true, auth: { token: AGENT_TOKEN } },
          kubernetes: { reconnectTimeoutMs: 50, retries: { enabled: false }, accounts: [account('keep'), account('change', { namespaces: ['team-a'] }), account('add')] },
          logging: { format: 'json', file: join(world.dir, 'r1.log'), level: 'debug' },
        }),
      );
      expect(await agent.running.reloader.reload('request')).toBe('applied');

      await vi.waitFor(() => expect(holder().view('add')).toBeDefined(), WAIT);
      await vi.waitFor(() => expect(holder().view('change')?.settings.namespaces).toEqual(['team-a']), WAIT);
      expect(holder().view('drop')).toBeUndefined();
      // The unchanged account was neither dropped nor connected again: the same cluster client, the same generation.
      expect(holder().view('keep')?.cluster).toBe(kept?.cluster);
      expect(holder().view('keep')?.generation).toBe(kept?.generation);
      expect(agent.logs().filter((l) => l['account'] === 'keep' && /account (held|no longer held)/.test(String(l['msg'])))).toHaveLength(1);

      // The control plane follows: the removed account goes, the new and the changed ones are held by r1.
      await vi.waitFor(async () => expect((await world.call('GET', '/vendor/accounts/drop')).status).toBe(404), WAIT);
      await vi.waitFor(async () => expect((await world.account('add')).agents).toEqual([{ agentId: 'r1', caching: true }]), WAIT);
      expect(await world.account('change')).toMatchObject({ config: { namespaces: ['team-a'] }, agents: [{ agentId: 'r1', caching: true }] });
    } finally {
      await agent.stop();
      await driver.close(100);
    }
  });

  it('narrowing kubernetes.assignedAccounts drops a held driver-assigned account it no longer allows, and the driver is told', async () => {
    await world.fresh([{ name: 'assigned' }]);
    const driver = await world.driver();
    const target = `127.0.0.1:${driver.port}`;
    const agent = await world.agent('r2', { target });
    try {
      await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
      await world.activate('assigned');
      await vi.waitFor(async () => expect(await world.account('assigned')).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: 'r2' }] }), WAIT);

      writeFileSync(
        join(world.dir, 'r2.yml'),
        stringify({
          driver: { grpc: target, insecure: true, auth: { token: AGENT_TOKEN } },
          kubernetes: { reconnectTimeoutMs: 50, retries: { enabled: false }, assignedAccounts: { kubeconfigDirs: [join(world.dir, 'elsewhere')] }, accounts: [] },
          logging: { format: 'json', file: join(world.dir, 'r2.log'), level: 'debug' },
        }),
      );
      expect(await agent.running.reloader.reload('request')).toBe('applied');
      await vi.waitFor(() => expect(agent.holder().view('assigned')).toBeUndefined(), WAIT);
      await vi.waitFor(
        async () =>
          expect(await world.account('assigned')).toMatchObject({
            state: 'FAILED',
            lastAssignmentMsg: "the kubeconfig reference is not allowed or not usable on agent r2; see the agent's log",
          }),
        WAIT,
      );
    } finally {
      await agent.stop();
    }
  });
});
