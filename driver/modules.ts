import { accountsModule } from './accounts/module.ts';
import { operationsModule } from './operations/module.ts';
import { cacheCleanupModule } from './resources/cleanup-module.ts';
import { resourcesModule } from './resources/module.ts';
import type { DriverModuleFactory } from './handlers.ts';

/**
 * The modules of a running driver (driver/handlers.ts): each handles the agent message kinds it
 * names and follows sessions; the cache cleanup deletes the cache of accounts that went.
 */
export const DRIVER_MODULES: readonly DriverModuleFactory[] = [accountsModule, resourcesModule, operationsModule, cacheCleanupModule];
