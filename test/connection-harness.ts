/**
 * Starts real drivers and real agent connections on loopback for the connection tests, and keeps
 * what each agent saw (states, work) for the assertions.
 */
import { DriverConnection, type HelloContent } from '../agent/connection/connection.ts';
import type { DriverWork, StreamEnd } from '../agent/connection/driver-stream.ts';
import type { ConnectionSettings } from '../agent/connection/settings.ts';
import { parseDriverGrpcConfig } from '../driver/config.ts';
import { MemorySessionStore } from '../driver/memory-session-store.ts';
import { startDriver, type Driver } from '../driver/server.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import type { Welcome__Output } from '../shared/protocol/messages.ts';
import { captureLogger } from './capture-log.ts';

export const TOKENS = ['agent-token-alpha-0001', 'agent-token-bravo-0002'] as const;

export interface TestDriver {
  driver: Driver;
  store: MemorySessionStore;
  logs: ReturnType<typeof captureLogger>;
}

export class Harness {
  readonly #cleanups: (() => unknown)[] = [];

  async driver(config: Record<string, unknown> = {}, store = new MemorySessionStore()): Promise<TestDriver> {
    const logs = captureLogger();
    const driver = await startDriver({
      config: parseDriverGrpcConfig({ auth: { tokens: [...TOKENS] }, ...config, grpc: { host: '127.0.0.1', port: 0, ...(config['grpc'] as object) } }),
      store,
      log: logs.log,
    });
    this.#cleanups.push(() => driver.close(50));
    return { driver, store, logs };
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
