import { operationsWorkerFactory } from '../operations/worker.ts';
import type { AccountWorkerFactory } from './worker.ts';

/** The work attached to every held account, in this order. */
export const ACCOUNT_WORKERS: readonly AccountWorkerFactory[] = [operationsWorkerFactory];
