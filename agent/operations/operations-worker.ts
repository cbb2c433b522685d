/**
 * The operations worker of one held account: takes `operation` messages from the driver, runs each
 * as a task of the agent's budget (`tasks.*`; an operation costs `TASK_COSTS.operation`), and answers
 * with one `operationResult`, which the connection's outbox retries by `driver.responseRetries.*`.
 *
 * An operation that does not fit the budget waits in the budget's queue, checked every
 * `tasks.queueCheckFrequencyMs`; the driver sees it RUNNING meanwhile, and the result says how long it
 * waited. The agent keeps the ids it has taken (agent-wide, the latest 10,000), so an operation handed
 * out again to this agent is never run twice: while it runs the repeat changes nothing, and once it
 * has finished the repeat is answered with the same result.
 */
import type { Clock } from '../../shared/clock.ts';
import type { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { outcomeToWire } from '../../shared/operations/message.ts';
import type { Operation__Output, OperationResult } from '../../shared/protocol/messages.ts';
import type { AccountWorker, AccountWorkerFactory, HeldAccountView, WorkerHost } from '../accounts/account-worker.ts';
import type { AgentContext } from '../component.ts';
import type { DriverWork } from '../connection/driver-stream.ts';
import type { AgentMetrics } from '../observability/metrics.ts';
import type { TaskBudget, TaskHandle } from '../tasks/budget.ts';
import { checkOperationMessage, refusalMessage } from './operation-check.ts';
import { ResourceDiscovery } from './resource-discovery.ts';
import { executeOperation } from './execute.ts';
import type { AgentPathTrace } from './trace.ts';

/** Finished ids remembered per agent; older ones are forgotten first. */
export const REMEMBERED_OPERATIONS = 10_000;

type Taken = { state: 'running' } | { state: 'done'; result: OperationResult };

/** The operation ids this agent has taken, and the results of those that finished. */
export class TakenOperations {
  readonly #entries = new Map<string, Taken>();
  readonly #limit: number;

  constructor(limit = REMEMBERED_OPERATIONS) {
    this.#limit = limit;
  }

  get(id: string): Taken | undefined {
    return this.#entries.get(id);
  }

  take(id: string): void {
    this.#entries.set(id, { state: 'running' });
  }

  finish(id: string, result: OperationResult): void {
    this.#entries.delete(id);
    this.#entries.set(id, { state: 'done', result });
    for (const [old, entry] of this.#entries) {
      if (this.#entries.size <= this.#limit) break;
      if (entry.state === 'done') this.#entries.delete(old);
    }
  }

  /** An id taken but never started (its task was stopped while waiting): a repeat may run it. */
  forget(id: string): void {
    if (this.#entries.get(id)?.state === 'running') this.#entries.delete(id);
  }
}

const takenByAgent = new WeakMap<AgentContext, TakenOperations>();

function takenFor(ctx: AgentContext): TakenOperations {
  let taken = takenByAgent.get(ctx);
  if (taken === undefined) takenByAgent.set(ctx, (taken = new TakenOperations()));
  return taken;
}

export interface OperationsWorkerDeps {
  host: WorkerHost;
  budget: TaskBudget;
  clock: Clock;
  taken: TakenOperations;
  /** `vendor_agent_operations_total` and `vendor_agent_operation_duration_seconds`, by action and result. */
  metrics?: Pick<AgentMetrics, 'operations' | 'operationDuration'>;
  /** docs/operations.md#the-agents-part-of-the-path; undefined: nothing is marked. */
  trace?: AgentPathTrace;
}

export class OperationsWorker implements AccountWorker {
  #account: HeldAccountView;
  #discovery: ResourceDiscovery;
  readonly #deps: OperationsWorkerDeps;
  /** Tasks of this account's operations, by operation id, until they end. */
  readonly #tasks = new Map<string, TaskHandle>();
  readonly #running = new Set<Promise<void>>();
  readonly #started = new Set<string>();

  constructor(account: HeldAccountView, deps: OperationsWorkerDeps) {
    this.#account = account;
    this.#deps = deps;
    this.#discovery = new ResourceDiscovery(account.cluster, () => deps.clock.now());
  }

  get #log(): Logger {
    return this.#account.logger;
  }

  update(account: HeldAccountView): void {
    // A new connection may reach another cluster or API version: learn its resources again.
    if (account.cluster !== this.#account.cluster) this.#discovery = new ResourceDiscovery(account.cluster, () => this.#deps.clock.now());
    this.#account = account;
  }

  handle(work: DriverWork): void {
    if (work.kind !== 'operation') return;
    const op = work.body;
    const check = checkOperationMessage(op);
    if (check.verdict === 'drop') {
      // Nothing to answer it with: the driver would refuse such a result, so only the log says.
      this.#log.warn({ issues: check.error.issues }, `operation dropped: ${check.error.message}; no result can name it`);
      return;
    }
    const task = this.#tasks.get(op.operationId);
    // Stopped by the budget (the account's tasks were stopped) before it ever started: it never ran.
    if (task !== undefined && task.state === 'stopped' && !this.#started.has(op.operationId)) {
      this.#tasks.delete(op.operationId);
      this.#deps.taken.forget(op.operationId);
    }
    const taken = this.#deps.taken.get(op.operationId);
    if (taken?.state === 'running') {
      this.#log.info({ operationId: op.operationId, attempt: op.attempt }, 'operation handed out again while it runs here; its result will answer');
      return;
    }
    if (taken?.state === 'done') {
      this.#log.info({ operationId: op.operationId, attempt: op.attempt }, 'operation handed out again after it finished here; sending its result again');
      this.#respond(taken.result);
      return;
    }
    if (check.verdict === 'refuse') {
      this.#refuse(op, check.error);
      return;
    }
    this.#deps.taken.take(op.operationId);
    this.#deps.trace?.mark(op.operationId, 'taken');
    const received = this.#deps.clock.now();
    const submitted = this.#deps.budget.submit({
      account: this.#account.name,
      kind: 'operation',
      name: `operation ${op.operationId} (${op.action ?? 'unknown'})`,
      run: (signal) => {
        this.#started.add(op.operationId);
        return this.#track(this.#run(op, received, signal));
      },
    });
    this.#tasks.set(op.operationId, submitted);
    // Logged on a later turn of the event loop: the run has started above and is at its first cluster
    // request's way out, which the log's synchronous write would hold back.
    const waiting = submitted.state === 'waiting';
    setImmediate(() => this.#log.info({ operationId: op.operationId, attempt: op.attempt, action: op.action, waiting }, 'operation taken'));
  }

  async #track(run: Promise<void>): Promise<void> {
    this.#running.add(run);
    try {
      await run;
    } finally {
      this.#running.delete(run);
    }
  }

  async #run(op: Operation__Output, received: number, signal: AbortSignal): Promise<void> {
    const { clock, trace } = this.#deps;
    trace?.mark(op.operationId, 'started');
    const startedAt = clock.now();
    const execution = await executeOperation(
      {
        operationId: op.operationId,
        cluster: this.#account.cluster,
        discovery: this.#discovery,
        restrictions: this.#account.settings,
        clock,
        signal,
        deadline: op.timeoutMs > 0 ? received + op.timeoutMs : Infinity,
        ...(trace === undefined ? {} : { trace: trace.requests(op.operationId) }),
      },
      op,
    );
    trace?.mark(op.operationId, 'finished');
    const finishedAt = clock.now();
    const result: OperationResult = {
      operationId: op.operationId,
      account: op.account,
      attempt: op.attempt,
      ok: execution.ok,
      message: execution.message,
      outcomes: execution.outcomes.map(outcomeToWire),
      startedAtMs: startedAt,
      finishedAtMs: finishedAt,
      budgetWaitMs: startedAt - received,
    };
    this.#tasks.delete(op.operationId);
    this.#started.delete(op.operationId);
    this.#deps.taken.finish(op.operationId, result);
    this.#respond(result);
    // The log line and the metrics wait until the result has left for the driver (the stream's
    // write is flushed before the next turn's immediates run): they are not on the operation's path.
    setImmediate(() => {
      const ms = finishedAt - startedAt;
      this.#log.info({ operationId: op.operationId, ok: result.ok, ms }, `operation finished: ${execution.message}`);
      const labels = { type: op.action ?? 'unknown', result: result.ok ? 'success' : 'failure' };
      this.#deps.metrics?.operations.inc(labels);
      this.#deps.metrics?.operationDuration.observe(labels, ms / 1000);
    });
  }

  /** Answers at once, without a task: nothing of it runs. A repeat is answered with the same result. */
  #refuse(op: Operation__Output, error: VendorError): void {
    const now = this.#deps.clock.now();
    const message = refusalMessage(error);
    const result: OperationResult = {
      operationId: op.operationId,
      account: op.account,
      attempt: op.attempt,
      ok: false,
      // The code in a field of its own for automation; the message keeps it first for older drivers.
      errorCode: error.code,
      message,
      outcomes: [],
      startedAtMs: now,
      finishedAtMs: now,
      budgetWaitMs: 0,
    };
    this.#deps.taken.finish(op.operationId, result);
    this.#respond(result);
    this.#log.warn({ operationId: op.operationId, attempt: op.attempt, code: error.code, issues: error.issues }, `operation refused: ${message}`);
    this.#deps.metrics?.operations.inc({ type: op.action ?? 'unknown', result: 'failure' });
  }

  #respond(result: OperationResult): void {
    this.#deps.host.respond({ kind: 'operationResult', body: result }).catch((e: unknown) => {
      this.#log.error({ operationId: result.operationId, err: e instanceof Error ? e.message : String(e) }, 'operation result not delivered');
    });
  }

  async stop(): Promise<void> {
    for (const [id, task] of this.#tasks) {
      // Never started: not run here, so a repeat (on this agent or another) may run it.
      if (!this.#started.has(id)) this.#deps.taken.forget(id);
      task.stop();
    }
    this.#tasks.clear();
    // Running ones see their signal abort, skip what is left and still report.
    await Promise.allSettled([...this.#running]);
  }
}

/** Every held account gets an operations worker: operations work on every kind, cached or not. */
export const operationsWorkerFactory: AccountWorkerFactory = (account, host, ctx) =>
  new OperationsWorker(account, {
    host,
    budget: ctx.budget,
    clock: ctx.clock,
    taken: takenFor(ctx),
    metrics: ctx.metrics,
    ...(ctx.pathTrace === undefined ? {} : { trace: ctx.pathTrace }),
  });
