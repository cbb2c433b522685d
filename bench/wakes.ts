/**
 * `node bench/wakes.ts`: how long a hand-off from the API to the driver takes in the deployed layout
 * (the table and two driver replicas each in a process of their own, the API in this one), with the
 * replicas taking wakes and with wakes off (`wake.enabled: false`: polling alone, every 250 ms, the
 * default). Two protocol agents of one zone, one per replica, answer at once. Measured: from the
 * PATCH to ACTIVE until both agents have the account, and from an operation's POST until an agent
 * has it. Between rounds a random pause (0–300 ms), so rounds do not fall in step with the polls.
 * Prints one JSON line per mode. BENCH_ROUNDS (default 60) rounds of each.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DriverConnection } from '../agent/connection/connection.ts';
import { createApp } from '../functions/app.ts';
import { createApiAuth } from '../functions/auth/authenticator.ts';
import { WakeSender } from '../functions/wake/sender.ts';
import { systemClock } from '../shared/clock.ts';
import { createLogger } from '../shared/log.ts';
import { liveSessions } from '../shared/table/agents/sessions.ts';
import { syncSource } from '../shared/table/sources/sync.ts';
import { percentile, round } from './stats.ts';
import { loadAverage, startBenchTable, startDriverProcess, until } from './support.ts';

const TOKEN = 'bench-agent-token-000000000001';
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef-0123';
const SECRET = 'bench-wake-secret-0123456789abcdef-0123';
const ZONE = 'bench_zone';
const quiet = createLogger({ level: 'silent' });
const rounds = Number(process.env.BENCH_ROUNDS ?? 60);

type Arrival = (key: string) => void;

function agent(port: number, agentId: string, signal: AbortSignal, arrived: Arrival): DriverConnection {
  const connection: DriverConnection = new DriverConnection({
    settings: { driver: { grpc: `127.0.0.1:${port}`, insecure: true, auth: { token: TOKEN } }, kubernetes: { reconnectTimeoutMs: 1000 } },
    hello: () => ({ agentId, zone: ZONE, agentVersion: 'bench' }),
    onWork: (w) => {
      if (w.kind === 'assignAccount') {
        arrived(`assign:${w.body.account}:${agentId}`);
        void connection.respond({ kind: 'assignmentResult', body: { account: w.body.account, generation: w.body.generation, ok: true, message: 'bench' } });
      }
      if (w.kind === 'operation') {
        arrived(`operation:${w.body.operationId}`);
        void connection.respond({ kind: 'operationResult', body: { operationId: w.body.operationId, account: w.body.account, attempt: w.body.attempt, ok: true, message: 'bench', outcomes: [] } });
      }
    },
    log: quiet,
  });
  void connection.start(signal);
  return connection;
}

const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50_ms: round(percentile(s, 50), 1), p95_ms: round(percentile(s, 95), 1), p99_ms: round(percentile(s, 99), 1), max_ms: round(s[s.length - 1] ?? 0, 1) };
};

async function run(wakes: boolean): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wakes-'));
  const store = await startBenchTable('process');
  const table = store.client();
  const names = Array.from({ length: rounds }, (_, i) => `acct-${String(i).padStart(4, '0')}`);
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, names.map((name) => ({ name })), Date.now());
  process.env.VENDOR_WAKE_SECRET = SECRET;
  const drivers = [];
  for (const name of ['one', 'two']) {
    const path = join(dir, `${name}.yml`);
    writeFileSync(path, stringify({ kubernetes: { accounts: names.map((n) => ({ name: n })) }, grpc: { host: '127.0.0.1' }, auth: { tokens: [TOKEN] }, wake: { enabled: wakes, host: '127.0.0.1', port: 0 } }));
    drivers.push(await startDriverProcess(store, path));
  }
  const stop = new AbortController();
  const arrivals = new Map<string, number>();
  const arrived: Arrival = (key) => void (arrivals.has(key) || arrivals.set(key, performance.now()));
  drivers.forEach((d, i) => agent(d.port, `agent-${i + 1}`, stop.signal, arrived));
  for (;;) {
    if ((await liveSessions(table, Date.now(), ZONE)).length === 2) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const sender = wakes ? new WakeSender({ table, clock: systemClock, log: quiet, secret: SECRET }) : undefined;
  const app = createApp({ table, clock: systemClock, auth: createApiAuth({ adminToken: ADMIN_TOKEN, accountManagerRoles: [] }, { production: false }), ...(sender === undefined ? {} : { wakes: sender }) });
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await app.request(path, { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  await call('POST', '/vendor/accounts', names.map((name) => ({ name, zoneId: ZONE })));
  const pause = () => new Promise((r) => setTimeout(r, Math.random() * 300));
  const activation: number[] = [];
  for (const name of names) {
    await pause();
    const t0 = performance.now();
    await call('PATCH', '/vendor/accounts', [{ name, state: 'ACTIVE' }]);
    await until(() => arrivals.has(`assign:${name}:agent-1`) && arrivals.has(`assign:${name}:agent-2`), 30_000, `${name} at both agents`);
    activation.push(Math.max(arrivals.get(`assign:${name}:agent-1`) as number, arrivals.get(`assign:${name}:agent-2`) as number) - t0);
  }
  // Both agents hold every account from here on: operations go to either.
  await new Promise((r) => setTimeout(r, 1000));
  const operation: number[] = [];
  for (let i = 0; i < rounds; i++) {
    await pause();
    const t0 = performance.now();
    const op = await call('POST', `/vendor/accounts/${names[i % names.length]}/operations`, { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'default' } }] }, { 'Idempotency-Key': `bench-${i}` });
    await until(() => arrivals.has(`operation:${String(op.id)}`), 30_000, `operation ${String(op.id)} at an agent`);
    operation.push((arrivals.get(`operation:${String(op.id)}`) as number) - t0);
  }
  stop.abort();
  sender?.close();
  for (const d of drivers) await d.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { bench: 'wakes', wakes: wakes ? 'on' : 'off', pollIntervalMs: 250, patchToAgents: summary(activation), operationToAgent: summary(operation) };
}

const load = loadAverage();
for (const mode of (process.env.BENCH_WAKES ?? 'on,off').split(',')) {
  const line = await run(mode === 'on');
  process.stdout.write(`${JSON.stringify({ ...line, loadAverageStart: load, loadAverageEnd: loadAverage() })}\n`);
}
process.exit(0);
