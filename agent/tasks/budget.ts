import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import type { TasksConfig } from '../config/schema.ts';
import type { AgentMetrics } from '../observability/metrics.ts';

/**
 * What each kind of task costs against `tasks.totalBudget` and `tasks.budgetPerAccount`. A task holds
 * its cost from the moment it starts until it ends or is stopped. Every task that loads a cluster asks
 * the budget first; watches are free (docs/agent-config.md#task-budgets): the load on an API server
 * comes from lists and polls, not from an open watch.
 */
export const TASK_COSTS = {
  /** A watch stream that resumes from a known resourceVersion, without a list: never waits. */
  watch: 0,
  /** Connecting an account's cluster and checking it (`GET /version`), when the account is assigned. */
  account: 1,
  /** One list of a cached kind in one scope (the first, and every relist), until it is complete; the watch that follows is free. */
  informer: 1,
  /** One reading of an account's pod metrics (every 20 seconds while `metrics` is true). */
  metrics: 1,
  /** One deployment operation (apply, delete, scale, patch, rollout), held until it finishes. */
  operation: 2,
} as const;

export type TaskKind = keyof typeof TASK_COSTS;

/**
 * The reason every stopped task's signal aborts with: one error made once, rather than an error and
 * its stack trace for each task that ends (each operation's does).
 */
const TASK_STOPPED = new Error('task stopped');

export interface TaskSpec {
  account: string;
  kind: TaskKind;
  /** For logs, e.g. `apps/v1 Deployment`. */
  name: string;
  /** Runs the task; `signal` aborts when it is stopped. Returning (or throwing) ends it and frees its cost. */
  run(signal: AbortSignal): void | Promise<void>;
}

export type TaskState = 'waiting' | 'running' | 'stopped';

export interface TaskHandle {
  readonly spec: TaskSpec;
  readonly cost: number;
  readonly state: TaskState;
  /** Resolves when the task starts; never resolves for a task stopped while waiting. */
  readonly started: Promise<void>;
  /** Stops the task (or takes it off the queue) and frees its cost. Idempotent. */
  stop(): void;
}

type BudgetMetrics = Pick<AgentMetrics, 'taskBudgetLimit' | 'taskBudgetUsed' | 'taskBudgetWaiting' | 'tasks' | 'fillTaskGaugesOnRead'>;

/** A task waiting for budget, as the agent's `/cache` shows it. */
export interface WaitingTask {
  account: string;
  kind: TaskKind;
  name: string;
  cost: number;
  /** When it was submitted, on the budget's clock. */
  since: number;
}

class Task implements TaskHandle {
  state: TaskState = 'waiting';
  readonly started: Promise<void>;
  readonly cost: number;
  readonly controller = new AbortController();
  readonly submittedAt: number;
  markStarted!: () => void;
  readonly spec: TaskSpec;
  readonly #onStop: (task: Task) => void;

  constructor(spec: TaskSpec, submittedAt: number, onStop: (task: Task) => void) {
    this.spec = spec;
    this.submittedAt = submittedAt;
    this.#onStop = onStop;
    this.cost = TASK_COSTS[spec.kind];
    this.started = new Promise((resolve) => {
      this.markStarted = resolve;
    });
  }

  stop(): void {
    if (this.state === 'stopped') return;
    this.#onStop(this);
  }
}

/**
 * Starts tasks within the budgets of `tasks.*`. A task that fits starts at once; one that does not
 * waits. The queue is checked whenever a task frees budget, and every `queueCheckFrequencyMs` besides
 * (which also covers budgets raised by a reload), starting each waiting task that fits, in order (a
 * large task can thus wait behind smaller ones that fit). When both budgets are set both are checked;
 * 0 means no limit.
 */
export class TaskBudget {
  #settings: TasksConfig;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #metrics: BudgetMetrics | undefined;
  readonly #running = new Set<Task>();
  #waiting: Task[] = [];
  readonly #warnedTooBig = new Set<Task>();
  /** Whether the gauges may be behind: they are filled when read, not on every start and stop. */
  #changed = true;

