import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { get } from '../test/support/http.ts';
import { startChild } from '../test/support/process.ts';
import { VERSION } from '../shared/version.ts';
import { parseConfigCommand } from '../shared/config-command.ts';
import { agentMain } from './main.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

function file(raw: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'agent-main-')), 'vendor-agent.yml');
  writeFileSync(path, typeof raw === 'string' ? raw : stringify(raw));
  return path;
}

const BAD = {
  driver: { grpc: 'nowhere', auth: { token: 424242 } },
  kubernetes: {
    acounts: [],
    accounts: [
      { name: 'prod', serviceAccount: true },
      { name: 'eu', kubeConfigFile: '/kube/eu', permissions: [{ READ: ['dev'] }] },
      { name: 'us', kubeConfigFile: '/kube/us', permissions: [{ READ: ['dev', ''] }] },
    ],
  },
  logging: { level: 'verbose' },
};

function memoryIo() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) }, out, err };
}

describe('agent command line', () => {
  it('parses run, validate and --config', () => {
    expect(parseConfigCommand([])).toEqual({ name: 'run', file: undefined });
    expect(parseConfigCommand(['--config', 'a.yml'])).toEqual({ name: 'run', file: 'a.yml' });
    expect(parseConfigCommand(['run', '-c', 'a.yml'])).toEqual({ name: 'run', file: 'a.yml' });
    expect(parseConfigCommand(['validate', 'a.yml'])).toEqual({ name: 'validate', file: 'a.yml' });
    expect(parseConfigCommand(['validate', '--config', 'a.yml'])).toEqual({ name: 'validate', file: 'a.yml' });
    expect(parseConfigCommand(['--help'])).toEqual({ name: 'help' });
    expect(parseConfigCommand(['start']).name).toBe('usage');
    expect(parseConfigCommand(['--port', '1']).name).toBe('usage');
  });

  it('prints the version for --version, -V and version, and exits 0', async () => {
    for (const argv of [['--version'], ['-V'], ['version']]) {
      expect(parseConfigCommand(argv)).toEqual({ name: 'version' });
      const { io, out } = memoryIo();
      expect(await agentMain(argv, io)).toBe(0);
      expect(out.join('')).toBe(`vendor-agent ${VERSION}\n`);
    }
    expect(parseConfigCommand(['version', 'extra']).name).toBe('usage');
  });

  it('usage errors exit 2 with the usage', async () => {
    const { io, err } = memoryIo();
    expect(await agentMain(['validate', 'a', 'b'], io)).toBe(2);
    expect(err.join('')).toContain('usage:');
  });

  it('validate exits 0 for a valid file and prints its summary', async () => {
    const { io, out } = memoryIo();
    const path = file({ kubernetes: { accounts: [{ name: 'prod', serviceAccount: true }] } });
    expect(await agentMain(['validate', path], io)).toBe(0);
    expect(out.join('')).toBe(`${path}: valid (1 account)\n`);
  });

  it('`npm run agent -- validate bad.yml` prints every problem and exits non-zero', async () => {
    const path = file(BAD);
    const child = startChild('npm', ['run', '--silent', 'agent', '--', 'validate', path], { cwd: root });
    expect(await child.exited).toBe(1);
    // npm itself may warn about the machine's npm settings; those lines are not the report.
    expect(child.stderr.filter((l) => l !== '' && !l.startsWith('npm warn'))).toEqual([
      `${path}: not valid, 4 problems:`,
      '  error   driver.auth.token: expected a string, got a number (value hidden)',
      '  error   driver.grpc: expected host:port (for example spin-clouddriver-grpc:9091), got "nowhere"',
      '  error   kubernetes.accounts[2].permissions[0].READ[1]: expected a non-empty role name, got ""',
      '  error   logging.level: expected one of panic, fatal, error, warn, warning, info, debug, trace (any case), got "verbose"',
      '  warning kubernetes.acounts: unknown key, ignored; the closest known key is kubernetes.accounts',
    ]);
    expect(child.stderr.join('\n')).not.toContain('424242');
  });

  it('run refuses an invalid file before doing anything, and exits non-zero', async () => {
    const path = file(BAD);
    const child = startChild(process.execPath, ['agent/main.ts', '--config', path], { cwd: root });
    expect(await child.exited).toBe(1);
    expect(child.stdout.filter((l) => l !== '')).toEqual([]);
    // The complete list, as validate prints it, then why nothing started.
    expect(child.stderr.filter((l) => l !== '')).toEqual([
      `${path}: not valid, 4 problems:`,
      '  error   driver.auth.token: expected a string, got a number (value hidden)',
      '  error   driver.grpc: expected host:port (for example spin-clouddriver-grpc:9091), got "nowhere"',
      '  error   kubernetes.accounts[2].permissions[0].READ[1]: expected a non-empty role name, got ""',
      '  error   logging.level: expected one of panic, fatal, error, warn, warning, info, debug, trace (any case), got "verbose"',
      '  warning kubernetes.acounts: unknown key, ignored; the closest known key is kubernetes.accounts',
      'the agent did not start',
    ]);
  });

  it('an invalid file never reaches the driver it names, and nothing is logged as started', async () => {
    let connections = 0;
    const driver = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => driver.listen(0, '127.0.0.1', resolve));
    const { port } = driver.address() as AddressInfo;
    const path = file({ driver: { grpc: `127.0.0.1:${port}`, insecure: true }, server: { host: '127.0.0.1', port: 0 }, logging: { level: 'verbose' } });
    try {
      const child = startChild(process.execPath, ['agent/main.ts', '--config', path], { cwd: root });
      expect(await child.exited).toBe(1);
      expect(child.stdout.filter((l) => l !== '')).toEqual([]);
      expect(connections).toBe(0);
    } finally {
      driver.close();
    }
  });

  it('runs with a valid file: not ready without a driver, serves metrics, reloads on SIGHUP, exits 0 on SIGTERM', async () => {
    const base = {
      server: { host: '127.0.0.1', port: 0 },
      prometheus: { enabled: true, port: 0 },
      logging: { format: 'json' },
      driver: { grpc: '127.0.0.1:1', insecure: true },
      kubernetes: { reconnectTimeoutMs: 50, accounts: [{ name: 'prod', serviceAccount: true }] },
    };
    const path = file(base);
    const env = { ...process.env, VENDOR_AGENT_ID: 'agent-under-test' };
    const child = startChild(process.execPath, ['agent/main.ts', '--config', path], { cwd: root, env });
    try {
      const urlOf = async (msg: string) => (JSON.parse(await child.line((l) => l.includes(`"msg":"${msg}"`))) as { url: string }).url;
      const health = await urlOf('health server listening');
      const metricsPort = new URL(await urlOf('metrics server listening')).port;
      const started = JSON.parse(await child.line((l) => l.includes('"msg":"agent started"'))) as Record<string, unknown>;
      expect(started).toMatchObject({ agentId: 'agent-under-test', level: 'info' });

      expect((await get(`${health}/livez`)).status).toBe(200);
      const ready = await get(`${health}/readyz`);
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.text).checks.driver).toEqual({ ok: false, detail: expect.stringMatching(/^not connected to the driver/) });
      // Nothing listens there: the agent keeps dialling, and stays not ready.
      const attempts = () => child.stdout.filter((l) => l.includes('driver stream ended')).length;
      await vi.waitFor(() => expect(attempts()).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
      expect((await get(`${health}/readyz`)).status).toBe(503);
      expect((await get(`http://127.0.0.1:${metricsPort}/prometheus_metrics`)).text).toContain('vendor_agent_driver_connected');

      writeFileSync(
        path,
        stringify({ ...base, kubernetes: { ...base.kubernetes, accounts: [{ name: 'prod', serviceAccount: true }, { name: 'eu', kubeConfigFile: '/kube/eu' }] } }),
      );
      child.process.kill('SIGHUP');
      const reloaded = JSON.parse(await child.line((l) => l.includes('"msg":"configuration reloaded"'))) as Record<string, unknown>;
      expect(reloaded).toMatchObject({ added: ['eu'], changed: [], removed: [] });

      child.process.kill('SIGTERM');
      expect(await child.exited).toBe(0);
      expect(child.stdout.some((l) => l.includes('"msg":"agent stopped"'))).toBe(true);
    } finally {
      child.process.kill('SIGKILL');
    }
  });
});
