import { cacheWorkerFactory } from '../resources/cache-worker.ts';
import { podMetricsWorkerFactory } from '../metrics/pod-metrics-worker.ts';
import { operationsWorkerFactory } from '../operations/operations-worker.ts';
import type { AccountWorkerFactory } from './account-worker.ts';

/**
 * The kinds of work attached to every account the agent holds (account-worker.ts): each factory decides
 * whether its work applies to an account. The resource cache and pod metrics follow the caching
 * role; deployment operations run on every held account.
 */
export const ACCOUNT_WORKERS: readonly AccountWorkerFactory[] = [cacheWorkerFactory(), podMetricsWorkerFactory(), operationsWorkerFactory];
