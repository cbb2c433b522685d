/**
 * The account served says whether its cluster answers the caching agent (docs/api.md#the-account-served,
 * `cluster`), beside a `state` that keeps its meaning; only the caching agent at its epoch reports it.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { accountSchema } from '../../shared/accounts/schema.ts';
import { getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { putClusterStatus } from '../../shared/table/accounts/cluster-status.ts';
import { apiFixture } from '../../test/support/api.ts';
import { useTestTables } from '../../test/support/table.ts';

const tables = useTestTables();

const T0 = Date.UTC(2026, 10, 27, 3, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

describe('cluster, beside state', () => {
  it('is absent until reported, then says when the cluster stopped answering, why, and when it recovered', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }]);
    const record = await getAccount(f.table, 'prod', { consistent: true });
    await updateAccount(f.table, 'prod', record!.version, { state: 'ACTIVE', cachingAgentId: 'agent-1', cachingEpoch: 3 }, T0);
    expect((await f.call('GET', '/vendor/accounts/prod')).json.cluster).toBeUndefined();

    const error = 'WATCH /api/v1/pods on the cluster of account prod: connect ECONNREFUSED 10.0.0.1:443';
    expect(await putClusterStatus(f.table, 'prod', 'agent-1', 3, { reachable: false, since: T0, reason: 'unreachable', error, agentId: 'agent-1', at: T0 + 2000 })).toBe(true);
    const down = await f.call('GET', '/vendor/accounts/prod');
    expect(down.json).toMatchObject({ state: 'ACTIVE', cluster: { reachable: false, since: iso(T0), reason: 'unreachable', error, reportedBy: 'agent-1', reportedAt: iso(T0 + 2000) } });
    expect(() => v.parse(accountSchema, down.json)).not.toThrow();
    const listed = await f.call('GET', '/vendor/accounts');
    expect((listed.json.items as { cluster?: unknown }[])[0]?.cluster).toEqual(down.json.cluster);

    await putClusterStatus(f.table, 'prod', 'agent-1', 3, { reachable: true, since: T0 + 60_000, lastOutage: { reason: 'unreachable', from: T0, until: T0 + 60_000 }, agentId: 'agent-1', at: T0 + 61_000 });
    const back = (await f.call('GET', '/vendor/accounts/prod')).json;
    expect(back.cluster).toEqual({ reachable: true, since: iso(T0 + 60_000), lastOutage: { reason: 'unreachable', from: iso(T0), until: iso(T0 + 60_000) }, reportedBy: 'agent-1', reportedAt: iso(T0 + 61_000) });
    expect(() => v.parse(accountSchema, back)).not.toThrow();
  });

  it('is not written by an agent that no longer caches the account, and leaves the account version alone', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }]);
    const record = await getAccount(f.table, 'prod', { consistent: true });
    await updateAccount(f.table, 'prod', record!.version, { cachingAgentId: 'agent-2', cachingEpoch: 4 }, T0);
    const version = (await getAccount(f.table, 'prod', { consistent: true }))!.version;
    expect(await putClusterStatus(f.table, 'prod', 'agent-1', 3, { reachable: false, since: T0, reason: 'unreachable', error: 'x', agentId: 'agent-1', at: T0 })).toBe(false);
    expect(await putClusterStatus(f.table, 'prod', 'agent-2', 3, { reachable: false, since: T0, reason: 'unreachable', error: 'x', agentId: 'agent-2', at: T0 })).toBe(false);
    expect(await putClusterStatus(f.table, 'absent', 'agent-2', 4, { reachable: true, since: T0, agentId: 'agent-2', at: T0 })).toBe(false);
    expect((await f.call('GET', '/vendor/accounts/prod')).json.cluster).toBeUndefined();
    expect(await putClusterStatus(f.table, 'prod', 'agent-2', 4, { reachable: true, since: T0, agentId: 'agent-2', at: T0 })).toBe(true);
    expect((await getAccount(f.table, 'prod', { consistent: true }))!.version).toBe(version);
    expect((await f.call('GET', '/vendor/accounts/prod')).json.cluster).toMatchObject({ reachable: true, reportedBy: 'agent-2' });
  });
});
