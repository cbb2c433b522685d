/**
 * Two repairs to the level store dynalite keeps the table in, without which the table's memory grows
 * with every write for as long as the process runs (docs/table.md#memory-of-the-embedded-table).
 *
 * Open iterators. dynalite reads every Query and Scan page, and the key lists it walks, through a
 * stream over an iterator of its store, and closes that iterator, when the stream ends or is dropped at
 * the page's limit, by calling `iterator.return()`. The iterators of abstract-level 3 (memory-level, and
 * classic-level under a data folder) have no `return()`; they have `close()`. So every read left its
 * iterator open, and an open iterator stays referenced by its store (which closes it with the store)
 * and keeps the snapshot of the data it was opened on: the in-memory store's tree as it was then, with
 * every item version it held, or LevelDB's snapshot.
 *
 * Pinned buffer slabs. The in-memory store keeps each key and value as the Buffer its encoding made,
 * and a short one is a slice of a pooled slab (`Buffer.poolSize`, 64 KiB in Node 24) shared with
 * whatever else the process allocated meanwhile. A slab is freed only when none of its slices is
 * left, so each item kept among short-lived allocations held a whole slab: about 64 KiB outside the
 * V8 heap per stored item. The store now keeps copies that own exactly their bytes.
 *
 * dynalite builds its store in `dynalite/db`'s `create`, which it calls through that module's exports;
 * wrapping it there reaches every store it makes.
 */
import { createRequire } from 'node:module';

interface StoreIterator {
  close(): Promise<void>;
  return?: () => Promise<void>;
}

interface StoreOperation {
  type: 'put' | 'del';
  key: unknown;
  value?: unknown;
}

/** The parts of abstract-level's store the repairs wrap: the iterators dynalite opens, and what memory-level stores. */
interface LevelStore {
  keys(options?: unknown): StoreIterator;
  values(options?: unknown): StoreIterator;
  _put(key: unknown, value: unknown, options: unknown): Promise<void>;
  _batch(operations: StoreOperation[], options: unknown): Promise<void>;
}

interface DynaliteDbModule {
  create(options?: { path?: string }): { db: LevelStore };
}

const repaired = Symbol('vendor.dynaliteStoreRepaired');
let open = 0;

/** Iterators of the process's dynalite stores opened and not yet closed: 0 between requests. */
export function openDynaliteIterators(): number {
  return open;
}

/** Repairs every dynalite store created from now on in this process; idempotent. */
export function repairDynaliteStores(): void {
  const db = createRequire(import.meta.url)('dynalite/db/index.js') as DynaliteDbModule & { [repaired]?: true };
  if (db[repaired]) return;
  db[repaired] = true;
  const create = db.create;
  db.create = (options) => {
    const store = create(options);
    closesIterators(store.db);
    // Under a data folder LevelDB copies what it is given; only the in-memory store keeps the Buffers.
    if (!options?.path) ownsItsBytes(store.db);
    return store;
  };
}

function closesIterators(store: LevelStore): void {
  for (const method of ['keys', 'values'] as const) {
    const original = store[method].bind(store);
    store[method] = (options) => closable(original(options));
  }
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

function ownsItsBytes(store: LevelStore): void {
  const put = store._put.bind(store);
  const batch = store._batch.bind(store);
  store._put = (key, value, options) => put(owned(key), owned(value), options);
  store._batch = (operations, options) => batch(operations.map((op) => (op.type === 'put' ? { ...op, key: owned(op.key), value: owned(op.value) } : op)), options);
}

/** A copy in memory of its own (never a pool slice), for bytes the store keeps. */
function owned(bytes: unknown): unknown {
  if (!(bytes instanceof Uint8Array)) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
  copy.set(bytes);
  return copy;
}
