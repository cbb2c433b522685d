/**
 * Runs tasks one at a time per key (an account name), in the order they were asked for, and tasks
 * of different keys side by side. The tail of each key's chain is dropped once it runs dry, so the
 * map holds only keys with work in flight.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  get size(): number {
    return this.#tails.size;
  }
}
