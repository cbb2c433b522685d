import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureLogger } from '../../test/capture-log.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { systemClock } from '../../shared/clock.ts';
import { createAgentMetrics } from '../observability/metrics.ts';
import { diffConfig, type ConfigChange } from './diff.ts';
import { parseConfig } from './load.ts';
import { ConfigReloader } from './reload.ts';
import type { AgentConfig } from './schema.ts';

function config(raw: unknown): AgentConfig {
  const result = parseConfig(stringify(raw), 't.yml');
  expect(result.problems).toEqual([]);
  return result.config!;
}

const accounts = (...list: Record<string, unknown>[]) => ({ kubernetes: { accounts: list } });
const eu = { name: 'eu', kubeConfigFile: '/kube/eu' };
const us = { name: 'us', kubeConfigFile: '/kube/us' };
const ap = { name: 'ap', kubeConfigFile: '/kube/ap' };

describe('configuration diff', () => {
  it('names accounts added, changed and removed, and the other settings that changed', () => {
    const change = diffConfig(
      config({ ...accounts(eu, us), logging: { level: 'info' } }),
      config({ logging: { level: 'debug' }, kubernetes: { retries: { maxRetries: 9 }, accounts: [{ ...eu, namespaces: ['team-a'] }, ap] } }),
    );
    expect(change.accounts.added.map((a) => a.name)).toEqual(['ap']);
    expect(change.accounts.changed.map((a) => [a.name, a.namespaces])).toEqual([['eu', ['team-a']]]);
    expect(change.accounts.removed.map((a) => a.name)).toEqual(['us']);
    expect(change.sections).toEqual(['kubernetes.retries', 'logging']);
  });

  it('is empty for the same settings written differently', () => {
    const change = diffConfig(config(accounts(eu)), config({ kubernetes: { accounts: [{ kubeconfigFile: '/kube/eu', name: 'eu' }] }, logging: { level: 'INFO' } }));
    expect(change.accounts).toEqual({ added: [], changed: [], removed: [] });
    expect(change.sections).toEqual([]);
  });
});

describe('configuration reload', () => {
  const reloaders: ConfigReloader[] = [];
  afterEach(() => {
    for (const r of reloaders.splice(0)) r.stop();
  });

  function setup(initial: unknown, options: { watchFile?: boolean; path?: string } = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'reload-'));
    const path = options.path ?? join(dir, 'vendor-agent.yml');
    if (options.path === undefined) writeFileSync(path, stringify(initial));
    const { log: logger, lines } = captureLogger();
    const logs = lines as { level: number; msg: string; problems?: string[] }[];
    const signals = new EventEmitter();
    const metrics = createAgentMetrics();
    const changes: ConfigChange[] = [];
    let notify: (c: ConfigChange) => void = () => {};
    const reloader = new ConfigReloader({
      path,
      current: config(initial),
      logger,
      clock: systemClock,
      metrics,
      signals,
      watchFile: options.watchFile ?? false,
      debounceMs: 20,
      onChange: (c) => {
        changes.push(c);
        notify(c);
      },
    });
    reloaders.push(reloader);
    reloader.start();
    const nextChange = () => new Promise<ConfigChange>((resolve) => (notify = resolve));
    return { path, logs, signals, metrics, changes, reloader, nextChange };
  }

  it('SIGHUP reloads a valid file and hands the diff to the listener', async () => {
    const { path, signals, changes, reloader, nextChange, metrics } = setup(accounts(eu, us));
    writeFileSync(path, stringify(accounts(eu, ap)));
    const next = nextChange();
    signals.emit('SIGHUP');
    const change = await next;
    expect(change.accounts.added.map((a) => a.name)).toEqual(['ap']);
    expect(change.accounts.removed.map((a) => a.name)).toEqual(['us']);
    expect(reloader.current.kubernetes.accounts.map((a) => a.name)).toEqual(['eu', 'ap']);
    expect(changes).toHaveLength(1);
    expect(await metrics.registry.getSingleMetricAsString('vendor_agent_config_reloads_total')).toContain('{result="applied"} 1');
  });

  it('an invalid file keeps the running configuration and logs every problem', async () => {
    const { path, changes, reloader, logs, metrics } = setup(accounts(eu));
    writeFileSync(path, stringify({ kubernetes: { accounts: [{ name: 'eu' }] }, server: { port: 'x' } }));
    expect(await reloader.reload('SIGHUP')).toBe('rejected');
    expect(changes).toEqual([]);
    expect(reloader.current.kubernetes.accounts.map((a) => a.kubeConfigFile)).toEqual(['/kube/eu']);
    const error = logs.find((l) => l.level === 50)!;
    expect(error.msg).toBe('configuration not reloaded: 2 problem(s); the running configuration stays');
    expect(error.problems).toEqual([
      'kubernetes.accounts[0].serviceAccount: expected either serviceAccount: true or a kubeConfigFile, and not both, got false',
      'server.port: expected an integer from 0 to 65535, got "x"',
    ]);
    expect(await metrics.registry.getSingleMetricAsString('vendor_agent_config_reloads_total')).toContain('{result="rejected"} 1');
  });

  it('a file with the same settings changes nothing', async () => {
    const { path, changes, reloader } = setup(accounts(eu));
    writeFileSync(path, `# edited\n${stringify(accounts(eu))}`);
    expect(await reloader.reload('SIGHUP')).toBe('unchanged');
    expect(changes).toEqual([]);
  });

  it('a change of the file is picked up without a signal', async () => {
    const { path, nextChange } = setup(accounts(eu), { watchFile: true });
    const next = nextChange();
    writeFileSync(path, stringify(accounts(eu, us)));
    expect((await next).accounts.added.map((a) => a.name)).toEqual(['us']);
  });

  it('a ConfigMap update (the ..data symlink swapped) is picked up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'configmap-'));
    const version = (n: number, raw: unknown) => {
      mkdirSync(join(dir, `..v${n}`));
      writeFileSync(join(dir, `..v${n}`, 'vendor-agent.yml'), stringify(raw));
      symlinkSync(`..v${n}`, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    };
    version(1, accounts(eu));
    symlinkSync('..data/vendor-agent.yml', join(dir, 'vendor-agent.yml'));
    const { nextChange } = setup(accounts(eu), { watchFile: true, path: join(dir, 'vendor-agent.yml') });
    const next = nextChange();
    version(2, accounts(us));
    const change = await next;
    expect([change.accounts.added.map((a) => a.name), change.accounts.removed.map((a) => a.name)]).toEqual([['us'], ['eu']]);
  });

  it('a failing listener is logged and the new configuration stays in force', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reload-'));
    const path = join(dir, 'vendor-agent.yml');
    writeFileSync(path, stringify(accounts(us)));
    const { log: logger, lines } = captureLogger();
    const logs = lines as { msg: string; err?: string }[];
    const reloader = new ConfigReloader({
      path,
      current: config(accounts(eu)),
      logger,
      clock: systemClock,
      signals: new EventEmitter(),
      watchFile: false,
      onChange: () => {
        throw new Error('listener broke');
      },
    });
    expect(await reloader.reload('request')).toBe('applied');
    expect(reloader.current.kubernetes.accounts[0]!.name).toBe('us');
    expect(logs.at(-1)).toMatchObject({ msg: 'applying the reloaded configuration failed', err: 'listener broke' });
  });
});
