/**
 * The lists of one cached scope as budget tasks: each list (the first, and every relist after a 410
 * or a restart) asks the budget for an `informer` task before it takes a slot of the agent's list
 * gate, and gives both back when the list is complete (for a WatchList, at its initial-events-end
 * bookmark). The watch that follows asks nothing: watches are free.
 */
import type { ListGate } from '../resources/list-gate.ts';
import { acquireTask } from './acquire.ts';
import type { TaskBudget } from './budget.ts';

export type ListSlots = Pick<ListGate, 'acquire'>;

export function budgetedListSlots(gate: ListSlots, budget: TaskBudget, account: string, scope: string): ListSlots {
  return {
    async acquire(signal, weight) {
      // The budget first: a list waiting for its account's budget must not hold a gate slot others could use.
      const endTask = await acquireTask(budget, { account, kind: 'informer', name: scope }, signal);
      try {
        const releaseSlot = await gate.acquire(signal, weight);
        return () => {
          releaseSlot();
          endTask();
        };
      } catch (e) {
        endTask();
        throw e;
      }
    },
  };
}
