/**
 * At most `n` tasks at once; the rest wait their turn in order. The answers of all of a replica's
 * streams go through one of these, so agents answering side by side (driver/keyed-serial.ts) add no
 * more table requests at once than the replica's `concurrency` of settles: a table that is already
 * slow gets a queue in the replica rather than requests that time out and come back.
 */
export class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(n: number) {
    this.#free = n;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next === undefined) this.#free++;
      else next();
    }
  }
}
