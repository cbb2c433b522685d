/**
 * Wakes in the deployed layout: `driver/main.ts` in a process of its own, with the wake secret in its
 * environment (as the SST link gives it) and a poll of a minute, and the API in this process sharing
 * only the table and the secret with it (docs/protocol.md#6b-wakes).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { createApp } from '../functions/app.ts';
import { WakeSender } from '../functions/wake/sender.ts';
import { systemClock } from '../shared/clock.ts';
import { silentLogger } from '../shared/log.ts';
import { PROTOCOL_VERSION } from '../shared/protocol/messages.ts';
import { liveSessions } from '../shared/table/agents/sessions.ts';
import { createDocumentClient } from '../shared/table/core/client.ts';
import { compress, createOperation, finishOperation } from '../shared/table/operations/operations.ts';
import { requestHash } from '../shared/operations/hash.ts';
import { RawAgent } from './raw-agent.ts';
import { AGENT_TOKEN, AccountsWorld } from './support/accounts-world.ts';
import { TEST_ADMIN_TOKEN, adminTokenAuth } from './support/api.ts';
import { startChild, type Child } from './support/process.ts';
import { tableProcessEnv } from './support/table-env.ts';
import { isOperationPartition } from '../shared/table/operations/keys.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const world = new AccountsWorld();
const children: Child[] = [];
const agents: RawAgent[] = [];
beforeAll(() => world.start());
afterAll(() => world.close());
afterEach(async () => {
  for (const a of agents.splice(0)) a.close();
  for (const c of children.splice(0)) {
    if (c.process.exitCode === null) c.process.kill('SIGKILL');
    await c.exited;
  }
  await world.reset();
});

const SECRET = 'process-wake-secret-0123456789abcdef';
const WAIT = { timeout: 20_000, interval: 20 };

async function driverProcess(wake: Record<string, unknown>): Promise<Child> {
  const path = join(world.dir, 'wake-driver.yml');
  writeFileSync(
    path,
    stringify({
      kubernetes: { accounts: [{ name: 'prod' }] },
      grpc: { host: '127.0.0.1' },
      auth: { tokens: [AGENT_TOKEN] },
      // Only a wake brings work within a test: the polls come once a minute.
      assignment: { pollIntervalMs: 60_000, fullReconcileIntervalMs: 600_000 },
      operations: { pollIntervalMs: 60_000 },
      wake,
    }),
  );
  const child = startChild(process.execPath, ['driver/main.ts', '--config', path], {
    cwd: root,
    env: { ...process.env, ...tableProcessEnv({ tableName: world.table.tableName, endpoint: world.tables.endpoint }), VENDOR_LOG_FORMAT: 'json', GRPC_PORT: '0', VENDOR_WAKE_SECRET: SECRET },
  });
  children.push(child);
  await Promise.race([
    child.line((l) => l.includes('"msg":"driver listening"')),
    child.exited.then((code) => {
      throw new Error(`driver exited with ${code}: ${[...child.stdout, ...child.stderr].join('\n')}`);
    }),
  ]);
  return child;
}

/** A raw agent of zone `z`, welcomed by the driver process `child` once it listens. */
async function welcomedAgent(child: Awaited<ReturnType<typeof driverProcess>>): Promise<RawAgent> {
  const port = (JSON.parse(await child.line((l) => l.includes('"msg":"driver listening"'))) as { port: number }).port;
  const agent = RawAgent.messages({ port, token: AGENT_TOKEN });
  agents.push(agent);
  agent.send({ hello: { protocolVersion: PROTOCOL_VERSION, agentId: 'raw', zone: 'z', agentVersion: '0' } });
  expect((await agent.next()).body).toBe('welcome');
  return agent;
}

describe('a driver process with wakes', () => {
  it('records its wake address with its sessions, and a PATCH reaches its agent through a wake instead of a poll', async () => {
    await world.fresh([{ name: 'prod' }]);
    const child = await driverProcess({ host: '127.0.0.1', port: 0 });
    const agent = await welcomedAgent(child);
    const [session] = await liveSessions(world.table, Date.now(), 'z');
    expect(session?.wake).toMatch(/^127\.0\.0\.1:\d+$/);

    const wakes = new WakeSender({ table: world.table, clock: systemClock, log: silentLogger(), secret: SECRET });
    const app = createApp({ table: world.table, clock: systemClock, auth: adminTokenAuth(), wakes });
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    expect((await app.request('/vendor/accounts', { method: 'POST', headers, body: JSON.stringify([{ name: 'prod', zoneId: 'z', kubeconfigFile: world.kubeconfig('prod') }]) })).status).toBe(200);
    expect((await app.request('/vendor/accounts', { method: 'PATCH', headers, body: JSON.stringify([{ name: 'prod', state: 'ACTIVE' }]) })).status).toBe(200);
    await vi.waitFor(async () => {
      const message = await agent.next();
      expect(message.body).toBe('assignAccount');
    }, WAIT);
    wakes.close();
  });

  it('with wake.enabled false records no address', async () => {
    await world.fresh([{ name: 'prod' }]);
    const child = await driverProcess({ enabled: false });
    const agent = await welcomedAgent(child);
    const [session] = await liveSessions(world.table, Date.now(), 'z');
    expect(session).toBeDefined();
    expect(session?.wake).toBeUndefined();
    expect(child.stdout.some((l) => l.includes('wake endpoint off'))).toBe(true);
  });

  it('a killed replica holding a result ask: the waiting GET falls back to the table and gets the result another replica wrote', async () => {
    await world.fresh([{ name: 'prod' }]);
    const child = await driverProcess({ host: '127.0.0.1', port: 0 });
    const agent = await welcomedAgent(child);
    await vi.waitFor(async () => expect((await liveSessions(world.table, Date.now(), 'z'))[0]?.wake).toBeDefined(), WAIT);

    // The API's reads of operation items, counted on its own client.
    let reads = 0;
    const client = createDocumentClient({ endpoint: world.tables.endpoint, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetItemCommand' && isOperationPartition((args.input as { Key?: { pk?: unknown } }).Key?.pk)) reads++;
        return next(args);
      },
      { step: 'initialize', name: 'countOperationReads' },
    );
    const wakes = new WakeSender({ table: world.table, clock: systemClock, log: silentLogger(), secret: SECRET });
    const app = createApp({ table: { client, tableName: world.table.tableName }, clock: systemClock, auth: adminTokenAuth(), wakes });
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    expect((await app.request('/vendor/accounts', { method: 'POST', headers, body: JSON.stringify([{ name: 'prod', zoneId: 'z', kubeconfigFile: world.kubeconfig('prod') }]) })).status).toBe(200);
    const request = { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } }] };
    const { record } = await createOperation(world.table, { account: 'prod', submittedBy: 'admin-token', idempotencyKey: 'k1', requestHash: requestHash('prod', request), request: compress(request), record: { action: 'deploy', objects: 1 }, now: Date.now() });

    const asked = vi.spyOn(wakes.results, 'listen');
    const waiting = app.request(`/vendor/operations/${record.id}?wait=30`, { headers });
    await vi.waitFor(() => expect(asked).toHaveBeenCalled(), WAIT);
    await new Promise((r) => setTimeout(r, 400));
    // The replica holds the ask: no read of the table since the GET's own.
    expect(reads).toBe(1);
    child.process.kill('SIGKILL');
    await child.exited;
    expect(await finishOperation(world.table, record.id, { state: 'SUCCEEDED', message: 'recorded by another replica' }, Date.now())).toBeDefined();
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: record.id, state: 'SUCCEEDED', message: 'recorded by another replica' });
    wakes.close();
  });
});
