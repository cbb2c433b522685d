import { operationsWorkerFactory } from '../operations/worker.ts';
import type { AccountWorkerFactory } from './worker.ts';

/**
 * The kinds of work attached to every account the agent holds (worker.ts): each factory decides
 * whether its work applies to an account. The resource cache, pod metrics and deployment
 * operations register their factories here.
 */
export const ACCOUNT_WORKERS: readonly AccountWorkerFactory[] = [operationsWorkerFactory];
