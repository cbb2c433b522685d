/**
 * The resources module of the driver (driver/handlers.ts, docs/cache.md): the caching agent's
 * resource events into the table, its resume queries answered, its pod metrics kept. Every message
 * is first judged by the caching epoch rule against the `cachingAgentId` and `cachingEpoch` the
 * caching election (driver/accounts/) writes on the account item. The messages of different accounts
 * on one stream are handled concurrently, those of one account in order (per-account.ts).
 */
import type { DriverModuleFactory } from '../handlers.ts';
import { cacheHandlers, type CacheHandlerDeps, type CacheHandlers } from './handlers.ts';
import { perAccountHandlers, type PerAccountLimits } from './per-account.ts';

export type ResourcesModuleOptions = Omit<CacheHandlerDeps, 'table' | 'clock' | 'log'> & {
  /** How many cache messages run at once, over every account and per stream (`PER_ACCOUNT_DEFAULTS`). */
  perAccount?: PerAccountLimits;
};

/** The resources module with options (tests, benchmarks); `built` gets its handlers once the driver makes it. */
export function resourcesModuleWith(options: ResourcesModuleOptions = {}, built?: (cache: CacheHandlers) => void): DriverModuleFactory {
  const { perAccount, ...handlerOptions } = options;
  return (services) => {
    const cache = cacheHandlers({ table: services.table, clock: services.clock, log: services.log.child({ component: 'cache' }), metrics: services.metrics, ...handlerOptions });
    built?.(cache);
    return {
      name: 'cache',
      handlers: perAccountHandlers(cache.handlers, { clock: services.clock, log: services.log.child({ component: 'cache' }), metrics: services.metrics, ...(perAccount === undefined ? {} : { limits: perAccount }) }),
      // A role that moved on this replica is judged on a fresh read from the next message on, rather
      // than on an answer remembered from before the move.
      onHoldingChange: (_session, account) => cache.forget(account),
      stop: () => cache.close(),
    };
  };
}

export const resourcesModule: DriverModuleFactory = resourcesModuleWith();
