import { describe, expect, it } from 'vitest';
import { silentLogger } from '../shared/log.ts';
import { getAgentBinding, putAgentBinding } from '../shared/table/agents/bindings.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { AccountSettings } from '../shared/accounts/settings.ts';
import { getSession } from '../shared/table/agents/sessions.ts';
import { sessionKey } from '../shared/table/agents/keys.ts';
import { tableSnapshot } from '../test/support/snapshot.ts';
import { useTestTables } from '../test/support/table.ts';
import { TableSessionStore, type SessionRecord } from './session-store.ts';

const tables = useTestTables();

const GRACE = 1_000;
const LEASE = 30_000;

const record = (sessionId: string, identity: string, openedAt: number, zone = `${identity}_zone`): SessionRecord => ({
  sessionId,
  agentId: 'agent-1',
  zone,
  agentVersion: '1',
  identity,
  unzoned: false,
  replicaId: 'r1',
  peer: 'ipv4:127.0.0.1:1',
  openedAt,
  leaseExpiresAt: openedAt + LEASE,
  staticAccounts: [],
});

describe('TableSessionStore binding of agent ids', () => {
  it('keeps an agent id for the identity of its latest session until that session ended and the grace passed; a refusal writes nothing', async () => {
    const table = await tables.fresh();
    const store = new TableSessionStore(table, silentLogger(), GRACE);
    const first = record('s-1', 'good', 1_000);
    await store.open(first, '');
    expect(await getAgentBinding(table, 'agent-1')).toMatchObject({ identity: 'good', sessionId: 's-1', zoneId: 'good_zone' });
    expect(await getSession(table, 'good_zone', 'agent-1')).toMatchObject({ identity: 'good', unzoned: false });

    // Live: another identity is refused, in any zone, and nothing is written.
    const before = await tableSnapshot(table);
    await expect(store.open(record('s-2', 'rogue', 2_000), '')).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining('belongs to another identity') });
    expect(await tableSnapshot(table)).toEqual(before);

    // The same identity reconnects, in another zone even.
    await store.open(record('s-3', 'good', 3_000, 'good_other'), '');
    expect(await getAgentBinding(table, 'agent-1')).toMatchObject({ identity: 'good', sessionId: 's-3', zoneId: 'good_other' });

    // Ended at 5,000: within the grace still the good identity's; past it, anyone's its credential allows.
    const third = record('s-3', 'good', 3_000, 'good_other');
    await store.close(third, 'agent closed the stream', 5_000, 0);
    await expect(store.open(record('s-4', 'rogue', 5_000 + GRACE - 1), '')).rejects.toMatchObject({ code: 'forbidden' });
    await store.open(record('s-5', 'rogue', 5_000 + GRACE + 1), '');
    expect(await getAgentBinding(table, 'agent-1')).toMatchObject({ identity: 'rogue', sessionId: 's-5' });
  });

  it('counts a lease that ran out (its replica died) as the end of the session', async () => {
    const table = await tables.fresh();
    const store = new TableSessionStore(table, silentLogger(), GRACE);
    await store.open(record('s-1', 'good', 1_000), '');
    await expect(store.open(record('s-2', 'rogue', 1_000 + LEASE + GRACE - 1), '')).rejects.toMatchObject({ code: 'forbidden' });
    await store.open(record('s-3', 'rogue', 1_000 + LEASE + GRACE + 1), '');
    expect(await getAgentBinding(table, 'agent-1')).toMatchObject({ identity: 'rogue' });
  });

  it('holds an agent id for a binding whose session item is not written yet, for its lease and the grace', async () => {
    const table = await tables.fresh();
    const store = new TableSessionStore(table, silentLogger(), GRACE);
    // Another replica bound the id at 1,000 and has not written the session item yet (or failed to).
    await putAgentBinding(table, { agentId: 'agent-1', identity: 'good', zoneId: 'good_zone', sessionId: 's-1', at: 1_000, leaseExpiresAt: 1_000 + LEASE }, { kind: 'none' });
    await expect(store.open(record('s-2', 'rogue', 2_000), '')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(store.open(record('s-3', 'rogue', 1_000 + LEASE + GRACE - 1), '')).rejects.toMatchObject({ code: 'forbidden' });
    await store.open(record('s-4', 'rogue', 1_000 + LEASE + GRACE + 1), '');
    expect(await getAgentBinding(table, 'agent-1')).toMatchObject({ identity: 'rogue', sessionId: 's-4' });
  });
});

describe('TableSessionStore session items', () => {
  it('counts the static accounts an agent announced, and keeps the item within one write unit however many there are', async () => {
    const table = await tables.fresh();
    const store = new TableSessionStore(table, silentLogger(), GRACE);
    const staticAccounts = Array.from({ length: 100 }, (_, i) => ({ name: `prod-us-east-1-cluster-${String(i).padStart(3, '0')}` }) as AccountSettings);
    await store.open({ ...record('s-1', 'good', 1_000), staticAccounts }, '');
    const { Item } = await table.client.send(new GetCommand({ TableName: table.tableName, Key: sessionKey('good_zone', 'agent-1') }));
    // A renewal is billed for the whole item: 1 KB a write unit.
    expect(Buffer.byteLength(JSON.stringify(Item))).toBeLessThan(1024);
    // The first name alone, for replicas of earlier versions, which read only whether there are any.
    expect(Item).toMatchObject({ staticAccountCount: 100, staticAccounts: ['prod-us-east-1-cluster-000'] });
  });
});
