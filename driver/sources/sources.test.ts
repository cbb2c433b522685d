import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import type { PluginFunction } from './plugins.ts';
import exampleSource from '../../deploy/plugins/example-source.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { parseDriverConfig } from '../../shared/driver-config/load.ts';
import { getAccount } from '../../shared/table/accounts/records.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { LOCAL_S3_CREDENTIALS, LOCAL_S3_REGION, startLocalS3, type LocalS3 } from '../../test/support/s3.ts';
import { leakedSecrets } from '../../test/support/secret-scanner.ts';
import { useTestTables } from '../../test/support/table.ts';
import { startConfiguredSources } from './configured.ts';
import { SOURCE_READ_TIMEOUT_MS } from './sync.ts';

const BUCKET = 'vendor-config';
const EXAMPLE_PLUGIN = join(import.meta.dirname, '../../deploy/plugins/example-source.ts');
// Appears in objects and plugin data that are not valid: never in a log line.
const SECRET = 'secret-in-a-bad-object-4c8e1f';

const tables = useTestTables();
const dir = mkdtempSync(join(tmpdir(), 'sources-test-'));
let s3: LocalS3;
beforeAll(async () => {
  s3 = await startLocalS3();
  await s3.createBucket(BUCKET);
  // The driver takes its AWS credentials from the SDK's default chain, here the environment.
  vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_S3_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_S3_CREDENTIALS.secretAccessKey);
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
});

const accountsYaml = (accounts: Record<string, unknown>[]) => stringify({ kubernetes: { accounts } });

function sourcesFile(sources: Record<string, unknown>) {
  return parseDriverConfig(stringify({ sources }), join(dir, 'vendor-driver.yml')).sources;
}

async function start(t: TableRef, sources: Record<string, unknown>, importModule?: (url: string) => Promise<unknown>, clock = new ManualClock(1_000)) {
  const logs = captureLogger();
  const sync = await startConfiguredSources({
    config: sourcesFile(sources),
    baseDir: dir,
    table: t,
    log: logs.log,
    clock,
    ...(importModule === undefined ? {} : { importModule }),
  });
  return { sync, logs, clock };
}

const defsOf = async (t: TableRef, name: string) => (await getAccount(t, name, { consistent: true }))?.defs;
const errors = (lines: Record<string, unknown>[]) => lines.filter((l) => l.level === 50).map((l) => String(l.msg));