  constructor(settings: TasksConfig, deps: { clock: Clock; logger: Logger; metrics?: BudgetMetrics }) {
    this.#settings = settings;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
    deps.metrics?.fillTaskGaugesOnRead(() => this.#report());
  }

  submit(spec: TaskSpec): TaskHandle {
    const task = new Task(spec, this.#clock.now(), (t) => this.#stop(t));
    this.#waiting.push(task);
    this.check();
    if (task.state === 'waiting') {
      this.#logger.debug({ account: spec.account, kind: spec.kind, task: spec.name, cost: task.cost }, 'task waits for budget');
      this.#warnIfNeverFits(task);
    }
    return task;
  }

  /** Starts every waiting task that fits now. Called on each queue check; callers may call it too. */
  check(): void {
    const still: Task[] = [];
    for (const task of this.#waiting) {
      if (this.#fits(task)) this.#start(task);
      else still.push(task);
    }
    this.#waiting = still;
    this.#changed = true;
  }

  /** Stops every task of an account (it was unregistered). Returns how many were stopped. */
  stopAccount(account: string): number {
    // Waiting ones first, so that budget freed by the running ones is not given to a task about to be stopped.
    const tasks = [...this.#waiting, ...this.#running].filter((t) => t.spec.account === account);
    for (const t of tasks) t.stop();
    return tasks.length;
  }

  /** Stops every task (the connection to the driver was lost). */
  stopAll(): number {
    const tasks = [...this.#waiting, ...this.#running];
    for (const t of tasks) t.stop();
    return tasks.length;
  }

  /** New limits from a reloaded configuration; running tasks keep running. */
  updateSettings(settings: TasksConfig): void {
    this.#settings = settings;
    this.#warnedTooBig.clear();
    this.check();
    for (const t of this.#waiting) this.#warnIfNeverFits(t);
  }

  /** The tasks waiting for budget, oldest first. */
  waiting(): WaitingTask[] {
    return this.#waiting.map((t) => ({ account: t.spec.account, kind: t.spec.kind, name: t.spec.name, cost: t.cost, since: t.submittedAt }));
  }

  usage(): { total: number; byAccount: Record<string, number>; running: number; waiting: number } {
    const byAccount: Record<string, number> = {};
    for (const t of this.#running) byAccount[t.spec.account] = (byAccount[t.spec.account] ?? 0) + t.cost;
    return { total: this.#used(), byAccount, running: this.#running.size, waiting: this.#waiting.length };
  }

  /** Checks the queue every `queueCheckFrequencyMs` until `signal` aborts; stops every task then. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      while (!signal.aborted) {
        await this.#clock.sleep(this.#settings.queueCheckFrequencyMs, signal);
        this.check();
      }
    } catch (e) {
      if (!signal.aborted) throw e;
    } finally {
      this.stopAll();
    }
  }

  #used(account?: string): number {
    let sum = 0;
    for (const t of this.#running) if (account === undefined || t.spec.account === account) sum += t.cost;
    return sum;
  }

  #fits(task: Task): boolean {
    if (task.cost === 0) return true;
    const { totalBudget, budgetPerAccount } = this.#settings;
    if (totalBudget > 0 && this.#used() + task.cost > totalBudget) return false;
    if (budgetPerAccount > 0 && this.#used(task.spec.account) + task.cost > budgetPerAccount) return false;
    return true;
  }

  #warnIfNeverFits(task: Task): void {
    const { totalBudget, budgetPerAccount } = this.#settings;
    const tooBig = (totalBudget > 0 && task.cost > totalBudget) || (budgetPerAccount > 0 && task.cost > budgetPerAccount);
    if (!tooBig || this.#warnedTooBig.has(task)) return;
    this.#warnedTooBig.add(task);
    this.#logger.warn(
      { account: task.spec.account, kind: task.spec.kind, task: task.spec.name, cost: task.cost, totalBudget, budgetPerAccount },
      'task costs more than the whole budget and cannot start until tasks.* is raised',
    );
  }

  #start(task: Task): void {
    task.state = 'running';
    this.#running.add(task);
    task.markStarted();
    const { account, kind, name } = task.spec;
    this.#logger.debug({ account, kind, task: name, cost: task.cost }, 'task started');
    // run() is called on a later tick so a task that submits or stops others does not re-enter check();
    // a task stopped before then is never run.
    Promise.resolve()
      .then(() => (task.controller.signal.aborted ? undefined : task.spec.run(task.controller.signal)))
      .then(
        () => task.stop(),
        (e: unknown) => {
          if (!task.controller.signal.aborted) {
            this.#logger.error({ account, kind, task: name, err: e instanceof Error ? e.message : String(e) }, 'task failed');
          }
          task.stop();
        },
      );
  }

  #stop(task: Task): void {
    const wasRunning = task.state === 'running';
    task.state = 'stopped';
    this.#running.delete(task);
    this.#waiting = this.#waiting.filter((t) => t !== task);
    this.#warnedTooBig.delete(task);
    if (wasRunning) task.controller.abort(TASK_STOPPED);
    // Freed budget goes to the queue at once; the periodic check is there for raised budgets.
    if (wasRunning && task.cost > 0 && this.#waiting.length > 0) this.check();
    else this.#changed = true;
  }

  #report(): void {
    const m = this.#metrics;
    if (m === undefined || !this.#changed) return;
    this.#changed = false;
    m.taskBudgetLimit.set({ scope: 'total' }, this.#settings.totalBudget);
    m.taskBudgetLimit.set({ scope: 'account' }, this.#settings.budgetPerAccount);
    m.taskBudgetUsed.reset();
    m.taskBudgetUsed.set({ account: '' }, this.#used());
    for (const [account, used] of Object.entries(this.usage().byAccount)) m.taskBudgetUsed.set({ account }, used);
    m.taskBudgetWaiting.reset();
    const waiting: Record<string, number> = { '': 0 };
    for (const t of this.#waiting) {
      waiting[''] = (waiting[''] ?? 0) + t.cost;
      waiting[t.spec.account] = (waiting[t.spec.account] ?? 0) + t.cost;
    }
    for (const [account, cost] of Object.entries(waiting)) m.taskBudgetWaiting.set({ account }, cost);
    m.tasks.reset();
    for (const kind of Object.keys(TASK_COSTS) as TaskKind[]) {
      m.tasks.set({ state: 'running', kind }, [...this.#running].filter((t) => t.spec.kind === kind).length);
      m.tasks.set({ state: 'waiting', kind }, this.#waiting.filter((t) => t.spec.kind === kind).length);
    }
  }
}
