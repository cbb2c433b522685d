import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startVaultDouble } from '../test/doubles/vault.ts';
import { get } from '../test/support/http.ts';
import { makePki } from '../test/support/pki.ts';
import { agentIdFrom, describeMode, startAgent, type RunningAgent } from './agent.ts';
import type { AgentComponent, ComponentFactory } from './component.ts';
import type { ConfigChange } from './config/diff.ts';
import { parseConfig } from './config/load.ts';
import { AGENT_COMPONENTS } from './components.ts';

const agents: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

function setup(raw: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-'));
  const path = join(dir, 'vendor-agent.yml');
  const logFile = join(dir, 'agent.log');
  const full = { ...raw, logging: { format: 'json', file: logFile, ...(raw['logging'] as object | undefined) } };
  writeFileSync(path, stringify(full));
  const result = parseConfig(stringify(full), path);
  expect(result.problems).toEqual([]);
  const signals = new EventEmitter();
  const logs = () => readFileSync(logFile, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  const rewrite = (next: Record<string, unknown>) => writeFileSync(path, stringify({ ...next, logging: { format: 'json', file: logFile, ...(next['logging'] as object | undefined) } }));
  const start = async (components?: readonly ComponentFactory[]) => {
    const agent = await startAgent({
      config: result.config!,
      configPath: path,
      warnings: result.warnings,
      env: { VENDOR_AGENT_ID: 'a-1' },
      hostname: 'host-1',
      signals,
      watchFile: false,
      ...(components === undefined ? {} : { components }),
    });
    agents.push(agent);
    return agent;
  };
  return { start, logs, rewrite, signals };
}

const server = { host: '127.0.0.1', port: 0 };

/** A component that records what happens to it. */
function recorder(name: string, events: string[], fail = false): ComponentFactory {
  return (): AgentComponent => ({
    name,
    start: async () => {
      if (fail) throw new Error(`${name} refused`);
      events.push(`start ${name}`);
    },
    stop: async () => void events.push(`stop ${name}`),
    onConfigChange: (change: ConfigChange) => void events.push(`change ${name} ${change.sections.join(',')}`),
  });
}

describe('the agent process', () => {
  it('agent id from VENDOR_AGENT_ID, else the host name with a per-process suffix', () => {
    expect(agentIdFrom({ VENDOR_AGENT_ID: 'fixed' }, 'pod-1')).toBe('fixed');
    expect(agentIdFrom({}, 'pod-1')).toMatch(/^pod-1-[0-9a-f]{6}$/);
    expect(agentIdFrom({}, 'pod-1')).not.toBe(agentIdFrom({}, 'pod-1'));
  });

  it('describes both modes of the file', () => {
    const mode = (accounts: unknown[]) => describeMode(parseConfig(stringify({ kubernetes: { accounts } }), 't').config!);
    expect(mode([{ name: 'a', serviceAccount: true }])).toBe('agent mode: one account through the pod service account');
    expect(mode([{ name: 'a', kubeConfigFile: '/a' }, { name: 'b', kubeConfigFile: '/b' }])).toBe('multi-account mode: 2 accounts');
    expect(mode([])).toBe('no static accounts: accounts come from the driver');
  });

  it('starts components in order and stops them in reverse', async () => {
    const events: string[] = [];
    const agent = await setup({ server }).start([recorder('a', events), recorder('b', events)]);
    await agent.stop();
    agents.splice(0);
    expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('a component that cannot start stops the ones before it, and the start fails', async () => {
    const events: string[] = [];
    const { start, logs } = setup({ server });
    await expect(start([recorder('a', events), recorder('b', events, true), recorder('c', events)])).rejects.toThrow('b refused');
    expect(events).toEqual(['start a', 'stop a']);
    expect(logs().at(-1)).toMatchObject({ level: 'fatal', component: 'b', msg: 'component could not start' });
  });

  it('every log line carries the agent id; the config warnings are logged at start', async () => {
    const { start, logs } = setup({ server, kubernetes: { accounts: [{ name: 'prod', serviceAccount: true, permissions: [{ READ: ['release team'] }] }] } });
    await start([]);
    const lines = logs();
    expect(lines.every((l) => l['agentId'] === 'a-1')).toBe(true);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', key: 'kubernetes.accounts[0].permissions[0].READ[0]' }));
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'zone id is the host name; set VENDOR_DEPLOYMENT_NAME and POD_NAMESPACE to choose it', zoneId: 'host-1' }));
  });

  it('a reload applies logging.level and tasks.* and tells every component', async () => {
    const events: string[] = [];
    const { start, rewrite, logs } = setup({ server, tasks: { totalBudget: 1 } });
    const agent = await start([...AGENT_COMPONENTS, recorder('r', events)]);
    const op = agent.ctx.budget.submit({ account: 'a', kind: 'operation', name: 'deploy', run: () => new Promise(() => {}) });
    expect(op.state).toBe('waiting');
    agent.ctx.logger.debug('before');
    rewrite({ server, tasks: { totalBudget: 2 }, logging: { level: 'debug' } });
    expect(await agent.reloader.reload('request')).toBe('applied');
    agent.ctx.logger.child({ account: 'x' }).debug('after');
    expect(op.state).toBe('running');
    expect(events).toContain('change r tasks,logging');
    const messages = logs().map((l) => l['msg']);
    expect(messages).not.toContain('before');
    expect(messages).toContain('after');
  });

  it('a reload of server.* moves the health server; one of prometheus.* starts the metrics server', async () => {
    const { start, rewrite, logs } = setup({ server });
    const agent = await start();
    const urls = () => logs().filter((l) => typeof l['url'] === 'string').map((l) => [l['msg'], l['url']] as [string, string]);
    const [[, first]] = urls() as [[string, string]];
    expect((await get(`${first}/livez`)).status).toBe(200);
    rewrite({ server: { ...server, port: 0 }, prometheus: { enabled: true, port: 0 }, pprof: { enabled: true, port: 0 } });
    // port 0 again is no change; enabling prometheus and pprof is.
    await agent.reloader.reload('request');
    expect(urls().map(([msg]) => msg)).toEqual(['health server listening', 'metrics server listening', 'profiling server listening']);
    // The profiling endpoint is on loopback whatever server.host says, so it stays where it is.
    rewrite({ server: { host: 'localhost', port: 0 }, prometheus: { enabled: true, port: 0 }, pprof: { enabled: true, port: 0 } });
    await agent.reloader.reload('request');
    expect(urls().map(([msg]) => msg).slice(3)).toEqual(['health server listening']);
    const health = urls()[3]![1];
    expect((await get(`${health}/livez`)).status).toBe(200);
    await expect(get(`${first}/livez`)).rejects.toThrow();
  });
});

