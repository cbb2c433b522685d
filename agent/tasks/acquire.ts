/**
 * A budget task held by its caller for a stretch of work (a list, a reading, a cluster check) rather
 * than run by the budget: the caller waits for its turn, does the work, and releases the cost.
 */
import { VendorError } from '../../shared/errors.ts';
import type { TaskBudget, TaskSpec } from './budget.ts';

/**
 * Waits until the budget starts the task and resolves with the function that ends it (idempotent).
 * Rejects with `signal`'s reason, taking the task off the queue, when `signal` aborts first, and
 * with an `unavailable` error when the budget stops the task before the caller could use it.
 */
export function acquireTask(budget: TaskBudget, spec: Omit<TaskSpec, 'run'>, signal?: AbortSignal): Promise<() => void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const handle = budget.submit({ ...spec, run: (stopped) => new Promise<void>((resolve) => stopped.addEventListener('abort', () => resolve(), { once: true })) });
  const release = () => handle.stop();
  if (handle.state === 'running') return Promise.resolve(release);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      handle.stop();
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    void handle.started.then(() => {
      signal?.removeEventListener('abort', onAbort);
      // Started and stopped in one turn (its account's tasks were stopped): it must not go on.
      if (handle.state === 'stopped') reject(new VendorError('unavailable', `task ${spec.name} of account ${spec.account} was stopped`));
      else resolve(release);
    });
  });
}
