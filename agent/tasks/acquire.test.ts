import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { ListGate } from '../resources/list-gate.ts';
import { acquireTask } from './acquire.ts';
import { TaskBudget } from './budget.ts';
import { budgetedListSlots } from './budgeted-lists.ts';

const budgetOf = (totalBudget: number, budgetPerAccount = 0) =>
  new TaskBudget({ totalBudget, budgetPerAccount, queueCheckFrequencyMs: 2000 }, { clock: new ManualClock(), logger: pino({ level: 'silent' }) });

const settled = async <T>(p: Promise<T>): Promise<'pending' | 'resolved' | 'rejected'> => {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  p.then(() => (state = 'resolved'), () => (state = 'rejected'));
  await new Promise((r) => setImmediate(r));
  return state;
};

describe('tasks held by their caller', () => {
  it('resolves once the budget starts the task, and holds its cost until released', async () => {
    const budget = budgetOf(1);
    const first = await acquireTask(budget, { account: 'prod', kind: 'informer', name: 'Pod' });
    const second = acquireTask(budget, { account: 'prod', kind: 'informer', name: 'Secret' });
    expect(await settled(second)).toBe('pending');
    expect(budget.waiting()).toMatchObject([{ account: 'prod', kind: 'informer', name: 'Secret' }]);
    first();
    first();
    const release = await second;
    expect(budget.usage().total).toBe(1);
    release();
    expect(budget.usage()).toMatchObject({ total: 0, running: 0, waiting: 0 });
  });

  it('an abort while waiting takes the task off the queue and rejects', async () => {
    const budget = budgetOf(1);
    await acquireTask(budget, { account: 'prod', kind: 'informer', name: 'Pod' });
    const stop = new AbortController();
    const waiting = acquireTask(budget, { account: 'prod', kind: 'informer', name: 'Secret' }, stop.signal);
    stop.abort(new Error('scope stopped'));
    await expect(waiting).rejects.toThrow('scope stopped');
    expect(budget.usage()).toMatchObject({ total: 1, waiting: 0 });
    await expect(acquireTask(budget, { account: 'prod', kind: 'informer', name: 'x' }, stop.signal)).rejects.toThrow('scope stopped');
  });


  it('a task the budget starts and stops in one turn is refused to its caller', async () => {
    const budget = budgetOf(1);
    const release = await acquireTask(budget, { account: 'prod', kind: 'informer', name: 'Pod' });
    const waiting = acquireTask(budget, { account: 'dev', kind: 'informer', name: 'Pod' });
    release();
    budget.stopAccount('dev');
    await expect(waiting).rejects.toThrow('task Pod of account dev was stopped');
    expect(budget.usage()).toMatchObject({ total: 0, running: 0, waiting: 0 });
  });
});

describe('budgeted lists', () => {
  it('a list takes an informer task, then a gate slot, and gives both back', async () => {
    const budget = budgetOf(0, 1);
    const gate = new ListGate(4);
    const pods = budgetedListSlots(gate, budget, 'prod', 'Pod');
    const secrets = budgetedListSlots(gate, budget, 'prod', 'Secret');
    const devPods = budgetedListSlots(gate, budget, 'dev', 'Pod');
    const releasePods = await pods.acquire();
    expect(gate.running).toBe(1);
    const waitingSecrets = secrets.acquire();
    // Another account's budget is its own; a list waiting for budget holds no gate slot.
    const releaseDev = await devPods.acquire();
    expect(await settled(waitingSecrets)).toBe('pending');
    expect(gate.running).toBe(2);
    expect(budget.waiting()).toMatchObject([{ account: 'prod', kind: 'informer', name: 'Secret' }]);
    releasePods();
    const releaseSecrets = await waitingSecrets;
    expect(gate.running).toBe(2);
    releaseSecrets();
    releaseDev();
    expect(gate.running).toBe(0);
    expect(budget.usage().total).toBe(0);
  });

  it('a gate that refuses (the scope stopped) gives the task back', async () => {
    const budget = budgetOf(1);
    const gate = new ListGate(1);
    const held = await gate.acquire();
    const stop = new AbortController();
    const list = budgetedListSlots(gate, budget, 'prod', 'Pod').acquire(stop.signal);
    expect(await settled(list)).toBe('pending');
    expect(budget.usage().total).toBe(1);
    stop.abort(new Error('scope stopped'));
    await expect(list).rejects.toThrow('scope stopped');
    expect(budget.usage().total).toBe(0);
    held();
  });
});
