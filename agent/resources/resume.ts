/**
 * The resume exchange with the driver: a `ResumeQuery` (best effort, so it is asked again when no
 * answer comes) and the driver's `ResumeInfo` with, per scope, the resourceVersion the table is
 * known to hold for the same API server, not older than `maxResumableResourceAgeMs`.
 */
import type { Clock } from '../../shared/clock.ts';
import type { ResumeInfo__Output } from '../../shared/protocol/messages.ts';
import { Waker } from '../../shared/waker.ts';
import type { WorkerHost } from '../accounts/account-worker.ts';

/** The default of `maxResumableResourceAgeMs` (docs/agent-config.md#per-account-kubernetesaccounts). */
export const DEFAULT_MAX_RESUMABLE_AGE_MS = 300_000;

/** Query ids are unique within the agent process, so an answer never reaches the wrong query. */
let lastQueryId = 0;

export class ResumeClient {
  readonly #host: WorkerHost;
  readonly #clock: Clock;
  readonly #account: string;
  readonly #cluster: string;
  readonly #retryMs: number;
  readonly #answers = new Map<number, (info: ResumeInfo__Output) => void>();
  readonly #waker = new Waker();

  constructor(options: { host: WorkerHost; clock: Clock; account: string; cluster: string; retryMs?: number }) {
    this.#host = options.host;
    this.#clock = options.clock;
    this.#account = options.account;
    this.#cluster = options.cluster;
    this.#retryMs = options.retryMs ?? 5000;
  }

  /** Asks until the driver answers; rejects only when `signal` aborts. */
  async query(cachingEpoch: number, maxAgeMs: number, signal: AbortSignal): Promise<ResumeInfo__Output> {
    for (;;) {
      signal.throwIfAborted();
      if (!this.#host.connected()) {
        await this.#waker.wait(this.#clock, this.#retryMs, signal);
        continue;
      }
      const queryId = ++lastQueryId;
      let answer: ResumeInfo__Output | undefined;
      this.#answers.set(queryId, (info) => {
        answer = info;
        this.#waker.wake();
      });
      try {
        // Sent or not (the stream may have just ended), the answer or the next stream wakes this up.
        this.#host.notify({
          kind: 'resumeQuery',
          body: { queryId, account: this.#account, cachingEpoch, maxAgeMs: maxAgeMs > 0 ? maxAgeMs : DEFAULT_MAX_RESUMABLE_AGE_MS, cluster: this.#cluster },
        });
        await this.#waker.wait(this.#clock, this.#retryMs, signal);
      } finally {
        this.#answers.delete(queryId);
      }
      if (answer !== undefined) return answer;
    }
  }

  /** A `ResumeInfo` arrived for this account. */
  handle(info: ResumeInfo__Output): void {
    this.#answers.get(info.queryId)?.(info);
  }

  /** A stream to the driver opened: a waiting query is sent now rather than at its next retry. */
  connected(): void {
    this.#waker.wake();
  }
}
