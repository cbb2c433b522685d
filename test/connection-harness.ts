/**
 * Starts real drivers and real agent connections on loopback for the connection tests, and keeps
 * what each agent saw (states, work) for the assertions. The drivers keep their sessions in a
 * dynalite table; instead of the assignment module they run one that records the answers agents
 * send, so these tests look at the connection alone.
 */
import { DriverConnection, type HelloContent } from '../agent/connection/connection.ts';
import type { DriverWork, StreamEnd } from '../agent/connection/driver-stream.ts';
import type { ConnectionSettings } from '../agent/connection/settings.ts';
import { parseDriverGrpcConfig } from '../driver/config.ts';
import type { DriverModuleFactory } from '../driver/handlers.ts';
import { startDriver, type Driver } from '../driver/server.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import type { AssignmentResult__Output, Welcome__Output } from '../shared/protocol/messages.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { captureLogger } from './capture-log.ts';
import { TestTables } from './support/table.ts';

export const TOKENS = ['agent-token-alpha-0001', 'agent-token-bravo-0002'] as const;

export interface RecordedResult {
  agentId: string;
  result: AssignmentResult__Output;
}

/** A driver module that records every assignment result it is sent. */
export function recordResults(into: RecordedResult[]): DriverModuleFactory {
  return () => ({
    name: 'recorder',
    handlers: { assignmentResult: ({ body }, session) => void into.push({ agentId: session.agentId, result: body }) },
  });
}

export interface TestDriver {
  driver: Driver;
  table: TableRef;
  results: RecordedResult[];
  logs: ReturnType<typeof captureLogger>;
}

export class Harness {
  readonly #cleanups: (() => unknown)[] = [];
  #tables = new TestTables();
  #tablesStarted: Promise<void> | undefined;

  async table(): Promise<TableRef> {
    if (this.#tablesStarted === undefined) {
      const tables = new TestTables();
      this.#tables = tables;
      this.#tablesStarted = tables.start();
      // Last, after the drivers using it have closed.
      this.#cleanups.unshift(async () => {
        this.#tablesStarted = undefined;
        await tables.close();
      });
    }
    await this.#tablesStarted;
    return this.#tables.fresh();
  }

  /** A driver on a free loopback port; pass `table` and `results` of an earlier one to play its restart. */
  async driver(
    config: Record<string, unknown> = {},
    options: { table?: TableRef; results?: RecordedResult[]; modules?: readonly DriverModuleFactory[] } = {},
  ): Promise<TestDriver> {
    const logs = captureLogger();
    const table = options.table ?? (await this.table());
    const results = options.results ?? [];
    const driver = await startDriver({
      config: parseDriverGrpcConfig({ auth: { tokens: [...TOKENS] }, ...config, grpc: { host: '127.0.0.1', port: 0, ...(config['grpc'] as object) } }),
      table,
      log: logs.log,
      modules: options.modules ?? [recordResults(results)],
    });
    this.#cleanups.push(() => driver.close(50));
    return { driver, table, results, logs };
  }

  agent(
    settings: ConnectionSettings,
    options: { clock?: Clock; agentId?: string; hello?: Partial<HelloContent>; onWork?: (w: DriverWork) => Promise<void> | void } = {},
  ): TestAgent {
    const logs = captureLogger();
    const states: ({ connected: true; welcome: Welcome__Output } | { connected: false; end: StreamEnd })[] = [];
    const work: DriverWork[] = [];
    const stop = new AbortController();
    const agentId = options.agentId ?? 'agent-1';
    const connection = new DriverConnection({
      settings,
      hello: () => ({ agentId, zone: 'vendor-agent_infra', agentVersion: '0.1.0', ...options.hello }),
      onWork: async (w) => {
        work.push(w);
        await options.onWork?.(w);
      },
      log: logs.log,
      clock: options.clock ?? systemClock,
      random: () => 0.5,
      onState: (s) => states.push(s),
    });
    const running = connection.start(stop.signal);
    this.#cleanups.push(async () => {
      stop.abort();
      await running;
    });
    return {
      connection,
      logs,
      states,
      work,
      stop: async () => {
        stop.abort();
        await running;
      },
      connectedCount: () => states.filter((s) => s.connected).length,
      lastEnd: () => {
        const ends = states.filter((s): s is { connected: false; end: StreamEnd } => !s.connected);
        return ends[ends.length - 1]?.end;
      },
    };
  }

  async cleanup(): Promise<void> {
    for (const c of this.#cleanups.splice(0).reverse()) await c();
  }
}

export interface TestAgent {
  connection: DriverConnection;
  logs: ReturnType<typeof captureLogger>;
  states: ({ connected: true; welcome: Welcome__Output } | { connected: false; end: StreamEnd })[];
  work: DriverWork[];
  stop(): Promise<void>;
  connectedCount(): number;
  lastEnd(): StreamEnd | undefined;
}

/** Settings for a plaintext driver on loopback. */
export function plain(port: number, extra: ConnectionSettings['driver'] = {}, rest: Omit<ConnectionSettings, 'driver'> = {}): ConnectionSettings {
  return { driver: { grpc: `127.0.0.1:${port}`, insecure: true, auth: { token: TOKENS[0] }, ...extra }, ...rest };
}