describe('the configuration server (an S3 object)', () => {
  const configServer = (key: string) => ({ configServer: { s3: { region: LOCAL_S3_REGION, bucket: BUCKET, key, endpoint: s3.endpoint } }, refreshIntervalMs: 1_000 });

  it('syncs its accounts as config-server, follows a changed object each interval, and removes what it dropped', async () => {
    const t = await tables.fresh();
    await s3.putObject(BUCKET, 'accounts.yml', accountsYaml([{ name: 'a', namespaces: ['one'] }, { name: 'b' }]));
    const { sync, clock } = await start(t, configServer('accounts.yml'));
    try {
      expect(await defsOf(t, 'a')).toEqual({ 'config-server': { kind: 'config-server', settings: { namespaces: ['one'] }, at: 1_000 } });
      expect(await defsOf(t, 'b')).toBeDefined();
      await s3.putObject(BUCKET, 'accounts.yml', accountsYaml([{ name: 'a', namespaces: ['two'] }]));
      await clock.advance(1_000);
      await expect.poll(async () => (await defsOf(t, 'a'))?.['config-server']?.settings).toEqual({ namespaces: ['two'] });
      await expect.poll(async () => defsOf(t, 'b')).toBeUndefined();
    } finally {
      await sync.stop();
    }
  });

  it('keeps the last good accounts, and logs why, when the object is invalid, not YAML, empty or gone', async () => {
    const t = await tables.fresh();
    await s3.putObject(BUCKET, 'flaky.yml', accountsYaml([{ name: 'kept', context: 'c' }]));
    const { sync, logs } = await start(t, configServer('flaky.yml'));
    try {
      const bad: [string | undefined, RegExp][] = [
        [accountsYaml([{ name: 'kept' }, { name: 'Bad Name', context: SECRET }]), /config server s3:\/\/vendor-config\/flaky\.yml is invalid: kubernetes\.accounts\[1\]\.name/],
        [`kubernetes: [${SECRET}`, /config server s3:\/\/vendor-config\/flaky\.yml is not valid YAML/],
        ['', /kubernetes: /],
        [accountsYaml([{ name: 'kept' }, { name: 'kept', context: SECRET }]), /defines a name twice/],
        [undefined, /s3:\/\/vendor-config\/flaky\.yml: S3 answered NoSuchKey/],
      ];
      for (const [body, message] of bad) {
        if (body === undefined) await s3.deleteObject(BUCKET, 'flaky.yml');
        else await s3.putObject(BUCKET, 'flaky.yml', body);
        await sync.syncNow();
        expect(errors(logs.lines).at(-1)).toMatch(/^definition source config-server was not synced, its last good accounts are kept: /);
        expect(errors(logs.lines).at(-1)).toMatch(message);
        expect((await defsOf(t, 'kept'))?.['config-server']?.settings).toEqual({ context: 'c' });
      }
      expect(leakedSecrets(logs.text(), [SECRET])).toEqual([]);

      await s3.putObject(BUCKET, 'flaky.yml', accountsYaml([{ name: 'kept', context: 'd' }]));
      await sync.syncNow();
      expect((await defsOf(t, 'kept'))?.['config-server']?.settings).toEqual({ context: 'd' });
      expect(logs.lines.at(-1)).toMatchObject({ msg: 'definition source read again after failing; its accounts synced', source: 'config-server' });
    } finally {
      await sync.stop();
    }
  });

  it('an empty list is the way to retire every account it defined', async () => {
    const t = await tables.fresh();
    await s3.putObject(BUCKET, 'retire.yml', accountsYaml([{ name: 'going' }]));
    const { sync } = await start(t, configServer('retire.yml'));
    try {
      await s3.putObject(BUCKET, 'retire.yml', 'kubernetes:\n  accounts: []\n');
      await sync.syncNow();
      expect(await defsOf(t, 'going')).toBeUndefined();
    } finally {
      await sync.stop();
    }
  });
});

