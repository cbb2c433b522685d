/**
 * The accounts this agent holds, one entry each, exactly as the driver assigned them: a migrated
 * account with the kubeconfig reference it came with, or one of the agent's static accounts
 * (`static_account`) with its own vendor-agent.yml entry. To confirm an assignment the agent
 * connects to the cluster and asks for GET /version; the answer (ok, or the real error) goes back
 * as the assignment result. A held account's workers (workers.ts) follow it: built when it is
 * first held, updated when it changes (settings, generation, caching role), stopped when it goes.
 *
 * Work for one account runs in order; different accounts are checked side by side, a bounded
 * number at a time. An assignment is taken (and acknowledged) at once; its result follows when the
 * check is done.
 */
import { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { AccountSettings__Output, AssignAccount__Output, HeldAccount } from '../../shared/protocol/messages.ts';
import { kubeconfigReferenceProblem } from '../../shared/accounts/kubeconfig-reference.ts';
import { accountSettingsMessage, DEFAULT_SETTINGS_MESSAGE } from '../../shared/accounts/settings-message.ts';
import { isKubeconfigUnusable } from '../clusters/errors.ts';
import type { ClusterClient, ClusterSpec, KubeconfigPolicy } from '../clusters/index.ts';
import type { AgentContext } from '../component.ts';
import type { AccountConfig } from '../config/schema.ts';
import type { DriverWork } from '../connection/driver-stream.ts';
import { accountLogger } from '../observability/logger.ts';
import { acquireTask } from '../tasks/acquire.ts';
import { ConnectionLoss } from '../tasks/connection-loss.ts';
import type { AccountWorker, AccountWorkerFactory, CachedScope, HeldAccountView, WorkerHost } from './account-worker.ts';

/** Longest message an assignment result may carry (the protocol's limit). */
const MAX_MESSAGE = 8192;

export interface HolderDeps {
  ctx: AgentContext;
  host: WorkerHost;
  factories: readonly AccountWorkerFactory[];
  /** Connects to one account's cluster (the clusters module, with the agent's settings). */
  connect(spec: ClusterSpec, logger: Logger): Promise<ClusterClient>;
  /** Cluster checks running at once. */
  concurrency?: number;
}

interface Entry {
  view: HeldAccountView;
  /** The assignment it is held by, checked again when `kubernetes.assignedAccounts` changes. */
  assignment: AssignAccount__Output;
  /** The connection settings the cluster client was built from; a change means a new client. */
  connectionKey: string;
  /** What the last successful check said, repeated when an update needs no new check. */
  message: string;
  workers: AccountWorker[];
  /** Its workers are stopped because the connection to the driver is lost; they start again when it is back. */
  suspended: boolean;
}

/** What the agent's `/cache` shows of one held account. */
export interface HeldAccountCache {
  account: string;
  caching: boolean;
  /** True while its tasks are stopped because the connection to the driver is lost. */
  suspended: boolean;
  scopes: CachedScope[];
}

/** The per-account settings (docs/agent-config.md#per-account-kubernetesaccounts) at their defaults, as an assignment without settings means them. */
export const EMPTY_SETTINGS: AccountSettings__Output = DEFAULT_SETTINGS_MESSAGE;

function connectionKey(spec: ClusterSpec): string {
  return JSON.stringify([spec.kubeConfigFile ?? '', spec.context, spec.serviceAccount, spec.insecure, spec.noProxy, spec.oAuthScopes, spec.policy ?? null]);
}

/**
 * What the driver (and so every reader of the account) learns when an assigned account's kubeconfig
 * cannot be used: the same words whatever the reason, so the answer tells nothing about the agent's
 * files or secrets. The reason goes to the agent's log.
 */
export function unusableKubeconfigMessage(agentId: string): string {
  return `the kubeconfig reference is not allowed or not usable on agent ${agentId}; see the agent's log`;
}

/** A kubeconfig reference as log lines may show it: not at all when it is not one (it may be a file's contents). */
function loggedReference(reference: string | undefined): string | undefined {
  if (reference === undefined) return undefined;
  return kubeconfigReferenceProblem(reference) === undefined ? reference : '(not a kubeconfig reference, not shown)';
}

function specOfStatic(name: string, own: AccountConfig): ClusterSpec {
  return {
    account: name,
    kubeConfigFile: own.kubeConfigFile,
    context: own.context,
    serviceAccount: own.serviceAccount,
    insecure: own.insecure,
    noProxy: own.noProxy,
    oAuthScopes: own.oAuthScopes,
  };
}

/**
 * A static account's settings as the agent's own file gives them. They, not the copy an assignment
 * carries, limit what the agent does with its own account: the driver cannot widen them.
 */
export function ownSettings(own: AccountConfig): AccountSettings__Output {
  return accountSettingsMessage({ ...own, permissions: [own.permissions] });
}

function specOfAssignment(a: AssignAccount__Output, s: AccountSettings__Output, policy: KubeconfigPolicy): ClusterSpec {
  return {
    policy,
    account: a.account,
    kubeConfigFile: a.kubeconfigRef === '' ? undefined : a.kubeconfigRef,
    context: s.context,
    serviceAccount: s.serviceAccount,
    insecure: s.insecure,
    noProxy: s.noProxy,
    oAuthScopes: s.oAuthScopes,
  };
}

function clip(message: string): string {
  return message.length <= MAX_MESSAGE ? message : `${message.slice(0, MAX_MESSAGE - 3)}...`;
}

export class AccountHolder {
  readonly #deps: HolderDeps;
  readonly #entries = new Map<string, Entry>();
  /** Accounts whose latest assignment could not be confirmed. */
  readonly #refused = new Set<string>();
  readonly #chains = new Map<string, Promise<void>>();
  readonly #log: Logger;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  #stopped = false;
  readonly #stopping = new AbortController();
  readonly #loss: ConnectionLoss;

  constructor(deps: HolderDeps) {
    this.#deps = deps;
    this.#log = deps.ctx.logger.child({ component: 'accounts' });
    this.#loss = new ConnectionLoss({ clock: deps.ctx.clock, onLost: () => this.#suspendAll(), onBack: () => this.#resumeAll() });
  }

  /** Whether every task is stopped because the connection to the driver is lost. */
  get suspended(): boolean {
    return this.#loss.lost;
  }

  /** The held accounts and the scopes their caches run, for the agent's `/cache`. */
  cacheState(): HeldAccountCache[] {
    return [...this.#entries.values()].map((e) => ({
      account: e.view.name,
      caching: e.view.caching,
      suspended: e.suspended,
      scopes: e.workers.flatMap((w) => w.cacheScopes?.() ?? []),
    }));
  }

  /** The accounts held now, for Hello after a reconnect. */
  held(): HeldAccount[] {
    return [...this.#entries.values()].map(({ view }) => ({
      name: view.name,
      generation: view.generation,
      caching: view.caching,
      cachingEpoch: view.cachingEpoch,
    }));
  }

  /** The view workers see of one held account. */
  view(name: string): HeldAccountView | undefined {
    return this.#entries.get(name)?.view;
  }

  /**
   * Takes a message from the driver. An assignment or removal returns once it is queued (the driver
   * learns the outcome from the result); other work for an account returns once its workers took it.
   */
  async handle(work: DriverWork): Promise<void> {
    if (this.#stopped) throw new VendorError('unavailable', 'the agent is stopping');
    switch (work.kind) {
      case 'assignAccount': {
        const body = work.body;
        this.#log.debug({ account: body.account, generation: body.generation }, 'assignment received');
        void this.#inOrder(body.account, () => this.#assign(body));
        return;
      }
      case 'removeAccount': {
        const name = work.body.account;
        void this.#inOrder(name, async () => {
          this.#refused.delete(name);
          await this.#drop(name, 'removed by the driver');
        });
        return;
      }
      default: {
        const name = work.body.account;
        await this.#inOrder(name, async () => {
          const entry = this.#entries.get(name);
          if (entry === undefined) {
            this.#log.warn({ account: name, kind: work.kind }, `${work.kind} for an account this agent does not hold; ignored`);
            return;
          }
          for (const w of entry.workers) await w.handle?.(work);
        });
      }
    }
  }

  /** A new stream to the driver is open; `leaseMs` is its lease (Welcome.lease_ms). */
  connected(welcome?: { leaseMs: number }): void {
    this.#loss.connected(welcome?.leaseMs ?? 0);
    for (const entry of this.#entries.values()) for (const w of entry.workers) this.#guard(entry.view.name, 'connected', () => w.connected?.());
  }

  /** The stream to the driver ended: the tasks stop if no stream is welcomed within the grace. */
  disconnected(): void {
    this.#loss.disconnected();
  }

  /**
   * Static accounts whose own entry changed or went: they are dropped, so that the driver, told again
   * at the next hello, assigns them afresh with the new settings. Returns their names.
   */
  dropStatic(names: readonly string[]): Promise<void> {
    return Promise.all(
      names.filter((n) => this.#entries.has(n)).map((n) => this.#inOrder(n, () => this.#drop(n, 'its vendor-agent.yml entry changed'))),
    ).then(() => undefined);
  }

  /**
   * `kubernetes.assignedAccounts` changed: every held account the driver assigned is checked again
   * against it, and one it no longer allows is dropped (the driver is told, as for any refusal).
   */
  recheckAssigned(): Promise<void> {
    const assigned = [...this.#entries.values()].map((e) => e.assignment).filter((a) => !a.staticAccount);
    return Promise.all(
      assigned.map((a) =>
        this.#inOrder(a.account, async () => {
          // Only if nothing newer replaced it meanwhile.
          if (this.#entries.get(a.account)?.assignment === a) await this.#assign(a);
        }),
      ),
    ).then(() => undefined);
  }

  /** Stops every worker and closes every cluster client. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#loss.stop();
    this.#stopping.abort();
    await Promise.all([...this.#chains.values()]);
    await Promise.all([...this.#entries.keys()].map((name) => this.#drop(name, 'the agent is stopping')));
  }

  #inOrder(name: string, task: () => Promise<void>): Promise<void> {
    const run = (this.#chains.get(name) ?? Promise.resolve()).then(task).catch((e: unknown) => {
      this.#log.error({ account: name, err: e instanceof Error ? e.message : String(e) }, 'account work failed');
    });
    this.#chains.set(name, run);
    void run.then(() => {
      if (this.#chains.get(name) === run) this.#chains.delete(name);
    });
    return run;
  }

  async #assign(a: AssignAccount__Output): Promise<void> {
    const name = a.account;
    const logger = accountLogger(this.#deps.ctx.logger, name);
    let spec: ClusterSpec;
    let settings = a.settings ?? EMPTY_SETTINGS;
    if (a.staticAccount) {
      const own = this.#deps.ctx.config().kubernetes.accounts.find((x) => x.name === name);
      if (own === undefined) {
        await this.#refuse(a, `account ${name} was assigned as a static account, but vendor-agent.yml has no entry for it`);
        return;
      }
      spec = specOfStatic(name, own);
      settings = ownSettings(own);
    } else {
      spec = specOfAssignment(a, settings, this.#deps.ctx.config().kubernetes.assignedAccounts);
    }
    const key = connectionKey(spec);
    const existing = this.#entries.get(name);
    const base = { name, generation: a.generation, settings, caching: a.caching, cachingEpoch: a.cachingEpoch, logger };
    if (existing !== undefined && existing.connectionKey === key) {
      // Same cluster, same credentials: a new generation or caching role needs no new check.
      existing.assignment = a;
      this.#update(existing, { ...base, cluster: existing.view.cluster });
      this.#respond(a, true, existing.message);
      return;
    }
    let checked: { client: ClusterClient; message: string };
    try {
      // Connecting and checking the cluster loads it: an `account` task of the budget while it runs.
      const endTask = await acquireTask(this.#deps.ctx.budget, { account: name, kind: 'account', name: 'cluster connection' }, this.#stopping.signal);
      try {
        checked = await this.#bounded(async () => {
          const c = await this.#deps.connect(spec, logger);
          // A record per step at debug level (bench:assign's breakdown: docs/benchmarks.md).
          logger.debug({ generation: a.generation }, 'cluster client ready');
          try {
            const version = await c.version(this.#stopping.signal);
            logger.debug({ generation: a.generation }, 'cluster checked');
            return { client: c, message: `connected to ${c.server} (Kubernetes ${version.gitVersion})` };
          } catch (e) {
            c.close();
            throw e;
          }
        });
      } finally {
        endTask();
      }
    } catch (e) {
      if (this.#stopped) return;
      const reason = e instanceof Error ? e.message : String(e);
      if (!a.staticAccount && isKubeconfigUnusable(e)) {
        this.#log.warn({ account: name, generation: a.generation, kubeconfigRef: loggedReference(spec.kubeConfigFile) }, `the kubeconfig of an assigned account cannot be used: ${reason}`);
        await this.#refuse(a, unusableKubeconfigMessage(this.#deps.ctx.agentId));
        return;
      }
      await this.#refuse(a, reason);
      return;
    }
    const { client, message } = checked;
    if (this.#stopped) {
      client.close();
      return;
    }
    const view: HeldAccountView = { ...base, cluster: client };
    let added: Entry | undefined;
    if (existing !== undefined) {
      const previous = existing.view.cluster;
      existing.connectionKey = key;
      existing.message = message;
      existing.assignment = a;
      this.#update(existing, view);
      previous.close();
    } else {
      added = { view, assignment: a, connectionKey: key, message, workers: [], suspended: false };
      this.#entries.set(name, added);
    }
    this.#refused.delete(name);
    this.#count();
    // The answer goes ahead of the new workers' first messages (a cache's list, say), so the driver
    // records the account as held without waiting behind them; work for the account that comes
    // meanwhile waits for this task (#inOrder), so the workers are there when it runs.
    this.#respond(a, true, message);
    if (added !== undefined) {
      // Starting the workers holds the event loop for a while: the answer's write leaves first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#entries.get(name) !== added || this.#stopped) return;
      this.#startWorkers(added);
      logger.info({ server: client.server, caching: a.caching, cachingEpoch: a.cachingEpoch, generation: a.generation }, 'account held');
    }
  }

  #startWorkers(entry: Entry): void {
    for (const factory of this.#deps.factories) {
      const worker = this.#guard(entry.view.name, 'start', () => factory(entry.view, this.#deps.host, this.#deps.ctx));
      if (worker !== undefined) entry.workers.push(worker);
    }
  }

  async #stopWorkers(entry: Entry): Promise<void> {
    for (const w of entry.workers.splice(0)) {
      try {
        await w.stop();
      } catch (e) {
        entry.view.logger.error({ err: e instanceof Error ? e.message : String(e) }, 'a worker did not stop cleanly');
      }
    }
    // Whatever the workers left (a task still waiting for budget) ends with them.
    this.#deps.ctx.budget.stopAccount(entry.view.name);
  }

  /** The connection to the driver is lost: every account's workers stop, its entry stays held. */
  #suspendAll(): void {
    this.#log.warn({ accounts: this.#entries.size, graceMs: this.#loss.graceMs }, 'no stream to the driver for the whole grace: the connection is lost and every task stops until it is back');
    for (const name of this.#entries.keys()) {
      void this.#inOrder(name, async () => {
        const entry = this.#entries.get(name);
        if (entry === undefined || entry.suspended) return;
        entry.suspended = true;
        await this.#stopWorkers(entry);
      });
    }
  }

  /** The connection is back: each held account's workers start again (the cache resumes from the driver's progress). */
  #resumeAll(): void {
    this.#log.info({ accounts: this.#entries.size }, 'connected to the driver again: the tasks start again');
    for (const name of this.#entries.keys()) {
      void this.#inOrder(name, async () => {
        const entry = this.#entries.get(name);
        if (entry === undefined || !entry.suspended || this.#stopped) return;
        entry.suspended = false;
        this.#startWorkers(entry);
      });
    }
  }

  #update(entry: Entry, view: HeldAccountView): void {
    const before = entry.view;
    entry.view = view;
    if (before.caching !== view.caching || before.cachingEpoch !== view.cachingEpoch) {
      view.logger.info({ caching: view.caching, cachingEpoch: view.cachingEpoch }, 'caching role changed');
    }
    for (const w of entry.workers) {
      void Promise.resolve(this.#guard(view.name, 'update', () => w.update(view))).catch((e: unknown) =>
        view.logger.error({ err: e instanceof Error ? e.message : String(e) }, 'a worker failed to take an update'),
      );
    }
  }

  /** The account cannot be held: the driver gets the real reason, and an earlier hold of it ends. */
  async #refuse(a: AssignAccount__Output, reason: string): Promise<void> {
    this.#log.warn({ account: a.account, generation: a.generation }, `assignment refused: ${reason}`);
    await this.#drop(a.account, 'its assignment could not be confirmed');
    this.#refused.add(a.account);
    this.#count();
    this.#respond(a, false, reason);
  }

  /** `vendor_agent_accounts{state}`: accounts held (ACTIVE) and accounts whose assignment failed (FAILED). */
  #count(): void {
    this.#deps.ctx.metrics.accounts.set({ state: 'ACTIVE' }, this.#entries.size);
    this.#deps.ctx.metrics.accounts.set({ state: 'FAILED' }, this.#refused.size);
  }

  #respond(a: AssignAccount__Output, ok: boolean, message: string): void {
    this.#deps.host
      .respond({ kind: 'assignmentResult', body: { account: a.account, generation: a.generation, ok, message: clip(message) } })
      .catch(() => undefined); // the outbox has logged why it gave up
  }

  async #drop(name: string, why: string): Promise<void> {
    const entry = this.#entries.get(name);
    if (entry === undefined) return;
    this.#entries.delete(name);
    await this.#stopWorkers(entry);
    entry.view.cluster.close();
    this.#count();
    entry.view.logger.info(`account no longer held: ${why}`);
  }

  #guard<T>(name: string, what: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (e) {
      this.#log.error({ account: name, err: e instanceof Error ? e.message : String(e) }, `a worker failed on ${what}`);
      return undefined;
    }
  }

  async #bounded<T>(task: () => Promise<T>): Promise<T> {
    const limit = this.#deps.concurrency ?? 16;
    while (this.#running >= limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#running++;
    try {
      return await task();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }
}
