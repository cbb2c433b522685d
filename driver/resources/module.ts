/**
 * The resources module of the driver (driver/handlers.ts, docs/cache.md): the caching agent's
 * resource events into the table, its resume queries answered, its pod metrics kept. Every message
 * is first judged by the caching epoch rule against the `cachingAgentId` and `cachingEpoch` the
 * caching election (driver/accounts/) writes on the account item.
 */
import type { DriverModuleFactory } from '../handlers.ts';
import { cacheHandlers, type CacheHandlerDeps, type CacheHandlers } from './handlers.ts';

export type ResourcesModuleOptions = Omit<CacheHandlerDeps, 'table' | 'clock' | 'log'>;

/** The resources module with options (tests, benchmarks); `built` gets its handlers once the driver makes it. */
export function resourcesModuleWith(options: ResourcesModuleOptions = {}, built?: (cache: CacheHandlers) => void): DriverModuleFactory {
  return (services) => {
    const cache = cacheHandlers({ table: services.table, clock: services.clock, log: services.log.child({ component: 'cache' }), metrics: services.metrics, ...options });
    built?.(cache);
    return {
      name: 'cache',
      handlers: cache.handlers,
      // A role that moved on this replica is judged on a fresh read from the next message on, rather
      // than on an answer remembered from before the move.
      onHoldingChange: (_session, account) => cache.forget(account),
      stop: () => cache.close(),
    };
  };
}

export const resourcesModule: DriverModuleFactory = resourcesModuleWith();