describe('plugins', () => {
  it('the example plugin: syncs with the entry precedence, under plugin:<file name> or its own name, from a path relative to the config file', async () => {
    const t = await tables.fresh();
    const file = join(dir, 'plugin-accounts.yml');
    writeFileSync(file, stringify({ accounts: [{ name: 'p1', namespaces: ['x'] }] }));
    const { sync, clock } = await start(t, {
      refreshIntervalMs: 500,
      plugins: [
        { path: relative(dir, EXAMPLE_PLUGIN), options: { file }, precedence: 500 },
        { path: EXAMPLE_PLUGIN, name: 'second', options: { file } },
      ],
    });
    try {
      expect(await defsOf(t, 'p1')).toEqual({
        'plugin:example-source': { kind: 'plugin', precedence: 500, settings: { namespaces: ['x'] }, at: 1_000 },
        'plugin:second': { kind: 'plugin', settings: { namespaces: ['x'] }, at: 1_000 },
      });
      writeFileSync(file, stringify({ accounts: [{ name: 'p1', namespaces: ['y'] }] }));
      await clock.advance(500);
      await expect.poll(async () => (await defsOf(t, 'p1'))?.['plugin:second']?.settings).toEqual({ namespaces: ['y'] });
      await expect.poll(async () => (await defsOf(t, 'p1'))?.['plugin:example-source']?.settings).toEqual({ namespaces: ['y'] });
    } finally {
      await sync.stop();
    }
  });

  it('keeps the last good accounts when the plugin throws or returns invalid data, and logs only what is safe', async () => {
    const t = await tables.fresh();
    let behaviour: () => unknown = () => [{ name: 'steady', context: 'c' }];
    const plugin: PluginFunction = () => behaviour();
    const { sync, logs } = await start(t, { plugins: [{ path: 'inventory.ts' }] }, async () => ({ default: plugin }));
    try {
      const bad: [() => unknown, RegExp][] = [
        [() => { throw new Error(`inventory at https://user:${SECRET}@inventory.example refused`); }, /plugin inventory failed: Error$/],
        [() => Promise.reject(new TypeError(SECRET)), /plugin inventory failed: TypeError$/],
        [() => [{ name: 'steady', surprise: SECRET }], /accounts of source plugin:inventory is invalid: \[0\]\.surprise: unknown field/],
        [() => ({ accounts: [] }), /accounts of source plugin:inventory is invalid/],
        [() => undefined, /accounts of source plugin:inventory is invalid/],
      ];
      for (const [next, message] of bad) {
        behaviour = next;
        await sync.syncNow();
        expect(errors(logs.lines).at(-1)).toMatch(message);
        expect((await defsOf(t, 'steady'))?.['plugin:inventory']?.settings).toEqual({ context: 'c' });
      }
      expect(leakedSecrets(logs.text(), [SECRET])).toEqual([]);
    } finally {
      await sync.stop();
    }
  });

  it('a plugin that never answers counts as failed after the read timeout, holding up neither the start nor the stop', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000);
    let calls = 0;
    const plugin: PluginFunction = () => (++calls === 1 ? [{ name: 'first' }] : new Promise(() => undefined));
    const { sync, logs } = await start(t, { plugins: [{ path: 'slow.ts' }] }, async () => ({ default: plugin }), clock);
    try {
      const second = sync.syncNow();
      await clock.advance(SOURCE_READ_TIMEOUT_MS);
      await second;
      expect(errors(logs.lines).at(-1)).toBe(`definition source plugin:slow was not synced, its last good accounts are kept: reading definition source plugin:slow took longer than ${SOURCE_READ_TIMEOUT_MS} ms`);
      expect(await defsOf(t, 'first')).toBeDefined();
      void sync.syncNow();
    } finally {
      await sync.stop();
    }
    expect(clock.pendingSleeps).toBe(0);
  });

  it('a module that cannot be imported, or has no default function, is reported and tried again', async () => {
    const t = await tables.fresh();
    const { sync, logs } = await start(t, { plugins: [{ path: 'absent-plugin.ts' }, { path: EXAMPLE_PLUGIN, name: 'no-file' }] });
    try {
      expect(errors(logs.lines)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/plugin absent-plugin cannot be loaded from .*absent-plugin\.ts: Error \(ERR_MODULE_NOT_FOUND\)$/),
          'definition source plugin:no-file was not synced, its last good accounts are kept: plugin no-file failed: options.file must name a YAML or JSON file of accounts',
        ]),
      );
      writeFileSync(join(dir, 'absent-plugin.ts'), 'export const definitions = [];\n');
      const before = logs.lines.length;
      await sync.syncNow();
      expect(errors(logs.lines.slice(before))).toEqual(
        expect.arrayContaining([expect.stringMatching(/plugin absent-plugin \(.*absent-plugin\.ts\) has no default export that is a function$/)]),
      );
    } finally {
      await sync.stop();
    }
  });

  it('checks the example plugin on its own: it needs a readable file with a list under accounts', async () => {
    await expect(exampleSource({ options: { file: join(dir, 'none.yml') } })).rejects.toThrow(/cannot read .*none\.yml: ENOENT/);
    writeFileSync(join(dir, 'odd.yml'), 'accounts: {}\n');
    await expect(exampleSource({ options: { file: join(dir, 'odd.yml') } })).rejects.toThrow(/has no list under accounts/);
  });
});

describe('sources in vendor-driver.yml', () => {
  it('defaults the interval, and refuses bad keys and two plugins of one name', () => {
    expect(sourcesFile({})).toEqual({ refreshIntervalMs: 30_000, plugins: [] });
    expect(() => sourcesFile({ refreshIntervalMs: 10, configServer: { s3: { region: 'mars', bucket: 'B', key: '' } } })).toThrow(
      /sources\.refreshIntervalMs: must be at least 100.*sources\.configServer\.s3\.region: must be an AWS region.*sources\.configServer\.s3\.bucket: must be an S3 bucket name.*sources\.configServer\.s3\.key: must be the key of the object/,
    );
    expect(() => sourcesFile({ plugins: [{ path: 'a/x.ts' }, { path: 'b/x.mjs' }] })).toThrow(/sources\.plugins\[1\]\.path: duplicate plugin name "x"/);
    expect(() => sourcesFile({ plugins: [{ path: 'x.ts', surprise: 1 }] })).toThrow(/sources\.plugins\[0\]\.surprise: unknown field/);
    expect(() => sourcesFile({ plugins: [{ path: 'x.ts', precedence: -1 }] })).toThrow(/sources\.plugins\[0\]\.precedence: must be at least 0/);
  });
});
