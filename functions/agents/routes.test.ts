import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../test/support/table.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { adminTokenAuth } from '../../test/support/api.ts';
import { oidcConfig } from '../../test/support/oidc.ts';
import { appClient, useRoleIssuer } from '../../test/support/role-callers.ts';
import { getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { followHeldAccounts } from '../../shared/table/accounts/held.ts';
import { putSession, type Session } from '../../shared/table/agents/sessions.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import type { ApiAuth } from '../auth/authenticator.ts';
import { createApiAuth } from '../auth/authenticator.ts';
import { createApp } from '../app.ts';

const tables = useTestTables();
const NOW = 1_700_000_000_000;

const session = (agentId: string, zoneId: string, extra: Partial<Session> = {}): Session => ({
  agentId,
  zoneId,
  replicaId: 'replica-1',
  sessionId: `s-${agentId}`,
  connectedAt: NOW - 60_000,
  leaseExpiresAt: NOW + 30_000,
  agentVersion: '2.1.0',
  identity: 'fleet',
  staticAccounts: [],
  ...extra,
});

/** Records that `agentId` holds the account, as the driver does once the agent has answered. */
async function hold(t: TableRef, account: string, agentId: string, caching: boolean, extra: { ok?: boolean; removing?: boolean } = {}): Promise<void> {
  const record = await getAccount(t, account, { consistent: true });
  const after = await updateAccount(t, account, record!.version, { setAgents: [{ agentId, caching, ok: extra.ok ?? true, ...(extra.removing ? { removing: true } : {}), at: NOW }] }, NOW);
  await followHeldAccounts(t, [{ record: after, agentIds: [agentId] }]);
}

async function fixture(auth: ApiAuth = adminTokenAuth()) {
  const table = await tables.fresh();
  const clock = new ManualClock(NOW);
  await putAgentStaticAccounts(table, 'a1', 'edge_ns', [{ name: 'open' }, { name: 'guarded', permissions: [{ READ: ['dev'] }] }, { name: 'secret', permissions: [{ READ: ['ops'] }] }], NOW);
  await putSession(table, session('a1', 'edge_ns', { renewedAt: NOW - 5_000 }));
  await putSession(table, session('a2', 'edge_ns'));
  await putSession(table, session('b1', 'core_ns', { replicaId: 'replica-2', agentVersion: '2.0.0' }));
  await putSession(table, session('gone', 'core_ns', { leaseExpiresAt: NOW - 1 }));
  await hold(table, 'open', 'a1', true);
  await hold(table, 'guarded', 'a1', false);
  await hold(table, 'guarded', 'a2', true);
  await hold(table, 'secret', 'b1', true);
  await hold(table, 'secret', 'a2', false, { ok: false });
  await hold(table, 'open', 'gone', false);
  await hold(table, 'open', 'a2', false, { removing: true });
  const client = appClient(createApp({ table, clock, auth }));
  return { get: (path: string) => client.send('GET', path), as: client.as };
}

const agentIds = (r: { json: Record<string, unknown> }) => (r.json.items as { agentId: string }[]).map((a) => a.agentId);

describe('GET /vendor/agents', () => {
  it('lists the live sessions with what the table knows of each, by zone then agent id', async () => {
    const f = await fixture();
    const res = await f.get('/vendor/agents');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ page: 1, limit: 100, total: 3 });
    expect(agentIds(res)).toEqual(['b1', 'a1', 'a2']);
    expect((res.json.items as unknown[])[1]).toEqual({
      agentId: 'a1',
      zoneId: 'edge_ns',
      identity: 'fleet',
      version: '2.1.0',
      replicaId: 'replica-1',
      connectedAt: new Date(NOW - 60_000).toISOString(),
      lastHeartbeatAt: new Date(NOW - 5_000).toISOString(),
      accounts: [
        { name: 'guarded', caching: false },
        { name: 'open', caching: true },
      ],
      caching: 1,
    });
    // Neither an account it could not use nor one being taken off it counts as held.
    expect((res.json.items as { accounts: unknown[]; lastHeartbeatAt: string }[])[2]).toMatchObject({
      accounts: [{ name: 'guarded', caching: true }],
      caching: 1,
      lastHeartbeatAt: new Date(NOW - 60_000).toISOString(),
    });
  });

  it('filters by zone and pages', async () => {
    const f = await fixture();
    expect(agentIds(await f.get('/vendor/agents?zoneId=edge_ns'))).toEqual(['a1', 'a2']);
    expect((await f.get('/vendor/agents?zoneId=edge_ns')).json.total).toBe(2);
    expect(agentIds(await f.get('/vendor/agents?zoneId=nowhere'))).toEqual([]);
    const second = await f.get('/vendor/agents?limit=2&page=2');
    expect(agentIds(second)).toEqual(['a2']);
    expect(second.json.total).toBe(3);
  });

  it('answers bad query parameters with a 400 problem naming each', async () => {
    const f = await fixture();
    for (const [query, paths] of [
      ['?zoneId=', ['zoneId']],
      ['?zoneId=bad zone', ['zoneId']],
      [`?zoneId=${'z'.repeat(300)}`, ['zoneId']],
      ['?zoneId=a&zoneId=b', ['zoneId']],
      ['?limit=0&page=x', ['limit', 'page']],
      ['?zone=edge_ns', ['zone']],
    ] as const) {
      const res = await f.get(`/vendor/agents${query}`);
      expect(res.status, query).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect((res.json.errors as { path: string }[]).map((e) => e.path).sort()).toEqual([...paths].sort());
    }
  });

  it('GET /vendor/agents/{agentId}: the live agent, or a 404 problem', async () => {
    const f = await fixture();
    expect((await f.get('/vendor/agents/b1')).json).toMatchObject({ agentId: 'b1', zoneId: 'core_ns', replicaId: 'replica-2', version: '2.0.0', accounts: [{ name: 'secret', caching: true }] });
    for (const id of ['gone', 'unknown', 'x'.repeat(2000)]) {
      const res = await f.get(`/vendor/agents/${id}`);
      expect(res.status).toBe(404);
      expect(res.type).toContain('application/problem+json');
    }
  });
});

describe('who sees which agents', () => {
  const roles = useRoleIssuer();

  it('a caller who is not an account manager sees only agents holding accounts it may read, listing only those accounts', async () => {
    const clock = new ManualClock(NOW);
    const f = await fixture(createApiAuth({ oidc: oidcConfig(roles.issuer()), accountManagerRoles: ['admins'] }, { production: false, clock }));
    roles.issuer().now = () => Math.floor(NOW / 1000);
    f.as(await roles.token('someone', 'nobody'));
    const outsider = await f.get('/vendor/agents');
    expect(agentIds(outsider)).toEqual(['a1']);
    expect(outsider.json.total).toBe(1);
    expect((outsider.json.items as { accounts: unknown[]; caching: number }[])[0]).toMatchObject({ accounts: [{ name: 'open', caching: true }], caching: 1 });
    expect((await f.get('/vendor/agents/b1')).status).toBe(404);
    expect((await f.get('/vendor/agents/a2')).status).toBe(404);

    f.as(await roles.token('developer', 'dev'));
    const dev = await f.get('/vendor/agents');
    expect(agentIds(dev)).toEqual(['a1', 'a2']);
    expect(JSON.stringify(dev.json)).not.toContain('secret');

    f.as(await roles.token('boss', 'admins'));
    expect(agentIds(await f.get('/vendor/agents'))).toEqual(['b1', 'a1', 'a2']);
    expect((await f.get('/vendor/agents/b1')).status).toBe(200);
  });
});
