/**
 * Two accounts' batchers on one real connection to a real driver, whose cache handler finishes one
 * account's batches only when told: the other account's batches keep going past its window of
 * unacknowledged batches, because the driver acknowledges them ahead of the waiting one
 * (docs/protocol.md section 3, rule 4; docs/cache.md#the-drivers-side).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DriverModuleFactory } from '../../driver/handlers.ts';
import type { ResourceChange__Output, ResourceScope__Output } from '../../shared/protocol/messages.ts';
import { Harness, plain } from '../../test/connection-harness.ts';
import type { WorkerHost } from '../accounts/account-worker.ts';
import { Batcher } from './batcher.ts';

const WAIT = { timeout: 10_000, interval: 20 };
const h = new Harness();
afterEach(() => h.cleanup());

const scope: ResourceScope__Output = { group: '', kind: 'ConfigMap', namespace: 'default', synthetic: false };
const change = (name: string): ResourceChange__Output => ({
  group: '',
  kind: 'ConfigMap',
  namespace: 'default',
  name,
  resourceVersion: name,
  deleted: false,
  object: JSON.stringify({ metadata: { name } }),
});

describe('the batchers of several accounts on one stream', () => {
  it('keep sending one account\'s batches while another account\'s wait at the driver', async () => {
    let release!: () => void;
    const slowDone = new Promise<void>((r) => (release = r));
    const taken: Record<string, number> = {};
    const gated: DriverModuleFactory = () => ({
      name: 'gated',
      handlers: {
        resourceEvents: ({ body }) => {
          taken[body.account] = (taken[body.account] ?? 0) + body.changes.length;
          return { done: body.account === 'slow' ? slowDone : Promise.resolve() };
        },
      },
    });
    const { driver } = await h.driver({}, { modules: [gated] });
    const agent = h.agent(plain(driver.port));
    await vi.waitFor(() => expect(agent.connection.connected).toBe(true), WAIT);
    const host: WorkerHost = {
      respond: (body) => agent.connection.respond(body),
      notify: (body) => agent.connection.notify(body),
      connected: () => agent.connection.connected,
    };
    const lost: unknown[] = [];
    const batcher = (account: string) => new Batcher({ account, cachingEpoch: 1, host, maxChanges: 1, window: 4, onLost: (e) => lost.push(e) });
    const slow = batcher('slow');
    const quick = batcher('quick');
    await slow.change(change('s1'), scope, 1);
    await vi.waitFor(() => expect(taken['slow']).toBe(1), WAIT);
    // Five windows' worth: with the cumulative acknowledgement alone, quick would stop after two (4 in
    // flight, 4 sealed), its `change()` waiting for slow.
    const count = 20;
    for (let i = 1; i <= count; i++) await quick.change(change(`q${i}`), scope, i);
    await quick.drained();
    expect(taken['quick']).toBe(count);
    expect(slow.backlog).toBe(1);
    release();
    await slow.drained();
    expect(slow.backlog).toBe(0);
    expect(lost).toEqual([]);
  });
});
