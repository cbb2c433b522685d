import { describe, expect, it } from 'vitest';
import { apiFixture, type ApiFixture } from '../../test/support/api.ts';
import { useTestTables } from '../../test/support/table.ts';
import { getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { changesSince, cursorAt } from '../../shared/table/accounts/feed.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';

const tables = useTestTables();

const driverAccounts = [
  { name: 'prod', kubeconfigFile: '/native/prod.yml', context: 'prod-ctx' },
  { name: 'stage', kubeconfigFile: '/native/stage.yml' },
  { name: 'dev' },
];

async function feed(f: ApiFixture) {
  return (await changesSince(f.table, cursorAt(0), 100)).changes.map((c) => [c.action, c.name, c.generation]);
}

describe('POST /vendor/accounts (docs/api.md#semantics-of-the-writes)', () => {
  it('registers driver-defined accounts as INACTIVE, keeping zoneId and kubeconfigFile (both spellings)', async () => {
    const f = await apiFixture(tables, driverAccounts);
    const res = await f.call('POST', '/vendor/accounts', [
      { name: 'prod', zoneId: 'agent_ns', kubeconfigFile: 'encrypted:vault!e:secret!p:kube!k:prod' },
      { name: 'stage', kubeConfigFile: 'encryptedFile:secrets-manager!r:us-east-1!s:kube/stage' },
      { name: 'dev' },
    ]);
    expect(res.status).toBe(200);
    expect(res.json).toEqual([
      {
        name: 'prod',
        type: 'kubernetes',
        source: 'driver',
        config: { kubeconfigFile: 'encrypted:vault!e:secret!p:kube!k:prod', context: 'prod-ctx' },
        zoneId: 'agent_ns',
        agents: [],
        lastAssignmentMsg: '',
        state: 'INACTIVE',
      },
      expect.objectContaining({ name: 'stage', state: 'INACTIVE', config: { kubeconfigFile: 'encryptedFile:secrets-manager!r:us-east-1!s:kube/stage' } }),
      expect.objectContaining({ name: 'dev', state: 'INACTIVE', config: {} }),
    ]);
    expect((await f.call('GET', '/vendor/accounts/prod')).json).toMatchObject({ state: 'INACTIVE', zoneId: 'agent_ns' });
    expect(await feed(f)).toEqual([]); // nothing for the driver to do until activation
  });

  it('re-POST updates the registration and keeps what it leaves out', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z1', kubeconfigFile: '/a.yml' }]);
    const res = await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z2' }]);
    expect(res.json).toEqual([expect.objectContaining({ zoneId: 'z2', config: expect.objectContaining({ kubeconfigFile: '/a.yml' }), state: 'INACTIVE' })]);
  });

  it('re-POST of an ACTIVE account keeps it active and queues it again with the new settings', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.connectAgent('agent-1', 'z1');
    await f.connectAgent('agent-2', 'z2');
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z1' }]);
    await f.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    const res = await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z2' }]);
    expect(res.json).toEqual([expect.objectContaining({ state: 'ACTIVE', zoneId: 'z2' })]);
    // The same values again change nothing and queue nothing.
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z2' }]);
    expect(await feed(f)).toEqual([
      ['assign', 'prod', 2],
      ['assign', 'prod', 3],
    ]);
  });

  it('answers 400 listing every name not defined in the driver service, and writes nothing', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await putAgentStaticAccounts(f.table, 'agent-1', 'z', [{ name: 'static-only' }], f.clock.now());
    const res = await f.call('POST', '/vendor/accounts', [{ name: 'prod' }, { name: 'ghost' }, { name: 'static-only' }]);
    expect(res.status).toBe(400);
    expect(res.type).toBe('application/problem+json');
    expect(res.json).toMatchObject({
      code: 'unknown_account',
      names: ['ghost', 'static-only'],
      errors: [
        { path: '[1].name', message: '"ghost" is not an account defined in the driver service' },
        { path: '[2].name', message: '"static-only" is not an account defined in the driver service' },
      ],
    });
    expect((await getAccount(f.table, 'prod'))?.registration).toBeUndefined();
  });
});

