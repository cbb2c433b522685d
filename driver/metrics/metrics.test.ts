import { afterEach, describe, expect, it, vi } from 'vitest';
import { captureLogger } from '../../test/capture-log.ts';
import { RawAgent, helloMessage } from '../../test/raw-agent.ts';
import { get } from '../../test/support/http.ts';
import { faultyTable } from '../../test/support/store-faults.ts';
import { useTestTables } from '../../test/support/table.ts';
import { VERSION } from '../../shared/version.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { appendChanges } from '../../shared/table/accounts/feed.ts';
import { FeedReader } from '../accounts/feed-reader.ts';
import { accountsModule } from '../accounts/module.ts';
import { parseDriverGrpcConfig, parseDriverFile } from '../config.ts';
import { startDriver, type DriverOptions } from '../server.ts';
import { createDriverMetrics, type DriverMetrics } from './metrics.ts';
import { recordOpenOperations, recordOperationEnd, recordResourceWrites } from './record.ts';
import { startDriverMetricsServer } from './server.ts';
import { tableErrorType } from './table.ts';

const TOKEN = 'token-number-one-0123';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const tables = useTestTables();

/** The value of one series, 0 when it is absent. */
async function value(metrics: DriverMetrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l) && Object.keys(v.labels).length >= Object.keys(labels).length);
  return match?.value ?? 0;
}

/** The value of one sample as the endpoint writes it (`name{labels}`), undefined when absent. */
async function sample(metrics: DriverMetrics, series: string): Promise<number | undefined> {
  const line = (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function driver(overrides: Partial<DriverOptions> = {}) {
  const table = overrides.table ?? (await tables.fresh());
  const d = await startDriver({
    config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN], identities: [{ name: 'edge', zones: ['*'], agentIds: ['*'], tokens: ['edge-token-0123456789'] }] } }),
    table,
    log: captureLogger().log,
    modules: [accountsModule],
    ...overrides,
  });
  cleanups.push(() => d.close(100));
  return d;
}

function agent(port: number, token: string | null = TOKEN): RawAgent {
  const a = RawAgent.messages({ port, ...(token === null ? {} : { token }) });
  cleanups.push(() => a.close());
  return a;
}

