import type { DriverModuleFactory } from '../handlers.ts';
import { CacheCleanupLoop, type CacheCleanupOptions } from './cache-cleanup.ts';

/** The driver module that deletes the cache of accounts that went (driver/resources/cache-cleanup.ts). */
export function cacheCleanupModuleWith(options: CacheCleanupOptions = {}): DriverModuleFactory {
  return (services) => {
    const loop = new CacheCleanupLoop(
      { table: services.table, clock: services.clock, log: services.log.child({ component: 'cache-cleanup' }), holder: services.replicaId },
      options,
    );
    const stopped = new AbortController();
    let running: Promise<void> | undefined;
    return {
      name: 'cache-cleanup',
      start: async (signal) => {
        signal.addEventListener('abort', () => stopped.abort(), { once: true });
        running = loop.run(stopped.signal);
      },
      stop: async () => {
        stopped.abort();
        await running;
      },
    };
  };
}

export const cacheCleanupModule: DriverModuleFactory = cacheCleanupModuleWith();
