import { describe, expect, it } from 'vitest';
import { apiFixture } from '../../test/support/api.ts';
import { useTestTables } from '../../test/support/table.ts';
import type { AccountSettings } from '../../shared/accounts/settings.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { syncDefinitionSources, type DefinitionSource } from '../../shared/table/sources/definition-sources.ts';

const tables = useTestTables();

function source(id: string, kind: DefinitionSource['kind'], accounts: AccountSettings[], precedence?: number): DefinitionSource {
  return { id, kind, ...(precedence === undefined ? {} : { precedence }), load: async () => accounts };
}

/** The driver defines `shared` in one source, an agent announces `shared` too; which one does GET serve? */
async function served(driverSource: DefinitionSource) {
  const f = await apiFixture(tables);
  await syncDefinitionSources(f.table, [driverSource], f.clock.now());
  await putAgentStaticAccounts(f.table, 'agent-1', 'deploy_ns', [{ name: 'shared', context: 'from-agent' }], f.clock.now());
  const res = await f.call('GET', '/vendor/accounts/shared');
  return res.json as unknown as { source: string; config: { context?: string }; zoneId?: string };
}

describe('precedence through the API (docs/api.md#precedence)', () => {
  it('rule 1: accounts come from the config file, a config server and plugins', async () => {
    const f = await apiFixture(tables);
    await syncDefinitionSources(
      f.table,
      [
        source('driver-config', 'driver-config', [{ name: 'from-file' }]),
        source('config-server', 'config-server', [{ name: 'from-server' }]),
        source('plugin:acme', 'plugin', [{ name: 'from-plugin' }], 10),
      ],
      f.clock.now(),
    );
    const list = await f.call('GET', '/vendor/accounts');
    expect((list.json.items as { name: string; source: string }[]).map((a) => [a.name, a.source])).toEqual([
      ['from-file', 'driver'],
      ['from-plugin', 'driver'],
      ['from-server', 'driver'],
    ]);
  });

  it('rule 2: different names in agent and driver are merged', async () => {
    const f = await apiFixture(tables, [{ name: 'native' }]);
    await putAgentStaticAccounts(f.table, 'agent-1', 'z', [{ name: 'static' }], f.clock.now());
    expect((await f.call('GET', '/vendor/accounts')).json.total).toBe(2);
  });

  it('rule 3: the agent overrides the driver config file', async () => {
    expect(await served(source('driver-config', 'driver-config', [{ name: 'shared', context: 'from-file' }]))).toMatchObject({
      source: 'static-agent-config',
      config: { context: 'from-agent' },
      zoneId: 'deploy_ns',
    });
  });

  it('rule 3: the agent overrides the config server', async () => {
    expect(await served(source('config-server', 'config-server', [{ name: 'shared', context: 'from-server' }]))).toMatchObject({
      source: 'static-agent-config',
      config: { context: 'from-agent' },
    });
  });

  it('rule 4: a plugin with precedence 500 beats the agent (1000)', async () => {
    const res = await served(source('plugin:acme', 'plugin', [{ name: 'shared', context: 'from-plugin' }], 500));
    expect(res).toMatchObject({ source: 'driver', config: { context: 'from-plugin' } });
    expect(res).not.toHaveProperty('zoneId');
  });

  it('rule 4: a plugin with no precedence loses to the agent', async () => {
    expect(await served(source('plugin:acme', 'plugin', [{ name: 'shared', context: 'from-plugin' }]))).toMatchObject({
      source: 'static-agent-config',
    });
  });

  it('rule 4: a plugin whose precedence does not beat 1000 loses to the agent', async () => {
    expect(await served(source('plugin:acme', 'plugin', [{ name: 'shared' }], 1000))).toMatchObject({ source: 'static-agent-config' });
    expect(await served(source('plugin:acme', 'plugin', [{ name: 'shared' }], 1500))).toMatchObject({ source: 'static-agent-config' });
  });

  it('rule 5/6: when the agent stops announcing the account, the driver definition is served again', async () => {
    const f = await apiFixture(tables, [{ name: 'shared', context: 'from-file' }]);
    await putAgentStaticAccounts(f.table, 'agent-1', 'z', [{ name: 'shared', context: 'from-agent' }], f.clock.now());
    expect((await f.call('GET', '/vendor/accounts/shared')).json.source).toBe('static-agent-config');
    await putAgentStaticAccounts(f.table, 'agent-1', 'z', [], f.clock.now());
    expect((await f.call('GET', '/vendor/accounts/shared')).json).toMatchObject({ source: 'driver', config: { context: 'from-file' } });
  });

  it('a source that defines a name twice or an invalid account is refused as a whole', async () => {
    const f = await apiFixture(tables);
    await expect(
      syncDefinitionSources(f.table, [source('plugin:bad', 'plugin', [{ name: 'x' }, { name: 'x' }])], f.clock.now()),
    ).rejects.toMatchObject({ code: 'invalid_input', issues: [{ path: 'plugin:bad[1].name' }] });
    await expect(
      syncDefinitionSources(f.table, [source('plugin:bad', 'plugin', [{ name: 'bad name' }])], f.clock.now()),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await f.call('GET', '/vendor/accounts')).json.total).toBe(0);
  });
});
