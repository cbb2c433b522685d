/**
 * The agent as its container runs it (`node agent/main.ts`), against a real driver and the test
 * Kubernetes API server: readiness, metrics that move with what it does, log lines, and SIGTERM.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { accountsModule } from '../../driver/accounts/module.ts';
import { parseDriverGrpcConfig } from '../../driver/config.ts';
import type { DriverModuleFactory } from '../../driver/handlers.ts';
import { DRIVER_MODULES } from '../../driver/modules.ts';
import { startDriver, type Driver } from '../../driver/server.ts';
import { get } from '../support/http.ts';
import { startChild, type Child } from '../support/process.ts';
import { AGENT_TOKEN, FAST_ASSIGNMENT, WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();
const root = fileURLToPath(new URL('../..', import.meta.url));
const AGENT_ID = 'process-agent';

/**
 * A driver whose assignment module holds every agent answer until `release()`, so the answer is
 * still waiting for its acknowledgement when the agent is told to stop.
 */
async function holdingDriver(events: string[]): Promise<{ driver: Driver; release(): void }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const holding: DriverModuleFactory = (services) => {
    const inner = accountsModule(services);
    const record = inner.handlers?.assignmentResult;
    if (record === undefined) throw new Error('the assignment module takes assignment results');
    return {
      ...inner,
      handlers: {
        assignmentResult: async (message, session) => {
          events.push('answer received');
          await gate;
          await record(message, session);
          events.push('answer acknowledged');
        },
      },
      onSessionClose: (session, reason) => {
        inner.onSessionClose?.(session, reason);
        events.push('stream ended');
      },
    };
  };
  const driver = await startDriver({
    config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [AGENT_TOKEN] }, assignment: FAST_ASSIGNMENT }),
    table: world.table,
    log: world.driverLogs.log,
    modules: DRIVER_MODULES.map((m) => (m === accountsModule ? holding : m)),
  });
  return { driver, release };
}

function startAgentProcess(driver: Driver): Child {
  const path = join(world.dir, `${AGENT_ID}.yml`);
  writeFileSync(
    path,
    stringify({
      driver: { grpc: `127.0.0.1:${driver.port}`, insecure: true, auth: { token: AGENT_TOKEN } },
      server: { host: '127.0.0.1', port: 0 },
      prometheus: { enabled: true, port: 0 },
      logging: { format: 'json' },
      kubernetes: {
        reconnectTimeoutMs: 50,
        retries: { enabled: true, maxRetries: 3, backOffMs: 10 },
        accounts: [{ name: 'prod', kubeConfigFile: world.kubeconfig('prod') }],
      },
    }),
  );
  const env = { ...process.env, VENDOR_AGENT_ID: AGENT_ID, VENDOR_DEPLOYMENT_NAME: 'vendor-agent', POD_NAMESPACE: 'infra' };
  return startChild(process.execPath, ['agent/main.ts', '--config', path], { cwd: root, env });
}

const urlOf = async (child: Child, msg: string) => (JSON.parse(await child.line((l) => l.includes(`"msg":"${msg}"`))) as { url: string }).url;
const records = (child: Child) => child.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the agent process (node agent/main.ts)', () => {
  it('is ready once welcomed, its metrics move, and SIGTERM delivers the answer still queued before it exits 0', async () => {
    await world.fresh([]);
    const events: string[] = [];
    const { driver, release } = await holdingDriver(events);
    // The first cluster check times out once: kubernetes.retries tries it again.
    world.kube.faults.fail({ path: '/version' }, 504, 1, { message: 'Timeout: request did not complete within requested timeout' });
    const child = startAgentProcess(driver);
    try {
      const health = await urlOf(child, 'health server listening');
      const metrics = await urlOf(child, 'metrics server listening');
      await vi.waitFor(() => expect(events).toContain('answer received'), WAIT);

      const ready = await get(`${health}/readyz`);
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.text).checks).toMatchObject({ config: { ok: true }, driver: { ok: true } });
      const scraped = (await get(`${metrics}/metrics`)).text;
      expect(scraped).toContain('vendor_agent_driver_connected 1');
      expect(scraped).toContain('vendor_agent_driver_reconnects_total 0');
      expect(scraped).toContain('vendor_agent_accounts{state="ACTIVE"} 1');
      expect(scraped).toContain('vendor_agent_retries_total{target="kubernetes",account="prod"} 1');
      expect(scraped).toMatch(/\nprocess_resident_memory_bytes \d+/);

      child.process.kill('SIGTERM');
      // The account holder has stopped; the connection now waits for the driver's acknowledgement.
      await child.line((l) => l.includes('"msg":"account no longer held: the agent is stopping"'));
      release();
      expect(await child.exited).toBe(0);
      // The driver learns of the stream's end on its own time, which may come after the process's exit is seen.
      await vi.waitFor(() => expect(events).toEqual(['answer received', 'answer acknowledged', 'stream ended']), WAIT);
      expect((await world.record('prod'))?.agents[AGENT_ID]).toMatchObject({ ok: true });

      const lines = records(child);
      expect(lines.map((l) => l['msg'])).not.toContain('stopping with responses the driver has not acknowledged');
      expect(lines.at(-1)).toMatchObject({ msg: 'agent stopped' });
      // Every line names the agent; every line about the account names it.
      expect(lines.filter((l) => l['agentId'] !== AGENT_ID)).toEqual([]);
      const aboutProd = lines.filter((l) => /account (held|no longer held)/.test(String(l['msg'])));
      expect(aboutProd.length).toBeGreaterThanOrEqual(2);
      expect(aboutProd.filter((l) => l['account'] !== 'prod')).toEqual([]);
    } finally {
      release();
      child.process.kill('SIGKILL');
      // Closed before the world's table, so none of its modules writes to a table that is gone.
      await driver.close(100);
    }
  });

  it('on SIGTERM, waits a bounded time for a driver that never acknowledges, then exits 0 anyway', async () => {
    await world.fresh([]);
    const events: string[] = [];
    const { driver, release } = await holdingDriver(events);
    const child = startAgentProcess(driver);
    try {
      await vi.waitFor(() => expect(events).toContain('answer received'), WAIT);
      child.process.kill('SIGTERM');
      expect(await child.exited).toBe(0);
      expect(records(child).find((l) => l['msg'] === 'stopping with responses the driver has not acknowledged')).toMatchObject({
        level: 'warn',
        timeoutMs: 5000,
        agentId: AGENT_ID,
      });
    } finally {
      release();
      child.process.kill('SIGKILL');
      // Closed before the world's table, so none of its modules writes to a table that is gone.
      await driver.close(100);
    }
  });
});