describe('PATCH /vendor/accounts (docs/api.md#semantics-of-the-writes, docs/api.md#states-and-transitions)', () => {
  it('activates INACTIVE accounts when an agent session is live in their zone, and queues them', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.connectAgent('agent-1', 'deploy_ns');
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'deploy_ns', kubeconfigFile: '/k.yml' }]);
    // zoneId and kubeconfigFile were given at POST and may be left out here (docs/api.md#semantics-of-the-writes).
    const res = await f.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    expect(res.status).toBe(200);
    expect(res.json).toEqual([expect.objectContaining({ name: 'prod', state: 'ACTIVE', zoneId: 'deploy_ns', config: expect.objectContaining({ kubeconfigFile: '/k.yml' }) })]);
    expect(await feed(f)).toEqual([['assign', 'prod', 2]]);
  });

  it('takes zoneId and kubeconfigFile given in the PATCH itself', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.connectAgent('agent-1', 'zone-b');
    await f.call('POST', '/vendor/accounts', [{ name: 'stage' }]);
    const res = await f.call('PATCH', '/vendor/accounts', [{ name: 'stage', state: 'ACTIVE', zoneId: 'zone-b', kubeConfigFile: '/p.yml' }]);
    expect(res.json).toEqual([expect.objectContaining({ state: 'ACTIVE', zoneId: 'zone-b', config: { kubeconfigFile: '/p.yml' } })]);
  });

  it('without any zone, needs a live session in any zone', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.call('POST', '/vendor/accounts', [{ name: 'dev' }]);
    const none = await f.call('PATCH', '/vendor/accounts', [{ name: 'dev', state: 'ACTIVE' }]);
    expect(none.status).toBe(409);
    expect(none.json.detail).toBe('no active agent session in any zone: an agent must be connected before accounts can be activated there');
    await f.connectAgent('agent-9', 'elsewhere');
    expect((await f.call('PATCH', '/vendor/accounts', [{ name: 'dev', state: 'ACTIVE' }])).status).toBe(200);
  });

  it('answers 409 when no session is live in the zone (other zones and expired leases do not count)', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.connectAgent('agent-1', 'other_zone');
    await f.connectAgent('agent-2', 'deploy_ns');
    await f.clock.advance(61_000); // both leases are over
    await f.connectAgent('agent-3', 'other_zone');
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'deploy_ns' }]);
    const res = await f.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    expect(res.status).toBe(409);
    expect(res.type).toBe('application/problem+json');
    expect(res.json).toMatchObject({ code: 'conflict', zoneId: 'deploy_ns', errors: [{ path: '[0]', message: 'no active agent session in zone "deploy_ns"' }] });
    expect((await getAccount(f.table, 'prod'))?.state).toBe('INACTIVE');
  });

  it('answers 409 for an account not registered or already ACTIVE, and writes none of the batch', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.connectAgent('agent-1', 'z');
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z' }, { name: 'stage', zoneId: 'z' }]);
    await f.call('PATCH', '/vendor/accounts', [{ name: 'stage', state: 'ACTIVE' }]);
    const res = await f.call('PATCH', '/vendor/accounts', [
      { name: 'prod', state: 'ACTIVE' },
      { name: 'stage', state: 'ACTIVE' },
      { name: 'dev', state: 'ACTIVE' },
    ]);
    expect(res.status).toBe(409);
    expect(res.json.errors).toEqual([
      { path: '[1].name', message: 'account "stage" is already ACTIVE' },
      { path: '[2].name', message: 'account "dev" is not registered for migration; POST it first' },
    ]);
    expect((await getAccount(f.table, 'prod'))?.state).toBe('INACTIVE');
  });

  it('re-activates a FAILED account', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.connectAgent('agent-1', 'z');
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z' }]);
    await f.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    const record = (await getAccount(f.table, 'prod', { consistent: true }))!;
    // The driver reports that the agent could not use the kubeconfig.
    await updateAccount(f.table, 'prod', record.version, { state: 'FAILED', lastAssignmentMsg: 'invalid kubeconfig file' }, 1);
    expect((await f.call('GET', '/vendor/accounts/prod')).json).toMatchObject({ state: 'FAILED', lastAssignmentMsg: 'invalid kubeconfig file' });
    const res = await f.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE', kubeconfigFile: '/fixed.yml' }]);
    expect(res.json).toEqual([expect.objectContaining({ state: 'ACTIVE', config: expect.objectContaining({ kubeconfigFile: '/fixed.yml' }) })]);
  });

  it('two PATCHes racing on one account: exactly one activates it, the other gets 409', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.connectAgent('agent-1', 'z');
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z' }]);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => f.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }])),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    expect(await feed(f)).toEqual([['assign', 'prod', 2]]);
  });

  it('answers 400 for names not defined in the driver service, before any state check', async () => {
    const f = await apiFixture(tables, driverAccounts);
    const res = await f.call('PATCH', '/vendor/accounts', [{ name: 'ghost', state: 'ACTIVE' }, { name: 'prod', state: 'ACTIVE' }]);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'unknown_account', names: ['ghost'] });
  });

  it('answers 400 when state is anything but ACTIVE', async () => {
    const f = await apiFixture(tables, driverAccounts);
    for (const state of ['INACTIVE', 'FAILED', 'active', 1, undefined]) {
      const res = await f.call('PATCH', '/vendor/accounts', [{ name: 'prod', ...(state === undefined ? {} : { state }) }]);
      expect(res.status).toBe(400);
      expect(res.json.errors).toEqual([expect.objectContaining({ path: '[0].state' })]);
    }
  });
});

describe('DELETE /vendor/accounts/{accountName} (docs/api.md#semantics-of-the-writes)', () => {
  it('removes a migrated account from its agents: registration and state go, a removal is queued', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await f.connectAgent('agent-1', 'z');
    await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z' }]);
    await f.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    const res = await f.call('DELETE', '/vendor/accounts/prod');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      name: 'prod',
      type: 'kubernetes',
      source: 'driver',
      config: { kubeconfigFile: '/native/prod.yml', context: 'prod-ctx' },
      agents: [],
      lastAssignmentMsg: '',
    });
    expect(await feed(f)).toEqual([
      ['assign', 'prod', 2],
      ['remove', 'prod', 3],
    ]);
    // The native account stays listed; it can be registered again.
    expect((await f.call('GET', '/vendor/accounts')).json.total).toBe(3);
    expect((await f.call('POST', '/vendor/accounts', [{ name: 'prod' }])).json).toEqual([expect.objectContaining({ state: 'INACTIVE' })]);
  });

  it('is idempotent for an account that is not migrated', async () => {
    const f = await apiFixture(tables, driverAccounts);
    const res = await f.call('DELETE', '/vendor/accounts/dev');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ name: 'dev' });
    expect(res.json).not.toHaveProperty('state');
  });

  it('answers 400 when the name is not a driver-defined account', async () => {
    const f = await apiFixture(tables, driverAccounts);
    await putAgentStaticAccounts(f.table, 'agent-1', 'z', [{ name: 'static-only' }], f.clock.now());
    for (const name of ['ghost', 'static-only']) {
      const res = await f.call('DELETE', `/vendor/accounts/${name}`);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'unknown_account', names: [name], errors: [{ path: 'accountName' }] });
    }
    expect((await getAccount(f.table, 'static-only'))?.defs).toHaveProperty('agent:agent-1');
  });
});