describe('the local endpoints from another host', () => {
  /** An address of this machine that is not loopback: connecting to it is connecting as another host would. */
  function outsideAddress(): string {
    const found = Object.values(networkInterfaces()).flat().find((i) => i !== undefined && !i.internal && i.family === 'IPv4');
    if (found === undefined) throw new Error('this test needs a network interface other than loopback');
    return found.address;
  }
  const portOf = (url: string) => new URL(url).port;

  it('serves heap snapshots on loopback only, even with server.host 0.0.0.0; metrics bind prometheus.host', async () => {
    const { start, logs } = setup({ server: { host: '0.0.0.0', port: 0 }, pprof: { enabled: true, port: 0 }, prometheus: { enabled: true, host: '127.0.0.1', port: 0 } });
    await start();
    const urlOf = (msg: string) => logs().find((l) => l['msg'] === msg)?.['url'] as string;
    const pprof = urlOf('profiling server listening');
    const metrics = urlOf('metrics server listening');
    expect((await get(`http://127.0.0.1:${portOf(pprof)}/debug/pprof/`)).status).toBe(200);
    await expect(get(`http://${outsideAddress()}:${portOf(pprof)}/debug/pprof/`)).rejects.toThrow(/ECONNREFUSED/);
    expect((await get(`http://127.0.0.1:${portOf(metrics)}/metrics`)).status).toBe(200);
    await expect(get(`http://${outsideAddress()}:${portOf(metrics)}/metrics`)).rejects.toThrow(/ECONNREFUSED/);
    // The health server still takes server.host.
    expect((await get(`http://${outsideAddress()}:${portOf(urlOf('health server listening'))}/livez`)).status).toBe(200);
  });

  it('metrics are on every interface by default, for Prometheus to scrape the pod address', async () => {
    const { start, logs } = setup({ server: { host: '127.0.0.1', port: 0 }, prometheus: { enabled: true, port: 0 } });
    await start();
    const metrics = logs().find((l) => l['msg'] === 'metrics server listening')?.['url'] as string;
    expect((await get(`http://${outsideAddress()}:${portOf(metrics)}/metrics`)).status).toBe(200);
  });
});

