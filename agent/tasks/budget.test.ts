import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import type { TasksConfig } from '../config/schema.ts';
import { createAgentMetrics } from '../observability/metrics.ts';
import { TASK_COSTS, TaskBudget, type TaskHandle, type TaskKind } from './budget.ts';

function setup(settings: Partial<TasksConfig>) {
  const clock = new ManualClock();
  const logs: { level: string; msg: string }[] = [];
  const logger = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, {
    write: (line: string) => void logs.push(JSON.parse(line) as { level: string; msg: string }),
  });
  const metrics = createAgentMetrics();
  const budget = new TaskBudget({ totalBudget: 0, budgetPerAccount: 0, queueCheckFrequencyMs: 2000, ...settings }, { clock, logger, metrics });
  /** Tasks that run until stopped, as list+watch and pollers do. */
  const task = (account: string, kind: TaskKind, name = kind) =>
    budget.submit({ account, kind, name, run: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())) });
  return { clock, logs, metrics, budget, task };
}

const states = (handles: TaskHandle[]) => handles.map((h) => h.state);

describe('task budgets', () => {
  it('documents a cost per kind, and watches are free', () => {
    expect(TASK_COSTS).toEqual({ watch: 0, account: 1, informer: 1, metrics: 1, operation: 2 });
  });

  it('without budgets every task starts at once', () => {
    const { task } = setup({});
    const handles = Array.from({ length: 20 }, (_, i) => task(`a${i % 3}`, 'informer'));
    expect(states(handles).every((s) => s === 'running')).toBe(true);
  });

  it('totalBudget caps the cost of running tasks; a waiting task starts as soon as a running one frees budget', async () => {
    const { task, budget } = setup({ totalBudget: 2, queueCheckFrequencyMs: 2000 });
    const run = new AbortController();
    const loop = budget.run(run.signal);
    const [a, b, c] = [task('prod', 'informer'), task('prod', 'informer'), task('dev', 'informer')];
    expect(states([a!, b!, c!])).toEqual(['running', 'running', 'waiting']);
    a!.stop();
    expect(c!.state).toBe('running');
    await c!.started;
    run.abort();
    await loop;
    expect(states([b!, c!])).toEqual(['stopped', 'stopped']);
  });

  it('checks the queue every queueCheckFrequencyMs besides', async () => {
    const { budget, clock } = setup({ totalBudget: 2, queueCheckFrequencyMs: 2000 });
    const checks = vi.spyOn(budget, 'check');
    const run = new AbortController();
    const loop = budget.run(run.signal);
    await clock.advance(1999);
    expect(checks).toHaveBeenCalledTimes(0);
    await clock.advance(1);
    expect(checks).toHaveBeenCalledTimes(1);
    await clock.advance(2000);
    expect(checks).toHaveBeenCalledTimes(2);
    run.abort();
    await loop;
  });

  it('a task stopped while waiting frees nothing and wakes nothing', () => {
    const { task, budget } = setup({ totalBudget: 1 });
    const running = task('prod', 'informer');
    const [first, second] = [task('prod', 'informer'), task('prod', 'informer')];
    first.stop();
    expect(states([running, first, second])).toEqual(['running', 'stopped', 'waiting']);
    expect(budget.waiting()).toEqual([{ account: 'prod', kind: 'informer', name: 'informer', cost: 1, since: 0 }]);
  });

  it('watches are free: they start while the budget is used up', () => {
    const { task, budget } = setup({ totalBudget: 1, budgetPerAccount: 1 });
    task('prod', 'informer');
    const watches = Array.from({ length: 5 }, () => task('prod', 'watch'));
    expect(states(watches).every((s) => s === 'running')).toBe(true);
    expect(budget.usage()).toMatchObject({ total: 1, running: 6, waiting: 0 });
  });

  it('budgetPerAccount caps each account on its own', () => {
    const { task, budget } = setup({ budgetPerAccount: 2 });
    const prod = [task('prod', 'account'), task('prod', 'informer'), task('prod', 'informer')];
    const dev = [task('dev', 'operation')];
    expect(states(prod)).toEqual(['running', 'running', 'waiting']);
    expect(states(dev)).toEqual(['running']);
    expect(budget.usage().byAccount).toEqual({ prod: 2, dev: 2 });
  });

  it('when both are set, both are checked', () => {
    const { task } = setup({ totalBudget: 3, budgetPerAccount: 2 });
    const handles = [task('prod', 'informer'), task('prod', 'informer'), task('prod', 'informer'), task('dev', 'informer'), task('dev', 'informer')];
    // prod stops at its own budget (2); dev gets 1 more before the total (3) is reached.
    expect(states(handles)).toEqual(['running', 'running', 'waiting', 'running', 'waiting']);
  });

  it('a queue check starts every waiting task that fits, in order, skipping ones that do not', async () => {
    const { task, budget } = setup({ totalBudget: 3 });
    const first = task('prod', 'operation');
    const second = task('prod', 'informer');
    const big = task('prod', 'operation');
    const small = task('dev', 'informer');
    expect(states([first, second, big, small])).toEqual(['running', 'running', 'waiting', 'waiting']);
    second.stop();
    budget.check();
    expect(states([big, small])).toEqual(['waiting', 'running']);
  });

  it('stopping an account frees its budget; stopping all empties the agent', () => {
    const { task, budget } = setup({ totalBudget: 2 });
    const prod = [task('prod', 'informer'), task('prod', 'informer')];
    const dev = task('dev', 'informer');
    expect(budget.stopAccount('prod')).toBe(2);
    expect(states(prod)).toEqual(['stopped', 'stopped']);
    budget.check();
    expect(dev.state).toBe('running');
    expect(budget.stopAll()).toBe(1);
    expect(budget.usage()).toEqual({ total: 0, byAccount: {}, running: 0, waiting: 0 });
  });

  it('a stopped task sees its signal abort; a task that ends or fails frees its cost', async () => {
    const { budget, logs } = setup({ totalBudget: 1 });
    let aborted = false;
    const long = budget.submit({ account: 'a', kind: 'informer', name: 'pods', run: (signal) => new Promise<void>((r) => signal.addEventListener('abort', () => { aborted = true; r(); })) });
    await long.started;
    await new Promise((r) => setImmediate(r));
    long.stop();
    expect(aborted).toBe(true);
    let ran = false;
    const never = budget.submit({ account: 'a', kind: 'informer', name: 'never', run: () => void (ran = true) });
    never.stop();
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(false);
    const failing = budget.submit({ account: 'a', kind: 'operation', name: 'deploy', run: () => Promise.reject(new Error('apply refused')) });
    expect(failing.state).toBe('waiting');
    const finishing = budget.submit({ account: 'a', kind: 'informer', name: 'once', run: () => undefined });
    await finishing.started;
    await new Promise((r) => setImmediate(r));
    expect(finishing.state).toBe('stopped');
    expect(budget.usage().total).toBe(0);
    expect(logs.some((l) => l.msg === 'task failed')).toBe(false);
    const failing2 = budget.submit({ account: 'b', kind: 'informer', name: 'deploy', run: () => Promise.reject(new Error('apply refused')) });
    await failing2.started;
    await new Promise((r) => setImmediate(r));
    expect(failing2.state).toBe('stopped');
    expect(logs).toContainEqual(expect.objectContaining({ level: 'error', msg: 'task failed', err: 'apply refused' }));
  });

  it('warns when a task costs more than a whole budget, and starts it once the budget is raised', () => {
    const { task, budget, logs } = setup({ totalBudget: 1 });
    const op = task('prod', 'operation');
    expect(op.state).toBe('waiting');
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'task costs more than the whole budget and cannot start until tasks.* is raised' }));
    budget.updateSettings({ totalBudget: 2, budgetPerAccount: 0, queueCheckFrequencyMs: 2000 });
    expect(op.state).toBe('running');
  });

  it('reports budget use in the metrics', async () => {
    const { task, metrics } = setup({ totalBudget: 5, budgetPerAccount: 2 });
    task('prod', 'informer');
    task('prod', 'operation');
    task('dev', 'watch');
    const text = await metrics.registry.metrics();
    expect(text).toContain('vendor_agent_task_budget_limit{scope="total"} 5');
    expect(text).toContain('vendor_agent_task_budget_limit{scope="account"} 2');
    expect(text).toContain('vendor_agent_task_budget_used{account=""} 1');
    expect(text).toContain('vendor_agent_task_budget_used{account="prod"} 1');
    expect(text).toContain('vendor_agent_tasks{state="waiting",kind="operation"} 1');
    expect(text).toContain('vendor_agent_tasks{state="running",kind="watch"} 1');
    expect(text).toContain('vendor_agent_task_budget_waiting{account=""} 2');
    expect(text).toContain('vendor_agent_task_budget_waiting{account="prod"} 2');
  });

  it('sets no gauge as tasks start and stop: the gauges are filled when read, as they stand then', async () => {
    const { task, metrics, budget } = setup({ totalBudget: 4 });
    const sets = vi.spyOn(metrics.tasks, 'set');
    for (let i = 0; i < 20; i++) task('prod', 'operation').stop();
    const [a] = [task('prod', 'operation'), task('prod', 'informer'), task('dev', 'operation')];
    expect(sets).not.toHaveBeenCalled();
    let text = await metrics.registry.metrics();
    expect(text).toContain('vendor_agent_tasks{state="running",kind="operation"} 1');
    expect(text).toContain('vendor_agent_tasks{state="waiting",kind="operation"} 1');
    expect(text).toContain('vendor_agent_task_budget_used{account="prod"} 3');
    a?.stop();
    text = await metrics.registry.metrics();
    expect(text).toContain('vendor_agent_tasks{state="running",kind="operation"} 1');
    expect(text).toContain('vendor_agent_tasks{state="waiting",kind="operation"} 0');
    expect(text).toContain('vendor_agent_task_budget_used{account="dev"} 2');
    expect(text).not.toContain('vendor_agent_task_budget_used{account="prod"} 3');
    // Read twice without a change in between, filled once.
    const filled = sets.mock.calls.length;
    await metrics.registry.metrics();
    expect(sets.mock.calls.length).toBe(filled);
    expect(budget.usage().total).toBe(3);
  });

  it('aborts every stopped task with one reason made once, not an error with a stack trace per task', async () => {
    const { budget } = setup({});
    const signals: AbortSignal[] = [];
    const handles = ['a', 'b'].map((account) =>
      budget.submit({ account, kind: 'operation', name: 'op', run: (signal) => void signals.push(signal) }),
    );
    await vi.waitFor(() => expect(handles.map((h) => h.state)).toEqual(['stopped', 'stopped']));
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    expect(signals[0]?.reason).toBe(signals[1]?.reason);
    expect((signals[0]?.reason as Error).message).toBe('task stopped');
  });

  it('reports the cost waiting for budget, per account and in all', async () => {
    const { task, metrics } = setup({ totalBudget: 1 });
    task('prod', 'informer');
    task('prod', 'operation');
    task('dev', 'informer');
    const text = await metrics.registry.metrics();
    expect(text).toContain('vendor_agent_task_budget_waiting{account=""} 3');
    expect(text).toContain('vendor_agent_task_budget_waiting{account="prod"} 2');
    expect(text).toContain('vendor_agent_task_budget_waiting{account="dev"} 1');
  });
});
