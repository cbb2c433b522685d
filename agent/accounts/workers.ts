/**
 * The work attached to every held account: each factory decides from the account whether its kind
 * of work applies (the resource cache and pod metrics follow the caching role).
 */
import { cacheWorkerFactory } from '../cache/worker.ts';
import { podMetricsWorkerFactory } from '../metrics/worker.ts';
import type { AccountWorkerFactory } from './worker.ts';

export const ACCOUNT_WORKERS: readonly AccountWorkerFactory[] = [cacheWorkerFactory(), podMetricsWorkerFactory()];
