/**
 * Runs a stream's message handlers one at a time in arrival order. When too many wait, the
 * stream stops reading (`pause`) until the queue drains to the low-water mark (`resume`), so a
 * slow handler pushes back on the peer through HTTP/2 flow control instead of filling memory.
 */
export class SerialQueue {
  #tail: Promise<void> = Promise.resolve();
  #depth = 0;
  #stopped = false;
  readonly #onError: (error: unknown) => void;
  readonly #flow: { pause(): void; resume(): void };
  readonly #highWater: number;
  readonly #lowWater: number;

  constructor(options: {
    onError: (error: unknown) => void;
    flow: { pause(): void; resume(): void };
    highWater?: number;
    lowWater?: number;
  }) {
    this.#onError = options.onError;
    this.#flow = options.flow;
    this.#highWater = options.highWater ?? 64;
    this.#lowWater = options.lowWater ?? 16;
  }

  push(task: () => Promise<void> | void): void {
    if (++this.#depth === this.#highWater) this.#flow.pause();
    this.#tail = this.#tail
      .then(() => (this.#stopped ? undefined : task()))
      .catch((e: unknown) => {
        if (!this.#stopped) this.#onError(e);
      })
      .finally(() => {
        if (--this.#depth === this.#lowWater) this.#flow.resume();
      });
  }

  /** Tasks not yet started will not run. */
  stop(): void {
    this.#stopped = true;
  }
}
