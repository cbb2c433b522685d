import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, credentials, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { PROTOCOL_VERSION } from '../../shared/protocol/messages.ts';
import { RawAgent } from '../raw-agent.ts';
import { AGENT_TOKEN, AccountsWorld } from '../support/accounts-world.ts';
import { startChild, type Child } from '../support/process.ts';
import { startTcpBalancer } from '../support/tcp-balancer.ts';
import { tableProcessEnv } from '../support/table-env.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const world = new AccountsWorld();
const children: Child[] = [];
beforeAll(() => world.start());
afterAll(() => world.close());
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.process.exitCode === null) c.process.kill('SIGKILL');
    await c.exited;
  }
  await world.reset();
});

const WAIT = { timeout: 20_000, interval: 20 };

/** `npm run driver` as the container runs it, on the test's table; resolves with its gRPC port. */
async function driverProcess(config: Record<string, unknown>, name = 'driver', env: Record<string, string> = {}): Promise<{ child: Child; port: number }> {
  const path = join(world.dir, `${name}.yml`);
  writeFileSync(path, stringify(config));
  const child = startChild(process.execPath, ['driver/main.ts', '--config', path], {
    cwd: root,
    env: {
      ...process.env,
      ...tableProcessEnv({ tableName: world.table.tableName, endpoint: world.tables.endpoint }),
      VENDOR_LOG_FORMAT: 'json',
      GRPC_PORT: '0',
      ...env,
    },
  });
  children.push(child);
  const line = await Promise.race([
    child.line((l) => l.includes('"msg":"driver listening"')),
    child.exited.then((code) => {
      throw new Error(`driver exited with ${code}: ${[...child.stdout, ...child.stderr].join('\n')}`);
    }),
  ]);
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

const fileFor = (extra: Record<string, unknown> = {}) => ({
  kubernetes: { accounts: [{ name: 'prod' }, { name: 'later' }] },
  grpc: { host: '127.0.0.1' },
  auth: { tokens: [AGENT_TOKEN] },
  sessions: { heartbeatIntervalMs: 200, leaseMs: 1_000 },
  assignment: { pollIntervalMs: 25, sweepIntervalMs: 50, handoverGraceMs: 60_000 },
  ...extra,
});

function healthCheck(port: number): Promise<string | number> {
  const Health = makeGenericClientConstructor(healthService, 'Health');
  const client = new Health(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as Client & {
    check(req: { service: string }, cb: (err: ServiceError | null, res?: { status: string | number }) => void): void;
  };
  return new Promise<string | number>((resolve, reject) =>
    client.check({ service: '' }, (err, res) => {
      client.close();
      if (err) reject(err);
      else resolve(res?.status ?? '');
    }),
  ).finally(() => client.close());
}

describe('the driver process (npm run driver)', () => {
  it('loads its accounts into the table, serves health, and on SIGTERM ends the streams and exits 0', async () => {
    await world.fresh([]);
    const { child, port } = await driverProcess(fileFor());
    expect((await world.call('GET', '/vendor/accounts')).json).toMatchObject({ total: 2 });
    expect(await healthCheck(port)).toBe('SERVING');
    const agent = RawAgent.messages({ port, token: AGENT_TOKEN });
    agent.send({ hello: { protocolVersion: PROTOCOL_VERSION, agentId: 'raw', zone: 'z', agentVersion: '0' } });
    expect((await agent.next()).body).toBe('welcome');
    child.process.kill('SIGTERM');
    const status = await agent.status;
    expect(status.details).toBe('driver shutting down');
    expect(await child.exited).toBe(0);
    expect(child.stdout.some((l) => l.includes('"msg":"driver stopped"'))).toBe(true);
    agent.close();
  });

  it('refuses a bad file naming the key, and exits 1', async () => {
    await world.fresh([]);
    await expect(driverProcess(fileFor({ grpc: { port: 'many' } }), 'bad-port')).rejects.toThrow(/grpc\.port/);
  });

  it('in production mode refuses fleet-wide tokens and plaintext on a network address', async () => {
    await world.fresh([]);
    const production = { VENDOR_ENV: 'production' };
    const perIdentity = { auth: { identities: [{ name: 'edge', zones: ['z'], agentIds: ['raw'], tokens: [AGENT_TOKEN] }] } };
    await expect(driverProcess(fileFor(), 'fleet', production)).rejects.toThrow(/auth\.tokens: fleet-wide agent tokens .* are refused in production mode/);
    await expect(driverProcess(fileFor({ ...perIdentity, grpc: { host: '0.0.0.0' } }), 'plain', production)).rejects.toThrow(/grpc\.tls: production mode does not listen in plaintext on 0\.0\.0\.0/);
    // Behind a load balancer that terminates TLS, and with tokens per identity, it runs.
    const { port } = await driverProcess(fileFor({ ...perIdentity, grpc: { host: '0.0.0.0', behindTlsProxy: true } }), 'proxied', production);
    const agent = RawAgent.messages({ port, token: AGENT_TOKEN });
    agent.send({ hello: { protocolVersion: PROTOCOL_VERSION, agentId: 'raw', zone: 'z', agentVersion: '0' } });
    expect((await agent.next()).body).toBe('welcome');
    agent.close();
  });

  it('outside production mode takes the fleet-wide token, with a warning', async () => {
    await world.fresh([]);
    const { child } = await driverProcess(fileFor(), 'fleet-local');
    expect(child.stdout.some((l) => l.includes('fleet-wide token') && l.includes('"level":"warn"'))).toBe(true);
  });

  it('killed mid-stream: its agents reconnect to the other replica, nothing is lost, and changes made meanwhile arrive', async () => {
    await world.fresh([]);
    const one = await driverProcess(fileFor(), 'one');
    const two = await driverProcess(fileFor(), 'two');
    const balancer = await startTcpBalancer([one.port, two.port]);
    try {
      const agents = await Promise.all(['k1', 'k2', 'k3'].map((id) => world.agent(id, { target: `127.0.0.1:${balancer.port}` })));
      await world.call('POST', '/vendor/accounts', [
        { name: 'prod', kubeconfigFile: world.kubeconfig('prod') },
        { name: 'later', kubeconfigFile: world.kubeconfig('later') },
      ]);
      await vi.waitFor(async () => expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }])).status).toBe(200), WAIT);
      await vi.waitFor(async () => expect(((await world.account('prod')).agents as unknown[]).length).toBe(3), WAIT);
      const before = await world.record('prod');

      one.child.process.kill('SIGKILL');
      await one.child.exited;
      balancer.backends = [two.port];
      await world.call('PATCH', '/vendor/accounts', [{ name: 'later', state: 'ACTIVE' }]);
      await vi.waitFor(async () => expect(((await world.account('later')).agents as unknown[]).length).toBe(3), WAIT);
      expect(await world.record('prod')).toMatchObject({ state: 'ACTIVE', cachingAgentId: before?.cachingAgentId, cachingEpoch: before?.cachingEpoch });
      expect(((await world.account('prod')).agents as unknown[]).length).toBe(3);
      for (const a of agents) {
        expect(a.holder().view('prod')?.caching).toBe(a.id === before?.cachingAgentId);
        expect(a.holder().view('later')).toBeDefined();
      }
    } finally {
      await balancer.close();
    }
  });
});