describe('driver metrics endpoint', () => {
  it('serves the registry on /metrics with the build info, 404 elsewhere, 405 for other methods', async () => {
    const metrics = createDriverMetrics();
    const server = await startDriverMetricsServer({ registry: metrics.registry, host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const answer = await get(`${server.url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toContain('text/plain');
    expect(answer.text).toContain(`\nvendor_driver_build_info{version="${VERSION}"} 1\n`);
    expect(answer.text).toMatch(/\nprocess_resident_memory_bytes \d+/);
    expect((await get(`${server.url}/`)).status).toBe(404);
    expect((await get(`${server.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('says which address it could not bind', async () => {
    const metrics = createDriverMetrics();
    const first = await startDriverMetricsServer({ registry: metrics.registry, host: '127.0.0.1', port: 0 });
    cleanups.push(() => first.close());
    const port = Number(new URL(first.url).port);
    await expect(startDriverMetricsServer({ registry: metrics.registry, host: '127.0.0.1', port })).rejects.toThrow(`cannot serve metrics on 127.0.0.1:${port}: EADDRINUSE`);
  });

  it('the metrics section of vendor-driver.yml: off by default, port 9464 on every interface, bad values named', () => {
    expect(parseDriverFile('kubernetes: { accounts: [] }\n', 'f.yml').metrics).toBeUndefined();
    expect(parseDriverFile('metrics: {}\n', 'f.yml').metrics).toEqual({ enabled: false, host: '0.0.0.0', port: 9464 });
    expect(parseDriverFile('metrics: { enabled: true, host: 127.0.0.1, port: 0 }\n', 'f.yml').metrics).toEqual({ enabled: true, host: '127.0.0.1', port: 0 });
    expect(() => parseDriverFile('metrics: { port: 70000 }\n', 'f.yml')).toThrow(/metrics\.port/);
    expect(() => parseDriverFile('metrics: { path: /x }\n', 'f.yml')).toThrow(/metrics/);
  });
});

describe('driver metrics: streams and sessions', () => {
  it('counts sessions by zone and identity while they are open, and streams by how they ended', async () => {
    const d = await driver();
    const a = agent(d.port);
    a.send(helloMessage('agent-1', { zone: 'vendor-agent_eu' }));
    expect((await a.next()).body).toBe('welcome');
    const b = agent(d.port, 'edge-token-0123456789');
    b.send(helloMessage('agent-2', { zone: 'vendor-agent_us' }));
    expect((await b.next()).body).toBe('welcome');
    expect(await value(d.metrics, 'vendor_driver_streams_opened_total')).toBe(2);
    expect(await value(d.metrics, 'vendor_driver_sessions', { zone: 'vendor-agent_us', identity: 'edge' })).toBe(1);
    expect(await value(d.metrics, 'vendor_driver_sessions', { zone: 'vendor-agent_eu' })).toBe(1);
    b.close();
    await vi.waitFor(async () => expect(await value(d.metrics, 'vendor_driver_streams_closed_total', { cause: 'agent_closed' })).toBe(1));
    expect(await value(d.metrics, 'vendor_driver_sessions', { zone: 'vendor-agent_us', identity: 'edge' })).toBe(0);
    // A second hello is a protocol error: the driver ends the stream with that code.
    a.send(helloMessage('agent-1', { zone: 'vendor-agent_eu' }));
    await a.status;
    await vi.waitFor(async () => expect(await value(d.metrics, 'vendor_driver_streams_closed_total', { cause: 'protocol_error' })).toBe(1));
  });

  it('counts refused streams by error code, with no session', async () => {
    const d = await driver();
    await agent(d.port, 'not-a-token-of-this-driver').status;
    await agent(d.port, null).status;
    expect(await value(d.metrics, 'vendor_driver_streams_refused_total', { code: 'unauthenticated' })).toBe(2);
    expect(await value(d.metrics, 'vendor_driver_streams_opened_total')).toBe(0);
  });
});

describe('driver metrics: the table', () => {
  it('times every try and counts throttled tries by operation, also when the retry succeeds', async () => {
    const table = await tables.fresh();
    const faulty = await faultyTable(table, { maxAttempts: 3 });
    cleanups.push(() => faulty.faults.close());
    const d = await driver({ table: faulty.table });
    faulty.faults.set({ kind: 'error', name: 'ThrottlingException' }, { only: ['PutItem', 'TransactWriteItems', 'UpdateItem'], times: 1 });
    const a = agent(d.port);
    a.send(helloMessage('agent-1'));
    expect((await a.next()).body).toBe('welcome');
    const throttled = faulty.faults.attempts.find((t) => t.fault !== undefined);
    expect(throttled).toBeDefined();
    expect(await value(d.metrics, 'vendor_driver_table_errors_total', { operation: throttled!.operation, type: 'throttled' })).toBe(1);
    expect(await sample(d.metrics, `vendor_driver_table_request_duration_seconds_count{operation="${throttled!.operation}"}`)).toBeGreaterThanOrEqual(2);
  });

  it('names the kind of failure', () => {
    expect(tableErrorType({ name: 'ProvisionedThroughputExceededException' })).toBe('throttled');
    expect(tableErrorType({ name: 'InternalServerError', $fault: 'server' })).toBe('unavailable');
    expect(tableErrorType({ name: 'ConditionalCheckFailedException', $fault: 'client' })).toBe('refused');
  });
});

describe('driver metrics: assignment', () => {
  it('hears how long after its write each work-feed entry is first read, once per entry', async () => {
    const table = await tables.fresh();
    const clock = new ManualClock(1_700_000_000_000);
    const lags: number[] = [];
    const feed = new FeedReader(table, clock, 2_000, (lag) => lags.push(lag));
    await appendChanges(table, [{ name: 'prod', action: 'assign', generation: 1, at: clock.now() }]);
    await clock.advance(750);
    expect(await feed.poll()).toEqual(['prod']);
    expect(await feed.poll()).toEqual([]);
    expect(lags).toEqual([750]);
  });
});

describe('driver metrics: operations and resource writes', () => {
  it('open operations by state, and finished ones with their duration', async () => {
    const metrics = createDriverMetrics();
    recordOpenOperations(metrics, [{ state: 'QUEUED' }, { state: 'QUEUED' }, { state: 'RUNNING' }]);
    expect(await value(metrics, 'vendor_driver_operations_open', { state: 'QUEUED' })).toBe(2);
    recordOpenOperations(metrics, []);
    expect(await value(metrics, 'vendor_driver_operations_open', { state: 'QUEUED' })).toBe(0);
    recordOperationEnd(metrics, { state: 'SUCCEEDED', createdAt: 1_000, finishedAt: 4_000 }, 9_000);
    expect(await value(metrics, 'vendor_driver_operations_finished_total', { state: 'SUCCEEDED' })).toBe(1);
    expect(await sample(metrics, 'vendor_driver_operation_duration_seconds_sum{state="SUCCEEDED"}')).toBe(3);
  });

  it('resource writes and their lag', async () => {
    const metrics = createDriverMetrics();
    recordResourceWrites(metrics, [100, 2_000]);
    expect(await value(metrics, 'vendor_driver_resource_objects_written_total')).toBe(2);
    expect(await sample(metrics, 'vendor_driver_resource_write_lag_seconds_sum')).toBe(2.1);
  });
});
