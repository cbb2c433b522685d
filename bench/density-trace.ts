/**
 * Where the time of `bench:density`'s first full sync goes (`BENCH_TRACE=1`): the driver's handling
 * of each agent message kind (how long each took until done, how many ran at once), and the agent's own
 * timeline from its log (connected, accounts held, caching role, scopes started), each as ms after
 * the agent was spawned.
 */
import type { AgentMessageHandlers, DriverModuleFactory, HandledKind } from '../driver/handlers.ts';
import { CapacityMeter } from '../shared/table/core/capacity.ts';
import { round } from './stats.ts';
import { ownCpuMs, procStats, type Line } from './support.ts';

interface KindFigures {
  n: number;
  totalMs: number;
  maxMs: number;
  /** The most handlers of this kind running at one time. */
  maxAtOnce: number;
  running: number;
}

/** Counts the time every handler of `modules` takes, by message kind. */
export class HandlerTrace {
  readonly #kinds = new Map<string, KindFigures>();
  /** The driver's table requests, by operation. */
  readonly meter = new CapacityMeter();

  wrap(modules: readonly DriverModuleFactory[]): DriverModuleFactory[] {
    return modules.map((factory) => (services) => {
      const module = factory(services);
      if (module.handlers === undefined) return module;
      const handlers: Record<string, unknown> = {};
      for (const [kind, handler] of Object.entries(module.handlers) as [HandledKind, (m: unknown, s: unknown) => unknown][]) {
        handlers[kind] = async (message: unknown, session: unknown): Promise<unknown> => {
          const f = this.#of(kind);
          const started = performance.now();
          f.running++;
          f.maxAtOnce = Math.max(f.maxAtOnce, f.running);
          try {
            const result = await handler(message, session);
            // A message taken off the stream and finished later (driver/agent-session.ts) counts until done.
            const later = (result as { done?: Promise<void> } | undefined)?.done;
            if (later !== undefined) void later.catch(() => undefined).finally(() => this.#end(f, started));
            else this.#end(f, started);
            return result;
          } catch (e) {
            this.#end(f, started);
            throw e;
          }
        };
      }
      return { ...module, handlers: handlers as AgentMessageHandlers };
    });
  }

  #end(f: KindFigures, started: number): void {
    f.running--;
    const ms = performance.now() - started;
    f.n++;
    f.totalMs += ms;
    f.maxMs = Math.max(f.maxMs, ms);
  }

  figures(): Record<string, { n: number; total_ms: number; mean_ms: number; max_ms: number; max_at_once: number }> {
    const out: Record<string, { n: number; total_ms: number; mean_ms: number; max_ms: number; max_at_once: number }> = {};
    for (const [kind, f] of this.#kinds) {
      out[kind] = { n: f.n, total_ms: round(f.totalMs), mean_ms: round(f.totalMs / Math.max(1, f.n)), max_ms: round(f.maxMs), max_at_once: f.maxAtOnce };
    }
    return out;
  }

  #of(kind: string): KindFigures {
    let f = this.#kinds.get(kind);
    if (f === undefined) this.#kinds.set(kind, (f = { n: 0, totalMs: 0, maxMs: 0, maxAtOnce: 0, running: 0 }));
    return f;
  }
}

/** First, median and last of a list of times. */
function spread(times: number[]): { n: number; first_ms: number; half_ms: number; last_ms: number } | undefined {
  if (times.length === 0) return undefined;
  const sorted = [...times].sort((a, b) => a - b);
  return { n: sorted.length, first_ms: round(sorted[0]!), half_ms: round(sorted[Math.floor(sorted.length / 2)]!), last_ms: round(sorted[sorted.length - 1]!) };
}

/** The agent's log records (JSON, level info) as a timeline after `spawnedAt` (epoch ms). */
export function agentTimeline(lines: readonly Line[], spawnedAt: number): Record<string, unknown> {
  const at = (l: Line) => Date.parse(String(l['time'])) - spawnedAt;
  const when = (match: (msg: string) => boolean) => lines.filter((l) => typeof l['msg'] === 'string' && match(l['msg'])).map(at);
  return {
    connected: spread(when((m) => m === 'connected to the driver')),
    account_held: spread(when((m) => m === 'account held')),
    caching_role: spread(when((m) => m === 'caching role changed')),
    scopes_started: spread(when((m) => /^caching \d+ scopes$/.test(m))),
    not_accepted_yet: spread(when((m) => m.startsWith('the driver does not accept this agent'))),
    warnings: lines.filter((l) => l['level'] === 'warn').length,
  };
}

/** CPU (ms) of the processes of the run since `start()`: this one (the driver and the bench), the table, the cluster hosts. */
export class CpuSplit {
  readonly #pids: Record<string, number[]>;
  #from: Record<string, number> = {};

  constructor(pids: Record<string, number[]>) {
    this.#pids = pids;
  }

  start(): void {
    this.#from = this.#now();
  }

  since(): Record<string, number> {
    const now = this.#now();
    return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, round(v - (this.#from[k] ?? 0))]));
  }

  #now(): Record<string, number> {
    const out: Record<string, number> = { driver_and_bench: ownCpuMs() };
    for (const [name, pids] of Object.entries(this.#pids)) out[name] = pids.reduce((n, pid) => n + procStats(pid).cpuTicks * 10, 0);
    return out;
  }
}
