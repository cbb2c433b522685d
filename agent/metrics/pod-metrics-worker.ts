/**
 * Pod metrics as an account worker: read and sent while this agent caches the account and its
 * `metrics` setting is true, under the caching epoch it holds.
 */
import type { AccountWorker, AccountWorkerFactory, HeldAccountView, WorkerHost } from '../accounts/account-worker.ts';
import type { Clock } from '../../shared/clock.ts';
import type { TaskBudget } from '../tasks/budget.ts';
import { PodMetricsLoop } from './pod-metrics.ts';

export class PodMetricsWorker implements AccountWorker {
  readonly #host: WorkerHost;
  readonly #clock: Clock;
  readonly #intervalMs: number | undefined;
  readonly #budget: TaskBudget | undefined;
  #running: { stop: AbortController; done: Promise<void>; shape: string; loop: PodMetricsLoop } | undefined;

  constructor(account: HeldAccountView, host: WorkerHost, deps: { clock: Clock; intervalMs?: number; budget?: TaskBudget }) {
    this.#host = host;
    this.#clock = deps.clock;
    this.#intervalMs = deps.intervalMs;
    this.#budget = deps.budget;
    this.update(account);
  }

  update(account: HeldAccountView): void {
    const wanted = account.caching && account.settings.metrics;
    const shape = JSON.stringify([account.cachingEpoch, account.settings.namespaces, account.settings.omitNamespaces]);
    if (wanted && this.#running?.shape === shape) return;
    if (this.#running !== undefined) void this.stop();
    if (!wanted) return;
    const stop = new AbortController();
    const loop = new PodMetricsLoop(account, {
      host: this.#host,
      clock: this.#clock,
      ...(this.#intervalMs === undefined ? {} : { intervalMs: this.#intervalMs }),
      ...(this.#budget === undefined ? {} : { budget: this.#budget }),
    });
    this.#running = { stop, done: loop.run(stop.signal), shape, loop };
  }

  connected(): void {
    this.#running?.loop.connected();
  }

  async stop(): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    running?.stop.abort();
    await running?.done;
  }
}

export function podMetricsWorkerFactory(options: { intervalMs?: number } = {}): AccountWorkerFactory {
  return (account, host, ctx) => new PodMetricsWorker(account, host, { clock: ctx.clock, budget: ctx.budget, ...options });
}
