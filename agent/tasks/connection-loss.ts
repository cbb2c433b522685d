/**
 * When the agent's tasks stop because the connection to the driver is lost, and when they start
 * again (docs/agent-config.md#task-budgets). A stream that ends is not yet a lost connection: the
 * agent dials again after `kubernetes.reconnectTimeoutMs`, and the driver keeps what the agent holds
 * for its hand-over grace, so a reconnect within a short outage changes nothing and the tasks run on.
 * The connection counts as lost once no stream has been welcomed for the lease of the last welcome
 * (`Welcome.lease_ms`, 30 s by default): the span after which the driver itself gives up a silent
 * session. Then every task stops; at the next welcome they start again.
 */
import type { Clock } from '../../shared/clock.ts';

/** The grace when a welcome carries no lease (the driver's default lease). */
export const DEFAULT_LOSS_GRACE_MS = 30_000;

export interface ConnectionLossDeps {
  clock: Clock;
  /** No stream for the whole grace: stop every task. */
  onLost(): void;
  /** A stream is welcomed after the connection was lost: start the tasks again. */
  onBack(): void;
}

export class ConnectionLoss {
  readonly #deps: ConnectionLossDeps;
  #graceMs = DEFAULT_LOSS_GRACE_MS;
  #timer: AbortController | undefined;
  #lost = false;
  #connected = false;

  constructor(deps: ConnectionLossDeps) {
    this.#deps = deps;
  }

  /** Whether the tasks are stopped for a lost connection. */
  get lost(): boolean {
    return this.#lost;
  }

  /** How long a stream may be down before the connection counts as lost. */
  get graceMs(): number {
    return this.#graceMs;
  }

  /** A stream was welcomed; `leaseMs` is its lease (0 when the driver gave none). */
  connected(leaseMs: number): void {
    this.#connected = true;
    this.#graceMs = leaseMs > 0 ? leaseMs : DEFAULT_LOSS_GRACE_MS;
    this.#cancel();
    if (!this.#lost) return;
    this.#lost = false;
    this.#deps.onBack();
  }

  /** The stream ended (or a dial failed). Only the first end after a welcome starts the grace. */
  disconnected(): void {
    if (!this.#connected) return;
    this.#connected = false;
    this.#cancel();
    const timer = new AbortController();
    this.#timer = timer;
    this.#deps.clock.sleep(this.#graceMs, timer.signal).then(
      () => {
        if (this.#timer !== timer) return;
        this.#timer = undefined;
        this.#lost = true;
        this.#deps.onLost();
      },
      () => undefined,
    );
  }

  /** The agent stops: no more calls. */
  stop(): void {
    this.#cancel();
  }

  #cancel(): void {
    this.#timer?.abort();
    this.#timer = undefined;
  }
}