describe('secrets in the agent', () => {
  const TOKEN = 'hvs.agent-test-token-7f3e';
  const reference = (form: 'encrypted' | 'encryptedFile', key: string) => `${form}:vault!e:secret!p:agent/tls!k:${key}`;

  it('resolves references with the parsed secrets section: the health server takes its TLS files and key password from vault', async () => {
    const pki = makePki();
    const vault = await startVaultDouble();
    try {
      vault.mountKv('secret', 2);
      vault.putSecret('secret', 'agent/tls', {
        cert: readFileSync(pki.serverCert, 'utf8'),
        key: readFileSync(pki.serverKeyEncrypted, 'utf8'),
        passphrase: pki.serverKeyPassword,
      });
      vault.addToken(TOKEN, { paths: ['secret/data/agent/*'] });
      const secrets = { vault: { enabled: true, url: vault.url, authMethod: 'token', token: TOKEN } };
      const ssl = {
        enabled: true,
        certFile: reference('encryptedFile', 'cert'),
        keyFile: reference('encryptedFile', 'key'),
        keyFilePassword: reference('encrypted', 'passphrase'),
      };
      const { start, logs, rewrite } = setup({ server: { ...server, ssl }, secrets });
      const agent = await start();
      const health = logs().find((l) => l['msg'] === 'health server listening')?.['url'];
      expect(health).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect((await get(`${String(health)}/livez`, { ca: readFileSync(pki.caCert) })).status).toBe(200);
      expect(vault.requests.filter((r) => r.path === '/v1/secret/data/agent/tls').length).toBeGreaterThan(0);

      rewrite({ server: { ...server, ssl }, secrets: { vault: { ...secrets.vault, timeoutMs: 5000 } } });
      expect(await agent.reloader.reload('request')).toBe('applied');
      expect(logs()).toContainEqual(
        expect.objectContaining({ level: 'warn', msg: 'secrets.* take effect when the agent restarts; references are resolved with the settings it started with' }),
      );
      const text = JSON.stringify(logs());
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(pki.serverKeyPassword);

      await agent.stop();
      agents.splice(0);
      await expect(agent.ctx.secrets.resolve(reference('encrypted', 'passphrase'))).rejects.toThrow('the secret resolver is closed');
    } finally {
      await vault.close();
    }
  });

  it('without secrets.vault enabled, a vault reference in server.ssl stops the start and names its key', async () => {
    const pki = makePki();
    const { start } = setup({ server: { ...server, ssl: { enabled: true, certFile: reference('encryptedFile', 'cert'), keyFile: pki.serverKey } } });
    await expect(start()).rejects.toThrow(`server.ssl.certFile: cannot resolve secret ${reference('encryptedFile', 'cert')}: secrets.vault.enabled is not true`);
  });
});
