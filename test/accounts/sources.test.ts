/**
 * The precedence of docs/api.md#precedence through the real sources: the driver's config file, the
 * configuration server on a local S3, the example plugin, and an agent's own file, with real agents,
 * driver and API. The sources refresh on their interval, as in the driver process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { startConfiguredSources } from '../../driver/sources/configured.ts';
import type { DefinitionSync } from '../../driver/sources/sync.ts';
import { systemClock } from '../../shared/clock.ts';
import { parseDriverConfig } from '../../shared/driver-config/load.ts';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';
import { LOCAL_S3_REGION, startLocalS3, type LocalS3 } from '../support/s3.ts';

const world = useAccountsWorld();
const EXAMPLE_PLUGIN = join(import.meta.dirname, '../../deploy/plugins/example-source.ts');
const BUCKET = 'vendor-config';
const OBJECT = 'accounts.yml';
const dir = mkdtempSync(join(tmpdir(), 'sources-e2e-'));
const pluginFile = (name: string) => join(dir, `${name}.yml`);
let s3: LocalS3;
let sync: DefinitionSync | undefined;

beforeAll(async () => {
  s3 = await startLocalS3();
  await s3.createBucket(BUCKET);
  for (const [key, value] of Object.entries(s3.env)) vi.stubEnv(key, value);
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
});
afterEach(async () => {
  await sync?.stop();
  sync = undefined;
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
});

const putConfigServer = (accounts: Record<string, unknown>[]) => s3.putObject(BUCKET, OBJECT, stringify({ kubernetes: { accounts } }));
const putPlugin = (name: string, accounts: Record<string, unknown>[]) => writeFileSync(pluginFile(name), stringify({ accounts }));

/**
 * The sources of a `vendor-driver.yml` naming the configuration server (endpoint from
 * AWS_ENDPOINT_URL_S3, as a deployed driver would take it) and two entries of the example plugin:
 * `low` with precedence 500 and `none` without.
 */
async function startSources(): Promise<DefinitionSync> {
  const file = parseDriverConfig(
    stringify({
      sources: {
        refreshIntervalMs: 100,
        configServer: { s3: { region: LOCAL_S3_REGION, bucket: BUCKET, key: OBJECT } },
        plugins: [
          { path: EXAMPLE_PLUGIN, name: 'low', precedence: 500, options: { file: pluginFile('low') } },
          { path: EXAMPLE_PLUGIN, name: 'none', options: { file: pluginFile('none') } },
        ],
      },
    }),
    join(dir, 'vendor-driver.yml'),
  );
  sync = await startConfiguredSources({ config: file.sources, baseDir: dir, table: world.table, log: world.driverLogs.log, clock: systemClock });
  return sync;
}

describe('precedence through the real sources', () => {
  it('a plugin with precedence 500 beats the agent; a plugin without one, the configuration server and the config file do not', async () => {
    await world.fresh([{ name: 'from-file', namespaces: ['file'] }]);
    await putConfigServer([{ name: 'from-server', namespaces: ['server'] }]);
    putPlugin('low', [{ name: 'won-by-plugin', namespaces: ['plugin'], kubeconfigFile: world.kubeconfig('won-by-plugin') }]);
    putPlugin('none', [{ name: 'plugin-without', namespaces: ['plugin'] }]);
    await startSources();
    const driver = await world.driver();
    const own = (name: string) => ({ name, kubeConfigFile: world.kubeconfig(`own-${name}`), namespaces: ['agent'] });
    const agent = await world.agent('a1', {
      target: `127.0.0.1:${driver.port}`,
      accounts: [own('from-file'), own('from-server'), own('won-by-plugin'), own('plugin-without')],
    });

    for (const name of ['from-file', 'from-server', 'plugin-without']) {
      await vi.waitFor(async () => expect((await world.account(name)).agents).toEqual([{ agentId: 'a1', caching: true }]), WAIT);
      expect(await world.account(name)).toMatchObject({ source: 'static-agent-config', config: { namespaces: ['agent'] } });
      expect(agent.holder().view(name)).toMatchObject({ settings: { namespaces: ['agent'] } });
    }
    expect(await world.account('won-by-plugin')).toMatchObject({ source: 'driver', agents: [], config: { namespaces: ['plugin'] } });
    expect(agent.holder().view('won-by-plugin')).toBeUndefined();
    expect(Object.keys((await world.record('from-server'))?.defs ?? {}).sort()).toEqual(['agent:a1', 'config-server']);
    expect(Object.keys((await world.record('plugin-without'))?.defs ?? {}).sort()).toEqual(['agent:a1', 'plugin:none']);
  });

  it('a refresh that changes the winner gives the agent the new definition: the S3 object changes, a plugin takes the account, then lets it go', async () => {
    await world.fresh([]);
    await putConfigServer([{ name: 'svc', namespaces: ['one'] }]);
    putPlugin('low', []);
    putPlugin('none', []);
    await startSources();
    const driver = await world.driver();
    const agent = await world.agent('a1', { target: `127.0.0.1:${driver.port}`, accounts: [{ name: 'flip', kubeConfigFile: world.kubeconfig('own-flip'), namespaces: ['agent'] }] });
    await world.activate('svc', 'vendor-agent_infra');
    await vi.waitFor(() => expect(agent.holder().view('svc')).toMatchObject({ settings: { namespaces: ['one'] } }), WAIT);
    await vi.waitFor(() => expect(agent.holder().view('flip')).toMatchObject({ settings: { namespaces: ['agent'] } }), WAIT);

    // The configuration server's object changes: the active account's agent gets the new settings.
    await putConfigServer([{ name: 'svc', namespaces: ['two'] }]);
    await vi.waitFor(() => expect(agent.holder().view('svc')).toMatchObject({ settings: { namespaces: ['two'] } }), WAIT);

    // The plugin with precedence 500 defines both names: it wins over the server and over the agent's own file.
    putPlugin('low', [
      { name: 'svc', namespaces: ['three'] },
      { name: 'flip', namespaces: ['plugin'] },
    ]);
    await vi.waitFor(() => expect(agent.holder().view('svc')).toMatchObject({ settings: { namespaces: ['three'] } }), WAIT);
    await vi.waitFor(() => expect(agent.holder().view('flip')).toBeUndefined(), WAIT);
    expect(await world.account('flip')).toMatchObject({ source: 'driver', config: { namespaces: ['plugin'] } });

    // And lets them go: the server's definition and the agent's own are served again.
    putPlugin('low', []);
    await vi.waitFor(() => expect(agent.holder().view('svc')).toMatchObject({ settings: { namespaces: ['two'] } }), WAIT);
    await vi.waitFor(() => expect(agent.holder().view('flip')).toMatchObject({ settings: { namespaces: ['agent'] } }), WAIT);
    await vi.waitFor(async () => expect(await world.account('flip')).toMatchObject({ source: 'static-agent-config', agents: [{ agentId: 'a1', caching: true }] }), WAIT);
  });
});
