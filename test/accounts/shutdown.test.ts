import { describe, expect, it, vi } from 'vitest';
import type { AccountWorkerFactory } from '../../agent/accounts/account-worker.ts';
import { decoderOf } from '../../agent/resources/decoder.ts';
import { accountsModule } from '../../driver/accounts/module.ts';
import type { DriverModuleFactory } from '../../driver/handlers.ts';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();

describe('an agent stopping', () => {
  it('stops its workers first, delivers what they sent while stopping, then closes the stream', async () => {
    const events: string[] = [];
    // A worker whose stop sends a last reliable message, as the operations worker sends a last result.
    const lastWords: AccountWorkerFactory = (account, host) => ({
      update: () => undefined,
      stop: async () => {
        events.push(`worker of ${account.name} stopping`);
        void host.respond({ kind: 'operationResult', body: { operationId: 'op-1', account: account.name, attempt: 1 } });
      },
    });
    // The driver side: a module that takes operation results (in place of the operations module) and notes when each stream ends.
    const recorder: DriverModuleFactory = () => ({
      name: 'recorder',
      handlers: { operationResult: ({ body }, session) => void events.push(`driver got ${body.operationId} from ${session.agentId}`) },
      onSessionClose: (session) => void events.push(`stream of ${session.agentId} ended`),
    });
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver({ base: [accountsModule], modules: [recorder] });
    const agent = await world.agent('a1', { target: `127.0.0.1:${driver.port}`, workers: [lastWords] });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    await vi.waitFor(() => expect(agent.holder().view('prod')).toBeDefined(), WAIT);

    await agent.stop();
    await vi.waitFor(() => expect(events).toContain('stream of a1 ended'), WAIT);
    expect(events).toEqual(['worker of prod stopping', 'driver got op-1 from a1', 'stream of a1 ended']);
    expect(agent.logs().some((l) => l['msg'] === 'agent stopped')).toBe(true);
  });

  it('ends the decoding threads its caches shared', async () => {
    world.kube.store.ensureNamespace('shop');
    world.kube.store.upsert({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'shop' }, data: { a: '1' } });
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    const agent = await world.agent('a1', { target: `127.0.0.1:${driver.port}` });
    // Made before any account is held, so the caches decode in one thread however many CPUs there are.
    const decoder = decoderOf(agent.running.ctx, 1);
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    await vi.waitFor(async () => {
      const page = await world.call('GET', '/vendor/accounts/prod/resources?kind=configmap&namespace=shop');
      expect(page.json['items']).toEqual([expect.objectContaining({ name: 'settings' })]);
    }, WAIT);

    await agent.stop();
    await expect(decoder.list('{"items":[]}', { kind: 'ConfigMap', group: '', apiVersion: 'v1' })).rejects.toThrow('the decoder is closed');
  });
});
