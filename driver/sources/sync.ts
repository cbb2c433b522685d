import type { Clock } from '../../shared/clock.ts';
import { isVendorError, VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { syncDefinitionSources, type DefinitionSource } from '../../shared/table/sources/definition-sources.ts';

/** Longest a source's read may take; then it counts as failed, and is read again at the next interval. */
export const SOURCE_READ_TIMEOUT_MS = 60_000;

export interface DefinitionSyncOptions {
  table: TableRef;
  sources: readonly DefinitionSource[];
  log: Logger;
  clock: Clock;
  /** Each source is read and synced again this long after its last sync ended. */
  intervalMs: number;
}

export interface DefinitionSync {
  /** Reads and syncs every source once more now (tests, and what the loop does each interval). */
  syncNow(): Promise<void>;
  /** Ends the loops; a sync under way finishes its writes, a read under way is abandoned. */
  stop(): Promise<void>;
}

/**
 * Keeps the table holding what each source defines: every source is synced once before this returns,
 * then again every interval, each in its own loop so a slow source delays only itself. A source that
 * cannot be read, or returns anything invalid, changes nothing: the table keeps its last good
 * definitions, and the error is logged (by the source's id and our own message, never its data).
 * Replicas syncing the same source take turns on its lock (shared/table/sources/lock.ts).
 */
export async function startDefinitionSync(options: DefinitionSyncOptions): Promise<DefinitionSync> {
  const { table, log, clock, intervalMs } = options;
  const stopping = new AbortController();
  const failing = new Set<string>();

  const syncOne = async (source: DefinitionSource): Promise<void> => {
    // A read that never ends must hold up neither the start nor the next reads nor shutdown.
    const readable: DefinitionSource = { ...source, load: () => bounded(source.load(), clock, SOURCE_READ_TIMEOUT_MS, stopping.signal, `reading definition source ${source.id}`) };
    try {
      const result = (await syncDefinitionSources(table, [readable], clock.now()))[source.id];
      const recovered = failing.delete(source.id);
      if (result !== undefined && (recovered || result.upserted.length > 0 || result.removed.length > 0)) {
        log.info(
          { source: source.id, kind: source.kind, added: result.upserted.length, removed: result.removed.length, unchanged: result.unchanged },
          recovered ? 'definition source read again after failing; its accounts synced' : 'definition source changed; its accounts synced',
        );
      }
    } catch (e) {
      if (stopping.signal.aborted) return;
      failing.add(source.id);
      log.error(
        { source: source.id, kind: source.kind, code: isVendorError(e) ? e.code : 'internal', issues: isVendorError(e) ? e.issues : undefined },
        `definition source ${source.id} was not synced, its last good accounts are kept: ${isVendorError(e) ? e.message : `unexpected ${e instanceof Error ? e.name : typeof e}`}`,
      );
    }
  };

  const loop = async (source: DefinitionSource): Promise<void> => {
    while (!stopping.signal.aborted) {
      try {
        await clock.sleep(intervalMs, stopping.signal);
      } catch {
        return;
      }
      await syncOne(source);
    }
  };

  const syncNow = async () => {
    await Promise.all(options.sources.map(syncOne));
  };
  await syncNow();
  const loops = options.sources.map(loop);
  return {
    syncNow,
    async stop() {
      stopping.abort(new Error('definition sync stopped'));
      await Promise.all(loops);
    },
  };
}

/**
 * `work`, or a `timeout` error once `ms` have passed on the clock, or the stop reason as soon as `stop`
 * aborts; leaves no timer or listener behind.
 */
async function bounded<T>(work: Promise<T>, clock: Clock, ms: number, stop: AbortSignal, what: string): Promise<T> {
  if (stop.aborted) throw stop.reason;
  const done = new AbortController();
  const onStop = () => done.abort(stop.reason);
  stop.addEventListener('abort', onStop, { once: true });
  const timer = clock.sleep(ms, done.signal).then(() => {
    throw new VendorError('timeout', `${what} took longer than ${ms} ms`);
  });
  timer.catch(() => undefined);
  try {
    return await Promise.race([work, timer]);
  } finally {
    done.abort();
    stop.removeEventListener('abort', onStop);
  }
}
