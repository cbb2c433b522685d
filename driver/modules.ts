import { assignmentModule } from './assignment/module.ts';
import { operationsModule } from './operations/module.ts';
import type { DriverModuleFactory } from './handlers.ts';

/**
 * The modules of a running driver (driver/handlers.ts): each handles the agent message kinds it
 * names and follows sessions. The resource cache and operations add theirs here.
 */
export const DRIVER_MODULES: readonly DriverModuleFactory[] = [assignmentModule, operationsModule];
