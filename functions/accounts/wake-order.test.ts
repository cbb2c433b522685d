/**
 * The API's part of an activation's path (docs/api.md#semantics-of-the-writes): the wake goes as soon
 * as the account and its feed entry are in the table, before the facet index follows the account, and
 * the index still follows it before the request answers. Dynalite, the app through `app.request()`.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../app.ts';
import { WakeSender } from '../wake/sender.ts';
import type { WakeTarget } from '../wake/target.ts';
import { silentLogger } from '../../shared/log.ts';
import { changesSince, cursorAt } from '../../shared/table/accounts/feed.ts';
import { facetCounts, facetTag } from '../../shared/table/accounts/facets.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { putSession } from '../../shared/table/agents/sessions.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import type { WakeName, WakeTopic } from '../../shared/wake/message.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { TEST_ADMIN_TOKEN, adminTokenAuth } from '../../test/support/api.ts';
import { useTestTables } from '../../test/support/table.ts';

const tables = useTestTables();

/** A wake sender that sends nothing and notes, at each wake, the round trips so far and what the feed holds then. */
class NotedWakes extends WakeSender {
  readonly noted: { topic: WakeTopic; zones: (string | undefined)[]; named: WakeName | undefined; roundTrips: number; feed: Promise<string[]> }[] = [];
  readonly #table: TableRef;

  constructor(table: TableRef, clock: ManualClock) {
    super({ table, clock, log: silentLogger(), secret: 'wake-order-secret-0123456789abcdef01' });
    this.#table = table;
  }

  override wake(topic: WakeTopic, targets: readonly WakeTarget[], named?: WakeName): void {
    const roundTrips = tables.meter.roundTrips;
    this.noted.push({ topic, zones: targets.map((t) => t.zone), named, roundTrips, feed: changesSince(this.#table, cursorAt(0), 100).then((r) => r.changes.map((c) => `${c.action}:${c.name}`)) });
  }
}

async function world(names: readonly string[] = ['prod']) {
  const table = await tables.fresh();
  const clock = new ManualClock(1_700_000_000_000);
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, names.map((name) => ({ name })), clock.now());
  await putSession(table, { agentId: 'agent-1', zoneId: 'z1', replicaId: 'replica-1', connectedAt: clock.now(), leaseExpiresAt: clock.now() + 60_000, agentVersion: '1.0.0', staticAccounts: [] });
  const wakes = new NotedWakes(table, clock);
  const app = createApp({ table, clock, auth: adminTokenAuth(), wakes });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, json: (await res.json()) as unknown };
  };
  expect((await call('POST', '/vendor/accounts', names.map((name) => ({ name, zoneId: 'z1' })))).status).toBe(200);
  return { table, wakes, call };
}

describe('an activation wakes the replicas as soon as its feed entry is durable', () => {
  it('wakes after the read, the session check, the account write and the feed write: four round trips, none for the facet index', async () => {
    const { wakes, call } = await world();
    const before = tables.meter.roundTrips;
    const patched = await call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    expect(patched.status).toBe(200);
    const total = tables.meter.roundTrips - before;
    expect(wakes.noted).toHaveLength(1);
    const [wake] = wakes.noted;
    expect(wake?.topic).toBe('accounts');
    expect(wake?.zones).toEqual(['z1']);
    // One account written: the wake names it, for the replicas to settle it without reading the feed.
    expect(wake?.named).toEqual({ account: 'prod' });
    // The feed entry was in the table when the wake went.
    expect(await wake?.feed).toEqual(['assign:prod']);
    expect((wake?.roundTrips ?? 0) - before).toBe(4);
    // The facet index's reads and writes came after (and the request waited for them): a read, a directory read and the writes.
    expect(total).toBeGreaterThan(4);
  });

  it('names no account when a write changed several: the replicas read the feed', async () => {
    const { wakes, call } = await world(['prod', 'dev']);
    const patched = await call('PATCH', '/vendor/accounts', [
      { name: 'prod', state: 'ACTIVE' },
      { name: 'dev', state: 'ACTIVE' },
    ]);
    expect(patched.status).toBe(200);
    expect(wakes.noted.map((w) => [w.topic, w.zones, w.named])).toEqual([['accounts', ['z1'], undefined]]);
    expect((await wakes.noted[0]?.feed)?.sort()).toEqual(['assign:dev', 'assign:prod']);
  });

  it('still makes the facet index follow the activation before the request answers', async () => {
    const { table, call } = await world();
    await call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    const counts = await facetCounts(table);
    expect(counts.get(facetTag({ state: 'ACTIVE', source: 'driver', zoneId: 'z1' }))).toBe(1);
    expect(counts.get(facetTag({ state: 'INACTIVE', source: 'driver', zoneId: 'z1' })) ?? 0).toBe(0);
    const listed = await call('GET', '/vendor/accounts?state=ACTIVE');
    expect(listed.json).toMatchObject({ total: 1, items: [{ name: 'prod', state: 'ACTIVE' }] });
  });

  it('does not wake when the activation is refused, and changes nothing', async () => {
    const { table, wakes, call } = await world();
    await call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    const again = await call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    expect(again.status).toBe(409);
    expect(wakes.noted).toHaveLength(1);
    expect((await changesSince(table, cursorAt(0), 100)).changes).toHaveLength(1);
  });
});
