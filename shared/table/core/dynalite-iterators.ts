/**
 * Closes the store iterators dynalite leaves open (docs/table.md#memory-of-the-embedded-table).
 *
 * dynalite reads every Query and Scan page, and the key lists it walks, through a stream over an
 * iterator of its level store, and closes that iterator, when the stream ends or is dropped at the
 * page's limit, by calling `iterator.return()`. The iterators of abstract-level 3 (memory-level, and
 * classic-level under a data folder) have no `return()`; they have `close()`. So every read left its
 * iterator open, and an open iterator stays referenced by its store (which closes it with the store)
 * and keeps the snapshot of the data it was opened on: the in-memory store's tree as it was then, with
 * every item version it held, or LevelDB's snapshot. The table's memory grew with every write that
 * came between two reads, for as long as the process ran.
 *
 * dynalite builds its store in `dynalite/db`'s `create`, which it calls through that module's exports;
 * wrapping it there gives each store's `keys()` and `values()` iterators the missing `return()`.
 */
import { createRequire } from 'node:module';

interface StoreIterator {
  close(): Promise<void>;
  return?: () => Promise<void>;
}

interface LevelStore {
  keys(options?: unknown): StoreIterator;
  values(options?: unknown): StoreIterator;
}

interface DynaliteDbModule {
  create(options: unknown): { db: LevelStore };
}

const wrapped = Symbol('vendor.closesIterators');
let open = 0;

/** Iterators of the process's dynalite stores opened and not yet closed: 0 between requests. */
export function openDynaliteIterators(): number {
  return open;
}

/** Makes every dynalite store created from now on close its iterators; idempotent. */
export function closeDynaliteIterators(): void {
  const db = createRequire(import.meta.url)('dynalite/db/index.js') as DynaliteDbModule & { [wrapped]?: true };
  if (db[wrapped]) return;
  db[wrapped] = true;
  const create = db.create;
  db.create = (options) => {
    const store = create(options);
    for (const method of ['keys', 'values'] as const) {
      const original = store.db[method].bind(store.db);
      store.db[method] = (opts) => closable(original(opts));
    }
    return store;
  };
}

function closable(iterator: StoreIterator): StoreIterator {
  open++;
  const close = iterator.close.bind(iterator);
  let closing: Promise<void> | undefined;
  iterator.close = () => {
    if (closing === undefined) {
      closing = close();
      open--;
    }
    return closing;
  };
  iterator.return = () => iterator.close();
  return iterator;
}
