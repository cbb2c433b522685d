/**
 * The configuration server and plugins as the deployed driver (`driver/main.ts`) and `npm start` run
 * them: named in `vendor-driver.yml`, the S3 endpoint and credentials from the SDK's standard
 * environment (`AWS_ENDPOINT_URL_S3`), synced at start and again every `sources.refreshIntervalMs`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { getAccount } from '../shared/table/accounts/records.ts';
import { PLANE_TOKEN, planeHttp, startPlane, stopAll, stopPlane } from './support/control-plane-process.ts';
import { startChild, type Child } from './support/process.ts';
import { LOCAL_S3_REGION, startLocalS3, type LocalS3 } from './support/s3.ts';
import { tableProcessEnv } from './support/table-env.ts';
import { useTestTables } from './support/table.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE_PLUGIN = join(root, 'deploy/plugins/example-source.ts');
const BUCKET = 'vendor-config';
const WAIT = { timeout: 20_000, interval: 50 };
const tables = useTestTables();
const children: Child[] = [];
let s3: LocalS3;

beforeAll(async () => {
  s3 = await startLocalS3();
  await s3.createBucket(BUCKET);
});
afterEach(async () => {
  stopAll();
  for (const c of children.splice(0)) {
    if (c.process.exitCode === null) c.process.kill('SIGKILL');
    await c.exited;
  }
});
afterAll(() => s3.close());

/** A folder with a `vendor-driver.yml` naming the configuration server at `key` and the example plugin reading `plugin.yml`. */
function configFolder(key: string, extra: Record<string, unknown> = {}): { cwd: string; pluginFile: string; path: string } {
  const cwd = mkdtempSync(join(tmpdir(), 'sources-process-'));
  const pluginFile = join(cwd, 'plugin.yml');
  const path = join(cwd, 'vendor-driver.yml');
  writeFileSync(
    path,
    stringify({
      ...extra,
      kubernetes: { accounts: [{ name: 'from-file' }] },
      sources: {
        refreshIntervalMs: 200,
        configServer: { s3: { region: LOCAL_S3_REGION, bucket: BUCKET, key } },
        plugins: [{ path: EXAMPLE_PLUGIN, precedence: 500, options: { file: pluginFile } }],
      },
    }),
  );
  return { cwd, pluginFile, path };
}

const serverObject = (names: string[]) => stringify({ kubernetes: { accounts: names.map((name) => ({ name })) } });

describe('definition sources in the processes', () => {
  it('driver/main.ts syncs the configuration server and the plugin at start and follows their changes', async () => {
    const t = await tables.fresh();
    await s3.putObject(BUCKET, 'driver.yml', serverObject(['from-server']));
    const { pluginFile, path } = configFolder('driver.yml', { grpc: { host: '127.0.0.1' }, auth: { tokens: ['sources-process-agent-token'] } });
    writeFileSync(pluginFile, stringify({ accounts: [{ name: 'from-plugin' }] }));
    const child = startChild(process.execPath, ['driver/main.ts', '--config', path], {
      cwd: root,
      env: { ...process.env, ...tableProcessEnv({ tableName: t.tableName, endpoint: tables.endpoint }), ...s3.env, VENDOR_LOG_FORMAT: 'json', GRPC_PORT: '0' },
    });
    children.push(child);
    await Promise.race([
      child.line((l) => l.includes('"msg":"driver listening"')),
      child.exited.then((code) => {
        throw new Error(`driver exited with ${code}: ${child.stdout.join('\n')}`);
      }),
    ]);
    expect(Object.keys((await getAccount(t, 'from-server'))?.defs ?? {})).toEqual(['config-server']);
    expect((await getAccount(t, 'from-plugin'))?.defs).toMatchObject({ 'plugin:example-source': { kind: 'plugin', precedence: 500 } });
    expect(Object.keys((await getAccount(t, 'from-file'))?.defs ?? {})).toEqual(['driver-config']);

    await s3.putObject(BUCKET, 'driver.yml', serverObject(['moved']));
    // One sync adds and removes at once: wait for both.
    await vi.waitFor(async () => {
      expect(await getAccount(t, 'moved')).toBeDefined();
      expect(await getAccount(t, 'from-server')).toBeUndefined();
    }, WAIT);

    // A broken object: the error is logged and the accounts stay.
    await s3.putObject(BUCKET, 'driver.yml', 'kubernetes: [');
    const error = JSON.parse(await child.line((l) => l.includes('definition source config-server was not synced'))) as Record<string, unknown>;
    expect(error).toMatchObject({ level: 'error', source: 'config-server', code: 'invalid_input' });
    expect(await getAccount(t, 'moved')).toBeDefined();

    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(0);
  });

  it('npm start serves the accounts of both, and changes of the plugin data', async () => {
    await s3.putObject(BUCKET, 'plane.yml', serverObject(['from-server']));
    const { cwd, pluginFile } = configFolder('plane.yml', { api: { auth: { adminToken: PLANE_TOKEN } } });
    writeFileSync(pluginFile, stringify({ accounts: [{ name: 'from-plugin' }] }));
    const plane = await startPlane(cwd, { ...s3.env, AWS_EC2_METADATA_DISABLED: 'true' });
    const names = async () => ((await planeHttp(`${plane.url}/vendor/accounts`)).json.items as { name: string }[]).map((a) => a.name);
    expect(await names()).toEqual(['from-file', 'from-plugin', 'from-server']);
    writeFileSync(pluginFile, stringify({ accounts: [{ name: 'from-plugin' }, { name: 'plugin-added' }] }));
    await vi.waitFor(async () => expect(await names()).toEqual(['from-file', 'from-plugin', 'from-server', 'plugin-added']), WAIT);
    expect(plane.output()).toContain('account definitions also come from the configuration server');
    expect(await stopPlane(plane.child)).toBe(0);
  });
});
